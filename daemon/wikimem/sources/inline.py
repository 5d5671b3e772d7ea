"""Inline clean-up shared by the loaders: text from markup, with no pattern that backtracks.

Sources are anyone's files: no pattern here may backtrack over a line from each of its
starting points, or one pathological line (a long run of "[" or "([a](") costs its length
squared. Classes stop at the characters that start the next attempt; runs that never need to
give anything back are possessive.
"""

from __future__ import annotations

import html
import re

# link text may hold one level of brackets: [`Null[T]`](/pkg/database/sql/#Null)
_TEXT = r"((?:[^\[\]]|\[[^\[\]]*+\])*+)"
_IMAGE = re.compile(r"!\[" + _TEXT + r"\]\((?:[^()]|\([^()]*\))*+\)")
# a target may hold balanced parentheses (wiki/Rust_(language))
_LINK = re.compile(r"\[" + _TEXT + r"\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))*+)>?(?:\s+\"[^\"\n]*+\")?\s*\)")
_REF_LINK = re.compile(r"\[([^\[\]]++)\]\[[^\[\]]*+\]")
_FOOTNOTE = re.compile(r"\[\^[^\[\]]++\]")
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
MDBOOK = re.compile(r"\{\{#[^}]*\}\}")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_SPACES = re.compile(r"[ \t]+")
ABSOLUTE_URL = re.compile(r"^(?:https?|mailto):", re.IGNORECASE)


def _keep_absolute(match: re.Match[str]) -> str:
    text, url = match.group(1), match.group(2)
    if ABSOLUTE_URL.match(url):
        return f"[{text}]({url})"
    return text


def drop_comments(text: str) -> str:
    """Text without its <!-- comments --> (an unclosed one and what follows it stay): one pass,
    where a pattern would scan to the end of the text from every unclosed opening."""
    if "<!--" not in text:
        return text
    pieces = []
    at = 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces.append(text[at:start])
        at = end + 3
    pieces.append(text[at:])
    return "".join(pieces)


_CODE = re.compile(r"(`[^`\n]*+`)")


def clean_inline(text: str) -> str:
    """Markdown-ish text without the source's relative links (they would break in the wiki),
    HTML tags, comments, images and mdBook includes; absolute links are kept, and code spans
    keep their text (`Box<T>` is not a tag)."""
    if "`" in text:
        parts = _CODE.split(text)
        return _SPACES.sub(" ", "".join(p if i % 2 else _clean(p) for i, p in enumerate(parts))).strip()
    return _clean(text).strip()


def _clean(text: str) -> str:
    text = drop_comments(text)
    text = MDBOOK.sub("", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(_keep_absolute, text)
    text = _REF_LINK.sub(lambda m: m.group(1), text)
    text = _FOOTNOTE.sub("", text)
    if "<" in text:
        text = TAG.sub("", _BR.sub(" ", text))
    text = html.unescape(text) if "&" in text else text
    return _SPACES.sub(" ", text)


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_HIDE = 0xE000  # an escaped character waits in the private-use area while the markup is cleaned
_SHOW = {_HIDE + c: chr(c) for c in range(33, 127)}


def clean_markdown(text: str) -> str:
    """A Markdown text as clean_inline keeps it, read the way a Markdown parser reads it:
    a backslash escape is the character it escapes, never markup: `\\<T>` is text, not a tag,
    and a link text's escaped backquotes (`[The \\`match\\` construct](page.md)`) do not cut
    the link in two."""
    hidden = "\\" in text
    if hidden:
        text = _ESCAPE.sub(lambda m: chr(_HIDE + ord(m.group(1))), text)
    text = clean_inline(text)
    return text.translate(_SHOW) if hidden else text


def code_span(text: str) -> str:
    """`text` as a Markdown code span, with a longer fence when the text holds backquotes."""
    text = " ".join(text.split())
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"

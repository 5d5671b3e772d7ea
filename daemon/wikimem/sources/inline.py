"""Inline clean-up shared by the loaders: text from markup, with no pattern that backtracks.

Sources are anyone's files: no pattern here may backtrack over a line from each of its
starting points, or one pathological line (a long run of "[" or "([a](") costs its length
squared. Classes stop at the characters that start the next attempt; runs that never need to
give anything back are possessive.
"""

from __future__ import annotations

import html
import re

from ..links import SOURCE_IMAGE, SOURCE_LINK, SOURCE_REF_LINK
from ..patterns import lazy

_FOOTNOTE = lazy(r"\[\^[^\[\]]++\]")
TAG = lazy(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
MDBOOK = lazy(r"\{\{#[^}]*\}\}")
_BR = lazy(r"<br\s*/?>", re.IGNORECASE)
_SPACES = lazy(r"[ \t]+")
ABSOLUTE_URL = lazy(r"^(?:https?|mailto):", re.IGNORECASE)


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


_CODE = lazy(r"(`[^`\n]*+`)")


def clean_inline(text: str) -> str:
    """Markdown-ish text without the source's relative links (they would break in the wiki),
    HTML tags, comments, images and include directives ("{{#include file}}"); absolute links are kept, and code spans
    keep their text (`Box<T>` is not a tag)."""
    if "`" in text:
        parts = _CODE.split(text)
        return _SPACES.sub(" ", "".join(p if i % 2 else _clean(p) for i, p in enumerate(parts))).strip()
    return _clean(text).strip()


def _clean(text: str) -> str:
    # each pattern is run only on a text holding the two characters every match of it opens
    # with or holds side by side, as the text stands after the patterns before it
    text = drop_comments(text)
    if "{{#" in text:
        text = MDBOOK.sub("", text)
    if "![" in text:
        text = SOURCE_IMAGE.sub(lambda m: m.group(1), text)
    if "](" in text:
        text = SOURCE_LINK.sub(_keep_absolute, text)
    if "][" in text:
        text = SOURCE_REF_LINK.sub(lambda m: m.group(1), text)
    if "[^" in text:
        text = _FOOTNOTE.sub("", text)
    if "<" in text:
        text = TAG.sub("", _BR.sub(" ", text))
    text = html.unescape(text) if "&" in text else text
    return _SPACES.sub(" ", text)


_ESCAPE = lazy(r"\\([!-/:-@\[-`{-~])")
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


ADMONITION_LABELS = {
    "note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "hint": "Hint",
    "caution": "Caution", "danger": "Danger", "attention": "Attention", "error": "Error",
    "seealso": "See also", "todo": "To do",
}

# roles whose text names a thing in code: shown as a code span, as Sphinx shows them
CODE_ROLES = frozenset(
    "class func meth attr data exc mod obj const type member var macro struct union enum enumerator "
    "function method attribute exception module property setting envvar option program command file "
    "samp kbd confval directive role event signal fixture makevar mailheader regexp token expr "
    "texpr decorator cmdoption concept paramref".split())
CALLABLE_ROLES = frozenset({"func", "meth", "function", "method"})
# roles that point at another place: shown as their title, or their target made readable
REF_ROLES = frozenset("ref doc term numref any download keyword labels eq".split())
EXPLICIT = lazy(r"^(.+?)\s*(?<!\x00)<(.*?)>$", re.DOTALL)
# a directive's option line (`:sorted:`, `:caption: Title`), where a directive's content is read by hand
OPTION_LINE = lazy(r"^:[\w-]+:")


def role_text(role: str, text: str) -> tuple[str, str]:
    """What Sphinx shows for a role (reST `:role:`text``, MyST `{role}`text``), and how:
    "code", "emphasis" or "text". `role` is its short name (`py:class` is `class`); an
    unknown role is its text."""
    explicit = EXPLICIT.match(text)
    if role in CODE_ROLES:
        if explicit:
            return explicit.group(1).strip(), "code"
        target = text.strip()
        short = "~" in target[:2]
        target = _unscoped(target.lstrip("~!"))
        if short:
            target = target.rsplit(".", 1)[-1]
        if role in CALLABLE_ROLES and not target.endswith(")"):
            target += "()"
        return target, "code"
    if explicit:
        return explicit.group(1).strip(), "text"
    if role == "doc":
        path = text.strip().strip("/").removesuffix("/index")
        return path.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ") or path, "text"
    if role in ("ref", "numref", "any", "term", "keyword", "labels"):
        return (text.strip().lstrip("~!").replace("-", " ") if role == "ref" else text.strip().lstrip("~!")), "text"
    if role in ("pep", "rfc"):
        # Sphinx's title for a PEP or an RFC, an anchor kept: "PEP 517", "RFC 2616#section-3"
        return f"{role.upper()} {text.strip()}", "text"
    if role in ("issue", "pr", "pull"):
        return (f"#{text.strip()}" if text.strip().isdigit() else text.strip()), "text"
    if role in ("user", "gh-user"):
        return f"@{text.strip().lstrip('@')}", "text"
    if role == "menuselection":
        return text.replace("-->", ">"), "text"
    if role == "guilabel":
        return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&"), "text"
    if role == "dfn":
        return text, "emphasis"
    return text, "text"


# a dotted name's scope marker: a leading "." ("search the current module first"), or a first
# part with a leading "_" ("_orm.Session"): a short name standing for a module, which the
# project's pages do not show (they show `Session`)
_SCOPED = lazy(r"_[A-Za-z]\w*\.(?=\w)")


def _unscoped(target: str) -> str:
    """A role's target without its scope marker, as the rendered page shows it: `.Model.save`
    is `Model.save`, `_orm.Session` is `Session`, `_orm.mapped_column.default` is
    `mapped_column.default` (a dunder name, `__init__`, is a name)."""
    target = target.lstrip(".")
    scope = _SCOPED.match(target)
    return target[scope.end():] if scope else target


def code_span(text: str) -> str:
    """`text` as a Markdown code span, with a longer fence when the text holds backquotes."""
    text = " ".join(text.split())
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_WORD = lazy(r"[^\W_]+")
_MATCH_AHEAD = 24  # source words a shown word may be looked for ahead of the last one matched


def keep_lines(source: str, shown: str) -> str:
    """`shown`, the text a reader made of a paragraph's `source`, with the line breaks back
    that its markup took out: a code span or a role's title written over two lines is shown on
    one, and every sentence after it would be cited a line early. Each shown word is matched to
    the next source word that spells it (in order, looking a little ahead: markup adds and drops
    words), and a word from a later source line than the breaks before it count gets its
    breaks in the last space before it that is not inside a code span: the one before the
    markup that holds the word, where the word is inside markup."""
    missing = source.count("\n") - shown.count("\n")
    if missing <= 0:
        return shown
    lines: list[tuple[str, int]] = []
    line = 0
    at = 0
    for match in _WORD.finditer(source):
        line += source.count("\n", at, match.start())
        at = match.start()
        lines.append((match.group().lower(), line))
    out = ""
    have = 0  # line breaks in the text shown so far, with those put back
    space = -1  # where in `out` the last space a break may take is
    ticks = 0  # backquotes in `out`: an odd count is inside a code span
    done = 0  # how far `shown` is copied into `out`
    next_word = 0
    for match in _WORD.finditer(shown):
        for at, char in enumerate(shown[done:match.start()]):
            if char == "\n":
                have += 1
            elif char == "`":
                ticks += 1
            elif char == " " and not ticks % 2:
                space = len(out) + at
        out += shown[done:match.end()]
        done = match.end()
        word = match.group().lower()
        for k in range(next_word, min(len(lines), next_word + _MATCH_AHEAD)):
            if lines[k][0] == word:
                next_word = k + 1
                owed = min(lines[k][1] - have, missing)
                if owed > 0 and space >= 0:
                    out = out[:space] + "\n" * owed + out[space + 1:]
                    space = -1
                    have += owed
                    missing -= owed
                break
    return out + shown[done:]

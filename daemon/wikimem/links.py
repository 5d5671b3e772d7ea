"""Markdown links, one home for their syntax and their resolution: the link and reference
patterns, code blocks and spans (where nothing is a link), and how a target written on a wiki
page resolves to a workspace path. Lint reads pages with these; so may anything else that
needs to know where a page points."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

# A fence line: ``` or ~~~ (three or more) after indentation, and the rest of the line
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$", re.MULTILINE)

_BACKTICKS = re.compile(r"`+")

# Every pattern here runs over whole pages, some written by people: none may backtrack over a
# line (or the page) from each of its starting points, or one pathological line (a long run of
# "[" or of quotes) would cost its length squared. Character classes stop at the characters
# that could start the next attempt, and runs that never need to give back are possessive.
#
# [text](target "title") with escaped brackets allowed in the text; images too
# (the text is written [^...]*(?:\\.[^...]*)*, which matches what (?:\\.|[^...])* does, once per run of
# plain characters instead of once per character: half the time of this regex over a real wiki);
# a target may hold balanced parentheses (wiki/Rust_(language)).
# An image's "!" is not in the pattern: a pattern that starts with a literal "[" is searched for
# far faster; extract_links moves the offset back one character for an image.
_LINK_TAIL = r"\]\(\s*(?:<([^<>\n]++)>|((?:[^()\s]|\([^()\s]*\))++))(?:\s+\"[^\"\n]*+\")?\s*\)"

_MD_LINK = re.compile(r"\[([^\[\]\\\n]*+(?:\\.[^\[\]\\\n]*+)*+)" + _LINK_TAIL)

# the same where the page has escaped brackets: "\[" starts no link (CommonMark), and a run of them
# must not be a label scanned again from each; the lookbehind costs a quarter more, so only there
_MD_LINK_ESCAPES = re.compile(r"(?<!\\)\[([^\[\]\\\n]*+(?:\\.[^\[\]\\\n]*+)*+)" + _LINK_TAIL)

# reference definitions: "[label]: target" on a line of its own
REF_DEF = re.compile(r"^[ ]{0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s>]+)>?", re.MULTILINE)

WIKILINK = re.compile(r"\[\[([^\[\]\|#\n]++)(#[^\[\]\|\n]*+)?(?:\|([^\[\]\n]*+))?\]\]")

_EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")

# --- the patterns every other reader of Markdown uses ----------------------------------------
# One home for them: the compile, lint, search, index.md and the loaders ask these, each named for
# what it reads. Like the patterns above they never rescan a line from each bracket.

_PARENS_TARGET = r"(?:[^()\s]|\([^()\s]*\))*+"  # a link target: no space, balanced parentheses

URL = r"\b[a-z][a-z0-9+.-]*://\S+"
"""A bare web address: a scheme, "://", and what follows up to a space."""

LINK_TEXT_TARGET = re.compile(r"(?<!\\)\[([^\[\]\n]*+)\]\((" + _PARENS_TARGET + r")\)")
"""[text](target) in text wikimem or a model wrote: the text is group 1, the target group 2."""

LINK_TEXT = re.compile(r"(?<!\\)!?\[([^\[\]\n]*+)\]\((?:[^()\n]|\([^()\n]*\))*+\)")
"""A link or an image, read for its text (group 1): what a line says with its links as words."""

LINK_OR_URL = re.compile(LINK_TEXT.pattern + r"|<?" + URL)
"""A link (its text is group 1) or a bare web address (no group 1)."""

LINK_TARGET = re.compile(r"(?<!\\)\]\((" + _PARENS_TARGET + r")\)")
"""The "](target)" that closes a link, the target in group 1: where a link points, or a text
read without its targets."""

RELATIVE_LINK_OPENING = re.compile(r"(?<!\\)\[([^\[\]]*)\]\((?!(?:https?|mailto):)")
"""The "[text](" that opens a link to a relative target (text in group 1): what makes quoted
text a link where it should stay text."""

_CITATION = r"\(\[[^\[\]\n]*+\]\(([^()\s]++)\)\)"
CITATION_AT_END = re.compile(r"\s*" + _CITATION + r"\s*$")
"""A citation closing a line: " ([file.md, line 41](../../raw/file.md#L41))"."""

CITED_QUOTE_END = re.compile(r"[\"”][ \t]*" + _CITATION)
"""A quote's closing mark and the citation right after it; the citation's target is group 1."""

RAW_CITATION = re.compile(r"\(\[[^\[\]\n]*+\]\((?P<target>[^()\s\[\]]*raw/[^()\s\[\]]*+)\)\)")
"""A citation of a raw source in a page's own words: "([notes.md, line 41](../../raw/notes.md#L41))"."""

# a source's link text may hold one level of brackets: [`Null[T]`](/pkg/sql/#Null)
_SOURCE_TEXT = r"((?:[^\[\]]|\[[^\[\]]*+\])*+)"
SOURCE_IMAGE = re.compile(r"!\[" + _SOURCE_TEXT + r"\]\((?:[^()]|\([^()]*\))*+\)")
"""An image in a source's Markdown, its alt text in group 1."""

SOURCE_LINK = re.compile(r"\[" + _SOURCE_TEXT + r"\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))*+)>?(?:\s+\"[^\"\n]*+\")?\s*\)")
"""A link in a source's Markdown: text in group 1, target in group 2 (balanced parentheses:
wiki/Name_(disambiguation)), an optional title."""

SOURCE_REF_LINK = re.compile(r"\[([^\[\]]++)\]\[[^\[\]]*+\]")
"""A reference link in a source's Markdown, [text][label]: its text in group 1."""


def link_targets(text: str) -> list[str]:
    """The targets of a page's Markdown links, in order; images are not links."""
    out = []
    for m in md_links(text).finditer(text):
        if m.start() > 0 and text[m.start() - 1] == "!":
            continue
        out.append(m.group(2) or m.group(3))
    return out


def md_links(text: str) -> re.Pattern[str]:
    """The Markdown link pattern for a text. Either gives _MD_LINK_ESCAPES's matches: in a text
    without "\\[" its lookbehind never fails."""
    return _MD_LINK_ESCAPES if "\\[" in text else _MD_LINK

def fenced_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block: from its opening fence line to the closing one,
    a line of the same character, at least as long, with nothing after it. Fence lines are found
    by one linear scan and paired here (a regex that looks for each opening fence's close would
    rescan the rest of the page from every unclosed fence). A fence never closed is left as text."""
    blocks = []
    opened: tuple[int, str, int] | None = None
    for m in _FENCE_LINE.finditer(text):
        fence, rest = m.group(1), m.group(2)
        if opened is None:
            if fence[0] == "`" and "`" in rest:
                continue  # a backtick in the info string: an inline code span, not a fence
            opened = (m.start(), fence[0], len(fence))
        elif fence[0] == opened[1] and len(fence) >= opened[2] and not rest.strip():
            blocks.append((opened[0], m.end()))
            opened = None
    return blocks

def blank_code(text: str) -> str:
    """The text with fenced code and code spans blanked (same length, so offsets hold)."""
    # each pattern only over pages that can match it: a fence needs ``` or ~~~, and
    # trying a MULTILINE ^ at every character of a page costs where most pages have only `spans`
    if "```" in text or "~~~" in text:
        pieces = []
        at = 0
        for start, end in fenced_blocks(text):
            pieces += [text[at:start], re.sub(r"[^\n]", " ", text[start:end])]
            at = end
        text = "".join(pieces) + text[at:]
    if "`" in text:
        pieces = []
        at = 0
        for start, end in code_spans(text):
            pieces += [text[at:start], " " * (end - start)]
            at = end
        text = "".join(pieces) + text[at:]
    return text

def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `code span`: a run of backticks, up to the next run of the same length
    on that line (a run with no partner is text, and the runs after it still pair).

    Runs are found by one scan and paired through per-length lists, so a line of a thousand
    backticks costs a thousand steps (a backreferencing pattern cost its length cubed there).
    """
    runs: list[tuple[int, int, int]] = []  # (start, end, line)
    line = 0
    last = 0
    for m in _BACKTICKS.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        runs.append((m.start(), m.end(), line))
    waiting: dict[tuple[int, int], list[int]] = {}  # (line, length) -> indexes of runs, in order
    for i, (start, end, line) in enumerate(runs):
        waiting.setdefault((line, end - start), []).append(i)
    spans = []
    used = -1  # runs up to this index are inside a span (or its closing run)
    cursor: dict[tuple[int, int], int] = {}
    for i, (start, end, line) in enumerate(runs):
        if i <= used:
            continue
        key = (line, end - start)
        same = waiting[key]
        at = cursor.get(key, 0)
        while at < len(same) and same[at] <= i:
            at += 1
        cursor[key] = at
        if at < len(same) and runs[same[at]][0] > end:  # some text between the two runs
            close = same[at]
            spans.append((start, runs[close][1]))
            used = close
    return spans

_RESOLVED: dict[tuple[str, str], str] = {}

RESOLVED_TARGETS: dict[tuple[str, str], tuple[str | None, str]] = {}

def resolve_target(page_path: str, target: str, folder: str | None = None) -> tuple[str | None, str]:
    """A link target written on wiki/<page_path> as a workspace-relative path, and its #fragment.

    None for external URLs and same-page anchors. A path that climbs out of the
    workspace resolves to "../..." so the broken-link rule reports it.
    """
    folder = posixpath.dirname(page_path) if folder is None else folder
    # most links repeat on many pages of one folder (../concepts/x.md, ../../raw/x.md#L12): the
    # whole answer is cached per (folder, target as written)
    whole = (folder, target)
    known = RESOLVED_TARGETS.get(whole)
    if known is not None:
        return known
    if len(RESOLVED_TARGETS) > 500_000:
        RESOLVED_TARGETS.clear()
    known = RESOLVED_TARGETS[whole] = _resolve_target(folder, target)
    return known

def _resolve_target(folder: str, target: str) -> tuple[str | None, str]:
    if _EXTERNAL.match(target):
        return None, ""
    path, _, fragment = target.partition("#")
    path = path.split("?", 1)[0]
    if not path:
        return None, fragment
    key = (folder, path)
    joined = _RESOLVED.get(key)
    if joined is None:
        path = unquote(path) if "%" in path else path
        if path.startswith("/"):
            # root-relative links mean "the site root" on GitHub and most renderers; treat as workspace root
            joined = posixpath.normpath(path.lstrip("/"))
        else:
            joined = posixpath.normpath(posixpath.join("wiki", folder, path))
        if len(_RESOLVED) > 200_000:
            _RESOLVED.clear()
        _RESOLVED[key] = joined
    return joined, fragment

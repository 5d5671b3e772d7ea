"""Markdown through markdown-it-py (CommonMark, GitHub tables, definition lists, footnotes),
which keeps a source line map for every block.

What comes out is a list of Blocks whose text is light Markdown: code spans in backquotes,
emphasis, absolute links; relative links, images, HTML tags and include directives are gone.
MyST directives (```{note}, ```{code-block}, ```{toctree}) are read for what they hold.
"""

from __future__ import annotations

import html as html_module
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..patterns import lazy
from . import xref
from .document import Block, TocEntry, counted
from .inline import (
    ABSOLUTE_URL,
    ADMONITION_LABELS,
    EXPLICIT,
    MDBOOK,
    OPTION_LINE,
    TAG,
    code_span,
    drop_comments,
    keep_lines,
    role_text,
)
from .rst import NestedTooDeep, parse_rst

if TYPE_CHECKING:
    # markdown-it loads with the first Markdown source (a workspace of other formats never needs it)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# an inline run longer than this is not prose a person wrote (a line of 200,000 brackets):
# markdown-it's inline rules are superlinear on some of them, so such runs are kept as text
MAX_INLINE = 20_000
_HEADING_ATTR = lazy(r"\s*\{:?[ \t]*(?:[#.]|[A-Za-z_][\w-]*=)[^{}]*+\}\s*$")
_SPACES = lazy(r"[ \t]+")
# `[:material-github:]`, "*:material-play:* Run": not a line's first word (a directive's
# `:start-after: text` option)
_EMPTY_EMPHASIS = lazy(r"(?<!\S)(?:\*\*|__)(?!\S)")
_ICON = lazy(r"(?<=[\s\[(*_\"'])(?<!^)(?<!\n):[a-z][a-z0-9]*(?:-[a-z0-9]+)+:(?![\w`])")
# a code span that names its language for highlighting (`#!py3 True`, `#!python import os`):
# the language is shown by its colours, not as text
_INLINE_LANGUAGE = lazy(r"^#![A-Za-z][\w+-]*[ \t]+(?=\S)")
_HTML_HEADING = lazy(r"\s*<h([1-6])\b[^>]*+>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_MYST = lazy(r"^\{([\w:-]+)\}\s*(.*)$")
_MYST_ROLE = lazy(r"\{([A-Za-z][\w:.+-]*)\}$")
ADMONITIONS = frozenset(
    "note warning tip important hint caution danger attention error seealso admonition todo "
    "versionadded versionchanged deprecated versionremoved sidebar topic dropdown margin".split())
CODE_DIRECTIVES = frozenset("code-block code sourcecode literalinclude doctest testcode testoutput "
                            "ipython jupyter-execute productionlist mermaid graphviz math".split())


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(deflist_plugin).use(footnote_plugin)
    # inline parsing is run by hand (see MAX_INLINE)
    md.disable("inline")
    md.block.ruler.at("lheading", _setext_heading(md.block.ruler.getRules("")))
    md.block.ruler.at("paragraph", _paragraph)
    for rule in md.block.ruler.__rules__:
        if rule.name in _BLOCK_OPENS:
            # `at` sets the rule's chains anew: the rule still ends a paragraph, a list, ...
            md.block.ruler.at(rule.name, _opening(rule.fn, _BLOCK_OPENS[rule.name]), {"alt": list(rule.alt)})
    md.block.ruler.at("code", _indented_code(_rule(md.block.ruler, "code")), {"alt": list(_alt(md.block.ruler, "code"))})
    md.core.ruler.at("normalize", _normalize(_rule(md.core.ruler, "normalize")))
    # text_join joins the text tokens of inline runs, run here with no inline run parsed yet
    # (MAX_INLINE): each inline token's children are still the empty list its block rule made
    md.core.ruler.disable("text_join")
    stops = _inline_stops([rule.name for rule in md.inline.ruler.__rules__ if rule.enabled])
    if stops is not None:
        md.inline.terminator_re = re.compile("[" + re.escape("".join(sorted(stops))) + "]")
    return md


# The characters an inline rule of ours can open at (a link label also ends at `]`, where the
# link rule's label scan must stop). markdown-it's text rule stops at a longer list, kept for
# rules it or a plugin may add ('{}$%@~+=:' "reserved for extensions", `#`, `-`, `>`); at such a
# character no rule of ours matches, so markdown-it tries every rule there in vain and then
# takes the character as text, as the text rule now takes it with the words around it: the
# same tokens, a character at a time less often (a hyphen, a colon, an `=` in prose).
_RULE_OPENS = {
    "text": "", "newline": "\n", "escape": "\\", "backticks": "`", "strikethrough": "~", "emphasis": "*_",
    "link": "[]", "image": "!", "footnote_inline": "^", "footnote_ref": "[", "autolink": "<",
    "html_inline": "<", "entity": "&",
}


def _inline_stops(enabled: list[str]) -> frozenset[str] | None:
    """Where the text rule must stop for the `enabled` inline rules; None (markdown-it's own
    list) when one of them is not a rule whose opening characters are known here."""
    if any(name not in _RULE_OPENS for name in enabled):
        return None
    return frozenset("".join(_RULE_OPENS[name] for name in enabled))


# what the first character of a line (after its indent) must be for a rule that can end a
# paragraph to match it: a fence, a quote, a rule, a list item, a footnote, an HTML block, a
# heading, a definition; a table's header line is any line whose next line opens with | - or :
_ENDS_PARAGRAPH = frozenset("`~>*-_+[<#:0123456789")
_TABLE_RULE_OPENS = frozenset("|-:")


def _paragraph(state: Any, start: int, end: int, silent: bool) -> bool:
    """markdown-it's paragraph rule (rules_block/paragraph.py, the same steps), asking every rule
    that can end a paragraph about a line only when its first character (or, for a table, the
    next line's) is one such a rule opens with: each rule checks that character first and, asked
    in its silent mode, changes nothing when it does not match. A paragraph of ten lines asked
    nine rules about each."""
    from markdown_it.common.utils import mdTrim

    line = start + 1
    terminators = state.md.block.ruler.getRules("paragraph")
    end = state.lineMax
    parent = state.parentType
    state.parentType = "paragraph"
    src, begins, shifts, ends, indents = state.src, state.bMarks, state.tShift, state.eMarks, state.sCount
    while line < end:
        at = begins[line] + shifts[line]
        if at >= ends[line]:
            break  # a blank line
        # indented as code, or a quirk of block quotes: the paragraph goes on
        if indents[line] - state.blkIndent > 3 or indents[line] < 0:
            line += 1
            continue
        if src[at] not in _ENDS_PARAGRAPH:
            below = line + 1
            there = begins[below] + shifts[below] if below < end else 0
            if below >= end or there >= ends[below] or src[there] not in _TABLE_RULE_OPENS:
                line += 1
                continue
        if any(rule(state, line, end, True) for rule in terminators):
            break
        line += 1
    content = mdTrim(state.getLines(start, line, state.blkIndent, False))
    state.line = line
    token = state.push("paragraph_open", "p", 1)
    token.map = [start, state.line]
    token = state.push("inline", "", 0)
    token.content = content
    token.map = [start, state.line]
    token.children = []
    token = state.push("paragraph_close", "p", -1)
    state.parentType = parent
    return True


def _rule(ruler: Any, name: str) -> Any:
    return next(rule.fn for rule in ruler.__rules__ if rule.name == name)


def _alt(ruler: Any, name: str) -> list[str]:
    return next(rule.alt for rule in ruler.__rules__ if rule.name == name)


# The characters that open a fence, a block quote, a rule, a list item, a link reference
# definition, an HTML block, an ATX heading. markdown-it tries each of these rules at the start
# of every block (and, silent, at lines that may end one); each calls its debug logger, then
# returns False, changing nothing, when the line's first character is not one of its own.
# _opening returns that False without the call: a paragraph was asked about by nine rules.
_BLOCK_OPENS = {
    "fence": "~`", "blockquote": ">", "hr": "*-_", "list": "*-+0123456789", "reference": "[", "html_block": "<",
    "heading": "#",
}


def _opening(rule: Any, opens: str) -> Any:
    """A block rule asked only about a line whose first character (after its indent) is one of
    `opens`; on a blank line it is asked as before."""

    def opening(state: Any, start: int, end: int, silent: bool) -> bool:
        at = state.bMarks[start] + state.tShift[start]
        if at < state.eMarks[start] and state.src[at] not in opens:
            return False
        return bool(rule(state, start, end, silent))

    return opening


def _indented_code(rule: Any) -> Any:
    """markdown-it's indented code rule, asked only about a line indented as code (what it
    checks first, after logging the call)."""

    def indented_code(state: Any, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent < 4:
            return False
        return bool(rule(state, start, end, silent))

    return indented_code


def _normalize(rule: Any) -> Any:
    """markdown-it's normalize rule (CRLF and CR to LF, NUL to U+FFFD), which rewrites every line
    break of the text, run only on a text that holds a CR or a NUL: read_text has made every
    line break a LF already."""

    def normalize(state: Any) -> None:
        if "\r" in state.src or "\0" in state.src:
            rule(state)

    return normalize


def _setext_heading(rules: list[Any]) -> Any:
    """markdown-it's setext heading rule, asked first whether the paragraph that starts at a
    line has a line that could underline it: one opening with `=` or `-` before the next blank
    line. The rule itself walks those lines asking every rule that can end a paragraph about
    each (in their silent mode, which changes nothing), and is tried at every paragraph before
    the paragraph rule walks the same lines again: a sixth of reading a Markdown file. A
    paragraph without such a line is no heading, and the rule leaves the state as it does when
    it finds no underline (its parent type set to "paragraph")."""
    from markdown_it.rules_block import lheading

    original = next((rule for rule in rules if rule is lheading), lheading)

    def setext_heading(state: Any, start: int, end: int, silent: bool) -> bool:
        if state.is_code_block(start):
            return False
        src, begins, shifts, ends = state.src, state.bMarks, state.tShift, state.eMarks
        line = start + 1
        while line < end:
            at = begins[line] + shifts[line]
            if at >= ends[line]:
                break  # a blank line ends the paragraph
            if src[at] in "=-":
                return bool(original(state, start, end, silent))
            line += 1
        state.parentType = "paragraph"
        return False

    return setext_heading


def parse_markdown(text: str, line_offset: int = 0, *, toc: list[TocEntry] | None = None,
                   summary: bool = True, labels: list[tuple[str, int, str | None]] | None = None,
                   includes: list[tuple[str, int, bool]] | None = None) -> list[Block]:
    """Blocks of a Markdown text; `line_offset` lines come before it in the file (front matter).

    Links of a list of links (a SUMMARY.md that is a book's table of contents) go to `toc` when it is given;
    MyST's targets (`(label)=` before what they name) to `labels` when it is given; MyST's
    includes (```{include} ../CHANGES.md```: the file as written, the line, whether from its top)
    to `includes`.
    """
    md = _parser()
    env: dict[str, Any] = {}
    tokens = md.parse(unfold_mkdocs(unfold_markdown_in_html(text)), env)
    for token in tokens:
        if token.type == "inline":
            if len(token.content) <= MAX_INLINE:
                token.children = []
                md.inline.parse(token.content, md, env, token.children)
            else:
                token.children = []
    return _Walker(line_offset, toc, labels, summary, includes).walk(tokens)


_MKDOCS_MARKS = ("!!!", "???", "===", "///", ":::")
_UNFOLD_STARTS = (*_MKDOCS_MARKS, "```", "~~~")  # a line unfold_mkdocs looks at outside every block
_ADMONITION = lazy(r'^(?:!!!|\?\?\?\+?)[ \t]*(?P<kind>[A-Za-z][\w-]*)(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$')
_TAB = lazy(r'^===\+?[ \t]+"[^"]*"[ \t]*$')
# pymdownx blocks: `/// tip | Title` ... `///`, `//// tab | Linux` ... `////`, content not indented
_SLASH_OPEN = lazy(r"^/{3,}[ \t]*(?P<kind>[A-Za-z][\w-]*)[ \t]*(?:\|[ \t]*(?P<title>.*?))?[ \t]*$")
_SLASH_CLOSE = lazy(r"^/{3,}[ \t]*$")
# MyST's colon fences: `:::{warning}` ... `:::`, `:::{versionchanged} 21.3`, content not indented
_COLON_OPEN = lazy(r"^:{3,}[ \t]*\{(?P<kind>[\w:-]+)\}[ \t]*(?P<title>.*?)[ \t]*$")
_COLON_CLOSE = lazy(r"^:{3,}[ \t]*$")
_VERSIONED = {"versionadded": "Added in version", "versionchanged": "Changed in version", "deprecated": "Deprecated since version",
              "versionremoved": "Removed in version"}
_FENCE_LINE = lazy(r"^(`{3,}|~{3,})")
_BLOCK_START = lazy(r"^(?:[-*+][ \t]|\d+[.)][ \t]|#|>|\||`{3}|~{3}|<)")
_CALLOUTS = frozenset("note tip warning danger caution important hint attention error seealso todo info example "
                      "success question failure bug quote abstract admonition details".split())


def _label(kind: str | None, title: str) -> str | None:
    """What an admonition says it is: its title, else its kind ("Tip"); a tab or another kind
    of block (html, caption) says nothing."""
    if not kind or kind.lower() not in _CALLOUTS:
        return None
    return title or ADMONITION_LABELS.get(kind.lower(), kind.capitalize())


def unfold_mkdocs(text: str) -> str:
    """MkDocs' admonitions (`!!! tip "Title"`, `??? note`, `/// tip | Title`), MyST's colon fences
    (`:::{warning}`, `:::{versionchanged} 21.3`) and content tabs (`=== "Python 3.10+"`,
    `//// tab | Linux`) as what they hold: Python-Markdown indents the
    content of the first kinds four spaces, which CommonMark reads as a code block, and the
    block markers of the others read as text. Lines are dedented and markers blanked in place
    (no line added or removed: citations keep their lines), an admonition's label leading its
    first line of text ("Tip: ..." as reST's `.. tip::` reads). Code fences are skipped."""
    if not any(mark in text for mark in _MKDOCS_MARKS):
        return text
    lines = text.split("\n")
    open_at: list[int] = []  # content indents (in columns) of the indented blocks open at this line
    label: str | None = None  # waiting for the first line of text of a block just opened
    fence: str | None = None
    if "{glossary}" in text:
        lines = _colon_glossaries(lines)
    for i, line in enumerate(lines):
        expanded = line.expandtabs(4)
        body = expanded.lstrip(" ")
        indent = len(expanded) - len(body)
        if body and fence is None:
            while open_at and indent < open_at[-1]:
                open_at.pop()
        if not open_at and fence is None and label is None and not body.startswith(_UNFOLD_STARTS):
            continue  # outside every block and every fence: the line as it is
        if open_at:
            line = expanded[min(indent, 4 * len(open_at)):] if body else ""
            lines[i] = line
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            continue
        fenced = _FENCE_LINE.match(line.lstrip())
        if fenced:
            fence = fenced.group(1)[:3]
            label = None
            continue
        marker = _ADMONITION.match(body) or _TAB.match(body)
        if marker:
            open_at.append(indent + 4)
            label = _label(marker.groupdict().get("kind"), (marker.groupdict().get("title") or "").strip())
            lines[i] = ""
            continue
        slashes = _SLASH_OPEN.match(body)
        if slashes or _SLASH_CLOSE.match(body):
            label = _label(slashes.group("kind"), (slashes.group("title") or "").strip()) if slashes else None
            lines[i] = ""
            continue
        colons = _COLON_OPEN.match(body)
        if colons or _COLON_CLOSE.match(body):
            kind = colons.group("kind").rsplit(":", 1)[-1].lower() if colons else ""
            title = (colons.group("title") or "").strip() if colons else ""
            # a version note says which version ("Changed in version 21.3:"), as reST's directive reads
            label = f"{_VERSIONED[kind]} {title}" if kind in _VERSIONED and title else _label(kind, title) if colons else None
            lines[i] = ""
            continue
        if label is not None and body:
            lead = line[: len(line) - len(line.lstrip())]
            if _BLOCK_START.match(line.lstrip()):
                lines[i - 1] = lead + label + ":"  # a list or a table opens it: the label above it
            else:
                lines[i] = f"{lead}{label}: {line.lstrip()}"
            label = None
    return "\n".join(lines)


# an HTML element whose content is Markdown (Python-Markdown's md_in_html: `<div markdown>`,
# `<figure markdown="1">`), its opening tag on a line of its own
_MARKDOWN_ELEMENT = lazy(r"""^[ \t]*<([A-Za-z][\w-]*)\b[^<>]*?\smarkdown(?:\s*=\s*(?:"(?:1|block)"|'(?:1|block)'|1|block))?[^<>]*>[ \t]*$""")
_OPENING_TAG = lazy(r"^[ \t]*<([A-Za-z][\w-]*)\b")
_CLOSING_TAG = lazy(r"^[ \t]*</([A-Za-z][\w-]*)\s*>[ \t]*$")
MAX_MARKDOWN_DEPTH = 8  # elements inside elements: those deeper are left as they are


def unfold_markdown_in_html(text: str) -> str:
    """An HTML element marked as holding Markdown (`<figure markdown>` ... `</figure>`, each tag on
    a line of its own) as the Markdown it holds: CommonMark reads the element as one HTML block,
    its images and links as text ("![Demo](demo.gif){ loading=lazy }"). Its tag lines are blanked
    and its content dedented, line for line (citations keep their lines); code fences are skipped.
    One pass over the lines, each element's tags matched on a stack (an element of the same name
    inside it opens and closes its own), so a file of unclosed tags costs no more than its lines."""
    if "markdown" not in text or "<" not in text:
        return text
    lines = text.split("\n")
    fence: str | None = None
    open_tags: list[tuple[str, int, bool]] = []  # (name, line, marked as holding Markdown)
    found: list[tuple[int, int]] = []  # (opening line, closing line) of each marked element
    for i, line in enumerate(lines):
        body = line.lstrip()
        if fence is not None:
            if body.startswith(fence):
                fence = None
            continue
        if (fenced := _FENCE_LINE.match(body)) is not None:
            fence = fenced.group(1)[:3]
        elif not body.startswith("<"):
            continue
        elif "markdown" in body and (opened := _MARKDOWN_ELEMENT.match(line)) is not None:
            open_tags.append((opened.group(1).lower(), i, True))
        elif open_tags and (closed := _CLOSING_TAG.match(line)) is not None:
            if closed.group(1).lower() == open_tags[-1][0]:
                _, at, marked = open_tags.pop()
                if marked and len(open_tags) < MAX_MARKDOWN_DEPTH:
                    found.append((at, i))
        elif open_tags and (tag := _OPENING_TAG.match(line)) is not None and tag.group(1).lower() == open_tags[-1][0]:
            open_tags.append((open_tags[-1][0], i, False))
    for at, end in sorted(found):  # an element before those inside it: each dedented as it stands
        inner = lines[at + 1:end]
        cut = min((len(line) - len(line.lstrip(" ")) for line in inner if line.strip()), default=0)
        lines[at + 1:end] = [line[cut:] if line.strip() else "" for line in inner]
        lines[at] = lines[end] = ""
    return "\n".join(lines)


def glossary_as_definitions(lines: list[str]) -> list[str]:
    """The body of a Sphinx glossary (MyST's `{glossary}` directive; reST's reads the same) as a
    definition list, line for line: a line at the body's indent is a term, the first indented
    line after it opens its definition (`: `), the indented lines after continue it. Read as
    paragraphs, "dunder methods" ran into the first sentence of its definition."""
    bodies = [line for line in lines if line.strip()]
    base = min((len(line) - len(line.lstrip(" ")) for line in bodies), default=0)
    out: list[str] = []
    opened = 0  # the indent of the definition open, 0 for none
    for line in lines:
        if not line.strip():
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent <= base and OPTION_LINE.match(line.strip()) and not opened:
            out.append("")  # the directive's option (`:sorted:`), in a colon fence's body
        elif indent <= base:
            out.append(line[base:])
            opened = 0
        elif not opened:
            out.append(": " + line.lstrip(" "))
            opened = indent
        else:  # the definition goes on, what is nested in it (a list, a code block) as nested
            out.append("  " + line[min(indent, opened):])
    return out


def _colon_glossaries(lines: list[str]) -> list[str]:
    """Each glossary in a colon fence (`:::{glossary}` ... `:::`) read as a definition list
    (glossary_as_definitions); the fences inside its definitions (an indented `:::{note}`) are
    its text, the first close as far left as its opening ends it."""
    out = list(lines)
    i = 0
    while i < len(out):
        opened = _COLON_OPEN.match(out[i].lstrip(" "))
        if opened and opened.group("kind").rsplit(":", 1)[-1].lower() == "glossary":
            indent = len(out[i]) - len(out[i].lstrip(" "))
            end = next((j for j in range(i + 1, len(out)) if _COLON_CLOSE.match(out[j].lstrip(" "))
                        and len(out[j]) - len(out[j].lstrip(" ")) <= indent), None)
            if end is not None:
                out[i + 1:end] = [" " * indent + line if line.strip() else line
                                  for line in glossary_as_definitions(out[i + 1:end])]
                i = end
        i += 1
    return out


# MyST's target: `(label)=` on a line of its own, naming what follows it
_MYST_TARGET = lazy(r"^\(([^()\s][^()\n]*)\)=$")


class _Walker:
    def __init__(self, line_offset: int, toc: list[TocEntry] | None,
                 labels: list[tuple[str, int, str | None]] | None = None, summary: bool = True,
                 includes: list[tuple[str, int, bool]] | None = None):
        self.offset = line_offset
        self.toc = toc
        self.labels = labels
        self.includes = includes
        self.pending: list[tuple[str, int]] = []  # MyST targets waiting for what they name
        self.summary = summary  # a book's table of contents: every link of its lists is a chapter
        self.blocks: list[Block] = []

    def line(self, token: Token) -> int:
        return (token.map[0] if token.map else 0) + 1 + self.offset

    def walk(self, tokens: list[Token]) -> list[Block]:
        heading: Token | None = None
        in_dt: Token | None = None
        subjects: list[str | None] = []  # the term each open <dd> defines
        last_term: str | None = None
        items: list[bool] = []  # per open list item: its first paragraph is still to come
        cells: list[str] = []
        row: Token | None = None
        para: Token | None = None
        table_start = 0
        for token in tokens:
            kind = token.type
            if kind == "heading_open":
                heading = token
            elif kind == "heading_close":
                heading = None
            elif kind == "paragraph_open":
                para = token
            elif kind == "paragraph_close":
                para = None
            elif kind == "list_item_open":
                items.append(True)
            elif kind == "list_item_close":
                items.pop()
            elif kind == "dt_open":
                in_dt = token
            elif kind == "dt_close":
                in_dt = None
            elif kind == "dd_open":
                subjects.append(last_term)
            elif kind == "dd_close":
                subjects.pop()
            elif kind == "table_open":
                table_start = len(self.blocks)
            elif kind == "table_close":
                counted(self.blocks, table_start)
            elif kind == "tr_open":
                row, cells = token, []
            elif kind == "tr_close":
                if row is not None and any(cells):
                    self.add("table", " | ".join(cells), self.line(row), subject=_subject(subjects))
                row = None
            elif kind == "inline":
                # a heading or a term is a name: its links are text ("[crypto/tls](/pkg/...)")
                text = render_inline(token, keep_links=heading is None and in_dt is None, emphasis=heading is None)
                if row is not None:
                    cells.append(" ".join(text.split()))
                elif heading is not None:
                    title = _HEADING_ATTR.sub("", " ".join(text.split()))
                    if title:
                        self.add("heading", title, self.line(heading), level=int(heading.tag[1:]))
                elif (target := _MYST_TARGET.match(text.strip())) is not None and self.labels is not None:
                    self.pending.append((" ".join(target.group(1).split()).lower(), self.line(para or token)))
                elif in_dt is not None:
                    last_term = " ".join(text.split())
                    if last_term:
                        self.add("term", last_term, self.line(in_dt), subject=last_term)
                elif text.strip():
                    first_in_item = bool(items) and items[-1]
                    if items:
                        items[-1] = False
                    line = self.line(para or token)
                    self.add("item" if first_in_item else "para", text.strip("\n"), line, subject=_subject(subjects))
                    if self.toc is not None and (first_in_item or (not items and _only_links(token))) \
                            and (self.summary or _opens_with_link(token) or _only_links(token)):
                        # a list of links, or a paragraph of nothing but links: a book's
                        # prefix chapters ("[Foreword](foreword.md)") come before the list; in
                        # another document, the items that open with a link to another file
                        self.toc_links(token, line)
            elif kind in ("fence", "code_block"):
                self.code(token)
            elif kind == "html_block":
                self.html(token, _subject(subjects))
        return self.blocks

    def add(self, kind: str, text: str, line: int, *, level: int = 0, subject: str | None = None) -> None:
        if kind not in ("code", "heading") and "{{#" in text:
            text = MDBOOK.sub("", text).strip()
        if kind in ("heading", "term") and xref.OPEN in text:
            text = xref.plain(text)  # a heading or a term is a name: the text it shows alone
        if text:
            if self.pending and self.labels is not None:
                self.labels.extend((name, line, text if kind == "heading" else None) for name, _ in self.pending)
                self.pending.clear()
            self.blocks.append(Block(kind, text, line, level, subject=subject))

    def code(self, token: Token) -> None:
        info = token.info.strip()
        myst = _MYST.match(info) if token.type == "fence" else None
        if myst:
            name = myst.group(1).lower().split(":")[-1]
            body_start = self.line(token)  # the fence line; the content starts on the next
            lines = token.content.split("\n")
            skip = 0
            while skip < len(lines) and OPTION_LINE.match(lines[skip]):
                skip += 1
            content = "\n".join(glossary_as_definitions(lines[skip:]) if name == "glossary" else lines[skip:])
            if name == "toctree" and self.toc is not None:
                caption = next((line.split(":", 2)[2].strip() for line in lines[:skip]
                                if line.startswith(":caption:")), None) or None
                for at, entry in enumerate(lines[skip:]):
                    entry = entry.strip()
                    explicit = EXPLICIT.match(entry)
                    title, target = (explicit.group(1).strip(), explicit.group(2).strip()) if explicit else (None, entry)
                    if target and target != "self" and not ABSOLUTE_URL.match(target):
                        self.toc.append(TocEntry(target, title, body_start + 1 + skip + at, caption))
                return
            if name == "include":
                # the file it brings in, as reST's `.. include::` reads (a reference to it, shown
                # as a `{doc}` is: parsing reads no other file)
                target = (myst.group(2) or "").strip()
                if target:
                    self.blocks.append(Block("para", f"Includes {xref.mark('doc', target)}.", body_start))
                    if self.includes is not None:
                        options = {line.split(":", 2)[1] for line in lines[:skip] if line.count(":") >= 2}
                        self.includes.append((target, body_start, not ({"start-after", "start-line"} & options)))
                return
            if name == "eval-rst":
                try:
                    self.blocks.extend(parse_rst(content, body_start + skip).blocks)
                    return
                except NestedTooDeep:
                    pass  # read as the Markdown's own text below
            if name in ADMONITIONS or (name not in CODE_DIRECTIVES and _looks_like_prose(content)):
                argument = (myst.group(2) or "").strip()
                start = body_start + skip
                if name in _VERSIONED and argument and not skip and content.strip() and not content.startswith("\n"):
                    # a version note leads its text with its version, as reST's directive reads
                    # ("Changed in version 21.3: ..."), on the fence's line that gives it; not a
                    # paragraph of "21.3" alone
                    content = f"{_VERSIONED[name]} {argument}:\n{content}"
                    start = body_start - 1
                elif argument:
                    self.add("para", argument, body_start)
                self.blocks.extend(parse_markdown(content, start, toc=self.toc, summary=self.summary, labels=self.labels))
                return
        text = token.content.rstrip("\n")
        if text.strip():
            self.blocks.append(Block("code", text, self.line(token) + (1 if token.type == "fence" else 0)))

    def html(self, token: Token, subject: str | None) -> None:
        """An HTML block keeps its prose (a <p> someone wrote in Markdown); comments, style,
        script and lone tags (<Listing ...>) go."""
        raw = drop_comments(token.content)
        if re.match(r"\s*<(style|script|svg|noscript)\b", raw, re.IGNORECASE):
            return

        heading = _HTML_HEADING.match(raw)
        if heading:
            # a README's centred <h1 align="center">Name</h1> is its title, as a # heading would be
            title = _SPACES.sub(" ", html_module.unescape(TAG.sub(" ", heading.group(2)))).strip()
            if title:
                self.add("heading", title, self.line(token), level=int(heading.group(1)))
            raw = raw[heading.end():]
        text = _SPACES.sub(" ", TAG.sub(" ", raw)).strip()

        text = html_module.unescape(text) if "&" in text else text
        if len(text.split()) >= 4:
            self.add("para", text, self.line(token), subject=subject)

    def toc_links(self, token: Token, line: int = 0) -> None:
        assert self.toc is not None
        for child in token.children or []:
            if child.type == "link_open":
                href = str(child.attrs.get("href") or "")
                if href and not ABSOLUTE_URL.match(href) and not href.startswith("#") \
                        and (self.summary or _LOCAL_DOCUMENT.search(href.split("#")[0])):
                    self.toc.append(TocEntry(href.split("#")[0], None, line))


# a link to another document of the set (a Markdown, reST or text file), not to an image or a download
_LOCAL_DOCUMENT = lazy(r"\.(?:md|markdown|mdx|rst|rest|txt)$|/$", re.IGNORECASE)


def _opens_with_link(token: Token) -> bool:
    """An inline run that starts with a link ("[Settings](settings.md) lists every setting")."""
    children = [c for c in token.children or [] if not (c.type == "text" and not c.content.strip())]
    return bool(children) and children[0].type == "link_open"


def _only_links(token: Token) -> bool:
    """An inline run that is links and the line breaks between them, nothing else."""
    depth, seen = 0, False
    for child in token.children or []:
        if child.type == "link_open":
            depth, seen = depth + 1, True
        elif child.type == "link_close":
            depth -= 1
        elif depth == 0 and not (child.type in ("softbreak", "hardbreak") or (child.type == "text" and not child.content.strip())):
            return False
    return seen


def _subject(subjects: list[str | None]) -> str | None:
    return subjects[-1] if subjects else None


def render_inline(token: Token, *, keep_links: bool = True, emphasis: bool = True) -> str:
    """An inline token as light Markdown: code spans, emphasis (unless `emphasis` is false: a
    heading is a title, its emphasis no part of its words), absolute links (unless `keep_links`
    is false: then a link is its text); no HTML."""
    children = token.children
    if not children:
        return token.content if len(token.content) > MAX_INLINE else ""
    out: list[str] = []
    links: list[str | None] = []
    skip = 0
    for at, child in enumerate(children):
        if skip:
            skip -= 1
            continue
        kind = child.type
        if kind in ("strong_open", "em_open") and child.markup.startswith("_") and _dunder(children, at):
            # `__init__`, `__init__.py`: a dunder name is a name, not an emphasized word
            out.append(f"{child.markup}{children[at + 1].content}{child.markup}")
            skip = 2
            continue
        if kind == "text":
            out.append(child.content)
        elif kind == "code_inline":
            role = _MYST_ROLE.search(out[-1]) if out and out[-1].endswith("}") else None
            if role:  # MyST's {role}`text`: what Sphinx shows for it, as for a reST role
                out[-1] = out[-1][:role.start()]
                name = role.group(1).rsplit(":", 1)[-1].lower()
                explicit = EXPLICIT.match(child.content)
                target = (explicit.group(2) if explicit else child.content).strip()
                if name in ("ref", "doc") and target:
                    # a reference to another place of the set: a mark the offline backend resolves
                    key = " ".join(target.split()).lower() if name == "ref" else target
                    out.append(xref.mark(name, key, explicit.group(1).strip() if explicit else ""))
                    continue
                shown, how = role_text(name, child.content)
                out.append(code_span(shown) if how == "code" else f"*{shown}*" if how == "emphasis" and emphasis else shown)
            else:
                code = child.content
                out.append(code_span(_INLINE_LANGUAGE.sub("", code, count=1) if code.startswith("#!") else code))
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind in ("em_open", "em_close"):
            out.append("*" if emphasis else "")
        elif kind in ("strong_open", "strong_close"):
            out.append("**" if emphasis else "")
        elif kind == "link_open":
            href = str(child.attrs.get("href") or "")
            keep = href if keep_links and ABSOLUTE_URL.match(href) else None
            links.append(keep)
            if keep:
                out.append("[")
        elif kind == "link_close":
            keep = links.pop() if links else None
            if keep:
                out.append(f"]({keep})")
        elif kind == "image":
            out.append("".join(c.content for c in child.children or [] if c.type == "text"))
        elif kind == "html_inline":
            if re.match(r"<br\b", child.content, re.IGNORECASE):
                out.append(" ")
        elif kind in ("footnote_ref", "s_open", "s_close"):
            continue
        else:
            out.append(child.content)
    text = "".join(out)
    if "*" in text:
        text = text.replace("****", "")  # emphasis around nothing (an image, a tag) leaves no marks
    # an icon shortcode (`:octicons-file-code-24:`) draws a picture, and an attribute list
    # that ends a paragraph (`{: .source-link }`) styles it: neither is text
    if (":" in text and _ICON.search(text)) or ("{" in text and _HEADING_ATTR.search(text)):
        text = _EMPTY_EMPHASIS.sub("", _ICON.sub("", _HEADING_ATTR.sub("", text)))
    return keep_lines(token.content, text)  # a sentence is cited at its own line


_IDENTIFIER = lazy(r"[A-Za-z]\w*")


def _dunder(children: list[Token], at: int) -> bool:
    """Whether the emphasis opening at children[at] (written with underscores) holds one
    identifier alone: a dunder name (`__init__`, `__all__`) as Markdown reads it."""
    return (at + 2 < len(children) and children[at + 1].type == "text"
            and _IDENTIFIER.fullmatch(children[at + 1].content) is not None
            and children[at + 2].type in ("strong_close", "em_close") and children[at].markup == "__")


_CODE_MARKS = lazy(r"[{};]|:=|=>|->|\w\(|^[ \t]*(?:#|//|\$ )", re.MULTILINE)


def _looks_like_prose(text: str) -> bool:
    plain = drop_comments(text).strip()
    words = plain.split()
    return len(words) >= 6 and len(_CODE_MARKS.findall(plain)) <= len(words) // 25

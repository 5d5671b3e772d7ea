"""Wiki pages: YAML front matter plus Markdown, loaded and dumped the same way everywhere."""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from .lexicon import today as lexicon_today
from .links import code_spans
from .patterns import lazy

PAGE_KINDS = ("source", "concept", "answer", "fact")
# front matter keys in the order they are written; others follow in their own order
KEY_ORDER = ("title", "kind", "part_of", "sources", "mentioned_in", "source_sha256", "aliases", "format", "date", "version", "updated")


class FrontMatterError(ValueError):
    """Front matter that cannot be read safely."""


class GuardedYAMLHandler(YAMLHandler):
    """YAML front matter with the safe loader and no anchors/aliases.

    Aliases are refused before anything is constructed: a "billion laughs"
    document expands only when built, so scanning events first is cheap.
    """

    def load(self, fm: str, **kwargs: object) -> Any:
        try:
            if "*" in fm:  # an alias needs a '*'; without one there is nothing to expand
                for event in yaml.parse(fm, Loader=_SafeLoader):
                    if isinstance(event, yaml.AliasEvent):
                        raise FrontMatterError("front matter uses YAML aliases, which wikimem does not accept")
            return yaml.load(fm, Loader=_SafeLoader)
        except yaml.YAMLError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise FrontMatterError(f"malformed YAML front matter ({first})") from exc

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        kwargs.setdefault("sort_keys", False)
        kwargs.setdefault("width", 1000)
        kwargs.setdefault("Dumper", getattr(yaml, "CSafeDumper", yaml.SafeDumper))
        return super().export(metadata, **kwargs)


HANDLER = GuardedYAMLHandler()
# libyaml's C loader when present: front matter of thousands of pages is read on every index build
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FM_OPEN = lazy(r"\A---[ \t]*\r?\n")
_FM_CLOSE = lazy(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """Split raw text into (front matter or None, body, number of lines before the body).

    Unlike frontmatter.parse this keeps the body byte-for-byte, so line numbers
    in citations still point at the right line of the file.
    """
    opening = _FM_OPEN.match(text)
    if not opening:
        return None, text, 0
    closing = _FM_CLOSE.search(text, opening.end())
    if not closing:
        return None, text, 0
    fm = text[opening.end() : closing.start()]
    rest_start = closing.end()
    if text.startswith("\n", rest_start):
        rest_start += 1
    elif text.startswith("\r\n", rest_start):
        rest_start += 2
    return fm, text[rest_start:], text.count("\n", 0, rest_start)


def parse_meta(fm: str) -> dict[str, Any]:
    data = HANDLER.load(fm)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


@dataclass
class Page:
    """A page: metadata and Markdown body. `path` is relative to wiki/."""

    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

    @property
    def title(self) -> str:
        return str(self.meta.get("title") or posixpath.splitext(posixpath.basename(self.path))[0])

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind") or "")

    @property
    def sources(self) -> list[str]:
        value = self.meta.get("sources") or []
        return [str(v) for v in value] if isinstance(value, list) else [str(value)]

    def dumps(self) -> str:
        ordered: dict[str, Any] = {k: self.meta[k] for k in KEY_ORDER if k in self.meta}
        ordered.update({k: v for k, v in self.meta.items() if k not in ordered})
        post = frontmatter.Post(self.body.rstrip("\n"), **_plain(ordered))
        return frontmatter.dumps(post, handler=HANDLER) + "\n"


def _plain(meta: dict[str, Any]) -> dict[str, Any]:
    """Dates as ISO strings so dumps round-trip to the same text."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, dt.datetime | dt.date):
            value = value.isoformat()
        out[key] = value
    return out


def part_of(meta: dict[str, Any]) -> str | None:
    """The source page a part page belongs to (its `part_of:`), or None for any other page.

    A long source's outline is split into part pages, sources/<page stem>/<section>.md
    (docs/compile.md): they are the source's own pages, so code that maps a raw file to *its*
    page (state rebuilt from the pages, undo, adopting a teammate's pages) leaves them out, and
    index.md does not list them (the source page links them)."""
    value = meta.get("part_of")
    return value if isinstance(value, str) and value else None


def loads_page(path: str, text: str) -> Page:
    """Parse a page; raises FrontMatterError for front matter that cannot be read."""
    fm, body, _ = split_front_matter(text)
    meta = parse_meta(fm) if fm is not None else {}
    return Page(path=path, meta=_plain(meta), body=body.strip("\n") + "\n" if body.strip() else "")


def content_hash(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


_SLUG_STRIP = lazy(r"[^a-z0-9]+")


def slugify(text: str, *, max_length: int = 80) -> str:
    """A lowercase ASCII slug; non-Latin text keeps a stable hash so it never becomes empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _SLUG_STRIP.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rstrip("-")
    if not slug:
        slug = "page-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return slug


def relative_link(from_page: str, to_path: str) -> str:
    """Relative URL from a page (relative to wiki/) to a path (relative to wiki/, may leave it).

    Pure string work (posixpath.relpath calls getcwd twice per link, and a large compile
    makes hundreds of thousands of links).
    """
    return _relative(_folder_of(from_page), to_path)


# a page links many others: its folder is worked out once (a first compile of a few hundred
# sources made 25,000 links)
_folder_of = lru_cache(maxsize=65536)(posixpath.dirname)


@lru_cache(maxsize=262144)
def _relative(start_dir: str, to_path: str) -> str:
    start = [p for p in start_dir.split("/") if p and p != "."]
    target = [p for p in posixpath.normpath(to_path).split("/") if p != "."]
    common = 0
    while common < len(start) and common < len(target) and start[common] == target[common]:
        common += 1
    parts = [".."] * (len(start) - common) + target[common:]
    rel = "/".join(parts) or "."
    return rel.translate(_URL_ESCAPES)


# characters a Markdown link destination cannot carry as they are: whitespace and control
# characters end it or break the line, parentheses and angle brackets close it, brackets and
# backslashes are link and escape syntax, `&` starts an entity, `%` an escape, `#` and `?` a
# fragment or query. A file may be named with any of them.
_URL_ESCAPES = {c: f"%{c:02X}" for c in [*range(0x21), 0x7F, *b"()<>[]\\&%#?"]}


_INERT_ESCAPE = lazy(r"\\([\\\[\]<`])")


def plain_text(text: str) -> str:
    """A name as inert Markdown wrote it ("Box\\<T>") back to its words ("Box<T>"): to be
    escaped again for where it goes (escape_link_text), not twice."""
    return _INERT_ESCAPE.sub(r"\1", text) if "\\" in text else text


def escape_link_text(text: str) -> str:
    """A name or title as the text of a Markdown link: one line, inert, brackets escaped."""
    return _escape_brackets(one_line(text))


def _escape_brackets(text: str) -> str:
    # a backtick too: a code span binds tighter than a link, so one would swallow the link
    # syntax; a whole code span (`name`) stays one, its text literal (a title in code)
    if "`" not in text:
        return text.translate(_LINK_TEXT_ESCAPES)
    out: list[str] = []
    at = 0
    for span in _LINK_TEXT_CODE.finditer(text):
        out += [text[at:span.start()].translate(_LINK_TEXT_ESCAPES), span.group(0)]
        at = span.end()
    out.append(text[at:].translate(_LINK_TEXT_ESCAPES))
    return "".join(out)


_LINK_TEXT_CODE = lazy(r"`[^`]+`")


_LINK_TEXT_ESCAPES = {ord(c): "\\" + c for c in "\\[]<`"}


# --- text from a source, as wikimem writes it into Markdown ---------------------------------

_BREAKS = lazy(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """Names and titles as one line: line breaks, tabs and control characters become spaces,
    runs of spaces one. A title `a\\n---\\nkind: x` would otherwise end the front matter, add a
    heading to the body or break the line of index.md it is listed on."""
    return " ".join(_BREAKS.sub(" ", text).split())


# emphasis: a run of one or two "*" or "_" that opens at a word's start and closes at a word's
# end; inside a word ("tmp_path", "INSTALLED_APPS", "a*b") they are text
_EMPHASIS = lazy(r"(?<![\w*\\])(\*\*|\*|__|_)(?![\s*_])(.+?)(?<![\s\\*_])\1(?![\w*])")
_DUNDER = lazy(r"__[A-Za-z]\w*__")


def unemphasized(text: str) -> str:
    """A line of Markdown with its emphasis marks dropped and everything else as written: code
    spans whole, identifiers whole (`tmp_path`, `__init__.py`, `INSTALLED_APPS`, a dunder
    name), an underscore or asterisk inside a word kept (an agent greps for the name as the
    document writes it)."""
    if "*" not in text and "_" not in text:
        return text
    out: list[str] = []
    at = 0
    for start, end in code_spans(text) if "`" in text else ():
        out += [_drop_emphasis(text[at:start]), text[start:end]]
        at = end
    out.append(_drop_emphasis(text[at:]))
    return "".join(out)


def _drop_emphasis(text: str) -> str:
    def keep_names(match: re.Match[str]) -> str:
        whole = match.group(0)
        if _DUNDER.fullmatch(whole) or (match.group(1).startswith("_") and text[match.end():match.end() + 1] == "."):
            return whole  # `__init__`, `_build_.py`: a name, not emphasis
        return _drop_emphasis(match.group(2))

    return _EMPHASIS.sub(keep_names, text) if ("*" in text or "_" in text) else text


def shorten(text: str, limit: int, *, sentences: bool = False) -> str:
    """At most about `limit` characters of a line, cut at a word and marked with "…"; never
    inside a code span (a span the cut would open is left out whole, or kept whole when
    little else would be left). `sentences`: end at a sentence's end when the first sentences
    fill a third of the room or more."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if sentences:
        end = max(cut.rfind(". "), cut.rfind("; "))
        if end >= limit // 3 and not _inside_code(text, end):
            return cut[: end + 1].strip()
    at = cut.rfind(" ")
    at = at if at > 0 else len(cut)
    at = outside_code(text, at, limit // 3)
    return text[:at].rstrip() + "…"


def outside_code(text: str, at: int, least: int = 0) -> int:
    """A place to cut `text` at, moved out of the code span it falls in: before the span, or
    after it when that would leave less than `least` characters."""
    if "`" not in text:
        return at
    for start, end in code_spans(text):
        if start < at < end:
            return start if start >= least else end
        if start >= at:
            break
    return at


def _inside_code(text: str, at: int) -> bool:
    return outside_code(text, at) != at


ALLOWED_SCHEMES = ("http", "https", "mailto")
_SCHEME = lazy(r"([a-z][a-z0-9+.-]*):", re.IGNORECASE)
# an autolink that may stay one: <https://...>, <mailto:...>
_SAFE_AUTOLINK = lazy(r"<(?:https?://|mailto:)[^\s<>\x00-\x1f]*>", re.IGNORECASE)
_ACTIVE = lazy(r"<|\][(:]")
_LINKABLE = lazy(r"[.@:]")  # a word a renderer may link on its own: a domain, an address, a scheme
_FENCE_OPEN = lazy(r"(`{3,}|~{3,})(.*)")
_INDENTED_FENCE = lazy(r"( {1,3})(?:`{3}|~{3})")


def safe_destination(target: str) -> bool:
    """A link target wikimem may write: relative, or http(s) / mailto. Judged as a renderer
    reads it: entities decoded, backslashes, whitespace and control characters dropped
    (browsers drop tabs and newlines inside a URL, so `java\\tscript:` is `javascript:`)."""
    if ":" not in target and "&" not in target and "\\" not in target:
        return True  # no scheme, nor an entity or escape that could spell one: relative
    decoded = html.unescape(target).replace("\\", "")
    decoded = "".join(ch for ch in decoded if ch > " " and not ("\x7f" <= ch <= "\x9f"))
    match = _SCHEME.match(decoded)
    return match is None or match.group(1).lower() in ALLOWED_SCHEMES


def _escaped(text: str, at: int) -> bool:
    """Is text[at] escaped: preceded by an odd number of backslashes?"""
    if not at or text[at - 1] != "\\":
        return False  # most characters asked about: no backslash before them
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


# a link destination after '](' or ']:': blanks, then `<` and all up to the next `>` (or the
# text's end), or else the run of characters up to a blank or a parenthesis
_TARGET = lazy(r"[ \t\r\n]*(?:<([^>]*)|([^ \t\r\n()]*))")


def _target_after(text: str, at: int) -> str:
    """The link destination that would start at text[at] (after '](' or ']:'), as written."""
    found = _TARGET.match(text, at)
    assert found is not None  # every part of the pattern may match nothing
    bracketed = found.group(1)
    return bracketed if bracketed is not None else found.group(2)


# what may hold a backquote a renderer does not pair: a link's destination ("[a](b`c)"), a link
# reference definition's, and a URL a renderer links without angle brackets
_TAKES_BACKQUOTES = lazy(r"\]\(|\]:|://|www\.", re.IGNORECASE)


def _autolink_over(text: str, start: int, at: int) -> int | None:
    """The end of a link to http(s) that opens in text[start:at] and holds text[at], or None;
    the search stops at `at` (the autolinks after it are the next runs' business)."""
    for m in _SAFE_AUTOLINK.finditer(text, start):
        if m.start() >= at:
            return None
        if m.end() > at and not _escaped(text, m.start()):
            return m.end()
    return None


def _code_spans(text: str) -> list[tuple[int, int]]:
    """The code spans of a text as CommonMark pairs them (a run of backquotes opens one, the next
    run of as many closes it; a backslash before the opening run makes it text; an autolink
    takes the backquotes inside it), kept only where no renderer could read them otherwise:
    on one line (a blank line, a heading or a list item between the two runs would part them)
    and without a `|` (a table's cell border to a renderer with tables), before any link
    destination or URL on its line that could hold one of the backquotes."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while True:
        at = text.find("`", i)
        if at == -1:
            return spans
        auto = _autolink_over(text, i, at) if "<" in text[i:at] else None
        if auto is not None:
            i = auto  # a link to http(s) before the run, holding it
            continue
        run = at
        while run < n and text[run] == "`":
            run += 1
        width = run - at
        if _escaped(text, at):
            i = at + 1  # "\`": a backquote as text; the rest of the run may still open one
            continue
        close = run
        while True:
            close = text.find("`" * width, close)
            if close == -1 or text[close + width : close + width + 1] != "`":
                break
            while close < n and text[close] == "`":
                close += 1  # a longer run closes nothing
        if close == -1:
            i = run  # no run of as many: the backquotes are text
            continue
        inside = text[run:close]
        # ... and ends before any link destination or URL on its line begins (a citation after a
        # quote leaves the quote's spans as they are)
        if "\n" not in inside and "\r" not in inside and "|" not in inside \
                and not _TAKES_BACKQUOTES.search(text, text.rfind("\n", 0, at) + 1, close + width):
            spans.append((run, close))
        i = close + width


def inert(text: str) -> str:
    """A fragment of Markdown from a source made inert: it renders no HTML and links nothing
    but relative targets and http(s) / mailto; every other byte is kept.

    Every `<` not already escaped becomes `\\<` (raw HTML and autolinks all start with one),
    except an autolink to http(s) or mailto, and a `<` inside a code span on one line (nothing
    renders there, and a backslash would show: `Vec<T>`). A `]` that closes a link, image or
    link reference definition whose target is anything else (javascript:, file:, data:...) is
    escaped, so the brackets read as text. Ordinary text has neither and comes back as it was.
    """
    if not _ACTIVE.search(text):
        return text
    # the code spans, found when the first `<` asks (most texts with links have none); the text
    # is copied in the runs between the characters that change (most `](` keep their `]`)
    spans: list[tuple[int, int]] | None = None
    out: list[str] = []
    i = at = 0  # copied up to i; looked at up to at
    while True:
        match = _ACTIVE.search(text, at)
        if match is None:
            break
        at = match.start()
        ch = text[at]
        if _escaped(text, at):
            at += 1
            continue
        if ch == "<":
            if spans is None:
                spans = _code_spans(text) if "`" in text else []
            if spans and any(a <= at < b for a, b in spans):
                at += 1
                continue
            safe = _SAFE_AUTOLINK.match(text, at)
            if safe:
                at = safe.end()
                continue
            # glued to what a renderer that links bare URLs may take for one ("x.org/<", "a://b<"),
            # the escape's backslash would go into the link and leave the `<` live: an entity
            # is text to every renderer
            word = text[max(text.rfind(" ", 0, at), text.rfind("\n", 0, at), text.rfind("\t", 0, at)) + 1 : at]
            out += (text[i:at], "&lt;" if _LINKABLE.search(word) else "\\<")
            at = i = at + 1
            continue
        # "](target" closes a link or image, "]:" may end a reference definition's label
        if not safe_destination(_target_after(text, at + 2)):
            out += (text[i:at], "\\]")
            i = at + 1
        at += 1
    if not out:
        return text
    out.append(text[i:])
    return "".join(out)


# where a renderer may end a line: CommonMark's \r\n and \r besides \n, and the Unicode line
# and paragraph separators (and NEL) that other renderers and JavaScript's line splitting do
_LINE_ENDS = lazy("\r\n?|[\u2028\u2029\x85]")


def inert_markdown(body: str) -> str:
    """inert() for a whole page body, leaving fenced code blocks as they are (nothing renders
    inside them, and a backslash there would show). Only fences at the start of a line open
    one, so text never passes for code; a fence may close indented by up to three spaces.

    Every line end is made \n first: a fence told by \n alone (`~~~\r~~~\r<script>` is one
    line here, three to a renderer) would take live HTML for code. The body is then the lines
    any renderer sees."""
    if not _ACTIVE.search(body):
        return body
    if "\r" in body or "\u2028" in body or "\u2029" in body or "\x85" in body:  # four scans, not one regex's
        body = _LINE_ENDS.sub("\n", body)
    if "```" not in body and "~~~" not in body:
        return inert(body)
    lines = body.split("\n")
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is None:
            opening = _FENCE_OPEN.fullmatch(line)
            if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
                out.extend(inert("\n".join(prose)).split("\n") if prose else [])
                prose = []
                fence = opening.group(1)
                out.append(line)
            else:
                # a fence indented by one to three spaces opens code for a renderer but not here:
                # its first mark is escaped, so what follows stays prose to both
                indented = _INDENTED_FENCE.match(line)
                prose.append(line if indented is None else line[: indented.end(1)] + "\\" + line[indented.end(1):])
            continue
        out.append(line)
        stripped = line[: 4].lstrip(" ") + line[4:] if line.startswith(" ") else line
        if len(line) - len(line.lstrip(" ")) <= 3 and stripped.rstrip(" \t") and \
                set(stripped.rstrip(" \t")) == {fence[0]} and len(stripped.rstrip(" \t")) >= len(fence):
            fence = None
    if prose:
        out.extend(inert("\n".join(prose)).split("\n"))
    return "\n".join(out)


def lost_line(before: str, after: str) -> int | None:
    """The number of the first line of `before` that `after` does not keep, or None when every
    line of `before` is in `after`, whole and in order (lines were only added between them).

    On a page a person edited, wikimem cannot tell their words from its own, so an edit there
    may add lines and nothing else: this is the test. `updated:` lines are ignored (code stamps it).
    """
    kept = iter(line for line in after.split("\n") if not line.startswith("updated: "))
    for number, line in enumerate(before.split("\n"), 1):
        if line.startswith("updated: "):
            continue
        if not any(line == other for other in kept):
            return number
    return None


def inert_added(before: str, after: str) -> str:
    """`after` with the lines it adds to `before` made inert (the matching of lost_line): the
    lines a person wrote stay byte for byte, what a model added from a source is inert. Runs
    of added lines are made inert together, so a link split over two of them is seen whole."""
    old = before.split("\n")
    out: list[str] = []
    added: list[str] = []
    i = 0
    for line in after.split("\n"):
        if i < len(old) and line == old[i]:
            if added:
                out.extend(inert("\n".join(added)).split("\n"))
                added = []
            out.append(line)
            i += 1
        else:
            added.append(line)
    if added:
        out.extend(inert("\n".join(added)).split("\n"))
    return "\n".join(out)


# what in front matter may need guard_page's work: a multi-line value, an escape, `<`, a
# backtick, a bracket (other than the empty list `[]` every page has)
_GUARD_FRONT = lazy(r"^ |[<`\\]|\[(?!\])|(?<!\[)\]", re.MULTILINE)


def guard_page(text: str) -> str:
    """A page a backend rendered, as wikimem writes it, whichever backend and template made it.

    The front matter's title and aliases become one line. A name or title that needs escaping
    (brackets, `<`, a backtick, a line break), wherever it stands verbatim in the body (a
    heading, `Source: [raw/...]`, a citation's `[file, line N]`), is put in its escaped,
    one-line form. Then the body is made inert (inert_markdown). A page without any of that
    comes back byte for byte.
    """
    fm, body, _ = split_front_matter(text)
    head = text[: len(text) - len(body)]
    if fm is not None and _GUARD_FRONT.search(fm):
        try:
            meta = parse_meta(fm)
        except FrontMatterError:
            meta = {}
        names: list[str] = []
        changed = False
        title = meta.get("title")
        if isinstance(title, str):
            names.append(title)
            # front matter is shown as text by some viewers and as Markdown by others: inert too
            if inert(one_line(title)) != title:
                meta["title"] = inert(one_line(title))
                changed = True
        aliases = meta.get("aliases")
        if isinstance(aliases, list) and any(isinstance(a, str) and inert(one_line(a)) != a for a in aliases):
            meta["aliases"] = [inert(one_line(a)) if isinstance(a, str) else a for a in aliases]
            changed = True
        sources = meta.get("sources")
        for source in sources if isinstance(sources, list) else []:
            if isinstance(source, str):
                names += [source, posixpath.basename(source)]
        for name in sorted({n for n in names if n and escape_link_text(n) != n}, key=len, reverse=True):
            body = body.replace(name, escape_link_text(name))
        if changed:
            dumped = Page("x.md", meta, "").dumps()
            head = dumped[: dumped.rindex("---\n") + 4]
    return head + inert_markdown(body)


def today() -> str:
    """The date stamped into `updated`; SOURCE_DATE_EPOCH pins it for reproducible builds."""

    return lexicon_today()


# --- the front matter fast path: what wikimem itself writes, read without YAML

_SIMPLE_KEY = lazy(r"^([A-Za-z_][\w-]*):(?:[ \t]+(.*?))?[ \t]*$")

_SIMPLE_ITEM = lazy(r"^- (.*?)[ \t]*$")

_PLAIN = lazy(r"^[A-Za-z_/.][^:#{}\[\],&*!|>'\"%@`]*$")

_ISO_DAY = lazy(r"^\d{4}-\d\d-\d\d$")

_YAML_WORDS = frozenset("true false yes no on off null ~ y n".split())

_PLAIN_SEEN: dict[str, bool] = {}  # list items repeat across pages (raw/... paths): each is tested once

_COUNT = lazy(r"0|[1-9][0-9]{0,8}")


def simple_meta(fm: str) -> dict[str, Any] | None:
    """Front matter as wikimem writes it (`key: plain`, `key: []`, `key:` + `- item`), without YAML.

    Parsing YAML is most of the time lint spends on a large wiki; this reads only
    the plain shapes and returns None for anything else (quotes, flow lists with
    items, numbers other than a plain count, booleans, anchors, nesting), which then
    goes to the real YAML parser. Dates stay ISO strings, as loads_page returns them.
    """
    meta: dict[str, Any] = {}
    current: list[str] | None = None
    for line in fm.split("\n"):
        if not line.strip():
            continue
        if line.startswith("- "):
            # what _SIMPLE_ITEM matches, without the regex: concept pages list hundreds of sources
            value = line[2:].rstrip(" \t")
            plain = _PLAIN_SEEN.get(value)
            if plain is None:
                plain = _PLAIN_SEEN[value] = bool(_PLAIN.match(value)) and value.lower() not in _YAML_WORDS
                if len(_PLAIN_SEEN) > 200_000:
                    _PLAIN_SEEN.clear()
            if current is None or not plain:
                return None
            current.append(value)
            continue
        m = _SIMPLE_KEY.match(line)
        if m is None or m.group(1) in meta:
            return None
        value = m.group(2)
        if value is None or value == "":
            current = meta[m.group(1)] = []
            continue
        current = None
        if value == "[]":
            meta[m.group(1)] = []
        elif m.group(1) == OWNER_KEY and _OWNER_VALUE.fullmatch(value):  # `wikimem: <writer> <digest>`
            meta[m.group(1)] = value
        elif _ISO_DAY.match(value) or (_PLAIN.match(value) and value.lower() not in _YAML_WORDS and not value.endswith(" ")):
            meta[m.group(1)] = value
        elif re.fullmatch(r"[0-9a-f]{64}", value):  # a hash that happens to start with a digit
            meta[m.group(1)] = value
        elif _COUNT.fullmatch(value):  # a concept page's `mentioned_in`
            meta[m.group(1)] = int(value)
        else:
            return None
    # "key:" with no items is null in YAML, not an empty list
    for key, value in list(meta.items()):
        if value == [] and not re.search(rf"^{re.escape(key)}:[ \t]*\[\]", fm, re.MULTILINE):
            meta[key] = None
    return meta


# --- whose a page is: the digest wikimem writes into every page it writes -------------------

OWNER_KEY = "wikimem"
DIGEST_HEX = 32  # 128 bits of sha256: a person's edit never matches by chance
# `wikimem: offline:19.15.27.4 3f2a...`: who wrote the page, and the digest of what it wrote. The
# writer starts with a letter, so YAML reads the value as the same plain string (never a number)
_OWNER_VALUE = lazy(rf"([A-Za-z][\w.:+/-]*) ([0-9a-f]{{{DIGEST_HEX}}})")
_OWNER_LINE = lazy(rf"^{OWNER_KEY}:.*\n?", re.MULTILINE)
_WRITER_UNSAFE = lazy(r"[^\w.:+/-]+")


def page_digest(meta: dict[str, Any], body: str) -> str:
    """The digest of a page's text as wikimem wrote it: every front matter field but the digest's
    own (`wikimem:`) and the `updated:` stamp (when it was written is not what it says), and the
    body. Canonical, so that a page loaded and dumped again by another tool (keys reordered,
    quoting changed, line endings made CRLF, trailing spaces trimmed) keeps its digest, and a
    page two machines rendered alike has one digest whatever day each rendered it."""
    owned = {k: v for k, v in _plain(meta).items() if k not in (OWNER_KEY, "updated")}
    head = json.dumps(owned, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    lines = [line.rstrip(" \t\r") for line in body.split("\n")]
    text = head + "\n" + "\n".join(lines).strip("\n")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]


def _meta_of(fm: str) -> dict[str, Any]:
    fast = simple_meta(fm)
    return fast if fast is not None else parse_meta(fm)


def certify(text: str, writer: str) -> str:
    """A page as wikimem writes it: its front matter ends with `wikimem: <writer> <digest>`, the
    digest of the rest (page_digest). Any copy of the page then says by itself whether it is
    still what wikimem wrote (page_owner). A page without front matter, or with front matter
    that cannot be read, comes back as it was (wikimem writes neither)."""
    text = text.replace("\r\n", "\n")
    fm, body, _ = split_front_matter(text)
    if fm is None:
        return text
    try:
        meta = _meta_of(fm)
    except FrontMatterError:
        return text
    who = _WRITER_UNSAFE.sub("-", writer).strip("-") or "wikimem"
    if not who[0].isalpha():
        who = "wikimem-" + who
    line = f"{OWNER_KEY}: {who} {page_digest(meta, body)}\n"
    kept = _OWNER_LINE.sub("", fm)
    if kept and not kept.endswith("\n"):
        kept += "\n"
    opening = _FM_OPEN.match(text)
    assert opening is not None  # split_front_matter found front matter
    return text[: opening.end()] + kept + line + text[opening.end() + len(fm):]


@dataclass(frozen=True)
class Owner:
    """What a page says of who wrote it (page_owner)."""

    writer: str | None  # the backend and version that wrote it, as its `wikimem:` line says
    stamped: bool  # it carries a `wikimem:` line
    matches: bool  # ... and its text is what that line's digest was made from

    @property
    def wikimems(self) -> bool:
        return self.stamped and self.matches


NOT_STAMPED = Owner(None, False, False)


def page_owner(text: str | bytes) -> Owner:
    """Who wrote a page, from the page alone: wikimem when its `wikimem:` line's digest is the
    digest of its text; a person when the digest does not match (they changed the page, or wrote
    the line by hand) or the line is missing. A person who copies a whole page wikimem wrote
    (or wikimem's proposed version from .wikimem/proposed/) over theirs hands it back to wikimem,
    which is what copying it means."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    if OWNER_KEY not in text:
        return NOT_STAMPED  # most of a person's pages: no YAML read
    fm, body, _ = split_front_matter(text.replace("\r\n", "\n"))
    if fm is None:
        return NOT_STAMPED
    try:
        meta = _meta_of(fm)
    except FrontMatterError:
        return NOT_STAMPED
    value = meta.get(OWNER_KEY)
    stamp_ = _OWNER_VALUE.fullmatch(value.strip()) if isinstance(value, str) else None
    if stamp_ is None:
        return Owner(None, OWNER_KEY in meta, False)
    return Owner(stamp_.group(1), True, stamp_.group(2) == page_digest(meta, body))


def owner_digest(text: str) -> str | None:
    """The digest a page's `wikimem:` line states (not checked), or None."""
    fm, _, _ = split_front_matter(text)
    if fm is None:
        return None
    for line in fm.split("\n"):
        if line.startswith(OWNER_KEY + ":"):
            found = _OWNER_VALUE.fullmatch(line[len(OWNER_KEY) + 1:].strip())
            return found.group(2) if found else None
    return None


def _without_front_lines(text: str, keys: tuple[str, ...]) -> str:
    """The page without the front matter's lines that start with one of `keys`."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":
        try:
            close = lines.index("---", 1)
        except ValueError:
            return text
        lines = [line for i, line in enumerate(lines) if not (0 < i < close and line.startswith(keys))]
    return "\n".join(lines)


def strip_stamps(text: str) -> str:
    """The page without its `updated:` and `wikimem:` lines: two renderings of the same text by
    different days or versions compare equal."""
    return _without_front_lines(text, ("updated:", OWNER_KEY + ":"))


def strip_updated(text: str) -> str:
    """The page without its front matter's `updated:` line: two renderings that differ only by
    when they were made compare equal."""
    return _without_front_lines(text, ("updated:",))


def stamp(content: str, existing: str | None) -> str:
    """Set `updated:` in front matter: kept from the existing page when nothing else changed.

    The existing page is kept whole (its `updated:` and its `wikimem:` line) when it has the
    same text and the same digest: a new version of a backend that renders a page as before
    leaves the page, and the version that wrote it, as they were."""
    if existing is not None and strip_stamps(existing) == strip_stamps(content) \
            and owner_digest(existing) == owner_digest(content):
        return existing
    lines = content.split("\n")
    # insert after `date:`/`aliases:` i.e. before the closing '---' of the front matter
    try:
        close = lines.index("---", 1)
    except ValueError:
        return content
    lines.insert(close, f"updated: {today()}")
    return "\n".join(lines)

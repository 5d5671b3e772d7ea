"""Everything the rules read, loaded once: wiki pages with their links, raw files, state.db rows.

Rules are pure functions of this context, so each file is read and each page
parsed a single time however many rules look at it.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote

from .. import index_page
from ..config import Settings
from ..naming import printable, undecodable
from ..pages import Page, split_front_matter
from ..workspace import Workspace

# files at the top of wiki/ that are written by code or owned by the user, not pages
SPECIAL = ("index.md", "log.md", "AGENTS.md", "lint.md")
SECTIONS = tuple(name for name, _ in index_page.SECTIONS)

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
_REF_DEF = re.compile(r"^[ ]{0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s>]+)>?", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[([^\[\]\|#\n]++)(#[^\[\]\|\n]*+)?(?:\|([^\[\]\n]*+))?\]\]")
_EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")


def code_version(salt: bytes, *names: str) -> int:
    """A cache key from the code that fills a cache (files named relative to this folder): editing
    any of them invalidates the cache by itself, where a forgotten version bump would serve stale data."""
    digest = hashlib.sha256(salt)
    here = Path(__file__).parent
    for name in names:
        with contextlib.suppress(OSError):
            digest.update((here / name).read_bytes())
    return int(digest.hexdigest()[:8], 16)


def md_links(text: str) -> re.Pattern[str]:
    """The Markdown link pattern for a text. Either gives _MD_LINK_ESCAPES's matches: in a text
    without "\\[" its lookbehind never fails."""
    return _MD_LINK_ESCAPES if "\\[" in text else _MD_LINK


class Link(NamedTuple):
    # a NamedTuple, not a frozen dataclass: a real 10k wiki has 800k links, and a frozen
    # dataclass's __init__ (object.__setattr__ per field) cost 2 s of lint's run to build them
    text: str
    target: str  # as written
    at: int  # character offset in the page file (page.line_of(at) gives the line, when a finding needs it)
    kind: str  # md | wiki
    resolved: str | None  # workspace-relative path ("wiki/...", "raw/...") or None when external/anchor
    fragment: str = ""


class PageDigest(NamedTuple):
    """What the rules need from one page's bytes (digest.py computes it, and caches it across runs).

    Everything here depends on the page's own text and path alone; what also depends on other
    pages (where a [[wikilink]] leads) or on the raw sources (whether a quote is in its source)
    is decided when the rules run.
    """

    meta: dict[str, Any] | None  # None: the front matter could not be read (error says why)
    error: str | None
    has_front_matter: bool
    body_offset: int  # lines before the body
    lines: int
    # distinct Markdown link targets, resolved (resolve_target), in first-seen order: the pages in
    # wiki/ as wiki-relative paths (the page itself left out), and the others (raw/..., ../outside)
    links_to: tuple[str, ...]
    other_targets: tuple[str, ...]
    title_keys: tuple[str, ...]  # structure.title_key of its title and aliases (duplicates, missing concepts)
    fm_problems: tuple[str, ...]  # structure.meta_problems of a page in a wikimem section
    wikinames: tuple[str, ...]  # distinct [[names]] as written
    bold: tuple[tuple[str, str], ...]  # (title_key, surface) of terms set in bold (missing_concepts)
    secrets: tuple[tuple[int, str, str, str], ...]  # (line, kind, redacted, sha256[:16]); never the secret
    cites: tuple[str, ...]  # the raw files its quotes and figures cite
    # (raw path, quoted words, line) of quotes with a citation, and (raw path, line, figures, clause);
    # None in a digest read from the cache (they are most of its size, and needed only when a cited
    # file changed: the page is read again then)
    quotes: tuple[tuple[str, str, int], ...] | None
    figures: tuple[tuple[str, int, tuple[str, ...], str], ...] | None


@dataclass
class WikiPage:
    path: str  # wiki-relative
    file: str  # where it is on disk
    size: int
    digest: PageDigest
    page: Page | None = field(init=False)

    def __post_init__(self) -> None:
        meta = self.digest.meta
        # the body is read only when a rule asks for it (page.body), never through Page
        self.page = Page(self.path, meta) if meta is not None else None

    @cached_property
    def text(self) -> str:
        """The file's text: read on first use (a cached digest answers most rules without it)."""
        try:
            with open(self.file, "rb") as handle:
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    @cached_property
    def body(self) -> str:
        return split_front_matter(self.text)[1]

    @property
    def error(self) -> str | None:
        return self.digest.error

    @property
    def has_front_matter(self) -> bool:
        return self.digest.has_front_matter

    @property
    def body_offset(self) -> int:
        return self.digest.body_offset

    @property
    def wpath(self) -> str:
        return "wiki/" + self.path

    @property
    def meta(self) -> dict[str, Any]:
        return self.page.meta if self.page else {}

    @property
    def kind(self) -> str:
        return self.page.kind if self.page else ""

    @property
    def title(self) -> str:
        return self.page.title if self.page else posixpath.splitext(posixpath.basename(self.path))[0]

    @property
    def section(self) -> str:
        return self.path.split("/", 1)[0] if "/" in self.path else ""

    @cached_property
    def is_generated(self) -> bool:
        return self.path in SPECIAL or index_page.is_catalog(self.path)

    @cached_property
    def folder(self) -> str:
        return posixpath.dirname(self.path)

    @cached_property
    def _newlines(self) -> list[int]:
        return [m.start() for m in re.finditer("\n", self.text)]

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset in the whole file."""
        return bisect.bisect_left(self._newlines, offset) + 1

    @cached_property
    def prose(self) -> str:
        return blank_code(self.text)


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


@dataclass
class Context:
    ws: Workspace
    settings: Settings
    pages: dict[str, WikiPage]  # wiki-relative path -> page (Markdown files only)
    wiki_files: set[str]  # every file under wiki/, wiki-relative
    raw_files: dict[str, str]  # workspace-relative raw path -> file system path
    state_pages: dict[str, tuple[str, str, str | None]]
    state_sources: dict[str, Any]
    _links: dict[str, list[Link]] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict)
    unreadable_names: list[str] = field(default_factory=list)  # files under wiki/ named in invalid UTF-8

    def links(self, page: WikiPage) -> list[Link]:
        cached = self._links.get(page.path)
        if cached is None:
            cached = self._links[page.path] = extract_links(page, self)
        return cached

    def exists(self, wpath: str) -> bool:
        """Does a workspace-relative path exist (wiki/ and raw/ from the scan, else the disk)?"""
        if wpath.startswith("wiki/"):
            rel = wpath[5:]
            return rel in self.wiki_files or rel.rstrip("/") in self._wiki_dirs
        if wpath.startswith("raw/") and wpath in self.raw_files:
            return True
        known = self._cache.setdefault("exists", {})
        if wpath not in known:
            known[wpath] = (self.ws.root / wpath).exists()
        return bool(known[wpath])

    @cached_property
    def _wiki_dirs(self) -> set[str]:
        dirs = {""}
        for f in self.wiki_files:
            parts = f.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    @cached_property
    def by_stem(self) -> dict[str, list[str]]:
        """[[wikilink]] resolution: file name without .md, and title, lowercased (as Obsidian matches)."""
        out: dict[str, list[str]] = {}
        for path, page in self.pages.items():
            keys = {posixpath.splitext(posixpath.basename(path))[0].lower(), posixpath.splitext(path)[0].lower()}
            if page.page is not None:
                keys.add(page.title.lower())
            for key in keys:
                out.setdefault(key, []).append(path)
        return out


def load_context(ws: Workspace, settings: Settings, before_pages: Callable[[Context], object] | None = None) -> Context:
    """Read the wiki, raw/ and state.db. before_pages(ctx) runs once the raw files and state.db rows
    are known, before any page is read (run_lint starts the source workers there)."""
    raw_files = scan_raw_files(ws)
    state_pages: dict[str, tuple[str, str, str | None]] = {}
    state_sources: dict[str, Any] = {}
    if ws.state_db.exists():
        state_pages, state_sources = read_state(ws.state_db)
    ctx = Context(ws, settings, {}, set(), raw_files, state_pages, state_sources)
    if before_pages is not None:
        before_pages(ctx)
    from . import digest

    found: list[tuple[str, str, int, int, int]] = []
    wiki_files = ctx.wiki_files
    if ws.wiki.is_dir():
        wiki_resolved = ws.wiki.resolve()
        bad_names: list[str] = []
        for entry, rel in _files_under(str(ws.wiki), "", bad_names):
            if entry.is_symlink() and wiki_resolved not in Path(entry.path).resolve().parents:
                continue  # a link out of wiki/ is not a page; lint reads nothing outside the workspace
            wiki_files.add(rel)
            if entry.name.endswith(".md") and not entry.name.startswith("."):
                try:
                    st = entry.stat()
                except OSError:
                    found.append((rel, entry.path, -1, -1, -1))  # read_wiki_page says why it cannot be read
                    continue
                found.append((rel, entry.path, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        ctx.unreadable_names += ["wiki/" + name for name in bad_names]
    found.sort()
    digests = digest.for_pages(ctx, found)
    ctx.pages = {rel: WikiPage(rel, file, max(size, 0), digests[rel]) for rel, file, size, _m, _c in found}
    return ctx


def read_state(path: Path) -> tuple[dict[str, tuple[str, str, str | None]], dict[str, Any]]:
    """Pages and sources from state.db, opened read-only: lint (and --dry-run above all) writes nothing there."""
    import json
    import sqlite3

    from ..state import SourceRow

    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return {}, {}
    try:
        pages = {r[0]: (r[1], r[2], r[3]) for r in db.execute("SELECT path, sha256, kind, owner FROM pages")}
        sources = {
            r[0]: SourceRow(
                path=r[0], sha256=r[1], size=r[2], mtime_ns=r[3], page=r[4], status=r[5], reason=r[6],
                attempts=r[7], concepts=tuple(json.loads(r[8])),
            )
            for r in db.execute("SELECT path, sha256, size, mtime_ns, page, status, reason, attempts, concepts FROM sources")
        }
        return pages, sources
    except (sqlite3.Error, ValueError, TypeError):
        return {}, {}  # an unreadable or older state: rules that need it fall back to hashing files
    finally:
        db.close()


def scan_raw_files(ws: Workspace) -> dict[str, str]:
    """The raw files compile considers (raw_tree's one walk), by workspace-relative path."""
    from ..raw_tree import scan

    return {f.path: f.location for f in scan(ws).files}


def _files_under(top: str, prefix: str, bad_names: list[str] | None = None) -> Iterator[tuple[os.DirEntry[str], str]]:
    """(entry, path from prefix) of everything under top that is not a folder, with os.scandir's
    cached types: folders named .* are left out and symlinked folders not followed; a name in
    invalid UTF-8 is skipped (its printable path goes to bad_names)."""
    stack = [(top, prefix)]
    while stack:
        folder, at = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = f"{at}/{entry.name}" if at else entry.name
            if undecodable(entry.name):
                if bad_names is not None:
                    bad_names.append(printable(rel))
                continue
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    stack.append((entry.path, rel))
                continue
            yield entry, rel


def read_wiki_page(file: str, rel: str) -> WikiPage:
    """One page, digested now (load_context reads digests from the cache instead)."""
    from .digest import digest_file

    digest, _encoded, _sha = digest_file(file, rel)
    try:
        size = os.path.getsize(file)
    except OSError:
        size = 0
    return WikiPage(rel, file, size, digest)


_SIMPLE_KEY = re.compile(r"^([A-Za-z_][\w-]*):(?:[ \t]+(.*?))?[ \t]*$")
_SIMPLE_ITEM = re.compile(r"^- (.*?)[ \t]*$")
_PLAIN = re.compile(r"^[A-Za-z_/.][^:#{}\[\],&*!|>'\"%@`]*$")
_ISO_DAY = re.compile(r"^\d{4}-\d\d-\d\d$")
_YAML_WORDS = frozenset("true false yes no on off null ~ y n".split())
_PLAIN_SEEN: dict[str, bool] = {}  # list items repeat across pages (raw/... paths): each is tested once


def simple_meta(fm: str) -> dict[str, Any] | None:
    """Front matter as wikimem writes it (`key: plain`, `key: []`, `key:` + `- item`), without YAML.

    Parsing YAML is most of the time lint spends on a large wiki; this reads only
    the plain shapes and returns None for anything else (quotes, flow lists with
    items, numbers, booleans, anchors, nesting), which then goes to the real YAML
    parser. Dates stay ISO strings, as loads_page returns them.
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
        elif _ISO_DAY.match(value) or (_PLAIN.match(value) and value.lower() not in _YAML_WORDS and not value.endswith(" ")):
            meta[m.group(1)] = value
        elif re.fullmatch(r"[0-9a-f]{64}", value):  # a hash that happens to start with a digit
            meta[m.group(1)] = value
        else:
            return None
    # "key:" with no items is null in YAML, not an empty list
    for key, value in list(meta.items()):
        if value == [] and not re.search(rf"^{re.escape(key)}:[ \t]*\[\]", fm, re.MULTILINE):
            meta[key] = None
    return meta


_RESOLVED: dict[tuple[str, str], str] = {}
_RESOLVED_TARGETS: dict[tuple[str, str], tuple[str | None, str]] = {}


def resolve_target(page_path: str, target: str, folder: str | None = None) -> tuple[str | None, str]:
    """A link target written on wiki/<page_path> as a workspace-relative path, and its #fragment.

    None for external URLs and same-page anchors. A path that climbs out of the
    workspace resolves to "../..." so the broken-link rule reports it.
    """
    folder = posixpath.dirname(page_path) if folder is None else folder
    # most links repeat on many pages of one folder (../concepts/x.md, ../../raw/x.md#L12): the
    # whole answer is cached per (folder, target as written)
    whole = (folder, target)
    known = _RESOLVED_TARGETS.get(whole)
    if known is not None:
        return known
    if len(_RESOLVED_TARGETS) > 500_000:
        _RESOLVED_TARGETS.clear()
    known = _RESOLVED_TARGETS[whole] = _resolve_target(folder, target)
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


# Link(...) goes through a generated __new__; tuple.__new__ builds the same Link without that frame
_new_link = tuple.__new__


def extract_links(page: WikiPage, ctx: Context | None = None) -> list[Link]:
    out: list[Link] = []
    text = page.prose
    start = len(text) - len(page.body)  # the body is kept byte for byte; front matter is not Markdown
    if "](" in text:
        folder = page.folder
        known = _RESOLVED_TARGETS  # resolve_target's cache, read here first: this loop runs once per link
        for m in md_links(text).finditer(text, start):
            label, bracketed, bare = m.groups()
            target = bracketed or bare
            resolved, fragment = known.get((folder, target)) or resolve_target(page.path, target, folder)
            at = m.start()
            if at > start and text[at - 1] == "!":
                at -= 1  # ![alt](src): the link starts at the "!" (a match ends with ")", never with "!")
            out.append(_new_link(Link, (label, target, at, "md", resolved, fragment)))
    if "]:" in text:
        for m in _REF_DEF.finditer(text, start):
            target = m.group(2)
            if m.group(1).startswith("^"):
                continue  # a footnote, not a link
            resolved, fragment = resolve_target(page.path, target, page.folder)
            out.append(Link(m.group(1), target, m.start(), "md", resolved, fragment))
    if "[[" in text:
        for m in _WIKILINK.finditer(text, start):
            name = m.group(1).strip()
            resolved = None
            if ctx is not None:
                resolved = resolve_wikilink(ctx, page.path, name)
            out.append(Link(m.group(3) or name, name, m.start(), "wiki", resolved or f"wiki/?{name}", (m.group(2) or "")[1:]))
    return out


def resolve_wikilink(ctx: Context, from_path: str, name: str) -> str | None:
    key = name.lower().removesuffix(".md")
    candidates = ctx.by_stem.get(key)
    if not candidates:
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), name))
        if rel in ctx.wiki_files or rel + ".md" in ctx.wiki_files:
            return "wiki/" + (rel if rel in ctx.wiki_files else rel + ".md")
        return None
    return "wiki/" + sorted(candidates)[0]

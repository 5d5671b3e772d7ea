"""Everything the rules read, loaded once: wiki pages with their links, raw files, state.db rows.

Rules are pure functions of this context, so each file is read and each page
parsed a single time however many rules look at it.
"""

from __future__ import annotations

import bisect
import json
import os
import posixpath
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import index_page, wiki_tree
from ..config import Settings
from ..links import (  # noqa: F401 - re-exported: rules read links through the context module
    REF_DEF,
    RESOLVED_TARGETS,
    WIKILINK,
    blank_code,
    code_spans,
    fenced_blocks,
    md_links,
    resolve_target,
)
from ..pages import (
    Page,
    simple_meta,  # noqa: F401 - re-exported
    split_front_matter,
)
from ..raw_tree import scan
from ..state import SourceRow
from ..workspace import Workspace
from . import digest
from .model import SECTIONS, SPECIAL, Link, PageDigest, code_version  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from .corpus import SourceCache
    from .digest import DigestStore


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


@dataclass
class RunCache:
    """What one lint run computes once and several rules read: each field has one owner, which
    fills it on first use (the others read it)."""

    timings: dict[str, float] = field(default_factory=dict)  # rule -> seconds (lint.run)
    failed_rules: list[str] = field(default_factory=list)  # rules that crashed (lint.run)
    exists: dict[str, bool] = field(default_factory=dict)  # workspace path -> is a file (Context.exists)
    sources: SourceCache | None = None  # the raw sources' text and claims (corpus.cache)
    digests: DigestStore | None = None  # the pages' digests (digest.store)
    claims: Any = None  # every source's claims, grouped (claims.py)
    pages_by_source: dict[str, list[str]] | None = None  # raw path -> pages citing it (claims.py)
    page_sources: dict[str, Any] | None = None  # page -> the raw files it names (structure.py)
    inbound: dict[str, set[str]] | None = None  # page -> pages linking to it (structure.inbound_links)
    linked: tuple[set[str], set[str]] | None = None  # (linked, indexed) pages (structure.linked_and_indexed)
    log_chain_checked: bool = False  # logcheck ran its chain check this run
    pool: Any = None  # the run's worker processes (workers.pool)


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
    run: RunCache = field(default_factory=lambda: RunCache())
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
        known = self.run.exists
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

    found: list[tuple[str, str, int, int, int]] = []
    wiki_files = ctx.wiki_files
    if ws.wiki.is_dir():
        wiki_resolved = ws.wiki.resolve()
        bad_names: list[str] = []
        for entry, rel in wiki_tree.walk(str(ws.wiki), "", bad_names):
            if entry.is_symlink():
                if wiki_resolved in Path(entry.path).resolve().parents:
                    wiki_files.add(rel)  # a link to a page resolves; the page is read as itself
                continue  # a link out of wiki/ is nothing; lint reads nothing outside the workspace
            wiki_files.add(rel)
            if wiki_tree.is_page(entry):
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

    return {f.path: f.location for f in scan(ws).files}


def read_wiki_page(file: str, rel: str) -> WikiPage:
    """One page, digested now (load_context reads digests from the cache instead)."""
    page_digest, _encoded, _sha = digest.digest_file(file, rel)
    try:
        size = os.path.getsize(file)
    except OSError:
        size = 0
    return WikiPage(rel, file, size, page_digest)


# Link(...) goes through a generated __new__; tuple.__new__ builds the same Link without that frame
_new_link = tuple.__new__


def extract_links(page: WikiPage, ctx: Context | None = None) -> list[Link]:
    out: list[Link] = []
    text = page.prose
    start = len(text) - len(page.body)  # the body is kept byte for byte; front matter is not Markdown
    if "](" in text:
        folder = page.folder
        known = RESOLVED_TARGETS  # resolve_target's cache, read here first: this loop runs once per link
        for m in md_links(text).finditer(text, start):
            label, bracketed, bare = m.groups()
            target = bracketed or bare
            resolved, fragment = known.get((folder, target)) or resolve_target(page.path, target, folder)
            at = m.start()
            if at > start and text[at - 1] == "!":
                at -= 1  # ![alt](src): the link starts at the "!" (a match ends with ")", never with "!")
            out.append(_new_link(Link, (label, target, at, "md", resolved, fragment)))
    if "]:" in text:
        for m in REF_DEF.finditer(text, start):
            target = m.group(2)
            if m.group(1).startswith("^"):
                continue  # a footnote, not a link
            resolved, fragment = resolve_target(page.path, target, page.folder)
            out.append(Link(m.group(1), target, m.start(), "md", resolved, fragment))
    if "[[" in text:
        for m in WIKILINK.finditer(text, start):
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

"""Full-text search over the wiki pages and the raw sources, with a derived whoosh index.

The index lives in `.wikimem/search/` and is never the truth: `wikimem reindex`
rebuilds it from `wiki/` and `raw/`. `update_index` keeps it current
incrementally by comparing each file's size and mtime with a manifest, so calling
it before every query costs one directory walk when nothing changed.

Each document is cut into passages (a heading and the text under it, capped in
size) so a long source ranks by its best section, not by its average; results
are grouped back into one hit per file. Ranking uses what the wiki knows:
title, aliases and headings weigh more than body text; compiled pages weigh a
little more than the raw text they summarize; and within a series of documents
that differ only by a version or date in their title ("Go 1.25 Release Notes",
"Go 1.27 Release Notes") the newer one ranks higher, strongly so when the
question asks for the current value.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import math
import operator
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .naming import CATALOG_NAME, is_ignored_name, undecodable
from .workspace import Workspace, atomic_write

log = logging.getLogger("wikimem.search")

INDEX_DIR = "search"
# bump when the schema, chunking or analysis changes: an old index is then rebuilt
INDEX_VERSION = 15
KINDS = ("source", "concept", "fact", "answer", "raw")
WIKI_FOLDERS = ("sources", "concepts", "facts", "answers")
CHUNK_CHARS = 500  # passage size: 500 beat 700, 1000 and 1500 on the probes (bench/retrieval.py)
MAX_STORED_CHARS = 12_000
CONCEPT_INDEX_CHARS = 12_000  # text of a concept page that is indexed (see load_wiki_page)

# query-time field weights (BM25F per field, summed): the words a page is *about*
# (title, aliases, headings) say more than a passing mention in the body
FIELD_BOOSTS = {"title": 3.0, "aliases": 2.5, "headings": 2.0, "where": 1.2, "body": 1.0}
# source and answer pages summarize and cite: prefer them a little over the raw text when
# both match. Concept pages quote a sentence or two from many sources, so they match many
# questions broadly; they rank below the specific page unless they match clearly better.
KIND_PRIOR = {"source": 1.15, "concept": 0.7, "answer": 1.2, "raw": 1.0}
DUPLICATE_DEMOTE = 0.5  # score factor for the lower of a source page and its own raw file
COORD_POWER = 1.5  # how much the share of the question's words held counts (see coordination)
RECENCY = 0.15  # bonus for the newest member of a series
RECENCY_CURRENT = 1.0  # ... when the question asks for the current / latest value
# a word in more than this share of index entries only adds to passages that match a rarer one
COMMON_FRACTION = 0.08
PARALLEL_INDEX = 100  # files; a build from nothing of more uses every core (see _update_locked)
POSTINGS_BUDGET = 4000  # passages the rarest words of a question may pick as candidates
LARGE_INDEX = 50_000  # entries; above it common words are not scored at all (see build_query)
CURRENT_WORDS = {"current", "currently", "latest", "newest", "now", "today", "still", "recent", "nowadays"}
# how questions ask for a bound that pages call a minimum: the word the pages use is searched too
INTENT_SYNONYMS = {"oldest": "minimum", "earliest": "minimum", "lowest": "minimum"}

# dropped from questions (on top of whoosh's own index stop list): question words and
# fillers that would otherwise match almost every passage
QUERY_STOP = frozenset(
    """a an and are as at be been but by can could did do does doing for from had has have how
    i if in into is it its me my of on or our should so than that the their them then there these
    they this those to was we were what when where which who whom whose why will with would you your
    about also any each just more most only other some such very via vs used use using tell
    explain describe show give find me please""".split()
)


@dataclass(frozen=True)
class Hit:
    """One search result: a wiki page or a raw source, with the passage that matched best."""

    path: str  # workspace-relative: wiki/... or raw/...
    title: str
    kind: str  # source | concept | answer | raw
    score: float
    snippet: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "kind": self.kind,
                "score": round(self.score, 4), "snippet": self.snippet}


@dataclass(frozen=True)
class Passage:
    """A hit with the detail citations need: the line the snippet starts on and the passage text."""

    hit: Hit
    line: int | None  # line in the file (page number for PDF sources)
    anchor: str  # "L" (#L12) or "page=" (#page=3)
    heading: str
    text: str

    @property
    def target(self) -> str:
        """`raw/x.md#L12` (or `raw/x.pdf#page=3`): where the snippet is, to read or cite."""
        return f"{self.hit.path}#{self.anchor}{self.line}" if self.line else self.hit.path

    def to_json(self) -> dict[str, Any]:
        """A result as `search --json` and the MCP search tool give it: the hit, the line its
        snippet starts on, and the citation target (path#L<line>)."""
        return {**self.hit.to_json(), "line": self.line, "target": self.target}


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    passages: int = 0
    rebuilt: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)

    def to_json(self) -> dict[str, Any]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped], "files": self.files,
                "passages": self.passages, "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3)}


# --- analysis ---------------------------------------------------------------------------------

_ANALYZER: Any = None


_IDENT_PART = re.compile(r"[^\W\d_]\w*")
_DOTTED = re.compile(r"_*[^\W\d_]\w*(?:\._*[^\W\d_]\w*)+")


def identifier_parts(word: str) -> list[str]:
    """The words inside a snake_case or dotted identifier: `raw_enabled` -> raw, enabled;
    `flask.g` -> flask, g. Versions are no identifiers (`1.19`, `go1.21` stay whole)."""
    dotted = "." in word and _DOTTED.fullmatch(word) is not None
    if "_" not in word and not dotted:
        return []
    parts: list[str] = []
    for chunk in word.split(".") if dotted else [word]:
        if chunk != word:
            parts.append(chunk)  # flask.__version__ -> __version__ too
        if "_" in chunk:
            parts += [p for p in chunk.split("_") if _IDENT_PART.fullmatch(p)]
    return list(dict.fromkeys(p for p in parts if p != word))


class IdentifierParts:
    """A whoosh filter: an identifier is indexed whole and also as its parts, at the same
    position, so a question that says "raw enabled" finds the setting `raw_enabled`.
    (Duck-typed rather than a whoosh Filter subclass: importing whoosh here would slow every
    import of this module; the index pickles the analyzer, so the class lives at top level.)"""

    is_morph = False

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for t in tokens:
            text = t.text  # later filters rewrite t.text in place: keep the original
            yield t
            for part in identifier_parts(text):
                t.text = part
                yield t

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


def analyzer() -> Any:
    global _ANALYZER
    if _ANALYZER is None:
        from whoosh.analysis import (
            CompositeAnalyzer,
            LowercaseFilter,
            RegexTokenizer,
            StemFilter,
            StopFilter,
        )

        # the default token pattern keeps versions and identifiers whole: 1.19, go1.21, f64;
        # identifiers also count as their parts (see identifier_parts)
        _ANALYZER = CompositeAnalyzer(RegexTokenizer(), LowercaseFilter(), IdentifierParts(),
                                      StopFilter(minsize=1), StemFilter(cachesize=50_000))
    return _ANALYZER


def schema() -> Any:
    """Two levels of entry per file: one `doc` entry (what the file is about: title, aliases,
    path) and one `part` entry per passage (its heading trail and text). A file scores its
    best passage plus its doc entry, so a title counts once per file instead of once per
    passage, and the title postings stay short."""
    from whoosh.fields import ID, STORED, TEXT, Schema

    ana = analyzer()
    return Schema(
        path=ID(stored=True),
        kind=ID(stored=True),
        level=ID(stored=True),  # doc | part
        era=ID,  # a changelog passage's release, oldest 0 to newest 10 (see release_eras)
        title=TEXT(analyzer=ana, stored=True),
        aliases=TEXT(analyzer=ana),
        where=TEXT(analyzer=ana),
        headings=TEXT(analyzer=ana, stored=True),
        body=TEXT(analyzer=ana, stored=True),
        lines=STORED,  # [[offset in body, line in file], ...] for citing the snippet's line
        anchor=STORED,
    )


_PATH_WORDS = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+")


def path_words(path: str) -> str:
    """`raw/release-notes/go1.19.md` -> "raw release notes go 1.19 md": versions stay whole,
    and zero-padded numbers also count as themselves (`pep-0008` is PEP 8)."""
    words = _PATH_WORDS.findall(path)
    words += [w.lstrip("0") for w in words if w[0] == "0" and w.isdigit() and w.strip("0")]
    return " ".join(words)


# --- documents ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    heading: str
    text: str
    lines: tuple[tuple[int, int], ...]
    era: int | None = None  # in a changelog: how recent the passage's release is, 0 (oldest) to 10


@dataclass(frozen=True)
class Doc:
    path: str  # workspace-relative
    kind: str
    title: str
    aliases: str
    date: str | None
    anchor: str
    chunks: tuple[Chunk, ...]
    sources: tuple[str, ...] = ()
    current: str | None = None  # a fact page's current statement: raw/...#L<n>


def chunk_blocks(blocks: Iterable[Any]) -> list[Chunk]:
    """Group blocks into passages: a new one at every heading or when one grows long."""
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []
    parts: list[str] = []
    lines: list[tuple[int, int]] = []
    size = 0

    def flush() -> None:
        nonlocal parts, lines, size
        if parts:
            chunks.append(Chunk(" / ".join(t for _, t in trail), "\n".join(parts)[:MAX_STORED_CHARS], tuple(lines)))
        parts, lines, size = [], [], 0

    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        if block.kind == "heading":
            flush()
            level = block.level or 1
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, text)]
            continue
        if size and size + len(text) > CHUNK_CHARS:
            flush()
        lines.append((size, block.line))
        parts.append(text)
        size += len(text) + 1
    flush()
    if not chunks and trail:
        chunks.append(Chunk(" / ".join(t for _, t in trail), "", ()))
    return chunks


def load_wiki_page(ws: Workspace, rel: str) -> Doc:
    from .pages import FrontMatterError, parse_meta, split_front_matter
    from .sources import parse_markdown

    text = (ws.wiki / rel).read_text(encoding="utf-8", errors="replace")
    fm, body, offset = split_front_matter(text)
    try:
        meta = parse_meta(fm) if fm is not None else {}
    except FrontMatterError:
        meta = {}  # still searchable by its text; lint reports the front matter
    folder = rel.split("/", 1)[0]
    by_folder = {"sources": "source", "concepts": "concept", "facts": "fact", "answers": "answer"}
    kind = str(meta.get("kind") or by_folder[folder])
    if kind not in KINDS:
        kind = by_folder[folder]
    title = str(meta.get("title") or Path(rel).stem)
    aliases = meta.get("aliases") or []
    alias_text = " ".join(str(a) for a in aliases) if isinstance(aliases, list) else str(aliases)
    sources = meta.get("sources") or []
    sources = [str(s) for s in sources] if isinstance(sources, list) else [str(sources)]
    date = meta.get("date")
    blocks = parse_markdown(body, offset)
    # the page's own H1 repeats the title; leave it out of the heading trail
    if blocks and blocks[0].kind == "heading" and blocks[0].text.strip() == title:
        blocks = blocks[1:]
    chunks = chunk_blocks(blocks)
    if kind == "concept":
        # a concept page quotes what every source says about it, newest first: on a large wiki
        # the quotes are most of the text to index (60% at 10k sources) and every one of them
        # is indexed again in its raw source. The page is found by its title and aliases and
        # its newest quotes; the rest stays a read away.
        kept: list[Chunk] = []
        size = 0
        for chunk in chunks:
            size += len(chunk.text)
            if size > CONCEPT_INDEX_CHARS and kept:
                break
            kept.append(chunk)
        chunks = kept
    if kind in ("concept", "fact"):
        # a "Sources" section is a row of file names: the path field already has their words
        chunks = [c for c in chunks if c.heading.rsplit(" / ", 1)[-1] != "Sources"]
    current = meta.get("current") if kind == "fact" else None
    return Doc("wiki/" + rel, kind, title, alias_text, str(date) if date else None, "L",
               tuple(chunks), tuple(sources), str(current) if isinstance(current, str) else None)


@dataclass(frozen=True)
class _Heading:
    kind: str
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class _Section:
    line: int
    parent: int
    version: str | None


def load_raw_file(ws: Workspace, rel: str, max_bytes: int, outline: dict[str, Any] | None = None) -> Doc:
    """Raises SkipSource for files that are not readable sources.

    Text formats are indexed from their own lines, cut at the headings the loader found:
    loaders keep what a page needs and drop the rest (literal blocks, front matter, some
    tables), but search must find every figure the source holds, verbatim. `outline` is what
    the compile kept of the loaded file (sources.outline): with it, the file is not parsed again.
    """
    from .sources import TEXT_SUFFIXES, SkipSource, load_source, read_text

    file = ws.root / rel
    if outline is not None and file.suffix.lower() in TEXT_SUFFIXES:
        size = file.stat().st_size
        if size > max_bytes:
            raise SkipSource(f"too large ({size / 1e6:.1f} MB)")
        text, _ = read_text(file)
        title = outline.get("title") or Path(rel).stem
        headings = [_Heading("heading", int(h[0]), int(h[1]), str(h[2])) for h in outline.get("headings") or []]
        sections = [_Section(int(x[0]), int(x[1]), x[2]) for x in outline.get("sections") or []]
        chunks = raw_text_chunks(text, headings, title)
        return Doc(rel, "raw", title, "", outline.get("date"), str(outline.get("anchor") or "L"),
                   tuple(release_eras(chunks, sections)))
    doc = load_source(file, rel, max_bytes=max_bytes)
    title = doc.title or Path(rel).stem
    if file.suffix.lower() in TEXT_SUFFIXES:
        text, _ = read_text(file)
        chunks = raw_text_chunks(text, [b for b in doc.blocks if b.kind == "heading"], title)
    else:
        blocks = list(doc.blocks)
        if blocks and blocks[0].kind == "heading" and blocks[0].text.strip() == title:
            blocks = blocks[1:]
        chunks = chunk_blocks(blocks)
    return Doc(rel, "raw", title, "", doc.date, doc.anchor, tuple(release_eras(chunks, doc.sections)))


def release_eras(chunks: list[Chunk], sections: list[Any]) -> list[Chunk]:
    """Tell each passage of a changelog how recent its release is (0 oldest .. 10 newest), so a
    question about the current state prefers the newest entry that answers it. A file with
    fewer than two releases is left as it is."""
    import bisect

    releases = [s for s in sections if getattr(s, "version", None)]
    if len(releases) < 2:
        return chunks
    order = sorted({_release_key(s.version) for s in releases})
    rank = {v: i / max(1, len(order) - 1) for i, v in enumerate(order)}
    # each section's release: its own, or the nearest enclosing section's
    era_of: list[int | None] = []
    for i, sec in enumerate(sections):
        if getattr(sec, "version", None):
            era_of.append(round(10 * rank[_release_key(sec.version)]))
        else:
            parent = sec.parent
            era_of.append(era_of[parent] if 0 <= parent < i else None)
    starts = [sec.line for sec in sections]  # in document order
    out = []
    for chunk in chunks:
        held = bisect.bisect_right(starts, chunk.lines[0][1]) - 1 if chunk.lines else -1
        era = era_of[held] if held >= 0 else None
        out.append(replace(chunk, era=era) if era is not None else chunk)
    return out


def _release_key(version: str) -> tuple[int, ...]:
    """Release order: 3.1.0 after 3.0.2; a pre-release (2.0rc1) before its release."""
    match = re.match(r"v?(\d+(?:\.\d+)*)(.*)$", version.strip())
    if not match:
        return (-1,)
    return (*(int(x) for x in match.group(1).split(".")), 0 if not match.group(2).strip(".-_ ") else -1)


_ADORNMENT = re.compile(r"^\s*([=\-~^\"'`#*+<>_:.])\1{2,}\s*$")
# a reST (or Sphinx) description of one object: its passage is named after the object
_OBJECT = re.compile(
    r"^\s*\.\. (?:[a-z]+:)?(?:data|function|class|method|attribute|exception|decorator|property"
    r"|module|option|cmdoption|envvar|confval|describe|object|setting|directive|role|program)"
    r"::\s*([^\s(]+)"
)
OBJECT_LEVEL = 9  # below any heading of the page


def raw_text_chunks(text: str, headings: list[Any], title: str) -> list[Chunk]:
    """Passages from a text file's lines: a new one at each heading line, at each described
    object (a reST `.. py:data:: NAME`, `.. option::`, ...: one passage per setting or function
    of a reference page) and at a paragraph break once a passage is long; every line is kept,
    with its line number."""
    from .sources import clean_inline

    starts = {b.line: b for b in headings}
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []
    parts: list[str] = []
    lines_map: list[tuple[int, int]] = []
    size = 0

    def flush() -> None:
        nonlocal parts, lines_map, size
        body = "\n".join(parts).rstrip()  # no lstrip: offsets in lines_map count from the start
        if body.strip():
            chunks.append(Chunk(" / ".join(t for _, t in trail), body[:MAX_STORED_CHARS], tuple(lines_map)))
        parts, lines_map, size = [], [], 0

    for number, line in enumerate(text.split("\n"), 1):
        heading = starts.get(number)
        if heading is not None:
            flush()
            level = heading.level or 1
            label = heading.text.strip()
            trail = [(lv, t) for lv, t in trail if lv < level]
            if not (level == 1 and label == title):
                trail.append((level, label))
            continue
        if _ADORNMENT.match(line):  # reStructuredText heading underlines, Markdown rules
            continue
        if ".. " in line[:40] and "::" in line:
            described = _OBJECT.match(line)
            if described is not None:
                flush()
                trail = [(lv, t) for lv, t in trail if lv < OBJECT_LEVEL] + [(OBJECT_LEVEL, described.group(1))]
                continue  # the directive line itself: its name is the passage's heading
        if not line.strip():
            if size > CHUNK_CHARS:
                flush()
            elif parts:
                parts.append("")
                size += 1
            continue
        # link targets and markup noise would swamp the words ("pkg", "crypto" from every
        # /pkg/crypto/... link); the line keeps its words and its number
        line = clean_inline(line) if ("](" in line or "<" in line or "{{" in line or "[^" in line) else line
        lines_map.append((size, number))  # every line: a snippet cites the line it starts on
        parts.append(line)
        size += len(line) + 1
    flush()
    return chunks


# --- files and manifest ---------------------------------------------------------------------


def index_dir(ws: Workspace) -> Path:
    return ws.state_dir / INDEX_DIR


def walk_files(ws: Workspace) -> dict[str, tuple[int, int]]:
    """Every file search covers, with (size, mtime_ns): raw/ as compile sees it (raw_tree's one
    walk: its ignore rules, symlink and hard-link policy) and the wiki's pages. No reads.

    This runs before every search, so it stays lean: string paths, no per-file imports.
    """
    from .raw_tree import scan

    found: dict[str, tuple[int, int]] = {f.path: (f.size, f.mtime_ns) for f in scan(ws).files}

    def walk(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            return
        for entry in entries:
            name = entry.name
            if name.startswith(".") or _ignored(name) or undecodable(name):
                continue  # a name in invalid UTF-8 cannot go into the index (compile refuses it too)
            rel = prefix + name
            try:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, rel + "/")
                    continue
                if entry.is_symlink() or not name.endswith(".md") or _CATALOG.search(rel):
                    continue  # pages are files wikimem or a person wrote, never links out
                st = entry.stat()
            except OSError:
                continue
            found[rel] = (st.st_size, st.st_mtime_ns)

    for folder in WIKI_FOLDERS:
        walk(str(ws.wiki / folder), f"wiki/{folder}/")
    return found


# from naming, not sources/index_page: those would pull YAML, front matter and Jinja into
# every cold search
_ignored = is_ignored_name
_CATALOG = CATALOG_NAME


_MANIFESTS: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def _read_manifest(folder: Path, *, cached: bool = False) -> dict[str, Any] | None:
    """The manifest; `cached` reuses the last parse while the file is unchanged (read-only use:
    parsing 5 MB of JSON at 10k sources would be most of a freshness check)."""
    path = folder / "manifest.json"
    try:
        st = path.stat()
        key = (st.st_mtime_ns, st.st_size)
        if cached and path in _MANIFESTS and _MANIFESTS[path][0] == key:
            return _MANIFESTS[path][1]
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if cached and isinstance(data, dict) and data.get("version") == INDEX_VERSION:
        _MANIFESTS[path] = (key, data)
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return None
    return data


# --- priors: series of versioned or dated documents -------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def series_key(path: str, title: str) -> str | None:
    """Documents that differ only by the numbers in their title belong to one series."""
    if not _NUMBER.search(title):
        return None
    folder = path.rsplit("/", 1)[0] if path.startswith("raw/") else "wiki"
    return folder + "|" + _NUMBER.sub("#", title.lower()).strip()


def version_of(title: str) -> tuple[int, ...]:
    m = _NUMBER.search(title)
    return tuple(int(x) for x in m.group(0).split(".")[:4]) if m else ()


def _series_of(path: str, info: dict[str, Any]) -> str | None:
    """A manifest doc's series key: kept in it when indexed ("series"), else worked out."""
    if "series" in info:
        return info["series"] or None
    return series_key(path, info.get("title") or "")


def compute_priors(docs: dict[str, dict[str, Any]], only: set[str] | None = None) -> dict[str, float]:
    """Recency rank in [0, 1] within each series (1 = newest); only series of two or more.
    With `only` (series keys), just those series: an update recomputes the series it touched."""
    groups: dict[str, list[tuple[Any, str]]] = {}
    for path, info in docs.items():
        key = _series_of(path, info)
        if key is None or (only is not None and key not in only):
            continue
        order = (info.get("date") or "", version_of(info["title"]))
        groups.setdefault(key, []).append((order, path))
    ranks: dict[str, float] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort()
        # documents whose version or date ties share a rank
        distinct = sorted({o for o, _ in members})
        for order, path in members:
            ranks[path] = distinct.index(order) / max(1, len(distinct) - 1)
    return ranks


# --- the index --------------------------------------------------------------------------------


def _settings_max_bytes(ws: Workspace) -> int:
    try:
        from .config import load_settings

        return int(load_settings(ws.root).max_source_mb * 1_000_000)
    except Exception:  # a broken wikimem.toml must not stop search; compile reports it
        return 10_000_000


def _add(writer: Any, doc: Doc) -> int:
    writer.add_document(path=doc.path, kind=doc.kind, level="doc", title=doc.title, aliases=doc.aliases,
                        where=path_words(doc.path), anchor=doc.anchor)
    for chunk in doc.chunks:
        extra = {"era": str(chunk.era)} if chunk.era is not None else {}
        writer.add_document(path=doc.path, kind=doc.kind, level="part", headings=chunk.heading,
                            body=chunk.text, lines=[list(x) for x in chunk.lines], anchor=doc.anchor, **extra)
    return len(doc.chunks)


def update_index(ws: Workspace, *, rebuild: bool = False, wait: float = 5.0,
                 only: Iterable[str] | None = None) -> IndexReport:
    """Bring the index in line with wiki/ and raw/; the minimum work when nothing changed.

    Returns what changed. When another process holds the index's write lock it waits
    up to `wait` seconds, then leaves the index as it is (searches still work on it).
    `only` (workspace-relative paths, as a compile names what it wrote) looks at those files
    alone, without walking the folders; without an index yet, it builds the whole one.
    """
    started = time.perf_counter()
    folder = index_dir(ws)
    manifest = None if rebuild else _read_manifest(folder, cached=True)
    if only is not None and manifest is not None:
        only = sorted(set(only))
        with _index_lock(ws, wait) as acquired:
            if not acquired:
                return IndexReport(seconds=time.perf_counter() - started)
            return _update_locked(ws, False, wait, started, only=only)
    if manifest is not None:
        current = walk_files(ws)
        files = manifest["files"]
        if len(files) == len(current) and all(files.get(p) == list(st) for p, st in current.items()):
            return IndexReport(files=len(current), seconds=time.perf_counter() - started)
    try:
        with _index_lock(ws, wait) as acquired:
            if not acquired:
                log.info("another process is updating the search index; searching it as it is")
                return IndexReport(seconds=time.perf_counter() - started)
            # under the lock, look again: the process we waited for may have done the work
            return _update_locked(ws, rebuild, wait, started)
    except OSError as exc:
        if manifest is not None and not rebuild:
            # e.g. a read-only copy of a workspace: search the index as it is
            log.warning("search index not updated (%s); results may miss recent changes", exc)
            return IndexReport(seconds=time.perf_counter() - started)
        from .errors import WikimemError

        raise WikimemError(
            f"cannot write the search index in {folder} ({exc.strerror or exc}); check that folder's permissions"
        ) from exc


@contextlib.contextmanager
def _index_lock(ws: Workspace, wait: float) -> Iterator[bool]:
    """One index updater at a time across processes (an OS lock, freed if the holder dies)."""
    import errno
    import fcntl

    ws.state_dir.mkdir(parents=True, exist_ok=True)
    with open(ws.state_dir / "search.lock", "a+") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.05)
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _stat_for_index(ws: Workspace, rel: str) -> tuple[int, int] | None:
    """(size, mtime_ns) of one file search covers, None if it is gone or not one it covers
    (the rules of walk_files, for a path named rather than walked)."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in ("raw", "wiki") or any(p.startswith(".") for p in parts[1:]):
        return None
    if parts[0] == "wiki" and (parts[1] not in WIKI_FOLDERS or len(parts) < 3 or not rel.endswith(".md")
                               or _CATALOG.search(rel) or _ignored(parts[-1])):
        return None
    try:
        st = os.lstat(ws.root / rel)
    except OSError:
        return None
    import stat as stat_

    if not stat_.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns


def _update_locked(ws: Workspace, rebuild: bool, wait: float, started: float,
                   only: list[str] | None = None) -> IndexReport:
    report = IndexReport(rebuilt=rebuild)
    folder = index_dir(ws)
    manifest = None if rebuild else _read_manifest(folder)
    if manifest is None:
        rebuild = report.rebuilt = True
        only = None
        manifest = {"version": INDEX_VERSION, "files": {}, "docs": {}, "skipped": {}}
    files: dict[str, list[int]] = manifest["files"]
    if only is None:
        current = walk_files(ws)
    else:
        current = {p: (st[0], st[1]) for p, st in files.items()}
        for path in only:
            got = _stat_for_index(ws, path)
            if got is None:
                current.pop(path, None)
            else:
                current[path] = got
    report.files = len(current)
    changed = [p for p, stat in current.items() if files.get(p) != list(stat)]
    gone = [p for p in files if p not in current]
    if not (changed or gone or rebuild):
        report.seconds = time.perf_counter() - started
        return report

    from whoosh import index as windex
    from whoosh.index import LockError

    from .sources import SkipSource

    build_in = folder
    ix: Any = None
    if not rebuild:
        try:
            ix = windex.open_dir(str(folder))
        except Exception as exc:  # noqa: BLE001 - a damaged index is derived data: rebuild it
            log.warning("search index unreadable (%s); rebuilding", exc)
            rebuild = report.rebuilt = True
    if rebuild:
        # build beside the live index and swap it in at the end, so searches running
        # meanwhile (another process, the MCP server) keep a complete index to read
        manifest = {"version": INDEX_VERSION, "files": {}, "docs": {}, "skipped": {}}
        files = manifest["files"]
        changed, gone = list(current), []
        build_in = folder.with_name(INDEX_DIR + ".new")
        if build_in.exists():
            shutil.rmtree(build_in)
        build_in.mkdir(parents=True)
        ix = windex.create_in(str(build_in), schema())
    # a build from nothing of many files: whoosh's multiprocessing writer analyses on every core
    # (each worker writes a segment of its own; the segments are searched as they are). Not in a
    # process with other threads (the daemon, the MCP server): forking there is unsafe.
    import threading

    procs = min(4, os.cpu_count() or 1)
    parallel = rebuild and len(changed) >= PARALLEL_INDEX and procs > 1 and threading.active_count() == 1
    try:
        # jobs of ~100 entries (whoosh's default) in a small build would all go to one worker
        batch = max(20, min(100, len(changed) // (2 * procs)))
        writer = ix.writer(procs=procs, batchsize=batch, multisegment=True, timeout=wait, limitmb=64) if parallel else \
            ix.writer(timeout=wait, limitmb=128)
    except LockError:
        log.info("search index is being updated by another process; searching it as it is")
        report.seconds = time.perf_counter() - started
        return report
    max_bytes = _settings_max_bytes(ws)
    outlines = _Outlines(ws, current)
    docs: dict[str, Any] = manifest["docs"]
    skipped: dict[str, Any] = manifest.setdefault("skipped", {})
    # the series (versioned titles) of every file this update touches, before and after
    before_titles = {p: docs[p] for p in (*gone, *changed) if p in docs}
    touched_series: set[str] = {k for p, info in before_titles.items() if (k := _series_of(p, info)) is not None}
    try:
        for path in gone:
            writer.delete_by_term("path", path)
            files.pop(path, None)
            docs.pop(path, None)
            skipped.pop(path, None)
            report.removed.append(path)
        for path in sorted(changed):
            known = path in files
            if known and not rebuild:
                writer.delete_by_term("path", path)
            try:
                doc = load_wiki_page(ws, path.removeprefix("wiki/")) if path.startswith("wiki/") else \
                    load_raw_file(ws, path, max_bytes, outlines.get(path))
            except SkipSource as exc:
                skipped[path] = str(exc)
                report.skipped.append((path, str(exc)))
                docs.pop(path, None)
                files[path] = list(current[path])
                continue
            except RecursionError:
                # nested deeper than the parsers recurse: one such file must not stop the index
                # for every other; recorded like a skip, so it is not parsed again until it changes
                reason = "unreadable (nested too deeply to parse)"
                skipped[path] = reason
                report.skipped.append((path, reason))
                docs.pop(path, None)
                files[path] = list(current[path])
                continue
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                # vanished or unreadable mid-walk: try again next time
                log.info("not indexed %s: %s", path, exc)
                files.pop(path, None)
                docs.pop(path, None)
                continue
            skipped.pop(path, None)
            report.passages += _add(writer, doc)
            key = series_key(path, doc.title)
            docs[path] = {"title": doc.title, "kind": doc.kind, "date": doc.date, "series": key or ""}
            if key is not None:
                touched_series.add(key)
            if doc.kind == "source" and len(doc.sources) == 1:
                docs[path]["source"] = doc.sources[0]
            if doc.current and doc.current.startswith("raw/"):
                docs[path]["current"] = doc.current
            files[path] = list(current[path])
            (report.updated if known and not rebuild else report.added).append(path)
        if rebuild or "priors" not in manifest:
            manifest["priors"] = compute_priors(docs)
        elif touched_series:
            # only the series a changed file belongs to (or belonged to) can change their order
            priors = {p: v for p, v in manifest["priors"].items()
                      if _series_of(p, docs.get(p) or before_titles.get(p) or {}) not in touched_series}
            priors.update(compute_priors(docs, touched_series))
            manifest["priors"] = priors
        writer.commit(optimize=rebuild and not parallel)
    except BaseException:
        writer.cancel()
        raise
    finally:
        outlines.close()
    atomic_write(build_in / "manifest.json", json.dumps(manifest, separators=(",", ":"), sort_keys=True))
    if build_in != folder:
        old = folder.with_name(INDEX_DIR + ".old")
        if old.exists():
            shutil.rmtree(old)
        if folder.exists():
            os.replace(folder, old)
        os.replace(build_in, folder)
        shutil.rmtree(old, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    return report


class _Outlines:
    """The outlines the compile kept in state.db (sources.outline), for raw files whose size and
    mtime still match the compiled version; read-only, and empty when there is no state.db."""

    def __init__(self, ws: Workspace, current: dict[str, tuple[int, int]]):
        import sqlite3

        self.db: Any = None
        self.shas: dict[str, str] = {}
        if not ws.state_db.exists():
            return
        try:
            self.db = sqlite3.connect(f"file:{ws.state_db}?mode=ro", uri=True, timeout=1.0)
            for path, sha, size, mtime in self.db.execute("SELECT path, sha256, size, mtime_ns FROM sources"):
                if current.get(path) == (size, mtime):
                    self.shas[path] = sha
        except sqlite3.Error:
            self.close()

    def get(self, path: str) -> dict[str, Any] | None:
        sha = self.shas.get(path)
        if sha is None or self.db is None:
            return None
        import sqlite3

        try:
            row = self.db.execute("SELECT data FROM outlines WHERE sha256=?", (sha,)).fetchone()
        except sqlite3.Error:
            return None
        return json.loads(row[0]) if row else None

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


def reindex(ws: Workspace) -> IndexReport:
    """Throw the index away and build it again from wiki/ and raw/."""
    return update_index(ws, rebuild=True, wait=30.0)


# --- queries ----------------------------------------------------------------------------------

_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class ParsedQuery:
    terms: tuple[str, ...]  # analyzed (stemmed) terms, stop words dropped
    phrases: tuple[tuple[str, ...], ...]
    current: bool  # asks for the current value: favour the newest in a series


def parse_query(text: str) -> ParsedQuery:
    """Natural language in, terms out: every content word counts, none is required."""
    ana = analyzer()
    phrases = tuple(
        tuple(t.text for t in ana(p)) for p in _PHRASE.findall(text) if any(True for _ in ana(p))
    )
    words = re.findall(r"[\w.]+", text.lower())
    current = any(w in CURRENT_WORDS for w in words)
    kept = [w for w in re.findall(r"\S+", text) if w.lower().strip("?!.,;:\"'()`") not in QUERY_STOP]
    if current:
        # "now", "currently": how the question asks, not what it asks about (they would match
        # every passage that says "now supports")
        content_words = [w for w in kept if w.lower().strip("?!.,;:\"'()`") not in CURRENT_WORDS]
        kept = content_words or kept
    kept += [INTENT_SYNONYMS[w.lower().strip("?!.,;:\"'()`")] for w in kept
             if w.lower().strip("?!.,;:\"'()`") in INTENT_SYNONYMS]
    terms = [t.text for t in ana(" ".join(kept))]
    if not terms:  # a query of only stop words: search them rather than nothing
        from whoosh.analysis import StandardAnalyzer

        terms = [t.text for t in StandardAnalyzer(stoplist=None)(text)]
    seen: dict[str, None] = {}
    for term in terms:
        seen.setdefault(term, None)
    return ParsedQuery(tuple(seen), phrases, current)


def weighting() -> Any:
    """BM25F without length normalization for the doc-level fields: only doc entries have a
    title, so the average title length over all entries is tiny and normal BM25 would
    crush every title match."""
    from whoosh.scoring import BM25F

    return BM25F(title_B=0.0, aliases_B=0.0, where_B=0.0)


def select_terms(parsed: ParsedQuery, doc_frequency: Any = None, doc_count: int = 0) -> tuple[list[str], list[str]]:
    """(rare, common): the words that pick candidates and the words that only add to them
    (see build_query)."""
    common: list[str] = []
    rare = list(parsed.terms)
    if doc_frequency is not None and doc_count > 200:
        cutoff = COMMON_FRACTION * doc_count
        df = {t: doc_frequency("body", t) for t in parsed.terms}
        common = [t for t in parsed.terms if df[t] > cutoff]
        rare = [t for t in parsed.terms if t not in common]
        # bound the candidates on a large wiki: the rarest words pick the passages, up to a
        # budget of postings. On a small wiki every word fits and this changes nothing.
        budget, total = POSTINGS_BUDGET, 0
        picked: list[str] = []
        for t in sorted(rare, key=lambda t: df[t]):
            if picked and total + df[t] > budget:
                break
            picked.append(t)
            total += df[t]
        rare = [t for t in rare if t in picked]
        if doc_count > LARGE_INDEX:
            # scoring the common words' long posting lists, even only for the candidates,
            # costs four times the rest of the query on a 10k-source wiki (bench/search_speed.py)
            common = []
    return rare, common


def phrase_queries(parsed: ParsedQuery) -> list[Any]:
    """A quoted phrase of two words or more scores again, in the body, title or headings."""
    from whoosh import query as Q

    return [
        Q.Or([Q.Phrase("body", list(p), boost=2.0), Q.Phrase("title", list(p), boost=4.0),
              Q.Phrase("headings", list(p), boost=3.0)])
        for p in parsed.phrases if len(p) > 1
    ]


def build_query(parsed: ParsedQuery, doc_frequency: Any = None, doc_count: int = 0) -> Any:
    """Every content word may match (OR), in any field, with the field's weight.

    Words found in a large share of passages ("go" in Go release notes) only add to the
    score of passages that match a rarer word too (whoosh's AndMaybe): they rarely decide
    anything, and scoring their long posting lists is most of the cost of a query. On a
    large wiki the candidates are bounded too: the rarest words pick them, up to a budget of
    postings, and the rest of the words are left out (pure-Python scoring costs about a
    microsecond a posting; a 10k-source wiki has lists of 20k+).
    """
    from whoosh import query as Q

    def clauses(terms: Iterable[str]) -> list[Any]:
        return [Q.Term(f, t, boost=b) for t in terms for f, b in FIELD_BOOSTS.items()]

    def either(items: list[Any], matcher: int) -> Any:
        if len(items) == 1:
            return items[0]
        query = Q.Or(items)
        query.matcher_type = matcher
        return query

    rare, common = select_terms(parsed, doc_frequency, doc_count)
    phrases = phrase_queries(parsed)
    main = clauses(rare) + phrases
    if not main:  # only common words: score them all
        main, common = clauses(common), []
    if not main:
        return None
    # on a small index the words score into arrays (3x faster than whoosh's tree of union
    # matchers); the array matcher walks the whole range of entries, though, so on a large
    # index the tree is faster (105 vs 195 ms at 181k entries)
    matcher = Q.Or.ARRAY_MATCHER if doc_count <= LARGE_INDEX else Q.Or.DEFAULT_MATCHER
    query = either(main, matcher)
    if common:
        query = Q.AndMaybe(query, either(clauses(common), matcher))
    return query


def coordination(weights: list[float]) -> Any:
    """mask -> factor in (0, 1]: the share of the question's weight (each word's idf) that an
    entry holds, to the power COORD_POWER. BM25 sums what matches, so a passage that says
    "version" and "minimum" five times can beat the one sentence that names the asked-for
    platform; weighing by the words held puts the rare, telling words first."""
    total = sum(weights) or 1.0
    cache: dict[int, float] = {}

    def factor(mask: int) -> float:
        got = cache.get(mask)
        if got is None:
            held = sum(w for i, w in enumerate(weights) if mask >> i & 1)
            got = cache[mask] = (held / total) ** COORD_POWER if mask else 1.0
        return got

    return factor


class FastScorer:
    """BM25F exactly as whoosh's `weighting()` scores it, for the plain term queries
    `build_query` makes (an Or of field-boosted terms, optionally AndMaybe common words).

    whoosh scores a posting at a time through a tree of Python matchers, about 5 µs each:
    30 ms a question at 10k sources. Here each (field, term) posting list is read a block
    at a time and scored in one comprehension against the field lengths, decoded once per
    searcher, then summed into a dict; lists are cached for the searcher's life, so a word
    seen before costs a dict merge. Phrase queries still go through whoosh.
    """

    # scored postings kept across queries, per field and per word (about 100 bytes each):
    # past this both caches start over
    CACHE_POSTINGS = 1_500_000

    def __init__(self, searcher: Any):
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
        from whoosh.util.numeric import byte_to_length

        self.searcher = searcher
        self.leaves = [(s.reader(), offset) for s, offset in searcher.leaf_searchers()]
        self._lenfield, self._lencolumn = _lenfield, LENGTHS_COLUMN
        self._byte_len = [float(byte_to_length(b)) for b in range(256)]
        self._lengths: dict[str, list[float]] = {}
        self._cache: dict[tuple[str, str], dict[int, float]] = {}
        self._cached = 0
        self._totals: dict[str, dict[int, float]] = {}
        self._weighting = searcher.weighting
        self._paths: list[str] | None = None
        self._levels: bytearray | None = None
        self._kinds: list[str] | None = None
        self.first_part: dict[str, int] = {}  # path -> its first passage's entry
        self._entry_cache: dict[int, tuple[str, bool, str]] = {}
        self._fields: dict[int, dict[str, Any]] = {}
        self._kind_sets: dict[tuple[str, ...], set[int]] = {}
        self._eras: dict[int, int] | None = None

    def lengths(self, field: str) -> list[float]:
        """Every entry's length in `field`, as whoosh's scorer sees it (one byte, decoded)."""
        got = self._lengths.get(field)
        if got is None:
            got = []
            table = self._byte_len
            for reader, _ in self.leaves:
                count = reader.doc_count_all()
                perdoc = getattr(reader, "_perdoc", None)
                column = perdoc._cached_reader(self._lenfield(field), self._lencolumn) if perdoc is not None else None
                if column is None:
                    got.extend(float(reader.doc_field_length(d, field, 1) or 1) for d in range(count))
                else:
                    raw = _column_bytes(column, count)
                    got.extend(table[b] or 1.0 for b in raw)
            self._lengths[field] = got
        return got

    def _read(self, field: str, term: str) -> tuple[list[int], list[float]]:
        ids: list[int] = []
        weights: list[float] = []
        for reader, offset in self.leaves:
            try:
                m = reader.postings(field, term)
            except Exception:  # noqa: BLE001 - TermNotFound: the word is not in this segment
                continue
            deleted = reader.deleted_docs_set if reader.has_deletions() else None
            leaf = getattr(m, "child", m) if deleted else m
            if hasattr(leaf, "_read_ids") and hasattr(leaf, "_next_block"):
                # a block at a time: whoosh3's leaf matcher holds each block as two arrays
                while leaf.is_active():
                    leaf._read_ids()
                    leaf._read_weights()
                    bids, bw = leaf._ids, leaf._weights
                    if deleted:
                        pairs = [(d, w) for d, w in zip(bids, bw, strict=True) if d not in deleted]
                        ids.extend(d + offset for d, _ in pairs)
                        weights.extend(w for _, w in pairs)
                    else:
                        if offset:
                            ids.extend(d + offset for d in bids)
                        else:
                            ids.extend(bids)
                        weights.extend(bw)
                    leaf._next_block()
            else:
                while m.is_active():
                    ids.append(m.id() + offset)
                    weights.append(m.weight())
                    m.next()
        return ids, weights

    def term_scores(self, field: str, term: str) -> dict[int, float]:
        """entry -> BM25F score of one word in one field, times the field's boost."""
        key = (field, term)
        got = self._cache.get(key)
        if got is not None:
            return got
        ids, weights = self._read(field, term)
        got = {}
        if ids:
            w = self._weighting
            b = w._field_B.get(field, w.B)
            k1 = w.K1
            idf = self.searcher.idf(field, term) * FIELD_BOOSTS.get(field, 1.0)
            avg = self.searcher.avg_field_length(field) or 1
            lengths = self.lengths(field)
            # bm25(idf, tf, fl, avgfl, B, K1) from whoosh.scoring, inlined, with the boost
            c1, c2 = k1 * (1 - b), k1 * b / avg
            k = k1 + 1
            got = {d: idf * ((tf * k) / (tf + c1 + c2 * lengths[d])) for d, tf in zip(ids, weights, strict=True)}
        self._make_room()
        self._cache[key] = got
        self._cached += len(got)
        return got

    def _make_room(self) -> None:
        """Past CACHE_POSTINGS cached scores, both caches start again (they hold the same postings)."""
        if self._cached > self.CACHE_POSTINGS:
            self._cache.clear()
            self._totals.clear()
            self._cached = 0

    def term_total(self, term: str) -> dict[int, float]:
        """entry -> one word's boosted score summed over every field, as whoosh's Or sums it."""
        got = self._totals.get(term)
        if got is None:
            got = {}
            for fname in FIELD_BOOSTS:
                scores = self.term_scores(fname, term)
                if not got:
                    got = dict(scores)
                    continue
                get = got.get
                for d, s in scores.items():
                    got[d] = get(d, 0.0) + s
            self._make_room()
            self._totals[term] = got
            self._cached += len(got)
        return got

    def accumulate(self, terms: Iterable[str], into: dict[int, float] | None = None,
                   only: bool = False) -> dict[int, float]:
        """Sum the words' scores into entry -> score. With `only`, add to the entries already
        in `into` and no others (whoosh's AndMaybe)."""
        acc: dict[int, float] = {} if into is None else into
        for term in terms:
            scores = self.term_total(term)
            if not scores:
                continue
            if only:
                if len(acc) < len(scores):
                    hits = [(d, scores[d]) for d in acc if d in scores]
                else:
                    hits = [(d, s) for d, s in scores.items() if d in acc]
                for d, s in hits:
                    acc[d] += s
            elif not acc:
                acc.update(scores)
            else:
                get = acc.get
                for d, s in scores.items():
                    acc[d] = get(d, 0.0) + s
        return acc

    def entry(self, docnum: int) -> tuple[str, bool, str]:
        """(path, is the file's doc entry, kind) of one entry: from the tables `warm` builds,
        else from its stored fields (a one-shot search reads a few dozen, not every entry)."""
        if self._paths is not None:
            return self._paths[docnum], bool(self._levels[docnum]), self._kinds[docnum]  # type: ignore[index]
        got = self._entry_cache.get(docnum)
        if got is None:
            fields = self.fields(docnum)
            got = self._entry_cache[docnum] = (fields["path"], fields.get("level") == "doc", fields["kind"])
        return got

    def eras(self) -> dict[int, int]:
        """entry -> its release's era (0..10), for changelog passages only (see release_eras)."""
        if self._eras is None:
            self._eras = {d: n for n in range(11) for d in self._read("era", str(n))[0]}
        return self._eras

    def kind_entries(self, kinds: tuple[str, ...]) -> set[int]:
        got = self._kind_sets.get(kinds)
        if got is None:
            got = self._kind_sets[kinds] = {d for k in kinds for d in self._read("kind", k)[0]}
        return got

    def fields(self, docnum: int) -> dict[str, Any]:
        """An entry's stored fields, kept for later queries: whoosh decompresses each entry's
        text anew, a tenth of a millisecond, and the same pages answer many questions."""
        got = self._fields.get(docnum)
        if got is None:
            if len(self._fields) >= 4096:
                self._fields.clear()
            got = self._fields[docnum] = self.searcher.stored_fields(docnum)
        return got

    @property
    def warmed(self) -> bool:
        return self._paths is not None

    def warm(self) -> None:
        """Build what later queries would otherwise build on first use (about a second at
        10k sources): the entry tables, every field's lengths, the stored-fields file."""
        self.entries()
        self.eras()
        for fname in FIELD_BOOSTS:
            self.lengths(fname)
        if self.searcher.doc_count_all():
            self.searcher.stored_fields(0)

    def entries(self) -> tuple[list[str], bytearray, list[str]]:
        """Path, level (1 = doc entry) and kind of every entry, from the short `path`,
        `level` and `kind` posting lists rather than the stored fields (a pickle with the
        passage text for each)."""
        if self._paths is None:
            total = self.searcher.doc_count_all()
            paths = [""] * total
            kinds = [""] * total
            levels = bytearray(total)
            for d in self._read("level", "doc")[0]:
                levels[d] = 1
            first: dict[str, int] = {}
            for term in self.searcher.reader().lexicon("path"):
                text = term.decode("utf-8") if isinstance(term, bytes) else term
                for d in self._read("path", text)[0]:
                    paths[d] = text
                    if not levels[d] and text not in first:
                        first[text] = d
            for kind in KINDS:
                for d in self._read("kind", kind)[0]:
                    kinds[d] = kind
            self._levels, self._kinds, self.first_part = levels, kinds, first
            self._paths = paths  # last: entry() reads the tables once this is set
        return self._paths, self._levels, self._kinds  # type: ignore[return-value]


def _column_bytes(column: Any, count: int) -> bytes:
    """A one-byte-per-entry lengths column as bytes: one read instead of a call per entry."""
    dbfile, base, stored = getattr(column, "_dbfile", None), getattr(column, "_basepos", None), getattr(column, "_count", None)
    if dbfile is None or base is None or stored is None or getattr(column, "_fixedlen", 1) != 1:
        return bytes(column[d] for d in range(count))
    raw = bytes(dbfile.get(base, min(stored, count)))
    return raw + bytes(count - len(raw))  # entries past the column's end have the default, 0


class Engine:
    """An open index and searcher, reused across queries by long-lived callers (MCP, daemon).

    `fresh_within` lets a server skip the directory walk when it checked less than that
    many seconds ago and log.md has not changed (every compile appends to it).
    """

    def __init__(self, ws: Workspace, *, fresh_within: float = 0.0):
        self.ws = ws
        self.fresh_within = fresh_within
        self._watch: Any = None  # the background checker's thread, once started
        self._stop: Any = None
        self._checked = 0.0
        self._log_stat: tuple[int, int] | None = None
        self._ix: Any = None
        self._searcher: Any = None
        self._priors: dict[str, float] = {}
        self._docs: dict[str, Any] = {}
        self._fast: FastScorer | None = None

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
        self._searcher = self._ix = self._fast = None

    def _fast_scorer(self) -> FastScorer:
        # one per open searcher: its caches hold that index generation's postings and lengths
        if self._fast is None or self._fast.searcher is not self._searcher:
            self._fast = FastScorer(self._searcher)
        return self._fast

    def watch(self, every: float = 2.0, lock: Any = None) -> None:
        """Look for changed files in a background thread every `every` seconds, so no query
        waits on the directory walk (a fifth of a second at 10k sources). Queries then see a
        change within `every` seconds, or at once when a compile already updated the index.

        When the index changed, the thread also opens and warms the new searcher itself and
        swaps it in holding `lock` (the lock queries hold), so no query pays for the reopen."""
        import threading

        if self._watch is not None:
            return
        self._stop = threading.Event()
        guard = lock if lock is not None else contextlib.nullcontext()

        def loop() -> None:
            while not self._stop.wait(every):
                try:
                    update_index(self.ws, wait=0.0)
                    if lock is not None and self._stale():
                        state = self._open(warm=True)  # its own reader: safe beside queries
                        with guard:
                            self._install(state)
                except Exception as exc:  # noqa: BLE001 - derived data: log, keep serving
                    log.warning("search index not updated: %s", exc)

        self._watch = threading.Thread(target=loop, name="wikimem-index-watch", daemon=True)
        self._watch.start()

    @property
    def ready(self) -> bool:
        """Watched and warmed: a query only checks the index is current, then scores."""
        fast = self._fast
        return (self._watch is not None and fast is not None and fast.warmed
                and fast.searcher is self._searcher)

    def _stale(self) -> bool:
        """The open searcher is missing, behind the index, or was opened without warming."""
        searcher, fast = self._searcher, self._fast
        if searcher is None or fast is None or fast.searcher is not searcher or not fast.warmed:
            return True
        try:
            return not searcher.up_to_date()
        except Exception:  # noqa: BLE001 - the index folder was swapped: reopen
            return True

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.close()

    def _log_signature(self) -> tuple[int, int] | None:
        try:
            st = (self.ws.wiki / "log.md").stat()
            return (st.st_size, st.st_mtime_ns)
        except OSError:
            return None

    def refresh(self, force: bool = False) -> None:
        if self._watch is not None and self._searcher is not None and not force:
            # the watcher (or a compile, or another process) keeps the index current
            if not self._searcher.up_to_date():
                self._reopen()
            return
        now = time.monotonic()
        sig = self._log_signature()
        if (not force and self._searcher is not None and self.fresh_within > 0
                and now - self._checked < self.fresh_within and sig == self._log_stat):
            return
        report = update_index(self.ws)
        self._checked, self._log_stat = now, sig
        # another process (or another Engine) may have updated the index since we opened it
        if self._searcher is None or report.changed or not self._searcher.up_to_date():
            self._reopen()

    def _reopen(self, warm: bool = False) -> None:
        self._install(self._open(warm))

    def _open(self, warm: bool) -> tuple[Any, Any, FastScorer, dict[str, float], dict[str, Any]]:
        """The index as it is now: (index, searcher, scorer, priors, docs), warmed if asked."""
        from whoosh import index as windex

        folder = index_dir(self.ws)
        try:
            ix = windex.open_dir(str(folder))
        except Exception:  # noqa: BLE001 - missing or swapped away mid-rebuild: bring it back once
            update_index(self.ws)
            ix = windex.open_dir(str(folder))
        searcher = ix.searcher(weighting=weighting())
        fast = FastScorer(searcher)
        if warm:
            fast.warm()
        manifest = _read_manifest(folder, cached=True) or {}
        return ix, searcher, fast, manifest.get("priors", {}), manifest.get("docs", {})

    def _install(self, state: tuple[Any, Any, FastScorer, dict[str, float], dict[str, Any]]) -> None:
        old = self._searcher
        self._ix, self._searcher, self._fast, self._priors, self._docs = state
        if old is not None:
            old.close()

    def warm(self) -> None:
        """Open the index and build the scorer's tables now (servers: before the first query)."""
        self.refresh()
        self._fast_scorer().warm()

    def _first_passage(self, path: str) -> dict[str, Any]:
        """The first passage of a file that matched by its title alone. Read through the file's
        own short posting list: a query on `level` would walk every entry of the index."""
        reader = self._searcher.reader()
        try:
            docnums = list(reader.postings("path", path).all_ids())
        except Exception:  # noqa: BLE001 - whoosh raises TermNotFound for a path it lacks
            return {}
        for docnum in docnums:
            fields = reader.stored_fields(docnum)
            if fields.get("level") == "part":
                return fields
        return {}

    def _passage_at(self, path: str, line: int) -> dict[str, Any]:
        """The stored passage of `path` that holds file line `line` (else its first)."""
        reader = self._searcher.reader()
        try:
            docnums = list(reader.postings("path", path).all_ids())
        except Exception:  # noqa: BLE001 - TermNotFound: not indexed (skipped, or gone)
            return {}
        best: dict[str, Any] = {}
        for docnum in docnums:
            fields = reader.stored_fields(docnum)
            if fields.get("level") != "part":
                continue
            lines = fields.get("lines") or []
            if not best or (lines and lines[0][1] <= line):
                best = fields
        return best

    def passages(self, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Passage]:
        from whoosh import query as Q

        if kinds:
            bad = [k for k in kinds if k not in KINDS]
            if bad:
                from .errors import UsageError

                raise UsageError(f"unknown kind {', '.join(bad)}; valid: {', '.join(KINDS)}")
        parsed = parse_query(query)
        if not parsed.terms and not parsed.phrases or limit <= 0:
            return []
        self.refresh()
        searcher = self._searcher
        recency = RECENCY_CURRENT if parsed.current else RECENCY
        want = max(limit * 8, 60)
        parts: dict[str, tuple[float, int]] = {}  # path -> (score, entry) of its best passage
        heads: dict[str, float] = {}
        kind_of: dict[str, str] = {}
        # the ranking whoosh gives build_query's query, with the words scored by FastScorer
        # and only the quoted phrases (if any) by whoosh: it needs their word positions
        fast = self._fast_scorer()
        rare, common = select_terms(parsed, searcher.doc_frequency, searcher.doc_count())
        phrases = phrase_queries(parsed)
        if not rare and not phrases:
            rare, common = common, []
        if not rare and not phrases:
            return []
        scores = fast.accumulate(rare)
        if phrases:
            found = searcher.search(phrases[0] if len(phrases) == 1 else Q.Or(phrases),
                                    limit=None, optimize=False)
            for score, docnum in found.top_n:
                scores[docnum] = scores.get(docnum, 0.0) + score
        if common:
            fast.accumulate(common, into=scores, only=True)
        if kinds:
            allowed = fast.kind_entries(kinds)
            scores = {d: sc for d, sc in scores.items() if d in allowed}
        entry = fast.entry
        # which of the question's words an entry holds, as a bit mask, and what each word
        # weighs (its idf): a passage that holds the rare words of the question beats one
        # that repeats its common words (see coordination)
        used = [*rare, *common]
        totals = [fast.term_total(t) for t in used]
        count = searcher.doc_count_all()
        weights = [math.log((count + 1) / (searcher.doc_frequency("body", t) + 1)) + 1 for t in used]
        masks: dict[int, int] = {}

        def mask(docnum: int) -> int:
            got = masks.get(docnum)
            if got is None:
                got = masks[docnum] = sum(1 << i for i, tot in enumerate(totals) if docnum in tot)
            return got

        head_mask: dict[str, int] = {}
        part_cands: dict[str, list[tuple[float, int]]] = {}
        while True:
            # best first, ties to the lower entry number, as whoosh's collector orders them
            top = heapq.nlargest(want, zip(scores.values(), map(operator.neg, scores), strict=True))
            for score, neg in top:
                docnum = -neg
                path, is_doc, kind = entry(docnum)
                kind_of[path] = kind
                if is_doc:
                    heads[path] = score
                    head_mask[path] = mask(docnum)
                else:
                    part_cands.setdefault(path, []).append((score, docnum))
            # a long document can fill the window with its own passages; widen until enough files
            if len(kind_of) >= limit or len(top) < want or want >= 5000:
                break
            want *= 4
            heads.clear()
            head_mask.clear()
            part_cands.clear()
        coord = coordination(weights)
        eras = fast.eras()
        for path, cands in part_cands.items():
            hm = head_mask.get(path, 0)
            # in a changelog, a newer release's entry beats an older one's (strongly when the
            # question asks what holds now)
            parts[path] = max(((sc * coord(mask(d) | hm) * (1 + recency * eras.get(d, 10) / 10) / (1 + recency), d)
                               for sc, d in cands), key=lambda x: (x[0], -x[1]))

        def final(path: str) -> float:
            if path in parts:
                base = parts[path][0] + heads.get(path, 0.0) * coord(head_mask.get(path, 0) | mask(parts[path][1]))
            else:
                base = heads.get(path, 0.0) * coord(head_mask.get(path, 0))
            return base * KIND_PRIOR.get(kind_of[path], 1.0) * (1 + recency * self._priors.get(path, 0.0))

        by_path = {p: final(p) for p in kind_of}
        if DUPLICATE_DEMOTE < 1:
            # a source page and the raw file it was compiled from say the same thing: keep the
            # better of the two where it ranks and move the other down, so other documents
            # get the next places
            for page in list(by_path):
                raw = (self._docs.get(page) or {}).get("source")
                if raw in by_path:
                    lower = raw if by_path[raw] <= by_path[page] else page
                    by_path[lower] *= DUPLICATE_DEMOTE
        ranked = with_current_sources(
            sorted(((sc, p) for p, sc in by_path.items()), key=lambda sp: (-sp[0], sp[1])), self._docs, limit)
        stems = set(parsed.terms) | {t for p in parsed.phrases for t in p}
        term_weights = dict(zip(used, weights, strict=True))
        out = []
        for score, path, at in ranked:
            if at is not None:
                fields = self._passage_at(path, at)
                kind_of.setdefault(path, str((self._docs.get(path) or {}).get("kind") or "raw"))
            elif kind_of[path] == "fact" and (parsed.current or not _NUMBER.search(query)):
                # what a timeline says is current is its first passage, whatever else matched
                # (a question that names no release asks about now)
                fields = fast.fields(fast.first_part[path]) if path in fast.first_part else self._first_passage(path)
            elif path in parts:
                fields = fast.fields(parts[path][1])
            elif path in fast.first_part:
                fields = fast.fields(fast.first_part[path])
            else:
                fields = self._first_passage(path)
            snippet, line = make_snippet(fields.get("body") or "", stems, fields.get("lines") or [], at=at,
                                         weights=term_weights)
            heading = fields.get("headings") or ""
            title = str((self._docs.get(path) or {}).get("title") or path)
            out.append(Passage(
                Hit(path, title, kind_of[path], score, snippet or heading or title),
                line, fields.get("anchor") or "L", heading, fields.get("body") or "",
            ))
        return out


def with_current_sources(ranked: list[tuple[float, str]], docs: dict[str, Any],
                         limit: int) -> list[tuple[float, str, int | None]]:
    """The top `limit` of (score, path), where a fact page that ranks well brings the passage
    stating its current value right after it: the page answers "what is it now", the source
    passage is the evidence an agent quotes. (score, path, line): line is set for a passage
    brought this way."""
    if not ranked:
        return []
    best = ranked[0][0]
    out: list[tuple[float, str, int | None]] = []
    placed: set[str] = set()
    for score, path in ranked:
        if len(out) >= limit:
            break
        if path in placed:
            continue
        out.append((score, path, None))
        placed.add(path)
        current = (docs.get(path) or {}).get("current") if path.startswith("wiki/facts/") else None
        if current and score >= 0.75 * best and len(out) < limit:
            raw, _, anchor = str(current).partition("#L")
            if raw not in placed and raw in docs:
                out.append((score, raw, int(anchor) if anchor.isdigit() else 1))
                placed.add(raw)
    return out


# the analyzer's own token pattern (whoosh.analysis.tokenizers.default_pattern): running the
# whole analyzer chain over each result's passage was a third of a warm query; a word's stem
# is looked up once and kept
_TOKEN = re.compile(r"[\w\*]+(\.?[\w\*]+)*")
_STEMS: dict[str, str] = {}


_STEP: Any = None


def _stem(word: str) -> str:
    """What the analyzer makes of one token with removestops=False: lower case, and stemmed
    unless it is a stop word (those stay as they are)."""
    global _STEP
    if _STEP is None:
        from whoosh.analysis import StemFilter, StopFilter

        items = analyzer().items
        stops: frozenset[str] = next((f.stops for f in items if isinstance(f, StopFilter)), frozenset())
        stemmer = next(f for f in items if isinstance(f, StemFilter))
        _STEP = (stops, stemmer.ignore, stemmer.stemfn)
    stops, ignore, stemfn = _STEP
    low = word.lower()
    stem = low if low in stops or low in ignore else stemfn(low)
    if len(_STEMS) > 200_000:
        _STEMS.clear()
    _STEMS[word] = stem
    return stem


SNIPPET_MAX = 360  # characters: one or two whole sentences; a longer one is cut around its hits
# where a sentence ends: after . ! ? (and a closing quote or bracket) before a capital, a digit or
# markup; at a blank line; before a list item, table row, heading or directive line
_SENTENCE_BREAK = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]`*]))(?:[ \t]+\n?|\n)[ \t]*(?=[\"'`(\[*]?[A-Z0-9])"
    r"|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:[-*+\u2022|>#]|\d+[.)]|\.\. |:\w+:)[ \t])"
    r"|\n(?=[^\n]* \| )"  # table rows
)
_REFERS_BACK = re.compile(r"(?:It|Its|This|That|These|Those|They|Their|Such|Here|Both|The latter|Then|So)\b")
_VALUE_WORDS = frozenset("default minimum maximum version limit size port number timeout length much many long".split())


def sentence_spans(body: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line-like item of a passage, in order, stripped."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_BREAK.finditer(body):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(body):
        spans.append((pos, len(body)))
    out = []
    for a, b in spans:
        seg = body[a:b]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((a + lead, a + trail))
    return out


def _line_at(lines: list[list[int]] | list[tuple[int, int]], offset: int) -> int | None:
    line = None
    for at, file_line in lines:
        if at <= offset:
            line = file_line
        else:
            break
    if line is None and lines:
        line = lines[0][1]
    return line


def make_snippet(body: str, stems: set[str], lines: list[list[int]], width: int = SNIPPET_MAX,
                 at: int | None = None, weights: dict[str, float] | None = None) -> tuple[str, int | None]:
    """The sentence (or two) of `body` that holds the most of the question's words, whole,
    and the file line it starts on. `weights` gives each stem's weight (default 1); with `at`,
    the sentence at that file line. A sentence longer than `width` is cut around its hits."""
    if not body:
        return "", None
    spans = sentence_spans(body) or [(0, len(body))]
    hits: list[tuple[int, str]] = []
    for m in _TOKEN.finditer(body):
        word = m.group()
        stem = _STEMS.get(word)
        if stem is None:
            stem = _stem(word)
        if stem in stems:
            hits.append((m.start(), stem))
        elif "_" in word or "." in word:
            for part in identifier_parts(word):
                stem = _STEMS.get(part) or _stem(part)
                if stem in stems:
                    hits.append((m.start(), stem))
    weigh = (lambda st: weights.get(st, 1.0)) if weights else (lambda st: 1.0)
    wants_value = bool(stems & _value_stems())  # asks for a default, a minimum, a size...

    def held(i: int) -> set[str]:
        a, b = spans[i]
        return {st for p, st in hits if a <= p < b}

    if at is not None:
        offset = next((o for o, n in reversed(lines) if n <= at), 0)
        best = next((i for i, (a, b) in enumerate(spans) if b > offset), 0)
    elif hits:
        def score(i: int) -> tuple[float, int]:
            got = sum(weigh(st) for st in held(i))
            a, b = spans[i]
            if wants_value and got and any(ch.isdigit() for ch in body[a:b]):
                got += 0.5  # a question after a value: the sentence that states one
            return got, -i

        best = max(range(len(spans)), key=score)
    else:
        best = 0
    first = last = best
    words = held(best)
    if at is None and first > 0 and _REFERS_BACK.match(body[spans[first][0]:spans[first][0] + 12]):
        a, _ = spans[first - 1]
        if spans[last][1] - a <= width:
            first -= 1  # "It defaults to 5.": the sentence it refers back to comes first
    if last + 1 < len(spans) and hits and held(last + 1) - words and spans[last + 1][1] - spans[first][0] <= width:
        last += 1  # the next sentence holds more of the question
    start, end = spans[first][0], spans[last][1]
    text = " ".join(body[start:end].split())
    asked = stems & _value_stems()
    missing = asked - {st for i in range(first, last + 1) for st in held(i)}
    if at is None and missing and len(text) <= width and " | " not in text:  # a table row stands alone
        # "how long by default?": the passage's sentence that states the value, when it follows
        # close behind ("... in the future. Default: timedelta(days=31)")
        joined = last
        near = [i for i in range(last + 1, min(len(spans), last + 6)) if held(i) & missing]
        # the one that states a figure first ("Default: ``timedelta(days=31)``"), then the rest
        near.sort(key=lambda i: not any(ch.isdigit() for ch in body[spans[i][0]:spans[i][1]]))
        for i in sorted(near[:1]) + [i for i in near[1:]]:
            a, b = spans[i]
            if held(i) & missing and len(text) + (b - a) <= width + 120:
                text += (" " if i == joined + 1 else " … ") + " ".join(body[a:b].split())
                missing -= held(i)
                joined = i
                if not missing:
                    break
        if joined > last:
            return text, _line_at(lines, start)
    if len(text) > width:
        # one long sentence (a table row, a list of items): the stretch around its first hits
        inside = [p for p, _ in hits if start <= p < end]
        anchor = inside[0] if inside else start
        cut = max(start, anchor - width // 3)
        if cut > start:
            space = body.find(" ", cut, anchor + 1)
            cut = space + 1 if space >= 0 else cut
        text = " ".join(body[cut:end].split())
        if len(text) > width:
            text = text[:width].rsplit(" ", 1)[0] + "…"
        if cut > start:
            text = "…" + text
        start = cut
    return text, _line_at(lines, start)


_VALUE_STEMS: set[str] = set()


def _value_stems() -> set[str]:
    if not _VALUE_STEMS:
        _VALUE_STEMS.update(_stem(w) for w in _VALUE_WORDS)
    return _VALUE_STEMS


_ENGINES: dict[Path, Engine] = {}


def engine(ws: Workspace, *, fresh_within: float = 0.0) -> Engine:
    """The engine for a workspace, kept for the life of the process."""
    eng = _ENGINES.get(ws.root)
    if eng is None:
        eng = _ENGINES[ws.root] = Engine(ws, fresh_within=fresh_within)
    eng.fresh_within = fresh_within
    return eng


def search(ws: Workspace, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Hit]:
    """Rank wiki pages and raw sources for a question or keywords; brings the index up to date first."""
    return [p.hit for p in engine(ws).passages(query, limit, kinds)]


def search_passages(ws: Workspace, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Passage]:
    """As `search`, with the line and passage text that query answers and context packs cite."""
    return engine(ws).passages(query, limit, kinds)


@contextlib.contextmanager
def opened(ws: Workspace, *, fresh_within: float = 0.0) -> Iterator[Engine]:
    eng = Engine(ws, fresh_within=fresh_within)
    try:
        yield eng
    finally:
        eng.close()

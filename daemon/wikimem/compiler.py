"""The compile pipeline: scan raw/, plan from state.db, run a backend, guard and write, then
regenerate index.md and append log.md.

Data flow (docs/compile.md): raw/ -> scan -> plan() (hash vs state; reads, never writes) ->
apply(): backend.compile() -> page edits -> PageWriter (paths, human edits, front matter,
journal, atomic write) -> state.db, timelines, index.md, log.md (history.finish).
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import posixpath
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import (
    adopt,
    history,
    index_page,
    log_page,
    merging,
    ownership,
    raw_tree,
    templating,
    timelines,
    wiki_tree,
)
from .backends import UNHEARD, Activity, Backend, Batch, PageEdit, SourceOutcome, SourceRef, create
from .config import Settings
from .errors import PathEscape, UnsafePath
from .naming import undecodable
from .pages import (
    FrontMatterError,
    Page,
    certify,
    content_hash,
    guard_page,
    inert_added,
    loads_page,
    lost_line,
    page_owner,
    part_of,
    relative_link,
    slugify,
    stamp,
)
from .raw_tree import RawFile
from .sources import SUPPORTED_SUFFIXES, Document, load_source, outline, source_suffix
from .state import RENDER_PENDING, SourceRow, State, WriteJournal, is_corrupt, set_aside
from .workspace import (
    Workspace,
    atomic_write,
    confine_lexically,
    file_sha256,
    open_checked,
    owned,
    read_owned,
    remove_empty_folders,
    remove_owned,
    remove_stale_temp_files,
    writer_lock,
)

log = logging.getLogger("wikimem.compile")
Progress = Callable[[str, int, int], None]
Watch = Callable[[Activity], None]  # a model backend's progress: requests in flight, tokens, time left


@dataclass
class CompileReport:
    backend: str
    noop: bool = False
    compiled: list[str] = field(default_factory=list)
    unchanged: int = 0
    renamed: list[tuple[str, str]] = field(default_factory=list)
    removed_sources: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    # commands and edits refused because they would change what a person wrote (or break
    # another guard): (source or page, reason)
    refused: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ignored: dict[str, Any] = field(default_factory=lambda: {"count": 0, "by_rule": {}})
    seconds: float = 0.0
    index: dict[str, Any] = field(default_factory=dict)  # what bringing the search index up to date did
    # what a model backend's requests came to: mode, requests, rejected (429/529), max in flight,
    # rounds and batches (--batch), turns, tokens, cost; empty for the offline backend
    traffic: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["renamed"] = [{"from": a, "to": b} for a, b in self.renamed]
        data["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        data["failed"] = [{"path": p, "reason": r} for p, r in self.failed]
        data["refused"] = [{"path": p, "reason": r} for p, r in self.refused]
        data["seconds"] = round(self.seconds, 3)
        return data


class _Files(Mapping[str, Path]):
    """Batch.files without building a Path for each of 10k sources up front."""

    def __init__(self, current: dict[str, RawFile]):
        self._current = current

    def __getitem__(self, path: str) -> Path:
        return self._current[path].file

    def __contains__(self, path: object) -> bool:
        return path in self._current

    def __iter__(self) -> Iterator[str]:
        return iter(self._current)

    def __len__(self) -> int:
        return len(self._current)


def assign_page(path: str, taken: set[str]) -> str:
    """sources/<slug>.md for a raw path, unique among `taken`, never a catalog's name.

    raw/index.md would be sources/index.md, the sources catalog (written by code, so the
    page would be refused): it becomes sources/index-md.md.
    """
    inner = path.removeprefix("raw/")
    stem, ext = posixpath.splitext(inner)
    for candidate in (slugify(stem), slugify(inner), slugify(f"{stem}-{ext}")):
        page = f"sources/{candidate}.md"
        if page not in taken and not index_page.is_catalog(page):
            return page
    base = slugify(stem)
    if index_page.is_catalog(f"sources/{base}.md"):
        base += "-page"  # index-2 and the like name catalogs too
    n = 2
    while f"sources/{base}-{n}.md" in taken:
        n += 1
    return f"sources/{base}-{n}.md"



def rebuild_state(ws: Workspace, state: State, current: dict[str, RawFile]) -> int:
    """After .wikimem/ was deleted (a fresh clone) or state.db set aside as damaged: read the
    pages back. A page is recorded as wikimem's when it certifies itself (pages.page_owner);
    a source page's source is marked compiled when the file in raw/ still has the page's
    `source_sha256`, whoever's the page is, so nothing up to date is compiled again. A page a
    person edited is not recorded, so the next compile keeps it (and proposes its own version
    beside it) as it would have with state.db.

    Pages written before wikimem stamped its pages carry no `wikimem:` line: in a wiki where
    no page carries one, every page is taken as wikimem's, as it was before; in a wiki where
    some do, one that does not is a person's."""
    read: list[tuple[str, str, bytes, Page | None]] = []
    for folder in ("sources", "concepts"):
        for page_file, rel in _pages_under(ws, folder):
            try:
                data = page_file.read_bytes()
            except OSError:
                continue
            try:
                page: Page | None = loads_page(rel, data.decode("utf-8", "replace"))
            except FrontMatterError:
                page = None
            read.append((folder, rel, data, page))
    owners = {rel: page_owner(data) for _, rel, data, _ in read}
    stamped = any(owner.stamped for owner in owners.values())

    def wikimems(rel: str) -> bool:
        return owners[rel].wikimems if stamped else True

    restored = 0
    with state.transaction():
        state.rebuilt()
        for folder, rel, data, page in read:
            if page is None:
                continue
            if folder == "concepts":
                if wikimems(rel):
                    state.put_page(rel, content_hash(data), "concept", None)
                continue
            if page.kind != "source" or not page.sources:
                continue
            raw = current.get(page.sources[0])
            if raw is None:
                continue  # its source is gone from raw/: no record, as before state was lost
            if wikimems(rel):
                # a part of a long source's page: wikimem's, its source's, never the source's page
                state.put_page(rel, content_hash(data), "part" if part_of(page.meta) else "source", raw.path)
            sha = str(page.meta.get("source_sha256") or "")
            if part_of(page.meta) or not sha or _sha_or_none(raw.file) != sha:
                continue  # its source changed since: compiled again, and the page with it
            # hashed now, but its times not read at a known moment: judged by content once more
            state.put_source(SourceRow(raw.path, sha, raw.size, raw.mtime_ns, rel, "compiled", None, 0, (), raw.ctime_ns))
            restored += 1
    return restored


def _pages_under(ws: Workspace, folder: str) -> list[tuple[Path, str]]:
    """The pages of one folder of wiki/ (wiki_tree's rule), catalogs left out, in path order."""
    found = [(Path(e.path), rel) for e, rel in wiki_tree.pages(str(ws.wiki / folder), folder)
             if not index_page.is_catalog(rel)]
    return sorted(found, key=lambda item: item[1].split("/"))


def _foreign_pages(ws: Workspace, recorded: Mapping[str, Any],
                   listed: dict[str, set[str]]) -> dict[str, tuple[list[str], str]]:
    """Source pages on disk that state.db has no record of, with the sources they name and the
    source hash they record."""
    out: dict[str, tuple[list[str], str]] = {}
    for rel in _files_in(ws.wiki, "sources", listed):
        if rel in recorded or not rel.endswith(".md") or index_page.is_catalog(rel) or undecodable(rel):
            continue
        try:
            page = loads_page(rel, read_owned(ws.wiki, ws.wiki / rel).decode("utf-8", "replace"))
            out[rel] = (page.sources, str(page.meta.get("source_sha256") or ""))
        except (OSError, FrontMatterError, PathEscape):
            out[rel] = ([], "")
    return out


def _persons_page(ws: Workspace, rel: str, recorded: Mapping[str, tuple[str, str, str | None]]) -> bool:
    try:
        data = (ws.wiki / rel).read_bytes()
    except OSError:
        return False
    return ownership.persons_page(data, recorded.get(rel))


def _sha_or_none(file: Path) -> str | None:
    """A raw file's hash, or None when it went away (or became unreadable) since the scan."""
    try:
        return file_sha256(file)
    except OSError:
        return None


def compile_workspace(
    ws: Workspace,
    settings: Settings,
    *,
    backend_name: str | None = None,
    rebuild: bool = False,
    progress: Progress | None = None,
    wait: float = 0.0,
    give_up_after: int | None = None,
    activity: Watch | None = None,
) -> CompileReport:
    """Compile raw/ into wiki/ under the writer lock. The one entry point for CLI, daemon and MCP.

    give_up_after=N (the daemon): a source that failed N times with the same content is left
    alone until it changes, so a broken file does not cost a retry (or tokens) on every batch.
    activity: called now and then by a model backend with how its compile is going.
    """
    with writer_lock(ws, wait=wait, holder="wikimem compile"), _fewer_collections():
        name = backend_name or settings.backend
        seeding = _Seeding(ws, int(settings.max_source_mb * 1_000_000))
        try:
            try:
                report = _compile_locked(ws, settings, name, rebuild, progress, give_up_after, seeding, activity)
            except sqlite3.DatabaseError as exc:
                if not is_corrupt(exc):
                    raise
                # damage the opening checks could not see (a page in the middle of the file): state
                # is derived, so set it aside and compile once more from the pages, instead of
                # failing the same way on every run (the daemon retries)
                log.debug("state.db damaged mid-compile", exc_info=True)
                seeding.discard()
                moved = set_aside(ws.state_db)
                report = _compile_locked(ws, settings, name, rebuild, progress, give_up_after, seeding, activity)
                report.warnings.insert(0, f"state.db was unreadable ({exc}); moved it to {moved.name} and "
                                          "rebuilt it from the pages")
            _make_searchable(ws, report, seeding.seed)
        finally:
            seeding.discard()
        return report


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector, set for one compile in a process of its own. A first
    compile makes millions of objects, and docutils' trees (each node points at its parent) are
    freed by the collector only; at the default thresholds (700, 10, 10) it scanned the young
    objects every 700 allocations and every module loaded at each full pass: about a twentieth
    of a first compile's CPU (the Sphinx trees, the 187 corpus sources, alternating runs), a
    seventh of a worker's. What lives before the compile is frozen out of the scans and
    the young generation holds 50,000 objects; the workers and the search seed, forked during
    the compile, inherit both. Left as it is in a process with other threads (the daemon)."""
    if threading.active_count() > 1:
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _new_page_text(content: str, writer: str = "wikimem") -> str:
    """What PageWriter writes for a page rendered as `content` where no file is (PageWriter.apply)."""
    return stamp(certify(guard_page(content), writer), None)


class _Seeding:
    """The search index built beside the compile, listening to the backend (backends.base.Listener):
    when the compile will build the index from nothing, the index of raw/ is started in another
    process once the backend has read every source (search.start_seed), and the pages the
    backend renders are handed to it as they come; _make_searchable finishes it with the pages."""

    def __init__(self, ws: Workspace, max_bytes: int):
        self.ws = ws
        self.max_bytes = max_bytes
        self.files: dict[str, tuple[int, ...]] = {}  # raw/ as the compile's scan found it (size, mtime, ctime)
        self.seed: Any = None
        self.writer = "wikimem"  # what the compile's pages say wrote them (PageWriter.writer)

    def reading(self) -> None:
        """The backend's workers are reading the sources and this process waits: it loads
        search's modules and compiles index.md's template now, not with a core idle once the
        workers are done (read), or at the end, when nothing else is left to do."""
        try:
            templating.warm(self.ws.root, ["index.md.j2"])  # rendered once the pages are written
        except Exception:  # noqa: BLE001 - compiled when index.md is rendered, which says why
            log.debug("index.md's template not compiled", exc_info=True)
        if self.seed is not None or not self.files or (self.ws.state_dir / "search" / "manifest.json").exists():
            return  # no seed, or an index to update instead (search.start_seed)
        try:
            from . import search

            search.ready_seed()
        except Exception:  # noqa: BLE001 - derived data: read() tries again and says why
            log.debug("search seed not prepared", exc_info=True)

    def read(self, outlines: dict[str, dict[str, Any]]) -> None:
        """The backend has read every source: the seed starts indexing raw/."""
        if self.seed is not None or not self.files:
            return
        try:
            from . import search
        except ImportError:  # a build without search
            return
        try:
            self.seed = search.start_seed(self.ws, self.files, outlines, self.max_bytes,
                                          functools.partial(_new_page_text, writer=self.writer), _catalog_about)
        except Exception:  # noqa: BLE001 - derived data: the index is then built after the pages
            log.debug("search seed not started", exc_info=True)

    def rendered(self, edits: Sequence[PageEdit]) -> None:
        """Pages the backend has rendered, for the seed to index while it renders
        more: those that will be new files, which it indexes as PageWriter writes a new file
        (_new_page_text; it keeps only those whose file then holds that text). A page already
        on disk is weighed against it by PageWriter, and indexed once written."""
        if self.seed is None:
            return
        pages = [("wiki/" + e.path, e.content) for e in edits
                 if e.content is not None and posixpath.normpath(e.path) == e.path and not e.path.startswith(("/", "."))
                 and not (self.ws.wiki / e.path).exists()]
        try:
            self.seed.offer(pages)
        except Exception:  # noqa: BLE001 - derived data: the pages are indexed once written
            log.debug("pages not offered to the search seed", exc_info=True)

    def made(self, rel: str, content: str, writer: str) -> str | None:
        """The text PageWriter writes for a new page `rel` rendered as `content` (_new_page_text),
        when the seed made it already from the page offered (rendered): None otherwise."""
        if self.seed is None or writer != self.writer:
            return None
        try:
            return self.seed.written_text("wiki/" + rel, content)
        except Exception:  # noqa: BLE001 - derived: the writer makes the text itself
            log.debug("page texts not read back from the search seed", exc_info=True)
            return None

    def catalog(self, written: Iterable[tuple[str, str]], state: State) -> None:
        """The catalog rows (index_page.collect's) of the pages just written, (page, hash of its
        bytes) as PageWriter journalled them, that hold the text the seed worked them out of
        (_catalog_about), stored before index.md is regenerated: it finds them as it finds a
        page unchanged since it was last read, where it would read and parse every page of a
        first compile again (50 ms for 187 sources, on the compile's core; the seed works them
        out while it waits for pages)."""
        if self.seed is None:
            return
        try:
            abouts = self.seed.abouts()
            rows: dict[str, tuple[int, int, str, str]] = {}
            for rel, digest in written if abouts else ():
                got = abouts.get("wiki/" + rel)
                if isinstance(got, list) and len(got) == 3 and got[0] == digest:
                    st = os.lstat(self.ws.wiki / rel)
                    rows[rel] = (st.st_mtime_ns, st.st_size, str(got[1]), str(got[2]))
            if rows:
                state.add_catalog(rows)
        except Exception:  # noqa: BLE001 - derived: index.md's regeneration reads the pages instead
            log.debug("catalog rows of the search seed not taken", exc_info=True)

    def spare(self) -> bool:
        """Whether the seed leaves a core spare: it waits for pages, or there is none."""
        seed = self.seed
        return seed is None or seed.waits()

    def all_rendered(self) -> None:
        """The backend has rendered every page: the seed writes its segment of those it took
        while the compile writes them."""
        self._tell("close", "offers to the search seed not closed")

    def written(self) -> None:
        """The backend's pages are written: the seed keeps what it indexed of those it was offered."""
        self._tell("share_offered", "offered pages not shared with the search seed")

    def _tell(self, method: str, failed: str) -> None:
        if self.seed is None:
            return
        try:
            getattr(self.seed, method)()
        except Exception:  # noqa: BLE001 - derived data: the update of the index shares the pages
            log.debug(failed, exc_info=True)

    def discard(self) -> None:
        if self.seed is not None:
            self.seed.discard()
            self.seed = None


def _catalog_about(path: str, text: str) -> list[str] | None:
    """What index.md's regeneration reads of the page `path` (wiki/...) written as `text`
    (index_page.catalog_row), with the text's hash: for the search seed to work out of the pages
    it is offered (_Seeding.catalog)."""
    row = index_page.catalog_row(path.removeprefix("wiki/"), text)
    return None if row is None else [content_hash(text), *row]


def _make_searchable(ws: Workspace, report: CompileReport, seed: Any = None) -> None:
    """Bring the search index up to date with what this compile changed, so the first search
    after it never builds one: only the files the compile touched (no walk), or the whole
    index when there is none yet. A compile that changed nothing leaves the index alone (the
    next search still notices a person's edits). The index is derived: a failure here is a
    warning, never a failed compile."""
    started = time.perf_counter()
    touched = [*report.compiled, *report.removed_sources, *(p for p, _ in report.skipped),
               *(p for p, _ in report.failed), *(p for pair in report.renamed for p in pair),
               *("wiki/" + p for p in (*report.created, *report.updated, *report.removed))]
    exists = (ws.state_dir / "search" / "manifest.json").exists()  # search.index_dir, without importing it
    if exists and not touched:
        return
    try:
        from . import search
    except ImportError:  # a build without search: nothing to keep up to date
        return
    failed: Exception | None = None
    try:
        done = search.update_index(ws, only=touched if exists else None, wait=30.0, seed=seed)
    except Exception as exc:  # noqa: BLE001 - derived data: search rebuilds it on its own
        log.debug("search index not updated", exc_info=True)
        failed, done = exc, search.IndexReport()
    try:
        # a segment a kill or a full disk tore makes every search (and an update that merges it)
        # fail: opened as a search opens it, and built again when it cannot be read
        repaired = search.repair(ws)
    except Exception as exc:  # noqa: BLE001 - derived data: the next search tries again
        repaired = f"search index damaged and not rebuilt ({exc}); run: wikimem reindex"
    if repaired:
        report.warnings.append(repaired)
        done.rebuilt = True
    elif failed is not None:
        report.warnings.append(f"search index not updated ({failed}); the next search brings it up to date")
        return
    report.index = {"files": done.files, "passages": done.passages, "rebuilt": done.rebuilt,
                    "seconds": round(time.perf_counter() - started, 3)}


_Bucket = dict[str, list[str]]  # created / updated / removed / kept -> page paths


def _bucket() -> _Bucket:
    return {"created": [], "updated": [], "removed": [], "kept": []}


@dataclass
class Plan:
    """What a compile is to do, worked out from raw/'s scan, state.db and wiki/'s listing
    before anything is written: plan() reads, never writes."""

    rows: dict[str, SourceRow]  # state.db's sources as the compile found them
    pages: dict[str, tuple[str, str, str | None]]  # state.db's pages: path -> (hash, kind, owner)
    current: dict[str, RawFile]  # the sources on disk (less any that went away mid-read)
    shas: dict[str, str]
    vanished: set[str]  # went away between the scan and the read: left as they were this run
    candidates: list[RawFile]  # every source not left alone (skipped, or given up on)
    changed: list[str]  # new or changed content, or failed last time: compiled
    renamed: dict[str, str]  # new path -> old path (same content): the page moves
    removed: dict[str, str]  # a source gone from raw/ -> its page ("" for none)
    refused: list[tuple[str, str]]  # files refused outright, not yet recorded as skipped
    moved: list[SourceRow]  # same content, new size or mtime: the row is brought up to date
    noop: bool
    rebuild: bool = False  # every page rendered again (compile --rebuild)
    rerender: bool = False  # the same, because another version of the backend wrote them
    merged: bool = False  # git merged pages another clone wrote: the backend runs (state.RENDER_PENDING)
    refs: dict[str, SourceRef] = field(default_factory=dict)  # each candidate with its page
    # a source whose page name changes, as a compile from nothing names it (_assign_pages) -> its
    # page until now: compiled, and the old page goes
    repaged: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    scanned_ns: int = 0  # when the scan that read the sources' times began (SourceRow.seen_ns)


SIZE_CAP_META = "settings.max_source_mb"  # the cap the sources skipped as too large were measured against
SKIPPED_FOR_SIZE = "max_source_mb"  # what the reason of a source skipped as too large says (sources.load_source)


def plan(
    ws: Workspace, state: State, scanned: raw_tree.RawScan, *, rebuild: bool = False,
    rerender: bool = False, give_up_after: int | None = None, size_cap_changed: bool = False,
) -> Plan:
    """Decide what to compile: hash only what size, mtime and ctime say may have changed (and
    what was racily clean when last looked at: SourceRow.same_file), find renames (same content
    under a new path) and removals, and give every source its page."""
    rows = state.sources()
    files, warnings = scanned.files, []
    shas: dict[str, str] = {}
    vanished: set[str] = set()
    for f in files:
        row = rows.get(f.path)
        if row and row.same_file(f.size, f.mtime_ns, f.ctime_ns):
            shas[f.path] = row.sha256
            continue
        sha = _sha_or_none(f.file)
        if sha is None:
            # deleted (or swapped for something unreadable) between the scan and this read:
            # leave it as it was for this run, neither compiled nor removed; the next run
            # scans again and sees what is there
            vanished.add(f.path)
            warnings.append(f"{f.path} went away while this compile read it; left as it was until the next compile")
            if row is None:
                continue
            shas[f.path] = row.sha256
        else:
            shas[f.path] = sha
    if vanished:
        files = [f for f in files if f.path in shas]
    current = {f.path: f for f in files}
    # a source skipped (or given up on) with this content is left alone, until the content or
    # the reader changes: a new version may read what an old one could not (an extensionless
    # README, a Markdown dialect's admonitions), so a changed backend version tries them all again
    left_alone = {p for p, row in rows.items() if row.status == "skipped" and shas.get(p) == row.sha256}
    if size_cap_changed:
        # max_source_mb changed: what was too large may not be now (nor what fitted, still fit)
        left_alone = {p for p in left_alone if SKIPPED_FOR_SIZE not in (rows[p].reason or "")}
    if rebuild or rerender:
        left_alone = set()
    elif give_up_after:
        left_alone |= {
            p for p, row in rows.items()
            if row.status == "failed" and row.attempts >= give_up_after and shas.get(p) == row.sha256
        }
    candidates = [f for f in files if f.path not in left_alone]
    changed = [f.path for f in candidates
               if (row := rows.get(f.path)) is None or row.sha256 != shas[f.path] or row.status != "compiled"]
    refused_paths = {p for p, _ in scanned.refused}
    gone = {p: row for p, row in rows.items() if p not in current and p not in refused_paths}
    by_sha_gone = {row.sha256: p for p, row in gone.items() if row.status == "compiled"}
    renamed: dict[str, str] = {}
    for path in list(changed):
        old = by_sha_gone.get(shas[path])
        if old and rows.get(path) is None:
            renamed[path] = old
            changed.remove(path)
            del by_sha_gone[shas[path]]
    removed = {p: (row.page or "") for p, row in gone.items() if p not in renamed.values()}
    refused = [(p, r) for p, r in scanned.refused if (rows.get(p) is None or rows[p].status != "skipped")]
    # the same content with other times (a touch, a copy, a checkout), or times that could not
    # be trusted when recorded: the row takes the times as this scan read them
    moved = [
        replace(row, size=f.size, mtime_ns=f.mtime_ns, ctime_ns=f.ctime_ns, seen_ns=scanned.started_ns) for f in files
        if (row := rows.get(f.path)) and f.path not in vanished and row.sha256 == shas[f.path]
        and not row.same_file(f.size, f.mtime_ns, f.ctime_ns)
    ]
    pages = state.pages()
    listed: dict[str, set[str]] = {}
    wiki = ws.wiki
    missing_pages = any(p not in _files_in(wiki, posixpath.dirname(p), listed) for p in pages)
    index_missing = not (ws.wiki / "index.md").exists()
    merged = bool(state.get_meta(RENDER_PENDING))
    noop = not (changed or renamed or removed or missing_pages or rebuild or rerender or index_missing or refused
                or merged)
    out = Plan(rows, pages, current, shas, vanished, candidates, changed, renamed, removed, refused,
               moved, noop, rebuild, rerender, merged, warnings=warnings, scanned_ns=scanned.started_ns)
    if not noop:
        _assign_pages(ws, out, gone, listed, state.get_meta(KEPT_PAGES_META))
    return out


KEPT_PAGES_META = "pages.kept"  # source pages kept as a person's when their source went (PageWriter)


def _assign_pages(ws: Workspace, todo: Plan, gone: dict[str, SourceRow], listed: dict[str, set[str]],
                  state_kept: list[str] | None = None) -> None:
    """todo.refs: every candidate with its page.

    Page names are those a compile from nothing gives raw/: in path order, each file the first
    free of its names (assign_page), so two files whose names make one page name (CHANGES.md,
    changes.md) share it out in path order. A source keeps its page until the files of raw/
    change: when a file comes, goes or is renamed, each source takes the name a compile from
    nothing would give it (the file that held a name went: the other takes it), and its page
    moves, as a renamed source's does (todo.repaged). Never onto a page a person kept or wrote:
    then the source keeps its page, and a new one gets a free name."""
    rows, current, candidates = todo.rows, todo.current, todo.candidates
    kept = set(state_kept) if state_kept is not None else set()
    foreign: dict[str, tuple[list[str], str]] | None = None
    # in path order, as the scan lists them, but a file of a type no loader reads (it will be
    # skipped) after the others: it never takes the page name of a document that has a page
    def order(files: Iterable[RawFile]) -> list[RawFile]:
        return sorted(files, key=lambda f: source_suffix(f.path) not in SUPPORTED_SUFFIXES)

    def paged(path: str) -> str | None:
        row = rows.get(path)
        return row.page if row and row.page else None

    if not (todo.renamed or todo.removed or any(paged(f.path) is None for f in candidates)):
        # the same files as the last compile: the same names
        for f in candidates:
            todo.refs[f.path] = SourceRef(f.path, todo.shas[f.path], paged(f.path) or "")
        return
    ideal: dict[str, str] = {}
    named: set[str] = set()
    for f in order(current.values()):
        ideal[f.path] = name = assign_page(f.path, named)
        named.add(name)
    # a page a source of raw/ holds, and a removed source's page (deleted by this compile, or
    # kept when a person edited it)
    holder = {had: p for p in current if (had := paged(p))}
    held = {row.page: p for p, row in gone.items() if row.page and p not in todo.renamed.values()}
    moving = {f.path for f in candidates if paged(f.path) != ideal[f.path]}
    if moving:
        foreign = _foreign_pages(ws, todo.pages, listed)

    def free(path: str, page: str) -> bool:
        occupant = holder.get(page)
        if occupant is not None and occupant != path and occupant not in moving:
            return False
        if page in held and (page in kept or _persons_page(ws, page, todo.pages)):
            return False
        owners = foreign.get(page) if foreign is not None else None
        return owners is None or (owners[0] == [path] and page not in kept)

    while stuck := {p for p in moving if not free(p, ideal[p])}:
        moving -= stuck
    in_use = {had for had, p in holder.items() if p not in moving} | {ideal[p] for p in moving}
    for f in order(candidates):
        page: str | None = ideal[f.path] if f.path in moving else paged(f.path)
        if page is None:
            # a new source whose name is a person's page (or held by a source that keeps it)
            assert foreign is not None
            blocked = in_use | set(held) | {rel for rel, (owners, _sha) in foreign.items()
                                            if owners != [f.path] or rel in kept}
            page = assign_page(f.path, blocked)
            if _persons_page(ws, ideal[f.path], todo.pages):
                todo.warnings.append(
                    f"{f.path}: {ideal[f.path]} is a page a person edited (kept when its source went), so this "
                    f"source's page is {page}")
            in_use.add(page)
        elif (before := paged(f.path)) is not None and before != page:
            todo.repaged[f.path] = before
            if f.path not in todo.changed:
                todo.changed.append(f.path)
        todo.refs[f.path] = SourceRef(f.path, todo.shas[f.path], page)


class PageWriter:
    """Guards and stages the page edits a backend proposes, then writes them.

    Pages are not written as they are decided: every write is first journalled (one fsync
    for the batch), then written, so that a compile stopped before state.db commits leaves
    pages the next one knows for wikimem's (state.WriteJournal). A page a person edited is
    never overwritten: the proposal goes to .wikimem/proposed/ instead.
    """

    def __init__(self, ws: Workspace, state: State, pages: Mapping[str, tuple[str, str, str | None]],
                 report: CompileReport, writer: str = "wikimem",
                 made: Callable[[str, str, str], str | None] | None = None):
        self.ws, self.state, self.report = ws, state, report
        self.pages = pages  # as planned: backends propose edits, only this writer records pages
        self.writer = writer  # the backend and version its pages say wrote them (pages.certify)
        # (page, content, writer) -> the text to write for a new page rendered as `content`, made
        # already in another process (_Seeding.made), or None: then made here (_new_page_text)
        self.made = made
        self.planned: dict[Path, bytes | None] = {}  # target -> bytes to write, None to delete
        self.intents: list[tuple[str, str, str, str | None, bool]] = []

    def _bytes(self, target: Path, rel: str) -> bytes | None:
        """What the page holds: `target` is checked by `owned` already, and opened as open_owned
        opens it."""
        if target in self.planned:
            return self.planned[target]
        try:
            with open_checked(target, f"{self.ws.wiki.name}/{rel}") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    def _propose(self, rel: str, content: str) -> None:
        # certified like a page: a person who copies it over their page hands the page back
        atomic_write(self.ws.state_dir / "proposed" / rel, stamp(certify(content, self.writer), None), durable=False,
                     base=self.ws.state_dir)

    def _refuse(self, exc: PathEscape) -> None:
        # one line per cause: a linked folder refuses every page in it for the same reason
        line = f"refused edit: {exc}"
        if line not in self.report.warnings:
            self.report.warnings.append(line)

    def apply(self, edit: PageEdit, bucket: _Bucket) -> None:
        """Stage one edit; say in `bucket` what it does to the page."""
        ws, state, report = self.ws, self.state, self.report
        try:
            confine_lexically(ws.wiki, edit.path)
            # the page by its own name, every folder on the way a real one (a linked wiki/facts
            # or sources/ would take writes and deletes out of the workspace)
            target = owned(ws.wiki, ws.wiki / edit.path)
        except PathEscape as exc:
            self._refuse(exc)
            return
        rel = target.relative_to(ws.wiki).as_posix()
        if rel in ("index.md", "log.md", "AGENTS.md") or index_page.is_catalog(rel):
            report.warnings.append(f"refused edit to {rel}: written by code or owned by the user")
            return
        disk = self._bytes(target, rel)
        exists = disk is not None
        if not exists and edit.content is not None and edit.base_sha256 is None and self.made is not None \
                and rel == edit.path and (made := self.made(rel, edit.content, self.writer)) is not None:
            # a new page whose text the search seed made already: what the last branch below writes
            data = made.encode("utf-8")
            digest = content_hash(data)
            self.planned[target] = data
            self.intents.append((rel, digest, edit.kind, edit.owner, True))
            bucket["created"].append(rel)
            state.put_page(rel, digest, edit.kind, edit.owner)
            return
        human = exists and ownership.persons_page(disk or b"", self.pages.get(rel))
        proposed_edit = edit
        if edit.content is not None:
            # whatever a backend rendered from a source: names and titles one line, no
            # active HTML, no link but relative and http(s)/mailto (pages.guard_page)
            edit = replace(edit, content=guard_page(edit.content))
        if edit.content is None:
            if not exists:
                state.delete_page(rel)
                return
            if human:
                bucket["kept"].append(rel)
                state.delete_page(rel)
                if edit.kind == "source":  # no later source takes it for its own (_assign_pages)
                    kept = set(state.get_meta(KEPT_PAGES_META) or [])
                    state.set_meta(KEPT_PAGES_META, sorted(kept | {rel}))
                return
            self.planned[target] = None
            state.delete_page(rel)
            bucket["removed"].append(rel)
            return
        if human and edit.base_sha256 is not None and edit.base_sha256 == content_hash(disk or b""):
            # an in-place edit on top of the person's current text (the anthropic
            # backend's str_replace/insert): apply it, but leave the recorded hash alone
            # so the page stays marked as edited by a person and is never overwritten
            # (nor journalled: it must stay a person's page after a crash too)
            before = (disk or b"").decode("utf-8", "replace")
            # the person's lines as they are (their HTML too); only what was added is made inert
            content = inert_added(before, proposed_edit.content or "")
            lost = lost_line(before, content)
            if lost is not None:
                # whichever backend proposed it: on a person's page an edit may only add
                report.refused.append((rel, f"the edit would change or remove line {lost}, which a person's page keeps"))
                bucket["kept"].append(rel)
                self._propose(rel, content)
                return
            text = stamp(content, before)
            if text.encode("utf-8") != disk:
                self.planned[target] = text.encode("utf-8")
                bucket["updated"].append(rel)
            return
        if human:
            bucket["kept"].append(rel)
            self._propose(rel, edit.content)
            return
        text = stamp(certify(edit.content, self.writer), disk.decode("utf-8", "replace") if disk is not None else None)
        data = text.encode("utf-8")
        if disk != data:
            self.planned[target] = data
            self.intents.append((rel, content_hash(data), edit.kind, edit.owner, not exists))
            bucket["updated" if exists else "created"].append(rel)
        state.put_page(rel, content_hash(data), edit.kind, edit.owner)

    def write(self, journal: WriteJournal) -> None:
        """Journal what wikimem is about to write, then write it (fsync'd later, in one go)."""
        journal.record(self.intents)
        for target, data in self.planned.items():
            if data is None:
                if remove_owned(self.ws.wiki, target):
                    remove_empty_folders(self.ws.wiki, target, self.ws.layout)
            else:
                atomic_write(target, data, durable=False, base=self.ws.wiki)


def _prepare(ws: Workspace, settings: Settings, state: State, backend: Backend,
             current: dict[str, RawFile], report: CompileReport) -> None:
    """Bring state.db up to what wiki/ holds before planning: rebuilt after a fresh clone or a
    corrupt file, an interrupted compile's pages taken back, a teammate's pages adopted."""
    if state.recovered:
        report.warnings.append(state.recovered)
    if state.fresh:
        restored = rebuild_state(ws, state, current)
        if restored:
            report.warnings.append(f"state rebuilt from {restored} source pages")
            # the version that rendered them, from the last compile log.md records: when this
            # one renders differently, _backend_changed has every page rendered again
            rendered_by = log_page.last_backend(ws.wiki / "log.md")
            if rendered_by and ":" in rendered_by:
                state.set_meta("backend.version", rendered_by)
    # a writer stopped between writing pages and committing state.db (kill -9, a full disk, a
    # power cut): its pages are wikimem's, not a person's edits
    adopted, dropped = ownership.recover(ws, state)
    if adopted or dropped:
        report.warnings.append(
            f"an interrupted write left {len(adopted) + len(dropped)} pages unrecorded; "
            "taken back as wikimem's and compiled again")
    # pages a teammate's wikimem wrote (git pull) are adopted, not taken for human edits; pages
    # both clones wrote, which git's driver merged by keeping ours, are rendered (or merged) again
    adopt.sync(ws, settings, state)
    merging.settle(ws, settings, state, backend.name, written_by(backend, settings))


def _version_of(backend: Backend) -> str:
    return str(getattr(backend, "version", backend.name))


def written_by(backend: Backend, settings: Settings) -> str:
    """What a page says wrote it (pages.certify): the backend's version, or for a backend
    without one (a model's), its name and the model."""
    version = getattr(backend, "version", None)
    return str(version) if version else f"{backend.name}:{settings.model}"


def _backend_changed(state: State, backend: Backend, report: CompileReport) -> bool:
    """Whether pages were rendered by another version of this backend: then render them all
    again (identical bytes are not rewritten, so an upgrade that changes nothing writes nothing)."""
    version = _version_of(backend)
    last_version = state.get_meta("backend.version")
    rerender = (last_version is not None and last_version != version
                and str(last_version).split(":")[0] == backend.name)
    if rerender:
        report.warnings.append(f"backend changed ({last_version} -> {version}): re-rendered every page")
    if last_version != version:
        state.set_meta("backend.version", version)
    return rerender


def _compile_locked(
    ws: Workspace, settings: Settings, backend_name: str, rebuild: bool, progress: Progress | None,
    give_up_after: int | None = None, seeding: _Seeding | None = None, activity: Watch | None = None,
) -> CompileReport:
    started = time.perf_counter()
    backend = create(backend_name, settings)
    report = CompileReport(backend=backend.name)
    # what a writer killed mid-write left (the lock is this compile's: none is being written)
    remove_stale_temp_files(ws.wiki)
    remove_stale_temp_files(ws.state_dir / "proposed")
    state = State(ws.state_db)
    journal = WriteJournal(ws.state_dir)
    templating.keep_compiled(ws.state_dir / templating.COMPILED_FOLDER)
    try:
        scanned = raw_tree.scan(ws)
        report.ignored = scanned.ignored_summary()
        if seeding is not None:
            seeding.files = {f.path: (f.size, f.mtime_ns, f.ctime_ns) for f in scanned.files}
            seeding.writer = written_by(backend, settings)
        _prepare(ws, settings, state, backend, {f.path: f for f in scanned.files}, report)
        rerender = _backend_changed(state, backend, report)
        size_cap_changed = state.get_meta(SIZE_CAP_META) != settings.max_source_mb
        if size_cap_changed:
            state.set_meta(SIZE_CAP_META, settings.max_source_mb)
        todo = plan(ws, state, scanned, rebuild=rebuild, rerender=rerender, give_up_after=give_up_after,
                    size_cap_changed=size_cap_changed)
        report.warnings.extend(todo.warnings)
        for p, r in todo.refused:
            state.put_source(SourceRow(p, "", 0, 0, None, "skipped", r, 0, ()))
            report.skipped.append((p, r))
        for row in todo.moved:
            state.put_source(row)
        if todo.noop:
            report.noop = True
            report.unchanged = len(todo.candidates)
            report.seconds = time.perf_counter() - started
            return report
        with state.transaction():
            syncing = apply(ws, settings, state, journal, backend, todo, report, progress, started, seeding, activity)
            # pages were written without a per-file fsync; make them durable before state.db
            # records them as written (the transaction commits when this block ends)
            if syncing is not None:
                syncing.join()
            os.sync()
        # committed: state.db now records every page the journal named, and the pages git's
        # driver merged are rendered again
        journal.clear()
        merging.clear(ws)
        return report
    finally:
        state.close()


def apply(
    ws: Workspace, settings: Settings, state: State, journal: WriteJournal, backend: Backend,
    todo: Plan, report: CompileReport, progress: Progress | None = None, started: float | None = None,
    seeding: _Seeding | None = None, activity: Watch | None = None,
) -> threading.Thread | None:
    """Carry out a plan inside state.db's transaction: run the backend, guard and write the
    pages it proposes, record the sources, regenerate the timelines, index.md and log.md.
    `seeding`: the search index built beside the compile, told what the backend read and
    rendered and when the pages are written. Returns the thread syncing the pages written, when
    one was started (_sync_beside): the caller joins it, and syncs what was written after."""
    started = time.perf_counter() if started is None else started
    max_bytes = int(settings.max_source_mb * 1_000_000)

    def load(path: str, *, xrefs: bool = False) -> Document:
        if progress:
            progress(path, len(todo.changed), 1)
        doc = load_source(todo.current[path].file, path, max_bytes=max_bytes, xrefs=xrefs)
        if path in todo.shas:
            state.put_outline(todo.shas[path], outline(doc))  # search indexes it without parsing again
        return doc

    batch = Batch(
        workspace=ws, settings=settings, state=state, sources=todo.refs, changed=tuple(todo.changed),
        renamed=todo.renamed, removed=todo.removed, load=load, rebuild=todo.rebuild,
        rerender=todo.rerender, files=_Files(todo.current), max_bytes=max_bytes,
        listener=seeding if seeding is not None else UNHEARD, activity=activity,
    )
    result = backend.compile(batch)
    if seeding is not None:
        seeding.all_rendered()
    outcomes = {o.path: o for o in result.outcomes}
    report.warnings.extend(result.notes)
    report.refused.extend(result.refused)
    report.traffic = dict(result.stats)

    # --- guard and write
    writer = PageWriter(ws, state, todo.pages, report, written_by(backend, settings),
                        seeding.made if seeding is not None else None)
    per_source: dict[str, _Bucket] = {}
    batch_changes = _bucket()
    for edit in result.edits:
        owner = edit.owner if edit.kind in ("source", "part") and edit.owner in todo.refs else None
        writer.apply(edit, per_source.setdefault(owner, _bucket()) if owner else batch_changes)
    # a source compiled before that can no longer be read (emptied, made binary, a template) is
    # gone from the wiki as a removed source is; one that failed keeps its page until it compiles
    unreadable = {path: row.page for path, outcome in outcomes.items() if outcome.status == "skipped"
                  and (row := todo.rows.get(path)) is not None and row.status == "compiled" and row.page}
    _remove_stale_parts(writer, todo, result.edits, per_source, unreadable)
    # a page another source now has (its name freed, _assign_pages) is not removed
    claimed = {ref.page for ref in todo.refs.values()}
    # removed sources: drop their pages
    for path, page in sorted(todo.removed.items()):
        bucket = per_source.setdefault(path, _bucket())
        if page and page not in claimed:
            writer.apply(PageEdit(page, None, "source", path), bucket)
        state.delete_source(path)
        report.removed_sources.append(path)
    for path, page in sorted(unreadable.items()):
        if page not in claimed or todo.refs[path].page == page:
            writer.apply(PageEdit(page, None, "source", path), per_source.setdefault(path, _bucket()))
    # renamed sources: the old page goes, the new one was rendered above
    for new, old in sorted(todo.renamed.items()):
        old_page = todo.rows[old].page
        if old_page and old_page not in claimed:
            writer.apply(PageEdit(old_page, None, "source", old), per_source.setdefault(new, _bucket()))
        state.delete_source(old)
        report.renamed.append((old, new))
    # sources whose page name changed: likewise
    for path, old_page in sorted(todo.repaged.items()):
        if old_page not in claimed and path in outcomes and outcomes[path].status == "compiled":
            writer.apply(PageEdit(old_page, None, "source", path), per_source.setdefault(path, _bucket()))
    writer.write(journal)
    syncing = _sync_beside() if len(writer.planned) >= SYNC_BESIDE else None
    if seeding is not None:
        seeding.catalog(((rel, digest) for rel, digest, *_ in writer.intents), state)
        seeding.written()

    _record_sources(state, todo, outcomes, report)
    entries = _source_entries(todo, outcomes, per_source, report)
    for bucket in [batch_changes, *per_source.values()]:
        for key in ("created", "updated", "removed", "kept"):
            getattr(report, key).extend(bucket.get(key, []))

    # --- timelines (wiki/facts/) and index.md, regenerated by code
    compiled_rows = {p: r for p, r in state.sources().items() if r.status == "compiled" and r.page}
    in_collection = raw_tree.collections(compiled_rows)
    try:
        fact_changes = timelines.write(
            ws, state, {p: (r.sha256, in_collection[p]) for p, r in compiled_rows.items()},
            {p: r.page for p, r in compiled_rows.items() if r.page})
    except UnsafePath as exc:
        fact_changes = []
        report.warnings.append(f"fact timelines not written: {exc}")
    state.prune_analyses(r.sha256 for r in todo.refs.values())
    written = [*report.created, *report.updated, *report.removed, *(p for p, _ in fact_changes)]

    def log_entries(index: list[tuple[str, str]]) -> list[log_page.LogEntry]:
        # index.md is written by now: the compile's entry lists it with the timelines
        index_changes = fact_changes + index
        report.created.extend(p for p, how in index_changes if how == "created")
        report.updated.extend(p for p, how in index_changes if how == "updated")
        report.removed.extend(p for p, how in fact_changes if how == "removed")
        report.seconds = time.perf_counter() - started
        if not any([report.created, report.updated, report.removed, report.kept, entries]):
            return []
        # pages of sources that have no entry of their own (re-rendered, not changed: a new
        # renderer, a concept link that moved) are listed in the compile's entry
        unlisted = _bucket()
        for path, bucket in sorted(per_source.items()):
            if path not in todo.changed and path not in todo.renamed and path not in todo.removed:
                for key, pages in bucket.items():
                    unlisted[key].extend(pages)
        summary = _change_lines({k: [*batch_changes[k], *unlisted[k]] for k in batch_changes})
        summary += log_page.list_lines("index", [p for p, _ in index_changes])
        summary.append(
            f"- sources: {len(report.compiled)} compiled, {report.unchanged} unchanged, "
            f"{len(report.removed_sources)} removed, {len(report.skipped)} skipped, {len(report.failed)} failed"
        )
        if report.refused:
            summary.append(f"- refused: {len(report.refused)} edits that would change what a person wrote "
                           "or break a guard (see the compile report)")
        # with the version that rendered the pages: a fresh clone's state is rebuilt from the
        # pages, and this says whether they need rendering again (see _prepare)
        summary.append(f"- backend: {_version_of(backend)}, {report.seconds:.2f} s")
        compiled_now = len(report.compiled) + report.unchanged
        if operation == "sync":
            return [*entries, log_page.LogEntry("sync", f"pages rendered again after a git merge ({compiled_now} sources)",
                                                summary)]
        return [*entries, log_page.LogEntry("compile", f"{compiled_now} sources", summary)]

    # a compile that only renders again what git merged is the merge's sync
    operation = "sync" if todo.merged and not (todo.changed or todo.renamed or todo.removed) else "compile"
    if todo.merged:
        state.delete_meta(RENDER_PENDING)
    history.finish(ws, settings, operation=operation, entries=log_entries, paths=written, state=state,
                   warn=report.warnings.append)
    return syncing


SYNC_BESIDE = 64  # pages written, at least, for their sync to start beside the rest of the compile


def _sync_beside() -> threading.Thread:
    """os.sync() in a thread of its own, started once the pages are written: the disk takes them
    while the compile regenerates the timelines, index.md and log.md (os.sync lets go of the
    interpreter while it waits), rather than after, with the compile waiting on it. The compile
    syncs again before state.db commits, which then has only what was written since to wait for.
    A first compile of 187 sources waited 30-35 ms for its sync."""
    thread = threading.Thread(target=os.sync, name="wikimem-sync", daemon=True)
    thread.start()
    return thread


def _remove_stale_parts(writer: PageWriter, todo: Plan, edits: tuple[PageEdit, ...],
                        per_source: dict[str, _Bucket], unreadable: Collection[str] = ()) -> None:
    """The part pages of a long source (sources/<page stem>/<section>.md, kind `part` in state)
    go with it: when its page is rendered again, the parts this render did not write (the
    document shrank, or its page moved with a rename) are removed, and when the source leaves
    raw/ or can no longer be read (`unreadable`), all of them. A part a person edited is kept,
    as any page (PageWriter).

    A backend that writes no parts (a model editing the page the offline backend wrote) keeps
    those its page still links, directly or through a part it keeps, so it never leaves the
    page with a broken link."""
    parts = {rel: owner for rel, (_sha, kind, owner) in todo.pages.items() if kind == "part" and owner}
    if not parts:
        return
    written = {e.path for e in edits if e.content is not None}
    rendered = {e.owner: e for e in edits if e.kind == "source" and e.content is not None and e.owner}
    renamed = {old: new for new, old in todo.renamed.items()}
    gone = {*todo.removed, *unreadable}
    stale = {rel: owner for rel, owner in parts.items() if rel not in written
             and (owner in rendered or owner in gone or owner in renamed)}
    # what the rendered pages still link, and the parts those link in turn
    linked: set[str] = set()
    reading = [(e.path, e.content or "") for owner, e in rendered.items()
               if owner not in gone and owner not in renamed]
    while reading:
        at, text = reading.pop()
        for rel in stale:
            if rel not in linked and f"]({relative_link(at, rel)})" in text:
                linked.add(rel)
                try:
                    reading.append((rel, read_owned(writer.ws.wiki, writer.ws.wiki / rel).decode("utf-8", "replace")))
                except (OSError, PathEscape):
                    pass
    for rel, owner in sorted(stale.items()):
        if rel not in linked:
            writer.apply(PageEdit(rel, None, "part", owner), per_source.setdefault(renamed.get(owner, owner), _bucket()))


def _record_sources(state: State, todo: Plan, outcomes: Mapping[str, SourceOutcome], report: CompileReport) -> None:
    """state.db's row for each source the backend reported on; the report's counts."""
    for path, ref in sorted(todo.refs.items()):
        outcome = outcomes.get(path)
        f = todo.current[path]
        if outcome is None:
            # a backend reports only the sources it did something about: the others
            # keep their row as it is
            if path not in todo.changed and path not in todo.renamed and todo.rows.get(path) is not None:
                report.unchanged += 1
            continue
        if outcome.status in ("skipped", "failed"):
            if path in todo.vanished:
                continue  # read again next run; its row stays as it was
            row = todo.rows.get(path)
            attempts = (row.attempts + 1) if row and row.sha256 == ref.sha256 else 1
            state.put_source(SourceRow(path, ref.sha256, f.size, f.mtime_ns, None, outcome.status, outcome.reason,
                                       attempts, (), f.ctime_ns, todo.scanned_ns))
            (report.skipped if outcome.status == "skipped" else report.failed).append((path, outcome.reason or ""))
            continue
        row = SourceRow(path, ref.sha256, f.size, f.mtime_ns, ref.page, "compiled", None, 0, outcome.concepts,
                        f.ctime_ns, todo.scanned_ns)
        if todo.rows.get(path) != row:  # 10k unchanged rows are not written again
            state.put_source(row)
        if path in todo.changed or path in todo.renamed:
            report.compiled.append(path)
        else:
            report.unchanged += 1


def _source_entries(todo: Plan, outcomes: Mapping[str, SourceOutcome], per_source: Mapping[str, _Bucket],
                    report: CompileReport) -> list[log_page.LogEntry]:
    """log.md's entries for each source skipped, failed, renamed, ingested or removed."""
    entries = [log_page.LogEntry("skip", path, (f"- reason: {reason}", *_change_lines(per_source.get(path, {}))))
               for path, reason in report.skipped]  # with the page of a source no longer readable
    for path, reason in report.failed:
        # a model backend may have spent tokens before it failed; the log says how many
        lines = [f"- error: {reason}", *_spend_lines(outcomes.get(path))]
        entries.append(log_page.LogEntry("fail", path, tuple(lines)))
    for old, new in report.renamed:
        entries.append(log_page.LogEntry("rename", f"{old} -> {new}", _change_lines(per_source.get(new, {}))))
    for path in sorted(todo.changed):
        outcome = outcomes.get(path)
        if outcome is None or outcome.status in ("skipped", "failed"):
            continue
        lines = _change_lines(per_source.get(path, {})) + _spend_lines(outcome)
        entries.append(log_page.LogEntry("ingest", f"{outcome.title or path} ({path})", lines))
    for path in report.removed_sources:
        entries.append(log_page.LogEntry("remove", path, _change_lines(per_source.get(path, {}))))
    return entries


def _spend_lines(outcome: SourceOutcome | None) -> list[str]:
    if outcome is None:
        return []
    lines = []
    if outcome.usage:
        lines.append("- tokens: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.usage.items())))
    if outcome.cost_usd is not None:
        lines.append(f"- cost: ~${outcome.cost_usd:.4f} (estimate at list prices)")
    return lines


def _change_lines(changes: dict[str, list[str]]) -> list[str]:
    lines: list[str] = []
    for key, label in (("created", "created"), ("updated", "updated"), ("removed", "removed"),
                       ("kept", "kept (edited by a person; not overwritten)")):
        lines += log_page.list_lines(label, changes.get(key, []))
    return lines


def _files_in(wiki: Path, folder: str, listed: dict[str, set[str]]) -> set[str]:
    """The wiki-relative paths of the files in one folder of wiki/, read once per folder (a
    no-op compile of 10k sources asks about 12k pages: one directory read, not 12k stats)."""
    if folder not in listed:
        try:
            with os.scandir(wiki / folder if folder else wiki) as entries:
                listed[folder] = {f"{folder}/{e.name}" if folder else e.name for e in entries}
        except OSError:
            listed[folder] = set()
    return listed[folder]


def collect_entries(ws: Workspace, state: State | None = None) -> dict[str, list[index_page.Entry]]:
    """One catalog entry per page, by the folder it sits in (the settings catalog's entries are
    the index's own); with state, pages unchanged since last time are not re-read."""
    folders = {name for name, _ in index_page.SECTIONS}
    return {folder: entries for folder, entries in index_page.collect(ws, state)[0].items() if folder in folders}


write_index = index_page.write_index  # the compiler, lint, query and undo all regenerate it one way

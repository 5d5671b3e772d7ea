"""The compile pipeline: scan raw/, plan from state.db, run a backend, guard and write, then
regenerate index.md and append log.md.

Data flow (docs/compile.md): raw/ -> scan -> plan (hash vs state) -> backend.compile() -> page
edits -> guard (paths, human edits, front matter) -> atomic write -> state.db, index.md,
log.md.
"""

from __future__ import annotations

import logging
import os
import posixpath
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import adopt, history, index_page, log_page, raw_tree, timelines
from .backends import Batch, PageEdit, SourceRef, create
from .config import Settings
from .errors import PathEscape
from .naming import undecodable
from .pages import (
    FrontMatterError,
    content_hash,
    guard_page,
    inert_added,
    loads_page,
    lost_line,
    slugify,
    stamp,
)
from .raw_tree import RawFile
from .sources import Document, load_source, outline
from .state import SourceRow, State, WriteJournal, is_corrupt, recover_pages, set_aside
from .workspace import (
    Workspace,
    atomic_write,
    confine,
    file_sha256,
    remove_stale_temp_files,
    writer_lock,
)

log = logging.getLogger("wikimem.compile")
Progress = Callable[[str, int, int], None]


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


def scan_raw(ws: Workspace) -> tuple[list[RawFile], list[tuple[str, str]]]:
    """Every candidate source under raw/ and the files refused outright (raw_tree.scan's rules)."""
    found = raw_tree.scan(ws)
    return found.files, found.refused


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
    """After .wikimem/ was deleted (a fresh clone) or state.db set aside as corrupt: trust
    source pages whose source hash still matches, and concept pages as they are."""
    restored = 0
    folder = ws.wiki / "sources"
    with state.transaction():
        state.rebuilt()
        for page_file in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
            rel = page_file.relative_to(ws.wiki).as_posix()
            if index_page.is_catalog(rel) or undecodable(rel):
                continue
            text = page_file.read_text(encoding="utf-8", errors="replace")
            try:
                page = loads_page(rel, text)
            except FrontMatterError:
                continue
            if page.kind != "source" or not page.sources:
                continue
            raw = current.get(page.sources[0])
            sha = str(page.meta.get("source_sha256") or "")
            if raw is None or not sha or _sha_or_none(raw.file) != sha:
                continue
            state.put_source(SourceRow(raw.path, sha, raw.size, raw.mtime_ns, rel, "compiled", None, 0, ()))
            state.put_page(rel, content_hash(text), "source", raw.path)
            restored += 1
        for page_file in sorted((ws.wiki / "concepts").rglob("*.md")) if (ws.wiki / "concepts").is_dir() else []:
            rel = page_file.relative_to(ws.wiki).as_posix()
            if not index_page.is_catalog(rel) and not undecodable(rel):
                state.put_page(rel, content_hash(page_file.read_bytes()), "concept", None)
    return restored


def _foreign_pages(ws: Workspace, recorded: Mapping[str, Any], listed: dict[str, set[str]]) -> dict[str, list[str]]:
    """Source pages on disk that state.db has no record of, with the sources they name."""
    out: dict[str, list[str]] = {}
    for rel in _files_in(ws.wiki, "sources", listed):
        if rel in recorded or not rel.endswith(".md") or index_page.is_catalog(rel) or undecodable(rel):
            continue
        try:
            text = (ws.wiki / rel).read_text(encoding="utf-8", errors="replace")
            out[rel] = loads_page(rel, text).sources
        except (OSError, FrontMatterError):
            out[rel] = []
    return out


def _persons_page(ws: Workspace, rel: str, recorded: Mapping[str, tuple[str, str, str | None]]) -> bool:
    try:
        data = (ws.wiki / rel).read_bytes()
    except OSError:
        return False
    known = recorded.get(rel)
    return known is None or known[0] != content_hash(data)


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
) -> CompileReport:
    """Compile raw/ into wiki/ under the writer lock. The one entry point for CLI, daemon and MCP.

    give_up_after=N (the daemon): a source that failed N times with the same content is left
    alone until it changes, so a broken file does not cost a retry (or tokens) on every batch.
    """
    with writer_lock(ws, wait=wait, holder="wikimem compile"):
        name = backend_name or settings.backend
        try:
            report = _compile_locked(ws, settings, name, rebuild, progress, give_up_after)
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            # damage the opening checks could not see (a page in the middle of the file): state
            # is derived, so set it aside and compile once more from the pages, instead of
            # failing the same way on every run (the daemon retries)
            log.debug("state.db damaged mid-compile", exc_info=True)
            moved = set_aside(ws.state_db)
            report = _compile_locked(ws, settings, name, rebuild, progress, give_up_after)
            report.warnings.insert(0, f"state.db was unreadable ({exc}); moved it to {moved.name} and "
                                      "rebuilt it from the pages")
        _make_searchable(ws, report)
        return report


def _make_searchable(ws: Workspace, report: CompileReport) -> None:
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
    try:
        done = search.update_index(ws, only=touched if exists else None, wait=30.0)
    except Exception as exc:  # noqa: BLE001 - derived data: search rebuilds it on its own
        log.debug("search index not updated", exc_info=True)
        report.warnings.append(f"search index not updated ({exc}); the next search brings it up to date")
        return
    report.index = {"files": done.files, "passages": done.passages, "rebuilt": done.rebuilt,
                    "seconds": round(time.perf_counter() - started, 3)}


def _compile_locked(
    ws: Workspace, settings: Settings, backend_name: str, rebuild: bool, progress: Progress | None,
    give_up_after: int | None = None,
) -> CompileReport:
    started = time.perf_counter()
    backend = create(backend_name, settings)
    report = CompileReport(backend=backend.name)
    remove_stale_temp_files(ws.wiki)
    state = State(ws.state_db)
    journal = WriteJournal(ws.state_dir)
    try:
        if state.recovered:
            report.warnings.append(state.recovered)
        scanned = raw_tree.scan(ws)
        files, refused = scanned.files, scanned.refused
        report.ignored = scanned.ignored_summary()
        current = {f.path: f for f in files}
        if state.fresh:
            restored = rebuild_state(ws, state, current)
            if restored:
                report.warnings.append(f"state rebuilt from {restored} source pages")
        interrupted = journal.read()
        if interrupted:
            # a compile stopped between writing pages and committing state.db (kill -9, a full
            # disk, a power cut): its pages are wikimem's, not a person's edits
            with state.transaction():
                adopted, dropped = recover_pages(ws.wiki, state, interrupted)
            journal.clear()
            if adopted or dropped:
                report.warnings.append(
                    f"an interrupted compile left {len(adopted) + len(dropped)} pages unrecorded; "
                    "taken back as wikimem's and compiled again")
        # pages a teammate's wikimem wrote (git pull) are adopted, not taken for human edits
        adopt.sync(ws, settings, state)
        rows = state.sources()
        version = str(getattr(backend, "version", backend.name))
        last_version = state.get_meta("backend.version")
        rerender = False
        if last_version is not None and last_version != version and str(last_version).split(":")[0] == backend.name:
            # pages rendered by another version of this backend: render them all again (identical
            # bytes are not rewritten, so an upgrade that changes nothing writes nothing)
            rerender = True
            report.warnings.append(f"backend changed ({last_version} -> {version}): re-rendered every page")
        if last_version != version:
            state.set_meta("backend.version", version)

        # --- plan: hash only what size+mtime say may have changed
        shas: dict[str, str] = {}
        vanished: set[str] = set()
        for f in files:
            row = rows.get(f.path)
            if row and row.size == f.size and row.mtime_ns == f.mtime_ns:
                shas[f.path] = row.sha256
                continue
            sha = _sha_or_none(f.file)
            if sha is None:
                # deleted (or swapped for something unreadable) between the scan and this read:
                # leave it as it was for this run, neither compiled nor removed; the next run
                # scans again and sees what is there
                vanished.add(f.path)
                report.warnings.append(f"{f.path} went away while this compile read it; left as it was until the next compile")
                if row is None:
                    continue
                shas[f.path] = row.sha256
            else:
                shas[f.path] = sha
        if vanished:
            files = [f for f in files if f.path in shas]
            current = {f.path: f for f in files}
        skipped_before = {
            p for p, row in rows.items() if row.status == "skipped" and shas.get(p) == row.sha256
        }
        if give_up_after:
            skipped_before |= {
                p for p, row in rows.items()
                if row.status == "failed" and row.attempts >= give_up_after and shas.get(p) == row.sha256
            }
        max_bytes = int(settings.max_source_mb * 1_000_000)
        candidates = [f for f in files if f.path not in skipped_before]
        changed: list[str] = []
        for f in candidates:
            row = rows.get(f.path)
            if row is None or row.sha256 != shas[f.path] or row.status in ("failed",):
                changed.append(f.path)
        refused_paths = {p for p, _ in refused}
        gone = {p: row for p, row in rows.items() if p not in current and p not in refused_paths}
        # a rename: same content under a new path; move the page without recompiling
        by_sha_gone = {row.sha256: p for p, row in gone.items() if row.status == "compiled"}
        renamed: dict[str, str] = {}
        for path in list(changed):
            old = by_sha_gone.get(shas[path])
            if old and rows.get(path) is None:
                renamed[path] = old
                changed.remove(path)
                del by_sha_gone[shas[path]]
        removed = {p: (row.page or "") for p, row in gone.items() if p not in renamed.values()}
        new_refused = [(p, r) for p, r in refused if (rows.get(p) is None or rows[p].status != "skipped")]
        for p, r in new_refused:
            state.put_source(SourceRow(p, "", 0, 0, None, "skipped", r, 0, ()))
            report.skipped.append((p, r))
        pages_state = state.pages()
        listed: dict[str, set[str]] = {}
        missing_pages = [p for p in pages_state if p not in _files_in(ws.wiki, posixpath.dirname(p), listed)]
        index_missing = not (ws.wiki / "index.md").exists()
        for f in files:
            row = rows.get(f.path)
            if row and f.path not in vanished and row.sha256 == shas[f.path] and (row.size, row.mtime_ns) != (f.size, f.mtime_ns):
                state.put_source(SourceRow(**{**asdict(row), "size": f.size, "mtime_ns": f.mtime_ns, "concepts": row.concepts}))
        if not (changed or renamed or removed or missing_pages or rebuild or rerender or index_missing or new_refused):
            report.noop = True
            report.unchanged = len(candidates)
            report.seconds = time.perf_counter() - started
            return report

        # --- assign pages, build the batch
        taken = {row.page for p, row in rows.items() if row.page and p in current and p not in changed}
        # a removed source's page is not handed to a new source in the same run: it is being
        # deleted (or kept, when a person edited it) by this very compile
        held = {row.page for p, row in gone.items() if row.page and p not in renamed.values()}
        foreign: dict[str, list[str]] | None = None
        refs: dict[str, SourceRef] = {}
        for f in candidates:
            row = rows.get(f.path)
            page = row.page if row and row.page else None
            if page is None:
                if foreign is None:
                    foreign = _foreign_pages(ws, pages_state, listed)
                # a page file wikimem has no record of (a person's, or one whose source went
                # away while a person's edit kept it) is never taken over, unless it names this
                # very source (its own page, when state.db was rebuilt after a fresh clone)
                blocked = taken | held | {rel for rel, owners in foreign.items() if owners != [f.path]}
                page = assign_page(f.path, blocked)
                first = assign_page(f.path, taken)
                if first != page and _persons_page(ws, first, pages_state):
                    report.warnings.append(
                        f"{f.path}: {first} is a page a person edited (its source is gone), so this "
                        f"source's page is {page}")
                taken.add(page)
            refs[f.path] = SourceRef(f.path, shas[f.path], page)
        def load(path: str) -> Document:
            f = current[path]
            if progress:
                progress(path, len(changed), 1)
            doc = load_source(f.file, path, max_bytes=max_bytes)
            if path in shas:
                state.put_outline(shas[path], outline(doc))  # search indexes it without parsing again
            return doc

        batch = Batch(
            workspace=ws, settings=settings, state=state, sources=refs, changed=tuple(changed),
            renamed=renamed, removed=removed, load=load, rebuild=rebuild, rerender=rerender,
            files=_Files(current), max_bytes=max_bytes,
        )
        with state.transaction():
            result = backend.compile(batch)
            outcomes = {o.path: o for o in result.outcomes}
            report.warnings.extend(result.notes)
            report.refused.extend(result.refused)
            # --- guard and write
            entries: list[log_page.LogEntry] = []
            per_source: dict[str, dict[str, list[str]]] = {}
            batch_changes: dict[str, list[str]] = {"created": [], "updated": [], "removed": [], "kept": []}
            # pages_state (read while planning) still holds: backends propose edits, only the
            # compiler writes the pages table
            skipped_now = {p for p, o in outcomes.items() if o.status in ("skipped", "failed")}

            # Pages are not written as they are decided: every write is first journalled (one
            # fsync for the batch), then written, so that a compile stopped before state.db
            # commits leaves pages the next one knows for wikimem's (state.WriteJournal).
            planned: dict[Path, bytes | None] = {}  # target -> bytes to write, None to delete
            intents: list[tuple[str, str, str, str | None]] = []

            def current_bytes(target: Path) -> bytes | None:
                if target in planned:
                    return planned[target]
                try:
                    return target.read_bytes()
                except FileNotFoundError:
                    return None

            def apply(edit: PageEdit, bucket: dict[str, list[str]]) -> None:
                try:
                    target = confine(ws.wiki, edit.path)
                except PathEscape as exc:
                    report.warnings.append(f"refused edit: {exc}")
                    return
                rel = target.relative_to(ws.wiki.resolve()).as_posix()
                if rel in ("index.md", "log.md", "AGENTS.md") or index_page.is_catalog(rel):
                    report.warnings.append(f"refused edit to {rel}: written by code or owned by the user")
                    return
                disk = current_bytes(target)
                exists = disk is not None
                known = pages_state.get(rel)
                human = exists and (known is None or known[0] != content_hash(disk or b""))
                proposed_edit = edit
                if edit.content is not None:
                    # whatever a backend rendered from a source: names and titles one line, no
                    # active HTML, no link but relative and http(s)/mailto (pages.guard_page)
                    edit = replace(edit, content=guard_page(edit.content))
                if human and disk is not None and edit.content is not None and disk == stamp(edit.content, disk.decode("utf-8", "replace")).encode("utf-8"):
                    # exactly the bytes we would write: a compile killed before state.db
                    # committed (kill -9, power loss) wrote it; adopt it, it is not a person's edit
                    human = False
                if edit.content is None:
                    if not exists:
                        state.delete_page(rel)
                        return
                    if human:
                        bucket["kept"].append(rel)
                        state.delete_page(rel)
                        return
                    planned[target] = None
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
                        atomic_write(ws.state_dir / "proposed" / rel, stamp(content, None), durable=False)
                        return
                    text = stamp(content, before)
                    if text.encode("utf-8") != disk:
                        planned[target] = text.encode("utf-8")
                        bucket["updated"].append(rel)
                    return
                if human:
                    bucket["kept"].append(rel)
                    proposed = ws.state_dir / "proposed" / rel
                    atomic_write(proposed, stamp(edit.content, None), durable=False)
                    return
                text = stamp(edit.content, disk.decode("utf-8", "replace") if disk is not None else None)
                data = text.encode("utf-8")
                if disk != data:
                    planned[target] = data
                    intents.append((rel, content_hash(data), edit.kind, edit.owner))
                    bucket["updated" if exists else "created"].append(rel)
                state.put_page(rel, content_hash(data), edit.kind, edit.owner)

            for edit in result.edits:
                owner = edit.owner if edit.kind == "source" and edit.owner in refs else None
                bucket = per_source.setdefault(owner, {"created": [], "updated": [], "removed": [], "kept": []}) if owner else batch_changes
                apply(edit, bucket)

            # removed sources: drop their pages
            for path, page in sorted(removed.items()):
                bucket = per_source.setdefault(path, {"created": [], "updated": [], "removed": [], "kept": []})
                if page:
                    apply(PageEdit(page, None, "source", path), bucket)
                state.delete_source(path)
                report.removed_sources.append(path)
            # renamed sources: the old page goes, the new one was rendered above
            for new, old in sorted(renamed.items()):
                old_page = rows[old].page
                if old_page and old_page != refs[new].page:
                    apply(PageEdit(old_page, None, "source", old), per_source.setdefault(new, {"created": [], "updated": [], "removed": [], "kept": []}))
                state.delete_source(old)
                report.renamed.append((old, new))

            journal.record(intents)
            for target, data in planned.items():
                if data is None:
                    target.unlink(missing_ok=True)
                else:
                    atomic_write(target, data, durable=False)

            # --- state rows and log entries per source
            for path, ref in sorted(refs.items()):
                outcome = outcomes.get(path)
                f = current[path]
                if outcome is None:
                    # a backend reports only the sources it did something about: the others
                    # keep their row as it is
                    if path not in changed and path not in renamed and rows.get(path) is not None:
                        report.unchanged += 1
                    continue
                if outcome.status in ("skipped", "failed"):
                    if path in vanished:
                        continue  # read again next run; its row stays as it was
                    row = rows.get(path)
                    attempts = (row.attempts + 1) if row and row.sha256 == ref.sha256 else 1
                    state.put_source(SourceRow(path, ref.sha256, f.size, f.mtime_ns, None, outcome.status, outcome.reason, attempts, ()))
                    (report.skipped if outcome.status == "skipped" else report.failed).append((path, outcome.reason or ""))
                    continue
                row = SourceRow(path, ref.sha256, f.size, f.mtime_ns, ref.page, "compiled", None, 0, outcome.concepts)
                if rows.get(path) != row:  # 10k unchanged rows are not written again
                    state.put_source(row)
                if path in changed or path in renamed:
                    report.compiled.append(path)
                else:
                    report.unchanged += 1
            for path, reason in report.skipped:
                entries.append(log_page.LogEntry("skip", path, (f"- reason: {reason}",)))
            for path, reason in report.failed:
                spent = outcomes[path].usage if path in outcomes else {}
                # a model backend may have spent tokens before it failed; the log says how many
                lines = [f"- error: {reason}"]
                if spent:
                    lines.append("- tokens: " + ", ".join(f"{k} {v}" for k, v in sorted(spent.items())))
                if path in outcomes and outcomes[path].cost_usd is not None:
                    lines.append(f"- cost: ~${outcomes[path].cost_usd:.4f} (estimate at list prices)")
                entries.append(log_page.LogEntry("fail", path, tuple(lines)))
            for old, new in report.renamed:
                changes = per_source.get(new, {})
                entries.append(log_page.LogEntry("rename", f"{old} -> {new}", _change_lines(changes)))
            for path in sorted(changed):
                if path in skipped_now or path not in outcomes:
                    continue
                changes = per_source.get(path, {})
                title = outcomes[path].title or path
                lines = _change_lines(changes)
                usage = outcomes[path].usage
                if usage:
                    lines.append("- tokens: " + ", ".join(f"{k} {v}" for k, v in sorted(usage.items())))
                if outcomes[path].cost_usd is not None:
                    lines.append(f"- cost: ~${outcomes[path].cost_usd:.4f} (estimate at list prices)")
                entries.append(log_page.LogEntry("ingest", f"{title} ({path})", lines))
            for path in report.removed_sources:
                entries.append(log_page.LogEntry("remove", path, _change_lines(per_source.get(path, {}))))
            for bucket in [batch_changes, *per_source.values()]:
                for key in ("created", "updated", "removed", "kept"):
                    getattr(report, key).extend(bucket.get(key, []))

            # --- timelines (wiki/facts/) and index.md, regenerated by code
            compiled_rows = {p: r for p, r in state.sources().items() if r.status == "compiled" and r.page}
            in_collection = raw_tree.collections(compiled_rows)
            fact_changes = timelines.write(
                ws, state, {p: (r.sha256, in_collection[p]) for p, r in compiled_rows.items()},
                {p: r.page for p, r in compiled_rows.items() if r.page})
            state.prune_analyses(r.sha256 for r in refs.values())
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
                summary = _change_lines(batch_changes)
                summary += log_page.list_lines("index", [p for p, _ in index_changes])
                summary.append(
                    f"- sources: {len(report.compiled)} compiled, {report.unchanged} unchanged, "
                    f"{len(report.removed_sources)} removed, {len(report.skipped)} skipped, {len(report.failed)} failed"
                )
                if report.refused:
                    summary.append(f"- refused: {len(report.refused)} edits that would change what a person wrote "
                                   "or break a guard (see the compile report)")
                summary.append(f"- backend: {backend.name}, {report.seconds:.2f} s")
                compiled_now = len(report.compiled) + report.unchanged
                return [*entries, log_page.LogEntry("compile", f"{compiled_now} sources", summary)]

            history.finish(ws, settings, operation="compile", entries=log_entries, paths=written, state=state)
            # pages were written without a per-file fsync; make them durable before state.db
            # records them as written (the transaction commits when this block ends)
            os.sync()
        # committed: state.db now records every page the journal named
        journal.clear()
        return report
    finally:
        state.close()


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
    """One catalog entry per page; with state, pages unchanged since last time are not re-read."""
    return index_page.collect(ws, state)[0]


write_index = index_page.write_index  # the compiler, lint, query and undo all regenerate it one way

"""History: every operation that changes wiki/ becomes one git commit, and can be undone.

The wiki is just a git repository of Markdown files. When the workspace is inside a git
work tree (or `git = true`), each operation (a compile batch, a lint fix, a filed answer)
is committed as exactly the files it changed, with a message that mirrors its log.md
entry and a `Wikimem-Operation:` trailer. `undo` reverts one such commit as a new commit.

We drive the git command line through plumbing (a temporary index, write-tree,
commit-tree, update-ref) instead of `git add` + `git commit`, because that is the only
way to commit a handful of paths while leaving the user's own index untouched: whatever
they have staged elsewhere stays staged, nothing outside wiki/ is ever staged, and no
pre-commit hook of theirs runs on (or rewrites) our generated pages.

Here: `finish` (the end of every operation that writes wiki/), `record`, the operations log
and `undo`. The git plumbing is in gitrepo.py. state.db is derived from the pages, so a wiki
pulled from a teammate is reconciled by `adopt.sync` at the start of the next compile: pages whose latest commit is a wikimem operation
are adopted as wikimem's own (not mistaken for human edits) and their sources are marked
up to date, so nothing already compiled is compiled again.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import index_page, log_page
from .errors import UnsafePath, UsageError, WikimemError
from .ownership import PageWrite, tracked, write_pages
from .pages import FrontMatterError, content_hash, loads_page
from .state import SourceRow, State
from .workspace import Workspace, file_sha256, writer_lock

if TYPE_CHECKING:
    from .config import Settings

from .gitrepo import (  # noqa: F401 - re-exported: the history's plumbing, as callers knew it
    FALLBACK_IDENT,
    GENERATED,
    TRAILER,
    UNDOES,
    GitError,
    Repo,
    blobs_at,
    commit_paths,
    entry_chunks,
    head_commit,
    merge_log,
    merge_log_main,
    nul_list,
    operation_in_progress,
    prepare,
    read_or_none,
    repository,
    require_repository,
    warned,
)

log = logging.getLogger("wikimem.history")

PAST = {"ingest": "ingested", "remove": "removed", "rename": "renamed", "skip": "skipped", "fail": "failed"}


# --- the repository -------------------------------------------------------------------------


# --- committing an operation ----------------------------------------------------------------


def compose_message(operation: str, entries: Sequence[log_page.LogEntry]) -> str:
    """Subject and body mirroring the log.md entries (without their timestamps)."""
    details = [e for e in entries if e.operation != operation]
    main = next((e for e in entries if e.operation == operation), None)
    if len(details) == 1:
        subject = f"{details[0].operation} {details[0].subject}"
    elif details:
        counts = Counter(e.operation for e in details)
        subject = ", ".join(f"{n} {PAST.get(op, op)}" for op, n in sorted(counts.items()))
        if main:
            subject += f" (of {main.subject})"
    elif main:
        subject = main.subject
    else:
        subject = "wiki changed"
    subject = " ".join(f"wikimem {operation}: {subject}".split())
    if len(subject) > 100:
        subject = subject[:99] + "…"
    body = "\n\n".join(
        "\n".join([f"{e.operation} | {' '.join(e.subject.split())}", *e.lines]) for e in entries
    )
    return subject + ("\n\n" + body if body else "")


def finish(
    ws: Workspace,
    settings: Settings,
    *,
    operation: str,
    entries: Sequence[log_page.LogEntry] | Callable[[list[tuple[str, str]]], Sequence[log_page.LogEntry]],
    paths: Iterable[str | os.PathLike[str]],
    index: bool = True,
    state: Any = None,
    warn: Callable[[str], object] | None = None,
) -> list[tuple[str, str]]:
    """The end of every operation that writes wiki/, in one place: regenerate index.md (by
    code, never a model), append the operation's entries to log.md, and commit what it wrote
    (in a git work tree), in that order. `entries` may be a function of the index files
    written ([(path, "created" | "updated")]: an entry that lists them); `index=False` when the
    caller regenerated it already. Nothing is logged or committed when there is nothing to say.
    Returns the index files written, as write_index gives them.

    index.md or log.md that is a symbolic link or a special file is neither written through nor
    replaced: the operation goes on without it and says so once (`warn`, else the log)."""
    say = warn if warn is not None else log.warning
    changes: list[tuple[str, str]] = []
    if index:
        try:
            changes = index_page.write_index(ws, state)
        except UnsafePath as exc:
            say(f"index.md not written: {exc}")
    logged = list(entries(changes) if callable(entries) else entries)
    written = [*paths, *(p for p, _ in changes)]
    if logged:
        try:
            log_page.append(ws.wiki / "log.md", logged)
            written.append("log.md")
        except UnsafePath as exc:
            say(f"log.md not appended to: {exc}")
    if logged or written:
        record(ws, settings, operation=operation, entries=logged, paths=written)
    return changes


def record(
    ws: Workspace,
    settings: Settings,
    *,
    operation: str,
    paths: Iterable[str | os.PathLike[str]],
    entries: Sequence[log_page.LogEntry] = (),
    message: str | None = None,
) -> str | None:
    """Commit the `paths` an operation changed; returns the commit, or None.

    Paths are wiki-relative ("sources/x.md", "log.md"); "wiki/sources/x.md" and absolute
    paths inside wiki/ are accepted too. The one call every operation that writes wiki/
    makes after appending its log.md entry (compile does; lint --fix and query --save must
    too), with the entries it appended so the message mirrors them. Never raises: a failure
    to commit is logged as a warning and the operation's own result stands.
    """
    try:
        repo = repository(ws, settings)
        if repo is None:
            return None
        changed = [*(_wiki_rel(ws, p) for p in paths), *prepare(ws, repo)]
        return commit_paths(repo, changed, message or compose_message(operation, entries),
                            {TRAILER: operation}, ws)
    except Exception as exc:  # noqa: BLE001 - history must never break the operation it records
        log.warning("could not commit the %s to git: %s", operation, exc)
        log.debug("git commit failed", exc_info=True)
        return None


def _wiki_rel(ws: Workspace, path: str | os.PathLike[str]) -> str:
    """A wiki-relative path from the forms operations hold: relative to wiki/, to the
    workspace ("wiki/..."), or absolute. Anything outside wiki/ comes back unusable ("")."""
    text = os.fspath(path)
    if os.path.isabs(text):
        try:
            return Path(text).resolve().relative_to(ws.wiki.resolve()).as_posix()
        except ValueError:
            return ""
    return text.replace("\\", "/").removeprefix("./").removeprefix("wiki/")


# --- reading history ------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    commit: str
    short: str
    operation: str
    subject: str
    date: str  # ISO 8601, author date
    author: str
    files: tuple[str, ...]  # wiki-relative
    undoes: str | None = None  # the commit an undo reverted
    undone_by: str | None = None  # the undo commit that reverted this one (None when in effect)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["files"] = list(self.files)
        return data


_FORMAT = (f"%x1d%H%x1f%h%x1f%aI%x1f%an%x1f%s%x1f%(trailers:key={TRAILER},valueonly,separator=%x2C)"
           f"%x1f%(trailers:key={UNDOES},valueonly,separator=%x2C)%x1e")


def _log(repo: Repo, rev: str, *extra: str, operations_only: bool = True,
         paths: Sequence[str] | None = None) -> list[Operation]:
    args = ["log", f"--format={_FORMAT}", "--name-only", "-z", "--no-renames", *extra]
    if operations_only:
        args.append(f"--grep=^{TRAILER}: ")
    proc = repo.git(*args, rev, "--", *(paths or [repo.pathspec]), check=False)
    if proc.returncode != 0:
        return []
    ops: list[Operation] = []
    for chunk in proc.stdout.split(b"\x1d")[1:]:
        header, _, names = chunk.partition(b"\x1e")
        fields = header.decode("utf-8", "replace").split("\x1f")
        if len(fields) < 7:
            continue
        commit, short, date, author, subject, op, undoes = fields[:7]
        files = tuple(r for r in (repo.rel(n.strip("\n")) for n in nul_list(names) if n.strip("\n")) if r)
        op = op.strip()
        # the subject without the "wikimem compile: " prefix the operation column already says
        subject = subject.removeprefix(f"wikimem {op}: ") if op else subject
        ops.append(Operation(commit, short, op, subject, date, author, files, undoes.strip() or None))
    return ops


def _mark_undone(ops: list[Operation]) -> list[Operation]:
    """Fill undone_by, oldest first: undoing an undo (a redo) puts its target back in effect."""
    by_commit = {op.commit: op for op in ops}
    undone: dict[str, str] = {}
    for op in reversed(ops):
        if not op.undoes:
            continue
        target = by_commit.get(op.undoes)
        if target is not None and target.undoes:
            undone.pop(target.undoes, None)
        undone[op.undoes] = op.commit
    return [Operation(**{**asdict(op), "files": op.files, "undone_by": undone.get(op.commit)}) for op in ops]


HELD_REASON = "held by wikimem undo; compiled again when the file changes"


def held_sources(ws: Workspace) -> list[str]:
    """Sources an undo holds back: the compiler leaves them alone until their file changes."""
    if not ws.state_db.exists():
        return []

    state = State(ws.state_db)
    try:
        return sorted(p for p, row in state.sources().items() if row.status == "skipped" and row.reason == HELD_REASON)
    finally:
        state.close()


def operations(ws: Workspace, settings: Settings, limit: int | None = 20) -> list[Operation]:
    """The recent operations recorded in git, newest first."""
    repo = require_repository(ws, settings)
    if head_commit(repo) is None:
        return []
    return _mark_undone(_log(repo, "HEAD", *([f"-n{limit}"] if limit else [])))


# --- undo -----------------------------------------------------------------------------------


@dataclass
class UndoResult:
    undone: Operation
    commit: str | None = None
    restored: list[str] = field(default_factory=list)  # pages put back as they were before
    removed: list[str] = field(default_factory=list)  # pages the operation had created
    held: list[str] = field(default_factory=list)  # sources not compiled again until they change
    index: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "undone": self.undone.to_json(), "commit": self.commit, "restored": self.restored,
            "removed": self.removed, "held": self.held, "index": self.index, "dry_run": self.dry_run,
        }


def _pick(repo: Repo, ops: list[Operation], target: str | None) -> Operation:
    if not ops:
        raise WikimemError("no wikimem operations in this repository's history yet; nothing to undo")
    if target is None:
        for op in ops:
            if not op.undoes and not op.undone_by:
                return op
        raise WikimemError("every operation in the history is already undone; nothing to undo")
    kinds = {op.operation for op in ops}
    if target in kinds:
        for op in ops:
            if op.operation == target and not op.undone_by:
                return op
        raise WikimemError(f"every {target} operation is already undone; see: wikimem history")
    proc = repo.git("rev-parse", "-q", "--verify", f"{target}^{{commit}}", check=False)
    commit = proc.stdout.decode().strip() if proc.returncode == 0 else ""
    if not commit:
        raise UsageError(
            f"no operation or commit named {target!r}; give a commit from `wikimem history` "
            f"or one of: {', '.join(sorted(kinds))}"
        )
    for op in ops:
        if op.commit == commit:
            if op.undone_by:
                raise WikimemError(
                    f"{op.short} ({op.operation}) is already undone by {op.undone_by[:7]}; "
                    f"to redo it: wikimem undo {op.undone_by[:7]}"
                )
            return op
    raise UsageError(f"{target} is not a wikimem operation; see: wikimem history")


def _conflict(repo: Repo, op: Operation, path: str, disk: bytes | None, head_blob: bytes | None) -> tuple[str, str]:
    """Why a page no longer matches what the operation wrote (who changed it since), and what to do."""
    shown = f"wiki/{repo.rel(path)}"
    if disk != head_blob:
        return f"{shown} has uncommitted edits", "commit or discard them first"
    later = _log(repo, f"{op.commit}..HEAD", "-n1", operations_only=False, paths=[path])
    if later and later[0].operation:
        return (f"{shown} was changed again by {later[0].short} ({later[0].operation})",
                f"undo that first: wikimem undo {later[0].short}")
    if later:
        return (f"{shown} was edited by a person in {later[0].short} ({later[0].subject!r})",
                f"to revert anyway and merge by hand: git revert {op.short}")
    return f"{shown} was changed since", f"to revert anyway and merge by hand: git revert {op.short}"


def undo(
    ws: Workspace, settings: Settings, target: str | None = None, *, wait: float = 0.0, dry_run: bool = False
) -> UndoResult:
    """Revert one operation's commit as a new commit, and bring state.db in line with the pages.

    Refuses (changing nothing) when a page the operation wrote has been changed since, by a
    person or by a later operation, rather than lose that change.
    """
    repo = require_repository(ws, settings)
    busy = operation_in_progress(repo)
    if busy:
        raise WikimemError(f"a git {busy} is in progress; finish or abort it, then undo")
    with writer_lock(ws, wait=wait, holder="wikimem undo"):
        ops = operations(ws, settings, limit=None)
        op = _pick(repo, ops, target)
        parent_proc = repo.git("rev-parse", "-q", "--verify", f"{op.commit}^", check=False)
        parent = parent_proc.stdout.decode().strip() if parent_proc.returncode == 0 else None
        # .gitattributes came with the first commit and serves every later one: it stays
        pages = [f for f in op.files
                 if f not in (*GENERATED, ".gitattributes") and not index_page.is_catalog(f)]
        if not pages:
            raise WikimemError(f"{op.short} ({op.operation}) changed only index.md and log.md; nothing to undo")
        full = [repo.path(p) for p in pages]
        after = blobs_at(repo, op.commit, full)
        before = blobs_at(repo, parent, full)
        current = blobs_at(repo, "HEAD", full)
        disk = {p: read_or_none(ws.wiki / (repo.rel(p) or p)) for p in full}
        staged = set(nul_list(repo.git("diff-index", "--cached", "--name-only", "-z", "HEAD", "--", *full).stdout))
        problems = [_conflict(repo, op, p, disk[p], current[p]) for p in full if disk[p] != after[p]]
        problems += [(f"wiki/{repo.rel(p)} has staged changes", "commit or unstage them first") for p in sorted(staged)]
        if problems:
            more = f" (and {len(problems) - 1} more pages)" if len(problems) > 1 else ""
            what, hint = problems[0]
            raise WikimemError(f"cannot undo {op.short} ({op.operation}): {what}{more}; nothing was changed; {hint}")
        result = UndoResult(undone=op, dry_run=dry_run)
        for p in full:
            rel = repo.rel(p) or p
            (result.restored if before[p] is not None else result.removed).append(rel)
        held = _held_sources(ws, pages, {repo.rel(p) or p: v for p, v in before.items()},
                             {repo.rel(p) or p: v for p, v in after.items()})
        result.held = sorted(r for r, keep in held.items() if keep is not None)
        if dry_run:
            return result
        # through the write journal (ownership.write_pages): an undo stopped halfway leaves the
        # pages it put back known as wikimem's, whichever version of wikimem wrote them first
        restores = []
        for p in full:
            rel = repo.rel(p) or p
            content = before[p]
            kind, owner = (_tracked(rel, content) or ("", None))[:2] if content is not None else ("", None)
            restores.append(PageWrite(rel, content, kind or "page", owner))
        write_pages(ws, restores, writer="undo")
        _restore_state(ws, pages, {repo.rel(p) or p: v for p, v in before.items()}, held)
        index_changes = index_page.write_index(ws)
        result.index = [p for p, _ in index_changes]
        lines = log_page.list_lines("restored", result.restored)
        lines += log_page.list_lines("removed", result.removed)
        lines += log_page.list_lines("held (compiled again when they change)", result.held)
        lines += log_page.list_lines("index", result.index)
        lines.append(f"- reverted: {op.short} ({op.date})")
        entry = log_page.LogEntry("undo", f"{op.operation} {op.short}: {op.subject}", lines)
        log_page.append(ws.wiki / "log.md", [entry])
        result.commit = commit_paths(
            repo, [*pages, *result.index, "log.md"], compose_message("undo", [entry]),
            {TRAILER: "undo", UNDOES: op.commit}, ws,
        )
        return result


def _page_meta(rel: str, data: bytes | None) -> tuple[str, list[str], str]:
    """(kind, sources, source_sha256) of a page version; blanks when absent or unreadable."""
    if data is None:
        return "", [], ""
    try:
        page = loads_page(rel, data.decode("utf-8", "replace"))
    except FrontMatterError:
        return "", [], ""
    return page.kind, page.sources, str(page.meta.get("source_sha256") or "")


_tracked = tracked  # how state.db records a page version (ownership.tracked)


def _held_sources(
    ws: Workspace, pages: list[str], before: Mapping[str, bytes | None], after: Mapping[str, bytes | None]
) -> dict[str, str | None]:
    """raw path -> its current sha when it must be held (not compiled again until it changes),
    None when its page now matches it (or it is gone from raw/)."""
    held: dict[str, str | None] = {}
    for rel in pages:
        kind_a, sources_a, _ = _page_meta(rel, after.get(rel))
        kind_b, sources_b, sha_b = _page_meta(rel, before.get(rel))
        for raw in {*(sources_a if kind_a == "source" else []), *(sources_b if kind_b == "source" else [])}:
            file = cited_raw_file(ws, raw)
            if file is None:
                continue
            if not file.is_file():
                held[raw] = None
                continue
            current = file_sha256(file)
            matches = kind_b == "source" and sources_b[:1] == [raw] and sha_b == current
            held[raw] = None if matches else current
    return held


def cited_raw_file(ws: Workspace, raw: str | None) -> Path | None:
    """The file a page's `sources:` entry names, when it is a path under raw/ (front matter is
    text anyone can edit, so nothing outside raw/ is ever read or recorded)."""
    if not raw or not raw.startswith("raw/") or ".." in raw.split("/") or "\x00" in raw:
        return None
    return ws.root / raw


def _restore_state(
    ws: Workspace, pages: list[str], before: Mapping[str, bytes | None], held: Mapping[str, str | None]
) -> None:
    """Bring state.db in line with the reverted pages.

    Page rows take the restored bytes (so they are wikimem's, not a person's edit). A source
    whose page now matches its raw file is compiled; one whose page was taken away or no
    longer matches is held as `skipped` at its current hash, so neither the next compile
    nor the daemon's rescan redoes the undone work until the file changes.
    """

    state = State(ws.state_db)
    try:
        with state.transaction():
            source_page: dict[str, str] = {}
            for rel in pages:
                data = before.get(rel)
                if data is None:
                    state.delete_page(rel)
                    continue
                tracked = _tracked(rel, data)
                if tracked is None:
                    continue  # answers, lint.md: not pages the compiler tracks in state
                kind, owner, _ = tracked
                state.put_page(rel, content_hash(data), kind, owner)
                if owner and kind == "source":  # a long source's part is not its page
                    source_page[owner] = rel
            for raw, sha in sorted(held.items()):
                file = cited_raw_file(ws, raw)
                if file is None:
                    continue
                if not file.is_file():
                    state.delete_source(raw)
                    continue
                st = file.stat()
                page = source_page.get(raw)
                if sha is None:
                    # concepts unknown (the page is an older render): re-rendered when next compiled
                    state.put_source(SourceRow(raw, file_sha256(file), st.st_size, st.st_mtime_ns, page,
                                               "compiled", None, 0, ()))
                else:
                    state.put_source(SourceRow(raw, sha, st.st_size, st.st_mtime_ns, page, "skipped",
                                               HELD_REASON, 0, ()))
    finally:
        state.close()


if __name__ == "__main__":
    sys.exit(merge_log_main(sys.argv[1:]))

"""A wiki pulled from a teammate, reconciled with state.db at the start of the next compile:
pages that certify themselves as wikimem's (pages.page_owner) are adopted as wikimem's own
(not mistaken for a person's edits) and their sources are marked up to date, so nothing
already compiled is compiled again; after a merge (or a rebase) the next compile runs its
backend, so the merged wiki becomes what one machine compiling the merged raw/ would write."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from . import index_page
from .pages import content_hash, page_owner
from .state import RENDER_PENDING, SourceRow
from .workspace import Workspace, file_sha256

if TYPE_CHECKING:
    from .config import Settings
    from .state import State

from .gitrepo import (
    GENERATED,
    TRAILER,
    Repo,
    blob_id,
    configure_merge,
    head_commit,
    ignore_state,
    mark_synced,
    nul_list,
    read_or_none,
    repository,
    synced_commit,
)
from .history import HELD_REASON, cited_raw_file
from .ownership import tracked as _tracked

log = logging.getLogger("wikimem.history")

def sync(ws: Workspace, settings: Settings, state: State) -> int:
    """Bring state.db in line with pages git changed underneath (a pull, merge, reset, revert).

    Called by the compiler before it plans. Without this, a pulled source page would be
    compiled again. A page is adopted as wikimem's when it certifies itself (its `wikimem:`
    line's digest is that of its text); a page written before wikimem certified its pages
    (no such line) when its file matches HEAD and either the latest commit that touched it is
    a wikimem operation or its content is exactly what some wikimem operation wrote (a `git
    revert` or `git reset` back to it). Anything a person wrote, committed or not, stays a
    person's edit. When the history came together from two lines (a merge, a rebase), the
    next compile renders what moved (state.RENDER_PENDING). Returns how many pages were
    adopted. Never raises.
    """
    try:
        repo = repository(ws, settings)
        if repo is None:
            return 0
        ignore_state(ws)
        configure_merge(repo)
        head = head_commit(repo)
        last = synced_commit(ws)
        if head is None or head == last:
            return 0
        known_last = last is not None and repo.git("cat-file", "-e", f"{last}^{{commit}}", check=False).returncode == 0
        if known_last and last is not None:
            # both directions: a pull moves forward, a reset moves back
            names = repo.git("diff", "--name-only", "-z", "--no-renames", last, head, "--", repo.pathspec).stdout
        else:
            names = repo.git("ls-tree", "-r", "-z", "--name-only", head, "--", repo.pathspec).stdout
        candidates = [rel for rel in (repo.rel(n) for n in nul_list(names)) if rel and _is_page(rel)]
        adopted = _adopt(ws, repo, state, head, candidates)
        # a merge (or a rebase: where this clone was and where it is now have parted) combined
        # pages two clones wrote from different sources: the next compile runs the backend over
        # the merged raw/ (and regenerates index.md). A fast-forward brings pages one clone
        # compiled from that very raw/, which are what a compile here would write.
        if known_last and last is not None:
            merges = repo.out("rev-list", "--merges", "--count", f"{last}..{head}")
            # neither where it was nor where it is comes first: rebased (a reset back is not)
            apart = (repo.git("merge-base", "--is-ancestor", last, head, check=False).returncode != 0
                     and repo.git("merge-base", "--is-ancestor", head, last, check=False).returncode != 0)
            if merges != "0" or apart:
                with state.transaction():
                    state.set_meta(RENDER_PENDING, True)
        mark_synced(ws, None, head)
        return adopted
    except Exception as exc:  # noqa: BLE001 - reconciling is an optimisation; compile goes on without it
        log.warning("could not reconcile state with git history: %s", exc)
        log.debug("sync failed", exc_info=True)
        return 0


def _is_page(rel: str) -> bool:
    return rel.endswith(".md") and rel not in (*GENERATED, "AGENTS.md") and not index_page.is_catalog(rel)


def _path_history(repo: Repo, head: str, paths: list[str]) -> dict[str, tuple[bool, set[str]]]:
    """For each repository path: is the latest non-merge commit that touched it a wikimem
    operation, and which blobs did wikimem operations write there. One git process."""
    out: dict[str, tuple[bool, set[str]]] = {}
    proc = repo.git("log", f"--format=%x1d%H%x1f%(trailers:key={TRAILER},valueonly,separator=%x2C)%x1e",
                    "--raw", "--no-abbrev", "-z", "--no-renames", head, "--", *paths)
    for chunk in proc.stdout.split(b"\x1d")[1:]:
        header, _, raw = chunk.partition(b"\x1e")
        is_op = bool(header.partition(b"\x1f")[2].strip())
        tokens = raw.lstrip(b"\0\n").split(b"\0")
        for meta, name in zip(tokens[0::2], tokens[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            path = name.decode("utf-8", "surrogateescape")
            blob = meta.split(b" ")[3].decode()
            _latest, blobs = out.setdefault(path, (is_op, set()))
            if is_op and set(blob) != {"0"}:
                blobs.add(blob)
    return out


def _adopt(ws: Workspace, repo: Repo, state: State, head: str, candidates: list[str]) -> int:
    pages = state.pages()
    rows = state.sources()
    # most candidates are this machine's own commits, already in state: skip those cheaply
    on_disk = {rel: read_or_none(ws.wiki / rel) for rel in candidates}
    candidates = [
        rel for rel in candidates
        if (on_disk[rel] is None and rel in pages)
        or (on_disk[rel] is not None and (rel not in pages or pages[rel][0] != content_hash(on_disk[rel] or b"")))
    ]
    if not candidates:
        return 0
    full = [repo.path(rel) for rel in candidates]
    listed = repo.git("ls-tree", "-z", head, "--", *full).stdout
    at_head = {}
    for entry in nul_list(listed):
        meta, _, path = entry.partition("\t")
        at_head[path] = meta.split(" ")[2]
    written = _path_history(repo, head, full)
    adopted = 0
    changed_pages: set[str] = set()
    with state.transaction():
        for rel in candidates:
            disk = on_disk[rel]
            says = page_owner(disk) if disk is not None else None
            if says is not None and says.stamped and not says.wikimems:
                continue  # its text is not what its digest says: a person's, committed or not
            disk_id = blob_id(disk, len(head)) if disk is not None else None
            certified = says is not None and says.wikimems
            if disk_id != at_head.get(repo.path(rel)) and not certified:
                continue  # not what HEAD holds: an uncommitted change, whoever made it owns it
            touched = repo.path(rel) in written
            latest_is_op, op_blobs = written.get(repo.path(rel), (False, set()))
            known = pages.get(rel)
            if disk is None:
                assert known is not None
                # deleted by a wikimem operation, or never part of this line of history (a
                # reset or checkout back to before it); a person's deletion is left to the compiler
                if touched and not latest_is_op:
                    continue
                owner = known[2] if known[1] == "source" else None
                row = rows.get(owner) if owner else None
                raw_file = cited_raw_file(ws, owner)
                state.delete_page(rel)
                adopted += 1
                if owner and row and row.page == rel and raw_file is not None:
                    if raw_file.is_file():
                        st = raw_file.stat()
                        state.put_source(SourceRow(owner, file_sha256(raw_file), st.st_size, st.st_mtime_ns, None,
                                                   "skipped", HELD_REASON, 0, ()))
                    else:
                        state.delete_source(owner)
                continue
            if not certified and not latest_is_op and disk_id not in op_blobs:
                continue  # a person's words: the compiler keeps them and proposes its own beside them
            tracked = _tracked(rel, disk)
            if tracked is None:
                continue  # answers, lint.md and the like are not the compiler's pages to track
            kind, owner, sha = tracked
            state.put_page(rel, content_hash(disk), kind, owner)
            adopted += 1
            if kind == "source" and owner:
                # the page now stands for another source than this clone's row says (two sources
                # wanted one name, and the merge gave it to the other): this clone's source is
                # compiled again, under a name of its own
                for other, row in rows.items():
                    if row.page == rel and other != owner:
                        state.delete_source(other)
            if kind == "part":
                continue  # a part of a long source's page: its source's row follows its own page
            changed_pages.add(rel)
            file = cited_raw_file(ws, owner)
            if owner and file is not None and sha:
                if file.is_file() and file_sha256(file) == sha:
                    st = file.stat()
                    # concepts unknown: the page may link others than this machine last rendered,
                    # so the offline backend renders it again when it next compiles
                    state.put_source(SourceRow(owner, sha, st.st_size, st.st_mtime_ns, rel, "compiled",
                                               None, 0, ()))
        # the offline backend skips a page whose inputs match what it last rendered; a page git
        # put back to an older version no longer is that render, so forget it and let the next
        # compile render it again (identical bytes are not rewritten, so a page pulled as-is
        # costs nothing)
        if changed_pages:
            state.forget_renders(changed_pages)
    return adopted

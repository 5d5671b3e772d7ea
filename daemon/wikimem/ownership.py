"""Whose a page is, and writing pages so that it stays known after a crash.

A page is wikimem's, free to be written again, when its bytes are what state.db last recorded
wikimem writing there, or when it certifies itself: its `wikimem:` line's digest is the digest
of its text (pages.page_owner). Anything else is a person's and is never overwritten. The
second test needs nothing but the page, so it holds in a clone, after a `git pull`, a backup
put back, or state.db rebuilt from the pages.

Every writer of pages (the compile, `lint --fix`, `query --save`, `undo`, a pull's sync) goes
through the one write journal (state.WriteJournal): what it is about to write is made durable
before the first page is, and state.db records it after the last. A writer stopped in between
(kill -9, a full disk) leaves pages the next writer takes back as wikimem's (`recover`), and
the pages an interrupted compile created that the compile redone would not have are removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .pages import FrontMatterError, content_hash, loads_page, page_owner, part_of
from .state import JOURNALLED_KINDS, State, WriteJournal, recover_pages
from .workspace import Workspace, atomic_write, remove_owned

# the kinds of page state.db records (and a journalled write records there); other pages a
# writer writes (answers) are journalled too, and recognised by their own digest
TRACKED = JOURNALLED_KINDS


def persons_page(data: bytes, known: tuple[str, str, str | None] | None) -> bool:
    """Whether a page's bytes are a person's: neither what state.db last recorded wikimem
    writing there (`known`: hash, kind, owner) nor a page that certifies itself as wikimem's
    (pulled from a teammate, left by a killed writer, read back after state.db was lost)."""
    if known is not None and known[0] == content_hash(data):
        return False
    return not page_owner(data).wikimems


def tracked(rel: str, data: bytes) -> tuple[str, str | None, str] | None:
    """How state.db records a page version the compiler tracks: (kind, the source it belongs
    to, its source_sha256), kind `part` for a part of a long source's page (pages.part_of);
    None for the pages it does not track (answers, lint.md) or unreadable ones."""
    try:
        page = loads_page(rel, data.decode("utf-8", "replace"))
    except FrontMatterError:
        return None
    if page.kind not in ("source", "concept"):
        return None
    owner = page.sources[0] if page.kind == "source" and page.sources else None
    kind = "part" if page.kind == "source" and part_of(page.meta) is not None else page.kind
    return kind, owner, str(page.meta.get("source_sha256") or "")


def recover(ws: Workspace, state: State) -> tuple[list[str], list[str]]:
    """Take back what an interrupted writer left (state.recover_pages), then empty the journal:
    every writer does this first, under the writer lock, so the journal it writes to holds only
    its own lines. Returns (pages taken back, pages removed)."""
    journal = WriteJournal(ws.state_dir)
    interrupted = journal.read()
    if not interrupted:
        return [], []
    with state.transaction():
        adopted, removed = recover_pages(ws.wiki, state, interrupted)
    journal.clear()
    return adopted, removed


@dataclass(frozen=True)
class PageWrite:
    """One page a writer writes (`data`) or removes (None); `kind` and `owner` as state.db
    records them (source, part, concept; answer for a filed answer, which it does not)."""

    rel: str  # wiki-relative
    data: bytes | None
    kind: str
    owner: str | None = None


def write_pages(ws: Workspace, writes: Iterable[PageWrite], *, writer: str, state: State | None = None) -> None:
    """Write pages as every writer but the compile does (the compile batches its own fsyncs,
    compiler.PageWriter): take back what an interrupted writer left, journal these pages, write
    each durably, record them in state.db in one transaction, empty the journal. Killed at any
    point, the pages written so far are the journal's, and the next writer records them."""
    todo = list(writes)
    if not todo:
        return
    own = state is None
    db = State(ws.state_db) if state is None else state
    try:
        recover(ws, db)
        journal = WriteJournal(ws.state_dir)
        # never `created`: what these writers write is meant to stay (an answer filed, a page an
        # undo put back), so a stopped write is recorded, not removed as a compile's would be
        journal.record([(w.rel, content_hash(w.data), w.kind, w.owner, False) for w in todo if w.data is not None],
                       writer=writer)
        for w in todo:
            target = ws.wiki / w.rel
            # never through a link, never a link's target (workspace.owned)
            if w.data is None:
                remove_owned(ws.wiki, target)
            else:
                atomic_write(target, w.data, base=ws.wiki)
        with db.transaction():
            for w in todo:
                if w.kind not in TRACKED:
                    continue
                if w.data is None:
                    db.delete_page(w.rel)
                else:
                    db.put_page(w.rel, content_hash(w.data), w.kind, w.owner)
        journal.clear()
    finally:
        if own:
            db.close()

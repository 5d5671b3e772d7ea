"""The watch handler (synthetic events), the overflow hook, and a real watchdog observer."""

from __future__ import annotations

import logging
import os
import queue
from collections.abc import Callable
from pathlib import Path

import pytest
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
)

from waiting import wait_for
from wikimem.watcher import (
    OverflowWatch,
    RawEventHandler,
    Work,
    relevant_path,
    start_observer,
    stop_observer,
    watch_is_healthy,
)
from wikimem.workspace import Workspace


@pytest.fixture
def collected(ws: Workspace) -> tuple[RawEventHandler, list[Work]]:
    items: list[Work] = []
    return RawEventHandler(ws, items.append), items


def raw(ws: Workspace, rel: str) -> str:
    return os.path.join(str(ws.raw), *rel.split("/"))


# ---------------------------------------------------------------- the filter
@pytest.mark.parametrize("name", [
    "notes.md", "paper.pdf", "deep/er/page.html", "Grüße 2024.txt", "dir with space/a b.md",
])
def test_relevant_paths_become_workspace_relative(ws: Workspace, name: str) -> None:
    assert relevant_path(ws, raw(ws, name)) == f"raw/{name}"


@pytest.mark.parametrize("name", [
    ".hidden.md", ".notes.md.swp", "notes.md.swp", "notes.md.swx", "~lock.docx", ".#notes.md",
    "paper.pdf.part", "paper.pdf.crdownload", "x.md.tmp", "notes.md~", "Unconfirmed 1.crdownload",
    ".git/objects/ab/cdef", ".obsidian/workspace.json", "sub/.DS_Store", ".wikimem/state.db",
])
def test_editor_and_download_noise_is_ignored(ws: Workspace, name: str) -> None:
    assert relevant_path(ws, raw(ws, name)) is None


def test_paths_outside_raw_are_ignored(ws: Workspace) -> None:
    for path in (ws.wiki / "sources" / "a.md", ws.state_dir / "status.json", ws.root / "wikimem.toml",
                 Path(str(ws.raw) + "-other") / "a.md", ws.raw):
        assert relevant_path(ws, str(path)) is None


def test_bytes_paths_are_understood(ws: Workspace) -> None:
    assert relevant_path(ws, os.fsencode(raw(ws, "a.md"))) == "raw/a.md"


# ---------------------------------------------------------------- synthetic events
@pytest.mark.parametrize("cls, kind", [
    (FileCreatedEvent, "created"), (FileModifiedEvent, "modified"),
    (FileClosedEvent, "closed"), (FileDeletedEvent, "deleted"),
])
def test_file_events_enqueue_one_change(ws: Workspace, collected, cls, kind) -> None:
    handler, items = collected
    handler.dispatch(cls(raw(ws, "notes/a.md")))
    assert items == [Work("change", "raw/notes/a.md", kind)]


@pytest.mark.parametrize("event", [
    FileOpenedEvent("X"), FileClosedNoWriteEvent("X"), FileAttribEvent("X"),
])
def test_reads_and_attribute_changes_do_not_enqueue(ws: Workspace, collected, event) -> None:
    # the compiler opens and reads raw/ files; reacting to that would loop forever
    handler, items = collected
    event.src_path = raw(ws, "a.md")
    handler.dispatch(event)
    assert items == []


def test_noise_events_do_not_enqueue(ws: Workspace, collected) -> None:
    handler, items = collected
    for name in (".a.md.swp", "a.md.part", "b.pdf.crdownload", "~a.md", ".#a.md", "a.md.tmp"):
        handler.dispatch(FileCreatedEvent(raw(ws, name)))
        handler.dispatch(FileModifiedEvent(raw(ws, name)))
        handler.dispatch(FileClosedEvent(raw(ws, name)))
    handler.dispatch(FileModifiedEvent(str(ws.wiki / "index.md")))
    handler.dispatch(FileCreatedEvent(str(ws.state_dir / "status.json")))
    assert items == []


def test_save_by_rename_reaches_the_destination(ws: Workspace, collected) -> None:
    # how vim (backupcopy=no), gedit, VS Code and most download managers finish a write
    handler, items = collected
    handler.dispatch(FileMovedEvent(raw(ws, ".notes.md.swp"), raw(ws, "notes.md")))
    handler.dispatch(FileMovedEvent(raw(ws, "notes.md.tmp"), raw(ws, "notes.md")))
    handler.dispatch(FileMovedEvent(raw(ws, "paper.pdf.crdownload"), raw(ws, "paper.pdf")))
    assert items == [
        Work("change", "raw/notes.md", "moved"),
        Work("change", "raw/notes.md", "moved"),
        Work("change", "raw/paper.pdf", "moved"),
    ]


def test_moves_within_raw_reach_both_ends(ws: Workspace, collected) -> None:
    handler, items = collected
    handler.dispatch(FileMovedEvent(raw(ws, "a.md"), raw(ws, "sub/b.md")))
    assert items == [Work("change", "raw/a.md", "deleted"), Work("change", "raw/sub/b.md", "moved")]


def test_move_out_of_raw_or_to_noise_is_a_delete(ws: Workspace, collected) -> None:
    handler, items = collected
    handler.dispatch(FileMovedEvent(raw(ws, "a.md"), str(ws.root / "elsewhere.md")))
    handler.dispatch(FileMovedEvent(raw(ws, "b.md"), raw(ws, "b.md~")))
    assert items == [Work("change", "raw/a.md", "deleted"), Work("change", "raw/b.md", "deleted")]


def test_folder_events_enqueue_a_dir_change(ws: Workspace, collected) -> None:
    handler, items = collected
    handler.dispatch(DirCreatedEvent(raw(ws, "papers")))
    handler.dispatch(DirDeletedEvent(raw(ws, "old")))
    handler.dispatch(DirMovedEvent(raw(ws, "x"), raw(ws, "y")))
    handler.dispatch(DirCreatedEvent(raw(ws, ".git")))
    assert items == [
        Work("change", "raw/papers", "dir"), Work("change", "raw/old", "dir"),
        Work("change", "raw/x", "dir"), Work("change", "raw/y", "dir"),
    ]


def test_handler_never_raises(ws: Workspace) -> None:
    """An exception escaping a handler kills watchdog's observer thread; ours swallow and
    fall back to asking for a rescan."""
    calls: list[Work] = []

    def put(work: Work) -> None:
        calls.append(work)
        if work.kind == "change":
            raise RuntimeError("queue broke")

    handler = RawEventHandler(ws, put)
    handler.dispatch(FileCreatedEvent(raw(ws, "a.md")))
    assert handler.errors == 1
    assert calls[-1] == Work("rescan", reason="watch handler error")

    def always_fails(work: Work) -> None:
        raise RuntimeError("nothing works")

    broken = RawEventHandler(ws, always_fails)
    broken.dispatch(FileCreatedEvent(raw(ws, "a.md")))  # must not raise either
    assert broken.errors == 1


def test_overflow_warning_becomes_a_rescan() -> None:
    items: list[Work] = []
    hook = OverflowWatch(items.append)
    logger = logging.getLogger("watchdog.observers.inotify_c")
    logger.addHandler(hook)
    try:
        logger.warning("Inotify queue overflowed; filesystem events were lost")
        logger.warning("something else")
    finally:
        logger.removeHandler(hook)
    assert items == [Work("rescan", reason="the watcher's event queue overflowed")]


# ---------------------------------------------------------------- a real observer
@pytest.mark.parametrize("polling", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["native", "polling"])
def test_real_observer_reports_drops_edits_renames_and_deletes(ws: Workspace, polling: bool) -> None:
    items: queue.Queue[Work] = queue.Queue()
    handler = RawEventHandler(ws, items.put)
    observer, kind = start_observer(ws, handler, polling=polling, poll_interval=0.2)
    seen: list[Work] = []

    def saw(path: str, *events: str) -> Callable[[], bool]:
        def check() -> bool:
            while True:
                try:
                    seen.append(items.get_nowait())
                except queue.Empty:
                    break
            return any(w.path == path and w.event in events for w in seen)
        return check

    try:
        assert watch_is_healthy(observer, ws.raw)
        assert kind == ("polling" if polling else kind)
        (ws.raw / "sub").mkdir()
        (ws.raw / "sub" / "a.md").write_text("# A\n\nfirst\n", encoding="utf-8")
        wait_for(saw("raw/sub/a.md", "created", "modified", "closed"), what="the drop")
        # an editor's save-by-rename
        tmp = ws.raw / "sub" / ".a.md.swp"
        tmp.write_text("# A\n\nsecond\n", encoding="utf-8")
        seen.clear()
        os.replace(tmp, ws.raw / "sub" / "a.md")
        # native: a move onto a.md; polling sees a.md replaced (deleted, created)
        wait_for(saw("raw/sub/a.md", "moved", "modified", "created"), what="the save-by-rename")
        os.rename(ws.raw / "sub" / "a.md", ws.raw / "b.md")
        wait_for(saw("raw/b.md", "moved", "created"), what="the rename's destination")
        (ws.raw / "b.md").unlink()
        wait_for(saw("raw/b.md", "deleted"), what="the delete")
        assert not any(w.path and ".swp" in w.path for w in seen)
    finally:
        stop_observer(observer)
    assert not observer.is_alive()


def test_falls_back_to_polling_when_native_watching_fails(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """On a tree larger than fs.inotify.max_user_watches the native observer cannot start;
    the daemon must still see changes (by polling) and say why."""
    import errno

    import watchdog.observers
    from watchdog.observers.inotify import InotifyObserver

    class NoWatchesLeft(InotifyObserver):
        def start(self) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", NoWatchesLeft)
    items: queue.Queue[Work] = queue.Queue()
    with caplog.at_level(logging.WARNING, logger="wikimem.daemon"):
        observer, kind = start_observer(ws, RawEventHandler(ws, items.put), poll_interval=0.1)
    try:
        assert kind == "polling"
        assert "max_user_watches" in caplog.text
        (ws.raw / "a.md").write_text("# A\n", encoding="utf-8")
        work = wait_for(lambda: None if items.empty() else items.get(), what="an event from the polling observer")
        assert work.path == "raw/a.md"
    finally:
        stop_observer(observer)


def test_a_symlinked_raw_folder_is_watched_at_its_target(tmp_path: Path) -> None:
    """raw/ -> ~/Dropbox/papers: inotify does not follow a symlinked watch root, so the
    observer watches the target and events still come back as raw/... paths."""
    from wikimem.init import init_workspace

    target = tmp_path / "elsewhere" / "papers"
    target.mkdir(parents=True)
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    ws.raw.rmdir()
    ws.raw.symlink_to(target, target_is_directory=True)
    items: queue.Queue[Work] = queue.Queue()
    observer, _ = start_observer(ws, RawEventHandler(ws, items.put))
    try:
        (target / "a.md").write_text("# A\n", encoding="utf-8")
        work = wait_for(lambda: None if items.empty() else items.get(), what="an event through the symlink")
        assert work.path == "raw/a.md"
    finally:
        stop_observer(observer)

"""Watch raw/ with watchdog: turn file-system events into work items, and nothing more.

Handlers run on watchdog's observer thread, and an exception there silently kills that
thread (the daemon would go on running, deaf). So the handler here only filters and
enqueues, wraps everything in a catch-all, and leaves all reading and writing to the
single worker in `service`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import watchdog.observers
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from .naming import is_ignored_name
from .raw_tree import IGNORE_FILE
from .workspace import Workspace

log = logging.getLogger("wikimem.daemon")

# What reaches the handler. Left out on purpose: opened/closed-without-writing (the
# compiler reads raw/, and reacting to its own reads would loop), attribute changes
# (chmod, touch: the content is the same) and directory "modified" noise.
EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]


@dataclass(frozen=True)
class Work:
    """One item on the daemon's queue.

    kind: change (a path under raw/ changed), rescan (compare all of raw/ against state),
    lint, retry (failed sources are due again), stop.
    event: for a change, what happened to the path: created | modified | closed | deleted |
    moved | dir (a folder came, went or moved, so everything under it did too).
    """

    kind: str
    path: str | None = None
    event: str = ""
    reason: str = ""


Put = Callable[[Work], None]


def watched_folder(ws: Workspace) -> str:
    """The folder the observer watches: raw/ itself, or its target when raw/ is a symlink
    (inotify does not follow a symlinked watch root, so watching the link would be deaf)."""
    return os.path.realpath(ws.raw)


def relevant_path(ws: Workspace, path: str | bytes, watched: str | None = None) -> str | None:
    """The workspace-relative path (raw/...) when an event on `path` matters, else None.

    Pure string work (no file-system calls) so it cannot block or fail on a file that is
    already gone. Refused: anything outside raw/, anything under a dot-folder (raw_tree.scan
    skips those too), editor and download noise (swap files, `~` backups, `.part`,
    `.crdownload`, `.tmp`), and the wiki's own folders should raw/ ever contain them.
    """
    text = os.fsdecode(path)
    for raw in (str(ws.raw), watched):
        if raw and text.startswith(raw + os.sep):
            break
    else:
        return None
    inner = text[len(raw) + 1:]
    if not inner:
        return None
    parts = inner.split(os.sep)
    if parts[-1] == IGNORE_FILE and not any(part.startswith(".") for part in parts[:-1]):
        # a changed .wikimemignore changes which files are sources: the compile rescans raw/
        return "raw/" + "/".join(parts)
    if any(part.startswith(".") for part in parts):  # dotfiles, .git/, .wikimem/, .#lock
        return None
    if is_ignored_name(parts[-1]):
        return None
    rel = "raw/" + "/".join(parts)
    return rel


class RawEventHandler(FileSystemEventHandler):
    """Filters raw/ events and enqueues `Work("change", ...)`; never raises."""

    def __init__(self, ws: Workspace, put: Put):
        super().__init__()
        self.ws = ws
        self.put = put
        self.errors = 0
        self.watched = watched_folder(ws)

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            for work in self.translate(event):
                self.put(work)
        except Exception:  # noqa: BLE001 - an exception here would kill the observer thread
            self.errors += 1
            log.exception("watch handler failed on %r; the periodic rescan will catch up", event)
            try:
                self.put(Work("rescan", reason="watch handler error"))
            except Exception:  # noqa: BLE001
                pass

    def translate(self, event: FileSystemEvent) -> list[Work]:
        """The work items one event means (none for noise)."""
        kind = event.event_type
        if isinstance(event, (DirCreatedEvent, DirDeletedEvent, DirMovedEvent)):
            # watchdog also reports the files inside a created or moved folder, but not those
            # inside a folder moved out of raw/; a "dir" item makes the worker rescan.
            paths = [event.src_path, getattr(event, "dest_path", "")]
            return [Work("change", p, "dir") for p in (relevant_path(self.ws, x, self.watched) for x in paths if x) if p]
        if isinstance(event, FileMovedEvent):
            # save-by-rename: `.notes.md.swp` or `notes.md.tmp` -> `notes.md`; only the
            # destination is relevant. A move within raw/ reaches both ends.
            out = []
            src = relevant_path(self.ws, event.src_path, self.watched)
            dest = relevant_path(self.ws, event.dest_path, self.watched) if event.dest_path else None
            if src:
                out.append(Work("change", src, "deleted"))
            if dest:
                out.append(Work("change", dest, "moved"))
            return out
        if kind in ("created", "modified", "closed", "deleted"):
            path = relevant_path(self.ws, event.src_path, self.watched)
            return [Work("change", path, kind)] if path else []
        return []


class OverflowWatch(logging.Handler):
    """Turns watchdog's "inotify queue overflowed" warning into a rescan.

    watchdog 7 repairs its own watches after an overflow but only logs that events were
    lost; it tells no handler. Listening to its logger is the one signal we get.
    """

    def __init__(self, put: Put):
        super().__init__(level=logging.WARNING)
        self.put = put

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in record.getMessage().lower():
                self.put(Work("rescan", reason="the watcher's event queue overflowed"))
        except Exception:  # noqa: BLE001 - logging must never raise into watchdog
            pass


OVERFLOW_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


def start_observer(
    ws: Workspace, handler: RawEventHandler, *, polling: bool = False, poll_interval: float = 2.0
) -> tuple[BaseObserver, str]:
    """Start watching raw/ recursively; returns the observer and its kind (for status).

    Falls back to polling (every 2 s) when the native observer cannot start, typically
    because the inotify watch or instance limit is reached on a large tree; the daemon
    still works, just with more latency and some CPU.
    """
    if not polling:
        observer = watchdog.observers.Observer()  # looked up when called: tests stand in for it
        try:
            observer.schedule(handler, handler.watched, recursive=True, event_filter=EVENT_TYPES)
            observer.start()
            return observer, _observer_kind(observer)
        except OSError as exc:
            log.warning(
                "cannot watch %s natively (%s); polling every 2 s instead "
                "(raise fs.inotify.max_user_watches to avoid this)", ws.raw, exc,
            )
            try:
                observer.stop()
            except Exception:  # noqa: BLE001
                pass

    observer = PollingObserver(timeout=poll_interval)
    observer.schedule(handler, handler.watched, recursive=True, event_filter=EVENT_TYPES)
    observer.start()
    return observer, "polling"


def _observer_kind(observer: BaseObserver) -> str:
    name = type(observer).__name__.removesuffix("Observer").lower()
    return name or "native"


def stop_observer(observer: BaseObserver | None, timeout: float = 5.0) -> None:
    if observer is None:
        return
    try:
        observer.stop()
        observer.join(timeout)
    except Exception:  # noqa: BLE001 - shutting down; nothing useful to do with it
        log.debug("observer stop failed", exc_info=True)


def watch_is_healthy(observer: BaseObserver | None, raw: Path) -> bool:
    """False when the observer thread died or raw/ went away from under it."""
    if observer is None or not observer.is_alive():
        return False
    emitters = list(observer.emitters)
    return raw.is_dir() and bool(emitters) and all(e.is_alive() for e in emitters)


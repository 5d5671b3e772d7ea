"""`wikimem run`: the daemon. One worker compiles; the watcher and the clock only enqueue.

Lifecycle:

1. Take `.wikimem/lock` for the daemon's whole life (a second daemon, or a one-shot
   `wikimem compile`, is told at once that this one is running: exit 4).
2. Start watching raw/, start the clock (periodic rescan, scheduled lint), then compile
   whatever changed while no daemon ran (the catch-up). Watching starts first so a file
   dropped during the catch-up is not missed.
3. Loop: take work from the queue, debounce bursts, wait until files stop growing,
   compile (incremental: the compiler compares raw/ against state.db), lint when due.
4. SIGTERM/SIGINT: finish the item in hand, stop the watcher and the clock, exit 0.
   Everything is written atomically and state.db commits per batch, so `kill -9` at any
   moment leaves old or new files and a catch-up to do at the next start.

`.wikimem/status.json` (atomic) tells `wikimem status` what the daemon is doing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import importlib
import json
import logging
import logging.handlers
import os
import pickle
import queue
import signal
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from . import __version__, log_page, patterns, templating
from .backends import Activity, resolve
from .backends.offline_pages import forget_sentences
from .compiler import compile_workspace
from .config import Settings
from .errors import WikimemError, WorkspaceBusy
from .lifetime import die_with
from .raw_tree import scan
from .scheduler import Clock, Schedule, interval_minutes, parse_schedule
from .search.analysis import forget_words
from .state import State, skipped_sources
from .watcher import (
    OVERFLOW_LOGGERS,
    OverflowWatch,
    RawEventHandler,
    Work,
    start_observer,
    stop_observer,
    watch_is_healthy,
)
from .workspace import Workspace, atomic_write, lock_holder, remove_stale_temp_files, writer_lock

log = logging.getLogger("wikimem.daemon")

STATUS_FILE = "status.json"
LOG_FILE = "daemon.log"
HOLDER = "wikimem daemon"
RECENT_ERRORS = 20
SETTLE_LIMIT = 500  # above this many changed files, skip the size check: the burst is the signal


T = TypeVar("T")

# what compiling a note imports (python -X importtime), loaded before the daemon forks a batch
PRELOAD = (
    "wikimem.compiler", "wikimem.backends.offline", "wikimem.history", "wikimem.index_page", "wikimem.timelines",
    "wikimem.sources", "wikimem.search.index", "wikimem.search.documents", "wikimem.search.terms",
    "whoosh.index", "whoosh.writing", "whoosh.searching", "whoosh.codec.whoosh3",
    "markdown_it", "mdit_py_plugins.deflist", "mdit_py_plugins.footnote", "wikimem.ignore", "encodings.utf_8_sig",
)


def release_memory() -> None:
    """Collect what a batch left and hand freed heap back to the system. CPython keeps freed
    memory in its arenas and glibc keeps freed pages in the heap, so a long-lived process sits
    at the high-water mark of its largest batch; malloc_trim returns the free pages (glibc
    only; elsewhere the collection alone)."""

    forget_words()
    forget_sentences()
    gc.collect()
    try:
        import ctypes  # only here, and only where the C library can be asked to trim

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@dataclass(frozen=True)
class DaemonOptions:
    """The daemon's knobs. From Settings in normal use; tests shorten the clocks."""

    debounce: float = 0.75  # quiet time after the last event before a batch is compiled
    complete_quiet: float = 0.2  # ... when every changed file was closed or moved into place
    max_batch_wait: float = 30.0  # compile anyway after this long, even if events keep coming
    open_write_wait: float = 30.0  # how long to wait for a file still open for writing
    rescan: Schedule = field(default_factory=lambda: interval_minutes(10))
    lint: Schedule = field(default_factory=lambda: parse_schedule("every 6h"))
    retry_limit: int = 5  # failed attempts (same content) before a source is left alone
    # seconds before the first retry; then doubled per failed batch (_compile_failed) and
    # x4 per failed attempt of one source (_track_failures), both capped at retry_max
    retry_base: float = 5.0
    retry_max: float = 600.0
    health_every: float = 60.0  # how often an idle worker checks that the watcher is alive
    polling: bool = False  # force watchdog's polling observer (network folders)
    poll_interval: float = 2.0
    overdue_lint_delay: float = 60.0  # seconds after start for a lint that is overdue
    abandon_on_stop: bool | None = None  # drop a batch on stop; None: only with the offline backend
    # compile each batch in a child process forked for it (`wikimem run` on Linux): what the
    # batch allocates goes with the child, and the daemon stays near its idle size
    isolate_batches: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> DaemonOptions:
        base = cls(
            debounce=max(0.0, settings.debounce_seconds),
            rescan=interval_minutes(settings.rescan_minutes),
            lint=parse_schedule(settings.lint_schedule),
        )
        return replace(base, **overrides)


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def status_path(ws: Workspace) -> Path:
    return ws.state_dir / STATUS_FILE


@dataclass
class Pending:
    """What the worker has collected for its next step."""

    changes: dict[str, str] = field(default_factory=dict)  # raw path -> last event
    reasons: list[str] = field(default_factory=list)
    rescan: bool = False
    lint: bool = False
    stop: bool = False
    last_change: float = 0.0
    first: float = 0.0

    def add(self, work: Work) -> None:
        now = time.monotonic()
        if not self.first:
            self.first = now
        if work.kind == "change" and work.path:
            self.changes[work.path] = work.event
            self.last_change = now
        elif work.kind in ("rescan", "retry"):
            self.rescan = True
        elif work.kind == "lint":
            self.lint = True
        elif work.kind == "stop":
            self.stop = True
        if work.reason and work.reason not in self.reasons:
            self.reasons.append(work.reason)

    @property
    def compile(self) -> bool:
        return bool(self.changes) or self.rescan

    @property
    def complete(self) -> bool:
        # "created" as a last event is a file moved in from outside raw/ (watchdog reports an
        # unpaired move as a create); a file created to be written is followed by modified
        return all(ev in ("closed", "moved", "deleted", "created") for ev in self.changes.values())

    @property
    def open_writes(self) -> list[str]:
        # inotify reports a write as modified...modified...closed; a path whose last event is
        # "modified" is still open in some writer (a download, a long cp)
        return [p for p, ev in self.changes.items() if ev == "modified"]


class Daemon:
    """The worker, and the owner of the watcher, the clock and the status file."""

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        options: DaemonOptions | None = None,
        *,
        backend_name: str | None = None,
        log_to_stderr: bool = True,
        log_level: int = logging.INFO,
    ):
        self.ws = ws
        self.settings = settings
        self.options = options or DaemonOptions.from_settings(settings)
        self.backend_name = backend_name or settings.backend
        self.log_to_stderr = log_to_stderr
        self.log_level = log_level
        self.queue: queue.Queue[Work] = queue.Queue()
        self.stopping = threading.Event()
        self.observer: Any = None
        self.watcher_kind = "none"
        self.clock: Clock | None = None
        self.state = "starting"
        self.detail = ""
        self.progress: dict[str, Any] | None = None  # a model compile's activity (backends.Activity), while it runs
        self.started_at = utc_now()
        self.last_compile: dict[str, Any] | None = None
        self.last_lint: dict[str, Any] | None = None
        self.last_rescan: str | None = None
        self.errors: deque[dict[str, str]] = deque(maxlen=RECENT_ERRORS)
        self.failing: dict[str, dict[str, Any]] = {}
        self.compiles = 0
        self.compile_failures = 0  # consecutive whole-batch failures
        self.retry_at: float | None = None  # monotonic time a retry batch is due
        self.pending_paths: set[str] = set()  # collected for the next batch, not yet compiled
        self._given_up_logged: set[tuple[str, str]] = set()
        self._status_written = 0.0
        self._handlers: list[logging.Handler] = []
        self._raw_id: tuple[int, int] | None = None
        self._overflow: OverflowWatch | None = None
        self._batches = 0
        self._vanished = 0  # consecutive compiles cut short by a file deleted mid-read
        self._previous_signals: dict[int, Any] = {}
        self.ready = threading.Event()  # set when the catch-up is done and the worker is idle
        self.pid = os.getpid()  # the daemon's, also in the status a batch's child writes
        self._child: int | None = None  # the process compiling the batch (isolate_batches)
        self.batch_peak_mb: float | None = None  # that process's peak RSS, last batch
        self._preloaded = False

    # ------------------------------------------------------------------ public API
    def put(self, work: Work) -> None:
        """Enqueue work: called from watchdog's thread, the scheduler's threads and signals."""
        self.queue.put(work)

    def stop(self) -> None:
        """Ask the worker to stop after the item in hand. Safe from any thread."""
        self.stopping.set()
        self.queue.put(Work("stop", reason="stop requested"))

    def run(self) -> int:
        """Run until stopped; returns the exit code (0 after a clean stop)."""
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(writer_lock(self.ws, wait=0.0, holder=HOLDER, reentrant=True))
            except WorkspaceBusy:
                raise WorkspaceBusy(self._busy_message()) from None
            self._setup_logging()
            stack.callback(self._teardown_logging)
            try:
                self._start()
                self._loop()
                return 0
            finally:
                self._shutdown()

    def _start(self) -> None:
        previous = read_status_file(self.ws)
        if previous:
            self.last_lint = previous.get("last_lint")
            if previous.get("state") not in ("stopped", None):
                log.warning("the previous daemon (pid %s) did not stop cleanly; catching up", previous.get("pid"))
        # a killed writer may have left temp files; we hold the lock, so none is in use
        removed = remove_stale_temp_files(self.ws.state_dir) + remove_stale_temp_files(self.ws.wiki)
        if removed:
            log.info("removed %d temp file(s) left by an interrupted write", removed)
        self._write_status(force=True)
        self._install_signals()
        self._start_watching()
        self.clock = Clock(self.put, rescan=self.options.rescan, lint=self.options.lint)
        self.clock.start()
        self.put(Work("rescan", reason="catch-up at start"))
        if self._lint_overdue():
            # a minute in, not at once: whoever just started the daemon is likely about to
            # drop files, and lint would hold their first compile back
            self.clock.once(Work("lint", reason="lint overdue at start"), self.options.overdue_lint_delay)
        log.info(
            "daemon pid %d watching %s (%s); rescan %s; lint %s; backend %s",
            os.getpid(), self.ws.raw, self.watcher_kind, self.options.rescan.text, self.options.lint.text,
            self.backend_name,
        )

    def _shutdown(self) -> None:
        self.state, self.detail = "stopping", ""
        if self.clock is not None:
            self.clock.shutdown()
        stop_observer(self.observer)
        self.observer = None
        self._restore_signals()
        self.state = "stopped"
        self._write_status(force=True)
        log.info("stopped")

    def _busy_message(self) -> str:
        holder = self._lock_holder()
        if holder.startswith(HOLDER):
            return f"a daemon is already running for {self.ws.root}: {holder}; see: wikimem status --root {self.ws.root}"
        return f"{holder} is writing {self.ws.root}; start the daemon when it has finished"

    # ------------------------------------------------------------------ the loop
    def _loop(self) -> None:
        while not self.stopping.is_set():
            step = self._step()
            if step == "stop":
                return
            if step == "batch":
                # here, not inside the batch: its changes, its report and its locals are
                # garbage only once _step has returned
                release_memory()

    def _step(self) -> Literal["stop", "idle", "batch"]:
        """Wait for work and do it: "batch" when something was compiled or linted."""
        self.state, self.detail = "idle", ""
        self.pending_paths = set()
        self._write_status(force=True)
        if self._batches:
            self.ready.set()
        pending = Pending()
        work = self._get(self._idle_timeout())
        if work is not None:
            pending.add(work)
        if self.retry_at is not None and time.monotonic() >= self.retry_at:
            self.retry_at = None
            pending.add(Work("retry", reason="retrying failed sources"))
        if not self._check_watcher():
            pending.add(Work("rescan", reason="watcher restarted"))
        if pending.stop or self.stopping.is_set():
            return "stop"
        if pending.changes:
            self._collect(pending)
        self._drain(pending)
        if pending.stop or self.stopping.is_set():
            # changes collected but not compiled are picked up by the next start's catch-up
            return "stop"
        if pending.compile:
            self._compile(pending)
        if pending.lint and not self.stopping.is_set():
            self._lint()
        self._batches += 1
        return "batch" if pending.compile or pending.lint else "idle"

    def _get(self, timeout: float | None) -> Work | None:
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _drain(self, pending: Pending) -> None:
        while True:
            try:
                pending.add(self.queue.get_nowait())
            except queue.Empty:
                return

    def _idle_timeout(self) -> float:
        timeout = self.options.health_every
        if self.retry_at is not None:
            timeout = min(timeout, max(0.0, self.retry_at - time.monotonic()))
        return timeout

    def _collect(self, pending: Pending) -> None:
        """Debounce: gather events until raw/ has been quiet for `debounce` seconds and the
        changed files have stopped growing, so a burst becomes one batch and a half-written
        file is not compiled. Gives up waiting after max_batch_wait (a file that is written
        forever, like a log, must not starve the rest)."""
        opts = self.options
        self.state, self.detail = "waiting", "for changes to settle"
        sizes = self._sizes(pending)
        while not pending.stop:
            now = time.monotonic()
            self.pending_paths = set(pending.changes)
            self._write_status()
            if now - pending.first >= opts.max_batch_wait:
                log.info("changes kept coming for %.0f s; compiling what is there", opts.max_batch_wait)
                return
            quiet_left = pending.last_change + self._quiet_period(pending) - now
            if quiet_left <= 0:
                # only inotify reports close-after-write; elsewhere "modified" is all we ever see
                still_open = pending.open_writes if self.watcher_kind == "inotify" else []
                if still_open and now - pending.last_change < opts.open_write_wait:
                    quiet_left = min(opts.debounce, 0.5) or 0.1
                else:
                    now_sizes = self._sizes(pending)
                    if now_sizes == sizes:
                        return
                    # a file grew without an event we saw (polling, network folders): keep waiting
                    sizes = now_sizes
                    pending.last_change = time.monotonic()
                    continue
            work = self._get(quiet_left)
            if work is not None:
                pending.add(work)
                if work.kind == "change" and work.path and len(pending.changes) <= SETTLE_LIMIT:
                    sizes[work.path] = self._stat(work.path)  # one stat per event, not per pending file

    def _quiet_period(self, pending: Pending) -> float:
        """The full debounce while a write may still be under way; a short grace once every
        changed file is known complete: closed by its writer, moved into place, or deleted.
        That is what lets a dropped file show up in well under a second, while a burst
        (a `cp -r`, a sync client) still arrives as one batch: its events are microseconds
        apart. Only inotify (Linux) reports close-after-write; polling, FSEvents and the rest
        always wait the full debounce."""
        if self.watcher_kind != "inotify" or not pending.complete:
            return self.options.debounce
        return min(self.options.debounce, self.options.complete_quiet)

    def _sizes(self, pending: Pending) -> dict[str, tuple[int, int] | None]:
        """(size, mtime) of each changed path; skipped for big bursts, where the full scan
        at compile time is what counts and thousands of stats would only add latency."""
        if len(pending.changes) > SETTLE_LIMIT:
            return {}
        return {rel: self._stat(rel) for rel in pending.changes}

    def _stat(self, rel: str) -> tuple[int, int] | None:
        try:
            st = os.stat(self.ws.root / rel)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    # ------------------------------------------------------------------ compile
    def _compile(self, pending: Pending) -> None:
        if not self.ws.raw.is_dir():
            # never compile a missing raw/: the compiler would read it as "every source was
            # deleted" and remove their pages (an unmounted share, a folder being renamed)
            log.error("%s is missing; not compiling until it is back", self.ws.raw)
            self._error(f"{self.ws.raw} is missing; compile skipped")
            return
        trigger = ", ".join(pending.reasons) or f"{len(pending.changes)} change(s) in raw/"
        if pending.changes and not pending.reasons:
            sample = sorted(pending.changes)[:3]
            trigger = f"{len(pending.changes)} change(s) in raw/: " + ", ".join(sample) + (" ..." if len(pending.changes) > 3 else "")
        self.state, self.detail = "compiling", trigger
        self.pending_paths = set()
        self._write_status(force=True)
        started = time.monotonic()
        progress_state = {"done": 0}

        abandon = self._cheap_backend()

        def progress(path: str, total: int, step: int) -> None:
            # called before each source is loaded, before anything is written: the one point
            # where a stop can abandon the batch with nothing to undo (state.db rolls back)
            if abandon and self.stopping.is_set():
                raise _Abandon(path, progress_state["done"])
            progress_state["done"] += step
            self.detail = f"{progress_state['done']}/{total} {path}"
            self._write_status()

        def activity(now: Any) -> None:
            # a model backend's progress (sources done, requests in flight, tokens, cost, time
            # left), written to the status file by whichever process compiles (throttled)
            self.progress = now.to_json()
            self.detail = f"{now.sources_done}/{now.sources_total} sources"
            self._write_status()

        self.progress = None
        try:
            report = self._isolated(lambda: compile_workspace(
                self.ws, self.settings, backend_name=self.backend_name, progress=progress,
                give_up_after=self.options.retry_limit, activity=activity,
            ))
            self.progress = None
        except _Abandon as stop:
            log.info("stopping: abandoned the batch before %s (%d of it done, nothing written); "
                     "the next start redoes it", stop.args[0], stop.args[1] if len(stop.args) > 1 else 0)
            return
        except FileNotFoundError as exc:
            if exc.filename and not os.path.exists(exc.filename) and self._vanished < 3:
                # a file deleted between the scan and its read (a sync client, a quick rm):
                # not an error; the next scan no longer sees it
                self._vanished += 1
                log.info("%s vanished during the compile; compiling again", exc.filename)
                self.put(Work("rescan", reason="a file vanished during the compile"))
            else:
                self._compile_failed(exc, trigger, started)
            return
        except Exception as exc:  # noqa: BLE001 - one bad batch never stops the daemon
            self._compile_failed(exc, trigger, started)
            return
        self._vanished = 0
        self.compile_failures = 0
        self.compiles += 1
        if pending.rescan:
            self.last_rescan = utc_now()
        self.last_compile = {
            "at": utc_now(),
            "ok": not report.failed,
            "trigger": trigger,
            "noop": report.noop,
            "seconds": round(report.seconds, 3),
            "process_peak_mb": self.batch_peak_mb,  # the batch's own process (isolate_batches), else null
            "compiled": len(report.compiled),
            "unchanged": report.unchanged,
            "created": len(report.created),
            "updated": len(report.updated),
            "removed": len(report.removed),
            "removed_sources": len(report.removed_sources),
            "renamed": len(report.renamed),
            "kept": report.kept[:20],
            "skipped": [{"path": p, "reason": r} for p, r in report.skipped[:20]],
            "failed": [{"path": p, "reason": r} for p, r in report.failed[:20]],
            "ignored": report.ignored,
        }
        if not report.noop:
            log.info(
                "compiled %d source(s) (%d unchanged) in %.2f s: %d page(s) created, %d updated, %d removed%s",
                len(report.compiled), report.unchanged, report.seconds, len(report.created),
                len(report.updated), len(report.removed),
                f"; {len(report.failed)} failed" if report.failed else "",
            )
        for path, reason in report.skipped:
            log.info("skipped %s: %s", path, reason)
        for path in report.kept:
            log.warning("kept wiki/%s: edited by a person; wikimem's version is in .wikimem/proposed/", path)
        for path, reason in report.failed:
            log.warning("failed %s: %s", path, reason)
        for path, reason in report.refused:
            log.warning("refused %s: %s", path, reason)
        for note in report.warnings:
            log.info("note: %s", note)
        self._track_failures(report)  # the compile brought the search index up to date itself

    def _isolated(self, batch: Callable[[], T]) -> T:
        """batch(), in a child process forked for it when isolate_batches is on: its result, or
        the exception it raised, comes back through a pipe; the memory it took goes with the
        child. CPython keeps an arena of the heap for as long as one object in it lives, and a
        batch leaves a few long-lived ones in most of the arenas it filled: in-process, a burst
        of 200 files left the daemon at 62-63 MB where it idles at 35 MB.

        The child is a copy of this process at the fork, the watcher's and the clock's threads
        left behind; it writes the workspace as the compile always does, under the lock this
        daemon holds, and never touches the queue or the threads. A stop signal reaches it
        (forwarded, or from the terminal's process group) and abandons the batch as in-process."""
        if not self.options.isolate_batches or not hasattr(os, "fork"):
            return batch()

        self._preload()
        parent = os.getpid()
        read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12+ warns of fork in a process with threads: the child runs this one
            # thread's code only, and takes no lock the others hold (logging's are reset)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            os.close(read_end)
            self._batch_process(batch, write_end, parent)  # never returns
        os.close(write_end)
        self._child = pid
        try:
            with os.fdopen(read_end, "rb") as pipe:
                data = pipe.read()
        finally:
            # its peak RSS, for the status (ru_maxrss is in KB on Linux)
            self.batch_peak_mb = round(os.wait4(pid, 0)[2].ru_maxrss / 1024, 1)
            self._child = None
        if not data:
            if self.stopping.is_set():
                raise _Abandon("the batch's process, stopped")
            raise RuntimeError("the batch's process ended without a result")
        kind, value = pickle.loads(data)
        if kind == "raised":
            raise value
        return value  # type: ignore[no-any-return]

    def _batch_process(self, batch: Callable[[], Any], write_end: int, parent: int) -> None:
        """The forked child: run the batch, send its outcome, leave without any cleanup (the
        daemon's threads, handlers and files are not this process's to close)."""

        code = 0
        try:
            die_with(parent)
            for sig in self._previous_signals:  # a stop abandons the batch; the daemon decides the rest
                signal.signal(sig, lambda *_: self.stopping.set())
            try:
                outcome: tuple[str, Any] = ("ok", batch())
            except BaseException as exc:  # noqa: BLE001 - raised again in the daemon
                outcome = ("raised", exc)
            try:
                data = pickle.dumps(outcome)
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
                data = pickle.dumps(("raised", RuntimeError(_one_line(outcome[1]))))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # noqa: BLE001 - the daemon reports a child that sent nothing
            code = 1
        finally:
            os._exit(code)

    def _preload(self) -> None:
        """Import what a compile uses, and compile its patterns and the templates, before the
        first fork, so each batch's process does not do it again (0.2-0.3 s a batch): what a
        batch's process compiles is gone with it."""
        if self._preloaded:
            return
        self._preloaded = True

        for name in PRELOAD:
            importlib.import_module(name)
        patterns.compile_all()
        # where a compile keeps them (compiler._compile_locked): a batch's process keeps these
        templating.keep_compiled(self.ws.state_dir / templating.COMPILED_FOLDER)
        templating.warm(self.ws.root)

    def _compile_failed(self, exc: BaseException, trigger: str, started: float) -> None:
        """Record a failed batch and schedule a retry with backoff (5 s, 10 s, ... 10 min)."""
        self.compile_failures += 1
        delay = min(self.options.retry_max, self.options.retry_base * 2 ** (self.compile_failures - 1))
        self.retry_at = time.monotonic() + delay
        message = _one_line(exc)
        log.error("compile failed (%s); retrying in %.0f s", message, delay)
        log.debug("compile failure", exc_info=True)
        self._error(f"compile failed: {message}")
        self.last_compile = {
            "at": utc_now(), "ok": False, "trigger": trigger, "error": message,
            "seconds": round(time.monotonic() - started, 3),
        }

    def _cheap_backend(self) -> bool:
        """Whether a stop may abandon a batch: yes for the offline backend (redoing it costs
        seconds); a model backend's batch is finished, its tokens are already paid for."""

        if self.options.abandon_on_stop is not None:
            return self.options.abandon_on_stop
        try:
            return resolve(self.backend_name, self.settings)[0] == "offline"
        except Exception:  # noqa: BLE001 - when in doubt, finish the batch
            return False

    def _track_failures(self, report: Any) -> None:
        """Retry failed sources with backoff; after retry_limit attempts leave them alone
        (the compiler skips them until their content changes) and say so in log.md."""

        rows = {}
        try:
            state = State(self.ws.state_db)
            try:
                rows = {p: r for p, r in state.sources().items() if r.status == "failed"}
            finally:
                state.close()
        except Exception:  # noqa: BLE001 - status is best effort; the compile itself succeeded
            log.debug("could not read failed sources from state.db", exc_info=True)
        self.failing = {}
        soonest: float | None = None
        gave_up: list[tuple[str, Any]] = []
        for path, row in sorted(rows.items()):
            done = row.attempts >= self.options.retry_limit
            entry: dict[str, Any] = {
                "path": path, "attempts": row.attempts, "reason": row.reason, "gave_up": done,
            }
            if not done:
                delay = min(self.options.retry_max, self.options.retry_base * 4 ** max(0, row.attempts - 1))
                soonest = delay if soonest is None else min(soonest, delay)
                entry["next_retry_in_s"] = round(delay, 1)
            elif (path, row.sha256) not in self._given_up_logged:
                gave_up.append((path, row))
            self.failing[path] = entry
        if soonest is not None:
            due = time.monotonic() + soonest
            self.retry_at = due if self.retry_at is None else min(self.retry_at, due)
        if gave_up:
            entries = []
            for path, row in gave_up:
                self._given_up_logged.add((path, row.sha256))
                message = f"{path} failed {row.attempts} times; left alone until it changes: {row.reason}"
                log.error("giving up on %s", message)
                self._error(f"gave up: {message}")
                entries.append(log_page.LogEntry(
                    "fail", path,
                    (f"- error: {row.reason}", f"- attempts: {row.attempts}; the daemon retries it when the file changes"),
                ))
            try:
                log_page.append(self.ws.wiki / "log.md", entries)
            except OSError as exc:
                log.error("cannot append to log.md: %s", exc)

    # ------------------------------------------------------------------ lint
    def _lint(self) -> None:
        started = time.monotonic()
        try:
            from .lint import run_lint  # type: ignore[attr-defined]
        except ImportError as exc:
            # lint ships in another module; a daemon without it still compiles
            note = f"lint is not available in this build ({exc})"
            log.info(note)
            self.last_lint = {"at": utc_now(), "ok": None, "skipped": note}
            return
        except Exception as exc:  # noqa: BLE001 - a broken lint module must not stop the daemon
            self._error(f"lint could not be loaded: {_one_line(exc)}")
            self.last_lint = {"at": utc_now(), "ok": False, "error": f"cannot load lint: {_one_line(exc)}"}
            return
        self.state, self.detail = "linting", ""
        self._write_status(force=True)
        try:
            report = self._isolated(lambda: run_lint(self.ws, self.settings))
        except _Abandon:
            log.info("stopping: the lint's process ended before its report")
            return
        except Exception as exc:  # noqa: BLE001 - a lint bug must not stop the daemon
            message = _one_line(exc)
            log.error("lint failed: %s", message)
            log.debug("lint failure", exc_info=True)
            self._error(f"lint failed: {message}")
            self.last_lint = {"at": utc_now(), "ok": False, "error": message,
                              "seconds": round(time.monotonic() - started, 3)}
            return
        errors = int(getattr(report, "errors", 0) or 0)
        warnings = int(getattr(report, "warnings", 0) or 0)
        counts = getattr(report, "counts", None)
        self.last_lint = {
            "at": utc_now(),
            "ok": errors == 0,
            "errors": errors,
            "warnings": warnings,
            "counts": dict(counts) if isinstance(counts, dict) else None,
            "seconds": round(float(getattr(report, "seconds", 0.0) or (time.monotonic() - started)), 3),
        }
        log.info("lint: %d error(s), %d warning(s)%s", errors, warnings,
                 "; see wiki/lint.md" if (self.ws.wiki / "lint.md").exists() else "")

    def _lint_overdue(self) -> bool:
        """Lint at start when the last lint is older than the interval (or never ran), so a
        daemon restarted more often than every 6 h still lints. Cron schedules keep their times."""
        trigger = self.options.lint.trigger
        interval = getattr(trigger, "interval", None)
        if interval is None:
            return False
        last = None if (self.last_lint or {}).get("skipped") else (self.last_lint or {}).get("at")
        if not last:
            return True
        try:
            when = dt.datetime.fromisoformat(str(last).replace("Z", "+00:00"))
        except ValueError:
            return True
        return dt.datetime.now(dt.UTC) - when >= interval

    # ------------------------------------------------------------------ watcher
    def _start_watching(self) -> None:
        handler = RawEventHandler(self.ws, self.put)
        self.observer, self.watcher_kind = start_observer(
            self.ws, handler, polling=self.options.polling, poll_interval=self.options.poll_interval
        )
        try:
            st = self.ws.raw.stat()
            self._raw_id = (st.st_dev, st.st_ino)
        except OSError:
            self._raw_id = None

    def _check_watcher(self) -> bool:
        """Restart the observer when raw/ was replaced or the watch died; False if restarted."""
        try:
            st = self.ws.raw.stat()
            raw_id: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            raw_id = None
        if raw_id is not None and raw_id == self._raw_id and watch_is_healthy(self.observer, self.ws.raw):
            return True
        if raw_id is None:
            if self.observer is not None:
                log.error("%s is gone; waiting for it to come back", self.ws.raw)
                self._error(f"{self.ws.raw} is missing")
                stop_observer(self.observer)
                self.observer, self.watcher_kind = None, "none"
            return True  # nothing to watch or compile until raw/ is back
        log.warning("the watch on %s stopped; restarting it and rescanning", self.ws.raw)
        stop_observer(self.observer)
        try:
            self._start_watching()
        except Exception as exc:  # noqa: BLE001 - keep going on the periodic rescan
            self.observer, self.watcher_kind = None, "none"
            self._error(f"cannot watch raw/: {_one_line(exc)}")
        return False

    # ------------------------------------------------------------------ status
    def _error(self, message: str) -> None:
        self.errors.append({"at": utc_now(), "message": message})

    def status(self) -> dict[str, Any]:
        clock = self.clock
        return {
            "pid": self.pid,
            "root": str(self.ws.root),
            "version": __version__,
            "state": self.state,
            "detail": self.detail,
            "progress": self.progress if self.state == "compiling" else None,
            "started_at": self.started_at,
            "updated_at": utc_now(),
            "backend": self.backend_name,
            "watcher": self.watcher_kind,
            "queue": self._queue_length(),
            "compiles": self.compiles,
            "last_compile": self.last_compile,
            "last_rescan": self.last_rescan,
            "last_lint": self.last_lint,
            "next_rescan": clock.next_run("rescan") if clock else None,
            "next_lint": min(filter(None, (clock.next_run("lint"), clock.next_run("once-lint"))), default=None)
            if clock else None,
            "lint_schedule": self.options.lint.text,
            "rescan_schedule": self.options.rescan.text,
            "failing": list(self.failing.values()),
            "errors": list(self.errors),
            "log_file": str(self.ws.state_dir / LOG_FILE),
        }

    def _queue_length(self) -> int:
        """Files waiting (each counted once, however many events it made) plus queued jobs."""
        with self.queue.mutex:
            items = list(self.queue.queue)
        paths = self.pending_paths | {w.path for w in items if w.kind == "change" and w.path}
        jobs = {w.kind for w in items if w.kind in ("rescan", "retry", "lint")}
        return len(paths) + len(jobs)

    def _write_status(self, *, force: bool = False) -> None:
        # throttled: a 200-file compile reports progress per file, the file needs ~4 writes/s
        now = time.monotonic()
        if not force and now - self._status_written < 0.25:
            return
        self._status_written = now
        try:
            atomic_write(status_path(self.ws), json.dumps(self.status(), indent=2, sort_keys=True) + "\n")
        except OSError as exc:
            log.debug("cannot write status: %s", exc)

    def _lock_holder(self) -> str:
        return lock_holder(self.ws.state_dir / "lock") or "another wikimem process"

    # ------------------------------------------------------------------ process plumbing
    def _install_signals(self) -> None:
        """SIGTERM/SIGINT (and SIGHUP) stop the worker after the item in hand. A second signal while a
        long batch runs exits at once: writes are atomic and state.db is only committed
        with the batch, so the next start redoes it."""
        if threading.current_thread() is not threading.main_thread():
            return  # in-process use (tests): the caller stops us with stop()

        def handle(signum: int, _frame: Any) -> None:
            name = signal.Signals(signum).name
            child = self._child
            if self.stopping.is_set():
                log.warning("%s again: exiting now; the next start catches up", name)
                if child is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
                os._exit(1)
            log.info("%s: finishing the current item, then stopping", name)
            self.stopping.set()
            if child is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signum)  # the batch's process abandons it as this one would
            # not queue.put here: the handler runs on the main thread, which may hold the
            # queue's lock at this very moment; a helper thread cannot deadlock with it
            threading.Thread(target=self.queue.put, args=(Work("stop", reason=name),), daemon=True).start()

        self._previous_signals = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
        # a closed terminal stops it cleanly too, unless started under nohup (SIGHUP ignored)
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
            self._previous_signals[signal.SIGHUP] = signal.signal(signal.SIGHUP, handle)

    def _restore_signals(self) -> None:
        for sig, old in self._previous_signals.items():
            signal.signal(sig, old)
        self._previous_signals = {}

    def _setup_logging(self) -> None:
        logger = logging.getLogger("wikimem")
        fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.ws.state_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            self.ws.state_dir / LOG_FILE, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
        file_handler.setFormatter(fmt)
        file_handler.setLevel(min(self.log_level, logging.INFO))
        self._handlers = [file_handler]
        if self.log_to_stderr:
            err = logging.StreamHandler(sys.stderr)
            err.setFormatter(fmt)
            err.setLevel(self.log_level)
            self._handlers.append(err)
        for h in self._handlers:
            logger.addHandler(h)
        self._saved_level = logger.level
        self._saved_propagate = logger.propagate
        logger.setLevel(min(self.log_level, logging.INFO))
        logger.propagate = False  # the CLI's root handler would print every line twice
        overflow = OverflowWatch(self.put)
        self._overflow = overflow
        for name in OVERFLOW_LOGGERS:
            logging.getLogger(name).addHandler(overflow)

    def _teardown_logging(self) -> None:
        logger = logging.getLogger("wikimem")
        for h in self._handlers:
            logger.removeHandler(h)
            h.close()
        self._handlers = []
        logger.setLevel(getattr(self, "_saved_level", logging.NOTSET))
        logger.propagate = getattr(self, "_saved_propagate", True)
        if self._overflow is not None:
            for name in OVERFLOW_LOGGERS:
                logging.getLogger(name).removeHandler(self._overflow)


class _Abandon(BaseException):
    """Raised through the compiler to drop a batch on stop. A BaseException so that a
    backend's per-source `except Exception` cannot mistake it for a failing source."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(exc, WikimemError):
        return first or type(exc).__name__
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


# ---------------------------------------------------------------------- `wikimem status`
def read_status_file(ws: Workspace) -> dict[str, Any] | None:
    try:
        data = json.loads(status_path(ws).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def daemon_status(ws: Workspace) -> dict[str, Any]:
    """What `wikimem status` reports: the status file, checked against the live process.

    A daemon killed with -9 leaves a status file saying "idle"; the lock file names the
    holder and the kernel drops the lock with the process, so "running" requires both
    the pid to be alive and the lock file to name it.
    """
    data = read_status_file(ws)
    holder = lock_holder(ws.state_dir / "lock")
    if data is None:
        return {"running": False, "state": "never-run" if not holder else "unknown", "root": str(ws.root),
                "lock_holder": holder or None, "raw": raw_summary(ws)}
    pid = data.get("pid")
    running = (
        isinstance(pid, int)
        and data.get("state") != "stopped"
        and pid_alive(pid)
        and holder == f"{HOLDER} (pid {pid})"
    )
    out = dict(data)
    out["running"] = running
    out["lock_holder"] = holder or None
    out["raw"] = raw_summary(ws)
    if not running and data.get("state") != "stopped":
        out["state"] = "dead"  # stopped without saying so: kill -9, a crash, a reboot
    return out


def raw_summary(ws: Workspace) -> dict[str, Any]:
    """What raw/ holds as compile sees it: sources (the files it compiles), files it skipped
    last time (state.db), files refused, files the ignore rules keep out."""

    found = scan(ws)
    skipped = skipped_sources(ws.state_db) & {f.path for f in found.files}
    return {"sources": len(found.files) - len(skipped), "skipped": len(skipped), "refused": len(found.refused),
            "ignored": found.ignored_summary()}


def progress_line(progress: dict[str, Any]) -> str:
    """A model compile's activity (status.json's `progress`) as `wikimem status` prints it."""

    try:
        return Activity(**{**progress, "seconds": progress.get("seconds") or 0.0}).line()
    except TypeError:  # a status file from another version
        return json.dumps(progress)


def format_status(data: dict[str, Any]) -> list[str]:
    """The people's version of `wikimem status`."""
    lines: list[str] = []
    root = data.get("root", "")
    if not data.get("running"):
        state = data.get("state")
        if state == "never-run":
            lines.append(f"no daemon has run in {root}; start one with: wikimem run --root {root}")
            if data.get("lock_holder"):
                lines.append(f"lock held by: {data['lock_holder']}")
            return lines
        if state == "dead":
            lines.append(f"not running: the daemon (pid {data.get('pid')}) stopped without cleaning up "
                         f"(killed or crashed); the next start catches up")
        else:
            lines.append(f"not running (last daemon pid {data.get('pid')} stopped at {data.get('updated_at')})")
    else:
        detail = f" ({data['detail']})" if data.get("detail") else ""
        lines.append(f"running: pid {data.get('pid')}, {data.get('state')}{detail}, since {data.get('started_at')}")
        lines.append(f"watching: {root}/raw ({data.get('watcher')}); queue: {data.get('queue', 0)}; backend: {data.get('backend')}")
        if data.get("progress"):
            lines.append(f"progress: {progress_line(data['progress'])}")
    raw = data.get("raw")
    if raw:
        ignored = raw["ignored"]
        rules = ", ".join(f"{rule} {n}" for rule, n in sorted(ignored["by_rule"].items(), key=lambda kv: -kv[1])[:4])
        lines.append(f"raw/: {raw['sources']} sources, {raw.get('skipped', 0)} skipped, {raw['refused']} refused, "
                     f"{ignored['count']} ignored" + (f" ({rules})" if rules else ""))
    lc = data.get("last_compile")
    if lc:
        if lc.get("ok") is False and lc.get("error"):
            lines.append(f"last compile: {lc.get('at')} FAILED: {lc['error']}")
        elif lc.get("noop"):
            lines.append(f"last compile: {lc.get('at')} up to date ({lc.get('unchanged', 0)} sources, {lc.get('seconds')} s)")
        else:
            lines.append(
                f"last compile: {lc.get('at')} {lc.get('compiled', 0)} compiled, {lc.get('created', 0)} created, "
                f"{lc.get('updated', 0)} updated, {lc.get('removed', 0)} removed, {len(lc.get('failed') or [])} failed "
                f"({lc.get('seconds')} s)"
            )
    ll = data.get("last_lint")
    if ll:
        if ll.get("skipped"):
            lines.append(f"last lint: {ll.get('at')} skipped: {ll['skipped']}")
        elif ll.get("error"):
            lines.append(f"last lint: {ll.get('at')} FAILED: {ll['error']}")
        else:
            lines.append(f"last lint: {ll.get('at')} {ll.get('errors', 0)} error(s), {ll.get('warnings', 0)} warning(s)")
    if data.get("running"):
        lines.append(f"next lint: {data.get('next_lint') or 'off'} ({data.get('lint_schedule')}); "
                     f"next rescan: {data.get('next_rescan') or 'off'}")
    for item in data.get("failing") or []:
        how = "given up until it changes" if item.get("gave_up") else f"retrying (attempt {item.get('attempts')})"
        lines.append(f"failing: {item.get('path')}: {item.get('reason')} [{how}]")
    for err in (data.get("errors") or [])[-5:]:
        lines.append(f"error: {err.get('at')} {err.get('message')}")
    if data.get("log_file"):
        lines.append(f"log: {data['log_file']}")
    return lines

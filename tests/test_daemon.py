"""The daemon in-process: a real watchdog observer, the offline backend, a worker thread.

Every wait polls with a generous timeout; nothing relies on a fixed sleep for correctness.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write
from waiting import wait_for
from wikimem import log_page, service
from wikimem import search as S
from wikimem.backends import Batch, BatchResult, create, register
from wikimem.compiler import compile_workspace
from wikimem.config import Settings
from wikimem.errors import UsageError, WorkspaceBusy
from wikimem.pages import loads_page
from wikimem.scheduler import parse_schedule
from wikimem.service import Daemon, DaemonOptions, daemon_status, format_status, read_status_file
from wikimem.watcher import Work
from wikimem.workspace import Workspace

TEXT = "# {title}\n\n{title} is a note about tardigrades. Tardigrades survive 30 years frozen at -20 C.\n"




def fast(settings: Settings, **overrides: Any) -> DaemonOptions:
    base: dict[str, Any] = {
        "debounce": 0.2, "rescan": parse_schedule("off"), "lint": parse_schedule("off"),
        "retry_base": 0.05, "retry_limit": 3, "health_every": 1.0, "overdue_lint_delay": 0.0,
    }
    base.update(overrides)
    return DaemonOptions.from_settings(settings, **base)


class Running:
    """A daemon on a worker thread, stopped and joined at the end of the test."""

    def __init__(self, ws: Workspace, settings: Settings, options: DaemonOptions, backend: str | None = None):
        self.ws = ws
        self.daemon = Daemon(ws, settings, options, backend_name=backend, log_to_stderr=False)
        self.result: list[Any] = []
        self.thread = threading.Thread(target=self._run, name="wikimem-daemon-test", daemon=True)

    def _run(self) -> None:
        try:
            self.result.append(self.daemon.run())
        except BaseException as exc:  # surfaced by stop()
            self.result.append(exc)

    def start(self) -> Running:
        self.thread.start()
        wait_for(lambda: self.daemon.ready.is_set() or self.result, what="the catch-up compile")
        if self.result:
            raise self.result[0]
        return self

    def stop(self) -> Any:
        self.daemon.stop()
        self.thread.join(30)
        assert not self.thread.is_alive(), "daemon did not stop"
        return self.result[0]

    def status(self) -> dict[str, Any]:
        return read_status_file(self.ws) or {}

    def until(self, check: Callable[[], Any], what: str) -> Any:
        """Wait for `check` and for the compile that made it true to finish (pages are
        written before index.md and log.md, so a page alone does not mean "done")."""
        def done() -> Any:
            value = check()
            if not value:
                return None
            st = self.status()
            return value if st.get("state") == "idle" and st.get("queue") == 0 else None
        return wait_for(done, what=what)

    def idle_after(self, compiles: int) -> dict[str, Any]:
        """Wait until the worker finished more than `compiles` compiles and is idle again."""
        def check() -> dict[str, Any] | None:
            st = self.status()
            return st if st.get("compiles", 0) > compiles and st.get("state") == "idle" and st.get("queue") == 0 else None
        return wait_for(check, what=f"compile #{compiles + 1}")


@pytest.fixture
def running(ws: Workspace, settings: Settings) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def start(backend: str | None = None, **overrides: Any) -> Running:
        r = Running(ws, settings, fast(settings, **overrides), backend).start()
        started.append(r)
        return r

    yield start
    for r in started:
        if r.thread.is_alive():
            r.stop()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_sha(ws: Workspace, raw_rel: str) -> str | None:
    page = page_for(ws, raw_rel)
    if page is None:
        return None
    try:
        text = page.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None  # removed since page_for found it
    return str(loads_page(page.name, text).meta.get("source_sha256"))


def page_for(ws: Workspace, raw_rel: str) -> Path | None:
    for page in (ws.wiki / "sources").glob("*.md"):
        try:
            text = page.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue  # removed by the daemon between the listing and the read: the page is gone
        if f"raw/{raw_rel}" in text.split("\n---", 1)[0]:
            return page
    return None


# ---------------------------------------------------------------- the happy path
@pytest.mark.slow
def test_drop_edit_rename_delete_reach_the_wiki(ws: Workspace, running) -> None:
    d = running()
    assert d.status()["state"] == "idle"
    assert d.status()["watcher"] != "none"

    write(ws, "tardigrades.md", TEXT.format(title="Tardigrades"))
    page = d.until(lambda: page_for(ws, "tardigrades.md"), what="the dropped file's page")
    assert "Tardigrades" in page.read_text(encoding="utf-8")

    write(ws, "tardigrades.md", TEXT.format(title="Water bears") + "\nWater bears were described in 1773.\n")
    d.until(lambda: source_sha(ws, "tardigrades.md") == sha(ws.raw / "tardigrades.md"), what="the edit")

    (ws.raw / "bio").mkdir()
    (ws.raw / "tardigrades.md").rename(ws.raw / "bio" / "water-bears.md")
    d.until(lambda: page_for(ws, "bio/water-bears.md") and not page_for(ws, "tardigrades.md"), what="the rename")

    (ws.raw / "bio" / "water-bears.md").unlink()
    d.until(lambda: not page_for(ws, "bio/water-bears.md"), what="the delete")
    index = (ws.wiki / "index.md").read_text(encoding="utf-8")
    assert "water-bears" not in index
    ops = [op for _, op, _, _ in log_page.read_entries(ws.wiki / "log.md")]
    assert {"ingest", "rename", "remove"} <= set(ops)
    assert d.stop() == 0
    final = read_status_file(ws)
    assert final is not None and final["state"] == "stopped"


def test_catch_up_compiles_what_changed_while_down(ws: Workspace, settings: Settings, running) -> None:
    write(ws, "before.md", TEXT.format(title="Before"))
    d = running()
    assert page_for(ws, "before.md") is not None  # compiled by the catch-up, no event needed
    last = d.status()["last_compile"]
    assert last["trigger"].startswith("catch-up") and last["compiled"] == 1
    d.stop()
    # while no daemon runs: one new, one deleted
    write(ws, "during.md", TEXT.format(title="During"))
    (ws.raw / "before.md").unlink()
    running()
    assert page_for(ws, "during.md") is not None
    assert page_for(ws, "before.md") is None


def test_save_by_rename_and_noise(ws: Workspace, running) -> None:
    d = running()
    # editor and download noise never becomes a page, and does not trigger a compile
    write(ws, ".notes.md.swp", "swap")
    write(ws, "paper.pdf.crdownload", "partial")
    write(ws, "~$report.docx", "lock")
    write(ws, ".#notes.md", "lock")
    write(ws, "x.md.tmp", "tmp")
    # an editor saving by writing a temp file and renaming it over the target
    tmp = write(ws, ".notes.md.tmp-1234", TEXT.format(title="Notes"))
    tmp.replace(ws.raw / "notes.md")
    d.until(lambda: page_for(ws, "notes.md"), what="the renamed-in file's page")
    pages = sorted(p.name for p in (ws.wiki / "sources").glob("*.md"))
    assert pages == [page_for(ws, "notes.md").name]  # type: ignore[union-attr]
    assert d.status()["last_compile"]["skipped"] == []


@pytest.mark.slow
def test_a_burst_becomes_few_batches(ws: Workspace, running) -> None:
    d = running()
    before = d.status()["compiles"]
    for i in range(40):
        write(ws, f"burst/note-{i:02d}.md", TEXT.format(title=f"Burst note {i}"))
    wait_for(lambda: len(list((ws.wiki / "sources").glob("*.md"))) == 40, what="40 pages")
    st = d.idle_after(before)
    assert st["compiles"] - before < 40  # debounced: far fewer compiles than files
    # every page parses: no torn or half-written page
    for page in (ws.wiki / "sources").glob("*.md"):
        loads_page(page.name, page.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_file_still_being_written_is_not_compiled_half(ws: Workspace, running) -> None:
    d = running()
    before = d.status()["compiles"]
    target = ws.raw / "slow.md"
    with open(target, "w", encoding="utf-8") as handle:
        handle.write("# Slow download\n\nThe first half arrives. ")
        handle.flush()
        # the writer pauses longer than the debounce while holding the file open; give the
        # daemon every chance to compile too early (this wait is not needed for the test to pass)
        time.sleep(0.6)
        assert d.status()["compiles"] == before
        handle.write("The second half says 42 tardigrades survived.\n")
    d.until(lambda: page_for(ws, "slow.md"), what="the page after the writer closed the file")
    assert source_sha(ws, "slow.md") == sha(target)  # compiled from the whole file
    ingests = [s for _, op, s, _ in log_page.read_entries(ws.wiki / "log.md") if op == "ingest" and "slow.md" in s]
    assert len(ingests) == 1


def test_status_file_and_status_view(ws: Workspace, running) -> None:
    d = running()
    st = daemon_status(ws)
    assert st["running"] is True and st["pid"] > 0
    for key in ("state", "queue", "last_compile", "last_lint", "errors", "failing", "watcher",
                "next_rescan", "next_lint", "started_at", "updated_at", "backend", "log_file"):
        assert key in st, key
    text = "\n".join(format_status(st))
    assert text.startswith("running: pid") and "last compile:" in text
    assert (ws.state_dir / "daemon.log").exists()
    d.stop()
    st = daemon_status(ws)
    assert st["running"] is False and st["state"] == "stopped"
    assert "not running" in format_status(st)[0]


def test_status_without_a_daemon(ws: Workspace) -> None:
    st = daemon_status(ws)
    assert st["running"] is False and st["state"] == "never-run"
    assert "wikimem run" in format_status(st)[0]


# ---------------------------------------------------------------- one writer
def test_the_lock_is_held_for_the_daemons_life(ws: Workspace, settings: Settings, running) -> None:
    running()
    with pytest.raises(WorkspaceBusy, match="wikimem daemon"):
        compile_workspace(ws, settings)
    second = Daemon(ws, settings, fast(settings), log_to_stderr=False)
    with pytest.raises(WorkspaceBusy, match="already running"):
        second.run()


# ---------------------------------------------------------------- failures
class _PlantedFailure:
    """The offline backend, except that sources containing FAIL-ME fail to load."""

    name = "planted-failure"
    needs = None

    def __init__(self, settings: Settings):
        self.inner = create("offline", settings)

    def compile(self, batch: Batch) -> BatchResult:
        def load(path: str, **options: Any) -> Any:
            if "FAIL-ME" in (batch.workspace.root / path).read_text(encoding="utf-8", errors="replace"):
                raise RuntimeError("planted failure")
            return batch.load(path, **options)

        return self.inner.compile(dataclasses.replace(batch, load=load))


class _FlakyBatch:
    """Raises from the whole batch the first two times, then works (a network blip)."""

    name = "flaky-batch"
    needs = None
    calls = 0

    def __init__(self, settings: Settings):
        self.inner = create("offline", settings)

    def compile(self, batch: Batch) -> BatchResult:
        type(self).calls += 1
        if type(self).calls <= 2:
            raise ConnectionError("backend unreachable")
        return self.inner.compile(batch)


register("planted-failure", _PlantedFailure)
register("flaky-batch", _FlakyBatch)


@pytest.mark.slow
def test_failing_source_is_retried_with_backoff_then_left_alone(ws: Workspace, running) -> None:
    write(ws, "good.md", TEXT.format(title="Good"))
    d = running(backend="planted-failure", retry_limit=3)

    write(ws, "bad.md", TEXT.format(title="Bad") + "FAIL-ME\n")

    def gave_up() -> dict[str, Any] | None:
        st = d.status()
        items = [f for f in st.get("failing", []) if f["path"] == "raw/bad.md" and f["gave_up"]]
        return items[0] if items and st.get("state") == "idle" else None

    item = wait_for(gave_up, what="the daemon to give up on raw/bad.md")
    assert item["attempts"] == 3 and "planted failure" in item["reason"]
    log_text = (ws.wiki / "log.md").read_text(encoding="utf-8")
    assert "- attempts: 3; the daemon retries it when the file changes" in log_text
    assert any("gave up" in e["message"] for e in d.status()["errors"])

    # another file arrives: the given-up source is not retried with it
    compiles = d.status()["compiles"]
    write(ws, "other.md", TEXT.format(title="Other"))
    d.until(lambda: page_for(ws, "other.md"), what="other.md's page")
    d.idle_after(compiles)
    assert gave_up()["attempts"] == 3  # type: ignore[index]

    # fixed: compiled at once, and no longer reported
    write(ws, "bad.md", TEXT.format(title="Bad, fixed"))
    d.until(lambda: page_for(ws, "bad.md"), what="the fixed file's page")
    wait_for(lambda: not d.status().get("failing"), what="the failure to clear")
    assert page_for(ws, "good.md") is not None


@pytest.mark.slow
def test_a_failing_batch_is_retried_and_the_daemon_keeps_going(ws: Workspace, running) -> None:
    _FlakyBatch.calls = 0
    write(ws, "a.md", TEXT.format(title="A"))
    d = running(backend="flaky-batch")  # the catch-up itself fails
    wait_for(lambda: (d.status().get("last_compile") or {}).get("ok"), what="a retried compile to succeed")
    assert page_for(ws, "a.md") is not None
    errors = d.status()["errors"]
    assert len(errors) == 2 and "backend unreachable" in errors[0]["message"]


def test_a_missing_raw_folder_never_empties_the_wiki(ws: Workspace, running) -> None:
    write(ws, "keep.md", TEXT.format(title="Keep"))
    d = running()
    page = page_for(ws, "keep.md")
    assert page is not None
    moved = ws.root / "raw-unmounted"
    ws.raw.rename(moved)
    d.daemon.put(Work("rescan", reason="test"))
    wait_for(lambda: any("missing" in e["message"] for e in d.status().get("errors", [])), what="the missing-raw error")
    assert page.exists()  # the compiler would have read "every source deleted"
    moved.rename(ws.raw)
    d.daemon.put(Work("rescan", reason="test"))
    write(ws, "back.md", TEXT.format(title="Back"))
    d.until(lambda: page_for(ws, "back.md"), what="the watcher to come back with raw/")
    assert page.exists()


def test_the_preload_leaves_a_batchs_process_nothing_to_compile(ws: Workspace, settings: Settings) -> None:
    """What a batch's process compiles is gone with it: the daemon compiles the patterns made
    lazily (wikimem.patterns) and the templates, where a compile keeps them, before it forks."""
    from wikimem import patterns, templating

    daemon = Daemon(ws, settings, fast(settings, isolate_batches=True), log_to_stderr=False)
    daemon._preload()
    assert all(p._compiled is not None for p in patterns._MADE)
    assert templating._compiled_in == ws.state_dir / templating.COMPILED_FOLDER


# ---------------------------------------------------------------- a batch in a process of its own
def test_an_isolated_batch_runs_in_a_child_and_brings_back_its_result_or_its_error(
    ws: Workspace, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon = Daemon(ws, settings, fast(settings, isolate_batches=True), log_to_stderr=False)
    held: list[int] = []

    def grow() -> int:
        held.extend(range(100_000))  # in the child: the daemon's list stays empty
        return os.getpid()

    assert daemon._isolated(grow) != os.getpid() and held == []

    def vanished() -> None:
        raise FileNotFoundError(2, "No such file or directory", str(ws.raw / "gone.md"))

    with pytest.raises(FileNotFoundError) as caught:
        daemon._isolated(vanished)
    assert caught.value.filename == str(ws.raw / "gone.md")  # the daemon's rescan needs it

    def unpicklable() -> None:
        raise ValueError(lambda: None)

    with pytest.raises(RuntimeError, match="lambda"):
        daemon._isolated(unpicklable)
    with pytest.raises(RuntimeError, match="without a result"):
        daemon._isolated(lambda: os._exit(3))
    daemon.stopping.set()
    with pytest.raises(service._Abandon):  # killed while stopping: the batch is abandoned
        daemon._isolated(lambda: os._exit(1))
    import wikimem.lint

    monkeypatch.setattr(wikimem.lint, "run_lint", lambda *args: os._exit(1))
    daemon._lint()  # a lint's process gone while stopping: the daemon goes on stopping, no error
    assert daemon.last_lint is None


def test_a_daemon_that_isolates_its_batches_compiles_drops_and_reports_its_own_pid(ws: Workspace, running) -> None:
    d = running(isolate_batches=True)
    write(ws, "tardigrades.md", TEXT.format(title="Tardigrades"))
    page = d.until(lambda: page_for(ws, "tardigrades.md"), what="the dropped file's page")
    assert "Tardigrades" in page.read_text(encoding="utf-8")
    status = d.idle_after(1)
    assert status["pid"] == os.getpid() and status["last_compile"]["compiled"] == 1
    assert status["last_compile"]["process_peak_mb"] > 0  # the batch's process, measured
    assert S.search(ws, "tardigrades frozen")  # the batch's process brought the index up to date
    d.daemon.put(Work("lint", reason="test"))  # a lint batch too, its report back from its process
    linted = wait_for(lambda: (d.status().get("last_lint") or {}).get("at") and d.status()["last_lint"],
                      what="the lint in the status file")
    assert linted["ok"] is not None and "errors" in linted and (ws.wiki / "lint.md").exists()
    assert d.stop() == 0


# ---------------------------------------------------------------- memory
def test_memory_is_released_after_each_batch_once_the_batch_is_gone(
    ws: Workspace, running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """release_memory runs after a compile and after a lint alone, when nothing of the batch
    (its Pending, with the changes it collected) is alive any more to be kept."""
    import gc

    from wikimem import service

    batches_alive: list[int] = []

    def release() -> None:
        # what cycles of the batch hold (whoosh's writer leaves a few, with the frames above
        # it) goes with the collection release_memory runs; a batch still referenced stays
        gc.collect()
        batches_alive.append(sum(isinstance(o, service.Pending) for o in gc.get_objects()))

    monkeypatch.setattr(service, "release_memory", release)
    monkeypatch.setitem(sys.modules, "wikimem.lint", None)  # a lint batch that is quick: skipped with a note
    d = running()
    wait_for(lambda: batches_alive, what="the release after the catch-up")
    write(ws, "note.md", TEXT.format(title="Note"))
    d.idle_after(1)
    wait_for(lambda: len(batches_alive) >= 2, what="the release after the drop")
    d.daemon.put(Work("lint", reason="test"))
    wait_for(lambda: len(batches_alive) >= 3, what="the release after the lint")
    wait_for(lambda: d.status().get("last_lint"), what="the lint in the status file")
    assert d.status()["last_lint"]["skipped"]
    assert batches_alive[:3] == [0, 0, 0]


def test_release_memory_empties_the_caches_a_batch_fills() -> None:
    from wikimem.backends import offline_pages
    from wikimem.search import analysis
    from wikimem.service import release_memory

    analysis.analyzer().counts("Tardigrades survive freezing")
    offline_pages._folded("Tardigrades survive freezing.")
    offline_pages._content_words("Surviving the cold")
    release_memory()
    assert not analysis._WORDS
    assert offline_pages._folded.cache_info().currsize == 0
    assert offline_pages._content_words.cache_info().currsize == 0


# ---------------------------------------------------------------- lint
def test_lint_is_skipped_with_a_note_when_the_module_is_absent(
    ws: Workspace, running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "wikimem.lint", None)  # import now raises ImportError
    d = running(lint=parse_schedule("every 6h"))  # never linted here, so it is overdue at start
    last = wait_for(lambda: d.status().get("last_lint"), what="the lint job")
    assert last["ok"] is None and "not available" in last["skipped"]
    assert d.status()["next_lint"]


def test_lint_runs_when_available(ws: Workspace, running) -> None:
    try:
        from wikimem.lint import run_lint  # noqa: F401
    except ImportError:
        pytest.skip("wikimem.lint.run_lint is not there yet")
    write(ws, "a.md", TEXT.format(title="A"))
    d = running(lint=parse_schedule("every 6h"))
    last = wait_for(lambda: (d.status().get("last_lint") or {}).get("at") and d.status()["state"] == "idle"
                    and d.status()["last_lint"], what="the lint job")
    # run_lint takes the writer lock itself: the daemon's lock must let it through
    assert "skipped" not in last and "error" not in last, last
    assert isinstance(last["errors"], int) and last["ok"] == (last["errors"] == 0)
    assert (ws.wiki / "lint.md").exists()


# ---------------------------------------------------------------- settings
def test_options_come_from_settings(settings: Settings) -> None:
    s = dataclasses.replace(settings, debounce_seconds=1.5, rescan_minutes=0, lint_schedule="0 3 * * *")
    opts = DaemonOptions.from_settings(s)
    assert opts.debounce == 1.5
    assert opts.rescan.trigger is None and opts.rescan.text == "off"
    assert opts.lint.text == "cron 0 3 * * *"
    with pytest.raises(UsageError, match="not understood"):
        DaemonOptions.from_settings(dataclasses.replace(settings, lint_schedule="sometimes"))


def test_status_json_is_valid_json_at_all_times(ws: Workspace, running) -> None:
    d = running()
    stop = threading.Event()
    bad: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                json.loads((ws.state_dir / "status.json").read_text(encoding="utf-8"))
            except ValueError as exc:
                bad.append(str(exc))

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    before = d.status()["compiles"]
    for i in range(10):
        write(ws, f"n{i}.md", TEXT.format(title=f"N{i}"))
    d.idle_after(before)
    stop.set()
    t.join(5)
    assert bad == []  # written atomically: a reader never sees half a file


class _SlowLoads:
    """The offline backend reading each source slowly, as a model backend would take time."""

    name = "slow-loads"
    needs = None

    def __init__(self, settings: Settings):
        self.inner = create("offline", settings)

    def compile(self, batch: Batch) -> BatchResult:
        def load(path: str) -> Any:
            time.sleep(0.05)
            return batch.load(path)

        for path in batch.changed:  # read every changed source through the (slow) loader first
            load(path)
        return self.inner.compile(batch)


register("slow-loads", _SlowLoads)


@pytest.mark.slow
def test_stop_mid_batch_abandons_it_with_nothing_written(ws: Workspace, running) -> None:
    d = running(backend="slow-loads", abandon_on_stop=True)
    for i in range(40):
        write(ws, f"n{i:02d}.md", TEXT.format(title=f"Note {i}"))
    wait_for(lambda: d.status().get("state") == "compiling", what="the batch to start")
    assert d.stop() == 0
    assert not list((ws.wiki / "sources").glob("*.md"))  # abandoned before any page was written
    assert read_status_file(ws)["state"] == "stopped"  # type: ignore[index]
    # the next start redoes the whole batch
    d2 = running()
    assert len(list((ws.wiki / "sources").glob("*.md"))) == 40
    assert d2.status()["last_compile"]["compiled"] == 40


def test_an_existing_search_index_is_kept_fresh(ws: Workspace, running) -> None:
    search = pytest.importorskip("wikimem.search")
    write(ws, "a.md", TEXT.format(title="A"))
    d = running()
    search.update_index(ws)  # the user searched once: the workspace now has an index
    manifest = search.index_dir(ws) / "manifest.json"
    write(ws, "tardigrade-moss.md", TEXT.format(title="Moss"))
    d.until(lambda: page_for(ws, "tardigrade-moss.md"), what="the page")

    def indexed() -> bool:
        files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        page = page_for(ws, "tardigrade-moss.md")
        return page is not None and "raw/tardigrade-moss.md" in files and f"wiki/sources/{page.name}" in files
    d.until(indexed, what="the index to include the new source and its page")


@pytest.mark.slow
def test_polling_mode_compiles_drops_too(ws: Workspace, running) -> None:
    # network folders and some container mounts deliver no native events
    d = running(polling=True, poll_interval=0.2)
    assert d.status()["watcher"] == "polling"
    write(ws, "polled.md", TEXT.format(title="Polled"))
    d.until(lambda: page_for(ws, "polled.md"), what="the page, found by polling")
    (ws.raw / "polled.md").unlink()
    d.until(lambda: not page_for(ws, "polled.md"), what="the delete, found by polling")


@pytest.mark.slow
def test_a_file_deleted_mid_compile_is_not_an_error(
    ws: Workspace, running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync client or a quick `rm` removes a file between the scan and its read: the
    daemon compiles again, and nothing shows up as an error."""
    from wikimem import compiler

    real = compiler.file_sha256

    def racing(path: Path) -> str:
        if path.name == "racy.md" and path.exists():
            path.unlink()  # gone after the scan saw it, before it is read
        return real(path)

    monkeypatch.setattr(compiler, "file_sha256", racing)
    d = running()
    write(ws, "racy.md", TEXT.format(title="Racy"))
    write(ws, "steady.md", TEXT.format(title="Steady"))
    d.until(lambda: page_for(ws, "steady.md"), what="the steady file's page")
    st = d.status()
    assert st["errors"] == [] and st["last_compile"]["ok"] is True
    assert page_for(ws, "racy.md") is None
    # the compile itself leaves the file for the next run, with one line (issue 17, item 6)
    assert "raw/racy.md went away while this compile read it" in (ws.state_dir / "daemon.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_requirement_added_to_a_page_while_the_daemon_runs_changes_the_timeline(ws: Workspace, running) -> None:
    """Quill's changelog drops Python 3.9; nothing says what is needed now ("above Python 3.9").
    A person adds "Quill requires Python 3.10 or newer." to the install page while the daemon
    runs: the watcher's compile makes it the current value."""
    pages = {
        "quill/index.md": "# Quill documentation\n\nQuill builds static sites.\n",
        "quill/install.md": "# Installing Quill\n\nRun the installer, then `quill build`.\n",
        "quill/changes.md": ("# Changelog\n\n## Version 4.1 (2025-03-01)\n\n- Drop support for Python 3.9.\n\n"
                             "## Version 4.0 (2024-03-01)\n\n- Quill supports Python 3.9 and newer.\n"),
        "quill/themes.md": "# Themes\n\nA theme is a folder of templates.\n",
        "quill/hosting.md": "# Hosting\n\nAny static host serves the output folder.\n",
    }
    for rel, text in pages.items():
        write(ws, rel, text)
    d = running()
    timeline = ws.wiki / "facts" / "quill-minimum-python-version.md"
    d.until(lambda: timeline.is_file() and "Current: **above Python 3.9**" in timeline.read_text(encoding="utf-8"),
            what="the timeline of the changelog alone")
    with open(ws.raw / "quill" / "install.md", "a", encoding="utf-8") as handle:
        handle.write("\nQuill requires Python 3.10 or newer.\n")
    d.until(lambda: "Current: **Python 3.10**" in timeline.read_text(encoding="utf-8"),
            what="the timeline to take the sentence added to the install page")
    assert "install.md" in timeline.read_text(encoding="utf-8")
    assert d.stop() == 0

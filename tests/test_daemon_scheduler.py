"""The clock: schedule parsing, APScheduler jobs that only enqueue, and no lint overlapping a compile."""

from __future__ import annotations

import dataclasses
import queue
import sys
import threading
import time
import types
from typing import Any

import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from conftest import write
from waiting import wait_for
from wikimem.backends import Batch, BatchResult, create, register
from wikimem.config import Settings
from wikimem.errors import UsageError
from wikimem.scheduler import Clock, interval_minutes, parse_schedule
from wikimem.service import Daemon, DaemonOptions, read_status_file
from wikimem.watcher import Work
from wikimem.workspace import Workspace


@pytest.mark.parametrize("text, seconds", [
    ("every 6h", 6 * 3600), ("6 hours", 6 * 3600), ("every 30m", 1800), ("every 30 minutes", 1800),
    ("Every 1 Day", 86400), ("90s", 90), ("every 1.5h", 5400),
])
def test_intervals(text: str, seconds: float) -> None:
    schedule = parse_schedule(text)
    assert isinstance(schedule.trigger, IntervalTrigger)
    assert schedule.trigger.interval.total_seconds() == seconds


def test_cron_and_off() -> None:
    cron = parse_schedule("0 */6 * * *")
    assert isinstance(cron.trigger, CronTrigger) and cron.text == "cron 0 */6 * * *"
    for off in ("off", "never", "", "  ", "0", "every 0h", None):
        assert parse_schedule(off).trigger is None
    assert interval_minutes(0).trigger is None
    assert interval_minutes(10).text == "every 10 minutes"


@pytest.mark.parametrize("bad", ["sometimes", "every fortnight", "61 * * * *", "every 6 parsecs"])
def test_bad_schedules_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_schedule(bad)
    assert "\n" not in str(info.value)


def test_jobs_fire_on_a_short_interval_and_only_enqueue() -> None:
    items: queue.Queue[Work] = queue.Queue()
    clock = Clock(items.put, rescan=parse_schedule("every 0.2s"), lint=parse_schedule("every 0.3s"))
    for job_id in ("rescan", "lint"):
        job = clock.scheduler.get_job(job_id)
        assert job.max_instances == 1 and job.coalesce is True
    clock.start()
    seen: list[Work] = []
    try:
        assert clock.next_run("rescan") and clock.next_run("lint", ).endswith("Z")

        def enough() -> bool:
            while not items.empty():
                seen.append(items.get())
            kinds = [w.kind for w in seen]
            return kinds.count("rescan") >= 2 and kinds.count("lint") >= 2
        wait_for(enough, what="two rescans and two lints")
    finally:
        clock.shutdown()
    assert {w.reason for w in seen} == {"periodic rescan", "scheduled lint"}
    assert not clock.scheduler.running


def test_off_schedules_add_no_jobs() -> None:
    clock = Clock(lambda w: None, rescan=parse_schedule("off"), lint=parse_schedule("off"))
    assert clock.scheduler.get_jobs() == []
    assert clock.next_run("lint") is None


# ---------------------------------------------------------------- in the daemon
class _Slow:
    """The offline backend, slowed down and recording when it ran."""

    name = "slow-recording"
    needs = None
    spans: list[tuple[str, float, float]] = []

    def __init__(self, settings: Settings):
        self.inner = create("offline", settings)

    def compile(self, batch: Batch) -> BatchResult:
        start = time.monotonic()
        time.sleep(0.15)
        result = self.inner.compile(batch)
        type(self).spans.append(("compile", start, time.monotonic()))
        return result


register("slow-recording", _Slow)


@pytest.mark.slow
def test_scheduled_lint_and_rescan_never_overlap_a_compile(
    ws: Workspace, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    _Slow.spans = []
    lint_calls: list[tuple[str, float, float]] = []

    def run_lint(ws_: Workspace, settings_: Settings) -> Any:
        start = time.monotonic()
        time.sleep(0.05)
        lint_calls.append(("lint", start, time.monotonic()))
        return types.SimpleNamespace(errors=0, warnings=1, counts={"error": 0, "warning": 1}, seconds=0.05)

    fake = types.ModuleType("wikimem.lint")
    fake.run_lint = run_lint  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "wikimem.lint", fake)
    options = DaemonOptions.from_settings(
        settings, debounce=0.05, rescan=parse_schedule("every 0.25s"), lint=parse_schedule("every 0.2s"),
    )
    daemon = Daemon(ws, settings, options, backend_name="slow-recording", log_to_stderr=False)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        for i in range(6):
            write(ws, f"n{i}.md", f"# Note {i}\n\nTardigrades survive {i + 1} years frozen.\n")
            time.sleep(0.1)  # spread the drops over several scheduler ticks (not for correctness)
        wait_for(lambda: len(lint_calls) >= 3 and len(list((ws.wiki / "sources").glob("*.md"))) == 6, what="several lints and all pages")
        status = wait_for(lambda: (read_status_file(ws) or {}).get("last_rescan") and read_status_file(ws),
                          what="a periodic rescan")
    finally:
        daemon.stop()
        thread.join(30)
    spans = sorted(_Slow.spans + lint_calls, key=lambda s: s[1])
    for (_, _, end), (_, start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, f"overlap in {spans}"
    assert _Slow.spans and len(lint_calls) >= 3
    assert status["last_lint"]["warnings"] == 1
    assert len(list((ws.wiki / "sources").glob("*.md"))) == 6


def test_options_use_the_settings(settings: Settings) -> None:
    opts = DaemonOptions.from_settings(dataclasses.replace(settings, rescan_minutes=2.5, lint_schedule="every 1h"))
    assert opts.rescan.trigger is not None and opts.rescan.trigger.interval.total_seconds() == 150
    assert opts.lint.text == "every 1 hours"


def test_once_enqueues_a_single_delayed_item() -> None:
    items: queue.Queue[Work] = queue.Queue()
    clock = Clock(items.put, rescan=parse_schedule("off"), lint=parse_schedule("off"))
    clock.start()
    try:
        clock.once(Work("lint", reason="now"), 0)
        assert items.get_nowait() == Work("lint", reason="now")
        clock.once(Work("lint", reason="later"), 0.2)
        assert clock.next_run("once-lint") is not None
        assert wait_for(lambda: None if items.empty() else items.get()) == Work("lint", reason="later")
        assert clock.next_run("once-lint") is None  # a date job runs once and is gone
    finally:
        clock.shutdown()

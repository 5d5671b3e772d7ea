"""The daemon's clock: APScheduler jobs that only put work on the worker's queue.

Jobs never compile or lint themselves. The single worker in `service` does, so a
scheduled lint can never overlap a compile, and a job that fires while the worker is
busy just waits in the queue. `max_instances=1` and `coalesce=True` keep a sleeping
laptop from waking up to a pile of missed runs: they collapse into one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from .errors import UsageError
from .watcher import Put, Work

OFF = {"", "off", "never", "none", "false", "0", "disabled"}
UNITS = {
    "s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
    "m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "d": "days", "day": "days", "days": "days",
}
EVERY_RE = re.compile(r"^(?:every\s+)?(\d+(?:\.\d+)?)\s*([a-z]+)$")


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the trigger (None = off) and how a person would say it."""

    trigger: BaseTrigger | None
    text: str


def parse_schedule(text: str | None, *, setting: str = "lint_schedule") -> Schedule:
    """`every 6h`, `6 hours`, `every 30m`, a 5-field cron expression, or `off`.

    A cron expression is read in the machine's local time zone (that is what "0 3 * * *"
    means to a person); intervals do not depend on it.
    """
    raw = (text or "").strip()
    lowered = " ".join(raw.lower().split())
    if lowered in OFF:
        return Schedule(None, "off")
    m = EVERY_RE.match(lowered)
    if m and m.group(2) in UNITS:
        amount = float(m.group(1))
        if amount <= 0:
            return Schedule(None, "off")
        unit = UNITS[m.group(2)]
        return Schedule(IntervalTrigger(**{unit: amount}), f"every {m.group(1)} {unit}")
    if len(raw.split()) == 5:
        try:
            return Schedule(CronTrigger.from_crontab(raw), f"cron {raw}")
        except ValueError as exc:
            raise UsageError(f"{setting} {raw!r} is not a valid cron expression ({exc})") from exc
    raise UsageError(
        f"{setting} {raw!r} is not understood: use an interval like 'every 6h' or 'every 30m', "
        "a cron expression like '0 */6 * * *', or 'off'"
    )


def interval_minutes(minutes: float) -> Schedule:
    if minutes <= 0:
        return Schedule(None, "off")
    return Schedule(IntervalTrigger(seconds=minutes * 60), f"every {minutes:g} minutes")


class Clock:
    """A BackgroundScheduler with the daemon's two jobs: the periodic rescan and lint."""

    def __init__(self, put: Put, *, rescan: Schedule, lint: Schedule):
        self.put = put
        self.rescan = rescan
        self.lint = lint
        # daemon thread: a scheduler must never keep a stopping process alive
        self.scheduler = BackgroundScheduler(daemon=True)
        common = {"max_instances": 1, "coalesce": True, "misfire_grace_time": None, "replace_existing": True}
        if rescan.trigger is not None:
            self.scheduler.add_job(
                self._enqueue("rescan", "periodic rescan"), rescan.trigger, id="rescan", name="rescan", **common
            )
        if lint.trigger is not None:
            self.scheduler.add_job(
                self._enqueue("lint", "scheduled lint"), lint.trigger, id="lint", name="lint", **common
            )

    def _enqueue(self, kind: str, reason: str) -> Callable[[], None]:
        def job() -> None:
            self.put(Work(kind, reason=reason))

        return job

    def once(self, work: Work, delay: float) -> None:
        """Enqueue `work` once, `delay` seconds from now (at once when delay <= 0)."""
        if delay <= 0:
            self.put(work)
            return
        when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay)
        self.scheduler.add_job(
            self.put, "date", args=(work,), run_date=when, id=f"once-{work.kind}", replace_existing=True,
            misfire_grace_time=None,
        )

    def start(self) -> None:
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            # wait=False: jobs only enqueue, there is nothing to wait for
            self.scheduler.shutdown(wait=False)

    def next_run(self, job_id: str) -> str | None:
        """The job's next run as an ISO UTC timestamp, for `wikimem status`."""
        job = self.scheduler.get_job(job_id)
        when = getattr(job, "next_run_time", None) if job else None
        if when is None:
            return None
        return when.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")

"""Requests in flight to the Messages API: how many at once, and when to hold back.

A compile keeps up to `concurrency` requests in flight. The window opens at one request
until the first answer comes back, so the prompt cache holds the stable prefix (tools,
AGENTS.md, the instructions, index.md) before the other conversations read it; requests sent
together before that would each pay to write it. Then it opens to `concurrency`.

A 429 (rate limited) or 529 (overloaded) halves the window, once per burst (a request sent
before the last cut does not cut it again), and holds every new request back for what the
answer's `retry-after` says; each answer after that widens the window by one request per
window's worth of answers, back up to `concurrency`: additive increase, multiplicative
decrease, as TCP shares a link. The rejected request is sent again: a rate limit slows a
compile down, it never fails a source.

The `anthropic-ratelimit-*` headers, when an answer has them, hold requests back before the
limit is hit: while the requests or tokens they say remain (less what was sent since) would
not cover the next request, it waits for their reset time.

When requests are rejected for `rate_limit_wait` seconds with none getting through, the
compile stops with RateLimited: a server that refuses everything costs a bounded wait.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import WikimemError

DEFAULT_RETRY_AFTER = 2.0  # seconds, when a 429/529 does not say
MAX_PAUSE = 60.0  # a retry-after longer than this is re-checked every minute (and the stall clock runs)
# ratelimit header families: (header stem, what one request spends from it)
_BUDGETS = ("requests", "input-tokens", "tokens", "output-tokens")


class RateLimited(WikimemError):
    """The API rejected every request for longer than rate_limit_wait: the compile stops."""


class Stopped(Exception):
    """The compile is stopping (a stall, an interrupt, credentials refused): send nothing more."""


@dataclass
class _Budget:
    remaining: int
    reset: float  # on the monotonic clock
    spent: int = 0  # sent since the answer that reported it


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms`, else `retry-after` (seconds or a date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _seconds_until(value: str) -> float | None:
    """An RFC 3339 time (the ratelimit headers' reset) as seconds from now."""
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return (when - dt.datetime.now(dt.UTC)).total_seconds()


class Traffic:
    """The window of requests in flight, shared by every conversation of one compile."""

    def __init__(self, ceiling: int, patience: float, *, clock: Callable[[], float] = time.monotonic):
        self.cond = threading.Condition()
        self.ceiling = max(1, ceiling)
        self.patience = patience
        self.clock = clock
        self.window = 1.0  # until the first answer: the prompt cache warms with one request
        self.warming = True
        self.in_flight = 0
        self.peak = 0  # most requests in flight at once
        self.sent = 0
        self.rejected = 0  # answered 429 or 529
        self.cuts = 0
        self.narrowest = self.ceiling  # the smallest the window got after a cut
        self.paused_until = 0.0
        self.last_cut = -math.inf
        self.refused_since: float | None = None  # the first rejection since the last answer
        self.budgets: dict[str, _Budget] = {}
        self.stop_reason: str | None = None
        self.waited = 0.0  # seconds requests were held back by a pause or a budget

    # --- the conversations' side
    def acquire(self, tokens: int = 1) -> float:
        """Wait for a place in the window (and for any pause or exhausted budget); returns the
        time the request goes out, to hand back to `answered` or `refused`."""
        with self.cond:
            while True:
                if self.stop_reason is not None:
                    raise Stopped(self.stop_reason)
                now = self.clock()
                self._check_stall(now)
                hold = max(self.paused_until - now, self._budget_wait(now, tokens))
                if hold <= 0 and self.in_flight < max(1, int(self.window)):
                    self.in_flight += 1
                    self.sent += 1
                    self.peak = max(self.peak, self.in_flight)
                    for name, budget in self.budgets.items():
                        budget.spent += 1 if name == "requests" else tokens
                    return now
                if hold > 0:
                    self.waited += min(hold, 1.0)
                self.cond.wait(min(hold, 1.0) if hold > 0 else 1.0)

    def answered(self, sent_at: float, headers: Mapping[str, str] | None) -> None:
        with self.cond:
            self.in_flight -= 1
            self.refused_since = None
            self._read(headers)
            if self.warming:
                self.warming = False
                self.window = float(self.ceiling)
            elif self.window < self.ceiling:
                self.window = min(float(self.ceiling), self.window + 1 / self.window)
            self.cond.notify_all()

    def refused(self, sent_at: float, headers: Mapping[str, str] | None) -> None:
        """A 429 or 529: narrow the window, pause for retry-after; the caller sends again."""
        with self.cond:
            self.in_flight -= 1
            self.rejected += 1
            now = self.clock()
            if self.refused_since is None:
                self.refused_since = now
            self._read(headers)
            if sent_at > self.last_cut:  # sent after the last cut: a new burst
                self.window = max(1.0, self.window / 2)
                self.last_cut = now
                self.cuts += 1
                self.narrowest = min(self.narrowest, int(self.window))
            wait = retry_after(headers)
            self.paused_until = max(self.paused_until, now + (DEFAULT_RETRY_AFTER if wait is None else min(wait, MAX_PAUSE)))
            self.cond.notify_all()

    def failed(self) -> None:
        """Another error: the place in the window is free again; nothing learnt about limits."""
        with self.cond:
            self.in_flight -= 1
            self.cond.notify_all()

    def stop(self, reason: str) -> None:
        with self.cond:
            if self.stop_reason is None:
                self.stop_reason = reason
            self.cond.notify_all()

    def target(self) -> int:
        """How many requests may be in flight now."""
        return max(1, int(self.window))

    def summary(self) -> dict[str, float | int]:
        return {"requests": self.sent, "rejected": self.rejected, "max_in_flight": self.peak,
                "concurrency": self.ceiling, "narrowest_window": self.narrowest if self.cuts else self.ceiling,
                "held_back_seconds": round(self.waited, 1)}

    # --- inside
    def _check_stall(self, now: float) -> None:
        if self.refused_since is not None and now - self.refused_since > self.patience:
            reason = (
                f"the API rejected every request (429/529, rate limited or overloaded) for {int(now - self.refused_since)} s "
                f"(rate_limit_wait {self.patience:g} s); nothing was written, and the next compile picks up "
                "where this one stopped. Wait, or raise rate_limit_wait in wikimem.toml"
            )
            self.stop_reason = reason
            self.cond.notify_all()
            raise RateLimited(reason)

    def _read(self, headers: Mapping[str, str] | None) -> None:
        """Take in what the anthropic-ratelimit-* headers say remains, and until when."""
        if not headers:
            return
        now = self.clock()
        for name in _BUDGETS:
            remaining = headers.get(f"anthropic-ratelimit-{name}-remaining")
            reset = headers.get(f"anthropic-ratelimit-{name}-reset")
            if remaining is None or reset is None:
                continue
            seconds = _seconds_until(reset)
            try:
                left = int(float(remaining))
            except ValueError:
                continue
            if seconds is None or seconds <= 0:
                self.budgets.pop(name, None)  # refilled by now
                continue
            self.budgets[name] = _Budget(left, now + seconds)

    def _budget_wait(self, now: float, tokens: int) -> float:
        wait = 0.0
        for name, budget in list(self.budgets.items()):
            if budget.reset <= now:
                del self.budgets[name]
                continue
            # output tokens are not known before the answer: wait only when none remain
            need = 1 if name in ("requests", "output-tokens") else tokens
            if budget.remaining - budget.spent < need:
                wait = max(wait, budget.reset - now)
        return wait

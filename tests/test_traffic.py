"""The window of requests in flight (backends/traffic.py) on a clock the test moves."""

from __future__ import annotations

import datetime as dt

import pytest

from wikimem.backends.traffic import RateLimited, Stopped, Traffic, retry_after


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_window_opens_after_one_answer_halves_on_a_429_and_grows_back() -> None:
    clock = Clock()
    traffic = Traffic(8, patience=60, clock=clock)
    assert traffic.target() == 1  # the prompt cache warms with one request
    sent = traffic.acquire()
    traffic.answered(sent, {})
    assert traffic.target() == 8
    sent_all = [traffic.acquire() for _ in range(8)]
    assert traffic.in_flight == 8 and traffic.peak == 8
    traffic.refused(sent_all[0], {"retry-after": "2"})
    traffic.refused(sent_all[1], {"retry-after": "2"})  # the same burst: cut once
    assert traffic.target() == 4 and traffic.cuts == 1 and traffic.rejected == 2
    assert traffic.paused_until == pytest.approx(102.0)
    for s in sent_all[2:]:
        traffic.answered(s, {})
    assert 4 < traffic.window < 6  # one more request per window of answers
    clock.now += 3  # past the pause
    for _ in range(60):
        traffic.answered(traffic.acquire(), {})
    assert traffic.target() == 8 and traffic.narrowest == 4  # back up to concurrency, never past it


def test_a_pause_holds_new_requests_back_and_a_long_storm_stops_the_compile() -> None:
    clock = Clock()
    traffic = Traffic(4, patience=10, clock=clock)
    traffic.answered(traffic.acquire(), {})
    traffic.refused(traffic.acquire(), {"retry-after-ms": "500"})
    clock.now += 11  # nothing got through for longer than rate_limit_wait
    with pytest.raises(RateLimited, match="rejected every request"):
        traffic.acquire()
    with pytest.raises(Stopped):
        traffic.acquire()


def test_ratelimit_headers_hold_requests_back_until_their_reset() -> None:
    clock = Clock()
    traffic = Traffic(8, patience=60, clock=clock)
    reset = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    sent = traffic.acquire()
    traffic.answered(sent, {"anthropic-ratelimit-requests-remaining": "2", "anthropic-ratelimit-requests-reset": reset,
                            "anthropic-ratelimit-input-tokens-remaining": "1000",
                            "anthropic-ratelimit-input-tokens-reset": reset})
    assert traffic._budget_wait(clock.now, 10) == 0
    traffic.acquire(10)
    traffic.acquire(10)
    assert 29 < traffic._budget_wait(clock.now, 10) <= 30  # two requests spent what remained
    fresh = Traffic(8, patience=60, clock=clock)
    fresh.answered(fresh.acquire(), {"anthropic-ratelimit-input-tokens-remaining": "1000",
                                     "anthropic-ratelimit-input-tokens-reset": reset})
    assert fresh._budget_wait(clock.now, 500) == 0 and fresh._budget_wait(clock.now, 5000) > 29


def test_retry_after_in_its_three_forms() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=20)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert 18 < (retry_after({"retry-after": later}) or 0) <= 20
    assert retry_after({}) is None and retry_after(None) is None

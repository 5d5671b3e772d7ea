"""Polling waits for tests of background work: a condition with a generous timeout, never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy (returned); fail after `timeout` seconds.

    The timeout only matters when a test fails, so it is generous: CI machines are busy.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")

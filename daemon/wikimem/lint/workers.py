"""One pool of worker processes per lint run, shared by the source reader and the page digests.

A first lint of a large wiki parses every raw source (corpus.py) and digests every
page (digest.py); both split the work over the cores. They share one pool: two
pools would each want every core, and a second pool could not be started with
fork once the first one's manager thread runs. Fork when this process has a
single thread (the CLI: workers start at once, nothing re-imported); forkserver
when it has more (the daemon's scheduler thread), where forking is unsafe.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

log = logging.getLogger("wikimem.lint")
MAX_WORKERS = 4


def count() -> int:
    return min(MAX_WORKERS, os.cpu_count() or 1)


def pool(run: Any) -> ProcessPoolExecutor | None:
    """The run's pool (kept on the context's RunCache), started on first use; None where there is no
    second core, or processes cannot be started (the caller then does the work itself)."""
    existing = run.pool
    if existing is None:
        existing = False
        if count() >= 2:
            method = "fork" if threading.active_count() == 1 else "forkserver"
            try:
                existing = ProcessPoolExecutor(max_workers=count(), mp_context=multiprocessing.get_context(method))
            except (OSError, RuntimeError, ValueError) as exc:
                log.info("lint: no worker processes (%s)", exc)
        run.pool = existing
    return existing if isinstance(existing, ProcessPoolExecutor) else None


def shutdown(run: Any) -> None:
    """Stop the run's pool, dropping work nobody waits for any more."""
    existing, run.pool = run.pool, None
    if existing:
        existing.shutdown(wait=True, cancel_futures=True)

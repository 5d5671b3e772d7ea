"""Processes wikimem forks for a piece of work (a daemon's batch, a compile's search seed) end
with the process that started them."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from typing import Any

WATCH_SECONDS = 0.5  # how often a child without PR_SET_PDEATHSIG looks whether its parent is gone


def die_with(parent: int) -> None:
    """End this process when its parent dies: a process killed with -9 must not leave its child
    (a batch, a pool worker, a helper) writing the workspace on its own beside the next one, nor
    holding what the next one waits for. On Linux the kernel does it (PR_SET_PDEATHSIG); where
    that is not to be had, a thread watches the parent pid and ends the process when it changes
    (the child is handed to another parent when its own dies)."""
    if not _kernel_kills_orphans():
        threading.Thread(target=_watch_parent, args=(parent,), name="wikimem-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the request took
        os._exit(1)


_prctl: list[Any] = []  # libc's prctl, or None where there is none: looked up once, before forks


def prepare() -> None:
    """Look prctl up in this process, so that children forked after do not each load ctypes."""
    if not _prctl:
        try:
            import ctypes

            _prctl.append(ctypes.CDLL(None, use_errno=True).prctl)
        except (OSError, AttributeError):
            _prctl.append(None)


def _kernel_kills_orphans() -> bool:
    prepare()
    prctl = _prctl[0]
    return prctl is not None and prctl(1, signal.SIGKILL) == 0  # PR_SET_PDEATHSIG


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def start_frozen(process: Any) -> None:
    """Start a forked `process` (multiprocessing's) with what this process holds frozen out of
    the garbage collector (gc.freeze): the child's collections never touch, and so never copy,
    the pages the two share. Unfrozen after, unless frozen already (a compile freezes what lives
    before it for its whole run: compiler._fewer_collections)."""

    frozen = gc.get_freeze_count()
    gc.freeze()
    try:
        process.start()
    finally:
        if not frozen:
            gc.unfreeze()

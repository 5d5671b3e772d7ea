"""Processes wikimem forks for a piece of work (a daemon's batch, a compile's search seed) end
with the process that started them."""

from __future__ import annotations

import os
import signal
from typing import Any


def die_with(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux: PR_SET_PDEATHSIG): a
    process killed with -9 must not leave its child writing the workspace on its own, beside
    the next one."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the request took
        os._exit(1)


def start_frozen(process: Any) -> None:
    """Start a forked `process` (multiprocessing's) with what this process holds frozen out of
    the garbage collector (gc.freeze): the child's collections never touch, and so never copy,
    the pages the two share. Unfrozen after, unless frozen already (a compile freezes what lives
    before it for its whole run: compiler._fewer_collections)."""
    import gc

    frozen = gc.get_freeze_count()
    gc.freeze()
    try:
        process.start()
    finally:
        if not frozen:
            gc.unfreeze()

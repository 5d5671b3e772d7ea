"""Processes wikimem forks for a piece of work (a daemon's batch, a compile's search seed) end
with the process that started them."""

from __future__ import annotations

import os
import signal


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

"""A running daemon picks up a wiki pulled from a teammate without recompiling it.

Real git, a real watchdog observer and the daemon's worker thread. Every wait polls with a
generous timeout; nothing relies on a fixed sleep for correctness.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import write
from test_history import AGING, CANCER, MOLES, compile_, git, head, shared_wiki
from waiting import wait_for
from wikimem.config import load_settings
from wikimem.scheduler import parse_schedule
from wikimem.service import Daemon, DaemonOptions, read_status_file

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.slow,  # a running daemon and git repositories
]


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Every test here: conftest's git environment."""



def test_running_daemon_picks_up_a_pull_without_recompiling(tmp_path: Path) -> None:
    origin, alice, bob = shared_wiki(tmp_path, ("moles.md", MOLES), ("aging.md", AGING))

    settings = load_settings(bob.root, environ={})
    options = DaemonOptions.from_settings(
        settings, debounce=0.2, rescan=parse_schedule("off"), lint=parse_schedule("off"))
    daemon = Daemon(bob, settings, options, log_to_stderr=False)
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(daemon.run()), daemon=True)
    thread.start()
    try:
        wait_for(lambda: daemon.ready.is_set() or result, what="the catch-up compile")
        status = lambda: read_status_file(bob) or {}  # noqa: E731
        wait_for(lambda: status().get("state") == "idle", what="the daemon to be idle")
        compiles = status().get("compiles", 0)

        write(alice, "cancer.md", CANCER)  # also changes pages bob has
        assert compile_(alice).updated
        git(alice.root, "add", "raw")
        git(alice.root, "commit", "-q", "-m", "cancer source")
        git(alice.root, "push", "-q", str(origin), "main")
        git(bob.root, "pull", "-q", "--ff-only", str(origin), "main")
        pulled = head(bob)

        st = wait_for(lambda: status() if status().get("compiles", 0) > compiles
                      and status().get("state") == "idle" else None, what="the daemon's compile after the pull")
        last = st["last_compile"]
        assert last["ok"] and last["noop"] and last["compiled"] == 0 and not last["kept"], last
        assert head(bob) == pulled  # nothing rewritten, so nothing to commit
        assert not (bob.state_dir / "proposed").exists()
    finally:
        daemon.stop()
        thread.join(30)
    assert not thread.is_alive()

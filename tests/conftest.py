"""Shared fixtures: each test gets its own temporary workspace; none touches the repo's raw/ or wiki/."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
# how to get the real corpora, said by every test that skips without them
CORPUS_HOW = (
    "put the shared corpora at ../shared/corpus beside the repository (topics/, versions/, sphinx/, "
    "formats/, each with raw/; each corpus's ATTRIBUTION.md names the public repository, commit and path "
    "every file was copied from, byte for byte)"
)


@pytest.fixture(autouse=True)
def _reproducible_dates(monkeypatch: pytest.MonkeyPatch) -> None:
    # pages stamp `updated:` with today's date; pin it so byte comparisons are stable
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1798675200")  # 2027-01-01
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "WIKIMEM_BACKEND", "WIKIMEM_ROOT"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _no_engine_outlives_its_test():
    """An in-process MCP server or a watched engine leaves a thread that checks the index every
    few seconds: stopped at the end of the test that started it, so no later test forks (or
    finds its index updated) beside it."""
    yield
    import threading

    if not any(t.name == "wikimem-index-watch" for t in threading.enumerate()):
        return
    import gc

    from wikimem.search.engine import ENGINES, Engine

    for eng in [o for o in gc.get_objects() if isinstance(o, Engine)]:
        eng.stop()
    ENGINES.clear()
    for thread in threading.enumerate():
        if thread.name == "wikimem-index-watch":
            thread.join(5.0)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.at(tmp_path / "ws")
    init_workspace(workspace)
    return workspace


@pytest.fixture
def settings(ws: Workspace):
    return load_settings(ws.root, environ={})


def write(ws: Workspace, rel: str, text: str | bytes) -> Path:
    path = ws.raw / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def corpus(name: str) -> Path:
    path = CORPUS / name / "raw"
    if not path.is_dir():
        pytest.skip(f"corpus {name!r} not found at {path}: {CORPUS_HOW}")
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


os.environ.setdefault("WIKIMEM_TESTING", "1")
# the compiled patterns every wikimem process keeps (wikimem/recache.py) go to a folder of the
# test run's own, not the user's cache, and every process the tests start shares it
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="wikimem-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """git identity and config from the environment only (the machine's ~/.gitconfig is not
    read), WIKIMEM_GIT unset, history's one-time warnings forgotten."""
    from wikimem import history

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "person@example.org")
    monkeypatch.delenv("WIKIMEM_GIT", raising=False)
    history.warned.clear()


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def single_threaded(wait: float = 5.0) -> None:
    """Wait for threads other tests left (an HTTP server's request handler ending, a warm-up)
    to end, or skip: wikimem forks worker processes only from a process with no other thread."""
    import threading
    import time

    deadline = time.monotonic() + wait
    for thread in threading.enumerate():
        if thread is not threading.main_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    if threading.active_count() > 1:
        pytest.skip(f"threads of other tests still run ({[t.name for t in threading.enumerate()][1:]}): wikimem does not fork then")


def past_racy_window(ws: Workspace) -> None:
    """Wait until no file of raw/ was changed within a timestamp's granularity (workspace.racy):
    a test that compares two indexes or two compiles wants none of raw/ read again as racily
    clean by one of them only."""
    import time

    from waiting import wait_for
    from wikimem.workspace import racy

    newest = max((p.lstat() for p in ws.raw.rglob("*") if p.is_file()), key=lambda st: st.st_ctime_ns, default=None)
    if newest is not None:
        wait_for(lambda: not racy(newest.st_mtime_ns, newest.st_ctime_ns, time.time_ns()),
                 what="raw/'s newest change to be older than a timestamp's granularity")

"""`wikimem run` as a real process: signals, the one-writer lock, kill -9 recovery, status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write
from waiting import wait_for
from wikimem.pages import loads_page
from wikimem.service import daemon_status
from wikimem.workspace import Workspace

pytestmark = pytest.mark.slow  # every test starts and stops real `wikimem run` processes

CLI = [sys.executable, "-m", "wikimem.cli"]
FAST_TOML = 'debounce_seconds = 0.2\nrescan_minutes = 0\nlint_schedule = "off"\n'




def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def note(i: int, words: str = "") -> str:
    return (
        f"# Field note {i}\n\n"
        f"Tardigrade sample {i} was collected from moss in {1990 + i % 30}. "
        f"It survived {i % 50 + 1} years frozen at -20 C and revived within {i % 24 + 1} hours. "
        f"Cryptobiosis lets tardigrades suspend metabolism. {words}\n\n"
        "## Method\n\n"
        + "".join(f"Step {k}: the moss was rehydrated with {k * 10} ml of water over {k} hours.\n" for k in range(1, 15))
    )


class Proc:
    def __init__(self, ws: Workspace):
        self.ws = ws
        self.err = open(ws.root / "daemon-stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115
        self.p = subprocess.Popen([*CLI, "run", "--root", str(ws.root)], stdout=subprocess.DEVNULL,
                                  stderr=self.err, env=os.environ.copy())

    def stderr(self) -> str:
        self.err.flush()
        return (self.ws.root / "daemon-stderr.txt").read_text(encoding="utf-8")

    def status(self) -> dict[str, Any]:
        return daemon_status(self.ws)

    def wait_idle(self, *, compiles: int = 1) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            if self.p.poll() is not None:
                raise AssertionError(f"daemon exited with {self.p.returncode}: {self.stderr()}")
            st = self.status()
            ok = st.get("running") and st.get("state") == "idle" and st.get("compiles", 0) >= compiles and st.get("queue") == 0
            return st if ok else None
        return wait_for(check, what="the daemon to be idle")

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(30)
        self.err.close()


@pytest.fixture
def proc(ws: Workspace) -> Iterator[Callable[[], Proc]]:
    (ws.root / "wikimem.toml").write_text(FAST_TOML, encoding="utf-8")
    started: list[Proc] = []

    def start() -> Proc:
        p = Proc(ws)
        started.append(p)
        return p

    yield start
    for p in started:
        p.close()


def source_pages(ws: Workspace) -> dict[str, Path]:
    """raw path -> its source page."""
    out = {}
    for page in (ws.wiki / "sources").glob("*.md"):
        parsed = loads_page(page.name, page.read_text(encoding="utf-8"))
        for src in parsed.sources:
            out[src] = page
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_signal_stops_cleanly_with_exit_0(ws: Workspace, proc, sig: signal.Signals) -> None:
    if sig == signal.SIGHUP and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        pytest.skip("running under nohup: the daemon inherits SIGHUP ignored, as it should")
    d = proc()
    d.wait_idle()
    write(ws, "a.md", note(1))
    wait_for(lambda: "raw/a.md" in source_pages(ws) and d.status().get("state") == "idle", what="a.md's page")
    d.p.send_signal(sig)
    assert d.p.wait(30) == 0, d.stderr()
    st = d.status()
    assert st["running"] is False and st["state"] == "stopped"
    assert "stopped" in d.stderr()
    # the lock went with it: a one-shot compile runs, and has nothing to do
    done = cli("compile", "--root", str(ws.root), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["noop"] is True


def test_one_writer_per_workspace(ws: Workspace, proc) -> None:
    d = proc()
    d.wait_idle()
    second = cli("run", "--root", str(ws.root), timeout=30)
    assert second.returncode == 4
    assert "already running" in second.stderr and f"pid {d.p.pid}" in second.stderr
    assert second.stderr.count("\n") == 1  # one line

    one_shot = cli("compile", "--root", str(ws.root))
    assert one_shot.returncode == 4 and "wikimem daemon" in one_shot.stderr
    as_json = cli("compile", "--root", str(ws.root), "--json")
    assert as_json.returncode == 4 and json.loads(as_json.stdout)["exit_code"] == 4

    status = cli("status", "--root", str(ws.root), "--json")
    assert status.returncode == 0
    data = json.loads(status.stdout)
    assert data["running"] is True and data["pid"] == d.p.pid and data["ok"] is True
    assert d.p.poll() is None  # the refused ones did not disturb the running daemon
    d.p.terminate()
    assert d.p.wait(30) == 0


def test_status_command_exit_codes(ws: Workspace, proc) -> None:
    never = cli("status", "--root", str(ws.root))
    assert never.returncode == 1 and "no daemon has run" in never.stdout
    d = proc()
    d.wait_idle()
    up = cli("status", "--root", str(ws.root))
    assert up.returncode == 0 and up.stdout.startswith(f"running: pid {d.p.pid}")
    d.p.terminate()
    d.p.wait(30)
    down = cli("status", "--root", str(ws.root), "--json")
    assert down.returncode == 1
    assert json.loads(down.stdout)["state"] == "stopped"


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    """Running, not a zombie left for its new parent to reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_batchs_process_dies_with_the_daemon() -> None:
    """A daemon killed with -9 takes the process compiling its batch with it (lifetime.die_with):
    a batch left running alone would write the wiki beside the next daemon."""
    script = ("import os, sys, time\n"
              "from wikimem.lifetime import die_with\n"
              "parent = os.getpid()\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    die_with(parent)\n"
              "    time.sleep(60)\n"
              "    os._exit(0)\n"
              "print(pid, flush=True)\n"
              "time.sleep(60)\n")
    daemon = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert daemon.stdout is not None
    batch = int(daemon.stdout.readline())
    assert alive(batch)
    daemon.kill()
    daemon.wait(30)
    wait_for(lambda: not alive(batch), timeout=10, what="the batch's process to die with its parent")


@pytest.mark.parametrize("moment", ["analysing", "writing"])
def test_kill_9_loses_nothing(ws: Workspace, proc, moment: str) -> None:
    """Kill the daemon in the middle of a batch; the next start catches up, and nothing is torn,
    left behind as a temp file, or mistaken for a person's edit."""
    d = proc()
    d.wait_idle()
    names = [f"notes/note-{i:03d}.md" for i in range(60)]
    for i, name in enumerate(names):
        write(ws, name, note(i, "tardigrades and rotifers " * (i % 5)))
    # kill as soon as the batch starts (sources are being read and analysed), or as soon as
    # its first page is on disk (pages written, state.db not yet committed)
    if moment == "analysing":
        wait_for(lambda: d.status().get("state") == "compiling", what="the batch to start")
    else:
        wait_for(lambda: any((ws.wiki / "sources").glob("*.md")), what="the first page")
    batch = children(d.p.pid)  # `wikimem run` compiles each batch in a process of its own
    assert batch or moment == "analysing"  # (the batch may not have forked yet)
    d.p.send_signal(signal.SIGKILL)
    d.p.wait(30)
    # ... which dies with it: no process goes on writing the wiki beside the next daemon
    wait_for(lambda: not any(alive(pid) for pid in batch), what="the batch's process to die with the daemon")

    st = cli("status", "--root", str(ws.root))
    assert st.returncode == 1 and "without cleaning up" in st.stdout

    d2 = proc()
    d2.wait_idle()
    st2 = d2.status()
    assert st2["last_compile"]["ok"] is True and st2["last_compile"]["kept"] == []
    pages = source_pages(ws)
    assert sorted(pages) == sorted(f"raw/{n}" for n in names)
    for page in [*(ws.wiki / "sources").glob("*.md"), *(ws.wiki / "concepts").glob("*.md")]:
        loads_page(page.name, page.read_text(encoding="utf-8"))  # raises on a torn page
    leftovers = [p for p in ws.root.rglob("*") if p.name.startswith(".wikimem-") and p.suffix == ".tmp"]
    assert leftovers == []
    assert not (ws.state_dir / "proposed").exists() or not any((ws.state_dir / "proposed").rglob("*.md"))
    d2.p.terminate()
    assert d2.p.wait(30) == 0
    again = cli("compile", "--root", str(ws.root), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["noop"] is True


def test_sigterm_mid_batch_abandons_safely_and_the_next_start_redoes_it(ws: Workspace, proc) -> None:
    d = proc()
    d.wait_idle()
    names = [f"notes/note-{i:03d}.md" for i in range(60)]
    for i, name in enumerate(names):
        write(ws, name, note(i))
    wait_for(lambda: d.status().get("state") == "compiling", what="the batch to start")
    d.p.send_signal(signal.SIGTERM)
    assert d.p.wait(60) == 0, d.stderr()
    err = d.stderr()
    # the offline batch is dropped at the next source (nothing written), unless it was
    # already past its last source when the signal came
    assert "abandoned the batch" in err or len(source_pages(ws)) == len(names), err
    assert daemon_status(ws)["state"] == "stopped"
    d2 = proc()
    st = d2.wait_idle()
    assert sorted(source_pages(ws)) == sorted(f"raw/{n}" for n in names)
    assert st["last_compile"]["kept"] == []


def _kill_while_workers_run(ws: Workspace, pid: int, workers_of: Callable[[], list[int]]) -> list[int]:
    """Wait for the pool's workers, kill `pid` with -9, return the workers seen."""
    workers = wait_for(lambda: (w if len(w := workers_of()) >= 2 else None), what="the pool's workers")
    os.kill(pid, signal.SIGKILL)
    return workers


def test_a_compile_killed_with_its_pool_running_leaves_no_worker_and_no_lock(ws: Workspace) -> None:
    """issue 38: `kill -9` of a one-shot compile of 60 new sources (analysed by a pool of worker
    processes). Before, the workers lived on with parent pid 1, holding .wikimem/lock, and every
    compile after exited 4 naming the dead pid. Now they die with it, and the next compile runs."""
    for i in range(60):
        write(ws, f"notes/note-{i:03d}.md", note(i, "tardigrades and rotifers " * (i % 5)))
    compile_ = subprocess.Popen([*CLI, "compile", "--root", str(ws.root)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=os.environ.copy())
    workers = _kill_while_workers_run(ws, compile_.pid, lambda: children(compile_.pid))
    compile_.wait(30)
    wait_for(lambda: not any(alive(pid) for pid in workers), timeout=20, what="the workers to die with the compile")
    again = cli("compile", "--root", str(ws.root), "--json")
    assert again.returncode == 0, again.stderr
    assert len(source_pages(ws)) == 60


def test_a_daemon_killed_mid_batch_leaves_no_worker_of_its_batch(ws: Workspace, proc) -> None:
    """The daemon's batch runs in a child process, which forks the pool that analyses 60 new
    sources: `kill -9` of the daemon takes the batch and its workers with it, and the next
    daemon starts and catches up."""
    d = proc()
    d.wait_idle()
    for i in range(60):
        write(ws, f"notes/note-{i:03d}.md", note(i))

    def workers() -> list[int]:
        return [w for batch in children(d.p.pid) for w in children(batch)]

    seen = _kill_while_workers_run(ws, d.p.pid, workers)
    d.p.wait(30)
    wait_for(lambda: not any(alive(pid) for pid in seen), timeout=20, what="the batch's workers to die")
    d2 = proc()
    d2.wait_idle()
    assert len(source_pages(ws)) == 60

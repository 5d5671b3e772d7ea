"""Faults: a crash, a full disk or a corrupt file loses nothing and freezes nothing (issue 17).

The fault injection here raises at the Nth write or sync point of a compile (os.replace,
os.fsync, os.sync, os.unlink, the state.db commit), as a kill -9 or a full disk would stop
it there, then lets more files arrive and compiles again, as the daemon does on restart.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import snapshot, write
from waiting import wait_for
from wikimem import state as state_module
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.pages import content_hash
from wikimem.state import State
from wikimem.workspace import Workspace

NOTES = {
    "alpha.md": "---\ntitle: Alpha notes\ndate: 2025-03-01\n---\n# Alpha notes\n\nThe *canary release* sends 5% "
                "of traffic to a new build for 30 minutes. A canary release\nprotects users from bad builds.\n\n"
                "## Rollback\n\nA rollback returns the service to build 2290 within 4 minutes.\n",
    "beta.md": "# Beta notes\n\nOur canary release policy changed in 2026: the canary release now takes 10% of "
               "traffic.\nThe rollback budget is 4 minutes. The rollback is done by the on-call engineer.\n\n"
               "## Canary release\n\nEvery canary release is watched for 30 minutes.\n",
    "gamma.txt": "Gamma notes\n\nA rollback is cheap. The canary release caught the fault on 3 October 2026.\n",
}


def compile_(ws: Workspace, **kwargs):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}), **kwargs)


def pages(ws: Workspace) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"}


def persons_pages(ws: Workspace) -> list[str]:
    """Pages the compiler would take for a person's edit: on disk, but not as state.db last recorded."""
    state = State(ws.state_db)
    try:
        recorded = state.pages()
    finally:
        state.close()
    out = []
    for folder in ("sources", "concepts"):
        for file in sorted((ws.wiki / folder).glob("*.md")):
            rel = f"{folder}/{file.name}"
            if rel in recorded and recorded[rel][0] == content_hash(file.read_bytes()):
                continue
            if not file.name.startswith("index"):
                out.append(rel)
    return out


class Killed(BaseException):
    """What a kill -9 looks like from inside: nothing after this point runs, no handler catches it."""


class Faults:
    """Raise at the Nth write or sync point; count them all."""

    def __init__(self, at: int, error: BaseException):
        self.at = at
        self.error = error
        self.calls = 0
        self.fired = False

    def tick(self) -> None:
        self.calls += 1
        if self.calls == self.at:
            self.fired = True
            raise self.error


@contextlib.contextmanager
def faults(monkeypatch: pytest.MonkeyPatch, at: int, error: BaseException) -> Iterator[Faults]:
    plan = Faults(at, error)
    with monkeypatch.context() as patch:
        for name in ("replace", "fsync", "unlink"):
            real = getattr(os, name)

            def wrapped(*args, _real=real, **kwargs):  # type: ignore[no-untyped-def]
                plan.tick()
                return _real(*args, **kwargs)

            patch.setattr(os, name, wrapped)
        real_sync = os.sync

        def sync() -> None:
            plan.tick()
            real_sync()

        patch.setattr(os, "sync", sync)
        real_transaction = State.transaction

        @contextlib.contextmanager
        def transaction(self: State) -> Iterator[None]:
            self.db.execute("BEGIN")
            try:
                yield
                plan.tick()  # the commit point
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

        patch.setattr(State, "transaction", transaction)
        yield plan
    assert State.transaction is real_transaction


def seeded(root: Path) -> Workspace:
    ws = Workspace.at(root)
    init_workspace(ws)
    for name, text in NOTES.items():
        write(ws, name, text)
    compile_(ws)
    return ws


def burst_one(ws: Workspace) -> None:
    write(ws, "alpha.md", NOTES["alpha.md"] + "\nThe canary release was cut to 15 minutes in 2027.\n")
    write(ws, "delta.md", "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers. "
                          "A canary release went with it.\n\n## Rollback\n\nThe rollback took 7 minutes.\n")
    (ws.raw / "gamma.txt").unlink()


def burst_two(ws: Workspace) -> None:
    write(ws, "epsilon.md", "# Epsilon notes\n\n## Canary release\n\nA canary release and a rollback, both "
                            "in 2027, took 9 minutes. The on-call engineer watched the canary release.\n")
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")


@pytest.mark.parametrize("kind", ["kill", "disk full"])
@pytest.mark.slow
def test_a_compile_stopped_at_any_write_point_freezes_nothing_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Killed (or out of disk) at each write and sync point in turn, then restarted with more
    files arriving: no page is taken for a person's, the wiki is what one compile of the same
    raw/ gives, and compiling again is a no-op."""
    expected_ws = seeded(tmp_path / "expected")
    burst_one(expected_ws)
    burst_two(expected_ws)
    fresh = Workspace.at(tmp_path / "fresh")
    init_workspace(fresh)
    for file in sorted(expected_ws.raw.rglob("*")):
        if file.is_file():
            write(fresh, file.relative_to(expected_ws.raw).as_posix(), file.read_bytes())
    compile_(fresh)
    expected = pages(fresh)

    points = 0
    for at in range(1, 200):
        ws = seeded(tmp_path / f"{kind}-{at}")
        burst_one(ws)
        error: BaseException = Killed() if kind == "kill" else OSError(errno.ENOSPC, "No space left on device")
        with faults(monkeypatch, at, error) as plan, contextlib.suppress(Killed, OSError):
            compile_(ws)
        if not plan.fired:
            break
        points += 1
        burst_two(ws)
        report = compile_(ws)
        assert report.kept == [], f"stopped at point {at}: {report.kept} taken for a person's edits"
        assert not (ws.state_dir / "proposed").exists()
        assert persons_pages(ws) == [], f"stopped at point {at}"
        assert pages(ws) == expected, f"stopped at point {at}"
        assert compile_(ws).noop, f"stopped at point {at}"
    assert points >= 8  # every page write, the index, the log, the sync and the commit


def test_a_crash_then_rebuild_clears_what_the_crash_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--rebuild after a kill, with new files in between: every page is wikimem's again."""
    ws = seeded(tmp_path / "ws")
    burst_one(ws)
    with faults(monkeypatch, 4, Killed()), contextlib.suppress(Killed):
        compile_(ws)
    burst_two(ws)
    report = compile_(ws, rebuild=True)
    assert report.kept == []
    assert persons_pages(ws) == []
    assert compile_(ws).noop


def test_a_persons_edit_made_after_a_crash_is_still_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = seeded(tmp_path / "ws")
    burst_one(ws)
    with faults(monkeypatch, 2, Killed()), contextlib.suppress(Killed):
        compile_(ws)
    page = ws.wiki / "sources" / "alpha.md"
    page.write_text(page.read_text() + "\nMy own note: ask Dana about the canary.\n")
    burst_two(ws)
    report = compile_(ws)
    assert "sources/alpha.md" in report.kept
    assert "ask Dana" in page.read_text()


def _corrupt(ws: Workspace, how: str) -> None:
    db = ws.state_db
    for extra in (db.with_name("state.db-wal"), db.with_name("state.db-shm")):
        extra.unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(os.urandom(4096) if how == "garbage" else data[: len(data) // 3])


@pytest.mark.parametrize("first", ["compile", "lint"])
@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_corrupt_state_db_is_moved_aside_and_rebuilt_from_the_pages(
    tmp_path: Path, how: str, first: str, caplog: pytest.LogCaptureFixture
) -> None:
    from wikimem.lint import run_lint

    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources" / "beta.md"
    page.write_text(page.read_text() + "\nMy own note on beta.\n")
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    before = pages(ws)
    _corrupt(ws, how)
    settings = load_settings(ws.root, environ={})

    said = []
    if first == "lint":  # lint (which writes index.md) must neither crash nor leave a state compile trusts
        lint = run_lint(ws, settings)
        assert lint.failed_rules == []
        said = [r.getMessage() for r in caplog.records if "state.db" in r.getMessage()]
    report = compile_workspace(ws, settings)
    said += [w for w in report.warnings if "state.db" in w]
    assert len(said) == 1 and "\n" not in said[0] and "unreadable" in said[0]
    assert list(ws.state_dir.glob("state.db.corrupt*"))
    assert "My own note on beta." in page.read_text()  # a person's edit survives the rebuild
    assert report.kept == ["sources/beta.md"]
    # beta.md changed: its page is the person's, and the concept pages that gather it may quote the new line
    gathers_beta = {k for k, v in before.items() if k.startswith("concepts/") and b"- raw/beta.md\n" in v}
    unchanged = {k for k in before if k != "sources/beta.md" and not k.startswith("index") and k not in gathers_beta}
    assert {k: v for k, v in pages(ws).items() if k in unchanged} == {k: before[k] for k in unchanged}
    assert compile_(ws).noop
    _corrupt(ws, how)
    again = compile_(ws, rebuild=True)
    assert again.failed == [] and again.kept == ["sources/beta.md"]


def test_a_state_db_corrupted_mid_compile_is_rebuilt_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged page deep in state.db shows up only when a query reaches it: the compile sets
    the file aside and starts over once, instead of failing on every run (the daemon's retries)."""
    ws = seeded(tmp_path / "ws")
    real_sources = State.sources
    calls = {"n": 0}

    def sources(self: State):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real_sources(self)

    monkeypatch.setattr(State, "sources", sources)
    write(ws, "delta.md", "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers.\n")
    report = compile_(ws)
    assert "raw/delta.md" in report.compiled
    assert any("state.db" in w for w in report.warnings)
    assert state_module is not None


@pytest.mark.parametrize("later", [False, True])
def test_a_new_source_whose_page_name_a_persons_page_holds_gets_another(tmp_path: Path, later: bool) -> None:
    """raw/alpha.md goes (its page, which a person edited, stays) and raw/alpha.txt comes: same
    page name. The new source gets a page of its own, under another name, and the report says so."""
    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources" / "alpha.md"
    page.write_text(page.read_text() + "\nMy own note on alpha.\n")
    (ws.raw / "alpha.md").unlink()
    if later:
        compile_(ws)
    write(ws, "alpha.txt", "Alpha again\n\nThe canary release now takes 20 minutes, since 2027.\n")
    report = compile_(ws)
    assert "raw/alpha.txt" in report.compiled
    state = State(ws.state_db)
    try:
        row = state.sources()["raw/alpha.txt"]
    finally:
        state.close()
    assert row.page and row.page != "sources/alpha.md"
    assert "20 minutes" in (ws.wiki / row.page).read_text()
    assert "My own note on alpha." in page.read_text()
    assert any("sources/alpha.md" in w and row.page in w and "raw/alpha.txt" in w for w in report.warnings)
    assert compile_(ws).noop


def test_a_wikimem_page_freed_by_a_removed_source_is_not_taken_for_a_persons(tmp_path: Path) -> None:
    """raw/alpha.md goes and raw/alpha.txt comes in the same batch, nobody edited anything: the
    new source's page is wikimem's (not kept as a person's edit, not removed with the old one)."""
    ws = seeded(tmp_path / "ws")
    (ws.raw / "alpha.md").unlink()
    write(ws, "alpha.txt", "Alpha again\n\nThe canary release now takes 20 minutes, since 2027.\n")
    report = compile_(ws)
    assert report.kept == []
    assert persons_pages(ws) == []
    state = State(ws.state_db)
    try:
        row = state.sources()["raw/alpha.txt"]
    finally:
        state.close()
    assert row.page and "20 minutes" in (ws.wiki / row.page).read_text()
    assert compile_(ws).noop


@pytest.mark.parametrize("known", [False, True])
def test_a_raw_file_gone_between_scan_and_read_is_skipped_for_this_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, known: bool
) -> None:
    import wikimem.raw_tree as raw_tree

    ws = seeded(tmp_path / "ws")
    name = "beta.md" if known else "delta.md"
    write(ws, name, "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers.\n")
    write(ws, "epsilon.md", "# Epsilon notes\n\nA canary release took 9 minutes in 2027.\n")
    real_scan = raw_tree.scan

    def scan_then_delete(workspace: Workspace):  # type: ignore[no-untyped-def]
        found = real_scan(workspace)
        (workspace.raw / name).unlink()  # another process deletes it right after the scan
        return found

    monkeypatch.setattr(raw_tree, "scan", scan_then_delete)
    report = compile_(ws)
    monkeypatch.setattr(raw_tree, "scan", real_scan)
    assert "raw/epsilon.md" in report.compiled
    lines = [w for w in report.warnings if f"raw/{name}" in w]
    assert len(lines) == 1 and "\n" not in lines[0]
    page = ws.wiki / "sources" / name
    assert page.exists() == known  # a known source's page is left as it was this run
    after = compile_(ws)  # the next run sees the truth: the file is gone
    assert not page.exists()
    assert after.failed == [] and compile_(ws).noop


@pytest.mark.slow
def test_html_nested_past_the_recursion_limit_takes_no_lint_rule_or_search_down(tmp_path: Path) -> None:
    """One source no loader can read (nested deeper than Python recurses) is that source's
    problem: every lint rule still runs for the rest of the wiki, and search still answers."""
    import sys

    from wikimem import search
    from wikimem.lint import run_lint

    ws = seeded(tmp_path / "ws")
    depth = sys.getrecursionlimit() * 3
    write(ws, "deep.html", "<html><body><h1>Deep</h1><p>The canary release took 8 minutes in 2026.</p>"
                           + "<div>" * depth + "deep text" + "</div>" * depth + "</body></html>")
    compile_(ws)
    settings = load_settings(ws.root, environ={})
    report = run_lint(ws, settings)
    assert report.failed_rules == [] and not [n for n in report.notes if "failed" in n]
    assert run_lint(ws, settings).failed_rules == []  # and the next run, from the cache
    hits = search.engine(ws).passages("canary release", limit=10)
    assert any(h.hit.path == "raw/alpha.md" for h in hits)


def test_notes_added_at_the_same_moment_are_all_kept(ws: Workspace) -> None:
    """50 add_note calls at once, one title: 50 files, each with its own text (an exclusive
    create, not a check then a replace)."""
    import threading

    from wikimem.mcp_server import add_note

    barrier = threading.Barrier(50)
    results: list[str] = []

    def one(i: int) -> None:
        barrier.wait()
        results.append(add_note(ws, "Same title", f"note number {i}")["path"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 50
    texts = {(ws.root / p).read_text() for p in results}
    assert texts == {f"# Same title\n\nnote number {i}\n" for i in range(50)}
    assert not [p for p in (ws.raw / "inbox").iterdir() if p.name.startswith(".")]  # no temp file left


@pytest.mark.slow
def test_naming_a_note_does_not_slow_down_with_the_notes_of_that_title(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted in file system calls, not seconds: the 300th note of one title costs what the
    third does (before, each note tried every earlier name in turn)."""
    from wikimem import mcp_server

    for i in range(300):
        mcp_server.add_note(ws, "Daily", f"entry {i}")
    calls = {"n": 0}
    for name in ("stat", "lstat", "open", "link"):
        real = getattr(os, name)

        def counted(*args, _real=real, **kwargs):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    mcp_server.add_note(ws, "Daily", "entry 300")
    assert calls["n"] <= 40
    assert len(list((ws.raw / "inbox").glob("*.md"))) == 301


def _numbered_file(ws: Workspace, name: str, lines: int, width: int = 0) -> Path:
    return write(ws, name, "".join(f"line {n} {'x' * width}\n" for n in range(1, lines + 1)))


@pytest.mark.slow
def test_mcp_read_serves_a_large_file_in_slices_without_holding_it(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracemalloc

    from wikimem import mcp_server

    monkeypatch.setattr(mcp_server, "READ_WHOLE_BYTES", 1_000_000)  # a 2 GB file, scaled down
    _numbered_file(ws, "big.txt", 200_000, width=100)  # 20 MB
    tracemalloc.start()
    try:
        first = mcp_server.read_file(ws, "raw/big.txt")
        later = mcp_server.read_file(ws, "raw/big.txt", start_line=150_000, max_lines=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    assert first["truncated"] and first["next_start_line"] == first["end_line"] + 1
    assert first["text"].startswith("line 1 ")
    assert later["text"].split("\n")[0].startswith("line 150000 ") and later["end_line"] == 150_002


def test_mcp_read_follows_citation_anchors(ws: Workspace) -> None:
    from wikimem.mcp_server import read_file

    _numbered_file(ws, "a.md", 300)
    around = read_file(ws, "raw/a.md#L147")
    lines = around["text"].split("\n")
    assert "147\tline 147 " in lines and around["line"] == 147
    assert around["start_line"] < 147 < around["end_line"] and len(lines) < 60
    span = read_file(ws, "raw/a.md#L10-L20")
    assert span["text"].split("\n") == [f"{n}\tline {n} " for n in range(10, 21)]
    assert read_file(ws, "raw/a.md#L3", start_line=3, max_lines=1)["text"] == "line 3 "  # as before


@pytest.mark.slow
def test_the_memory_tools_view_of_a_large_raw_file_is_a_slice(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracemalloc

    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

    from wikimem import memory_tool

    _numbered_file(ws, "big.txt", 200_000, width=100)
    tool = memory_tool.WikiMemoryTool(ws)
    tracemalloc.start()
    try:
        shown = tool.view(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/raw/big.txt"))
        ranged = tool.view(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/raw/big.txt",
                                                             view_range=[150_000, 150_002]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    assert "view_range" in shown.splitlines()[-1]  # says how to go on
    assert "150000\tline 150000 " in ranged and "150003" not in ranged


# --- issue 38: locks, hostile workspaces ---------------------------------------------------------


def _hold_lock_as(ws: Workspace, pid: int) -> subprocess.Popen[str]:
    """A process holding .wikimem/lock while the file names `pid` as its holder: what a worker
    left behind by a killed compile looks like (it holds the lock its parent took)."""
    from wikimem.workspace import _identity, ensure_state_dir

    ensure_state_dir(ws)
    script = ("import fcntl, sys, time\n"
              "handle = open(sys.argv[1], 'a+')\n"
              "fcntl.flock(handle.fileno(), fcntl.LOCK_EX)\n"
              "handle.seek(0); handle.truncate()\n"
              "handle.write(f'wikimem compile (pid {sys.argv[2]})\\n{sys.argv[3]}\\n'); handle.flush()\n"
              "print('held', flush=True)\n"
              "time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", script, str(ws.state_dir / "lock"), str(pid), _identity()],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_a_lock_whose_named_holder_is_dead_is_taken_over(ws: Workspace) -> None:
    """Before: every compile exited 4 naming a dead pid for as long as the process it left
    holding the lock lived. Now the lock is taken over; a live holder still keeps it."""
    from wikimem.errors import WorkspaceBusy
    from wikimem.workspace import lock_holder, writer_lock

    holder = _hold_lock_as(ws, _dead_pid())
    try:
        write(ws, "a.md", NOTES["alpha.md"])
        report = compile_(ws)
        assert report.compiled == ["raw/a.md"]
        assert lock_holder(ws.state_dir / "lock") == ""  # released by the compile that took it over
        with writer_lock(ws, holder="wikimem compile"):
            assert lock_holder(ws.state_dir / "lock") == f"wikimem compile (pid {os.getpid()})"
    finally:
        holder.kill()
        holder.wait()
    assert compile_(ws).noop
    assert not list(ws.state_dir.glob("lock.stale-*"))  # cleared by the next lock once nothing holds it
    alive = _hold_lock_as(ws, alive_pid := os.getppid())
    try:
        with pytest.raises(WorkspaceBusy, match=f"pid {alive_pid}"), writer_lock(ws):
            pass
    finally:
        alive.kill()
        alive.wait()


def test_a_child_forked_under_the_lock_does_not_hold_it_and_dies_with_its_parent(ws: Workspace) -> None:
    """A process that takes the writer lock and forks (a pool, a helper), then is killed with -9:
    the child neither keeps the workspace locked nor outlives it."""
    script = ("import os, sys, time\n"
              "from wikimem.workspace import Workspace, writer_lock\n"
              "ws = Workspace.at(sys.argv[1])\n"
              "with writer_lock(ws, holder='wikimem compile'):\n"
              "    pid = os.fork()\n"
              "    if pid == 0:\n"
              "        time.sleep(120)\n"
              "        os._exit(0)\n"
              "    print(pid, flush=True)\n"
              "    time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", script, str(ws.root)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    wait_for(lambda: not _running(child), timeout=20, what="the child to die with its parent")
    write(ws, "a.md", NOTES["alpha.md"])
    assert compile_(ws).compiled == ["raw/a.md"]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_new_document_at_the_path_of_a_kept_persons_page_gets_a_page_of_its_own(tmp_path: Path) -> None:
    """raw/alpha.md goes (its page, which a person edited, is kept), then a new document comes at
    the same path. Before: the kept page, which names raw/alpha.md, was taken for the new one's
    own page and kept again, so the new document had no page. Now it gets one at a free name,
    and the compile says so."""
    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources" / "alpha.md"
    page.write_text(page.read_text() + "\nMy own note on alpha.\n")
    (ws.raw / "alpha.md").unlink()
    assert "sources/alpha.md" in compile_(ws).kept
    write(ws, "alpha.md", "# Alpha again\n\nThe canary release now takes 20 minutes, since 2027.\n")
    report = compile_(ws)
    assert "raw/alpha.md" in report.compiled
    state = State(ws.state_db)
    try:
        row = state.sources()["raw/alpha.md"]
    finally:
        state.close()
    assert row.page and row.page != "sources/alpha.md"
    assert "20 minutes" in (ws.wiki / row.page).read_text()
    assert "My own note on alpha." in page.read_text()
    assert any("sources/alpha.md" in w and row.page in w for w in report.warnings)
    assert compile_(ws).noop


def test_raising_max_source_mb_reads_a_source_skipped_as_too_large(ws: Workspace) -> None:
    """Before: a source skipped as too large stayed skipped (and out of the search index) until
    `--rebuild`, whatever max_source_mb became. Now a changed cap reads it again."""
    from wikimem import search

    write(ws, "big.txt", "Big notes\n\nThe zebra census counted 4,211 zebras.\n" + "filler line.\n" * 170_000)
    (ws.root / "wikimem.toml").write_text("max_source_mb = 2\n")
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert [p for p, _ in report.skipped] == ["raw/big.txt"]
    assert not search.engine(ws).passages("zebra census", limit=3)
    (ws.root / "wikimem.toml").write_text("max_source_mb = 3\n")
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.compiled == ["raw/big.txt"]
    assert any(h.hit.path == "raw/big.txt" for h in search.engine(ws).passages("zebra census", limit=3))


def _tear_a_segment(ws: Workspace) -> None:
    """What a kill or a full disk in the middle of a segment's write leaves: the file cut short."""
    segment = max((ws.state_dir / "search").glob("*.seg"), key=lambda p: p.stat().st_size)
    data = segment.read_bytes()
    segment.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("first", ["compile", "search"])
def test_a_torn_search_segment_is_rebuilt_by_the_next_compile_or_search(tmp_path: Path, first: str) -> None:
    """Before: a segment cut short made every search fail (EOFError) until `wikimem reindex`,
    and a compile went on adding segments beside it. Now the compile rebuilds the index and
    says so in one line, and a search rebuilds it itself."""
    from wikimem import search

    ws = seeded(tmp_path / "ws")
    _tear_a_segment(ws)
    search.ENGINES.clear()
    if first == "compile":
        write(ws, "delta.md", "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers.\n")
        report = compile_(ws)
        said = [w for w in report.warnings if "search index was damaged" in w]
        assert len(said) == 1 and "\n" not in said[0] and report.index["rebuilt"]
    hits = search.engine(ws).passages("rollback engineers", limit=5)
    assert hits and any(h.hit.path.startswith("raw/") for h in hits)


def test_repair_catches_a_tear_anywhere_in_any_index_file(tmp_path: Path) -> None:
    """repair opens the index's reader, as every search does first: a segment or the table of
    contents cut short at any point is found (and the index built again), whichever file."""
    from wikimem import search

    ws = seeded(tmp_path / "ws")
    folder = ws.state_dir / "search"
    for fraction in (0.02, 0.5, 0.98):
        for name in sorted(p.name for p in (*folder.glob("*.seg"), *folder.glob("*.toc"))):
            file = folder / name
            if not file.exists():  # the rebuild before renamed it
                continue
            data = file.read_bytes()
            file.write_bytes(data[: int(len(data) * fraction)])
            said = search.repair(ws)
            assert said is not None and "search index was damaged" in said, (name, fraction)
            assert search.repair(ws) is None  # built again: it reads fine


def test_a_log_entry_appended_since_the_last_lint_cannot_be_edited_unnoticed(tmp_path: Path) -> None:
    """Before: lint recorded the log's entries when it ran, so an entry a compile appended after
    it could be edited before the next lint and pass. Now every append is recorded as written."""
    from wikimem.lint import run_lint

    ws = seeded(tmp_path / "ws")
    settings = load_settings(ws.root, environ={})
    assert run_lint(ws, settings, ["log-integrity"]).findings == []
    write(ws, "delta.md", "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers.\n")
    compile_(ws)
    log = ws.wiki / "log.md"
    text = log.read_text()
    assert "raw/delta.md" in text.rsplit("\n## [", 2)[-2] + text.rsplit("\n## [", 2)[-1]
    log.write_text(text.replace("raw/delta.md", "raw/innocent.md"))
    found = run_lint(ws, settings, ["log-integrity"]).findings
    assert found and all(f.rule == "log-integrity" and ("changed" in f.message or "removed" in f.message) for f in found)


def test_a_short_write_to_log_md_leaves_no_entry_cut(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write(2) that writes part of what it was given (a signal, a nearly full disk): before,
    the rest of the entry was lost without a word; now the append goes on until it is whole."""
    from wikimem import log_page

    real_write = os.write

    def short(fd: int, data: bytes) -> int:  # type: ignore[override]
        return real_write(fd, bytes(data[: max(1, len(data) // 3)]))

    monkeypatch.setattr(os, "write", short)
    log_page.append(ws.wiki / "log.md", [log_page.LogEntry("compile", "3 sources", ["- created: a, b, c",
                                                                                 "- backend: offline, 0.1 s"])])
    monkeypatch.setattr(os, "write", real_write)
    entries = log_page.read_entries(ws.wiki / "log.md")
    assert entries[-1][1:] == ("compile", "3 sources", ["- created: a, b, c", "- backend: offline, 0.1 s"])
    assert (ws.wiki / "log.md").read_text().endswith("- backend: offline, 0.1 s\n")


# --- the same faults in the daemon's batches, each compiled in a process forked for it ----------


class ChildFaults:
    """Faults at the Nth write or sync point of a process forked from this one (the daemon's
    batch), once: `kill` is a real SIGKILL of that process there, `disk full` an ENOSPC."""

    def __init__(self, at: int, kind: str, marker: Path):
        self.at, self.kind, self.marker = at, kind, marker
        self.parent = os.getpid()
        self.calls = 0
        self.child = 0

    def tick(self) -> None:
        if os.getpid() == self.parent or self.marker.exists():
            return
        if self.child != os.getpid():  # a new batch's process: its own count
            self.child, self.calls = os.getpid(), 0
        self.calls += 1
        if self.calls == self.at:
            self.marker.write_text(f"{self.kind} at {self.at}\n")
            if self.kind == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise OSError(errno.ENOSPC, "No space left on device")


@contextlib.contextmanager
def child_faults(monkeypatch: pytest.MonkeyPatch, plan: ChildFaults) -> Iterator[ChildFaults]:
    with monkeypatch.context() as patch:
        for name in ("replace", "fsync", "unlink", "sync"):
            real = getattr(os, name)

            def wrapped(*args, _real=real, **kwargs):  # type: ignore[no-untyped-def]
                plan.tick()
                return _real(*args, **kwargs)

            patch.setattr(os, name, wrapped)

        @contextlib.contextmanager
        def transaction(self: State) -> Iterator[None]:
            self.db.execute("BEGIN")
            try:
                yield
                plan.tick()  # the commit point
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

        patch.setattr(State, "transaction", transaction)
        yield plan


@pytest.mark.parametrize("kind", ["kill", "disk full"])
@pytest.mark.slow
def test_a_daemon_batch_stopped_at_any_write_point_freezes_nothing_and_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """issue 38: the fault injection of the one-shot compile above, in the daemon's batches
    (`wikimem run` compiles each in a process forked for it). The batch's process is killed
    with -9 (or runs out of disk) at each write and sync point in turn; the daemon reports the
    failed batch, compiles again, and more files arrive: no page is taken for a person's, the
    wiki is what one compile of the same raw/ gives, and nothing is left to do."""
    from conftest import single_threaded
    from test_daemon import Running, fast

    single_threaded()
    expected_ws = seeded(tmp_path / "expected")
    burst_one(expected_ws)
    burst_two(expected_ws)
    fresh = Workspace.at(tmp_path / "fresh")
    init_workspace(fresh)
    for file in sorted(expected_ws.raw.rglob("*")):
        if file.is_file():
            write(fresh, file.relative_to(expected_ws.raw).as_posix(), file.read_bytes())
    compile_(fresh)
    expected = pages(fresh)

    points = 0
    for at in range(1, 200):
        ws = seeded(tmp_path / f"{kind}-{at}")
        settings = load_settings(ws.root, environ={})
        marker = tmp_path / f"{kind}-{at}.fired"
        with child_faults(monkeypatch, ChildFaults(at, kind, marker)):
            daemon = Running(ws, settings, fast(settings, isolate_batches=True)).start()
            try:
                before = daemon.status().get("compiles", 0)
                burst_one(ws)
                daemon.idle_after(before)
                if marker.exists():  # the failed batch is compiled again, after its backoff
                    wait_for(lambda d=daemon: (d.status().get("last_compile") or {}).get("ok") is True
                             and d.status().get("state") == "idle", what="the batch compiled again")
                fired = marker.exists()
                done = daemon.status().get("compiles", 0)
                burst_two(ws)
                daemon.idle_after(done)
                last = daemon.status()["last_compile"]
                assert last["ok"] is True and last["kept"] == [], f"stopped at point {at}: {last}"
            finally:
                assert daemon.stop() == 0
        if not fired:
            break
        points += 1
        assert not (ws.state_dir / "proposed").exists(), f"stopped at point {at}"
        assert persons_pages(ws) == [], f"stopped at point {at}"
        assert pages(ws) == expected, f"stopped at point {at}"
        assert compile_(ws).noop, f"stopped at point {at}"
        assert not [p for p in ws.root.rglob(".wikimem-*.tmp")]
    print(f"{kind}: the batch stopped at each of {points} write and sync points")
    assert points >= 8  # every page write, the index, the log, the sync and the commit


@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_corrupt_state_db_is_rebuilt_by_a_daemon_batch(tmp_path: Path, how: str) -> None:
    """The corrupt state.db of the one-shot compile, met by a batch of the daemon (compiled in a
    process forked for it): set aside and rebuilt from the pages, a person's edit kept."""
    from conftest import single_threaded
    from test_daemon import Running, fast

    single_threaded()
    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources" / "beta.md"
    page.write_text(page.read_text() + "\nMy own note on beta.\n")
    settings = load_settings(ws.root, environ={})
    daemon = Running(ws, settings, fast(settings, isolate_batches=True)).start()
    try:
        before = daemon.status().get("compiles", 0)
        _corrupt(ws, how)
        # as in the one-shot case above: beta.md changed, so its page (a person's) is not taken
        # back as wikimem's (a page whose source did not change is issue 37's: pages that
        # certify themselves)
        write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
        last = daemon.idle_after(before)["last_compile"]
        assert last["ok"] is True and last["kept"] == ["sources/beta.md"]
    finally:
        assert daemon.stop() == 0
    assert list(ws.state_dir.glob("state.db.corrupt*"))
    assert "My own note on beta." in page.read_text()
    assert compile_(ws).noop


@pytest.mark.slow
def test_a_hostile_model_page_is_made_inert_in_a_daemon_batch(tmp_path: Path) -> None:
    """A model's page with live HTML behind a fence split by \\r, a javascript: link and a
    data: image, written by the daemon's forked batch: it reaches wiki/ inert, as from a
    one-shot compile."""
    from fake_messages_server import FakeMessagesServer, memory, reply, text
    from test_daemon import Running, fast
    from test_inert import active_anywhere

    hostile = ("---\ntitle: Tardigrades\nkind: source\nsources: [raw/tardigrades.md]\n---\n# Tardigrades\r\n\r\n"
               "~~~\r~~~\r<script>alert(1)</script>\r\n[click](javascript:alert(2)) ![x](data:text/html,<b>x</b>)"
               "\u2028<iframe src=//evil></iframe>\n\nSource: [tardigrades.md](../../raw/tardigrades.md)\n")
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    with FakeMessagesServer() as server:
        settings = load_settings(ws.root, {"backend": "anthropic", "base_url": server.url}, environ={})
        # the model writes its page and, told it holds raw HTML, leaves it as it is
        server.add(reply(memory("create", path="/memories/sources/tardigrades.md", file_text=hostile)),
                   *[reply(text("Done.")) for _ in range(10)])
        daemon = Running(ws, settings, fast(settings, isolate_batches=True), backend="anthropic").start()
        try:
            before = daemon.status().get("compiles", 0)
            write(ws, "tardigrades.md", "# Tardigrades\n\nTwo individuals revived after 30.5 years frozen.\n")
            last = daemon.idle_after(before)["last_compile"]
            assert last["ok"] is True, last
        finally:
            assert daemon.stop() == 0
    for file in ws.wiki.rglob("*.md"):
        assert active_anywhere(file.read_text(encoding="utf-8")) == [], file
    written = (ws.wiki / "sources" / "tardigrades.md").read_text(encoding="utf-8")
    assert "alert(1)" in written  # the model's text is kept, inert

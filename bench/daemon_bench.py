"""The running daemon: drop-to-page latency, a burst of files, idle memory and CPU.

    python bench/daemon_bench.py            # 20 drops, a burst of 200, 10 s idle
    python bench/daemon_bench.py --quick    # 10 drops, a burst of 100, 5 s idle
    python bench/daemon_bench.py --json     # one JSON document, the bench contract (bench/contract.py)
    python bench/daemon_bench.py --corpora topics,versions,formats,sphinx   # all shared corpora

A real `wikimem run` process (default settings: offline backend, debounce 0.75 s) on a
workspace that already holds the topics corpus (112 sources, compiled first) when
../shared/corpus is present, else an empty one. Figures:

- drop-to-page: a new note is written into raw/ (open, write, close, as `cp` does);
  the clock stops when its source page exists. Median of N drops, one at a time, each
  after the daemon is idle again. Baseline, in the same run: what a user does without
  the daemon, `wikimem compile` right after the same kind of drop (process start
  included), median of 5.
- drop-to-searchable: the same drops, until the search index lists the new file (the
  compile brings the index up to date in the same batch).
- burst: N files written as fast as possible (a `cp -r` of a folder); time until every
  page exists and the daemon is idle, and how many compiles it took.
- idle RSS (VmRSS from /proc) and idle CPU (utime+stime over the idle window) of the
  daemon after its catch-up, beside a bare `python -c "import time; time.sleep(...)"`
  (the interpreter's own floor). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "topics" / "raw"
sys.path.insert(0, str(REPO / "daemon"))
sys.path.insert(0, str(REPO / "bench"))

import contract  # noqa: E402 - bench/contract.py, next to this file

from wikimem.compiler import assign_page  # noqa: E402
from wikimem.init import init_workspace  # noqa: E402
from wikimem.service import daemon_status  # noqa: E402
from wikimem.workspace import Workspace  # noqa: E402

CLI = [sys.executable, "-m", "wikimem.cli"]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    e["PYTHONPATH"] = str(REPO / "daemon") + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("WIKIMEM_BACKEND", None)
    return e


def note(tag: str, i: int) -> str:
    return (
        f"# {tag.capitalize()} note {i}\n\n"
        f"Tardigrade sample {tag}-{i} was collected from moss in {1990 + i % 30}. "
        f"It survived {i % 50 + 1} years frozen at -20 C and revived within {i % 24 + 1} hours.\n\n"
        "## Method\n\n"
        + "".join(f"Step {k}: the moss was rehydrated with {k * 10} ml of water.\n" for k in range(1, 8))
    )


def wait_for(check: Any, timeout: float = 120.0, interval: float = 0.005) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("timed out")


def proc_rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def children_rss_mb(pid: int) -> float:
    """RSS of the daemon's child processes (the offline backend's forkserver and resource
    tracker stay alive after its first parallel batch)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            try:
                total += proc_rss_mb(int(kid)) + children_rss_mb(int(kid))
            except (OSError, RuntimeError):
                pass
    return total


def idle_figures(pid: int, seconds: float) -> tuple[float, float]:
    cpu0, t0 = proc_cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    cpu1, t1 = proc_cpu_seconds(pid), time.monotonic()
    return proc_rss_mb(pid), 100.0 * (cpu1 - cpu0) / (t1 - t0)


def idle(ws: Workspace, compiles: int) -> dict[str, Any] | None:
    st = daemon_status(ws)
    if st.get("running") and st.get("state") == "idle" and st.get("queue") == 0 and st.get("compiles", 0) >= compiles:
        return st
    return None


def page_path(ws: Workspace, rel: str) -> Path:
    return ws.wiki / assign_page(rel, set())


def figure_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The contract's rows (bench/contract.py) from the figures main() measured."""
    sources, drops = result["base_sources"], result["drops"]
    base = f"on a workspace of {sources} sources" if sources else "on an empty workspace"
    one_shot = "one-shot `wikimem compile` after a drop (median of 5)"
    return [
        contract.row("daemon drop-to-page median", result["drop_to_page_median_s"], "s", one_shot,
                     result["one_shot_compile_after_drop_median_s"], "≤ 1 s", goal_abs=1.0,
                     note=f"{drops} drops {base}, debounce 0.75 s (default); p90 {result['drop_to_page_p90_s']} s"),
        contract.row("daemon drop-to-searchable median", result["drop_to_searchable_median_s"], "s", one_shot,
                     result["one_shot_compile_after_drop_median_s"], "≤ 0.5 s", goal_abs=0.5,
                     note=f"{drops} drops {base}: the file is in the search index (a compile updates it)"),
        contract.row(f"daemon burst of {result['burst']} files to all pages", result["burst_to_all_pages_s"], "s",
                     status="info",
                     note=f"{result['burst_compiles']} compile(s); files written in {result['burst_write_s']} s; "
                          f"peak RSS {result['peak_rss_mb']} MB, {result['rss_after_burst_mb']} MB after it"),
        contract.row("daemon idle RSS", result["idle_rss_mb"], "MB", "bare python process",
                     result["bare_python_rss_mb"], "≤ 60 MB", goal_abs=60.0,
                     note=f"after start and catch-up {base} (before any lint)"),
        contract.row("daemon RSS after the drops and the burst", result["rss_after_burst_mb"], "MB",
                     goal="≤ 60 MB", goal_abs=60.0,
                     note=f"peak {result['peak_rss_mb']} MB; its child processes (the offline backend's "
                          f"forkserver and resource tracker, alive after a parallel batch) add "
                          f"{result['children_rss_after_burst_mb']} MB RSS"),
        contract.row("daemon idle CPU", result["idle_cpu_percent"], "%", goal="~0", status="info",
                     note=f"utime+stime over {result['idle_seconds']:.0f} s idle"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout (the bench contract, bench/contract.py)")
    parser.add_argument("--quick", action="store_true", help="10 drops, a burst of 100, 5 s idle")
    parser.add_argument("--drops", type=int, default=None)
    parser.add_argument("--burst", type=int, default=None)
    parser.add_argument("--idle-seconds", type=float, default=None)
    parser.add_argument("--empty", action="store_true", help="start from an empty workspace, not the topics corpus")
    parser.add_argument("--corpora", default="topics", metavar="NAMES",
                        help="the shared corpora to start from, comma-separated (topics,versions,formats,sphinx): "
                             "topics alone is copied into raw/ as it is, several each into raw/<name>/")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("WIKIMEM_BENCH_QUICK") == "1"
    drops = args.drops or (10 if quick else 20)
    burst = args.burst or (100 if quick else 200)
    idle_seconds = args.idle_seconds or (5.0 if quick else 10.0)
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1798675200")

    tmp = Path(tempfile.mkdtemp(prefix="wikimem-daemon-bench-"))
    ws = Workspace.at(tmp / "ws")
    init_workspace(ws)
    names = [n for n in args.corpora.split(",") if n]
    if not args.empty and names != ["topics"]:
        for name in names:
            if (CORPUS.parent.parent / name / "raw").is_dir():
                shutil.copytree(CORPUS.parent.parent / name / "raw", ws.raw / name)
    elif not args.empty and CORPUS.is_dir():
        for f in sorted(CORPUS.iterdir()):
            if f.is_file():
                shutil.copy2(f, ws.raw / f.name)
    base_sources = sum(1 for p in ws.raw.rglob("*") if p.is_file())
    if base_sources:
        log(f"compiling the base workspace ({base_sources} sources of {', '.join(names)}) ...")
        subprocess.run([*CLI, "compile", "--root", str(ws.root), "-q"], check=True, env=env())
    result: dict[str, Any] = {"base_sources": base_sources, "corpora": [] if args.empty else names,
                              "drops": drops, "burst": burst,
                              "idle_seconds": idle_seconds}
    daemon = subprocess.Popen([*CLI, "run", "--root", str(ws.root)], env=env(),
                              stdout=subprocess.DEVNULL, stderr=open(tmp / "daemon.err", "w"))  # noqa: SIM115
    try:
        started = time.monotonic()
        wait_for(lambda: idle(ws, 1))
        result["start_to_idle_s"] = round(time.monotonic() - started, 3)
        time.sleep(1.0)  # let the catch-up's garbage settle before sampling memory
        rss, cpu = idle_figures(daemon.pid, idle_seconds)
        result["idle_rss_mb"], result["idle_cpu_percent"] = round(rss, 1), round(cpu, 2)
        log(f"idle: RSS {rss:.1f} MB, CPU {cpu:.2f} % over {idle_seconds:.0f} s")

        # drop-to-page, one at a time
        latencies = []
        searchable = []
        manifest = ws.state_dir / "search" / "manifest.json"

        def indexed(rel: str) -> bool:
            try:
                return rel in json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
            except (OSError, ValueError):
                return False

        for i in range(drops):
            compiles = daemon_status(ws)["compiles"]
            rel = f"raw/drops/drop-{i:03d}.md"
            target = ws.root / rel
            target.parent.mkdir(exist_ok=True)
            page = page_path(ws, rel)
            t0 = time.monotonic()
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(note("drop", i))
            wait_for(page.exists)
            latencies.append(time.monotonic() - t0)
            wait_for(lambda r=rel: indexed(r))  # the compile brings the search index up to date too
            searchable.append(time.monotonic() - t0)
            wait_for(lambda c=compiles: idle(ws, c + 1))
            time.sleep(0.1)
        result["drop_to_page_s"] = [round(x, 4) for x in latencies]
        result["drop_to_page_median_s"] = round(statistics.median(latencies), 4)
        result["drop_to_page_p90_s"] = round(sorted(latencies)[int(0.9 * (len(latencies) - 1))], 4)
        result["drop_to_searchable_s"] = [round(x, 4) for x in searchable]
        result["drop_to_searchable_median_s"] = round(statistics.median(searchable), 4)
        log(f"drop-to-page: median {result['drop_to_page_median_s']:.3f} s over {drops} drops; "
            f"searchable after {result['drop_to_searchable_median_s']:.3f} s")

        # the burst
        compiles = daemon_status(ws)["compiles"]
        rels = [f"raw/burst/burst-{i:04d}.md" for i in range(burst)]
        (ws.raw / "burst").mkdir()
        t0 = time.monotonic()
        for i, rel in enumerate(rels):
            with open(ws.root / rel, "w", encoding="utf-8") as handle:
                handle.write(note("burst", i))
        written = time.monotonic() - t0
        pages = [page_path(ws, rel) for rel in rels]
        wait_for(lambda: all(p.exists() for p in pages), timeout=600, interval=0.05)
        all_pages = time.monotonic() - t0
        st = wait_for(lambda: idle(ws, compiles + 1), timeout=600, interval=0.02)
        result["burst_write_s"] = round(written, 3)
        result["burst_to_all_pages_s"] = round(all_pages, 3)
        result["burst_to_idle_s"] = round(time.monotonic() - t0, 3)
        result["burst_compiles"] = st["compiles"] - compiles
        result["peak_rss_mb"] = round(proc_rss_mb(daemon.pid, "VmHWM"), 1)
        time.sleep(2.0)
        result["rss_after_burst_mb"] = round(proc_rss_mb(daemon.pid), 1)
        result["children_rss_after_burst_mb"] = round(children_rss_mb(daemon.pid), 1)
        log(f"burst of {burst}: all pages after {all_pages:.2f} s in {result['burst_compiles']} compile(s); "
            f"peak RSS {result['peak_rss_mb']} MB")

        # stop
        t0 = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        result["sigterm_exit_code"] = daemon.wait(60)
        result["sigterm_stop_s"] = round(time.monotonic() - t0, 3)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(30)

    # baselines, same run: a one-shot compile after a drop; a bare interpreter's idle RSS
    one_shot = []
    for i in range(5):
        with open(ws.raw / "drops" / f"oneshot-{i}.md", "w", encoding="utf-8") as handle:
            handle.write(note("oneshot", i))
        t0 = time.monotonic()
        subprocess.run([*CLI, "compile", "--root", str(ws.root), "-q"], check=True, env=env())
        one_shot.append(time.monotonic() - t0)
    result["one_shot_compile_after_drop_median_s"] = round(statistics.median(one_shot), 4)
    bare = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(1.0)
        result["bare_python_rss_mb"] = round(proc_rss_mb(bare.pid), 1)
    finally:
        bare.kill()
        bare.wait()

    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        log(f"kept {tmp}")

    rows = figure_rows(result)
    if args.json:
        contract.emit("daemon_bench", rows, **result)
    else:
        for r in rows:
            print(f"{r['figure']:<45} {r['value']:>8} {r['unit']:<3} {r.get('note', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

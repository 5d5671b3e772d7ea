"""What history costs: compile with git = true vs git = false, and how long undo takes.

Run from the repository: python bench/history_bench.py [--sources N] [--json]
Uses ../shared/corpus/topics/raw (or --corpus DIR). Every workspace is a fresh temporary git
repository with identity from the environment (no global git config is read). Each compile
with history is reported beside the same compile without it (the baseline); --json prints
the rows as one JSON document, the bench contract (bench/contract.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
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

from wikimem import history  # noqa: E402
from wikimem.compiler import compile_workspace  # noqa: E402
from wikimem.config import load_settings  # noqa: E402
from wikimem.init import init_workspace  # noqa: E402
from wikimem.workspace import Workspace  # noqa: E402

ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench",
       "GIT_AUTHOR_EMAIL": "bench@example.org", "GIT_COMMITTER_NAME": "bench",
       "GIT_COMMITTER_EMAIL": "bench@example.org", "SOURCE_DATE_EPOCH": "1798675200"}


def timed(fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def run(mode: str, files: list[Path], repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.at(Path(tmp) / "ws")
        init_workspace(ws)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws.root, check=True)
        settings = load_settings(ws.root, environ={"WIKIMEM_GIT": mode})
        for f in files[:-1]:
            shutil.copy(f, ws.raw / f.name)
        first, _ = timed(lambda: compile_workspace(ws, settings))
        noops = [timed(lambda: compile_workspace(ws, settings))[0] for _ in range(repeats)]
        shutil.copy(files[-1], ws.raw / files[-1].name)
        one, _ = timed(lambda: compile_workspace(ws, settings))
        out = {"first": first, "noop": statistics.median(noops), "one_more": one}
        if mode == "true":
            out["undo"], _ = timed(lambda: history.undo(ws, settings))
            out["history"], _ = timed(lambda: history.operations(ws, settings))
        return out


STEPS = {"first": "first compile of {n} sources", "noop": "no-op compile (median)",
         "one_more": "compile of one more source"}


def figure_rows(results: dict[str, dict[str, float]], sources: int) -> list[dict[str, Any]]:
    """Each compile with git = true beside the same compile with git = false; undo and history."""
    rows = []
    for key, label in STEPS.items():
        off, on = results["false"][key], results["true"][key]
        rows.append(contract.row(f"compile with git history, {label.format(n=sources)}", round(on, 4), "s",
                                 "the same with git = false", round(off, 4), note=f"+{(on - off) * 1000:.1f} ms"))
    rows.append(contract.row("undo of the last compile (git = true)", round(results["true"]["undo"], 4), "s"))
    rows.append(contract.row("history listing (git = true)", round(results["true"]["history"], 4), "s"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of Markdown sources (default: the topics corpus)")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout (the bench contract)")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"corpus not found at {args.corpus}")
    os.environ.update(ENV)
    files = sorted(args.corpus.glob("*.md"))[: args.sources + 1]
    if len(files) < 2:
        sys.exit(f"history_bench needs at least 2 Markdown files in {args.corpus}")
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    results = {mode: run(mode, files, args.repeats) for mode in ("false", "true")}
    if args.json:
        contract.emit("history_bench", figure_rows(results, len(files) - 1), sources=len(files) - 1,
                      repeats=args.repeats, git=git, seconds=results)
        return
    print(f"{len(files) - 1} sources, then one more; git {git}")
    for key in ("first", "noop", "one_more"):
        off, on = results["false"][key], results["true"][key]
        print(f"{key:9} git=false {off * 1000:8.1f} ms   git=true {on * 1000:8.1f} ms   (+{(on - off) * 1000:.1f} ms)")
    print(f"undo      {results['true']['undo'] * 1000:8.1f} ms   history {results['true']['history'] * 1000:.1f} ms")


if __name__ == "__main__":
    main()

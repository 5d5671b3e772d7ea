"""Two commits of wikimem compiling the same raw files from nothing, alternating, with a plain
whoosh index of those files in every round: a change's effect on the compile, on a machine
whose speed moves between runs.

    python bench/alternate.py BEFORE AFTER [--corpus DIR]... [--rounds N]

BEFORE and AFTER are commits (or anything `git worktree add` takes) of this repository; each
is checked out once into a temporary worktree, byte-compiled (as pip installs a package) and
run with its own `daemon/` on PYTHONPATH, in this interpreter. Every round runs, one after the
other: BEFORE, AFTER, the whoosh baseline (bench/baselines.py index), each on a fresh copy of
the corpus. Prints each round's seconds and the medians of three per-round ratios: after /
before, after / whoosh, before / whoosh.
Default corpora: ../shared/corpus/sphinx/raw, and topics + versions + formats together (the
187 sources of bench/run.py).

    python bench/alternate.py BEFORE AFTER --cpu [--rounds N]

compares the CPU time instead: in every round the two compiles run at the same time, each on
its copy of the corpus, and each one's CPU seconds (its process and every process it waited
for, os.wait4) are summed. A change to how much work a compile does shows there even when the
machine's speed moves between rounds; a change to how it spreads the work over the cores does
not (both compete for the same cores), so it is read beside the wall-clock ratios.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "corpus"


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


_ROUNDS = itertools.count()


def prepared(code: Path, corpus: Path, root: Path) -> tuple[list[str], dict[str, str]]:
    """A fresh workspace beside `root` (its name numbered, never one used before) holding a copy of
    `corpus`; the command (and its environment) that compiles it with the wikimem of `code`. Nothing
    is deleted between rounds (the temporary folder goes at the end): on a file system without a
    journal, making files right after many were deleted costs the kernel more (run.py's fresh_ws)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PYTHONPATH=str(code / "daemon"), SOURCE_DATE_EPOCH="1798675200")
    root = root.with_name(f"{root.name}-{next(_ROUNDS)}")
    cli = [sys.executable, "-m", "wikimem.cli"]
    subprocess.run([*cli, "init", str(root)], check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(root / "raw")
    shutil.copytree(corpus, root / "raw")
    return [*cli, "compile", "--root", str(root), "--quiet"], env


def compile_seconds(code: Path, corpus: Path, work: Path) -> float:
    return timed(*prepared(code, corpus, work / "ws"))


def cpu_seconds_together(codes: list[Path], corpus: Path, work: Path) -> list[float]:
    """Compile the corpus with each code at the same time; each one's CPU seconds (user and
    system, of its process and every process it waited for)."""
    commands = [prepared(code, corpus, work / f"ws{n}") for n, code in enumerate(codes)]
    running = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for cmd, env in commands]
    spent = []
    for process in running:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"alternate: a compile failed (exit {process.returncode})")
        spent.append(usage.ru_utime + usage.ru_stime)
    return spent


def whoosh_seconds(corpus: Path, work: Path) -> float:
    index = work / f"whoosh-{next(_ROUNDS)}"
    return timed([sys.executable, str(HERE / "baselines.py"), "index", str(corpus), str(index)], dict(os.environ))


def default_corpora(work: Path) -> list[Path]:
    corpora = []
    if (SHARED / "sphinx" / "raw").is_dir():
        corpora.append(SHARED / "sphinx" / "raw")
    parts = [SHARED / name / "raw" for name in ("topics", "versions", "formats")]
    if all(p.is_dir() for p in parts):
        joined = work / "corpus-187"
        for p in parts:
            shutil.copytree(p, joined / p.parent.name)
        corpora.append(joined)
    return corpora


def _median(rows: list[tuple[float, float, float]], i: int, j: int) -> str:
    ratios = [r[i] / r[j] for r in rows]
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--corpus", type=Path, action="append", help="a raw folder (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="compare CPU seconds, the two compiles run at the same time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpora = args.corpus or default_corpora(work)
        if not corpora:
            print(f"alternate: no corpus given and none found under {SHARED}", file=sys.stderr)
            return 1
        trees = {}
        for name in ("before", "after"):
            trees[name] = work / name
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(trees[name]),
                            getattr(args, name)], check=True)
            # byte-compiled once, as `pip install` leaves an installed package (and as whoosh, the
            # baseline, is): where PYTHONDONTWRITEBYTECODE is set, every run would otherwise
            # compile wikimem's modules from source, in the compile and again in each worker
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(trees[name] / "daemon")],
                           check=True, stdout=subprocess.DEVNULL)
        try:
            for corpus in corpora:
                label = corpus.parent.name if corpus.name == "raw" else corpus.name
                rows = []
                if args.cpu:
                    for n in range(args.rounds):
                        before, after = cpu_seconds_together([trees["before"], trees["after"]], corpus, work)
                        rows.append((before, after, 0.0))
                        print(f"{label} round {n + 1}: CPU before {before:.2f} s, after {after:.2f} s", flush=True)
                    print(f"{label}: CPU after/before {_median(rows, 1, 0)}; {args.rounds} rounds, run together")
                    continue
                for n in range(args.rounds):
                    before = compile_seconds(trees["before"], corpus, work)
                    after = compile_seconds(trees["after"], corpus, work)
                    whoosh = whoosh_seconds(corpus, work)
                    rows.append((before, after, whoosh))
                    print(f"{label} round {n + 1}: before {before:.2f} s, after {after:.2f} s, "
                          f"whoosh {whoosh:.2f} s", flush=True)

                print(f"{label}: after/before {_median(rows, 1, 0)}, after/whoosh {_median(rows, 1, 2)}, "
                      f"before/whoosh {_median(rows, 0, 2)}; {args.rounds} rounds")
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

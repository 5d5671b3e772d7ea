"""Two-word questions and quoted phrases on one compiled workspace, for one or more commits of
wikimem in turn: the rows of issue 40 a large wiki meets.

    python bench/questions.py WORKSPACE [--commit REV]... [--rounds N]

WORKSPACE is compiled already (a 10k one: `python bench/scale.py WS --sources 10000`, then
`wikimem compile --root WS`); each REV (default: this work tree) is checked out into a
temporary worktree, byte-compiled, and run with its own `daemon/` on PYTHONPATH. Figures:

- cold: one `wikimem search QUESTION --json` process per question (two words, unquoted),
  beside a bare whoosh query process on the same index (bench/baselines.py query): medians
  and ranges over the rounds, and the ratio to whoosh;
- in-process: an `Engine` warmed as `wikimem mcp` warms it, then three passes over the
  questions quoted as phrases, and in another process the same questions unquoted, per round
  and commit: the first pass (words the process has not seen) and the later ones, p50 in ms;
- "the rest": in a third process, the shared corpora's public probe questions (--corpus-root,
  default ../shared/corpus; skipped when absent), one pass: what other questions cost on a
  first pass on the same workspace.

The commits run in turn within every round, so a machine whose speed moves moves them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

QUESTIONS = ["trait objects", "goroutines channels", "ownership borrowing", "minimum macOS version"]

IN_PROCESS = r"""
import json, sys, time
from wikimem import search
from wikimem.workspace import Workspace
engine = search.engine(Workspace.at(sys.argv[1]), fresh_within=3600)
engine.warm()
quoted = sys.argv[4] == "quoted"
out = {"first": [], "later": []}
for n in range(int(sys.argv[3])):
    for question in json.loads(sys.argv[2]):
        started = time.perf_counter()
        engine.passages(f'"{question.lower()}"' if quoted else question, limit=10)
        out["first" if n == 0 else "later"].append((time.perf_counter() - started) * 1000)
print(json.dumps(out))
"""


def code_tree(rev: str | None, work: Path) -> Path:
    """The repository's work tree, or REV checked out (detached) under `work`, byte-compiled."""
    if rev is None:
        return REPO
    tree = work / f"tree-{len(list(work.iterdir()))}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "daemon")], check=True)
    return tree


def seconds(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def probe_questions(corpus: Path) -> list[str]:
    """The shared corpora's public probe questions, none when they are not there."""
    path = corpus / "probes-public.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(ws: Path, trees: dict[str, Path], rounds: int, others: list[str]) -> dict[str, Any]:
    index = ws / ".wikimem" / "search"
    cold: dict[str, list[float]] = {name: [] for name in [*trees, "whoosh"]}
    passes: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for _ in range(rounds):
        for question in QUESTIONS:
            for name, tree in trees.items():
                env = dict(os.environ, PYTHONPATH=str(tree / "daemon"))
                cold[name].append(seconds([sys.executable, "-m", "wikimem.cli", "search", question, "--root", str(ws),
                                           "--json"], env))
            cold["whoosh"].append(seconds([sys.executable, str(HERE / "baselines.py"), "query", str(index), question],
                                          dict(os.environ)))
        for name, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=str(tree / "daemon"))
            # a process each: none finds another's words read
            for kind, questions, times in (("quoted", QUESTIONS, 3), ("plain", QUESTIONS, 3), ("rest", others, 1)):
                if not questions:
                    continue
                got = json.loads(subprocess.run([sys.executable, "-c", IN_PROCESS, str(ws), json.dumps(questions),
                                                 str(times), kind], env=env, check=True, capture_output=True,
                                                text=True).stdout)
                for key, values in got.items():
                    passes[name].setdefault(f"{kind} {key}", []).extend(values)
    return {"cold_s": cold, "in_process_ms": passes}


def report(figures: dict[str, Any]) -> str:
    cold, passes = figures["cold_s"], figures["in_process_ms"]
    whoosh = statistics.median(cold["whoosh"])
    lines = [f"cold bare whoosh query process: {whoosh:.3f} s [{min(cold['whoosh']):.3f}-{max(cold['whoosh']):.3f}]"]
    for name, values in cold.items():
        if name == "whoosh":
            continue
        median = statistics.median(values)
        lines.append(f"{name}: cold `wikimem search`, two-word questions {median:.3f} s [{min(values):.3f}-"
                     f"{max(values):.3f}] = {median / whoosh:.2f}x whoosh")
        got = {key: statistics.median(v) for key, v in passes[name].items() if v}
        lines.append(f"{name}: in-process p50, quoted phrase first pass {got['quoted first']:.1f} ms "
                     f"(max {max(passes[name]['quoted first']):.1f}), later {got['quoted later']:.1f} ms; "
                     f"the same words unquoted {got['plain first']:.1f} / {got['plain later']:.1f} ms")
        if "rest first" in passes[name]:
            rest = passes[name]["rest first"]
            lines.append(f"{name}: the rest, {len(rest) // max(1, figures['rounds'])} probe questions of the shared "
                         f"corpora, first pass: p50 {got['rest first']:.1f} ms [{min(rest):.1f}-{max(rest):.1f}]")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path, help="a compiled workspace (bench/scale.py, then wikimem compile)")
    parser.add_argument("--commit", action="append", default=[], help="a commit to measure (repeatable; default: this work tree)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus-root", type=Path, default=REPO.parent / "shared" / "corpus",
                        help="where the shared corpora's probe questions are (the rest's questions)")
    parser.add_argument("--json", action="store_true", help="print the samples as one JSON document")
    args = parser.parse_args()
    if not (args.workspace / ".wikimem" / "search").is_dir():
        sys.exit(f"{args.workspace} holds no compiled workspace (no .wikimem/search/): compile it first")
    work = Path(tempfile.mkdtemp(prefix="wikimem-questions-"))
    try:
        trees = {rev or "work tree": code_tree(rev, work) for rev in (args.commit or [None])}
        figures = measure(args.workspace.resolve(), trees, args.rounds, probe_questions(args.corpus_root))
        figures["rounds"] = args.rounds
        print(json.dumps(figures) if args.json else report(figures))
    finally:
        for tree in work.iterdir():
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Time `wikimem lint` (every rule-based check) on a generated 10k-page wiki.

The wiki is synthetic but shaped like a compiled one: N source pages (front
matter with the raw file's real SHA-256, a summary, key facts quoted verbatim
from the raw file with line citations, concept links) and N concept pages
(quotes from two sources each, links both ways), plus index.md and catalogs
from compiler.write_index. Every raw note carries a dated requirement sentence,
so the superseded/contradicted rules have claims to compare.

    python bench/lint_bench.py                 # 5000 sources + 5000 concepts = 10k pages
    python bench/lint_bench.py --pages 2000 --keep /tmp/lintbench
    python bench/lint_bench.py --root /tmp/copy-of-a-compiled-wiki

Reports, each next to the time to read every page's bytes in the same run
(the baseline): cold (no lint cache: every raw source parsed and every page
digested, in worker processes), warm (median of --repeats runs, the cache in
.wikimem/lint-cache.db answering for every unchanged page), after 1% of the
pages were edited, cold in one process (all the work a first run does), and,
for the generated wiki, warm without state.db (every raw file hashed).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "daemon"))
sys.path.insert(0, str(REPO / "bench"))

import contract  # noqa: E402 - bench/contract.py, next to this file

from wikimem.compiler import write_index  # noqa: E402
from wikimem.config import load_settings  # noqa: E402
from wikimem.init import init_workspace  # noqa: E402
from wikimem.lint import corpus, digest, run_lint  # noqa: E402
from wikimem.pages import content_hash  # noqa: E402
from wikimem.state import SourceRow, State  # noqa: E402
from wikimem.workspace import Workspace  # noqa: E402

GOAL_S = 5.0  # every figure: `wikimem lint` on a 10k-page wiki within 5 s
WORDS = ("cache index parser socket buffer channel compiler linker runtime scheduler module package "
         "thread mutex vector string slice closure trait lifetime borrow owner heap stack queue").split()


def sentence(rng: random.Random, i: int) -> str:
    w = rng.sample(WORDS, 8)
    return f"The {w[0]} {w[1]} keeps {rng.randint(2, 900)} {w[2]} entries for the {w[3]} {w[4]} in release {i % 40}."


def generate(root: Path, sources: int) -> Workspace:
    rng = random.Random(7)
    ws = Workspace.at(root)
    init_workspace(ws)
    concepts = sources
    state = State(ws.state_db)
    with state.transaction():
        for i in range(sources):
            folder = f"{i // 100:03d}"
            rel = f"raw/gen/{folder}/note-{i}.md"
            year = 2000 + i % 25
            body = [f"---\ntitle: Note {i}\ndate: {year}-0{1 + i % 9}-1{i % 10}\n---", f"# Note {i}", ""]
            facts = []
            for _ in range(6):
                s = sentence(rng, i)
                body += [s, ""]
                facts.append((s, len(body) - 1))
            body += [f"Tool{i % 50} {1 + i % 7}.0 requires Widget {1 + i % 9}.{i % 4} or later.", ""]
            text = "\n".join(body)
            path = ws.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            sha = hashlib.sha256(text.encode()).hexdigest()
            st = path.stat()
            page = f"sources/gen-{folder}-note-{i}.md"
            links = " · ".join(f"[Concept {c}](../concepts/concept-{c}.md)" for c in (i, (i + 1) % concepts))
            quoted = "\n".join(
                f'- "{s}" ([note-{i}.md, line {line}](../../raw/gen/{folder}/note-{i}.md#L{line}))' for s, line in facts[:3]
            )
            page_text = (
                f"---\ntitle: Note {i}\nkind: source\nsources:\n- {rel}\nsource_sha256: {sha}\naliases: []\n"
                f"updated: 2026-11-29\n---\n\n# Note {i}\n\n{facts[0][0]}\n\nSource: [{rel}](../../{rel}) · markdown\n\n"
                f"## Key facts\n\n{quoted}\n\n## Concepts\n\n{links}\n"
            )
            (ws.wiki / page).parent.mkdir(parents=True, exist_ok=True)
            (ws.wiki / page).write_text(page_text, encoding="utf-8")
            state.put_page(page, content_hash(page_text), "source", rel)
            state.put_source(SourceRow(rel, sha, st.st_size, st.st_mtime_ns, page, "compiled", None, 0, ()))
        for c in range(concepts):
            blocks = []
            srcs = []
            for i in (c, (c - 1) % sources):
                folder = f"{i // 100:03d}"
                srcs.append(f"raw/gen/{folder}/note-{i}.md")
                raw_lines = (ws.root / srcs[-1]).read_text(encoding="utf-8").split("\n")
                line = 5
                blocks.append(
                    f"## [Note {i}](../sources/gen-{folder}-note-{i}.md)\n\n"
                    f'- "{raw_lines[line - 1]}" ([note-{i}.md, line {line}](../../{srcs[-1]}#L{line}))\n'
                )
            text = (
                f"---\ntitle: Concept {c}\nkind: concept\nsources:\n" + "".join(f"- {s}\n" for s in srcs)
                + f"aliases: []\nupdated: 2026-11-29\n---\n\n# Concept {c}\n\nMentioned in 2 sources.\n\n" + "\n".join(blocks)
            )
            (ws.wiki / "concepts").mkdir(exist_ok=True)
            (ws.wiki / f"concepts/concept-{c}.md").write_text(text, encoding="utf-8")
            state.put_page(f"concepts/concept-{c}.md", content_hash(text), "concept", f"concept {c}")
    state.close()
    write_index(ws)
    return ws


def drop_lint_cache(ws: Workspace) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{ws.state_dir / 'lint-cache.db'}{suffix}").unlink(missing_ok=True)


def read_every_page(ws: Workspace) -> float:
    """The baseline: read the bytes of every page (the least any lint that looks at every page does)."""
    started = time.perf_counter()
    total = 0
    for path in ws.wiki.rglob("*.md"):
        total += len(path.read_bytes())
    return time.perf_counter() - started


def timed(ws: Workspace, label: str, quiet: bool = False) -> tuple[float, float, Any]:
    settings = load_settings(ws.root, environ={})
    started, cpu = time.perf_counter(), time.process_time()
    report = run_lint(ws, settings, write=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    slowest = sorted(report.timings.items(), key=lambda kv: -kv[1])[:4]
    # wall time counts waiting for a busy machine; CPU time is what lint itself costs
    if not quiet:
        print(f"{label:<40} wall {seconds:6.2f} s  cpu {cpu:6.2f} s   {report.pages} pages, {report.sources} sources, "
              f"counts {report.counts}; slowest: {', '.join(f'{k} {v:.2f}' for k, v in slowest)}", file=sys.stderr, flush=True)
    return seconds, cpu, report


def touch_pages(ws: Workspace, share: float) -> int:
    """Append a line to a share of the content pages (what a compile of a few changed sources does to them)."""
    pages = sorted(p for p in ws.wiki.rglob("*.md") if p.parent != ws.wiki and not p.name.startswith("index"))
    step = max(1, round(1 / share))
    edited = pages[::step]
    for path in edited:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\nEdited for the lint benchmark.\n")
    return len(edited)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000, help="total pages of the generated wiki (half sources, half concepts)")
    parser.add_argument("--keep", type=Path, default=None, help="build the generated wiki here and keep it")
    parser.add_argument("--root", type=Path, default=None,
                        help="measure this compiled workspace instead of a generated one (its lint cache is dropped, "
                             "and 1%% of its pages get a line appended: use a copy)")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs, median reported")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args()
    if args.root is not None:
        ws = Workspace.at(args.root)
        what = f"compiled wiki at {args.root}"
        temp = None
    else:
        root = args.keep or Path(tempfile.mkdtemp(prefix="lintbench-")) / "ws"
        if root.exists():
            shutil.rmtree(root)
        started = time.perf_counter()
        ws = generate(root, args.pages // 2)
        what = "generated wiki"
        temp = None if args.keep else root.parent
        print(f"generated {args.pages} pages in {time.perf_counter() - started:.1f} s at {root}", file=sys.stderr, flush=True)
    rows: list[dict[str, Any]] = []

    def row(figure: str, value: float, base: float, note: str) -> None:
        rows.append(contract.row(figure, round(value, 3), "s", "read every page", round(base, 3), "≤ 5 s",
                                 goal_abs=GOAL_S, note=f"{note}; {value / base:.1f}x the baseline"))

    drop_lint_cache(ws)
    base_cold = read_every_page(ws)
    cold, cold_cpu, report = timed(ws, "cold (no lint cache)")
    pages = report.pages
    row(f"lint, {what}, cold (no lint cache)", cold, base_cold,
        f"{pages:,} pages, {report.sources:,} sources, {len(report.findings)} findings; cpu of this process {cold_cpu:.2f} s")
    warm, bases = [], []
    for _ in range(args.repeats):  # interleaved with the baseline, so both see the same machine
        bases.append(read_every_page(ws))
        warm.append(timed(ws, "warm (lint cache)")[0])
    row(f"lint, {what}, warm (lint cache)", statistics.median(warm), statistics.median(bases),
        f"median of {args.repeats}; {pages:,} pages")
    edited = touch_pages(ws, 0.01)
    base = read_every_page(ws)
    after_edit = timed(ws, f"warm, {edited} pages edited")[0]
    row(f"lint, {what}, after editing 1% of pages", after_edit, base, f"{edited} pages edited, digested again")
    # the same cold run without worker processes: its CPU time is all the work a first run does
    drop_lint_cache(ws)
    saved = corpus.PARALLEL_THRESHOLD, digest.PARALLEL_THRESHOLD
    corpus.PARALLEL_THRESHOLD = digest.PARALLEL_THRESHOLD = 10**9
    try:
        base = read_every_page(ws)
        one = timed(ws, "cold, one process (all work)")[0]
    finally:
        corpus.PARALLEL_THRESHOLD, digest.PARALLEL_THRESHOLD = saved
    row(f"lint, {what}, cold in one process", one, base, "no worker processes: all the work a first run does")
    if args.root is None:  # never delete a real workspace's state
        ws.state_db.unlink()
        base = read_every_page(ws)
        nostate = timed(ws, "warm, no state.db (hash every file)")[0]
        row(f"lint, {what}, warm without state.db", nostate, base, "every raw file hashed")
    load = os.getloadavg()[0]
    for r in rows:
        r["note"] += f"; load average {load:.1f}"
    if args.json:
        contract.emit("lint_bench", rows, pages=pages, what=what, load_average=load)
    else:
        for r in rows:
            verdict = "ok" if r["value"] <= GOAL_S else "OVER"
            print(f"{r['figure']:<62} {r['value']:7.2f} s   read every page {r['baseline_value']:.2f} s   {verdict}   {r['note']}")
    if temp is not None:
        shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

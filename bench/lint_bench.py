"""Time `wikimem lint` (every rule-based check) on a generated 10k-page wiki.

The wiki is synthetic but shaped like a compiled one: N source pages (front
matter with the raw file's real SHA-256, a summary, key facts quoted verbatim
from the raw file with line citations, concept links) and N concept pages
(quotes from two sources each, links both ways), plus index.md and catalogs
from compiler.write_index. Every raw note carries a dated requirement sentence,
so the superseded/contradicted rules have claims to compare.

    python bench/lint_bench.py                 # 5000 sources + 5000 concepts = 10k pages
    python bench/lint_bench.py --pages 2000 --keep /tmp/lintbench

Reports four timings: cold (no lint cache: every raw source is loaded and
parsed, in worker processes while this one reads the pages), warm (cache in
.wikimem/lint-cache.db), cold in one process (its CPU time is all the work a
first run does; the cold run's cpu figure counts this process only, not the
workers), and warm without state.db rows (every raw file hashed).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "daemon"))

from wikimem.compiler import write_index  # noqa: E402
from wikimem.config import load_settings  # noqa: E402
from wikimem.init import init_workspace  # noqa: E402
from wikimem.lint import corpus, run_lint  # noqa: E402
from wikimem.pages import content_hash  # noqa: E402
from wikimem.state import SourceRow, State  # noqa: E402
from wikimem.workspace import Workspace  # noqa: E402

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


def timed(ws: Workspace, label: str) -> float:
    settings = load_settings(ws.root, environ={})
    started, cpu = time.perf_counter(), time.process_time()
    report = run_lint(ws, settings, write=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    slowest = sorted(report.timings.items(), key=lambda kv: -kv[1])[:4]
    # wall time counts waiting for a busy machine; CPU time is what lint itself costs
    print(f"{label:<36} wall {seconds:6.2f} s  cpu {cpu:6.2f} s   {report.pages} pages, {report.sources} sources, "
          f"counts {report.counts}; slowest: {', '.join(f'{k} {v:.2f}' for k, v in slowest)}", flush=True)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000, help="total pages (half sources, half concepts)")
    parser.add_argument("--keep", type=Path, default=None, help="build the wiki here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="lintbench-")) / "ws"
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
    ws = generate(root, args.pages // 2)
    print(f"generated {args.pages} pages in {time.perf_counter() - started:.1f} s at {root}", flush=True)
    cold = timed(ws, "cold (no lint cache)")
    warm = timed(ws, "warm (lint cache)")
    # the same cold run without worker processes: its CPU time is all the work a first run does
    # (the cpu figure of the parallel run leaves out the workers' share)
    drop_lint_cache(ws)
    threshold, corpus.PARALLEL_THRESHOLD = corpus.PARALLEL_THRESHOLD, 10**9
    try:
        timed(ws, "cold, one process (all work)")
    finally:
        corpus.PARALLEL_THRESHOLD = threshold
    ws.state_db.unlink()
    nostate = timed(ws, "warm, no state.db (hash every file)")
    budget = 5.0
    print(f"budget {budget:.1f} s wall: cold {'ok' if cold <= budget else 'OVER'}, warm {'ok' if warm <= budget else 'OVER'}, "
          f"no state {'ok' if nostate <= budget else 'OVER'} (load average {os.getloadavg()[0]:.1f})")
    if args.keep is None:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

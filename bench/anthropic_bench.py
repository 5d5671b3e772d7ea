"""The anthropic backend's own overhead, with the model taken out: a scripted model on a local server.

    python bench/anthropic_bench.py            # the formats corpus (19 files, every format) and topics (112)
    python bench/anthropic_bench.py --quick    # the formats corpus only
    python bench/anthropic_bench.py --json     # one JSON document, the bench contract (bench/contract.py)
    python bench/anthropic_bench.py --backlog  # a backlog against a slow, rate-limited server (below)
    python bench/anthropic_bench.py --backlog --quick   # its 24 sources only

`--backlog`: a model compile at the size of a real backlog. The local server answers each
request after 1 s (a fast model; real turns take 5-30 s) and allows 8 requests in flight (429,
with retry-after and the ratelimit headers, past that). The model is tests/model_scripts.py's
SharedPageModel: every source writes its page and adds a line to one shared concept page, so
conversations meet on it. Measured in one run: 24 new notes one at a time (concurrency 1, the
baseline), at concurrency 8 and 16 (past the server's limit: 429s), and with --batch; then 200
notes at concurrency 8 and with --batch. Each row says the wall time, requests, the most in
flight at the server, the requests it rejected, the source pages written and the lines on the
shared page (every source's addition), and the tokens per source and in total against the
baseline (concurrency must not cost more).

The scripted model behaves like a careful one: it writes the source page with three
verbatim quotes and their citations, searches for a shared concept page, creates it or adds
to it, and answers the validation round. tests/fake_messages_server.py serves it over real
HTTP with SSE streaming, so the real SDK client, the memory tool, the overlay, validation and
the compiler's writes all run; only the model's thinking time is missing. Baseline: the
offline backend compiling the same corpus in the same run. Afterwards `wikimem lint` must
find no errors (the quotes must be in the cited lines, the links must resolve).

Reads the corpora from ../shared/corpus (relative to the repository).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

import contract  # noqa: E402 - bench/contract.py, next to this file

from fake_messages_server import FakeMessagesServer, memory, reply, text, tool  # noqa: E402


def scripted_model(body: dict[str, Any]) -> Any:
    first = body["messages"][0]["content"][0]["text"]
    page = re.search(r"Its page: `/memories/([^`]+)`", first).group(1)  # type: ignore[union-attr]
    src = re.search(r'path="([^"]+)" part="(\d+)/(\d+)"', first)
    assert src
    path, part = src.group(1), int(src.group(2))
    name = path.rsplit("/", 1)[-1]
    anchor = "page=" if name.endswith(".pdf") else "L"
    lines = re.findall(r"^(\d+)\t(.{40,200})$", first, re.M) or re.findall(r"^\[page (\d+)\]\n(.{20,200})$", first, re.M)
    facts = "\n".join(
        f'- "{t.strip()}" ([{name}, line {n}](../../{path}#{anchor}{n}))'
        for n, t in lines[:3]
        if not any(c in t for c in '"[]')
    )
    messages = body["messages"]
    if len(messages) == 1:
        if part == 1:
            content = (
                f"---\ntitle: {name}\nkind: source\n---\n# {name}\n\nSummary of {name}.\n\n## Key facts\n{facts}\n\n"
                "## Concepts\n[Shared topic](../concepts/shared-topic.md)\n"
            )
            return reply(memory("create", path=f"/memories/{page}", file_text=content), tool("search_wiki", {"query": "shared topic"}))
        return reply(memory("insert", path=f"/memories/{page}", insert_line=8, insert_text=f"Part {part}:\n{facts}"))
    last = json.dumps(messages[-1]["content"])
    if "/memories/concepts/shared-topic.md |" in last:
        return reply(memory("str_replace", path="/memories/concepts/shared-topic.md", old_str="# Shared topic\n", new_str=f"# Shared topic\n\n- [{name}](../{page})\n"))
    if "search" in json.dumps(messages[-2]) or "shared-topic.md, which does not exist" in last:
        return reply(memory("create", path="/memories/concepts/shared-topic.md", file_text=f"---\ntitle: Shared topic\nkind: concept\n---\n# Shared topic\n\n- [{name}](../{page})\n"))
    return reply(text("Done."))


def wikimem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wikimem.cli", *args], capture_output=True, text=True)


def workspace(corpus: str, parent: Path) -> Path:
    root = parent / corpus
    wikimem("init", str(root), "-q")
    for file in sorted((CORPUS / corpus / "raw").iterdir()):
        if file.is_file():
            shutil.copy2(file, root / "raw" / file.name)
    return root


def measure(corpus: str) -> dict[str, Any]:
    from wikimem.compiler import compile_workspace
    from wikimem.config import load_settings
    from wikimem.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="wikimem-anthropic-bench-") as tmp:
        offline_root = workspace(corpus, Path(tmp) / "offline")
        started = time.perf_counter()
        offline = compile_workspace(Workspace.at(offline_root), load_settings(offline_root, {"backend": "offline"}, environ={}))
        offline_s = time.perf_counter() - started

        root = workspace(corpus, Path(tmp) / "anthropic")
        ws = Workspace.at(root)
        with FakeMessagesServer([scripted_model] * 100_000) as server:
            settings = load_settings(root, {"backend": "anthropic", "base_url": server.url}, environ={})
            started = time.perf_counter()
            report = compile_workspace(ws, settings)
            seconds = time.perf_counter() - started
            requests = len(server.requests)
        lint = wikimem("lint", "--root", str(root), "--json")
        findings = json.loads(lint.stdout).get("findings", []) if lint.stdout.strip().startswith("{") else []
        errors = [f for f in findings if f.get("severity") == "error"]
        return {
            "corpus": corpus,
            "sources": len(report.compiled),
            "failed": len(report.failed),
            "requests": requests,
            "seconds": round(seconds, 2),
            "ms_per_request": round(1000 * seconds / max(1, requests), 1),
            "offline_seconds": round(offline_s, 2),
            "offline_sources": len(offline.compiled),
            "ratio_to_offline": round(seconds / max(offline_s, 1e-9), 2),
            "lint_errors": len(errors),
            "lint_exit": lint.returncode,
        }


def _notes(root: Path, count: int) -> list[str]:
    paths = []
    for n in range(1, count + 1):
        name = f"note-{n:03d}.md"
        (root / "raw" / name).write_text(
            f"# Note {n}\n\nNote {n} says the shared topic matters for reason {n}.\n\n"
            f"The measured value in note {n} was {n * 7} units.\n", encoding="utf-8")
        paths.append(f"raw/{name}")
    return paths


def backlog_run(count: int, *, concurrency: int = 8, batch: bool = False, latency: float = 1.0,
                limit: int = 8) -> dict[str, Any]:
    """One compile of `count` new notes against the slow, rate-limited local server."""
    from model_scripts import SharedPageModel, source_of
    from wikimem.compiler import compile_workspace
    from wikimem.config import load_settings
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="wikimem-backlog-bench-") as tmp:
        ws = Workspace.at(Path(tmp) / "ws")
        init_workspace(ws)
        paths = _notes(ws.root, count)
        with FakeMessagesServer([SharedPageModel()] * 1_000_000, latency=latency, max_in_flight=limit) as server:
            settings = load_settings(ws.root, {"backend": "anthropic", "base_url": server.url,
                                               "concurrency": concurrency, "batch": batch}, environ={})
            started = time.perf_counter()
            report = compile_workspace(ws, settings)
            seconds = time.perf_counter() - started
            per_source: dict[str, int] = {}
            kinds = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
            for request in server.requests:
                usage = request.get("usage") or {}
                spent = (usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
                         + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0))
                path = source_of(request["body"])[0]
                per_source[path] = per_source.get(path, 0) + spent
                kinds["input"] += usage.get("input_tokens", 0)
                kinds["output"] += usage.get("output_tokens", 0)
                kinds["cache_read"] += usage.get("cache_read_input_tokens", 0)
                kinds["cache_write"] += usage.get("cache_creation_input_tokens", 0)
            rejected, peak, batches = server.rejected, server.peak_in_flight, server.batches_created
            requests = len(server.requests)
        shared = ws.wiki / "concepts" / "shared-topic.md"
        lines = re.findall(r"^- \[(note-\d+\.md)\]", shared.read_text(encoding="utf-8"), re.M) if shared.exists() else []
        pages = sum(1 for p in paths if (ws.wiki / "sources" / f"{p[4:-3]}.md").exists())
        traffic = report.traffic
        return {
            "sources": count, "mode": "batch" if batch else f"concurrency {concurrency}", "seconds": round(seconds, 1),
            "compiled": len(report.compiled), "failed": len(report.failed), "requests": requests,
            "max_in_flight": peak, "rejected": rejected, "narrowest_window": traffic.get("narrowest_window"),
            "rounds": traffic.get("rounds"), "batches": batches, "source_pages": pages,
            "shared_lines": len(lines), "shared_unique": len(set(lines)), "turns": traffic.get("turns"),
            "tokens": sum(per_source.values()), "tokens_by_kind": kinds,
            "tokens_per_source": round(sum(per_source.values()) / max(1, count)),
            "most_per_source": max(per_source.values(), default=0), "cost_usd": traffic.get("cost_usd"),
        }


def backlog(quick: bool) -> list[dict[str, Any]]:
    runs = [backlog_run(24, concurrency=1), backlog_run(24), backlog_run(24, concurrency=16),
            backlog_run(24, batch=True)]
    if not quick:
        # 200 one at a time at 1 s a request would take a quarter of an hour: its tokens (which do
        # not depend on the server's speed) are measured at 0.05 s a request instead
        serial = backlog_run(200, concurrency=1, latency=0.05)
        serial["mode"] = "concurrency 1 (0.05 s a request: tokens only)"
        runs += [serial, backlog_run(200), backlog_run(200, batch=True)]
    return runs


def backlog_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in runs:
        # tokens against the serial compile of the same number of sources
        baseline = next(b for b in runs if b["sources"] == r["sources"] and b["mode"].startswith("concurrency 1"))
        complete = r["failed"] == 0 and r["source_pages"] == r["sources"] and r["shared_unique"] == r["sources"]
        rows.append(contract.row(
            f"backlog of {r['sources']} new notes, {r['mode']}, 1 s a request, 8 in flight allowed", r["seconds"], "s",
            "the same notes one at a time (concurrency 1), same run", baseline["seconds"], "every page and addition kept",
            status="ok" if complete else "over",
            note=(f"{r['requests']} requests, max {r['max_in_flight']} in flight, {r['rejected']} rejected (429)"
                  + (f", {r['rounds']} rounds / {r['batches']} batches" if r["rounds"] else "")
                  + f"; {r['source_pages']}/{r['sources']} source pages, {r['shared_unique']}/{r['sources']} lines on "
                  f"the shared page; {r['tokens_per_source']:,} tokens a source ({baseline['tokens_per_source']:,} serial)")))
    return rows


def figure_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per corpus: the anthropic backend's compile (scripted model) beside the offline one."""
    return [
        contract.row(
            f"anthropic backend compile, scripted model, {r['corpus']} ({r['sources']} sources)", r["seconds"], "s",
            "offline backend, same corpus", r["offline_seconds"], "no failures, no lint errors",
            status="ok" if not r["failed"] and not r["lint_errors"] else "over",
            note=f"{r['requests']} requests, {r['ms_per_request']} ms/request; {r['failed']} failed, "
                 f"{r['lint_errors']} lint errors")
        for r in results
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the formats corpus only")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout (the bench contract)")
    parser.add_argument("--backlog", action="store_true", help="24 and 200 new notes against a slow, rate-limited server")
    args = parser.parse_args()
    if args.backlog:
        runs = backlog(args.quick)
        if args.json:
            contract.emit("anthropic_backlog", backlog_rows(runs), backlog=runs)
            return
        print("| sources | mode | s | requests | max in flight | rejected | rounds/batches | source pages | shared lines "
              "| turns | tokens | tokens/source | cost |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in runs:
            rounds = f"{r['rounds']}/{r['batches']}" if r["rounds"] else ""
            print(f"| {r['sources']} | {r['mode']} | {r['seconds']} | {r['requests']} | {r['max_in_flight']} | {r['rejected']} "
                  f"| {rounds} | {r['source_pages']} | {r['shared_unique']} | {r['turns']} | {r['tokens']:,} "
                  f"| {r['tokens_per_source']:,} | {r['cost_usd']} |")
        return
    if not (CORPUS / "formats" / "raw").is_dir():
        print(f"corpus not found at {CORPUS}; nothing to measure", file=sys.stderr)
        if args.json:
            contract.emit("anthropic_bench", [contract.row("anthropic backend compile, scripted model",
                                                           status="skipped", note=f"corpus not found at {CORPUS}")])
        sys.exit(0)
    corpora = ["formats"] if args.quick else ["formats", "topics"]
    rows = [measure(c) for c in corpora]
    if args.json:
        contract.emit("anthropic_bench", figure_rows(rows), anthropic_pipeline=rows)
        return
    print("| corpus | sources | failed | requests | s | ms/request | offline s | ratio | lint errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['corpus']} | {r['sources']} | {r['failed']} | {r['requests']} | {r['seconds']} | {r['ms_per_request']} "
              f"| {r['offline_seconds']} | {r['ratio_to_offline']} | {r['lint_errors']} |")


if __name__ == "__main__":
    main()

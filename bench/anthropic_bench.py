"""The anthropic backend's own overhead, with the model taken out: a scripted model on a local server.

    python bench/anthropic_bench.py            # the formats corpus (19 files, every format) and topics (112)
    python bench/anthropic_bench.py --quick    # the formats corpus only
    python bench/anthropic_bench.py --json     # one JSON document, the bench contract (bench/contract.py)

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
    args = parser.parse_args()
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

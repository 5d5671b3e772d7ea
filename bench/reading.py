"""How faithfully the compile reads a documentation tree, and what reading it costs.

    python bench/reading.py [--corpus ../shared/corpus/sphinx/raw] [--repeats 3] [--json]

On a copy of the corpus (default: the Flask and docutils Sphinx trees) it reports:

- titles: reST pages whose title equals the title docutils itself gives the document
  (`publish_doctree` with its doctitle transform; code spans compared without backquotes);
- debris: pages whose body (outside code) still holds role or directive markup
  (`:word:` + backquote, `.. word::`);
- outline: sections the source pages' outlines link (with a long document's part pages, which
  its page links), against the sections docutils counts;
- compile time: `wikimem compile` from nothing against a plain whoosh index of the same raw
  files (bench/baselines.py index), interleaved, medians of --repeats, as a ratio.

Prints the figures as lines on stdout; with --json, one JSON document, the bench contract
(bench/contract.py): {"bench": "reading", "rows": [...], "corpus", "figures", "samples"}.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import contract  # noqa: E402 - bench/contract.py, next to this file

ROLE = re.compile(r":[A-Za-z][\w:+-]*:`")
ROLE_TEXT = re.compile(r":[A-Za-z][\w:+-]*:`~?([^`<]*?)\s*(?:<[^`]*>)?`")
DIRECTIVE = re.compile(r"(?m)^\s*\.\. [A-Za-z][\w:-]*::")


def docutils_view(text: str) -> tuple[str | None, int]:
    from docutils import nodes
    from docutils.core import publish_doctree

    tree = publish_doctree(text, settings_overrides={
        "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
        "raw_enabled": False, "doctitle_xform": True})
    title = tree.get("title")
    if title:  # a Sphinx role docutils does not know stays as written: compare its text
        title = ROLE_TEXT.sub(r"\1", str(title))
    return (str(title) if title else None), len(list(tree.findall(nodes.section))) + (1 if title else 0)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus" / "sphinx" / "raw")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout (the bench contract)")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        message = f"corpus not found at {args.corpus}"
        if args.json:
            contract.emit("reading", [contract.row("reading", status="error", note=message)], error=message)
        print(f"reading: {message}", file=sys.stderr)
        return 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["SOURCE_DATE_EPOCH"] = "1798675200"
    wikimem = [sys.executable, "-m", "wikimem.cli"] if shutil.which("wikimem") is None else ["wikimem"]
    samples: dict[str, list[float]] = {"compile": [], "whoosh_index": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for round_ in range(args.repeats):
            index = work / f"whoosh-{round_}"
            samples["whoosh_index"].append(timed([sys.executable, str(HERE / "baselines.py"), "index",
                                                  str(args.corpus), str(index)], env))
            root = work / f"ws-{round_}"
            subprocess.run([*wikimem, "init", str(root)], check=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            shutil.rmtree(root / "raw")
            shutil.copytree(args.corpus, root / "raw")
            samples["compile"].append(timed([*wikimem, "compile", "--root", str(root)], env))
        root = work / "ws-0"
        figures = measure_pages(root)
    compile_s = statistics.median(samples["compile"])
    whoosh_s = statistics.median(samples["whoosh_index"])
    figures["compile_seconds"] = round(compile_s, 2)
    figures["whoosh_index_seconds"] = round(whoosh_s, 2)
    figures["compile_vs_whoosh"] = round(compile_s / whoosh_s, 2)
    figures["repeats"] = args.repeats
    rows = figure_rows(figures)
    if args.json:
        contract.emit("reading", rows, corpus=str(args.corpus), figures=figures,
                      samples={k: [round(v, 3) for v in vs] for k, vs in samples.items()})
        return 0
    for r in rows:
        value = "—" if r["value"] is None else f"{r['value']:g} {r['unit']}".strip()
        base = f"   {r['baseline']}: {r['baseline_value']:g}" if r["baseline_value"] is not None else ""
        print(f"{r['figure']:<48} {value:>12}{base}   {r.get('status', '')}  {r['note']}".rstrip())
    for line in figures["wrong_titles"]:
        print(f"  wrong title: {line}")
    for rel in figures["debris_in"]:
        print(f"  markup left: {rel}")
    return 0


def figure_rows(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """The contract's rows from measure_pages()'s figures and the compile timings."""
    right, total = figures["rst_titles_right"], figures["rst_titles_total"]
    pages, debris = figures["source_pages"], figures["pages_with_markup_debris"]
    wrong = figures["wrong_titles"]
    return [
        contract.row("reading: reST titles as docutils gives them", right, "pages", "docutils doctitle", total,
                     "all", status="ok" if right == total else "over",
                     note=f"first wrong: {wrong[0]}"[:300] if wrong else f"{total} reST documents with a title"),
        contract.row("reading: source pages with role or directive markup left", debris, "pages", goal="none",
                     goal_abs=0, note=f"of {pages} source pages"
                     + (f"; first: {figures['debris_in'][0]}" if figures["debris_in"] else "")),
        contract.row("reading: sections the outlines link", figures["outline_sections_found"], "sections",
                     "sections docutils counts", figures["outline_sections_in_documents"], status="info",
                     note="reST source pages"),
        contract.row("reading: compile of the documentation trees", figures["compile_seconds"], "s",
                     "plain whoosh index of the same raw files", figures["whoosh_index_seconds"], status="info",
                     note=f"`wikimem compile` from nothing, processes interleaved, median of {figures.get('repeats', '?')}"),
    ]


def _outline(body: str) -> str:
    return body.split("## Outline", 1)[1].split("\n## ", 1)[0] if "## Outline" in body else ""


def measure_pages(root: Path) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent / "daemon"))
    from wikimem.pages import loads_page

    titles_right = titles_total = debris = pages = 0
    sections_found = sections_expected = 0
    wrong: list[str] = []
    with_debris: list[str] = []
    for page_file in sorted((root / "wiki" / "sources").glob("*.md")):
        if page_file.name.startswith("index"):
            continue
        page = loads_page(page_file.name, page_file.read_text(encoding="utf-8"))
        if page.kind != "source" or not page.sources:
            continue
        pages += 1
        body = re.sub(r"(?s)```.*?```", "", page.body)
        body = re.sub(r"``[^`]*``|`[^`\n]*`", "", body)
        if ROLE.search(body) or DIRECTIVE.search(body):
            debris += 1
            with_debris.append(page.sources[0])
        if page.meta.get("format") != "rst":
            continue
        text = (root / page.sources[0]).read_text(encoding="utf-8", errors="replace")
        title, sections = docutils_view(text)
        sections_found += len(re.findall(r"\]\([^)]*#L\d+\)", _outline(page.body)))
        # a long document's outline goes on in its part pages (sources/<page stem>/*.md), which
        # its page's outline links: every section is still one line link away
        for part_file in sorted((page_file.parent / page_file.stem).glob("*.md")):
            part = loads_page(part_file.name, part_file.read_text(encoding="utf-8"))
            if part.meta.get("part_of"):
                sections_found += len(re.findall(r"\]\([^)]*#L\d+\)", _outline(part.body)))
                if (ROLE.search(part.body) or DIRECTIVE.search(part.body)) and page.sources[0] not in with_debris:
                    debris += 1
                    with_debris.append(page.sources[0])
        sections_expected += sections
        if title:
            titles_total += 1
            if page.title.replace("`", "") == title:
                titles_right += 1
            else:
                wrong.append(f"{page.sources[0]}: {page.title!r} (docutils: {title!r})")
    return {
        "source_pages": pages,
        "rst_titles_right": titles_right, "rst_titles_total": titles_total, "wrong_titles": wrong,
        "pages_with_markup_debris": debris, "debris_in": with_debris[:10],
        "outline_sections_found": sections_found, "outline_sections_in_documents": sections_expected,
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

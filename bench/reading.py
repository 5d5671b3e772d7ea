"""How faithfully the compile reads a documentation tree, and what reading it costs.

    python bench/reading.py [--corpus ../shared/corpus/sphinx/raw] [--repeats 3]

On a copy of the corpus (default: the Flask and docutils Sphinx trees) it reports:

- titles: reST pages whose title equals the title docutils itself gives the document
  (`publish_doctree` with its doctitle transform; code spans compared without backquotes);
- debris: pages whose body (outside code) still holds role or directive markup
  (`:word:` + backquote, `.. word::`);
- outline: sections the source pages' outlines link, against the sections docutils counts;
- compile time: `wikimem compile` from nothing against a plain whoosh index of the same raw
  files (bench/baselines.py index), interleaved, medians of --repeats, as a ratio.

Prints one JSON document on stdout (the bench contract: {"bench", "figures", "samples"}).
"""

from __future__ import annotations

import argparse
import io
import json
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
ROLE = re.compile(r":[A-Za-z][\w:+-]*:`")
DIRECTIVE = re.compile(r"(?m)^\s*\.\. [A-Za-z][\w:-]*::")


def docutils_view(text: str) -> tuple[str | None, int]:
    from docutils import nodes
    from docutils.core import publish_doctree

    tree = publish_doctree(text, settings_overrides={
        "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
        "raw_enabled": False, "doctitle_xform": True})
    title = tree.get("title")
    return (str(title) if title else None), len(list(tree.findall(nodes.section))) + (1 if title else 0)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus" / "sphinx" / "raw")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(json.dumps({"bench": "reading", "error": f"corpus not found at {args.corpus}"}))
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
    print(json.dumps({"bench": "reading", "corpus": str(args.corpus), "figures": figures,
                      "samples": {k: [round(v, 3) for v in vs] for k, vs in samples.items()}}, indent=2))
    return 0


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
        outline = page.body.split("## Outline", 1)[1].split("\n## ", 1)[0] if "## Outline" in page.body else ""
        sections_found += len(re.findall(r"\]\([^)]*#L\d+\)", outline))
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

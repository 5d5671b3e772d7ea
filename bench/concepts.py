"""Concept pages as knowledge: coverage of the concepts a reader expects, a sample to judge the
noise by eye, and what the pages weigh.

    python bench/concepts.py                       # the sphinx and topics corpora, compiled offline
    python bench/concepts.py --wiki DIR --list L   # an already-compiled workspace and a concept list
    python bench/concepts.py --json                # one JSON document: {"bench": "concepts", "rows": [...]}

For each corpus: its raw/ is compiled offline in a temporary workspace (SOURCE_DATE_EPOCH
pinned, ANTHROPIC_* unset), then

- coverage: the share of the list's concepts that have a concept page, matched on the page's
  title or an alias (case-insensitive, backquotes and a trailing "s" ignored; a list line may
  give alternatives separated by "|"). Lists: ../shared/corpus/sphinx/concepts-public.txt
  (public, written by the corpus's authors) and bench/probes/rust-concepts.txt (ours, from the
  Rust book's table of contents and index). Misses are listed.
- a noise sample: 30 concept titles drawn with a fixed seed, printed so a reader can judge
  how many are things a reader would look up (the figure is the reader's count, not ours);
- page sizes: median, 90th percentile and largest concept page and source page, in KB, beside
  the median raw source (what a page summarizes).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(REPO / "daemon"))
sys.path.insert(0, str(HERE))

import contract  # noqa: E402 - bench/contract.py, next to this file

LISTS = {"sphinx": DEFAULT_CORPUS / "sphinx" / "concepts-public.txt", "topics": HERE / "probes" / "rust-concepts.txt"}
SAMPLE = 30


def _norm(name: str) -> str:
    return re.sub(r"s$", "", str(name).lower().strip().strip("`").strip())


def concept_names(wiki: Path) -> dict[str, str]:
    """normalized title or alias -> the page's title."""
    from wikimem.pages import FrontMatterError, loads_page

    names: dict[str, str] = {}
    for file in sorted((wiki / "concepts").rglob("*.md")):
        if file.name.startswith("index"):
            continue
        try:
            page = loads_page(file.relative_to(wiki).as_posix(), file.read_text(encoding="utf-8"))
        except (OSError, FrontMatterError):
            continue
        for name in [page.title, *(page.meta.get("aliases") or [])]:
            names.setdefault(_norm(name), page.title)
    return names


def coverage(wiki: Path, listfile: Path) -> dict[str, Any]:
    names = concept_names(wiki)
    wanted = [line.strip() for line in listfile.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    missed = [line for line in wanted if not any(_norm(a) in names for a in line.split("|"))]
    return {"list": str(listfile), "concepts": len(wanted), "found": len(wanted) - len(missed),
            "coverage": round((len(wanted) - len(missed)) / max(1, len(wanted)), 3), "missed": missed}


def sizes(folder: Path, pattern: str = "*.md") -> dict[str, float]:
    kb = sorted(f.stat().st_size / 1000 for f in folder.rglob(pattern) if not f.name.startswith("index"))
    if not kb:
        return {"count": 0}
    return {"count": len(kb), "median_kb": round(statistics.median(kb), 1),
            "p90_kb": round(kb[int(0.9 * (len(kb) - 1))], 1), "max_kb": round(kb[-1], 1)}


def build(corpus: Path, into: Path) -> Path:
    from wikimem.compiler import compile_workspace
    from wikimem.config import load_settings
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    ws = Workspace.at(into)
    init_workspace(ws)
    for item in corpus.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, ws.raw / item.name)
    compile_workspace(ws, load_settings(ws.root, {"backend": "offline"}, environ={}))
    return into


def measure(name: str, root: Path, listfile: Path | None) -> dict[str, Any]:
    wiki = root / "wiki"
    titles = sorted(set(concept_names(wiki).values()))
    out: dict[str, Any] = {"corpus": name, "concept_pages": len(titles),
                           "sample": sorted(random.Random(f"wikimem-concepts:{name}").sample(titles, min(SAMPLE, len(titles)))),
                           "concept_page_sizes": sizes(wiki / "concepts"), "source_page_sizes": sizes(wiki / "sources"),
                           "raw_sizes": sizes(root / "raw", "*")}
    if listfile is not None and listfile.is_file():
        out["coverage"] = coverage(wiki, listfile)
    return out


def figure_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contract's rows (bench/contract.py) from measure()'s results."""
    out = []
    for r in results:
        cov = r.get("coverage")
        if cov:
            out.append(contract.row(
                f"concept coverage, {r['corpus']} ({Path(cov['list']).name})", cov["coverage"], "", goal="≥ 0.9",
                status="ok" if cov["coverage"] >= 0.9 else "over",
                note=f"{cov['found']}/{cov['concepts']}; missed: {', '.join(cov['missed']) or 'none'}"[:300]))
        c, s, raw = r["concept_page_sizes"], r["source_page_sizes"], r["raw_sizes"]
        for label, sizes_ in (("concept", c), ("source", s)):
            if sizes_.get("count"):
                out.append(contract.row(
                    f"{label} page size median, {r['corpus']}", sizes_["median_kb"], "KB", "median raw source",
                    raw.get("median_kb"), status="info",
                    note=f"{sizes_['count']} pages; p90 {sizes_['p90_kb']} KB, largest {sizes_['max_kb']} KB"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-root", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--corpora", default="sphinx,topics", help="comma-separated corpus names")
    parser.add_argument("--wiki", type=Path, default=None, help="an already-compiled workspace instead")
    parser.add_argument("--list", type=Path, default=None, help="the concept list for --wiki")
    parser.add_argument("--keep", type=Path, default=None, help="build the workspaces here and keep them")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    args = parser.parse_args()
    os.environ["SOURCE_DATE_EPOCH"] = os.environ.get("SOURCE_DATE_EPOCH", "1798675200")
    for var in [v for v in os.environ if v.startswith("ANTHROPIC_")]:
        del os.environ[var]
    results = []
    if args.wiki is not None:
        results.append(measure(args.wiki.name, args.wiki, args.list))
    else:
        tmp = args.keep or Path(tempfile.mkdtemp(prefix="wikimem-concepts-"))
        try:
            for name in [n for n in args.corpora.split(",") if n]:
                corpus = args.corpus_root / name / "raw"
                if not corpus.is_dir():
                    print(f"concepts: {corpus} is missing (../shared/corpus absent?)", file=sys.stderr)
                    return 1
                root = tmp / name
                if not (root / "wiki" / "concepts").is_dir():
                    print(f"compiling {name} ...", file=sys.stderr)
                    build(corpus, root)
                listfile = LISTS.get(name)
                if listfile is not None and name == "sphinx":
                    listfile = args.corpus_root / "sphinx" / "concepts-public.txt"
                results.append(measure(name, root, listfile))
        finally:
            if args.keep is None:
                shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        contract.emit("concepts", figure_rows(results), corpora=results)
        return 0
    for r in results:
        print(f"## {r['corpus']}: {r['concept_pages']} concept pages")
        if "coverage" in r:
            cov = r["coverage"]
            print(f"coverage {cov['found']}/{cov['concepts']} = {cov['coverage']:.2f}; missed: {', '.join(cov['missed']) or 'none'}")
        for key in ("concept_page_sizes", "source_page_sizes", "raw_sizes"):
            print(f"{key}: {r[key]}")
        print(f"sample of {len(r['sample'])}: " + " · ".join(r["sample"]))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

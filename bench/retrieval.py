"""Retrieval quality: wikimem search against plain whoosh BM25 over raw/, on the shared probes.

Each corpus named by a probe is compiled with the offline backend into a temporary
workspace, then every probe's question is searched both ways. A probe is retrieved at
rank r when the r-th result's text, or the text of the single raw source that result
cites, holds the probe's evidence sentence (white space normalized).

    python bench/retrieval.py          # the public probes of ../shared/corpus and corpus/sphinx, and ours
    python bench/retrieval.py --probes P.jsonl [--probes Q.jsonl] --corpus-root DIR --json

`run()` returns the figures as a dict, `figure_rows()` turns them into the rows of the bench
contract (bench/contract.py) that `--json` prints.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
sys.path.insert(0, str(REPO / "daemon"))
sys.path.insert(0, str(HERE))

import contract  # noqa: E402 - bench/contract.py, next to this file

K = 5
DEPTH = 10  # ranks looked at for MRR


def norm(text: str) -> str:
    return " ".join(text.split())


def build_workspace(corpus_root: Path, name: str, into: Path) -> Path:
    from wikimem.compiler import compile_workspace
    from wikimem.config import load_settings
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    root = into / name
    ws = Workspace.at(root)
    if (root / "raw").is_dir() and any((root / "raw").iterdir()):
        # kept from an earlier run (--keep): bring it up to date, which is a no-op when nothing changed
        compile_workspace(ws, load_settings(ws.root, {"backend": "offline"}, environ={}))
        return root
    init_workspace(ws)
    for item in (corpus_root / name / "raw").iterdir():
        target = ws.raw / item.name
        if item.is_dir():
            shutil.copytree(item, target)
        else:
            shutil.copy2(item, target)
    compile_workspace(ws, load_settings(ws.root, {"backend": "offline"}, environ={}))
    return root


class Judge:
    """Reads result files once and decides whether a result holds a probe's evidence."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, tuple[str, list[str]]] = {}

    def texts(self, path: str) -> list[str]:
        if path not in self.cache:
            file = self.root / path
            text = norm(file.read_text(encoding="utf-8", errors="replace")) if file.is_file() else ""
            cited: list[str] = []
            if path.startswith("wiki/"):
                from wikimem.pages import FrontMatterError, loads_page

                try:
                    page = loads_page(path, file.read_text(encoding="utf-8"))
                    cited = page.sources
                except (OSError, FrontMatterError):
                    cited = []
            self.cache[path] = (text, cited)
        text, cited = self.cache[path]
        out = [text]
        if len(cited) == 1:
            raw = self.root / cited[0]
            if raw.is_file():
                out.append(norm(raw.read_text(encoding="utf-8", errors="replace")))
        return out

    def holds(self, path: str, evidence: str) -> bool:
        ev = norm(evidence)
        return any(ev in t for t in self.texts(path))


def baseline_index(root: Path, folder: Path) -> Any:
    """Plain whoosh: one document per raw file, default analyzer, BM25F defaults."""
    from whoosh import index
    from whoosh.fields import ID, TEXT, Schema

    from wikimem.sources import SkipSource, load_source

    ix = index.create_in(str(folder), Schema(path=ID(stored=True), content=TEXT))
    writer = ix.writer()
    for file in sorted((root / "raw").rglob("*")):
        if not file.is_file():
            continue
        rel = file.relative_to(root).as_posix()
        if file.suffix.lower() == ".pdf":
            try:  # binary: give the baseline the extracted text so it is not crippled
                text = load_source(file, rel, max_bytes=50_000_000).text
            except SkipSource:
                continue
        else:
            text = file.read_text(encoding="utf-8", errors="replace")
        writer.add_document(path=rel, content=text)
    writer.commit()
    return ix


def baseline_search(ix: Any, question: str, grouping: str) -> list[str]:
    from whoosh.qparser import AndGroup, OrGroup, QueryParser

    group = OrGroup if grouping == "or" else AndGroup
    parser = QueryParser("content", ix.schema, group=group)
    q = parser.parse(question)
    with ix.searcher() as s:
        return [h["path"] for h in s.search(q, limit=DEPTH)]


def rank_of(raw: str, ranked: list[str], judge: Judge) -> int:
    """Rank of the raw file, or of the source page compiled from it (whichever comes first)."""
    for i, path in enumerate(ranked):
        if path == raw or (path.startswith("wiki/sources/") and judge.texts(path) and judge.cache[path][1] == [raw]):
            return i
    return 10_000


def score(ranked: list[str], judge: Judge, evidence: str) -> int | None:
    for rank, path in enumerate(ranked[:DEPTH], 1):
        if judge.holds(path, evidence):
            return rank
    return None


def summarize(ranks: list[int | None]) -> dict[str, Any]:
    n = len(ranks) or 1
    return {
        "probes": len(ranks),
        f"recall@{K}": round(sum(1 for r in ranks if r and r <= K) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def default_probes(corpus_root: Path) -> list[Path]:
    """The public probes of the shared corpora, and our own (bench/probes/*.jsonl)."""
    found = [corpus_root / "probes-public.jsonl", corpus_root / "sphinx" / "probes-public.jsonl"]
    found += sorted((HERE / "probes").glob("*.jsonl"))
    return [p for p in found if p.is_file()]


def run(probes_path: Path | list[Path] | None = None, corpus_root: Path | None = None, *,
        keep: Path | None = None) -> dict[str, Any]:
    from wikimem import search as wsearch
    from wikimem.workspace import Workspace

    corpus_root = corpus_root or DEFAULT_CORPUS
    paths = [probes_path] if isinstance(probes_path, Path) else probes_path or default_probes(corpus_root)
    probes = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()
              if line.strip()]
    for probe in probes:  # the sphinx probes name their corpus only in their source path
        probe.setdefault("corpus", probe["source"].split("/", 1)[0])
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1798675200")
    tmp = Path(tempfile.mkdtemp(prefix="wikimem-retrieval-")) if keep is None else keep
    samples: list[dict[str, Any]] = []
    timings: dict[str, float] = {}
    try:
        for name in sorted({p["corpus"] for p in probes}):
            started = time.perf_counter()
            root = build_workspace(corpus_root, name, tmp)
            timings[f"compile_{name}_s"] = round(time.perf_counter() - started, 2)
            ws = Workspace.at(root)
            started = time.perf_counter()
            wsearch.update_index(ws)
            timings[f"index_{name}_s"] = round(time.perf_counter() - started, 2)
            base_dir = tmp / f"{name}-baseline"
            shutil.rmtree(base_dir, ignore_errors=True)
            base_dir.mkdir()
            bix = baseline_index(root, base_dir)
            judge = Judge(root)
            for probe in (p for p in probes if p["corpus"] == name):
                ours = [h.path for h in wsearch.search(ws, probe["question"], limit=DEPTH)]
                row = {
                    "id": probe["id"], "kind": probe.get("kind", ""), "question": probe["question"],
                    "wikimem": score(ours, judge, probe["evidence"]),
                    "bm25_or": score(baseline_search(bix, probe["question"], "or"), judge, probe["evidence"]),
                    "bm25_and": score(baseline_search(bix, probe["question"], "and"), judge, probe["evidence"]),
                    "top": ours[:K],
                }
                if probe.get("old_source"):
                    # supersede probes: does the newer source outrank the superseded one?
                    new_raw, old_raw = "raw/" + probe["source"].split("/raw/", 1)[1], "raw/" + probe["old_source"].split("/raw/", 1)[1]
                    row["newer_first"] = rank_of(new_raw, ours, judge) < rank_of(old_raw, ours, judge)
                samples.append(row)
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    out: dict[str, Any] = {"k": K, "depth": DEPTH, "probes_files": [str(p) for p in paths], **timings}
    for system in ("wikimem", "bm25_or", "bm25_and"):
        out[system] = summarize([r[system] for r in samples])
        out[system]["by_kind"] = {
            kind: summarize([r[system] for r in samples if r["kind"] == kind])
            for kind in sorted({r["kind"] for r in samples})
        }
    sup = [r["newer_first"] for r in samples if "newer_first" in r]
    if sup:
        out["supersede_newer_first"] = f"{sum(sup)}/{len(sup)}"
    out["samples"] = samples
    return out


def figure_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """recall@K and MRR of wikimem beside plain whoosh BM25 (OR) on the same probes; supersede probes."""
    ours, base, k = result["wikimem"], result["bm25_or"], result.get("k", K)
    and_ = result.get("bm25_and") or {}
    rows = [
        contract.row(f"retrieval {label}, {ours['probes']} probes", ours[key], "", "plain whoosh BM25 over raw/",
                     base[key], "higher is better", status="info",
                     note=f"BM25 AND: {and_[key]}" if key in and_ else "")
        for key, label in ((f"recall@{k}", f"recall@{k}"), ("mrr", "MRR"))
    ]
    if "supersede_newer_first" in result:
        rows.append(contract.row("supersede probes: newer source first", status="info",
                                 note=str(result["supersede_newer_first"])))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probes", type=Path, action="append", default=None,
                    help="A probes file (repeatable); default: the shared public probes and bench/probes/")
    ap.add_argument("--corpus-root", type=Path, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="Build workspaces here and keep them; an existing one is reused.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    result = run(args.probes, args.corpus_root, keep=args.keep)
    if args.json:
        contract.emit("retrieval", figure_rows(result), **result)
        return 0
    for row in result["samples"]:
        marks = " ".join(f"{s}={row[s] or '-'}" for s in ("wikimem", "bm25_or", "bm25_and"))
        extra = f" newer_first={row['newer_first']}" if "newer_first" in row else ""
        print(f"{row['id']:5} {row['kind']:9} {marks}{extra}  {row['question'][:70]}")
    print()
    for system in ("wikimem", "bm25_or", "bm25_and"):
        s = result[system]
        kinds = "  ".join(f"{k}: {v[f'recall@{K}']:.2f}/{v['mrr']:.2f}" for k, v in s["by_kind"].items())
        print(f"{system:9} recall@{K} {s[f'recall@{K}']:.3f}  MRR {s['mrr']:.3f}  ({s['probes']} probes; {kinds})")
    if "supersede_newer_first" in result:
        print(f"supersede probes where the newer source ranks first: {result['supersede_newer_first']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

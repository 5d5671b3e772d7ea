"""bench/navigation.py: the cost model on tiny hand-written wikis, and one run on the shared corpus."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import corpus

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "navigation.py"


def load_navigation():
    """bench/ is not a package: load the script by path (its dataclasses need it in sys.modules)."""
    key = "wikimem_bench_navigation"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, SCRIPT)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


nav = load_navigation()

RAW = "\n".join([
    "# Ports",
    "",
    "Some words about servers.",
    "We chose this port for two reasons: HTTP is not",
    "normally accepted on this port, and 7878 is _rust_ typed",
    "on a telephone.",
    "",
    "The end.",
]) + "\n"
EVIDENCE = "We chose this port for two reasons: HTTP is not\nnormally accepted on this port, and 7878 is _rust_ typed\non a telephone."


def workspace(tmp_path: Path, pages: dict[str, str]) -> Path:
    root = tmp_path / "ws"
    (root / "raw").mkdir(parents=True)
    (root / "raw" / "x.md").write_text(RAW, encoding="utf-8")
    for name, text in pages.items():
        path = root / "wiki" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def evidence(root: Path, text: str = EVIDENCE):
    lines = nav.locate(RAW, text)
    return nav.Evidence(raw=root / "raw" / "x.md", lines=lines, text=text)


def size(root: Path, name: str) -> int:
    return (root / "wiki" / name).stat().st_size


def test_locate_spans_the_evidence_lines_with_white_space_normalized() -> None:
    assert nav.locate(RAW, EVIDENCE) == (4, 6)
    assert nav.locate(RAW, "We chose  this port\tfor two") == (4, 4)
    # not there as a whole: the longest line is found instead
    assert nav.locate(RAW, "A wrapped intro\nnormally accepted on this port, and 7878 is _rust_ typed") == (5, 5)
    assert nav.locate(RAW, "nothing like it") is None


def test_cost_counts_index_and_every_page_on_the_path(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "index.md": "# Index\n\n[Sources](sources/index.md) · [Big](big.md)\n",
        "sources/index.md": "# Sources\n\n- [Ports](ports.md)\n- [Back](../index.md)\n",
        "sources/ports.md": "# Ports\n\nSee [the note](../../raw/x.md#L5).\n",
        "big.md": "# Big\n\n" + "filler " * 500 + "\n[Ports](sources/ports.md)\n",
    })
    wiki = nav.Wiki.read(root)
    assert wiki.pages["index.md"].links == {"sources/index.md", "big.md"}
    route = nav.cheapest(wiki, {"sources/ports.md"})
    assert route is not None
    assert route.path == ("index.md", "sources/index.md", "sources/ports.md")
    assert route.bytes == size(root, "index.md") + size(root, "sources/index.md") + size(root, "sources/ports.md")
    assert route.index_bytes == size(root, "index.md") + size(root, "sources/index.md")
    assert route.page == "sources/ports.md"
    # the index itself holding the evidence costs just the index
    assert nav.cheapest(wiki, {"index.md"}).bytes == size(root, "index.md")


def test_a_citation_inside_the_evidence_lines_holds_it(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "index.md": "[A](a.md) [B](b.md) [C](c.md)\n",
        "a.md": "Port facts ([x.md, line 5](../raw/x.md#L5)).\n",
        "b.md": "A range ([x.md, lines 2-4](../raw/x.md#L2-L4)).\n",
        "c.md": "Elsewhere ([x.md, line 8](../raw/x.md#L8)) and [no line](../raw/x.md).\n",
    })
    ev = evidence(root)
    assert ev.lines == (4, 6)
    assert nav.holders(nav.Wiki.read(root), ev) == {"a.md", "b.md"}


def test_a_quote_with_other_markup_holds_it(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "index.md": "[Q](q.md)\n",
        "q.md": '- "We chose **this** port for two reasons: `HTTP` is not normally accepted on this port, '
                'and 7878 is *rust* typed on a telephone."\n',
        "part.md": "> normally accepted on this port, and 7878 is rust typed on a telephone, they say\n",
    })
    wiki = nav.Wiki.read(root)
    # part.md quotes 12 consecutive words of a longer evidence: that is enough
    assert nav.holders(wiki, evidence(root)) == {"q.md", "part.md"}
    assert nav.holders(wiki, evidence(root, "# Ports")) == set()
    route = nav.cheapest(wiki, nav.holders(wiki, evidence(root)))
    assert route.page == "q.md" and route.index_bytes == size(root, "index.md")


def test_a_page_that_neither_cites_nor_quotes_does_not_hold_it(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "index.md": "[P](p.md)\n",
        "p.md": "The book's server listens on port 7878 ([x.md](../raw/x.md#L1)); see [elsewhere](../raw/y.md#L5).\n",
    })
    assert nav.holders(nav.Wiki.read(root), evidence(root)) == set()


def test_unreachable_evidence_gives_none(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "index.md": "# Index\n\n[A](a.md) and [the raw file](../raw/x.md#L8)\n",
        "a.md": "Nothing here. [Back](index.md) [Missing](missing.md)\n",
        "orphan.md": "Cited: ([x.md, line 5](../raw/x.md#L5)).\n",
    })
    wiki = nav.Wiki.read(root)
    held = nav.holders(wiki, evidence(root))
    assert held == {"orphan.md"}
    assert nav.cheapest(wiki, held) is None
    assert nav.cheapest(wiki, set()) is None


def test_grep_baseline_is_grep_output_plus_a_window(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"index.md": "# Index\n"})
    probe = nav.Probe(id="t", corpus="c", kind="hard", question="Which port does the server use?",
                      answer="7878", source="c/raw/x.md", evidence=EVIDENCE)
    assert nav.grep_word(probe) == "7878"
    grep_output = len("raw/x.md:5:normally accepted on this port, and 7878 is _rust_ typed\n")
    assert nav.grep_bytes(root, "7878", root / "raw" / "x.md", (4, 6)) == grep_output + len(RAW)


@pytest.mark.corpus
@pytest.mark.slow
def test_script_on_the_sphinx_corpus(tmp_path: Path) -> None:
    root = corpus("sphinx").parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run([sys.executable, str(SCRIPT), "--corpus-root", str(root), "--corpora", "sphinx", "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bench"] == "navigation"
    assert set(report["figures"]) == {"sphinx"}
    assert set(report["figures"]["sphinx"]) >= {
        "probes", "located", "on_wiki", "on_wiki_share", "reachable", "median_bytes", "within_20kb_share",
        "median_index_bytes", "median_grep_bytes", "nav_grep_ratio"}
    assert report["figures"]["sphinx"]["probes"] == len(report["samples"]) > 0
    for sample in report["samples"]:
        assert set(sample) >= {"id", "corpus", "kind", "located", "on_wiki", "bytes", "index_bytes",
                               "grep_bytes", "page"}
        assert sample["corpus"] == "sphinx"


def test_any_workspace_is_measured_with_a_probe_file_of_its_own(tmp_path: Path) -> None:
    """--wiki DIR --probes FILE: questions written for a set nobody tuned to, on its compiled wiki."""
    root = workspace(tmp_path, {
        "index.md": "# Index\n\n- [Catalog](sources/index.md)\n",
        "sources/index.md": "# Sources\n\n- [Ports](x.md)\n",
        "sources/x.md": f'# Ports\n\n- "{" ".join(EVIDENCE.split())}" ([line 4](../../raw/x.md#L4-L6))\n',
    })
    probes = tmp_path / "mine.jsonl"
    probes.write_text(json.dumps({"id": "mine-q01", "corpus": "mine", "kind": "hard",
                                  "question": "Why this port?", "answer": "7878",
                                  "source": "mine/raw/x.md", "evidence": EVIDENCE}) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), "--wiki", str(root), "--probes", str(probes), "--json"],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (sample,) = report["samples"]
    assert sample["id"] == "mine-q01" and sample["on_wiki"] and sample["page"] == "sources/x.md"
    figures = next(iter(report["figures"].values()))
    assert figures["largest_catalog"] == "sources/index.md"
    assert figures["largest_catalog_bytes"] == size(root, "sources/index.md")
    assert sample["bytes"] == sum(size(root, n) for n in ("index.md", "sources/index.md", "sources/x.md"))
    missing = subprocess.run([sys.executable, str(SCRIPT), "--wiki", str(root), "--probes", str(tmp_path / "none.jsonl")],
                             capture_output=True, text=True, cwd=tmp_path, check=False)
    assert missing.returncode == 1 and "no probe file" in missing.stderr

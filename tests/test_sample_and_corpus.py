"""The repository's sample workspace stays in sync, and the real corpora compile cleanly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO, corpus, snapshot
from linkcheck import broken_links
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.workspace import Workspace


def normalized(pages: dict[str, bytes]) -> dict[str, str]:
    """Pages without what legitimately differs between runs: log.md, dates, and which version
    wrote a page whose text a later version renders alike (it is left as it was: the digest on
    its `wikimem:` line is compared, the writer is not)."""
    out = {}
    for rel, data in pages.items():
        if rel == "log.md":
            continue
        text = data.decode("utf-8")
        lines = [line for line in text.split("\n") if not line.startswith("updated: ")]
        out[rel] = "\n".join("wikimem: " + line.rsplit(" ", 1)[-1] if line.startswith("wikimem: ") else line
                             for line in lines)
    return out


def test_committed_sample_wiki_is_what_compile_makes(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "sample")
    shutil.copytree(REPO / "raw", ws.raw)
    shutil.copy(REPO / "wikimem.toml", ws.root / "wikimem.toml")
    init_workspace(ws)
    (ws.wiki / "AGENTS.md").write_bytes((REPO / "wiki" / "AGENTS.md").read_bytes())
    compile_workspace(ws, load_settings(ws.root, environ={}))
    assert normalized(snapshot(ws.wiki)) == normalized(snapshot(REPO / "wiki")), (
        "wiki/ is out of date: run `wikimem compile --root .` and commit wiki/"
    )


def compile_corpus(name: str, root: Path) -> tuple[Workspace, object]:
    source = corpus(name)
    ws = Workspace.at(root)
    init_workspace(ws)
    shutil.rmtree(ws.raw)
    shutil.copytree(source, ws.raw)
    return ws, compile_workspace(ws, load_settings(ws.root, environ={}))


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["topics", "versions", "formats"])
@pytest.mark.slow
def test_real_corpus_compiles_cleanly(name: str, tmp_path: Path) -> None:
    ws, report = compile_corpus(name, tmp_path / "one")
    raw_files = [p for p in ws.raw.rglob("*") if p.is_file()]
    handled = set(report.compiled) | {p for p, _ in report.skipped}
    assert len(handled) == len(raw_files)
    assert report.failed == []
    for path in report.compiled:
        assert any(f"sources: [{path}]" in p.read_text() or f"- {path}\n" in p.read_text()
                   for p in (ws.wiki / "sources").glob("*.md")), path
    # only non-documents are skipped (licences without an extension, a .tsv table)
    for path, reason in report.skipped:
        assert "unsupported file type" in reason, (path, reason)
    assert broken_links(ws.wiki) == []
    index = (ws.wiki / "index.md").read_text()
    assert len(index.splitlines()) <= 200 and len(index.encode()) <= 25_000
    assert len(list((ws.wiki / "concepts").glob("*.md"))) >= 10
    first = snapshot(ws.wiki)
    assert compile_workspace(ws, load_settings(ws.root, environ={})).noop
    assert snapshot(ws.wiki) == first
    ws2, _ = compile_corpus(name, tmp_path / "two")
    assert normalized(snapshot(ws2.wiki)) == normalized(first)


@pytest.mark.corpus
@pytest.mark.slow
def test_the_corpora_compiled_together_lint_clean_of_errors_and_of_two_pages_for_one_thing(tmp_path: Path) -> None:
    """The three corpora in one workspace, as the bench compiles them. Lint found two errors in
    the compile's own pages (a PDF's "x.[](i)", quoted with its brackets escaped, read as a link),
    two concept pages for one thing ("HashMap<K, V>" also called "Maps", beside "Map"), six
    identical findings of a Go deprecation of `Title` in a chapter that writes `<title>`, and a
    contradiction between two "Listing" numbers. And the word "map", which the book's collection
    merged into "hash map", brought Go's release notes to the hash map page: it names the page
    "Map" there."""
    from wikimem.lint import run_lint
    from wikimem.pages import loads_page

    ws = Workspace.at(tmp_path / "all")
    init_workspace(ws)
    shutil.rmtree(ws.raw)
    for name in ("topics", "versions", "formats"):
        shutil.copytree(corpus(name), ws.raw / name)
    settings = load_settings(ws.root, environ={})
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, write=False)
    assert [f.message for f in report.findings if f.severity == "error"] == []
    assert [f.message for f in report.findings if f.rule == "duplicate" and "concept pages" in f.message] == []
    assert [f.message for f in report.findings if f.rule == "stale-note" and "Title" in f.message] == []
    assert [f.message for f in report.findings if "Listing" in f.message] == []
    hashmap = loads_page("concepts/hashmap.md", (ws.wiki / "concepts" / "hashmap.md").read_text(encoding="utf-8"))
    assert hashmap.meta["sources"] and all(s.startswith("raw/topics/") for s in hashmap.meta["sources"]), hashmap.meta

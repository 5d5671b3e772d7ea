"""One rule for which files in wiki/ are pages: index.md's catalogs, search and lint agree."""

from __future__ import annotations

import os

from conftest import write
from wikimem.compiler import compile_workspace
from wikimem.index_page import collect
from wikimem.lint.context import load_context
from wikimem.search.index import walk_files
from wikimem.wiki_tree import pages


def _odd_wiki(ws, settings, tmp_path):  # type: ignore[no-untyped-def]
    write(ws, "notes/alpha.md", "# Alpha\n\nAlpha is the first letter of the Greek alphabet.\n")
    compile_workspace(ws, settings)
    concepts = ws.wiki / "concepts"
    (concepts / "mine.md").write_text("# Mine\n\nA page a person wrote.\n", encoding="utf-8")
    (concepts / "deep").mkdir()
    (concepts / "deep" / "nested.md").write_text("# Nested\n\nDeeper down.\n", encoding="utf-8")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret title\n\nNot part of the wiki.\n", encoding="utf-8")
    (concepts / "out.md").symlink_to(outside)  # a way out of the workspace
    (concepts / "alias.md").symlink_to(concepts / "mine.md")  # an alias of a page
    (concepts / ".hidden").mkdir()
    (concepts / ".hidden" / "h.md").write_text("# Hidden\n", encoding="utf-8")
    (concepts / ".dot.md").write_text("# Dot\n", encoding="utf-8")
    (concepts / "~draft.md").write_text("# Draft\n", encoding="utf-8")
    (concepts / "linked-folder").symlink_to(tmp_path, target_is_directory=True)
    (concepts / "image.png").write_bytes(b"\x89PNG")


def test_index_search_and_lint_list_the_same_pages(ws, settings, tmp_path):
    _odd_wiki(ws, settings, tmp_path)
    walked = {rel for _e, rel in pages(str(ws.wiki / "concepts"), "concepts")}
    assert "concepts/mine.md" in walked and "concepts/deep/nested.md" in walked
    assert not walked & {"concepts/out.md", "concepts/alias.md", "concepts/.hidden/h.md", "concepts/.dot.md",
                         "concepts/~draft.md", "concepts/linked-folder/secret.md"}

    sections, _catalogs = collect(ws, None)
    in_index = {e.path for e in sections["concepts"]}
    searched = {p.removeprefix("wiki/") for p in walk_files(ws) if p.startswith("wiki/concepts/")}
    linted = {p for p in load_context(ws, settings).pages if p.startswith("concepts/") and p != "concepts/index.md"}
    assert in_index == searched == linted == walked


def test_a_link_out_of_the_wiki_never_reaches_index_md(ws, settings, tmp_path):
    _odd_wiki(ws, settings, tmp_path)
    compile_workspace(ws, settings, rebuild=True)
    text = "".join(p.read_text(encoding="utf-8") for p in ws.wiki.rglob("index*.md"))
    assert "Secret title" not in text and "out.md" not in text
    assert "mine.md" in text


def test_lint_resolves_a_link_to_an_alias_but_never_reads_a_link_out(ws, settings, tmp_path):
    _odd_wiki(ws, settings, tmp_path)
    ctx = load_context(ws, settings)
    assert "concepts/alias.md" in ctx.wiki_files  # a link to it is not broken
    assert "concepts/out.md" not in ctx.wiki_files and "concepts/image.png" in ctx.wiki_files
    assert os.path.islink(ws.wiki / "concepts" / "out.md")


def test_the_model_s_view_of_the_wiki_follows_the_same_rule(ws, settings, tmp_path):
    from wikimem.backends.memory import Overlay

    _odd_wiki(ws, settings, tmp_path)
    listed = set(Overlay(ws.wiki).files("concepts"))
    assert {"concepts/mine.md", "concepts/deep/nested.md", "concepts/image.png"} <= listed
    assert not listed & {"concepts/out.md", "concepts/alias.md", "concepts/.hidden/h.md", "concepts/.dot.md"}

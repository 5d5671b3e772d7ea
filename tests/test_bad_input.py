"""Bad input: each gets one clear line, nothing else breaks, raw/ is never modified."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import snapshot, write
from linkcheck import broken_links
from wikimem.cli import main
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.workspace import Workspace

GOOD = "# Good note\n\nThe canary release took 5% of traffic on 2026-03-01.\n"


def test_every_kind_of_bad_input_gets_one_line_and_the_rest_compiles(ws: Workspace, tmp_path: Path) -> None:
    write(ws, "good.md", GOOD)
    write(ws, "other good.md", "# Other\n\nA canary release again, 30 minutes long.\n")
    write(ws, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    write(ws, "binary.md", b"# looks like text\x00\x01\x02" + bytes(100))
    write(ws, "latin1.txt", "Caf\xe9 notes\n\nThe caf\xe9 opens at 7:00 on weekdays.\n".encode("latin-1"))
    write(ws, "empty.md", "")
    write(ws, "blank.md", "\n\n   \n")
    write(ws, "bad-yaml.md", "---\ntitle: [unclosed\n---\n# Bad yaml\n\nThe body still counts: 42 items.\n")
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\n# Bomb\n\nStill a note with 1 fact.\n"
    write(ws, "bomb.md", bomb)
    write(ws, "ünïcödé name with spaces.md", "# Ünïcödé\n\nNon-ASCII names work: 3 of them.\n")
    write(ws, "huge.txt", "x" * 2_100_000)
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nNever read through a symlink.\n")
    os.symlink(outside, ws.raw / "link-out.md")
    before = snapshot(ws.raw)

    settings = load_settings(ws.root, {"max_source_mb": 2}, environ={})
    report = compile_workspace(ws, settings)

    skipped = dict(report.skipped)
    # images are kept out by the default ignore rules: counted, never listed as skipped
    assert "raw/image.png" not in skipped and report.ignored["by_rule"] == {"default: *.png": 1}
    assert "binary" in skipped["raw/binary.md"]
    assert "empty" in skipped["raw/empty.md"] and "empty" in skipped["raw/blank.md"]
    assert "too large" in skipped["raw/huge.txt"] and "max_source_mb" in skipped["raw/huge.txt"]
    assert "outside raw/" in skipped["raw/link-out.md"]
    for reason in skipped.values():
        assert "\n" not in reason and len(reason) < 200
    assert report.failed == []
    compiled = set(report.compiled)
    assert {"raw/good.md", "raw/latin1.txt", "raw/bad-yaml.md", "raw/bomb.md",
            "raw/ünïcödé name with spaces.md"} <= compiled
    assert "Windows-1252" in (ws.wiki / "sources/latin1.md").read_text()
    assert "malformed YAML" in (ws.wiki / "sources/bad-yaml.md").read_text()
    assert "aliases" in (ws.wiki / "sources/bomb.md").read_text()
    assert "Never read" not in "".join(p.read_text() for p in ws.wiki.rglob("*.md"))
    log = (ws.wiki / "log.md").read_text()
    assert "skip | raw/huge.txt" in log and "skip | raw/link-out.md" in log
    assert snapshot(ws.raw) == before  # raw/ never modified
    assert broken_links(ws.wiki) == []
    # skipped files are reported once, not on every run
    again = compile_workspace(ws, settings)
    assert again.noop and again.skipped == []


def test_a_crash_mid_write_leaves_no_temp_files_or_torn_pages(ws: Workspace) -> None:
    write(ws, "good.md", GOOD)
    settings = load_settings(ws.root, environ={})
    compile_workspace(ws, settings)
    # what a killed writer leaves: a temp file next to the page it was replacing
    (ws.wiki / "sources" / ".wikimem-abc123.tmp").write_text("half a pa")
    write(ws, "good.md", GOOD + "\nOne more line with 7 facts.\n")
    compile_workspace(ws, settings)
    assert not list(ws.wiki.rglob(".wikimem-*.tmp"))
    assert "7 facts" in (ws.wiki / "sources/good.md").read_text()


def test_cli_reports_skips_on_stderr_and_json_on_stdout(ws: Workspace) -> None:
    write(ws, "good.md", GOOD)
    write(ws, "blob.bin", b"\x00\x01")
    result = CliRunner().invoke(main, ["compile", "--root", str(ws.root)])
    assert result.exit_code == 0
    assert "skipped  raw/blob.bin: unsupported file type .bin" in result.stderr
    assert result.stdout == ""


def test_file_names_in_invalid_utf8_are_refused_with_a_line_not_a_crash(ws: Workspace) -> None:
    """Python keeps undecodable bytes of a name as surrogates, which no page, log, JSON or SQLite
    can hold: compile refuses the raw file, lint names the page, search and the index leave both out."""
    from wikimem import search
    from wikimem.lint import run_lint

    write(ws, "good.md", GOOD)
    bad_raw = os.path.join(os.fsencode(ws.raw), b"r\xe9sum\xe9.md")
    with open(bad_raw, "wb") as handle:
        handle.write(b"# Resume\n\nWritten in 2019, about 3 jobs.\n")
    settings = load_settings(ws.root, environ={})
    report = compile_workspace(ws, settings)
    assert list(report.skipped) == [(r"raw/r\xe9sum\xe9.md", "file name is not valid UTF-8; rename it")]
    bad_page = os.path.join(os.fsencode(ws.wiki / "concepts"), b"caf\xe9.md")
    with open(bad_page, "wb") as handle:
        handle.write(b"---\ntitle: Cafe\nkind: concept\nsources: []\n---\n# Cafe\n\nSee [it](../sources/good.md).\n")
    write(ws, "second.md", "# Second\n\nAnother note, 2 lines long.\n")
    compile_workspace(ws, settings)  # index.md is rebuilt with the bad page in wiki/
    assert "caf" not in (ws.wiki / "index.md").read_text(encoding="utf-8")
    lint = run_lint(ws, settings)
    assert lint.notes == [r"wiki/concepts/caf\xe9.md not checked: its file name is not valid UTF-8; rename it"]
    assert lint.failed_rules == []
    hits = search.engine(ws).passages("note", limit=10)
    assert hits and all(h.hit.path.isascii() for h in hits)
    assert os.path.exists(bad_raw) and os.path.exists(bad_page)  # refused, never touched


@pytest.mark.slow
def test_pathological_lines_compile_in_one_pass(ws: Workspace) -> None:
    """A source may hold a line no person writes (a long run of brackets, a broken tag repeated,
    blank lines by the thousand): the loaders, the analysis and lint read it in one pass. Each
    of these 200 KB sources took minutes when a pattern backtracked over the line from every
    bracket. No time is asserted: were a pattern quadratic again, this test would hang."""
    from wikimem.lint.corpus import compute as lint_record

    units = {"brackets": "[", "escaped": "\\[", "links": "([a](", "targets": "[a](", "angle": "](<",
             "tags": "<a ", "cells": "|    ", "blank": "\n", "spaces": " ", "heading": "# " + " " * 8,
             "roles": ":a:`", "references": "`a`_ ", "substitutions": "|a| ",
             "admonitions": "!!! note\n    ", "tabs": '=== "a"\n    ', "blocks": "/// tip\n"}
    for name, unit in units.items():
        body = unit * (200_000 // len(unit))
        for ext in (".md", ".html", ".txt", ".rst"):
            write(ws, f"{name}{ext}", f"# {name.title()} notes\n\nA short note with 2 facts, written in 2026.\n\n{body}\n\nThe end, 3 lines on.\n")
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert list(report.skipped) == []
    pages = [p for p in (ws.wiki / "sources").glob("*.md") if not p.name.startswith("index")]
    assert len(pages) == len(units) * 4
    record = lint_record("raw/brackets.md", str(ws.raw / "brackets.md"), "x", 0, 10**8)
    assert record.skipped is None and "short note" in record.words


def test_html_that_opens_with_comments_is_told_from_a_template_in_one_pass(ws: Workspace) -> None:
    """Whether an HTML file is a page template looks past the comments it opens with: 200 KB of
    comments once took that look minutes (a pattern backtracking from every comment)."""
    write(ws, "comments.html", "<!-- a -->" * 20_000 + "\n<p>A short note with 2 facts, written in 2026.</p>\n")
    write(ws, "unclosed.html", "<!--" * 50_000 + "\n<p>A short note with 2 facts, written in 2026.</p>\n")
    write(ws, "partial.html", "<!-- a -->" * 20_000 + "\n{% block body %}{% endblock %}\n")
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert [p for p, _ in report.skipped] == ["raw/partial.html"]


@pytest.mark.slow
def test_rest_nested_thousands_of_levels_deep_is_read_as_text_in_bounded_memory(ws: Workspace) -> None:
    """A 9 MB reST file of 3,000 nested lists: before, docutils held a copy of the lines below
    each level (2.7 GB). Now a text nested past MAX_NESTING levels is read as plain text, said
    in one line, in memory a few times the file's size."""
    import tracemalloc

    from wikimem.sources import load_source
    from wikimem.sources.rst import MAX_NESTING

    body = "".join(f"{'  ' * i}- item {i} of the list\n\n" for i in range(3_000))
    path = write(ws, "deep.rst", "Deep lists\n==========\n\n" + body)
    assert path.stat().st_size > 9_000_000
    tracemalloc.start()
    try:
        doc = load_source(path, "raw/deep.rst", max_bytes=50_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * path.stat().st_size
    said = [w for w in doc.warnings if "nested" in w]
    assert len(said) == 1 and f"more than {MAX_NESTING}" in said[0] and "plain text" in said[0]
    assert "item 2999 of the list" in " ".join(b.text for b in doc.blocks)
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.compiled == ["raw/deep.rst"] and report.failed == []


def test_rest_nesting_is_measured_by_its_indents() -> None:
    from wikimem.sources.rst import nesting, parse_rst

    assert nesting("a\n  b\n    c\n  d\ne\n") == 2
    assert nesting("- a\n\n  - b\n\n    - c\n\n      text\n") == 3
    normal = "Title\n=====\n\n- one\n\n  - two\n\n    - three\n\n.. note::\n\n   A note.\n"
    assert [b.text for b in parse_rst(normal).blocks if "three" in b.text]

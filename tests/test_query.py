"""Offline `wikimem query` and context packs: passages with citations, --save files an answer page."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from conftest import write
from wikimem.cli import main
from wikimem.compiler import compile_workspace
from wikimem.context import build_context
from wikimem.errors import UsageError
from wikimem.log_page import read_entries
from wikimem.pages import loads_page
from wikimem.query import Answer, answer


@pytest.fixture
def compiled(ws, settings):
    write(ws, "port.md", "# Web server\n\nThe server listens on TCP port 7878.\n\nIt serves one file.\n")
    write(ws, "tea.md", "# Tea\n\nGreen tea is brewed at 80 degrees for two minutes.\n\nBlack tea takes boiling water.\n")
    compile_workspace(ws, settings)
    return ws


def test_answer_cites_lines(compiled, settings):
    result = answer(compiled, settings, "Which TCP port does the server listen on?")
    assert isinstance(result, Answer) and result.backend == "offline" and result.saved is None
    assert result.passages and "7878" in result.passages[0].quote
    assert "raw/port.md" in result.sources
    raw = next(c for c in result.passages if c.path == "raw/port.md")
    assert raw.line == 3 and raw.target == "raw/port.md#L3"
    assert "(raw/port.md#L3)" in result.text
    assert list((compiled.wiki / "answers").glob("*.md")) == []


def test_save_files_an_answer_page_logs_and_indexes(compiled, settings):
    result = answer(compiled, settings, "Which TCP port does the server listen on?", save=True)
    assert result.saved == "wiki/answers/which-tcp-port-does-the-server-listen-on.md"
    text = (compiled.root / result.saved).read_text(encoding="utf-8")
    page = loads_page(result.saved, text)
    assert page.kind == "answer" and page.sources == ["raw/port.md"]
    assert page.title == "Which TCP port does the server listen on?"
    # links inside the page are relative to it, so they work in any editor
    assert "](../../raw/port.md#L3)" in text
    assert "answers/which-tcp-port-does-the-server-listen-on.md" in (compiled.wiki / "index.md").read_text()
    last = read_entries(compiled.wiki / "log.md")[-1]
    assert last[1] == "query" and last[2] == "Which TCP port does the server listen on?"
    # the same question again updates its page instead of making a second one
    answer(compiled, settings, "Which TCP port does the server listen on?", save=True)
    assert len(list((compiled.wiki / "answers").glob("*.md"))) == 1
    # raw/ is never touched
    assert sorted(p.name for p in compiled.raw.iterdir()) == ["port.md", "tea.md"]


def test_no_match_and_empty_question(compiled, settings):
    result = answer(compiled, settings, "xylophone quasar")
    assert result.passages == () and "Nothing in the wiki" in result.text
    with pytest.raises(UsageError):
        answer(compiled, settings, "   ")


def test_cli_query_json_and_save(compiled):
    runner = CliRunner()
    res = runner.invoke(main, ["query", "green", "tea", "temperature", "--root", str(compiled.root), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ok"] and data["passages"][0]["citation"].startswith(("raw/tea.md", "wiki/sources/tea.md"))
    res = runner.invoke(main, ["query", "green tea temperature", "--root", str(compiled.root), "--save"])
    assert res.exit_code == 0 and "80 degrees" in res.stdout
    assert "saved wiki/answers/green-tea-temperature.md" in res.stderr


def test_context_pack_within_budget_with_freshness(compiled):
    pack = build_context(compiled, "green tea temperature", budget=400)
    assert pack.tokens <= 400
    assert pack.items and pack.items[0].path in ("wiki/sources/tea.md", "raw/tea.md")
    text = pack.render()
    assert "80 degrees" in text and "updated" in text
    assert "Tea" in pack.index_excerpt
    # a source that changed since the compile makes its page stale
    (compiled.raw / "tea.md").write_text("# Tea\n\nGreen tea is brewed at 75 degrees.\n", encoding="utf-8")
    stale = {i.path: i.stale for i in build_context(compiled, "green tea temperature", budget=2000).items}
    assert stale.get("wiki/sources/tea.md") is True


def test_context_budget_is_respected_when_pages_do_not_fit(compiled):
    pack = build_context(compiled, "tea", budget=200)
    assert pack.tokens <= 200
    with pytest.raises(UsageError):
        build_context(compiled, "tea", budget=10)


def test_cli_context_json(compiled):
    res = CliRunner().invoke(main, ["context", "server port", "--budget", "1500", "--root", str(compiled.root),
                                    "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["tokens"] <= 1500 and data["items"][0]["path"] and "updated" in data["items"][0]


def test_context_prints_passages_first_and_nothing_off_the_question(ws, settings):
    from wikimem.context import estimate_tokens

    write(ws, "toolchain.md", "# Toolchain\n\nBuilding from source needs Go 1.22 to bootstrap the toolchain.\n")
    write(ws, "translations.md", "# Translations\n\n" + "The book is translated by volunteers. " * 200 + "\n")
    for n in range(5):
        write(ws, f"misc-{n}.md", f"# Misc {n}\n\nA note about gardening and compost number {n}.\n")
    compile_workspace(ws, settings)
    pack = build_context(ws, "which Go version is needed to bootstrap", budget=600)
    text = pack.render()
    assert estimate_tokens(text) == pack.tokens <= 600  # the budget counts what is printed
    assert not pack.items[0].whole and pack.items[0].target.startswith(("raw/toolchain.md#L", "wiki/sources/toolchain"))
    assert text.index("Go 1.22") < text.index("## Where index.md points") if "## Where" in text else "Go 1.22" in text
    assert "volunteers" not in text and "compost" not in text  # nothing that does not bear on it
    # passages come before whole pages
    kinds = [i.whole for i in pack.items]
    assert kinds == sorted(kinds)


HOSTILE_ANSWER = ("The port is 7878 <script>alert(1)</script>.\r~~~\r~~~\r<img src=x onerror=alert(2)>\n\n"
                  "[click](javascript:alert(3)) [file](file:///etc/passwd) ![d](data:text/html,<b>x</b>)\u2028"
                  "<iframe src=//evil>")


def test_a_saved_answer_passes_the_guard_every_page_does(compiled, settings):
    """issue 38: before, `query --save` wrote a model answer's HTML and a source's javascript:,
    file: and data: links into wiki/answers/ as they came (answers never passed the guard)."""
    from test_inert import active_anywhere
    from wikimem.query import save_answer

    write(compiled, "evil.md", "# Evil\n\nThe port is 7878 <script>alert(4)</script> and "
                                "[docs](javascript:alert(5)) say so.\n")
    compile_workspace(compiled, settings)
    offline = answer(compiled, settings, "Which TCP port does the server listen on?", save=True)
    prose = replace(offline, question="What does the model say about the port?", text=HOSTILE_ANSWER,
                    backend="anthropic", saved=None)
    model = save_answer(compiled, settings, prose)
    for saved in (offline.saved, model.saved):
        text = (compiled.root / saved).read_text(encoding="utf-8")
        assert active_anywhere(text) == [], saved
        assert "\r" not in text and "\u2028" not in text
    assert "7878" in (compiled.root / model.saved).read_text(encoding="utf-8")


def test_the_same_question_saved_again_keeps_what_a_person_added(compiled, settings):
    """issue 38: before, the second save replaced the page, and a person's addition was gone
    (nothing in .wikimem/proposed/). Now the person's page is kept and wikimem's new answer is
    proposed beside it; a page nobody edited is still replaced."""
    question = "Which TCP port does the server listen on?"
    first = answer(compiled, settings, question, save=True)
    page = compiled.root / first.saved
    again = answer(compiled, settings, question, save=True)
    assert again.saved == first.saved and again.kept is None  # wikimem's own page: replaced
    page.write_text(page.read_text(encoding="utf-8") + "\nMy note: the firewall opens 7878 too.\n", encoding="utf-8")
    write(compiled, "port.md", "# Web server\n\nThe server listens on TCP port 8080 now.\n\nIt serves one file.\n")
    compile_workspace(compiled, settings)
    third = answer(compiled, settings, question, save=True)
    assert third.kept == first.saved
    assert "My note: the firewall" in page.read_text(encoding="utf-8")
    proposed = compiled.root / third.saved
    assert third.saved == ".wikimem/proposed/answers/which-tcp-port-does-the-server-listen-on.md"
    assert "8080" in proposed.read_text(encoding="utf-8")
    last = read_entries(compiled.wiki / "log.md")[-1]
    assert last[1] == "query" and any("kept" in line for line in last[3])
    res = CliRunner().invoke(main, ["query", question, "--save", "--root", str(compiled.root)])
    assert res.exit_code == 0 and "kept wiki/answers/" in res.stderr

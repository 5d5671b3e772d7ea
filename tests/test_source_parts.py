"""A long reference document's page is split into part pages that live and die with it.

A source page whose outline is larger than OUTLINE_BYTES lists the document's sections, and a
section with a long outline of its own links a part page (sources/<page stem>/<section>.md)
holding it. Part pages are the source's pages: written, updated, removed and renamed with it,
kept when a person edited them, not listed in index.md, reachable without broken links.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import corpus, git, snapshot, write
from wikimem import history
from wikimem.backends.offline_pages import OUTLINE_BYTES, PAGE_BYTES, PART_BYTES
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.lint import run_lint
from wikimem.pages import loads_page
from wikimem.state import State
from wikimem.workspace import Workspace

PAGE = "sources/reference.md"
PARTS = "sources/reference"


def reference(groups: int = 4, per: int = 20, title: str = "Widget settings reference") -> str:
    """A settings reference: groups of components, each a list of settings with a default."""
    lines = [f"# {title}", "", "Widget reads its settings from `widget.toml` at start-up.", ""]
    for g in range(groups):
        lines += [f"## Component group {g}", "", f"The settings of component group {g}.", ""]
        for c in range(3):
            lines += [f"### [group{g} component{c}]", "", f"Settings of component {c} in group {g}.", ""]
            for s in range(per):
                name = f"g{g}_c{c}_setting_number_{s}"
                lines += [f"#### {name}", "", f"Controls behaviour {s} of component {c}.", "",
                          f"Default: {s * 10 + g}.", ""]
    lines += ["## Questions", "", "Ask on the mailing list.", ""]
    return "\n".join(lines)


def compile_(ws: Workspace, **kwargs):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}), **kwargs)


def parts(ws: Workspace, folder: str = PARTS) -> list[str]:
    base = ws.wiki / folder
    return sorted(f"{folder}/{p.name}" for p in base.glob("*.md")) if base.is_dir() else []


def line_links(text: str) -> list[int]:
    """The lines an outline links (a setting's line is the one stating its default)."""
    outline = text.split("## Outline", 1)[1].split("\n## ", 1)[0]
    return [int(n) for n in re.findall(r"\]\([^)]*#L(\d+)\)", outline)]


def headings(text: str) -> list[int]:
    return [n for n, line in enumerate(text.split("\n"), 1) if line.startswith("#")]


def test_a_long_reference_gets_part_pages_and_every_section_stays_linked(ws: Workspace) -> None:
    source = reference()
    write(ws, "reference.md", source)
    report = compile_(ws)
    page = (ws.wiki / PAGE).read_text(encoding="utf-8")
    found = parts(ws)
    assert len(found) == 12  # one per component: each component's settings, and their key facts, fit one part
    assert set(found) <= set(report.created)
    # the page stays small; its outline links every part, and the parts link back
    assert len(page.encode()) < 2 * OUTLINE_BYTES
    for rel in found:
        assert f"]({rel.removeprefix('sources/')})" in page
        part = loads_page(rel, (ws.wiki / rel).read_text(encoding="utf-8"))
        assert part.kind == "source" and part.meta["part_of"] == PAGE
        assert part.sources == ["raw/reference.md"] and part.meta["source_sha256"]
        assert part.title.startswith("Widget settings reference: [group")
        assert "](../reference.md)" in part.body
    # every heading of the document is a line link on the page or on one of its parts
    linked = line_links(page) + [n for rel in found for n in line_links((ws.wiki / rel).read_text(encoding="utf-8"))]
    assert len(linked) == len(set(linked)) == len(headings(source))
    sections = headings(source)
    assert all(any(a <= n < b for n in linked) for a, b in zip(sections, [*sections[1:], 10**9], strict=True))
    # a part's defaults are on its lines
    general = (ws.wiki / f"{PARTS}/group1-component2.md").read_text(encoding="utf-8")
    assert re.search(r"\[g1_c2_setting_number_3\]\([^)]*#L\d+\) = 31", general)
    # and its sections' key sentences under it, each cited: what each setting is
    first = f"{PARTS}/group0-component0.md"
    text = (ws.wiki / first).read_text(encoding="utf-8")
    assert "## Key facts" in text
    assert re.search(r'\*g0_c0_setting_number_5\*: "Controls behaviour 5 of component 0\." \(\[line \d+\]\(\.\./\.\./\.\./raw/reference\.md#L\d+\)\)',
                     text), text
    assert "Controls behaviour 5 of component 0." not in page

    # the map lists the document once; the log says what the compile created
    index = (ws.wiki / "index.md").read_text(encoding="utf-8")
    assert "sources/reference.md" in index and "sources/reference/" not in index
    assert f"{PARTS}/group0-component0.md" in (ws.wiki / "log.md").read_text(encoding="utf-8")
    # lint: no orphan, no broken link, nothing missing from the index
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("orphan", "broken-link", "missing-from-index", "frontmatter")], findings
    # search finds a setting on its part page
    from wikimem import search

    hits = search.search(ws, "g2_c1_setting_number_7", limit=5, kinds=("source",))
    assert f"wiki/{PARTS}/group2-component1.md" in [h.path for h in hits]
    # a no-op compile writes nothing
    before = snapshot(ws.wiki)
    assert compile_(ws).noop
    assert snapshot(ws.wiki) == before


def test_a_long_flat_list_of_sections_is_paged_in_runs(ws: Workspace) -> None:
    # a changelog: 150 releases, no subsections; listed whole it is a 9 KB outline
    source = "\n".join(["# Changelog", ""] + [
        line for n in range(150, 0, -1) for line in (f"## Version 2.{n}", "", f"Fixed issue {n * 7} in the parser.", "")])
    write(ws, "changes.md", source)
    compile_(ws)
    page = (ws.wiki / "sources/changes.md").read_text(encoding="utf-8")
    found = parts(ws, "sources/changes")
    assert len(found) >= 2 and len(page.encode()) < 2 * OUTLINE_BYTES
    first = loads_page(found[0], (ws.wiki / found[0]).read_text(encoding="utf-8"))
    assert re.fullmatch(r"Changelog: Version 2\.\d+ – Version 2\.\d+", first.title)
    for rel in found:
        assert len((ws.wiki / rel).read_bytes()) < 1.5 * OUTLINE_BYTES
        assert f"]({rel.removeprefix('sources/')})" in page
    linked = line_links(page) + [n for rel in found for n in line_links((ws.wiki / rel).read_text(encoding="utf-8"))]
    assert sorted(linked) == headings(source)
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("orphan", "broken-link", "missing-from-index")], findings


def test_a_section_of_many_settings_and_no_subsections_is_paged_along_its_settings(ws: Workspace) -> None:
    # pytest's "Configuration Options" is one section of eighty `.. confval::` entries: as one
    # part page it was 24 KB, read whole to reach any one setting
    settings = "".join(
        f".. confval:: option_number_{n}\n\n   Sets how the widget handles case {n} when it meets one, "
        f"as the widget's own manual describes it at length.\n\n   Default: ``{n}``.\n\n" for n in range(60))
    source = ("Reference\n=========\n\nThe widget's reference.\n\nConfiguration options\n---------------------\n\n"
              + settings + "Questions\n---------\n\nAsk on the mailing list.\n")
    write(ws, "ref.rst", source)
    compile_(ws)
    found = parts(ws, "sources/ref")
    assert len(found) >= 3, found
    for rel in found:
        assert len((ws.wiki / rel).read_bytes()) < 3 * PAGE_BYTES // 2, rel
    shown = "".join((ws.wiki / rel).read_text(encoding="utf-8") for rel in found)
    for n in range(60):  # every setting says what it does, on the part that lists it
        assert f"case {n} when it meets one" in shown
    first = loads_page(found[0], (ws.wiki / found[0]).read_text(encoding="utf-8"))
    # a run's title names the section it is a run of, then its ends
    assert re.fullmatch(r"Reference: Configuration options: option_number_\d+ – option_number_\d+", first.title), first.title
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("orphan", "broken-link", "missing-from-index")], findings


def changelog(releases: int = 40) -> str:
    """A release series, newest first, each release with sections of its own."""
    lines = ["# Changelog", ""]
    for n in range(releases, 0, -1):
        lines += [f"## Version 3.{n} (2026-{1 + n % 12:02d}-{1 + n % 27:02d})", ""]
        for kind in ("Added", "Fixed", "Changed"):
            lines += [f"### {kind}", ""] + [f"- {kind} thing {n * 10 + k} in the widget parser, see issue "
                                            f"{n * 100 + k} for the whole story." for k in range(6)] + [""]
    return "\n".join(lines)


def test_a_changelogs_page_links_its_newest_release_beside_its_date(ws: Workspace) -> None:
    # a release series with sections of its own: the newest release's notes sit a part inside a
    # part; the page's date line links them, so the newest release is one step from the page
    write(ws, "changes.md", changelog())
    compile_(ws)
    page = (ws.wiki / "sources/changes.md").read_text(encoding="utf-8")
    assert parts(ws, "sources/changes")
    newest = re.search(r"^Source: .*, on this wiki: \[([^\]]+)\]\(([^)]+)\)$", page, re.MULTILINE)
    assert newest, page[:1500]
    assert newest.group(1).startswith("Version 3.40")
    part = (ws.wiki / "sources" / newest.group(2)).read_text(encoding="utf-8")
    assert "thing 400 in the widget parser" in part and "thing 390 " not in part


def test_the_newest_releases_parts_are_linked_from_the_changelogs_page(ws: Workspace) -> None:
    # releases with part pages of their own inside a run of releases: the run's page is only
    # links, so its first release parts are listed on the source page under the run's line
    write(ws, "changes.md", changelog())
    compile_(ws)
    page = (ws.wiki / "sources/changes.md").read_text(encoding="utf-8")
    outline = page.split("## Outline", 1)[1].split("\n## ", 1)[0]
    runs = re.findall(r"^\s*- \[[^\]]+ – [^\]]+\]\((changes/[^)]+)\): \d+ sections$", outline, re.MULTILINE)
    assert runs, outline
    listed = re.findall(r"^\s+- \[(Version 3\.\d+)[^\]]*\]\((changes/[^)]+)\): 3 sections$", outline, re.MULTILINE)
    assert listed and listed[0][0] == "Version 3.40", outline
    run_page = (ws.wiki / "sources" / runs[0]).read_text(encoding="utf-8")
    for _, link in listed:
        assert f"({link.split('/', 1)[1]})" in run_page  # the run's page links them too
        assert (ws.wiki / "sources" / link).is_file()
    assert len(outline.encode()) < 4_000


def test_a_rst_changelog_dated_under_its_headings_links_its_newest_release(ws: Workspace) -> None:
    # "Version 3.40\n------------\n\nReleased 2026-...": the date three lines under the heading
    lines = []
    for n in range(40, 0, -1):
        lines += [f"Version 3.{n}", "-" * 12, "", f"Released 2026-{1 + n % 12:02d}-{1 + n % 27:02d}", ""]
        for kind in ("Added", "Fixed"):
            lines += [f"-   {kind} thing {n * 10 + k} in the widget parser, see issue {n * 100 + k} for the whole "
                      "story of it." for k in range(6)] + [""]
    write(ws, "CHANGES.rst", "\n".join(lines))
    compile_(ws)
    page = (ws.wiki / "sources/changes.md").read_text(encoding="utf-8")
    newest = re.search(r"^Source: .*, on this wiki: \[([^\]]+)\]\(([^)]+)\)$", page, re.MULTILINE)
    assert newest, page[:1500]
    assert newest.group(1).startswith("Version 3.40")


def test_an_undated_changelog_links_its_newest_release_from_its_page_and_from_the_map(ws: Workspace) -> None:
    # releases titled with a version and no date, oldest in the middle of the file's order (a
    # "Next release" heading first, then newest first): the highest version is the newest
    releases = ["## Next release", "", "Nothing yet.", ""]
    for n in [*range(30, 0, -1)]:
        releases += [f"## Gadget 2.{n}", ""]
        for kind in ("Features", "Fixes"):
            releases += [f"### {kind}", ""] + [f"- {kind} item {n * 10 + k}: the scheduler now handles case "
                                               f"{n * 100 + k} without a restart." for k in range(6)] + [""]
    write(ws, "CHANGES.md", "\n".join(["# Gadget release notes", "", *releases]))
    write(ws, "guide.md", "# Guide\n\nGadget schedules jobs.\n")
    compile_(ws)
    page = (ws.wiki / "sources/changes.md").read_text(encoding="utf-8")
    newest = re.search(r"^Source: .* · newest release: \[([^\]]+)\]\(([^)]+)\)$", page, re.MULTILINE)
    assert newest, page[:1500]
    assert newest.group(1).startswith("Gadget 2.30"), newest.group(1)
    part = (ws.wiki / "sources" / newest.group(2)).read_text(encoding="utf-8")
    assert "item 300:" in part and "item 290:" not in part
    # index.md links that part beside the changelog: one step from the map
    index = (ws.wiki / "index.md").read_text(encoding="utf-8")
    assert f"(newest: [{newest.group(1)}](sources/{newest.group(2)}))" in index, index


def test_a_section_too_large_for_one_part_is_cut_into_parts_of_about_equal_size(ws: Workspace) -> None:
    # each component of group 0 says a little more than a part holds: two parts of fifteen
    # settings, not one of twenty-seven and a remnant of three, and not its thirty settings
    # listed on the source page itself
    write(ws, "reference.md", reference(groups=4, per=30))
    compile_(ws)
    page = (ws.wiki / PAGE).read_text(encoding="utf-8")
    found = parts(ws)
    halves = [f"{PARTS}/g0-c{c}-setting-number-{a}-g0-c{c}-setting-number-{b}.md"
              for c in range(3) for a, b in ((0, 14), (15, 29))]
    assert set(halves) <= set(found), found
    sizes = {rel: len((ws.wiki / rel).read_bytes()) for rel in found}
    assert max(sizes.values()) < 1.5 * PART_BYTES and min(sizes[h] for h in halves) > PART_BYTES // 2, sizes
    assert "g0_c0_setting_number_3" not in page and len(page.encode()) < OUTLINE_BYTES
    assert all(f"]({rel.removeprefix('sources/')})" in page for rel in halves)


def test_a_run_of_sections_is_titled_as_its_headings_read(ws: Workspace) -> None:
    # a run's title is its headings' text, escaped once where it is shown, as a section's is
    write(ws, "reference.md", reference(groups=4, per=30))
    compile_(ws)
    for rel in parts(ws):
        part = loads_page(rel, (ws.wiki / rel).read_text(encoding="utf-8"))
        assert re.fullmatch(r"Widget settings reference: \[group\d component\d\]"
                            r"(: g\d_c\d_setting_number_\d+ – g\d_c\d_setting_number_\d+)?", part.title), part.title
        assert "\\\\" not in part.body.split("\n## ", 1)[0], part.body[:600]


def test_a_table_sits_on_the_part_that_holds_its_section(ws: Workspace) -> None:
    source = reference(groups=4, per=30)
    table = "\n".join(["| Alias | Setting |", "|---|---|", *(f"| alias{k} | g3_c2_setting_number_{k} |" for k in range(4)), ""])
    source = source.replace("### [group3 component2]\n", "### [group3 component2]\n\n" + table + "\n", 1)
    write(ws, "reference.md", source)
    compile_(ws)
    page = (ws.wiki / PAGE).read_text(encoding="utf-8")
    assert "alias2" not in page and "## Tables" not in page
    holding = [rel for rel in parts(ws) if "alias2" in (ws.wiki / rel).read_text(encoding="utf-8")]
    assert len(holding) == 1 and "component2" in holding[0], holding
    text = (ws.wiki / holding[0]).read_text(encoding="utf-8")
    assert "## Tables" in text and "| alias2 | g3_c2_setting_number_2 |" in text
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("orphan", "broken-link")], findings


def test_a_short_document_has_no_parts(ws: Workspace) -> None:
    write(ws, "reference.md", reference(groups=1, per=2))
    compile_(ws)
    assert parts(ws) == []
    assert "sources/reference/" not in (ws.wiki / PAGE).read_text(encoding="utf-8")


def test_parts_follow_their_source_when_it_shrinks_grows_moves_and_goes(ws: Workspace) -> None:
    write(ws, "reference.md", reference())
    compile_(ws)
    assert len(parts(ws)) == 12
    # fewer groups: the parts of the groups that went are removed, the others stay
    write(ws, "reference.md", reference(groups=2))
    report = compile_(ws)
    assert len(parts(ws)) == 6
    assert f"{PARTS}/group3-component0.md" in report.removed
    assert f"{PARTS}/group3-component0.md" not in State(ws.state_db).pages()
    # short enough for one page: no part is left
    write(ws, "reference.md", reference(groups=1, per=2))
    compile_(ws)
    assert parts(ws) == []
    assert not any(k == "part" for _, k, _ in State(ws.state_db).pages().values())
    # long again, then renamed: the parts move with the page
    write(ws, "reference.md", reference())
    compile_(ws)
    (ws.raw / "reference.md").rename(ws.raw / "settings.md")
    report = compile_(ws)
    assert report.renamed == [("raw/reference.md", "raw/settings.md")]
    assert parts(ws) == [] and len(parts(ws, "sources/settings")) == 12
    assert "](../settings.md)" in (ws.wiki / "sources/settings/group0-component0.md").read_text(encoding="utf-8")
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("orphan", "broken-link", "missing-from-index")], findings
    # deleted: every part goes with the page
    (ws.raw / "settings.md").unlink()
    report = compile_(ws)
    assert parts(ws, "sources/settings") == [] and not (ws.wiki / "sources/settings.md").exists()
    assert not State(ws.state_db).pages_of_kind("part")
    assert "sources/settings/group0-component0.md" in (ws.wiki / "log.md").read_text(encoding="utf-8").rsplit("remove |", 1)[1]


def test_a_part_a_person_edited_is_kept(ws: Workspace) -> None:
    write(ws, "reference.md", reference())
    compile_(ws)
    rel = f"{PARTS}/group0-component1.md"
    mine = (ws.wiki / rel).read_text(encoding="utf-8") + "\nMy note: setting 3 matters most.\n"
    (ws.wiki / rel).write_text(mine, encoding="utf-8")
    write(ws, "reference.md", reference().replace("Controls behaviour 3 of component 1.", "Controls behaviour three."))
    report = compile_(ws)
    assert rel in report.kept and (ws.wiki / rel).read_text(encoding="utf-8") == mine
    assert (ws.state_dir / "proposed" / rel).is_file()
    # the source shrinks: the other parts go, the person's stays
    write(ws, "reference.md", reference(groups=1, per=2))
    report = compile_(ws)
    assert rel in report.kept and (ws.wiki / rel).read_text(encoding="utf-8") == mine
    assert parts(ws) == [rel]


def test_a_lost_part_is_written_again_and_state_rebuilt_from_the_pages_knows_the_parts(ws: Workspace) -> None:
    write(ws, "reference.md", reference())
    compile_(ws)
    before = snapshot(ws.wiki)
    (ws.wiki / f"{PARTS}/group1-component1.md").unlink()
    report = compile_(ws)
    assert f"{PARTS}/group1-component1.md" in report.created
    # a fresh clone: state.db is rebuilt from the pages; parts are wikimem's, the source's page is its page
    shutil.rmtree(ws.state_dir)
    report = compile_(ws)
    assert not report.kept and not report.compiled
    state = State(ws.state_db)
    assert state.sources()["raw/reference.md"].page == PAGE
    assert len(state.pages_of_kind("part")) == 12
    state.close()
    assert {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"} == {
        k: v for k, v in before.items() if k != "log.md"}


def test_incremental_compiles_equal_a_full_compile_with_parts(ws: Workspace, tmp_path: Path) -> None:
    def pages(w: Workspace) -> dict[str, bytes]:
        return {k: v for k, v in snapshot(w.wiki).items() if k != "log.md"}

    def full() -> dict[str, bytes]:
        other = Workspace.at(tmp_path / "full")
        if other.root.exists():
            shutil.rmtree(other.root)
        init_workspace(other)
        shutil.rmtree(other.raw)
        shutil.copytree(ws.raw, other.raw)
        compile_(other)
        return pages(other)

    write(ws, "reference.md", reference())
    write(ws, "notes/other.md", "# Other notes\n\nThe widget settings live in `widget.toml`.\n")
    compile_(ws)
    steps = [
        lambda: write(ws, "reference.md", reference(groups=3)),
        lambda: (ws.raw / "reference.md").rename(ws.raw / "notes" / "reference.md"),
        lambda: write(ws, "notes/reference.md", reference(groups=5, per=9)),
        lambda: (ws.raw / "notes" / "reference.md").unlink(),
    ]
    for n, step in enumerate(steps):
        step()
        compile_(ws)
        ours, theirs = pages(ws), full()
        assert ours == theirs, f"step {n}: " + ", ".join(sorted(k for k in set(ours) | set(theirs)
                                                               if ours.get(k) != theirs.get(k))[:10])


def test_another_backend_keeps_the_parts_its_page_still_links(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that writes no parts (a model editing the page the offline backend wrote) keeps
    those its page still links, and the parts it unlinks go."""
    from wikimem import backends
    from wikimem.backends import BatchResult, PageEdit, SourceOutcome

    write(ws, "reference.md", reference())
    compile_(ws)
    dropped = f"{PARTS}/group3-component2.md"

    class Editor:
        name, needs = "editor", None

        def __init__(self, settings: object) -> None:
            pass

        def compile(self, batch):  # type: ignore[no-untyped-def]
            text = (ws.wiki / PAGE).read_text(encoding="utf-8").replace(
                "](reference/group3-component2.md)", "](../../raw/reference.md)")
            return BatchResult((PageEdit(PAGE, text + "\nA note a model added.\n", "source", "raw/reference.md"),),
                               (SourceOutcome("raw/reference.md", "compiled", title="Widget settings reference"),))

    monkeypatch.setitem(backends._REGISTRY, "editor", Editor)  # for this test only
    write(ws, "reference.md", reference() + "\nOne more line.\n")
    report = compile_(ws, backend_name="editor")
    assert dropped in report.removed
    assert len(parts(ws)) == 11 and dropped not in parts(ws)
    findings = run_lint(ws, load_settings(ws.root, environ={})).findings
    assert not [f for f in findings if f.rule in ("broken-link",)], findings


def test_the_docutils_configuration_reference_reads_in_parts(ws: Workspace) -> None:
    shutil.copy(corpus("sphinx") / "docutils" / "user" / "config.txt", ws.raw / "config.txt")
    compile_(ws)
    page = (ws.wiki / "sources/config.md").read_text(encoding="utf-8")
    assert len(page.encode()) < 10_000  # it was 19.7 KB, 13 KB of it one outline line
    # every setting is on the page or one part, its default on its line, and what it is among the
    # key facts of the page or part that lists it; the page links that part
    files = [ws.wiki / "sources/config.md", *sorted((ws.wiki / "sources/config").glob("*.md"))]
    texts = {f: f.read_text(encoding="utf-8") for f in files}
    raw = [f for f, t in texts.items() if "[raw_enabled](" in t]
    tab = [f for f, t in texts.items() if "[tab_width](" in t]
    assert len(raw) == 1 and len(tab) == 1
    assert re.search(r"\[raw_enabled\]\([^)]*#L\d+\) = enabled", texts[raw[0]])
    assert re.search(r"\[tab_width\]\([^)]*#L\d+\) = 8", texts[tab[0]])
    assert "Number of spaces for hard tab expansion." in texts[tab[0]].split("## Key facts", 1)[1]
    # the page links that part, or the run of sections that lists it: at most two steps, and
    # fewer bytes on the way than the one 9 KB page of before
    assert tab[0].parent.name == "config"
    hub = [f for f, t in texts.items() if f.parent.name == "config" and f"({tab[0].name})" in t]
    assert f"(config/{tab[0].name})" in page or (
        len(hub) == 1 and f"(config/{hub[0].name})" in page), page
    assert len(page.encode()) + sum(len(texts[f].encode()) for f in [*hub, tab[0]]) < 11_000


# --- undo, with git -------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_undo_takes_the_parts_back_with_the_page(tmp_path: Path, git_env: None) -> None:
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    git(ws.root, "init", "-q", "-b", "main")
    git(ws.root, "add", "wiki", "wikimem.toml")
    git(ws.root, "commit", "-q", "-m", "start a wiki")
    write(ws, "reference.md", reference(groups=1, per=2))
    compile_(ws)
    write(ws, "reference.md", reference())
    report = compile_(ws)
    assert len(parts(ws)) == 12 and f"{PARTS}/group0-component0.md" in report.created
    result = history.undo(ws, load_settings(ws.root, environ={}))
    assert f"{PARTS}/group0-component0.md" in result.removed
    assert parts(ws) == [] and not State(ws.state_db).pages_of_kind("part")
    # the source is held until it changes; when it does, its parts come back
    write(ws, "reference.md", reference(groups=2))
    compile_(ws)
    assert len(parts(ws)) == 6
    assert len(State(ws.state_db).pages_of_kind("part")) == 6


def test_a_run_of_sections_is_searched_by_what_it_lists_not_by_its_ends(ws: Workspace) -> None:
    # a run's title names its first and last section only: as a title in search, those two
    # names outweighed pages about the question's words; it is indexed under its document's title
    from wikimem.search.documents import load_wiki_page

    write(ws, "changes.md", "\n".join(["# Changelog", ""] + [
        line for n in range(150, 0, -1) for line in (f"## Version 2.{n}", "", f"Fixed issue {n * 7} in the parser.", "")]))
    write(ws, "reference.md", reference(groups=4, per=30))
    compile_(ws)
    runs = parts(ws, "sources/changes")
    assert len(runs) >= 2
    for rel in runs:
        assert " – " in loads_page(rel, (ws.wiki / rel).read_text(encoding="utf-8")).title
        assert load_wiki_page(ws, rel).title == "Changelog", rel
    for rel in parts(ws):  # a part holding one section keeps its title; a run, its document's
        run = " – " in loads_page(rel, (ws.wiki / rel).read_text(encoding="utf-8")).title
        title = load_wiki_page(ws, rel).title
        assert title == "Widget settings reference" if run else title.startswith("Widget settings reference: ["), rel


def test_parts_of_one_name_in_two_sections_are_titled_with_the_section_each_sits_in(ws: Workspace) -> None:
    # every release has "Features" long enough for a page: the pages are told apart by release
    lines = ["# Widget changes", "", "What changed in each release.", ""]
    for g in range(6):
        lines += [f"## Version 2.{g}.0", "", f"Released 2026-0{g + 1}-01.", "", "### Bug fixes", ""]
        for s in range(30):
            lines += [f"#### Fixed parser path {g}{s:02d}", "", f"The parser no longer fails on input {g}{s:02d} of 4096 bytes.", ""]
        lines += ["### Features", ""]
        for s in range(30):
            lines += [f"#### Faster path {g}{s:02d}", "", f"Path {g}{s:02d} now starts in 20 ms, not 80 ms.", ""]
    write(ws, "changes.md", "\n".join(lines))
    compile_(ws)
    titles = [loads_page(p, (ws.wiki / p).read_text(encoding="utf-8")).title for p in parts(ws, "sources/changes")]
    features = [t for t in titles if t.endswith(": Features")]
    assert len(features) >= 2, titles
    assert len(set(titles)) == len(titles), titles
    assert all(re.search(r": Version 2\.\d\.0: Features$", t) for t in features), features

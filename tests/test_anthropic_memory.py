"""The guarded memory tool on its own: every guard refuses with a readable error, and nothing
it does reaches the disk before the compiler writes the edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import snapshot
from wikimem.backends.memory import Overlay, StagedMemoryTool
from wikimem.pages import content_hash
from wikimem.workspace import Workspace

CONCEPT = "---\ntitle: Cryptobiosis\nkind: concept\nsources: [raw/a.md]\n---\n# Cryptobiosis\n\nA state of life with no measurable metabolism, described at length here.\n"


@pytest.fixture
def wiki(ws: Workspace) -> Path:
    (ws.wiki / "concepts").mkdir(exist_ok=True)
    (ws.wiki / "sources").mkdir(exist_ok=True)
    (ws.wiki / "concepts" / "cryptobiosis.md").write_text(CONCEPT)
    (ws.wiki / "concepts" / "mine.md").write_text(CONCEPT.replace("Cryptobiosis", "Mine") + "\nA person's note.\n")
    (ws.wiki / "sources" / "other.md").write_text(CONCEPT.replace("concept", "source"))
    return ws.wiki


@pytest.fixture
def tool(wiki: Path) -> StagedMemoryTool:
    recorded = {
        "concepts/cryptobiosis.md": content_hash((wiki / "concepts" / "cryptobiosis.md").read_bytes()),
        "sources/other.md": content_hash((wiki / "sources" / "other.md").read_bytes()),
        "concepts/mine.md": "0" * 64,  # wikimem wrote something else: a person edited it since
    }
    memory = StagedMemoryTool(wiki, Overlay(wiki), recorded)
    memory.begin("raw/new.md", "sources/new.md")
    return memory


def run(tool: StagedMemoryTool, command: str, **fields: object) -> tuple[str, bool]:
    return tool.run({"command": command, **fields})


def test_create_view_edit_stay_staged_until_committed(tool: StagedMemoryTool, wiki: Path) -> None:
    before = snapshot(wiki)
    text, error = run(tool, "create", path="/memories/sources/new.md", file_text="---\ntitle: New\n---\n# New\n\nline\n")
    assert not error and "created" in text
    text, error = run(tool, "str_replace", path="/memories/sources/new.md", old_str="line", new_str="a better line")
    assert not error and "a better line" in text
    text, error = run(tool, "insert", path="/memories/concepts/cryptobiosis.md", insert_line=7, insert_text="- [New](../sources/new.md)")
    assert not error
    text, error = run(tool, "view", path="/memories/concepts/cryptobiosis.md", view_range=[7, 8])
    assert not error and "- [New](../sources/new.md)" in text and "     7\t" in text
    listing, error = run(tool, "view", path="/memories")
    assert not error and "/memories/sources/new.md" in listing and "/memories/AGENTS.md" in listing
    assert snapshot(wiki) == before  # nothing on disk yet
    tool.overlay.discard()
    assert tool.overlay.read("sources/new.md") is None
    assert tool.overlay.read("concepts/cryptobiosis.md") == CONCEPT


@pytest.mark.parametrize(
    ("command", "fields", "says"),
    [
        ("create", {"path": "/memories/../raw/evil.md", "file_text": "x"}, "'..'"),
        ("create", {"path": "/etc/passwd", "file_text": "x"}, "outside the wiki"),
        ("view", {"path": "/memories/../../etc"}, "'..'"),
        ("create", {"path": "memories/concepts/x.md", "file_text": "x"}, "outside the wiki"),
        ("create", {"path": "/memories/index.md", "file_text": "x"}, "written by wikimem's code"),
        ("str_replace", {"path": "/memories/log.md", "old_str": "Log", "new_str": "Gone"}, "written by wikimem's code"),
        ("create", {"path": "/memories/sources/index.md", "file_text": "x"}, "written by wikimem's code"),
        ("create", {"path": "/memories/AGENTS.md", "file_text": "x"}, "belongs to the user"),
        ("insert", {"path": "/memories/AGENTS.md", "insert_line": 0, "insert_text": "x"}, "belongs to the user"),
        ("create", {"path": "/memories/notes.md", "file_text": "x"}, "view only"),
        ("create", {"path": "/memories/concepts/deep/x.md", "file_text": "x"}, "view only"),
        ("create", {"path": "/memories/sources/other-source.md", "file_text": "x"}, "belong to their own sources"),
        ("create", {"path": "/memories/concepts/Not A Slug.md", "file_text": "x"}, "not-a-slug.md"),
        ("create", {"path": "/memories/concepts/cryptobiosis.md", "file_text": "x"}, "already exists"),
        ("delete", {"path": "/memories/concepts/cryptobiosis.md"}, "existed before this source"),
        ("rename", {"old_path": "/memories/concepts/cryptobiosis.md", "new_path": "/memories/concepts/c.md"}, "existed before"),
        ("delete", {"path": "/memories"}, "cannot be changed"),
        ("create", {"path": "/memories/concepts/mine.md", "file_text": "x"}, "a person edited"),
        ("delete", {"path": "/memories/concepts/mine.md"}, "existed before this source"),
        ("str_replace", {"path": "/memories/concepts/cryptobiosis.md", "old_str": CONCEPT, "new_str": ""}, "more than half"),
        ("str_replace", {"path": "/memories/concepts/cryptobiosis.md", "old_str": "---\ntitle", "new_str": "--\ntitle"}, None),
        ("create", {"path": "/memories/concepts/huge.md", "file_text": "x" * 300_000}, "keep a page under"),
    ],
)
def test_guards_refuse_with_a_readable_error(tool: StagedMemoryTool, wiki: Path, command: str, fields: dict, says: str | None) -> None:
    before = snapshot(wiki)
    text, error = run(tool, command, **fields)
    assert error, text
    assert text.startswith("Refused:") or says is None
    if says:
        assert says in text
    assert tool.overlay.pending == {}
    assert snapshot(wiki) == before


def test_symlink_out_of_the_wiki_is_refused(tool: StagedMemoryTool, wiki: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    os.symlink(outside, wiki / "concepts" / "link")
    os.symlink(outside / "secret.md", wiki / "concepts" / "leak.md")
    for command, fields in [
        ("view", {"path": "/memories/concepts/link/secret.md"}),
        ("view", {"path": "/memories/concepts/leak.md"}),
        ("str_replace", {"path": "/memories/concepts/leak.md", "old_str": "secret", "new_str": "x"}),
    ]:
        text, error = run(tool, command, **fields)
        assert error and "outside the wiki" in text, text
    assert (outside / "secret.md").read_text() == "secret"
    assert tool.overlay.read("concepts/leak.md") is None  # search and listings never read through it


def test_person_edited_page_takes_small_edits(tool: StagedMemoryTool) -> None:
    text, error = run(tool, "str_replace", path="/memories/concepts/mine.md", old_str="A person's note.", new_str="A person's note.\n- [New](../sources/new.md)")
    assert not error, text
    assert "A person's note." in (tool.overlay.read("concepts/mine.md") or "")


def test_pages_created_for_this_source_may_be_renamed_and_deleted(tool: StagedMemoryTool) -> None:
    assert not run(tool, "create", path="/memories/concepts/tardigrade.md", file_text="---\ntitle: T\n---\n")[1]
    text, error = run(tool, "rename", old_path="/memories/concepts/tardigrade.md", new_path="/memories/concepts/tardigrades.md")
    assert not error, text
    assert tool.overlay.read("concepts/tardigrade.md") is None
    text, error = run(tool, "delete", path="/memories/concepts/tardigrades.md")
    assert not error, text
    assert not tool.overlay.exists("concepts/tardigrades.md")


def test_malformed_commands_are_errors_not_crashes(tool: StagedMemoryTool) -> None:
    for bad in [{}, {"command": "explode"}, {"command": "view"}, {"command": "create", "path": "/memories/concepts/a.md"}, "not a dict"]:
        text, error = tool.run(bad)
        assert error, (bad, text)


def test_long_files_are_shown_in_ranges(tool: StagedMemoryTool, wiki: Path) -> None:
    (wiki / "log.md").write_text("\n".join(f"line {i}" for i in range(5000)))
    text, error = run(tool, "view", path="/memories/log.md")
    assert not error and "more lines; view them with view_range" in text
    text, _ = run(tool, "view", path="/memories/log.md", view_range=[4990, -1])
    assert "line 4999" in text and "line 10\n" not in text


# --- conversations side by side: one Store, an Overlay and a tool each


def two_tools(wiki: Path, recorded: dict[str, str]) -> tuple[StagedMemoryTool, StagedMemoryTool]:
    from wikimem.backends.memory import Store

    store = Store(wiki)
    tools = []
    for name in ("a", "b"):
        tool = StagedMemoryTool(wiki, Overlay(wiki, store, owner=f"raw/{name}.md"), recorded)
        tool.begin(f"raw/{name}.md", f"sources/{name}.md")
        tools.append(tool)
    return tools[0], tools[1]


def recorded_of(wiki: Path) -> dict[str, str]:
    return {"concepts/cryptobiosis.md": content_hash((wiki / "concepts" / "cryptobiosis.md").read_bytes())}


def test_an_edit_runs_on_the_page_as_another_conversation_left_it(wiki: Path) -> None:
    a, b = two_tools(wiki, recorded_of(wiki))
    page = "/memories/concepts/cryptobiosis.md"
    assert not run(a, "insert", path=page, insert_line=7, insert_text="- from a")[1]
    assert not run(b, "insert", path=page, insert_line=7, insert_text="- from b")[1]
    a.overlay.commit()
    viewed, _ = run(b, "view", path=page)  # b's own edit carried onto what a committed
    assert "- from a" in viewed and "- from b" in viewed
    b.overlay.commit()
    final = b.overlay.store.committed["concepts/cryptobiosis.md"].content or ""
    assert final.count("- from a") == 1 and final.count("- from b") == 1 and CONCEPT.split("\n")[5] in final


def test_both_changing_one_line_keeps_both_versions_and_says_so(wiki: Path) -> None:
    a, b = two_tools(wiki, recorded_of(wiki))
    page = "/memories/concepts/cryptobiosis.md"
    lead = "A state of life with no measurable metabolism, described at length here."
    run(a, "str_replace", path=page, old_str=lead, new_str=lead + " See also A.")
    run(b, "str_replace", path=page, old_str=lead, new_str=lead + " See also B.")
    a.overlay.commit()
    viewed, error = run(b, "view", path=page)
    assert not error and "See also A." in viewed and "See also B." in viewed
    assert "another source compiled at the same time changed /memories/concepts/cryptobiosis.md" in viewed


def test_a_page_another_conversation_is_creating_makes_the_second_wait(wiki: Path) -> None:
    from wikimem.backends.memory import Contended

    a, b = two_tools(wiki, {})
    new = "/memories/concepts/anhydrobiosis.md"
    page = "---\ntitle: Anhydrobiosis\n---\n# Anhydrobiosis\n\nLife without water.\n"
    assert not run(a, "create", path=new, file_text=page)[1]
    for command, fields in (("create", {"file_text": page}), ("view", {}), ("insert", {"insert_line": 0, "insert_text": "x"})):
        with pytest.raises(Contended) as waiting:
            run(b, command, path=new, **fields)
        assert waiting.value.holder == "raw/a.md"
    a.overlay.commit()  # a is done: b runs its command again and meets the page
    text, error = run(b, "create", path=new, file_text=page)
    assert error and "another source compiled at the same time created it while you worked" in text
    assert not run(b, "insert", path=new, insert_line=6, insert_text="- b adds this")[1]
    b.overlay.commit()
    assert "- b adds this" in (b.overlay.store.committed["concepts/anhydrobiosis.md"].content or "")
    # a conversation that failed lets its claim go: the next one creates the page itself
    c, d = two_tools(wiki, {})
    run(c, "create", path="/memories/concepts/other.md", file_text=page.replace("Anhydrobiosis", "Other"))
    c.overlay.discard()
    assert not run(d, "create", path="/memories/concepts/other.md", file_text=page)[1]


def test_the_half_guard_counts_what_other_conversations_built(wiki: Path) -> None:
    a, b = two_tools(wiki, recorded_of(wiki))
    page = "/memories/concepts/cryptobiosis.md"
    grown = "".join(f"- point {n} that another source added to this page\n" for n in range(20))
    run(a, "insert", path=page, insert_line=7, insert_text=grown)
    a.overlay.commit()
    current = a.overlay.store.committed["concepts/cryptobiosis.md"].content or ""
    text, error = run(b, "str_replace", path=page, old_str=grown.rstrip("\n"), new_str="- one")
    assert error and "would remove more than half" in text
    assert current == b.overlay.read("concepts/cryptobiosis.md")


def test_merge_page_takes_every_side_of_the_front_matter_lists() -> None:
    from wikimem.backends.memory import merge_page

    base = "---\ntitle: X\nsources: [raw/a.md]\n---\n# X\n\nLead.\n\n## Also mentioned in\n"
    mine = base.replace("[raw/a.md]", "[raw/a.md, raw/b.md]") + "- [B](../sources/b.md)\n"
    theirs = base.replace("[raw/a.md]", "[raw/a.md, raw/c.md]") + "- [C](../sources/c.md)\n"
    merged, conflicts = merge_page(base, mine, theirs)
    assert conflicts == []  # two additions at one place: both kept, theirs first
    assert merged.endswith("## Also mentioned in\n- [C](../sources/c.md)\n- [B](../sources/b.md)\n")
    assert loads_page_sources(merged) == ["raw/a.md", "raw/c.md", "raw/b.md"]
    assert merge_page(base, base, theirs) == (theirs, []) and merge_page(base, mine, base) == (mine, [])


def loads_page_sources(text: str) -> list[str]:
    from wikimem.pages import loads_page

    return loads_page("x.md", text).sources


def test_an_insert_lands_where_the_model_chose_on_the_page_it_saw(wiki: Path) -> None:
    """Line numbers refer to the text the conversation viewed; another conversation that grew the
    page above that line meanwhile (its front matter, as code fills `sources`) does not move it."""
    a, b = two_tools(wiki, recorded_of(wiki))
    page = "/memories/concepts/cryptobiosis.md"
    viewed, _ = run(a, "view", path=page)
    heading = next(int(row.split("\t")[0]) for row in viewed.split("\n")[1:] if row.endswith("\t# Cryptobiosis"))
    run(b, "str_replace", path=page, old_str="sources: [raw/a.md]", new_str="sources:\n- raw/a.md\n- raw/b.md\n- raw/c.md")
    b.overlay.commit()
    assert not run(a, "insert", path=page, insert_line=heading, insert_text="Right under the title, from a.")[1]
    a.overlay.commit()
    final = a.overlay.store.committed["concepts/cryptobiosis.md"].content or ""
    assert "- raw/c.md\n---\n# Cryptobiosis\nRight under the title, from a.\n" in final, final

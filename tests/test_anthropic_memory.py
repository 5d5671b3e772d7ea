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

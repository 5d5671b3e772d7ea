"""`wikimem agents install` and the memory tool: pointing agents at the wiki."""

from __future__ import annotations

import json

import pytest
from anthropic.lib.tools import ToolError
from click.testing import CliRunner

from conftest import write
from wikimem.agents import END, START, install
from wikimem.cli import main
from wikimem.errors import UsageError
from wikimem.memory_tool import WikiMemoryTool


def test_install_creates_updates_and_removes_the_section(ws, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    result = install(project, ws)
    agents = (project / "AGENTS.md").read_text(encoding="utf-8")
    assert result.changed == ["AGENTS.md"]
    assert agents.startswith(START) and agents.rstrip().endswith(END)
    assert f"{ws.wiki}/index.md" in agents and "wikimem search" in agents
    # idempotent
    assert install(project, ws).changed == []
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == agents
    # removing a section that was all the file held removes the file
    assert install(project, ws, remove=True).changed == ["AGENTS.md"]
    assert not (project / "AGENTS.md").exists()


def test_install_keeps_the_projects_own_text_and_imports_into_claude_md(ws, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    own = "# Project rules\n\nRun the tests before committing.\n"
    (project / "AGENTS.md").write_text(own, encoding="utf-8")
    (project / "CLAUDE.md").write_text("# Claude notes\n\nBe brief.\n", encoding="utf-8")
    result = install(project, ws)
    assert sorted(result.changed) == ["AGENTS.md", "CLAUDE.md"]
    agents = (project / "AGENTS.md").read_text(encoding="utf-8")
    assert agents.startswith(own) and START in agents
    claude = (project / "CLAUDE.md").read_text(encoding="utf-8")
    assert "\n@AGENTS.md\n" in claude and claude.startswith("# Claude notes")
    # the user edits their part; a re-install updates only the managed block
    (project / "AGENTS.md").write_text(agents.replace("Run the tests", "Always run the tests"), encoding="utf-8")
    install(project, ws)
    assert "Always run the tests" in (project / "AGENTS.md").read_text(encoding="utf-8")
    assert (project / "AGENTS.md").read_text(encoding="utf-8").count(START) == 1
    install(project, ws, remove=True)
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == own.replace("Run the tests", "Always run the tests")
    assert (project / "CLAUDE.md").read_text(encoding="utf-8") == "# Claude notes\n\nBe brief.\n"


def test_claude_md_that_already_imports_agents_md_is_left_alone(ws, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "CLAUDE.md").write_text("@AGENTS.md\n", encoding="utf-8")
    result = install(project, ws)
    assert "CLAUDE.md" in result.unchanged


def test_workspace_inside_project_is_referenced_relatively(tmp_path):
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    project = tmp_path / "proj"
    ws = Workspace.at(project / "docs" / "wiki-ws")
    init_workspace(ws)
    install(project, ws)
    text = (project / "AGENTS.md").read_text(encoding="utf-8")
    assert "`docs/wiki-ws/wiki/index.md`" in text and str(tmp_path) not in text


def test_install_errors(ws, tmp_path):
    with pytest.raises(UsageError):
        install(tmp_path / "missing", ws)
    with pytest.raises(UsageError):
        install(ws.wiki, ws)


def test_cli_agents_install(ws, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    res = CliRunner().invoke(main, ["agents", "install", str(project), "--root", str(ws.root), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["changed"] == ["AGENTS.md"]
    res = CliRunner().invoke(main, ["agents", "install", str(project), "--root", str(ws.root), "--remove"])
    assert res.exit_code == 0 and not (project / "AGENTS.md").exists()


# --- the memory tool --------------------------------------------------------------------------


def call(tool: WikiMemoryTool, **command):
    return tool.call(command)


def test_memory_tool_reads_the_wiki_and_writes_only_to_the_inbox(ws, tmp_path):
    write(ws, "note.md", "# Note\n\nA raw line.\n")
    tool = WikiMemoryTool(ws.root)
    assert tool.to_dict()["type"].startswith("memory_")
    listing = call(tool, command="view", path="/memories")
    assert "/memories/index.md" in listing and "/memories/inbox/" in listing
    index = call(tool, command="view", path="/memories/index.md", view_range=[1, 3])
    assert "     1\t---" in index
    assert "A raw line." in call(tool, command="view", path="/memories/raw/note.md")

    for cmd in (
        dict(command="create", path="/memories/index.md", file_text="x"),
        dict(command="create", path="/memories/sources/new.md", file_text="x"),
        dict(command="str_replace", path="/memories/index.md", old_str="Index", new_str="X"),
        dict(command="delete", path="/memories/log.md"),
        dict(command="rename", old_path="/memories/index.md", new_path="/memories/inbox/i.md"),
        dict(command="create", path="/memories/raw/new.md", file_text="x"),
        dict(command="view", path="/memories/../wikimem.toml"),
        dict(command="view", path="/etc/passwd"),
        dict(command="create", path="/memories/inbox/../../x.md", file_text="x"),
    ):
        with pytest.raises(ToolError):
            call(tool, **cmd)
    assert "x" not in (ws.wiki / "index.md").read_text(encoding="utf-8")[:1]

    call(tool, command="create", path="/memories/inbox/idea.md", file_text="# Idea\n\nUse a cache.\n")
    assert (ws.raw / "inbox" / "idea.md").read_text(encoding="utf-8") == "# Idea\n\nUse a cache.\n"
    call(tool, command="str_replace", path="/memories/inbox/idea.md", old_str="a cache", new_str="two caches")
    call(tool, command="insert", path="/memories/inbox/idea.md", insert_line=1, insert_text="Added line")
    assert "two caches" in (ws.raw / "inbox" / "idea.md").read_text(encoding="utf-8")
    call(tool, command="rename", old_path="/memories/inbox/idea.md", new_path="/memories/inbox/ideas/cache.md")
    assert (ws.raw / "inbox" / "ideas" / "cache.md").exists()
    call(tool, command="delete", path="/memories/inbox/ideas/cache.md")
    assert not (ws.raw / "inbox" / "ideas" / "cache.md").exists()


def test_memory_tool_refuses_symlinks_out(ws, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("top secret\n", encoding="utf-8")
    (ws.wiki / "sources" / "leak.md").symlink_to(secret)
    tool = WikiMemoryTool(ws.root)
    with pytest.raises(ToolError):
        call(tool, command="view", path="/memories/sources/leak.md")
    assert "leak.md" not in call(tool, command="view", path="/memories/sources")


def test_memory_tool_needs_a_workspace(tmp_path):
    with pytest.raises(ValueError):
        WikiMemoryTool(tmp_path)


def test_memory_tool_lists_raw_as_compile_sees_it_and_survives_symlink_loops(ws, tmp_path):
    """The view of /memories/raw is raw_tree's one walk: ignored files and links leaving raw/
    are not listed, and a symlink loop is an entry nobody can open, never a crash."""
    import os

    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand as View

    write(ws, "notes/a.md", "# A\n\nFirst.\n")
    write(ws, "notes/_static/logo.png", b"\x89PNG")
    os.symlink("loop-b", ws.raw / "loop-a")
    os.symlink("loop-a", ws.raw / "loop-b")
    os.symlink(ws.raw, ws.raw / "notes" / "again")
    tool = WikiMemoryTool(ws.root)
    listing = tool.view(View(command="view", path="/memories/raw"))
    assert "/memories/raw/notes/a.md" in listing
    assert "logo.png" not in listing and "loop-a" not in listing and "again" not in listing
    with pytest.raises(ToolError):
        tool.view(View(command="view", path="/memories/raw/loop-a"))

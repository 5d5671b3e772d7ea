"""History: a commit per operation, `history`, `undo`, and a wiki pulled from a teammate.

Every test runs the real git command line in temporary repositories, with identity and
configuration from the environment only (no global git config is read).
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import git, snapshot, write
from wikimem import history
from wikimem.cli import main
from wikimem.compiler import CompileReport, compile_workspace
from wikimem.config import load_settings
from wikimem.errors import UsageError, WikimemError
from wikimem.init import init_workspace
from wikimem.log_page import LogEntry, read_entries
from wikimem.state import State
from wikimem.workspace import Workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MOLES = """# Naked mole-rats

The **naked mole-rat** lives in colonies of up to 300 animals in East Africa.

## Aging

A naked mole-rat can live for 37 years, far longer than a mouse. Its cells resist cancer.
"""
AGING = """# Aging in mammals

## Naked mole-rat

The naked mole-rat shows almost no increase in mortality with age.

## Mouse

A laboratory mouse lives about 3 years. Cancer is a common cause of death in old mice.
"""
CANCER = """# Cancer resistance

## Naked mole-rat

Naked mole-rat cells produce a heavy form of hyaluronan that stops cancer.

## Mouse

Mouse cells turn cancerous after two genetic hits in 2001 experiments.
"""


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Every test here: conftest's git environment."""


def new_repo_ws(root: Path) -> Workspace:
    """A workspace in a fresh git repository, its skeleton committed by the person."""
    ws = Workspace.at(root)
    init_workspace(ws)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "wiki", "wikimem.toml")
    git(root, "commit", "-q", "-m", "start a wiki")
    return ws


def shared_wiki(tmp_path: Path, *sources: tuple[str, str]) -> tuple[Path, Workspace, Workspace]:
    """Alice compiles `sources` and pushes raw/ and wiki/ to a bare origin; Bob clones it."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    alice = new_repo_ws(tmp_path / "alice")
    for name, text in sources:
        write(alice, name, text)
    compile_(alice)
    git(alice.root, "add", "raw")
    git(alice.root, "commit", "-q", "-m", "sources")
    git(alice.root, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "bob")
    return origin, alice, Workspace.at(tmp_path / "bob")


def compile_(ws: Workspace, **env: str) -> CompileReport:
    return compile_workspace(ws, load_settings(ws.root, environ=env))


def head(ws: Workspace) -> str:
    return git(ws.root, "rev-parse", "HEAD")


def changed_in(ws: Workspace, rev: str = "HEAD") -> set[str]:
    return set(git(ws.root, "show", "--name-only", "--format=", rev).splitlines())


@pytest.fixture
def repo_ws(tmp_path: Path) -> Workspace:
    return new_repo_ws(tmp_path / "ws")


# --- a commit per operation -----------------------------------------------------------------


def test_compile_commits_exactly_the_files_it_changed(repo_ws: Workspace) -> None:
    ws = repo_ws
    # the person's own work: a staged file, an unstaged edit, untracked sources
    (ws.root / "notes.txt").write_text("mine\n")
    git(ws.root, "add", "notes.txt")
    with open(ws.root / "wikimem.toml", "a") as handle:
        handle.write("# my unstaged comment\n")
    toml_before = (ws.root / "wikimem.toml").read_bytes()
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    before = head(ws)

    report = compile_(ws)

    assert git(ws.root, "rev-list", "--count", f"{before}..HEAD") == "1"
    expected = {f"wiki/{p}" for p in [*report.created, *report.updated, "log.md", ".gitattributes"]}
    assert changed_in(ws) == expected
    assert "wiki/sources/moles.md" in expected and "wiki/index.md" in expected
    # nothing outside wiki/ was staged or committed, and the person's work is as it was
    assert git(ws.root, "diff", "--cached", "--name-only") == "notes.txt"
    assert git(ws.root, "diff", "--name-only") == "wikimem.toml"
    assert (ws.root / "wikimem.toml").read_bytes() == toml_before
    assert "?? raw/" in git(ws.root, "status", "--porcelain", "--untracked-files=normal")
    # the user's index points at our commit for the wiki: git status shows the wiki clean
    assert git(ws.root, "status", "--porcelain", "--", "wiki") == ""
    # .wikimem/ (machine state) is never offered for commit
    assert ".wikimem" not in git(ws.root, "status", "--porcelain", "--untracked-files=all")


def test_commit_message_mirrors_the_log_entry(repo_ws: Workspace) -> None:
    ws = repo_ws
    write(ws, "moles.md", MOLES)
    compile_(ws)
    message = git(ws.root, "log", "-1", "--format=%B")
    subject = message.splitlines()[0]
    assert subject == "wikimem compile: ingest Naked mole-rats (raw/moles.md)"
    assert "ingest | Naked mole-rats (raw/moles.md)\n- created: sources/moles.md" in message
    assert "compile | 1 sources" in message
    trailers = git(ws.root, "log", "-1", "--format=%(trailers:key=Wikimem-Operation,valueonly)")
    assert trailers == "compile"
    log_entry = [e for e in read_entries(ws.wiki / "log.md") if e[1] == "ingest"][-1]
    assert "\n".join(log_entry[3]) in message


def test_noop_compile_makes_no_commit(repo_ws: Workspace) -> None:
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    first = head(repo_ws)
    report = compile_(repo_ws)
    assert report.noop
    assert head(repo_ws) == first


def test_git_false_makes_no_commit(repo_ws: Workspace) -> None:
    (repo_ws.root / "wikimem.toml").write_text('git = "false"\n')
    write(repo_ws, "moles.md", MOLES)
    before = head(repo_ws)
    report = compile_(repo_ws)
    assert report.created and head(repo_ws) == before
    # the environment variable overrides the file, as for every setting
    write(repo_ws, "aging.md", AGING)
    compile_(repo_ws, WIKIMEM_GIT="true")
    assert head(repo_ws) != before


def test_auto_outside_a_repository_stays_out_of_git(ws: Workspace, settings) -> None:
    write(ws, "moles.md", MOLES)
    compile_workspace(ws, settings)
    assert not (ws.root / ".git").exists()
    assert history.repository(ws, settings) is None
    with pytest.raises(WikimemError, match="not in a git repository"):
        history.operations(ws, settings)


def test_git_true_initializes_a_repository(ws: Workspace) -> None:
    write(ws, "moles.md", MOLES)
    compile_(ws, WIKIMEM_GIT="true")
    assert (ws.root / ".git").is_dir()
    assert "wiki/sources/moles.md" in changed_in(ws)
    assert not any(p.startswith(("raw/", ".wikimem/")) for p in changed_in(ws))


def test_without_git_says_so_once_and_compiles(ws: Workspace, monkeypatch, caplog, tmp_path: Path) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    caplog.set_level(logging.WARNING, logger="wikimem.history")
    write(ws, "moles.md", MOLES)
    first = compile_(ws, WIKIMEM_GIT="true")
    write(ws, "aging.md", AGING)
    second = compile_(ws, WIKIMEM_GIT="true")
    assert first.created and second.compiled == ["raw/aging.md"]
    warnings = [r.getMessage() for r in caplog.records if "git is not installed" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.slow
def test_a_failed_commit_never_breaks_the_compile(repo_ws: Workspace, caplog) -> None:
    # a lock on the branch (another git process mid-update) makes every commit attempt fail
    lock = repo_ws.root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    caplog.set_level(logging.WARNING, logger="wikimem.history")
    write(repo_ws, "moles.md", MOLES)
    before = head(repo_ws)
    report = compile_(repo_ws)
    assert (repo_ws.wiki / "sources" / "moles.md").is_file() and report.created
    assert head(repo_ws) == before
    assert any("could not commit the compile" in r.getMessage() for r in caplog.records)


def test_workspace_in_a_subfolder_of_a_repository(tmp_path: Path) -> None:
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "README").write_text("project\n")
    git(top, "add", "README")
    git(top, "commit", "-q", "-m", "project")
    ws = Workspace.at(top / "docs" / "kb")
    init_workspace(ws)
    write(ws, "moles.md", MOLES)
    compile_(ws)
    assert all(p.startswith("docs/kb/wiki/") for p in changed_in(ws))
    ops = history.operations(ws, load_settings(ws.root, environ={}))
    assert ops[0].files and all(not f.startswith("docs/") for f in ops[0].files)


def test_ignored_wiki_is_not_committed(repo_ws: Workspace) -> None:
    (repo_ws.root / ".gitignore").write_text("wiki/concepts/\n")
    write(repo_ws, "moles.md", MOLES)
    write(repo_ws, "aging.md", AGING)
    report = compile_(repo_ws)
    assert any(p.startswith("concepts/") for p in report.created)
    assert not any(p.startswith("wiki/concepts/") for p in changed_in(repo_ws))
    assert "wiki/sources/moles.md" in changed_in(repo_ws)


# --- history --------------------------------------------------------------------------------


def test_history_lists_operations_newest_first(repo_ws: Workspace) -> None:
    settings = load_settings(repo_ws.root, environ={})
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    write(repo_ws, "aging.md", AGING)
    compile_(repo_ws)
    ops = history.operations(repo_ws, settings)
    assert [op.operation for op in ops] == ["compile", "compile"]  # the person's commit is not one
    assert ops[0].subject == "ingest Aging in mammals (raw/aging.md)"
    assert "sources/aging.md" in ops[0].files and "log.md" in ops[0].files
    assert ops[0].commit == head(repo_ws) and ops[0].undone_by is None
    assert len(history.operations(repo_ws, settings, limit=1)) == 1


def test_history_cli_json_and_text(repo_ws: Workspace) -> None:
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    runner = CliRunner()
    result = runner.invoke(main, ["history", "--root", str(repo_ws.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["held"] == []
    assert set(data["operations"][0]) == {
        "commit", "short", "operation", "subject", "date", "author", "files", "undoes", "undone_by"}
    text = runner.invoke(main, ["history", "--root", str(repo_ws.root), "-n", "1"])
    assert text.exit_code == 0
    assert text.stdout.startswith(data["operations"][0]["short"]) and "compile" in text.stdout


def test_history_without_a_repository_is_one_line_error(ws: Workspace) -> None:
    result = CliRunner().invoke(main, ["history", "--root", str(ws.root), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and "git init" in data["error"]


# --- undo -----------------------------------------------------------------------------------


def test_undo_reverts_the_last_compile_and_holds_its_source(repo_ws: Workspace) -> None:
    ws = repo_ws
    settings = load_settings(ws.root, environ={})
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    wiki_before = snapshot(ws.wiki)
    write(ws, "cancer.md", CANCER)
    report = compile_(ws)
    assert "sources/cancer.md" in report.created
    undone = head(ws)
    # the person's own work since: a commit of their sources, a staged file, an unstaged edit
    git(ws.root, "add", "raw")
    git(ws.root, "commit", "-q", "-m", "my sources")
    (ws.root / "notes.txt").write_text("mine\n")
    git(ws.root, "add", "notes.txt")
    (ws.root / "wikimem.toml").write_text("# my unstaged edit\n")

    result = history.undo(ws, settings)

    assert git(ws.root, "diff", "--cached", "--name-only") == "notes.txt"
    assert git(ws.root, "diff", "--name-only") == "wikimem.toml"
    assert (ws.raw / "cancer.md").read_text() == CANCER  # raw/ is never touched

    assert result.undone.commit == undone and result.commit == head(ws)
    assert "sources/cancer.md" in result.removed and result.held == ["raw/cancer.md"]
    after = snapshot(ws.wiki)
    # every page is back as it was, index.md too (regenerated); log.md only grew
    assert {k: v for k, v in after.items() if k != "log.md"} == {
        k: v for k, v in wiki_before.items() if k != "log.md"}
    assert after["log.md"].startswith(wiki_before["log.md"])
    entries = read_entries(ws.wiki / "log.md")
    assert any(e[1] == "ingest" and "raw/cancer.md" in e[2] for e in entries)  # original kept
    assert entries[-1][1] == "undo" and undone[:7] in entries[-1][2]
    # the undo is itself one commit, saying what it reverted
    assert git(ws.root, "log", "-1", "--format=%(trailers:key=Wikimem-Undoes,valueonly)") == undone
    assert "wiki/sources/cancer.md" in changed_in(ws) and "wiki/log.md" in changed_in(ws)
    assert git(ws.root, "status", "--porcelain", "--", "wiki") == ""
    assert history.held_sources(ws) == ["raw/cancer.md"]
    listed = CliRunner().invoke(main, ["history", "--root", str(ws.root), "--json"])
    assert json.loads(listed.stdout)["held"] == ["raw/cancer.md"]
    # state matches: the next compile (or the daemon's rescan) does not redo the undone work
    again = compile_(ws)
    assert again.noop and not (ws.wiki / "sources" / "cancer.md").exists()
    # ... until the source changes
    write(ws, "cancer.md", CANCER + "\nHyaluronan was found in 2013.\n")
    changed = compile_(ws)
    assert changed.compiled == ["raw/cancer.md"] and not changed.kept
    assert history.held_sources(ws) == []


@pytest.mark.slow
def test_undo_then_undo_walks_back_and_a_named_undo_redoes(repo_ws: Workspace) -> None:
    ws = repo_ws
    settings = load_settings(ws.root, environ={})
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    two_sources = snapshot(ws.wiki)
    write(ws, "cancer.md", CANCER)
    compile_(ws)
    three_sources = snapshot(ws.wiki)

    first = history.undo(ws, settings)
    second = history.undo(ws, settings)  # the one before: the first compile
    assert second.undone.commit != first.undone.commit
    assert not (ws.wiki / "sources" / "moles.md").exists()
    assert sorted(second.held) == ["raw/aging.md", "raw/moles.md"]
    assert (ws.wiki / ".gitattributes").is_file()  # came with the first compile, serves them all

    ops = history.operations(ws, settings)
    assert [op.operation for op in ops[:2]] == ["undo", "undo"]
    assert all(op.undone_by for op in ops if op.operation == "compile")
    with pytest.raises(WikimemError, match="already undone"):
        history.undo(ws, settings)

    # redo both, newest undo last: the pages are as they were with three sources
    assert second.commit is not None and first.commit is not None
    history.undo(ws, settings, second.commit[:7])
    pages_now = {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"}
    assert pages_now == {k: v for k, v in two_sources.items() if k != "log.md"}
    history.undo(ws, settings, first.commit)
    assert {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"} == {
        k: v for k, v in three_sources.items() if k != "log.md"}
    assert compile_(ws).noop  # redone sources are compiled, not held


def test_undo_refuses_when_a_person_edited_the_page_since(repo_ws: Workspace) -> None:
    ws = repo_ws
    settings = load_settings(ws.root, environ={})
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    page = ws.wiki / "sources" / "moles.md"
    page.write_text(page.read_text() + "\nMy own note.\n")
    before, tip = snapshot(ws.wiki), head(ws)

    with pytest.raises(WikimemError, match="sources/moles.md has uncommitted edits; nothing was changed"):
        history.undo(ws, settings)
    assert snapshot(ws.wiki) == before and head(ws) == tip

    git(ws.root, "commit", "-q", "-m", "my note", "--", "wiki/sources/moles.md")
    tip = head(ws)
    with pytest.raises(WikimemError, match="edited by a person in .*'my note'.*git revert"):
        history.undo(ws, settings)
    assert snapshot(ws.wiki) == before and head(ws) == tip

    result = CliRunner().invoke(main, ["undo", "--root", str(ws.root)])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "cannot undo" in result.stderr


def test_undo_refuses_staged_changes_to_its_pages(repo_ws: Workspace) -> None:
    ws = repo_ws
    write(ws, "moles.md", MOLES)
    compile_(ws)
    page = ws.wiki / "sources" / "moles.md"
    original = page.read_bytes()
    page.write_text("staged by me\n")
    git(ws.root, "add", "wiki/sources/moles.md")
    page.write_bytes(original)  # the file is back, but the person's staged version is not
    with pytest.raises(WikimemError, match="staged changes"):
        history.undo(ws, load_settings(ws.root, environ={}))


def test_undo_of_a_source_edit_restores_the_old_page(repo_ws: Workspace) -> None:
    ws = repo_ws
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    old_page = (ws.wiki / "sources" / "moles.md").read_bytes()
    write(ws, "moles.md", MOLES.replace("300 animals", "295 animals"))
    compile_(ws)
    assert (ws.wiki / "sources" / "moles.md").read_bytes() != old_page

    result = history.undo(ws, load_settings(ws.root, environ={}), "compile")

    assert "sources/moles.md" in result.restored and result.held == ["raw/moles.md"]
    assert (ws.wiki / "sources" / "moles.md").read_bytes() == old_page
    assert compile_(ws).noop
    state = State(ws.state_db)
    try:
        row = state.sources()["raw/moles.md"]
        assert row.status == "skipped" and "undo" in (row.reason or "")
        assert row.page == "sources/moles.md"
    finally:
        state.close()


def test_undo_dry_run_changes_nothing(repo_ws: Workspace) -> None:
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    before, tip = snapshot(repo_ws.wiki), head(repo_ws)
    result = CliRunner().invoke(main, ["undo", "--dry-run", "--json", "--root", str(repo_ws.root)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is True and "sources/moles.md" in data["removed"] and data["commit"] is None
    assert snapshot(repo_ws.wiki) == before and head(repo_ws) == tip


def test_undo_names_that_are_not_operations(repo_ws: Workspace) -> None:
    settings = load_settings(repo_ws.root, environ={})
    with pytest.raises(WikimemError, match="no wikimem operations"):
        history.undo(repo_ws, settings)
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    with pytest.raises(UsageError, match="no operation or commit named 'nonsense'"):
        history.undo(repo_ws, settings, "nonsense")
    person_commit = git(repo_ws.root, "rev-list", "--max-parents=0", "HEAD")
    with pytest.raises(UsageError, match="is not a wikimem operation"):
        history.undo(repo_ws, settings, person_commit)
    result = CliRunner().invoke(main, ["undo", "nonsense", "--root", str(repo_ws.root), "--json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["ok"] is False


def test_undo_cli_says_what_it_did(repo_ws: Workspace) -> None:
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    result = CliRunner().invoke(main, ["undo", "--root", str(repo_ws.root)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # people's text goes to stderr
    assert "undid" in result.stderr and "removed  wiki/sources/moles.md" in result.stderr
    assert f"to redo: wikimem undo {head(repo_ws)[:7]}" in result.stderr


# --- a wiki shared through git --------------------------------------------------------------


@pytest.mark.slow
def test_wiki_pulled_from_a_teammate_is_picked_up_without_recompiling(tmp_path: Path) -> None:
    origin, alice, bob = shared_wiki(tmp_path, ("moles.md", MOLES), ("aging.md", AGING))
    first = compile_(bob)  # a fresh clone: state is rebuilt from the pages, nothing recompiled
    assert first.noop and not first.compiled
    assert (bob.state_dir / ".gitignore").exists()  # machine state stays out of git on bob's side too

    # alice adds a source; compiling it changes existing concept and source pages too
    write(alice, "cancer.md", CANCER)
    report = compile_(alice)
    assert report.updated  # pages bob also has, now changed underneath him
    git(alice.root, "add", "raw")
    git(alice.root, "commit", "-q", "-m", "cancer source")
    git(alice.root, "push", "-q", str(origin), "main")
    git(bob.root, "pull", "-q", "--ff-only", str(origin), "main")
    bob_tip = head(bob)

    picked_up = compile_(bob)
    assert picked_up.noop and not picked_up.compiled and not picked_up.kept
    assert head(bob) == bob_tip
    state = State(bob.state_db)
    try:
        row = state.sources()["raw/cancer.md"]
        assert row.status == "compiled" and row.page == "sources/cancer.md"
    finally:
        state.close()

    # bob's next real change treats alice's pages as wikimem's, not as a person's edits
    write(bob, "aging.md", AGING + "\nA mouse in 2010 reached 4 years.\n")
    after = compile_(bob)
    assert after.compiled == ["raw/aging.md"] and not after.kept
    assert snapshot(bob.wiki).keys() == snapshot(alice.wiki).keys()


@pytest.mark.slow
def test_teammates_compiling_in_parallel_merge_cleanly(tmp_path: Path) -> None:
    origin, alice, bob = shared_wiki(tmp_path, ("moles.md", MOLES))
    assert compile_(bob).noop

    # both compile a different new source: both change index.md and log.md
    write(alice, "tea.txt", "Alice's short note about tea.\n")
    compile_(alice)
    git(alice.root, "add", "raw")
    git(alice.root, "commit", "-q", "-m", "tea")
    git(alice.root, "push", "-q", str(origin), "main")
    write(bob, "coffee.txt", "Bob's short note about coffee.\n")
    compile_(bob)
    git(bob.root, "add", "raw")
    git(bob.root, "commit", "-q", "-m", "coffee")
    bob_log, alice_log = (bob.wiki / "log.md").read_text(), (alice.wiki / "log.md").read_text()
    merge = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", str(origin), "main"],
                           cwd=bob.root, capture_output=True, text=True)
    # wiki/.gitattributes names wikimem's merge drivers: no conflict in log.md or index.md
    assert merge.returncode == 0, merge.stderr
    merged = (bob.wiki / "log.md").read_text()
    assert merged.startswith(bob_log)  # bob's log exactly as it was, alice's new entries after it
    for entry in history.entry_chunks(alice_log)[1] + history.entry_chunks(bob_log)[1]:
        assert entry in history.entry_chunks(merged)[1]
    entries = read_entries(bob.wiki / "log.md")
    assert any("raw/tea.txt" in e[2] for e in entries) and any("raw/coffee.txt" in e[2] for e in entries)

    after_merge = compile_(bob)
    assert not after_merge.kept and not after_merge.compiled
    # the merged pages are rendered again (and index.md regenerated) as the merge's sync
    index = (bob.wiki / "index.md").read_text()
    assert index.count("sources/tea.md") == 1 and index.count("sources/coffee.md") == 1
    assert git(bob.root, "log", "-1", "--format=%(trailers:key=Wikimem-Operation,valueonly)") == "sync"
    assert git(bob.root, "status", "--porcelain", "--", "wiki") == ""
    assert compile_(bob).noop
    # alice takes bob's merge: both clones hold the same wiki, and neither recompiles anything
    git(bob.root, "push", "-q", str(origin), "main")
    git(alice.root, "pull", "-q", "--ff-only", str(origin), "main")
    taken = compile_(alice)
    assert not taken.compiled and not taken.created and not taken.updated and not taken.kept
    assert compile_(alice).noop
    assert snapshot(alice.wiki) == snapshot(bob.wiki)


def test_commits_without_a_configured_identity(repo_ws: Workspace, monkeypatch) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{who}_NAME")
        monkeypatch.delenv(f"GIT_{who}_EMAIL")
    monkeypatch.setenv("EMAIL", "")
    # as on a machine whose host name gives no usable e-mail: git refuses to guess an identity
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.useConfigOnly")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "true")
    monkeypatch.setenv("HOME", str(repo_ws.root / "no-home"))
    write(repo_ws, "moles.md", MOLES)
    compile_(repo_ws)
    assert git(repo_ws.root, "log", "-1", "--format=%an <%ae>") == "wikimem <wikimem@localhost>"


def test_no_commit_during_a_merge_in_progress(repo_ws: Workspace, caplog) -> None:
    ws = repo_ws
    (ws.root / "notes.txt").write_text("base\n")
    git(ws.root, "add", "notes.txt")
    git(ws.root, "commit", "-q", "-m", "notes")
    git(ws.root, "checkout", "-q", "-b", "side")
    (ws.root / "notes.txt").write_text("side\n")
    git(ws.root, "commit", "-q", "-am", "side")
    git(ws.root, "checkout", "-q", "main")
    (ws.root / "notes.txt").write_text("main\n")
    git(ws.root, "commit", "-q", "-am", "main")
    merge = subprocess.run(["git", "merge", "-q", "side"], cwd=ws.root, capture_output=True, text=True)
    assert merge.returncode != 0  # a conflict: the person is mid-merge
    tip = head(ws)
    caplog.set_level(logging.WARNING, logger="wikimem.history")
    write(ws, "moles.md", MOLES)
    report = compile_(ws)
    assert report.created and head(ws) == tip
    assert any("merge is in progress" in r.getMessage() for r in caplog.records)
    # the person's conflict is untouched
    assert git(ws.root, "diff", "--name-only", "--diff-filter=U") == "notes.txt"
    with pytest.raises(WikimemError, match="merge is in progress"):
        history.undo(ws, load_settings(ws.root, environ={}))


@pytest.mark.slow
def test_pulled_renames_and_removals_are_not_redone(tmp_path: Path) -> None:
    origin, alice, bob = shared_wiki(tmp_path, ("moles.md", MOLES), ("aging.md", AGING), ("cancer.md", CANCER))
    assert compile_(bob).noop

    (alice.raw / "mammals").mkdir()
    git(alice.root, "mv", "raw/aging.md", "raw/mammals/aging.md")
    git(alice.root, "rm", "-q", "raw/cancer.md")
    report = compile_(alice)
    assert report.renamed and report.removed_sources == ["raw/cancer.md"]
    git(alice.root, "commit", "-q", "-m", "reorganise sources")
    git(alice.root, "push", "-q", str(origin), "main")
    git(bob.root, "pull", "-q", "--ff-only", str(origin), "main")

    picked_up = compile_(bob)
    assert picked_up.noop, picked_up
    assert not picked_up.renamed and not picked_up.removed_sources and not picked_up.kept
    state = State(bob.state_db)
    try:
        rows = state.sources()
        assert "raw/cancer.md" not in rows and "raw/aging.md" not in rows
        assert rows["raw/mammals/aging.md"].status == "compiled"
        assert set(state.pages()) == {
            p for p in snapshot(bob.wiki) if p.startswith(("sources/", "concepts/")) and not p.endswith("index.md")}
    finally:
        state.close()


def test_merge_log_keeps_every_entry_intact() -> None:
    base = "# Log\n\n## [1] init | x\n- a\n"
    ours = base + "\n## [3] ingest | bob\n- created: b.md\n- backend: offline, 0.01 s\n"
    theirs = base + "\n## [2] ingest | alice\n- created: a.md\n- backend: offline, 0.01 s\n"
    merged = history.merge_log(base, ours, theirs)
    # git's union merge would fold the shared last line into one, changing bob's entry
    assert merged == ours + "\n## [2] ingest | alice\n- created: a.md\n- backend: offline, 0.01 s\n"
    assert history.merge_log(base, ours, ours) == ours
    assert history.merge_log(base, ours, base) == ours



def test_signing_config_never_blocks_a_commit(repo_ws: Workspace) -> None:
    # commit.gpgSign on with a "gpg" that always fails (a machine without the key, a daemon
    # without a terminal for the passphrase): the operation is still committed
    fake = repo_ws.root.parent / "fake-gpg"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    git(repo_ws.root, "config", "commit.gpgSign", "true")
    git(repo_ws.root, "config", "gpg.program", str(fake))
    write(repo_ws, "moles.md", MOLES)
    before = head(repo_ws)
    compile_(repo_ws)
    assert head(repo_ws) != before and "wiki/sources/moles.md" in changed_in(repo_ws)


def test_git_reset_back_is_picked_up_as_it_is(repo_ws: Workspace) -> None:
    ws = repo_ws
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    git(ws.root, "add", "raw")
    git(ws.root, "commit", "-q", "-m", "two sources")
    two = head(ws)
    wiki_two = snapshot(ws.wiki)
    write(ws, "cancer.md", CANCER)
    compile_(ws)
    git(ws.root, "add", "raw")
    git(ws.root, "commit", "-q", "-m", "third source")

    git(ws.root, "reset", "-q", "--hard", two)  # the person goes back, sources and wiki alike
    report = compile_(ws)
    assert report.noop and not report.kept and not report.removed_sources, report
    assert snapshot(ws.wiki) == wiki_two and head(ws) == two


def test_a_git_revert_of_an_operation_is_not_taken_for_a_persons_edit(repo_ws: Workspace) -> None:
    ws = repo_ws
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    write(ws, "cancer.md", CANCER)
    third = compile_(ws)
    assert any(p.startswith("concepts/") for p in third.updated)
    wiki_three = snapshot(ws.wiki)
    # a person reverts the compile with git instead of wikimem undo: the concept pages hold
    # exactly what an earlier operation wrote, though the latest commit on them is a person's
    git(ws.root, "revert", "--no-edit", "HEAD")
    report = compile_(ws)
    assert not report.kept, report.kept
    # raw/cancer.md is still there, so the compile brings its pages back (use wikimem undo to
    # keep an undo)
    assert {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"} == {
        k: v for k, v in wiki_three.items() if k != "log.md"}


def test_record_accepts_the_path_forms_operations_hold(repo_ws: Workspace) -> None:
    ws = repo_ws
    settings = load_settings(ws.root, environ={})
    answer = ws.wiki / "answers" / "why.md"
    answer.write_text("---\ntitle: Why\nkind: answer\n---\n# Why\n\nBecause.\n")
    (ws.wiki / "lint.md").write_text("# Lint\n\nNo problems.\n")
    (ws.root / "wikimem.toml").write_text("# changed, and not wikimem's to commit\n")
    entry = LogEntry("query", "Why?", ("- created: answers/why.md",))
    commit = history.record(ws, settings, operation="query", entries=[entry],
                            paths=[answer, "wiki/lint.md", "./log.md", "../outside.txt", "/etc/passwd",
                                   "sources/../../wikimem.toml"])
    assert commit == head(ws)
    assert changed_in(ws) == {"wiki/answers/why.md", "wiki/lint.md", "wiki/.gitattributes"}
    assert git(ws.root, "log", "-1", "--format=%s") == "wikimem query: Why?"
    assert history.operations(ws, settings)[0].operation == "query"
    # nothing left to commit: the same call again makes no commit
    assert history.record(ws, settings, operation="query", paths=[answer]) is None
    # answers and lint.md are not the compiler's pages: picking up the commit leaves it idle
    assert compile_(ws).noop
    undone = history.undo(ws, settings, "query")
    assert set(undone.removed) == {"answers/why.md", "lint.md"} and not answer.exists()
    assert compile_(ws).noop
    state = State(ws.state_db)
    try:
        assert not set(state.pages()) & {"answers/why.md", "lint.md"}
    finally:
        state.close()


def test_undo_of_an_older_operation_refuses_when_a_later_one_changed_its_pages(repo_ws: Workspace) -> None:
    ws = repo_ws
    settings = load_settings(ws.root, environ={})
    write(ws, "moles.md", MOLES)
    write(ws, "aging.md", AGING)
    compile_(ws)
    first = head(ws)
    write(ws, "cancer.md", CANCER)
    compile_(ws)  # updates concept pages the first compile wrote
    second = head(ws)
    before = snapshot(ws.wiki)
    with pytest.raises(WikimemError, match=rf"changed again by {second[:7]} \(compile\).*; undo that first: wikimem undo {second[:7]}"):
        history.undo(ws, settings, first[:10])
    assert snapshot(ws.wiki) == before and head(ws) == second

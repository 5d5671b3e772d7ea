"""Two clones compiling different sources pull each other (issue 37): real git, in temporary
folders. Pages both clones wrote merge without a person (wiki/.gitattributes names wikimem's
driver for every page it owns), and the next compile gives the wiki a one-machine compile of
the merged raw/ gives; a page a person edited merges or conflicts as git does, and stays theirs.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import git, snapshot, write
from fake_messages_server import FakeMessagesServer, memory, reply, text
from wikimem import gitrepo
from wikimem.compiler import CompileReport, compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.ownership import persons_page
from wikimem.pages import certify, page_owner
from wikimem.state import State
from wikimem.workspace import Workspace

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SIDE_A = {
    "alpha.md": "---\ntitle: Alpha notes\ndate: 2025-03-01\n---\n# Alpha notes\n\nThe *canary release* sends 5% "
                "of traffic to a new build for 30 minutes. A canary release\nprotects users from bad builds.\n\n"
                "## Rollback\n\nA rollback returns the service to build 2290 within 4 minutes.\n",
    "gamma.txt": "Gamma notes\n\nA rollback is cheap. The canary release caught the fault on 3 October 2026.\n",
    "epsilon.md": "# Epsilon notes\n\n## Canary release\n\nA canary release and a rollback, both "
                  "in 2027, took 9 minutes. The on-call engineer watched the canary release.\n",
}
SIDE_B = {
    "beta.md": "# Beta notes\n\nOur canary release policy changed in 2026: the canary release now takes 10% of "
               "traffic.\nThe rollback budget is 4 minutes. The rollback is done by the on-call engineer.\n\n"
               "## Canary release\n\nEvery canary release is watched for 30 minutes.\n",
    "delta.md": "# Delta notes\n\nThe rollback drill ran on 2 May 2026 with 12 engineers. "
                "A canary release went with it.\n\n## Rollback\n\nThe rollback took 7 minutes.\n",
    "zeta.md": "# Zeta notes\n\nThe *error budget* is 0.5% of requests. A rollback starts when the error budget "
               "is spent. The on-call engineer owns the error budget.\n\n## Error budget\n\nThe error budget resets monthly.\n",
}
MY_LINE = "\nMy own note: the canary is watched from the ops room.\n"


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Every test here: conftest's git environment."""


def compile_(ws: Workspace, **flags: Any) -> CompileReport:
    return compile_workspace(ws, load_settings(ws.root, flags, environ={}))


def wiki_pages(ws: Workspace) -> dict[str, bytes]:
    """wiki/ as a compile leaves it, log.md and git's own files aside."""
    return {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"}


def one_machine(root: Path, notes: dict[str, str]) -> dict[str, bytes]:
    ws = Workspace.at(root)
    init_workspace(ws)
    for name, body in notes.items():
        write(ws, name, body)
    compile_(ws)
    return wiki_pages(ws)


def two_clones(tmp_path: Path) -> tuple[Path, Workspace, Workspace]:
    """A wiki started and pushed by A, cloned by B; then each compiles its own half of the
    sources and commits raw/ (B pushes)."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    a = Workspace.at(tmp_path / "a")
    init_workspace(a)
    git(a.root, "init", "-q", "-b", "main")
    git(a.root, "add", "wiki", "wikimem.toml")
    git(a.root, "commit", "-q", "-m", "start a wiki")
    git(a.root, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "b")
    b = Workspace.at(tmp_path / "b")
    for ws, notes in ((a, SIDE_A), (b, SIDE_B)):
        for name, body in notes.items():
            write(ws, name, body)
        compile_(ws)
        git(ws.root, "add", "raw")
        git(ws.root, "commit", "-q", "-m", "my sources")
    return origin, a, b


def pull(ws: Workspace, origin: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "pull", "--no-rebase", "--no-edit", str(origin), "main"],
                          cwd=ws.root, capture_output=True, text=True)


def conflicts(ws: Workspace) -> list[str]:
    return git(ws.root, "diff", "--name-only", "--diff-filter=U").splitlines()


@pytest.mark.parametrize("first", ["a", "b"])
def test_two_clones_pull_each_other_and_get_the_one_machine_wiki(tmp_path: Path, first: str) -> None:
    expected = one_machine(tmp_path / "one", {**SIDE_A, **SIDE_B})
    origin, a, b = two_clones(tmp_path)
    both = {"concepts/canary-release.md", "concepts/rollback.md"}
    assert all((a.wiki / p).is_file() and (b.wiki / p).is_file() and (a.wiki / p).read_bytes() != (b.wiki / p).read_bytes()
               for p in both)  # pages neither person wrote, both clones did
    puller, pushed = (a, b) if first == "a" else (b, a)
    git(pushed.root, "push", "-q", str(origin), "main")
    merge = pull(puller, origin)
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert "CONFLICT" not in merge.stdout
    report = compile_(puller)
    assert report.kept == [] and report.failed == [] and report.compiled == []
    assert wiki_pages(puller) == expected
    assert git(puller.root, "log", "-1", "--format=%(trailers:key=Wikimem-Operation,valueonly)") == "sync"
    assert git(puller.root, "status", "--porcelain", "--", "wiki") == ""
    assert compile_(puller).noop
    # the other takes the merge: the same wiki, nothing kept, nothing taken for a person's
    git(puller.root, "push", "-q", str(origin), "main")
    assert pull(pushed, origin).returncode == 0
    after = compile_(pushed)
    assert after.kept == [] and not after.created and not after.removed
    assert wiki_pages(pushed) == expected
    assert compile_(pushed).noop


@pytest.mark.parametrize("first", ["a", "b"])
def test_a_persons_edit_on_one_side_is_kept_through_the_pull(tmp_path: Path, first: str) -> None:
    """A person adds a line to a page only their clone has: whichever clone pulls, the line is
    there after the next compile, and every other page is the one-machine wiki's."""
    expected = one_machine(tmp_path / "one", {**SIDE_A, **SIDE_B})
    origin, a, b = two_clones(tmp_path)
    edited = a.wiki / "sources/alpha.md"
    edited.write_text(edited.read_text() + MY_LINE)
    git(a.root, "commit", "-q", "-am", "my note on alpha")
    puller, pushed = (a, b) if first == "a" else (b, a)
    git(pushed.root, "push", "-q", str(origin), "main")
    assert pull(puller, origin).returncode == 0
    report = compile_(puller)
    page = puller.wiki / "sources/alpha.md"
    assert MY_LINE.strip() in page.read_text()
    assert set(report.kept) <= {"sources/alpha.md"}
    got = wiki_pages(puller)
    assert {k: v for k, v in got.items() if k != "sources/alpha.md"} == \
        {k: v for k, v in expected.items() if k != "sources/alpha.md"}
    proposed = puller.state_dir / "proposed" / "sources/alpha.md"
    if report.kept:  # wikimem's own version, beside the person's
        assert proposed.read_bytes() == expected["sources/alpha.md"]


@pytest.mark.parametrize("first", ["a", "b"])
def test_a_persons_edit_on_a_page_both_clones_wrote_conflicts_as_git_does(tmp_path: Path, first: str) -> None:
    """A person adds a line to a concept page the other clone wrote too: git stops on that page
    alone (conflict markers, as for any text file); every other page merged. The person resolves
    it; the page stays theirs, the rest is the one-machine wiki."""
    expected = one_machine(tmp_path / "one", {**SIDE_A, **SIDE_B})
    origin, a, b = two_clones(tmp_path)
    rel = "concepts/rollback.md"
    (a.wiki / rel).write_text((a.wiki / rel).read_text() + MY_LINE)
    git(a.root, "commit", "-q", "-am", "my note on rollback")
    puller, pushed = (a, b) if first == "a" else (b, a)
    git(pushed.root, "push", "-q", str(origin), "main")
    merge = pull(puller, origin)
    assert merge.returncode != 0 and conflicts(puller) == [f"wiki/{rel}"]
    assert "<<<<<<<" in (puller.wiki / rel).read_text()
    # pages written, nothing committed while the merge is in progress
    tip = git(puller.root, "rev-parse", "HEAD")
    during = compile_(puller)
    assert rel in during.kept and git(puller.root, "rev-parse", "HEAD") == tip
    # the person resolves it: their line on a's version of the page
    git(puller.root, "checkout", "--ours" if puller is a else "--theirs", "--", f"wiki/{rel}")
    git(puller.root, "add", "-A", "wiki")
    git(puller.root, "commit", "-q", "--no-edit")
    report = compile_(puller)
    assert MY_LINE.strip() in (puller.wiki / rel).read_text()
    assert rel not in report.updated and report.kept in ([], [rel])
    # every other page is the one-machine wiki's (index.md describes the person's page as it is)
    got = wiki_pages(puller)
    assert {k: v for k, v in got.items() if k not in (rel, "index.md")} == \
        {k: v for k, v in expected.items() if k not in (rel, "index.md")}


@pytest.mark.parametrize("first", ["a", "b"])
def test_two_sources_that_want_one_page_name_get_the_names_one_machine_gives(tmp_path: Path, first: str) -> None:
    """notes.md on one side and notes.txt on the other both want sources/notes.md: after the
    pull the name is the first file's in path order, as a compile of both on one machine gives,
    and the other's page is written again under its own name."""
    md = "# Notes in Markdown\n\nThe canary release took 12 minutes in 2026. A rollback followed.\n"
    txt = "Notes in plain text\n\nThe rollback took 3 minutes in 2027. The canary release went on.\n"
    expected = one_machine(tmp_path / "one", {**SIDE_A, **SIDE_B, "notes.md": md, "notes.txt": txt})
    origin, a, b = two_clones(tmp_path)
    for ws, name, body in ((a, "notes.txt", txt), (b, "notes.md", md)):
        write(ws, name, body)
        compile_(ws)
        git(ws.root, "add", "raw")
        git(ws.root, "commit", "-q", "-m", "notes")
    assert (a.wiki / "sources/notes.md").read_bytes() != (b.wiki / "sources/notes.md").read_bytes()
    puller, pushed = (a, b) if first == "a" else (b, a)
    git(pushed.root, "push", "-q", str(origin), "main")
    assert pull(puller, origin).returncode == 0
    report = compile_(puller)
    assert report.kept == [] and wiki_pages(puller) == expected
    git(puller.root, "push", "-q", str(origin), "main")
    assert pull(pushed, origin).returncode == 0
    assert compile_(pushed).kept == [] and wiki_pages(pushed) == expected


def test_a_file_no_loader_reads_does_not_take_a_documents_page_name(tmp_path: Path) -> None:
    """schema.dtd is skipped (no loader reads it); schema.txt, compiled in the same run, is named
    as it would be alone, so a clone that only had schema.txt names it alike."""
    alone = Workspace.at(tmp_path / "alone")
    init_workspace(alone)
    write(alone, "schema.txt", "The schema\n\nA rollback needs the schema of 2026.\n")
    compile_(alone)
    both = Workspace.at(tmp_path / "both")
    init_workspace(both)
    write(both, "schema.dtd", "<!ELEMENT note (to, body)>\n")
    write(both, "schema.txt", "The schema\n\nA rollback needs the schema of 2026.\n")
    report = compile_(both)
    assert [p for p, _ in report.skipped] == ["raw/schema.dtd"]
    assert (both.wiki / "sources/schema.md").read_bytes() == (alone.wiki / "sources/schema.md").read_bytes()


def test_a_gitattributes_a_person_changed_is_left_and_wikimem_says_what_it_needs(tmp_path: Path, caplog) -> None:
    origin, a, b = two_clones(tmp_path)
    attributes = a.wiki / ".gitattributes"
    assert attributes.read_text() == gitrepo.ATTRIBUTES
    mine = "# my own rules\n*.md diff=markdown\nlog.md merge=wikimem-log\n"
    attributes.write_text(mine)
    git(a.root, "commit", "-q", "-am", "my attributes")
    write(a, "theta.md", "# Theta\n\nA canary release in 2028 took 3 minutes.\n")
    gitrepo.warned.clear()
    compile_(a)
    assert attributes.read_text() == mine
    said = [r.getMessage() for r in caplog.records if ".gitattributes" in r.getMessage()]
    assert len(said) == 1 and "sources/** merge=wikimem-page" in said[0] and "log.md merge" not in said[0]
    assert gitrepo.attributes_needed(gitrepo.ATTRIBUTES) == []


def test_the_attributes_an_earlier_wikimem_wrote_are_brought_up_to_date(tmp_path: Path) -> None:
    origin, a, b = two_clones(tmp_path)
    (a.wiki / ".gitattributes").write_text(gitrepo.EARLIER_ATTRIBUTES[0])
    git(a.root, "commit", "-q", "-am", "as an earlier wikimem left it")
    write(a, "theta.md", "# Theta\n\nA canary release in 2028 took 3 minutes.\n")
    compile_(a)
    assert (a.wiki / ".gitattributes").read_text() == gitrepo.ATTRIBUTES


def test_a_clone_without_wikimem_state_takes_the_pages_as_they_are(tmp_path: Path) -> None:
    """A fresh clone (no .wikimem/ at all) of a merged wiki: nothing compiled again, nothing kept."""
    origin, a, b = two_clones(tmp_path)
    git(b.root, "push", "-q", str(origin), "main")
    assert pull(a, origin).returncode == 0
    compile_(a)
    git(a.root, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "c")
    c = Workspace.at(tmp_path / "c")
    report = compile_(c)
    assert report.noop and report.kept == []
    assert wiki_pages(c) == wiki_pages(a)


# --- the anthropic backend: the model merges the two versions ---------------------------------

CONCEPT = """---
title: Cryptobiosis
kind: concept
sources:
- {source}
aliases: []
---
# Cryptobiosis

A state in which metabolism stops.

## Key points

- {point}
"""
A_POINT = '"Tardigrades revived after 30 years." ([a.md, line 3](../../raw/a.md#L3))'
B_POINT = '"Rotifers revived after 24,000 years." ([b.md, line 3](../../raw/b.md#L3))'


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as fake:
        yield fake


def _model_clones(tmp_path: Path) -> tuple[Path, Workspace, Workspace]:
    """Two clones whose models each wrote the same concept page from their own source (the
    pages as the anthropic backend certifies them), committed; B pushed."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    a = Workspace.at(tmp_path / "a")
    init_workspace(a)
    git(a.root, "init", "-q", "-b", "main")
    git(a.root, "add", "wiki", "wikimem.toml")
    git(a.root, "commit", "-q", "-m", "start a wiki")
    gitrepo.prepare(a, gitrepo.repository(a, load_settings(a.root, environ={})))  # type: ignore[arg-type]
    git(a.root, "add", "wiki")
    git(a.root, "commit", "-q", "-m", "attributes")
    git(a.root, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "b")
    b = Workspace.at(tmp_path / "b")
    gitrepo.configure_merge(gitrepo.repository(b, load_settings(b.root, environ={})))  # type: ignore[arg-type]
    for ws, source, point in ((a, "raw/a.md", A_POINT), (b, "raw/b.md", B_POINT)):
        page = ws.wiki / "concepts/cryptobiosis.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(certify(CONCEPT.format(source=source, point=point), "anthropic:claude-test"))
        git(ws.root, "add", "wiki")
        git(ws.root, "commit", "-q", "-m", "wikimem compile: a source", "-m", "Wikimem-Operation: compile")
    git(b.root, "push", "-q", str(origin), "main")
    return origin, a, b


def test_the_model_merges_two_versions_of_a_page_both_clones_wrote(tmp_path: Path, server: FakeMessagesServer) -> None:
    origin, a, _b = _model_clones(tmp_path)
    merge = pull(a, origin)
    assert merge.returncode == 0 and "CONFLICT" not in merge.stdout
    merged = CONCEPT.format(source="raw/a.md", point=A_POINT) + f"- {B_POINT}\n"
    server.add(reply(text(merged)))
    report = compile_(a, backend="anthropic", base_url=server.url)
    page = (a.wiki / "concepts/cryptobiosis.md").read_text()
    assert A_POINT in page and B_POINT in page and "<<<<<<<" not in page
    assert "- raw/a.md\n- raw/b.md\n" in page  # both versions' sources
    assert page_owner(page).wikimems and report.kept == []
    asked = server.bodies[0]["messages"][0]["content"][0]["text"]
    assert A_POINT in asked and B_POINT in asked and "wikimem: " not in asked
    state = State(a.state_db)
    try:
        assert not persons_page(page.encode(), state.pages().get("concepts/cryptobiosis.md"))
    finally:
        state.close()


@pytest.mark.parametrize("model", ["drops a line", "api error"])
def test_a_merge_the_model_gets_wrong_keeps_both_sides_line_by_line(tmp_path: Path, server: FakeMessagesServer,
                                                                     model: str) -> None:
    from fake_messages_server import Error

    origin, a, _b = _model_clones(tmp_path)
    assert pull(a, origin).returncode == 0
    if model == "drops a line":
        server.add(reply(text(CONCEPT.format(source="raw/a.md", point=A_POINT))))
    else:
        server.add(*[Error(400, "bad request", "invalid_request_error")] * 3)
    compile_(a, backend="anthropic", base_url=server.url)
    page = (a.wiki / "concepts/cryptobiosis.md").read_text()
    assert A_POINT in page and B_POINT in page and "<<<<<<<" not in page and "=======" not in page
    assert page_owner(page).wikimems
    assert memory  # the fake server's helpers, imported for the scripts above

"""Who wrote a page, known from the page itself (issue 37).

Every page wikimem writes ends its front matter with `wikimem: <writer> <digest>`: any copy
of the page (a clone, a backup, state rebuilt after state.db was lost) tells wikimem's text
from a person's edit without state.db. These tests hold the digest's contract, the damaged
state.db matrix (a person's edit made before the damage is kept in every form of damage),
and every writer's journal (a `lint --fix` killed at each write freezes nothing).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from conftest import git, snapshot, write
from test_faults import NOTES, Killed, faults, pages, persons_pages, seeded
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.ownership import persons_page
from wikimem.pages import (
    OWNER_KEY,
    Page,
    certify,
    content_hash,
    loads_page,
    page_digest,
    page_owner,
    simple_meta,
    split_front_matter,
)
from wikimem.state import State
from wikimem.workspace import Workspace

PAGE = """---
title: Canary release
kind: concept
sources:
- raw/alpha.md
- raw/beta.md
mentioned_in: 2
aliases: []
updated: 2027-01-01
---
# Canary release

A *canary release* sends 5% of traffic to a new build ([alpha.md, line 3](../../raw/alpha.md#L3)).
"""


def compile_(ws: Workspace, **kwargs):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}), **kwargs)


# --- the digest ------------------------------------------------------------------------------


def test_a_certified_page_says_it_is_wikimems_and_who_wrote_it() -> None:
    text = certify(PAGE, "offline:44.27.3")
    owner = page_owner(text)
    assert owner.wikimems and owner.writer == "offline:44.27.3"
    fm, _, _ = split_front_matter(text)
    assert fm is not None
    line = next(line for line in fm.split("\n") if line.startswith(OWNER_KEY + ":"))
    assert line.startswith("wikimem: offline:44.27.3 ")
    # the fast path reads the line as YAML does
    assert simple_meta(fm) == {k: (v.isoformat() if hasattr(v, "isoformat") else v)
                               for k, v in yaml.safe_load(fm).items()}
    assert certify(text, "offline:44.27.3") == text  # certifying again changes nothing
    assert page_owner(certify(text, "offline:45.0")).writer == "offline:45.0"


@pytest.mark.parametrize("redump", ["python-frontmatter", "sorted keys", "crlf", "trailing spaces", "no final newline"])
def test_a_page_dumped_again_by_another_tool_keeps_its_digest(redump: str) -> None:
    """What an editor or a script that loads and saves front matter does to a page is not an edit."""
    text = certify(PAGE, "offline:44.27.3")
    if redump == "python-frontmatter":
        again = Page("x.md", loads_page("x.md", text).meta, loads_page("x.md", text).body).dumps()
    elif redump == "sorted keys":
        fm, body, _ = split_front_matter(text)
        again = "---\n" + yaml.safe_dump(yaml.safe_load(fm or ""), sort_keys=True) + "---\n" + body
    elif redump == "crlf":
        again = text.replace("\n", "\r\n")
    elif redump == "trailing spaces":
        again = text.replace("#L3)).\n", "#L3)).  \n").replace("# Canary release\n", "# Canary release \n")
    else:
        again = text.rstrip("\n")
    assert again != text
    assert page_owner(again).wikimems


@pytest.mark.parametrize("edit", ["body line", "appended line", "title", "a source more", "a field added",
                                  "digest copied onto an edit", "digest forged", "digest garbled",
                                  "digest removed", "front matter removed"])
def test_a_page_whose_text_is_not_what_its_digest_says_is_a_persons(edit: str) -> None:
    text = certify(PAGE, "offline:44.27.3")
    fm, body, _ = split_front_matter(text)
    assert fm is not None
    line = next(x for x in fm.split("\n") if x.startswith("wikimem:"))
    changed = {
        "body line": text.replace("5% of traffic", "10% of traffic"),
        "appended line": text + "\nMy own note: ask Dana.\n",
        "title": text.replace("title: Canary release", "title: Canary releases"),
        "a source more": text.replace("- raw/beta.md\n", "- raw/beta.md\n- raw/gamma.md\n"),
        "a field added": text.replace("aliases: []\n", "aliases: []\ntags: [deploy]\n"),
        "digest copied onto an edit": certify(PAGE.replace("5%", "6%"), "x").replace(
            next(x for x in split_front_matter(certify(PAGE.replace("5%", "6%"), "x"))[0].split("\n")  # type: ignore[union-attr]
                 if x.startswith("wikimem:")), line),
        "digest forged": text.replace(line, "wikimem: offline:44.27.3 " + "0" * 32),
        "digest garbled": text.replace(line, "wikimem: written by me"),
        "digest removed": text.replace(line + "\n", ""),
        "front matter removed": body,
    }[edit]
    owner = page_owner(changed)
    assert not owner.wikimems
    assert owner.stamped == (edit not in ("digest removed", "front matter removed"))


def test_the_updated_stamp_is_not_part_of_the_digest() -> None:
    """`updated:` says when, not what: two machines rendering the same page on different days
    write one digest, and a person who only touches the date has not edited the page."""
    text = certify(PAGE, "offline:44.27.3")
    assert page_owner(text.replace("updated: 2027-01-01", "updated: 2030-05-05")).wikimems
    meta = loads_page("x.md", text).meta
    body = loads_page("x.md", text).body
    assert page_digest(meta, body) == page_digest({**meta, "updated": "1999-01-01"}, body)


def test_every_page_a_compile_writes_certifies_itself(tmp_path: Path) -> None:
    ws = seeded(tmp_path / "ws")
    written = {rel: data for rel, data in snapshot(ws.wiki).items()
               if rel.startswith(("sources/", "concepts/", "facts/")) and not rel.endswith("index.md")}
    assert written and all(page_owner(data).wikimems for data in written.values()), \
        [rel for rel, data in written.items() if not page_owner(data).wikimems]
    assert {page_owner(data).writer for data in written.values()} == {page_owner(written["sources/alpha.md"]).writer}


def test_a_page_re_saved_by_an_editor_is_still_wikimems(tmp_path: Path) -> None:
    """An editor that rewrites front matter in its own style (keys sorted, quotes) and CRLF line
    ends: the next compile that touches the page updates it rather than keeping it as a person's."""
    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources" / "beta.md"
    fm, body, _ = split_front_matter(page.read_text())
    page.write_bytes(("---\n" + yaml.safe_dump(yaml.safe_load(fm or ""), sort_keys=True) + "---\n" + body)
                     .replace("\n", "\r\n").encode())
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    report = compile_(ws)
    assert report.kept == [] and "sources/beta.md" in report.updated
    assert "6 minutes" in page.read_text()


# --- a damaged state.db ----------------------------------------------------------------------

DAMAGE = ["garbage", "truncated", "empty file", "a directory", "wrong schema", "other columns",
          "missing tables", "deleted", ".wikimem deleted"]


def damage(ws: Workspace, how: str) -> None:
    db = ws.state_db
    for extra in (db.with_name("state.db-wal"), db.with_name("state.db-shm")):
        extra.unlink(missing_ok=True)
    data = db.read_bytes()
    if how == "garbage":
        db.write_bytes(os.urandom(4096))
    elif how == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif how == "empty file":
        db.write_bytes(b"")
    elif how == "a directory":
        db.unlink()
        db.mkdir()
        (db / "what").write_text("a folder where state.db was\n")
    elif how == "wrong schema":  # another program's database under the name
        db.unlink()
        other = sqlite3.connect(db)
        other.executescript("CREATE TABLE sources (id INTEGER PRIMARY KEY, name TEXT); "
                            "INSERT INTO sources (name) VALUES ('x'); CREATE TABLE pages (url TEXT);")
        other.close()
    elif how == "other columns":  # wikimem's schema version, tables of another shape
        other = sqlite3.connect(db)
        other.executescript("DROP TABLE pages; CREATE TABLE pages (path TEXT PRIMARY KEY, hash TEXT);")
        other.close()
    elif how == "missing tables":
        other = sqlite3.connect(db)
        other.executescript("DROP TABLE pages; DROP TABLE sources;")
        other.close()
    elif how == "deleted":
        db.unlink()
    elif how == ".wikimem deleted":
        shutil.rmtree(ws.state_dir)
    else:  # pragma: no cover - a new form is added to DAMAGE and here together
        raise AssertionError(how)


PERSONS_LINE = "\nMy own note, made before state.db was damaged: ask Dana about the canary.\n"


@pytest.mark.parametrize("with_git", [False, True], ids=["no git", "git"])
@pytest.mark.parametrize("how", DAMAGE)
def test_a_persons_edit_made_before_state_db_was_damaged_is_kept(tmp_path: Path, how: str, with_git: bool,
                                                                 git_env: None) -> None:
    """A person edits a source page and a concept page; state.db is then damaged (or lost);
    the next compile touches both pages (their sources change, a new one arrives). Both edits
    are kept, wikimem's versions go to .wikimem/proposed/, and every other page is wikimem's."""
    ws = seeded(tmp_path / "ws")
    if with_git:
        git(ws.root, "init", "-q", "-b", "main")
        git(ws.root, "add", "raw", "wiki", "wikimem.toml")
        git(ws.root, "commit", "-q", "-m", "a wiki")
    edited = ["sources/beta.md", "concepts/rollback.md"]
    for rel in edited:
        page = ws.wiki / rel
        page.write_text(page.read_text() + PERSONS_LINE)
    if with_git:
        git(ws.root, "commit", "-q", "-am", "my notes on two pages")
    damage(ws, how)
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    write(ws, "delta.md", "# Delta notes\n\nThe rollback drill ran on 2 May 2026. A rollback took 7 minutes.\n")

    report = compile_(ws)
    for rel in edited:
        assert PERSONS_LINE.strip() in (ws.wiki / rel).read_text(), f"{rel} lost the person's line ({how})"
        assert rel in report.kept, (how, report.kept)
        assert (ws.state_dir / "proposed" / rel).is_file()
    assert "raw/delta.md" in report.compiled and report.failed == []
    assert sorted(persons_pages(ws)) == sorted(edited)
    # and from now on it is as it would have been with an undamaged state.db
    again = compile_(ws)
    assert again.noop and PERSONS_LINE.strip() in (ws.wiki / "sources/beta.md").read_text()


@pytest.mark.parametrize("how", ["garbage", "a directory", "missing tables"])
def test_damaged_state_without_a_persons_edit_freezes_no_page(tmp_path: Path, how: str) -> None:
    ws = seeded(tmp_path / "ws")
    damage(ws, how)
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    report = compile_(ws)
    assert report.kept == [] and persons_pages(ws) == []
    assert any("state.db" in w for w in report.warnings) or how == "deleted"


@pytest.mark.parametrize("digest", ["removed", "forged", "garbled", "copied from another page"])
def test_a_page_whose_digest_is_wrong_missing_or_forged_is_kept_after_state_is_lost(tmp_path: Path, digest: str) -> None:
    """A person's edit that also touched the `wikimem:` line: state.db is lost, the page's
    source changes; the page is a person's and is kept, every other page is wikimem's."""
    ws = seeded(tmp_path / "ws")
    page = ws.wiki / "sources/beta.md"
    text = page.read_text() + PERSONS_LINE
    line = next(x for x in text.split("\n") if x.startswith("wikimem: "))
    other = next(x for x in (ws.wiki / "sources/alpha.md").read_text().split("\n") if x.startswith("wikimem: "))
    page.write_text({
        "removed": text.replace(line + "\n", ""),
        "forged": text.replace(line, line[:-32] + "f" * 32),
        "garbled": text.replace(line, "wikimem: yes, wikimem wrote this"),
        "copied from another page": text.replace(line, other),
    }[digest])
    shutil.rmtree(ws.state_dir)
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    report = compile_(ws)
    assert report.kept == ["sources/beta.md"] and PERSONS_LINE.strip() in page.read_text()
    assert persons_pages(ws) == ["sources/beta.md"]


def test_a_wiki_written_before_pages_were_certified_is_trusted_as_before(tmp_path: Path) -> None:
    """Pages without any `wikimem:` line (an older wikimem wrote them): state rebuilt from them
    takes them as wikimem's, as it did, so an upgrade does not freeze a whole wiki."""
    ws = seeded(tmp_path / "ws")
    for file in (ws.wiki).rglob("*.md"):
        text = file.read_text()
        if "\nwikimem: " in text:
            file.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith("wikimem: ")))
    shutil.rmtree(ws.state_dir)
    write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
    report = compile_(ws)
    assert report.kept == [] and persons_pages(ws) == []
    assert page_owner((ws.wiki / "sources/beta.md").read_bytes()).wikimems


# --- every writer journals -------------------------------------------------------------------


def frozen(ws: Workspace) -> list[str]:
    """Pages the compiler would take for a person's now (ownership.persons_page: neither the
    bytes state.db records nor a page that certifies itself)."""
    state = State(ws.state_db)
    try:
        recorded = state.pages()
    finally:
        state.close()
    return sorted(rel for rel, data in snapshot(ws.wiki).items()
                  if rel.startswith(("sources/", "concepts/")) and not rel.endswith("index.md")
                  and persons_page(data, recorded.get(rel)))


def _fixable(ws: Workspace) -> None:
    """Source pages that link a removed page: `lint --fix` unlinks them (several pages written)."""
    state = State(ws.state_db)
    try:
        recorded = state.pages()
        for rel in ("sources/alpha.md", "sources/beta.md", "concepts/rollback.md"):
            page = ws.wiki / rel
            text = page.read_text().rstrip("\n") + "\n\nSee [the old page](../sources/gone.md).\n"
            page.write_text(certify(text, "offline:test"))
            state.put_page(rel, content_hash(page.read_bytes()), *recorded[rel][1:])
    finally:
        state.close()


@pytest.mark.parametrize("kind", ["kill", pytest.param("disk full", marks=pytest.mark.slow)])
def test_a_lint_fix_stopped_at_any_write_freezes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """`lint --fix` killed (or out of disk) at each write and sync point in turn: the next
    compile takes no page for a person's, and a second fix finishes the job."""
    from wikimem.lint import run_lint

    points = 0
    for at in range(1, 100):
        ws = seeded(tmp_path / f"{kind}-{at}")
        _fixable(ws)
        settings = load_settings(ws.root, environ={})
        error: BaseException = Killed() if kind == "kill" else OSError(errno.ENOSPC, "No space left on device")
        with faults(monkeypatch, at, error) as plan, contextlib.suppress(Killed, Exception):
            run_lint(ws, settings, fix=True)  # a full disk: a one-line error, as the command says
        if not plan.fired:
            break
        points += 1
        assert frozen(ws) == [], f"stopped at point {at}"
        write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
        report = compile_(ws)
        assert report.kept == [], f"stopped at point {at}: {report.kept}"
        assert persons_pages(ws) == [], f"stopped at point {at}"
        run_lint(ws, settings, fix=True)
        assert all("gone.md" not in (ws.wiki / rel).read_text() for rel in ("sources/alpha.md", "concepts/rollback.md"))
        assert persons_pages(ws) == []
    assert points >= 3
    assert pages  # the fault helpers of test_faults are the ones used here


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["kill", "disk full"])
def test_an_undo_stopped_at_any_write_freezes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str,
                                                     git_env: None) -> None:
    """`undo` killed (or out of disk) at each write point in turn: every page it put back is
    wikimem's, and the next compile takes none for a person's."""
    from wikimem.history import undo

    points = 0
    for at in range(1, 100):
        ws = seeded(tmp_path / f"{kind}-{at}")
        git(ws.root, "init", "-q", "-b", "main")
        git(ws.root, "add", "raw", "wiki", "wikimem.toml")
        git(ws.root, "commit", "-q", "-m", "a wiki")
        write(ws, "beta.md", NOTES["beta.md"] + "\nThe rollback budget became 6 minutes in 2027.\n")
        compile_(ws)
        error: BaseException = Killed() if kind == "kill" else OSError(errno.ENOSPC, "No space left on device")
        with faults(monkeypatch, at, error) as plan, contextlib.suppress(Killed, Exception):
            undo(ws, load_settings(ws.root, environ={}))
        if not plan.fired:
            break
        points += 1
        assert frozen(ws) == [], f"stopped at point {at}"
        report = compile_(ws)
        assert report.kept == [] and persons_pages(ws) == [], f"stopped at point {at}: {report.kept}"
    assert points >= 3


@pytest.mark.parametrize("kind", ["kill", "disk full"])
def test_a_query_save_stopped_at_any_write_leaves_an_answer_that_is_wikimems(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    from wikimem.query import answer

    points = 0
    for at in range(1, 100):
        ws = seeded(tmp_path / f"{kind}-{at}")
        settings = load_settings(ws.root, environ={})
        error: BaseException = Killed() if kind == "kill" else OSError(errno.ENOSPC, "No space left on device")
        with faults(monkeypatch, at, error) as plan, contextlib.suppress(Killed, Exception):
            answer(ws, settings, "How long does a rollback take?", save=True)
        if not plan.fired:
            break
        points += 1
        for file in (ws.wiki / "answers").glob("*.md"):
            assert page_owner(file.read_bytes()).wikimems, f"stopped at point {at}"
        assert compile_(ws).kept == [] and frozen(ws) == []
        saved = answer(ws, settings, "How long does a rollback take?", save=True)
        assert saved.saved and page_owner((ws.root / saved.saved).read_bytes()).wikimems
    assert points >= 2

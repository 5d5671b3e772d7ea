"""The offline compile end to end, on small fixtures written here."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import single_threaded, snapshot, write
from linkcheck import broken_links
from wikimem.cli import main
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.errors import WorkspaceBusy
from wikimem.init import init_workspace
from wikimem.pages import certify, loads_page
from wikimem.workspace import Workspace, writer_lock

ALPHA = """---
title: Alpha notes
date: 2025-03-01
---
# Alpha notes

The *canary release* sends 5% of traffic to a new build for 30 minutes. A canary release
protects users from bad builds. See [the checklist](checklist.md) and [the site](/docs/deploy).

## Rollback

A rollback returns the service to build 2290 within 4 minutes.
"""

BETA = """# Beta notes

Our canary release policy changed in 2026: the canary release now takes 10% of traffic.
The rollback budget is 4 minutes. The rollback is done by the on-call engineer.

## Canary release

Every canary release is watched for 30 minutes.
"""

GAMMA = "Gamma notes\n\nA rollback is cheap. The canary release caught the fault on 3 October 2026.\n"


def compile_(ws: Workspace, **kwargs):
    return compile_workspace(ws, load_settings(ws.root, environ={}), **kwargs)


def mtimes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def three(ws: Workspace) -> Workspace:
    write(ws, "alpha.md", ALPHA)
    write(ws, "sub dir/beta.md", BETA)
    write(ws, "gamma.txt", GAMMA)
    return ws


def test_compile_makes_source_and_concept_pages_linked_both_ways(three: Workspace) -> None:
    report = compile_(three)
    assert sorted(report.compiled) == ["raw/alpha.md", "raw/gamma.txt", "raw/sub dir/beta.md"]
    wiki = three.wiki
    sources = sorted(p.name for p in (wiki / "sources").glob("*.md"))
    assert sources == ["alpha.md", "gamma.md", "sub-dir-beta.md"]
    concepts = sorted(p.name for p in (wiki / "concepts").glob("*.md"))
    assert "canary-release.md" in concepts and "rollback.md" in concepts
    alpha = loads_page("sources/alpha.md", (wiki / "sources/alpha.md").read_text())
    assert alpha.meta["kind"] == "source"
    assert alpha.meta["sources"] == ["raw/alpha.md"]
    assert alpha.meta["source_sha256"] == hashlib.sha256((three.raw / "alpha.md").read_bytes()).hexdigest()
    assert alpha.meta["date"] == "2025-03-01"
    assert "(../concepts/canary-release.md)" in alpha.body
    canary = loads_page("c", (wiki / "concepts/canary-release.md").read_text())
    assert canary.meta["kind"] == "concept"
    assert set(canary.meta["sources"]) == {"raw/alpha.md", "raw/sub dir/beta.md", "raw/gamma.txt"}
    assert "(../sources/alpha.md)" in canary.body
    # key facts are verbatim, with a line citation into raw/
    assert '"A rollback returns the service to build 2290 within 4 minutes."' in alpha.body
    assert "(../../raw/alpha.md#L12)" in alpha.body
    assert broken_links(wiki) == []


def test_a_concept_page_lists_the_sources_it_shows_and_counts_every_mention(ws: Workspace) -> None:
    from wikimem.backends.offline_pages import ALSO_LISTED
    from wikimem.index_page import entry_from_text

    n = ALSO_LISTED + 20
    topics = ["rollback", "feature flag", "load balancer", "error budget", "blue green deployment"]
    for i in range(2 * n):
        topic = topics[i % len(topics)]
        canary = f"\n## Canary release\n\nThe canary release of build {i} ran for {i + 5} minutes.\n" if i % 2 else ""
        write(ws, f"notes/n{i:02d}.md", f"# {topic.title()} note {i}\n\nA {topic} keeps build {i} safe. "
                                       f"The {topic} on host {i} reported {i * 3} warnings.\n{canary}")
    compile_(ws)
    text = (ws.wiki / "concepts/canary-release.md").read_text()
    canary = loads_page("c", text)
    shown = canary.meta["sources"]
    assert canary.meta["mentioned_in"] == n
    assert len(shown) < n and len(set(shown)) == len(shown)
    # every source listed is one the page links, and every source page it links is listed
    linked = {m for m in re.findall(r"\(\.\./sources/([^)#]+)\.md\)", canary.body)}
    assert {s.removeprefix("raw/").removesuffix(".md").replace("/", "-") for s in shown} == linked
    assert f"and {n - len(shown)} more" in canary.body
    # the catalogs count every mention, not the sources listed
    assert entry_from_text("concepts/canary-release.md", text).sources == n


def test_a_concept_page_states_large_counts_to_two_figures() -> None:
    from wikimem.backends.offline_pages import _about

    assert [_about(n) for n in (0, 7, 99, 100, 104, 105, 1094, 1095, 4774, 7519, 12345)] == \
        [0, 7, 99, 100, 100, 110, 1100, 1100, 4800, 7500, 12000]


def test_quotes_drop_the_sources_own_relative_links(three: Workspace) -> None:
    compile_(three)
    text = "".join(p.read_text() for p in three.wiki.rglob("*.md"))
    assert "checklist.md)" not in text and "/docs/deploy" not in text
    assert broken_links(three.wiki) == []


def test_noop_compile_writes_nothing(three: Workspace) -> None:
    compile_(three)
    before, times = snapshot(three.wiki), mtimes(three.wiki)
    report = compile_(three)
    assert report.noop
    assert snapshot(three.wiki) == before
    assert mtimes(three.wiki) == times  # not even rewritten with the same bytes


def test_two_fresh_compiles_are_byte_identical(tmp_path: Path) -> None:
    results = []
    for name in ("one", "two"):
        ws = Workspace.at(tmp_path / name)
        init_workspace(ws)
        write(ws, "alpha.md", ALPHA)
        write(ws, "sub dir/beta.md", BETA)
        write(ws, "gamma.txt", GAMMA)
        compile_(ws)
        pages = snapshot(ws.wiki)
        pages.pop("log.md")  # log.md records wall-clock times of operations, by design
        results.append(pages)
    assert results[0] == results[1]
    body = "".join(v.decode() for v in results[0].values())
    assert str(tmp_path) not in body  # no absolute paths in pages


def test_changed_source_updates_its_pages_only(three: Workspace) -> None:
    compile_(three)
    before = snapshot(three.wiki)
    write(three, "gamma.txt", GAMMA + "\nThe rollback drill runs every 14 days.\n")
    report = compile_(three)
    assert report.compiled == ["raw/gamma.txt"]
    after = snapshot(three.wiki)
    changed = {k for k in after if before.get(k) != after[k]}
    assert "sources/gamma.md" in changed
    assert "sources/alpha.md" not in changed
    assert "every 14 days" in after["sources/gamma.md"].decode()


def test_deleted_source_removes_its_page_and_mentions(three: Workspace) -> None:
    compile_(three)
    (three.raw / "gamma.txt").unlink()
    report = compile_(three)
    assert report.removed_sources == ["raw/gamma.txt"]
    assert not (three.wiki / "sources/gamma.md").exists()
    text = "".join(p.read_text() for p in three.wiki.rglob("*.md") if p.name != "log.md")
    assert "gamma" not in text.lower()
    assert broken_links(three.wiki) == []


def test_renamed_source_moves_without_recompiling(three: Workspace) -> None:
    compile_(three)
    (three.raw / "archive").mkdir()
    os.rename(three.raw / "gamma.txt", three.raw / "archive" / "gamma.txt")
    report = compile_(three)
    assert report.renamed == [("raw/gamma.txt", "raw/archive/gamma.txt")]
    assert report.compiled == ["raw/archive/gamma.txt"]
    assert not (three.wiki / "sources/gamma.md").exists()
    assert (three.wiki / "sources/archive-gamma.md").exists()
    assert broken_links(three.wiki) == []
    log = (three.wiki / "log.md").read_text()
    assert "rename | raw/gamma.txt -> raw/archive/gamma.txt" in log


def test_a_persons_edit_is_never_overwritten(three: Workspace) -> None:
    compile_(three)
    page = three.wiki / "sources/gamma.md"
    edited = page.read_text() + "\nMy own note: ask Dana about the drill.\n"
    page.write_text(edited)
    write(three, "gamma.txt", GAMMA + "\nA new sentence from 2027.\n")
    report = compile_(three)
    assert "sources/gamma.md" in report.kept
    assert page.read_text() == edited
    assert (three.state_dir / "proposed/sources/gamma.md").exists()
    assert "kept (edited by a person; not overwritten): sources/gamma.md" in (three.wiki / "log.md").read_text()
    # and a deleted source does not delete an edited page either
    (three.raw / "gamma.txt").unlink()
    report = compile_(three)
    assert page.read_text() == edited


def test_state_is_derived_a_fresh_clone_recompiles_nothing(three: Workspace) -> None:
    compile_(three)
    before, times = snapshot(three.wiki), mtimes(three.wiki)
    shutil.rmtree(three.state_dir)
    report = compile_(three)
    assert report.compiled == []
    assert snapshot(three.wiki) == before
    assert mtimes(three.wiki) == times
    assert compile_(three).noop


def test_a_fresh_clone_of_pages_an_older_version_rendered_renders_them_again(three: Workspace) -> None:
    """State rebuilt from the pages trusts them, unless log.md says another version of the
    backend rendered them: an upgrade then re-renders them as it would with its state.db."""
    compile_(three)
    page = three.wiki / "sources/alpha.md"
    # what an older version wrote: another text, certified by that version
    page.write_text(certify(page.read_text().replace("# Alpha notes", "# Alpha notes (old rendering)"), "offline:0.1"))
    log = three.wiki / "log.md"
    log.write_text(re.sub(r"^- backend: offline:[\w.]+,", "- backend: offline:0.1,", log.read_text(), flags=re.M))
    shutil.rmtree(three.state_dir)  # a fresh clone: wiki/ and raw/ only
    report = compile_(three)
    assert any("re-rendered every page" in w for w in report.warnings)
    assert "old rendering" not in page.read_text()
    # the same pages, rendered by this version: trusted as they are
    before = snapshot(three.wiki)
    shutil.rmtree(three.state_dir)
    report = compile_(three)
    assert not any("re-rendered" in w for w in report.warnings) and report.compiled == []
    assert snapshot(three.wiki) == before


def test_log_is_appended_in_the_documented_form(three: Workspace) -> None:
    compile_(three)
    log1 = (three.wiki / "log.md").read_text()
    assert re.search(r"^## \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\] ingest \| Alpha notes \(raw/alpha\.md\)$", log1, re.M)
    assert re.search(r"^- created: sources/alpha\.md", log1, re.M)
    assert re.search(r"^- backend: offline:[\w.]+, \d+\.\d\d s$", log1, re.M)
    write(three, "delta.md", "# Delta\n\nA canary release and a rollback, on 5 May 2026.\n")
    compile_(three)
    log2 = (three.wiki / "log.md").read_text()
    assert log2.startswith(log1)
    assert "ingest | Delta (raw/delta.md)" in log2[len(log1):]


@pytest.mark.slow
def test_index_stays_within_agent_caps_at_any_size(ws: Workspace) -> None:
    for i in range(450):
        write(ws, f"bulk/note-{i:04d}.md", f"# Note {i} about canary release number {i}\n\n"
              f"The canary release {i} took {i} minutes and the rollback {i} took {i + 1} minutes.\n")
    compile_(ws)
    index = ws.wiki / "index.md"
    text = index.read_text()
    assert len(text.splitlines()) <= 200 and len(text.encode()) <= 25_000
    catalogs = [p for p in ws.wiki.rglob("index*.md") if p != index]
    assert catalogs, "a large wiki links to per-section catalogs"
    for catalog in catalogs:
        body = catalog.read_text()
        assert len(body.splitlines()) <= 200 and len(body.encode()) <= 25_000, catalog
    listed = "".join(p.read_text() for p in ws.wiki.rglob("index*.md"))
    for page in (ws.wiki / "sources").glob("note-*.md"):
        assert f"({page.name})" in listed or f"sources/{page.name})" in listed
    assert broken_links(ws.wiki) == []


def test_second_writer_is_told_clearly(three: Workspace) -> None:
    with writer_lock(three, holder="wikimem daemon"):
        with pytest.raises(WorkspaceBusy, match="wikimem daemon"):
            compile_(three)
        result = CliRunner().invoke(main, ["compile", "--root", str(three.root)])
        assert result.exit_code == 4
        assert "wikimem daemon" in result.output


def test_cli_json_contract(three: Workspace) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["compile", "--root", str(three.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"ok", "backend", "noop", "compiled", "unchanged", "renamed", "removed_sources", "skipped",
            "failed", "created", "updated", "removed", "kept", "warnings", "seconds", "traffic"} <= set(data)
    assert data["ok"] is True and data["backend"] == "offline"
    assert data["traffic"] == {}  # a model backend's requests (tests/test_anthropic_concurrency.py)
    again = json.loads(runner.invoke(main, ["compile", "--root", str(three.root), "--json"]).stdout)
    assert again["noop"] is True
    missing = runner.invoke(main, ["compile", "--root", str(three.root / "nope"), "--json"])
    assert missing.exit_code == 2
    assert json.loads(missing.stdout)["ok"] is False
    bad = runner.invoke(main, ["compile", "--root", str(three.root), "--backend", "nonesuch"])
    assert bad.exit_code == 2 and "offline" in bad.output


def test_init_is_idempotent_and_never_overwrites(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "notes")
    (ws.raw).mkdir(parents=True)
    (ws.raw / "existing.md").write_text("# Existing\n\nKept as is.\n")
    first = init_workspace(ws)
    assert "wiki/AGENTS.md" in first.created and "wiki/index.md" in first.created
    (ws.wiki / "AGENTS.md").write_text("# My own rules\n")
    (ws.root / "wikimem.toml").write_text('backend = "offline"\n')
    second = init_workspace(ws)
    assert second.created == []
    assert (ws.wiki / "AGENTS.md").read_text() == "# My own rules\n"
    assert (ws.raw / "existing.md").read_text() == "# Existing\n\nKept as is.\n"
    assert compile_workspace(ws, load_settings(ws.root, environ={})).compiled == ["raw/existing.md"]


def test_relative_links_in_a_quoted_sentence_keep_their_words(ws: Workspace) -> None:
    write(ws, "a.md", "# A\n\nRelease 1.2 shipped on 2026-01-05, see [the notes](notes/r12.md) and [site](/doc/x).\n")
    write(ws, "b.md", "# B\n\nRelease 1.3 shipped on 2026-02-05 after [release 1.2](a.md).\n")
    compile_(ws)
    page = (ws.wiki / "sources/a.md").read_text()
    assert "Release 1.2 shipped on 2026-01-05, see the notes and site." in page
    assert "r12.md" not in page and "/doc/x" not in page
    assert broken_links(ws.wiki) == []


def test_upgrade_and_rebuild_rewrite_only_what_changes(three: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import wikimem.backends.offline as offline

    compile_(three)
    before = snapshot(three.wiki)
    monkeypatch.setattr(offline, "RENDER_VERSION", offline.RENDER_VERSION + 1)
    report = compile_(three)
    assert not report.noop and any("backend changed" in w for w in report.warnings)
    assert report.created == report.updated == report.removed == []
    assert snapshot(three.wiki) == before  # same bytes: nothing rewritten, nothing logged
    report = compile_(three, rebuild=True)
    assert snapshot(three.wiki) == before
    assert compile_(three).noop


@pytest.mark.slow
def test_pages_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    import subprocess
    import sys

    pages = []
    for seed in ("1", "2"):
        ws = Workspace.at(tmp_path / f"seed{seed}")
        init_workspace(ws)
        write(ws, "alpha.md", ALPHA)
        write(ws, "sub dir/beta.md", BETA + "\nErrors and errors, Error and error.\n")
        write(ws, "gamma.txt", GAMMA + "\nAn error, two errors.\n")
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "wikimem.cli", "compile", "--root", str(ws.root), "-q"],
                       check=True, env=env)
        snap = snapshot(ws.wiki)
        snap.pop("log.md")
        pages.append(snap)
    assert pages[0] == pages[1]


def test_a_source_named_index_gets_a_page_not_the_catalogs_name(ws: Workspace) -> None:
    """raw/index.md (the root of many doc sets) must not become sources/index.md, the name of the
    sources catalog, which the guard keeps for code: the page would be refused and the source lost."""
    from wikimem.compiler import assign_page
    from wikimem.index_page import is_catalog

    write(ws, "index.md", "# Home\n\nThe home page of the docs, for version 2.\n")
    write(ws, "index-2.md", "# Part two\n\nThe second part of the docs, 3 chapters.\n")
    compile_workspace(ws, load_settings(ws.root, environ={}))
    pages = sorted(p.name for p in (ws.wiki / "sources").glob("*.md"))
    assert pages == ["index-2-md.md", "index-md.md"]
    assert "sources/index-md.md" in (ws.wiki / "index.md").read_text(encoding="utf-8")
    # every plain candidate taken: the numbered fallback must not be index-2.md either
    fallback = assign_page("raw/index.md", {"sources/index-md.md"})
    assert fallback == "sources/index-page-2.md" and not is_catalog(fallback)


def test_plan_decides_without_writing(ws, settings):
    """compiler.plan reads raw/, state.db and wiki/'s listing and writes nothing: what it
    decides is carried out by apply()."""
    from wikimem import raw_tree
    from wikimem.compiler import compile_workspace, plan
    from wikimem.state import State

    write(ws, "a.md", "# Alpha\n\nAlpha text about widgets.\n")
    write(ws, "b.md", "# Beta\n\nBeta text about gears.\n")
    compile_workspace(ws, settings)
    write(ws, "a.md", "# Alpha\n\nAlpha text about widgets, changed.\n")
    (ws.raw / "b.md").rename(ws.raw / "c.md")
    write(ws, "d.md", "# Delta\n\nDelta text.\n")
    before = {p: p.read_bytes() for p in ws.wiki.rglob("*") if p.is_file()}
    state = State(ws.state_db)
    try:
        changes = state.db.total_changes
        todo = plan(ws, state, raw_tree.scan(ws))
        assert state.db.total_changes == changes
    finally:
        state.close()
    assert {p: p.read_bytes() for p in ws.wiki.rglob("*") if p.is_file()} == before
    assert not todo.noop
    assert todo.changed == ["raw/a.md", "raw/d.md"] and todo.renamed == {"raw/c.md": "raw/b.md"}
    assert todo.refs["raw/c.md"].page == "sources/c.md" and todo.refs["raw/d.md"].page == "sources/d.md"


def test_the_collector_is_set_for_the_compile_and_given_back(three: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc
    import threading

    import wikimem.compiler as compiler

    seen: list[tuple[tuple[int, ...], int]] = []
    inner = compiler._compile_locked

    def watched(*args, **kwargs):
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return inner(*args, **kwargs)

    monkeypatch.setattr(compiler, "_compile_locked", watched)
    single_threaded()  # a thread another test left would make this compile one beside a thread
    before = gc.get_threshold()
    compile_(three)
    # a compile alone in its process: what lived before it is frozen out of the scans
    assert seen[0][0][0] == 50_000 and seen[0][1] > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

    # with another thread running (the daemon), the process's collector is left alone
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        write(three, "delta.md", "# Delta\n\nA canary release again.\n")
        compile_(three)
    finally:
        stop.set()
        other.join()
    assert seen[1] == (before, 0)
    assert gc.get_threshold() == before


def test_the_pages_are_synced_beside_the_rest_and_again_before_state_commits(ws, settings, monkeypatch):
    # the pages written go to disk in a thread while index.md and log.md are made (os.sync lets
    # go of the interpreter), and the compile syncs again, once that thread is done, before
    # state.db records the pages as written: what a crash may leave is what it left before
    import threading
    import time

    from wikimem import compiler
    from wikimem.state import State

    for n in range(4):
        write(ws, f"notes/n{n}.md", f"# Note {n}\n\nThe widget needs a gasket.\n")
    monkeypatch.setattr(compiler, "SYNC_BESIDE", 2)
    events: list[str] = []

    def sync() -> None:
        if threading.current_thread().name == "wikimem-sync":
            time.sleep(0.3)  # slower than the rest of the compile, as a disk may be
            events.append("pages synced")
        else:
            events.append("synced again")

    transaction = State.transaction

    def recorded(self):
        with transaction(self):
            yield
        events.append("committed")

    monkeypatch.setattr(os, "sync", sync)
    monkeypatch.setattr(State, "transaction", contextlib.contextmanager(recorded))
    compile_workspace(ws, settings)
    assert events[-3:] == ["pages synced", "synced again", "committed"]

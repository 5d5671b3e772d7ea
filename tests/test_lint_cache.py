"""Page digests cached across lint runs: a second run reads no unchanged page and finds the same."""

from __future__ import annotations

import sqlite3

import pytest

from test_lint import by_rule, compiled, page
from wikimem.lint import digest as lint_digest
from wikimem.lint import run_lint

PLANTED = (
    "---\ntitle: Planted\nkind: concept\nsources: []\n---\n# Planted\n\n"
    "See [gone](../sources/nowhere.md) and [[No Such Page]].\n\n"
    "token = \"aZ9kQ2xW7pL4mN8vB3cR6tY1\"\n\n"
    "The **wobble factor** matters.\n"
)


def findings(report) -> list[dict]:
    return [f.to_json() for f in report.findings]


@pytest.fixture
def digested(monkeypatch):
    """Counts the pages digested (read and scanned) by lint, per run.

    The pages of a test are all written within the racy window (RACY_NS) before lint reads
    them, so every cached row would be distrusted once; here the window is closed.
    """
    monkeypatch.setattr(lint_digest, "RACY_NS", 0)
    calls: list[str] = []
    real = lint_digest.digest_file

    def counting(file: str, rel: str):
        calls.append(rel)
        return real(file, rel)

    monkeypatch.setattr(lint_digest, "digest_file", counting)
    return calls


def test_a_second_run_reads_no_unchanged_page_and_finds_the_same(ws, settings, digested):
    compiled(ws, settings)
    page(ws, "concepts/planted.md", PLANTED)
    first = run_lint(ws, settings, write=False)
    assert {"broken-link", "secret"} <= {f.rule for f in first.findings}
    assert len(digested) == len(list(ws.wiki.rglob("*.md")))
    digested.clear()
    second = run_lint(ws, settings, write=False)
    assert digested == []  # every page answered from its cached digest
    assert findings(second) == findings(first)


def test_an_edited_page_is_digested_again(ws, settings, digested):
    compiled(ws, settings)
    first = run_lint(ws, settings, write=False)
    assert not by_rule(first, "secret")
    digested.clear()
    page(ws, "concepts/planted.md", PLANTED)
    target = ws.wiki / "sources/widget-3.md"
    target.write_text(target.read_text(encoding="utf-8") + "\nSee [old](../sources/removed.md).\n", encoding="utf-8")
    second = run_lint(ws, settings, write=False)
    assert sorted(digested) == ["concepts/planted.md", "sources/widget-3.md"]
    broken = {(f.paths[0], f.evidence["target"]) for f in by_rule(second, "broken-link")}
    assert ("wiki/sources/widget-3.md", "../sources/removed.md") in broken
    assert ("wiki/concepts/planted.md", "No Such Page") in broken
    (secret,) = by_rule(second, "secret")
    assert secret.lines == (10,) and "aZ9kQ2xW7pL4" not in secret.message


def test_a_changed_source_checks_the_quotes_of_unchanged_pages_again(ws, settings, digested):
    compiled(ws, settings)
    assert not by_rule(run_lint(ws, settings, write=False), "ungrounded")
    raw = ws.raw / "widget-2.md"
    raw.write_text(raw.read_text(encoding="utf-8").replace("batches 64 frames", "batches 32 frames"), encoding="utf-8")
    digested.clear()
    report = run_lint(ws, settings, write=False)
    ungrounded = by_rule(report, "ungrounded")
    assert ungrounded and {f.evidence["source"] for f in ungrounded} == {"raw/widget-2.md"}
    assert "wiki/sources/widget-2.md" in {f.paths[0] for f in ungrounded}
    # the cited file changed, not the page: its digest is cached, and the page is read again for its quotes
    assert "sources/widget-2.md" in digested and "sources/widget-3.md" not in digested
    assert by_rule(report, "stale")


def test_pages_digested_in_worker_processes_give_the_same_findings(ws, settings, monkeypatch):
    compiled(ws, settings)
    page(ws, "concepts/planted.md", PLANTED)
    monkeypatch.setattr(lint_digest, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(lint_digest, "CHUNK", 2)
    (ws.state_dir / "lint-cache.db").unlink(missing_ok=True)
    parallel = run_lint(ws, settings, write=False)
    monkeypatch.setattr(lint_digest, "PARALLEL_THRESHOLD", 10**9)
    (ws.state_dir / "lint-cache.db").unlink()
    serial = run_lint(ws, settings, write=False)
    assert findings(parallel) == findings(serial)
    assert {"broken-link", "secret", "superseded"} <= {f.rule for f in parallel.findings}


def test_a_damaged_or_missing_cache_costs_time_not_findings(ws, settings, digested):
    compiled(ws, settings)
    page(ws, "concepts/planted.md", PLANTED)
    first = run_lint(ws, settings, write=False)
    db = sqlite3.connect(ws.state_dir / "lint-cache.db")
    db.execute("UPDATE page_digests SET digest = '{not json' WHERE path = 'concepts/planted.md'")
    db.execute("UPDATE page_digests SET digest = '[1, 2]' WHERE path = 'sources/widget-2.md'")
    db.commit()
    db.close()
    digested.clear()
    assert findings(run_lint(ws, settings, write=False)) == findings(first)
    assert sorted(digested) == ["concepts/planted.md", "sources/widget-2.md"]
    (ws.state_dir / "lint-cache.db").write_bytes(b"this is not a database")
    assert findings(run_lint(ws, settings, write=False)) == findings(first)
    for leftover in ws.state_dir.glob("lint-cache.db*"):
        leftover.unlink()
    assert findings(run_lint(ws, settings, write=False)) == findings(first)


def test_the_cache_never_holds_a_secret(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "concepts/planted.md", PLANTED)
    assert by_rule(run_lint(ws, settings, write=False), "secret")
    assert b"aZ9kQ2xW7pL4mN8vB3cR6tY1" not in b"".join(p.read_bytes() for p in ws.state_dir.glob("lint-cache.db*"))


def test_a_page_written_just_before_its_digest_is_checked_by_content(ws, settings, digested, monkeypatch):
    """A file system that keeps times to the second could hide an edit of the same size made right
    after lint read a page (size, mtime and ctime unchanged): the digest of a page written within
    RACY_NS before it was taken is trusted only after the page's content hash matches."""
    hashed: list[str] = []
    real = lint_digest._content_hash
    monkeypatch.setattr(lint_digest, "_content_hash", lambda file: hashed.append(file) or real(file))
    compiled(ws, settings, widgets=False)
    target = page(ws, "concepts/planted.md", PLANTED)
    monkeypatch.setattr(lint_digest, "RACY_NS", 3_000_000_000)
    run_lint(ws, settings, write=False)
    digested.clear()
    run_lint(ws, settings, write=False)
    assert str(target) in hashed and "concepts/planted.md" not in digested  # same bytes: not digested again
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("wobble factor", "wibble factor"), encoding="utf-8")  # same size
    digested.clear()
    run_lint(ws, settings, write=False)
    assert "concepts/planted.md" in digested  # other bytes: digested again


def test_a_copied_workspace_keeps_its_digests(ws, settings, digested, tmp_path):
    """A copy, a restored backup or a CI cache gives every page new times but the same bytes:
    the digests are checked by content hash, not computed again."""
    import shutil

    from wikimem.workspace import Workspace

    compiled(ws, settings)
    page(ws, "concepts/planted.md", PLANTED)
    first = run_lint(ws, settings, write=False)
    copy = Workspace.at(shutil.copytree(ws.root, tmp_path / "copy", symlinks=True))
    digested.clear()
    again = run_lint(copy, settings, write=False)
    assert digested == []
    assert findings(again) == findings(first)


def test_a_fresh_clone_without_wikimem_state_is_warm_from_its_second_run(ws, settings, digested):
    """A clone of a wiki repository has raw/ and wiki/ but no .wikimem/ (it is never committed):
    the first lint makes it, with the .gitignore init writes, and the second reads no page."""
    import shutil

    compiled(ws, settings)
    shutil.rmtree(ws.state_dir)
    first = run_lint(ws, settings, write=False)
    assert (ws.state_dir / ".gitignore").read_text(encoding="utf-8") == "*\n"
    digested.clear()
    again = run_lint(ws, settings, write=False)
    assert digested == []
    assert findings(again) == findings(first)

"""wikimem lint: one planted fault per rule, a clean compiled wiki, dispositions, fixes, the CLI."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import corpus, snapshot, write
from fake_messages_server import FakeMessagesServer, reply, text
from wikimem import log_page
from wikimem.cli import main
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.lint import RULES, run_lint
from wikimem.lint.context import simple_meta
from wikimem.lint.structure import title_key
from wikimem.pages import parse_meta
from wikimem.state import State
from wikimem.workspace import Workspace

WIDGET_2 = """---
title: Widget 2.0 Release Notes
date: 2023-01-10
---
# Widget 2.0 Release Notes

Widget 2.0 is a release of the Widget toolkit with a faster **render queue**.

## Requirements

Widget 2.0 requires Python 3.8 or later.
Widget 3.0 will require Python 3.9 or later.
Previous versions required Python 2.7.

## Render queue

The render queue now batches 64 frames per flush, as required by RFC 7231 caching rules.
"""
WIDGET_3 = """---
title: Widget 3.0 Release Notes
date: 2024-01-10
---
# Widget 3.0 Release Notes

Widget 3.0 improves the render queue and the plugin loader.

## Plugin loader

The plugin loader scans 12 folders at start and caches the render queue layout.
"""
WIDGET_4 = """---
title: Widget 4.0 Release Notes
date: 2025-01-10
---
# Widget 4.0 Release Notes

Widget 4.0 finishes the plugin loader rewrite and speeds up the render queue.

## Requirements

Widget 4.0 requires Python 3.9 or later.

## Render queue

The render queue now batches 128 frames per flush.
"""
NOTES = """# Field notes

The render queue and the plugin loader were measured on 3 machines in March 2024.
The plugin loader took 40 ms per folder; the render queue flushed every 16 ms.
"""


def compiled(ws: Workspace, settings, *, widgets: bool = True) -> None:
    write(ws, "notes.md", NOTES)
    if widgets:
        write(ws, "widget-2.md", WIDGET_2)
        write(ws, "widget-3.md", WIDGET_3)
        write(ws, "widget-4.md", WIDGET_4)
    compile_workspace(ws, settings)


def by_rule(report, rule: str) -> list:
    return [f for f in report.findings if f.rule == rule]


def page(ws: Workspace, rel: str, text: str) -> Path:
    path = ws.wiki / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


CONCEPT = "---\ntitle: {title}\nkind: concept\nsources: []\naliases: {aliases}\n---\n# {title}\n\n{body}\n"


# --- a clean wiki ---------------------------------------------------------------------------


def test_clean_compiled_wiki_has_no_errors_and_a_second_run_only_logs_itself(ws, settings):
    compiled(ws, settings, widgets=False)
    first = run_lint(ws, settings)
    assert first.errors == 0, [f.message for f in first.findings]
    assert not [f for f in first.findings if f.severity == "warning"], [f.message for f in first.findings]
    assert "wiki/lint.md" in first.written and "wiki/log.md" in first.written
    assert "[lint.md](lint.md)" in (ws.wiki / "index.md").read_text(encoding="utf-8")
    before = snapshot(ws.wiki)
    second = run_lint(ws, settings)
    assert second.written == ["wiki/log.md"]  # each run is logged; lint.md and index.md are unchanged
    after = snapshot(ws.wiki)
    assert {k: v for k, v in after.items() if k != "log.md"} == {k: v for k, v in before.items() if k != "log.md"}
    entries = log_page.read_entries(ws.wiki / "log.md")
    assert [e[1] for e in entries].count("lint") == 2
    assert "- report: lint.md unchanged" in (ws.wiki / "log.md").read_text(encoding="utf-8")
    # a run of some rules, and a dry run, are not logged
    run_lint(ws, settings, ["stale"])
    run_lint(ws, settings, fix=True, dry_run=True)
    assert [e[1] for e in log_page.read_entries(ws.wiki / "log.md")].count("lint") == 2


def test_compiled_quotes_are_grounded_and_claims_are_found(ws, settings):
    compiled(ws, settings)
    report = run_lint(ws, settings, write=False)
    assert report.errors == 0, [f.message for f in report.findings if f.severity == "error"]
    assert not by_rule(report, "ungrounded")


# --- one planted fault per rule ---------------------------------------------------------------


def test_broken_links_markdown_and_wikilinks(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "notes/mine.md", "# Mine\n\nSee [gone](../concepts/nope.md) and [[Nowhere at all]].\n\n"
         "Fine: [index](../index.md), [web](https://example.org), `[code](../x.md)`.\n")
    found = by_rule(run_lint(ws, settings, ["broken-link"], write=False), "broken-link")
    targets = sorted(f.evidence["target"] for f in found)
    assert targets == ["../concepts/nope.md", "Nowhere at all"]
    assert all(f.paths == ("wiki/notes/mine.md",) and f.lines == (3,) and f.severity == "error" for f in found)


def test_orphan_and_missing_from_index(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "concepts/lonely.md", CONCEPT.format(title="Lonely", aliases="[]", body="Nobody links here."))
    report = run_lint(ws, settings, ["orphan", "missing-from-index"], write=False)
    orphans = [f.paths for f in by_rule(report, "orphan")]
    assert ("wiki/concepts/lonely.md",) in orphans and all(f.severity == "info" for f in by_rule(report, "orphan"))
    missing = by_rule(report, "missing-from-index")
    assert [f.paths for f in missing] == [("wiki/concepts/lonely.md",)] and missing[0].fixable


def test_malformed_front_matter_is_a_finding_not_a_crash(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "concepts/broken.md", "---\ntitle: [unclosed\nkind: concept\n---\n# Broken\n")
    page(ws, "concepts/bare.md", "# No front matter at all\n")
    page(ws, "concepts/odd.md", "---\ntitle: Odd\nkind: gadget\n---\n# Odd\n")
    page(ws, "concepts/never-closed.md", "---\ntitle: Never closed\n# Body\n")
    found = {f.paths[0]: f for f in by_rule(run_lint(ws, settings, write=False), "frontmatter")}
    assert found["wiki/concepts/broken.md"].severity == "error"
    assert found["wiki/concepts/never-closed.md"].severity == "error"
    assert found["wiki/concepts/bare.md"].severity == "warning"
    assert "gadget" in found["wiki/concepts/odd.md"].message


def test_duplicates_by_title_and_alias_but_never_numbered_items(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "concepts/smart-pointer.md", CONCEPT.format(title="Smart pointer", aliases="[]", body="x"))
    page(ws, "concepts/smart-pointers.md", CONCEPT.format(title="The Smart Pointers", aliases="[]", body="x"))
    page(ws, "concepts/box.md", CONCEPT.format(title="Box", aliases="[Box<T>]", body="x"))
    page(ws, "concepts/box-t.md", CONCEPT.format(title="Box<T>", aliases="[]", body="x"))
    page(ws, "concepts/go-1-21.md", CONCEPT.format(title="Go 1.21", aliases="[]", body="x"))
    page(ws, "concepts/go-1-22.md", CONCEPT.format(title="Go 1.22", aliases="[]", body="x"))
    found = by_rule(run_lint(ws, settings, ["duplicate"], write=False), "duplicate")
    groups = sorted(tuple(f.evidence["pages"]) for f in found)
    assert groups == [
        ("wiki/concepts/box-t.md", "wiki/concepts/box.md"),
        ("wiki/concepts/smart-pointer.md", "wiki/concepts/smart-pointers.md"),
    ]
    assert title_key("Go 1.21") != title_key("Go 1.22")


def test_two_different_sources_with_one_title_are_not_duplicates(ws, settings):
    write(ws, "title-page.md", "# The Widget Book\n\nBy the Widget team, for Widget 3.0 and later.\n")
    write(ws, "SUMMARY.md", "# The Widget Book\n\n- [Introduction](intro.md)\n- [Installing](install.md)\n")
    compile_workspace(ws, settings)
    assert not by_rule(run_lint(ws, settings, ["duplicate"], write=False), "duplicate")


def test_missing_concept_wanted_by_several_pages(ws, settings):
    compiled(ws, settings, widgets=False)
    for n in range(3):
        page(ws, f"answers/a{n}.md", f"---\ntitle: Answer {n}\nkind: answer\nsources: []\n---\nThe [[Borrow checker]] again.\n")
    found = by_rule(run_lint(ws, settings, ["missing-concept"], write=False), "missing-concept")
    assert len(found) == 1 and "Borrow checker" in found[0].message and found[0].severity == "info"


def test_size_caps_on_agents_md(ws, settings):
    compiled(ws, settings, widgets=False)
    (ws.wiki / "AGENTS.md").write_text("# Agents\n" + "- a rule\n" * 250, encoding="utf-8")
    found = by_rule(run_lint(ws, settings, ["size"], write=False), "size")
    assert [(f.paths, f.severity) for f in found] == [(("wiki/AGENTS.md",), "error")]


def test_stale_source_changed_or_deleted_and_dependents(ws, settings):
    compiled(ws, settings)
    (ws.raw / "widget-3.md").write_text(WIDGET_3 + "\nA new paragraph.\n", encoding="utf-8")
    (ws.raw / "notes.md").unlink()
    found = {f.evidence["source"]: f for f in by_rule(run_lint(ws, settings, ["stale"], write=False), "stale")}
    assert found["raw/widget-3.md"].severity == "warning"
    assert found["raw/notes.md"].severity == "error"
    # concept pages quoting the changed source are named as depending on it
    assert any(p.startswith("wiki/concepts/") for p in found["raw/widget-3.md"].paths)


def test_superseded_and_contradicted_quote_both_sentences(ws, settings):
    compiled(ws, settings)
    report = run_lint(ws, settings, ["superseded", "contradicted"], write=False)
    (sup,) = by_rule(report, "superseded")
    assert sup.evidence["old"] == {"path": "raw/widget-2.md", "sentence": "Widget 2.0 requires Python 3.8 or later.", "value": "3.8"}
    assert sup.evidence["current"]["path"] == "raw/widget-4.md"
    assert sup.lines == (11, 11) and "which is current" in sup.message
    (con,) = by_rule(report, "contradicted")
    assert con.evidence["plan"]["sentence"] == "Widget 3.0 will require Python 3.9 or later."
    assert con.evidence["outcome"]["sentence"] == "Widget 4.0 requires Python 3.9 or later."
    # every quoted sentence is verbatim in the raw file it names
    for f in (sup, con):
        for item in f.evidence.values():
            if isinstance(item, dict):
                raw = (ws.root / item["path"]).read_text(encoding="utf-8")
                assert item["sentence"] in " ".join(raw.split())


def test_release_order_dates_an_undated_source(ws, settings):
    # no dates: the version numbers in the titles order the sources (1.9 < 1.10)
    write(ws, "a.md", "# Gizmo 1.9 notes\n\nGizmo 1.9 requires Linux kernel 3.2 or later.\n")
    write(ws, "b.md", "# Gizmo 1.10 notes\n\nGizmo 1.10 requires Linux kernel 4.4 or later.\n")
    compile_workspace(ws, settings)
    (sup,) = by_rule(run_lint(ws, settings, ["superseded"], write=False), "superseded")
    assert sup.evidence["current"]["path"] == "raw/b.md" and sup.evidence["basis"] == "release order"


def test_same_time_sources_that_disagree_are_contradicted(ws, settings):
    write(ws, "a.md", "---\ndate: 2024-05-01\n---\n# Team A\n\nThe service requires Postgres 14 or later.\n")
    write(ws, "b.md", "---\ndate: 2024-05-01\n---\n# Team B\n\nThe service requires Postgres 16 or later.\n")
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, ["superseded", "contradicted"], write=False)
    assert not by_rule(report, "superseded")
    (con,) = by_rule(report, "contradicted")
    assert "neither is newer" in con.message and set(con.paths) == {"raw/a.md", "raw/b.md"}


def test_ungrounded_quote(ws, settings):
    compiled(ws, settings)
    target = ws.wiki / "sources/widget-2.md"
    text = target.read_text(encoding="utf-8")
    assert "batches 64 frames" in text
    target.write_text(text.replace("batches 64 frames", "batches 640 frames"), encoding="utf-8")
    (found,) = by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded")
    assert found.paths == ("wiki/sources/widget-2.md", "raw/widget-2.md") and "640" in found.message


def test_secrets_are_found_and_never_echoed(ws, settings):
    compiled(ws, settings, widgets=False)
    key = "sk-ant-api03-" + "Zq8xT4vL2mN7pR1sK9wY3bH6jD5fG0cAu7Ee2Wn4Hb1Mk"
    page(ws, "answers/leak.md", "---\ntitle: Leak\nkind: answer\nsources: []\n---\n"
         f"Use {key} for the API.\n\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"
         "The docs' example key AKIAIOSFODNN7EXAMPLE is not a secret.\npassword = hunter2\n")
    report = run_lint(ws, settings, ["secret"], write=False)
    kinds = sorted(f.evidence["kind"] for f in by_rule(report, "secret"))
    assert kinds == ["Anthropic API key", "private key"]
    assert key not in json.dumps(report.to_json())


def test_log_integrity_changed_and_removed_entries(ws, settings):
    compiled(ws, settings, widgets=False)
    assert not by_rule(run_lint(ws, settings), "log-integrity")  # first run records the chain
    write(ws, "more.md", "# More\n\nThe render queue also runs on 2 threads since 2024.\n")
    compile_workspace(ws, settings)  # appending is fine
    assert not by_rule(run_lint(ws, settings, ["log-integrity"]), "log-integrity")
    log = ws.wiki / "log.md"
    text = log.read_text(encoding="utf-8")
    first_ingest = re.search(r"^## \[.*\] ingest \| .*$", text, re.MULTILINE)
    assert first_ingest
    log.write_text(text.replace("- created:", "- made:", 1), encoding="utf-8")
    found = by_rule(run_lint(ws, settings, ["log-integrity"]), "log-integrity")
    assert found and found[0].evidence["how"] == "changed" and found[0].severity == "error"
    log.write_text(text.replace(first_ingest.group(0), "", 1), encoding="utf-8")
    found = by_rule(run_lint(ws, settings, ["log-integrity"]), "log-integrity")
    assert any(f.evidence["how"] == "removed" for f in found)


def test_every_rule_has_a_planted_fault_test():
    tested = set(re.findall(r'"([a-z-]+)"', Path(__file__).read_text(encoding="utf-8")))
    assert set(RULES) <= tested


# --- dispositions ---------------------------------------------------------------------------


def test_accept_hides_a_finding_until_its_evidence_changes(ws, settings):
    compiled(ws, settings)
    (sup,) = by_rule(run_lint(ws, settings), "superseded")
    runner = CliRunner()
    result = runner.invoke(main, ["lint", "--root", str(ws.root), "--accept", sup.id[:6], "--why", "both shipped"])
    assert result.exit_code == 0, result.output
    stored = json.loads((ws.wiki / ".lint-accepted.json").read_text(encoding="utf-8"))
    assert stored["accepted"][0]["id"] == sup.id and stored["accepted"][0]["why"] == "both shipped"
    again = run_lint(ws, settings)
    assert not by_rule(again, "superseded") and [f.id for f in again.accepted] == [sup.id]
    assert sup.id not in (ws.wiki / "lint.md").read_text(encoding="utf-8")
    # new evidence (the current value changes) brings the finding back with a new id
    write(ws, "widget-5.md", "---\ntitle: Widget 5.0 Release Notes\ndate: 2026-01-10\n---\n# Widget 5.0\n\n"
          "Widget 5.0 requires Python 3.11 or later.\n")
    compile_workspace(ws, settings)
    (back,) = by_rule(run_lint(ws, settings, write=False), "superseded")
    assert back.id != sup.id


def test_accept_needs_a_known_id_and_a_reason(ws, settings):
    compiled(ws, settings, widgets=False)
    runner = CliRunner()
    result = runner.invoke(main, ["lint", "--root", str(ws.root), "--accept", "ffffffffffff", "--why", "x"])
    assert result.exit_code == 2 and "no open finding" in result.output
    result = runner.invoke(main, ["lint", "--root", str(ws.root), "--why", "x"])
    assert result.exit_code == 2


# --- fixes ----------------------------------------------------------------------------------


def test_fix_dry_run_then_fix_drops_dead_links_and_rebuilds_index(ws, settings):
    compiled(ws, settings)
    concept = next(p for p in sorted((ws.wiki / "concepts").glob("*.md")) if "sources/widget-3.md" in p.read_text(encoding="utf-8"))
    # the source and its page are gone (deleted by hand, no compile since): links to the page are dead
    (ws.raw / "widget-3.md").unlink()
    (ws.wiki / "sources/widget-3.md").unlink()
    page(ws, "concepts/lonely.md", CONCEPT.format(title="Lonely", aliases="[]", body="Nobody links here."))
    before = snapshot(ws.wiki), snapshot(ws.raw), ws.state_db.read_bytes()
    dry = run_lint(ws, settings, fix=True, dry_run=True)
    # --dry-run writes nothing in wiki/, raw/ or state.db (only its own derived cache may appear in .wikimem/)
    assert (snapshot(ws.wiki), snapshot(ws.raw), ws.state_db.read_bytes()) == before
    actions = {(f.action, f.path) for f in dry.fixes}
    assert ("rebuild-index", "wiki/index.md") in actions
    assert ("drop-link", f"wiki/{concept.relative_to(ws.wiki).as_posix()}") in actions
    done = run_lint(ws, settings, fix=True)
    assert all(f.applied for f in done.fixes)
    assert "../sources/widget-3.md" not in concept.read_text(encoding="utf-8")
    assert "Widget 3.0 Release Notes" in concept.read_text(encoding="utf-8")  # the words stay
    assert not by_rule(done, "missing-from-index")
    # links to the removed page are gone; citations of the deleted raw file remain (compile re-renders those)
    assert not [f for f in by_rule(done, "broken-link") if "sources/widget-3.md" in f.evidence["target"]]
    # the rewritten page is recorded as wikimem's, so compile will not mistake it for a person's edit
    state = State(ws.state_db)
    try:
        from wikimem.pages import content_hash

        rel = concept.relative_to(ws.wiki).as_posix()
        assert state.pages()[rel][0] == content_hash(concept.read_bytes())
    finally:
        state.close()


def test_fix_never_rewrites_a_page_a_person_edited(ws, settings):
    compiled(ws, settings)
    concept = next(p for p in sorted((ws.wiki / "concepts").glob("*.md")) if "sources/widget-3.md" in p.read_text(encoding="utf-8"))
    concept.write_text(concept.read_text(encoding="utf-8") + "\nMy own note.\n", encoding="utf-8")
    (ws.raw / "widget-3.md").unlink()
    (ws.wiki / "sources/widget-3.md").unlink()
    edited = concept.read_bytes()
    report = run_lint(ws, settings, fix=True)
    assert concept.read_bytes() == edited
    skipped = [f for f in report.fixes if f.path.endswith(concept.name)]
    assert skipped and skipped[0].skipped and "edited by a person" in skipped[0].skipped


def test_a_page_whose_source_still_exists_is_restored_by_compile_not_unlinked(ws, settings):
    compiled(ws, settings)
    (ws.wiki / "sources/widget-3.md").unlink()
    report = run_lint(ws, settings, ["broken-link"], fix=True, dry_run=True)
    dead = [f for f in by_rule(report, "broken-link") if f.evidence["page"].startswith("wiki/concepts/")]
    assert dead and not any(f.fixable for f in dead) and "wikimem compile" in dead[0].message
    assert not [f for f in report.fixes if f.action == "drop-link"]


# --- the command line -------------------------------------------------------------------------


def test_cli_exit_codes_and_json_document(ws, settings):
    compiled(ws, settings, widgets=False)
    runner = CliRunner()
    clean = runner.invoke(main, ["lint", "--root", str(ws.root), "--json"])
    assert clean.exit_code == 0, clean.output
    data = json.loads(clean.stdout)
    assert {"ok", "counts", "errors", "findings", "accepted", "fixes", "rules", "notes", "seconds"} <= set(data)
    page(ws, "notes/mine.md", "# Mine\n\n[gone](nope.md)\n")
    bad = runner.invoke(main, ["lint", "--root", str(ws.root), "--json"])
    assert bad.exit_code == 3
    finding = json.loads(bad.stdout)["findings"][0]
    assert set(finding) == {"id", "rule", "severity", "message", "paths", "lines", "evidence", "fixable"}
    text = runner.invoke(main, ["lint", "--root", str(ws.root), "--rule", "broken-link"])
    assert text.exit_code == 3 and "wiki/notes/mine.md:3" in text.stdout
    unknown = runner.invoke(main, ["lint", "--root", str(ws.root), "--rule", "nonsense"])
    assert unknown.exit_code == 2 and "valid:" in unknown.output
    deep = runner.invoke(main, ["lint", "--root", str(ws.root), "--deep", "--rule", "secret"])
    assert deep.exit_code == 0 and "no candidate contradictions" in deep.stderr


def test_plain_front_matter_reader_agrees_with_yaml():
    cases = [
        "title: Go 1.22 Release Notes\nkind: source\nsources:\n- raw/a b.md\nsource_sha256: 0123abcd\naliases: []\nupdated: 2026-11-29",
        "title: A\naliases:\nkind: concept",
        "title: Go\nkind: concept\nsources:\n- raw/a.md\nmentioned_in: 7519\naliases: []",
    ]
    for fm in cases:
        meta = simple_meta(fm)
        expected = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in parse_meta(fm).items()}
        assert meta is None or meta == expected
    assert simple_meta("title: 'quoted: yes'") is None
    assert simple_meta("count: 3") == {"count": 3}  # a plain count, as YAML reads it
    for number in ("0123", "1_000", "3.5", "-2", "0x1f", "12345678901"):  # YAML's octal, floats, ...
        assert simple_meta(f"count: {number}") is None
    assert simple_meta("flag: true") is None
    # list items: trailing blanks dropped as YAML drops them; a YAML word or a quoted item goes to YAML
    assert simple_meta("sources:\n- raw/a.md  \n- raw/b.md\t") == {"sources": ["raw/a.md", "raw/b.md"]}
    assert simple_meta("sources:\n- yes") is None
    assert simple_meta("sources:\n- 'raw/a.md'") is None
    assert simple_meta("sources:\n-  ") is None


def test_links_keep_offsets_of_images_and_escaped_brackets():
    from wikimem.lint.context import extract_links, read_wiki_page

    body = "See ![a chart](img/c.png) and [a \\[b\\] c](../concepts/x.md#Top) and `[code](no.md)`.\n"
    text = "---\ntitle: T\nkind: concept\n---\n" + body
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "t.md"
        file.write_text(text, encoding="utf-8")
        page = read_wiki_page(str(file), "concepts/t.md")
        links = extract_links(page)  # reads the page's text (the digest alone keeps the distinct targets)
    assert list(page.digest.links_to) == ["concepts/img/c.png", "concepts/x.md"]
    assert [(lk.text, lk.target, lk.resolved, lk.fragment) for lk in links] == [
        ("a chart", "img/c.png", "wiki/concepts/img/c.png", ""),
        ("a \\[b\\] c", "../concepts/x.md#Top", "wiki/concepts/x.md", "Top"),
    ]
    assert [text[lk.at : lk.at + 2] for lk in links] == ["![", "[a"]  # an image starts at its "!"


# --- the real corpus --------------------------------------------------------------------------


@pytest.mark.slow
def test_versions_corpus_finds_the_known_changes_without_noise(tmp_path, settings):
    raw = corpus("versions")
    ws = Workspace.at(tmp_path / "versions")
    from wikimem.init import init_workspace

    init_workspace(ws)
    shutil.rmtree(ws.raw)
    shutil.copytree(raw, ws.raw)
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, ["superseded", "contradicted", "ungrounded", "stale"], write=False)
    superseded = {f.evidence["fact"]: f for f in by_rule(report, "superseded")}
    assert superseded["minimum macOS version"].evidence["current"]["path"] == "raw/release-notes/go1.27.md"
    assert superseded["minimum Windows version"].evidence["old"]["path"] == "raw/release-notes/go1.11.md"
    tls = superseded["default TLS version (server)"]
    assert tls.evidence["old"]["sentence"] == "The server-side default is unchanged at TLS 1.0."
    assert tls.evidence["current"]["path"] == "raw/release-notes/go1.22.md"
    plans = [f for f in by_rule(report, "contradicted") if "plan" in f.evidence]
    assert any(
        f.evidence["plan"]["path"] == "raw/release-notes/go1.18.md" and f.evidence["outcome"]["path"] == "raw/release-notes/go1.20.md"
        for f in plans
    )
    # one finding per fact, not per pair of releases: 56 documents give a short list
    assert len(by_rule(report, "superseded")) + len(by_rule(report, "contradicted")) <= 20
    assert not by_rule(report, "ungrounded") and not by_rule(report, "stale")


def test_duplicate_sources_same_text_or_same_name_in_two_formats(ws, settings):
    text = " ".join(f"Sentence {i} says the render queue flushes after frame {i * 7} of the plugin run." for i in range(20))
    write(ws, "talk.md", f"# A talk\n\n{text}\n")
    write(ws, "talk.txt", f"A talk, as text\n\n{text}\n")
    write(ws, "copies/old-talk.md", f"# An older copy\n\n{text}\n")
    write(ws, "other.md", "# Other\n\nNothing in common with the talk at all, just 3 words about gardening in May.\n")
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["duplicate"], write=False), "duplicate")
    same_name = [f for f in found if f.evidence.get("same_name")]
    same_text = [f for f in found if f.evidence.get("same_text")]
    assert [f.evidence["sources"] for f in same_name] == [["raw/talk.md", "raw/talk.txt"]]
    # three copies of one text are one finding (the same-named pair is also the one above)
    assert [f.evidence["sources"] for f in same_text] == [["raw/copies/old-talk.md", "raw/talk.md", "raw/talk.txt"]]
    assert not any("raw/other.md" in f.paths for f in found)


def test_bold_terms_on_several_pages_want_a_page_but_cross_references_do_not(ws, settings):
    compiled(ws, settings, widgets=False)
    for n in range(3):
        page(ws, f"answers/b{n}.md", f"---\ntitle: B{n}\nkind: answer\nsources: []\n---\n"
             f"The **frame budget** matters; see **Chapter 17**.\n")
    found = by_rule(run_lint(ws, settings, ["missing-concept"], write=False), "missing-concept")
    assert [f.evidence["concept"] for f in found] == ["frame budget"]


def test_stale_names_pages_that_link_to_the_stale_page(ws, settings):
    compiled(ws, settings)
    page(ws, "answers/why.md", "---\ntitle: Why\nkind: answer\nsources: []\n---\nSee [notes](../sources/notes.md).\n")
    (ws.raw / "notes.md").write_text(NOTES + "\nOne more line, 5 ms.\n", encoding="utf-8")
    (found,) = by_rule(run_lint(ws, settings, ["stale"], write=False), "stale")
    assert "wiki/answers/why.md" in found.paths and found.severity == "warning"


def test_a_fix_in_a_partial_run_is_logged_without_rewriting_lint_md(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "concepts/lonely.md", CONCEPT.format(title="Lonely", aliases="[]", body="Nobody links here."))
    report = run_lint(ws, settings, ["missing-from-index"], fix=True)
    assert [f.action for f in report.fixes if f.applied] == ["rebuild-index"]
    assert not (ws.wiki / "lint.md").exists()
    entries = log_page.read_entries(ws.wiki / "log.md")
    assert entries[-1][1] == "lint" and any("rebuild-index" in line for line in entries[-1][3])


def test_a_symlink_out_of_the_wiki_is_not_read(ws, settings, tmp_path):
    compiled(ws, settings, widgets=False)
    outside = tmp_path / "secret-notes.md"
    outside.write_text("token = ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n", encoding="utf-8")
    (ws.wiki / "concepts" / "linked.md").symlink_to(outside)
    report = run_lint(ws, settings, write=False)
    assert not any("linked.md" in p for f in report.findings for p in f.paths)


# --- --deep against a local Messages API server -------------------------------------------------


def test_deep_judges_only_candidates_and_keeps_ids(ws, settings, monkeypatch):
    compiled(ws, settings)
    plain = run_lint(ws, settings, ["superseded", "contradicted"], write=False)
    assert len(plain.findings) == 2
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeMessagesServer() as server:
        server.add(
            reply(text('{"verdict": "compatible", "reason": "the plan was kept a release later"}')),
            reply(text('Sure. {"verdict": "conflict", "reason": "3.8 and 3.9 differ"}')),
        )
        deep_settings = load_settings(ws.root, {"base_url": server.url})
        report = run_lint(ws, deep_settings, ["superseded", "contradicted", "secret"], write=False, deep=True)
        assert len(server.requests) == 2  # one request per candidate, nothing for other rules
        sent = json.dumps(server.bodies)
        assert "Widget 2.0 requires Python 3.8 or later." in sent
    by_id = {f.id: f for f in report.findings}
    assert set(by_id) == {f.id for f in plain.findings}  # the verdict never changes an id
    verdicts = sorted(f.evidence["judgement"]["verdict"] for f in report.findings)
    assert verdicts == ["compatible", "conflict"]
    compatible = next(f for f in report.findings if f.evidence["judgement"]["verdict"] == "compatible")
    assert compatible.severity == "info"
    assert any("2 of 2 candidates judged" in n for n in report.notes)


def test_deep_without_a_key_says_what_to_do(ws, settings):
    compiled(ws, settings)
    runner = CliRunner()
    result = runner.invoke(main, ["lint", "--root", str(ws.root), "--deep"])
    assert result.exit_code == 2 and "--deep needs the anthropic backend" in result.output


def test_deep_stops_at_the_token_budget(ws, settings, monkeypatch):
    compiled(ws, settings)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeMessagesServer() as server:
        server.add(reply(text('{"verdict": "conflict", "reason": "differ"}')))
        report = run_lint(ws, load_settings(ws.root, {"base_url": server.url}), ["superseded", "contradicted"],
                          write=False, deep=True, deep_budget=1)
        assert len(server.requests) == 1
    assert sorted(f.evidence["judgement"]["verdict"] for f in report.findings) == ["conflict", "not judged"]


def test_link_forms_angle_brackets_references_and_encoded_spaces(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "notes/my page.md", "# My page\n")
    page(ws, "notes/links.md", "# Links\n\n[ok](<my page.md>) [ok2](my%20page.md) [bad](<no page.md>)\n\n"
         "[ref]: ../concepts/missing.md\n[^1]: a footnote\n[site]: https://example.org\n")
    found = by_rule(run_lint(ws, settings, ["broken-link"], write=False), "broken-link")
    assert sorted(f.evidence["target"] for f in found) == ["../concepts/missing.md", "no page.md"]


def test_titles_that_differ_in_symbols_are_not_duplicates():
    assert title_key("C++") != title_key("C") != title_key("C#")
    assert title_key("The Smart Pointers") == title_key("smart-pointer")


def test_more_secret_shapes(ws, settings):
    compiled(ws, settings, widgets=False)
    page(ws, "answers/env.md", "---\ntitle: Env\nkind: answer\nsources: []\n---\n"
         "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8x3Kd9Lp\n"
         "GITHUB_TOKEN: ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n"
         "hf_Qm7TzW2kLp9XvB4nR8sJd3Hy6Fc1Gt5Ue0Ai in a sentence.\n"
         "api_key: your-api-key-goes-here-1234\n")
    kinds = sorted(f.evidence["kind"] for f in by_rule(run_lint(ws, settings, ["secret"], write=False), "secret"))
    assert kinds == ["GitHub token", "Hugging Face token", "credential assignment"]


def test_lowercase_and_dotted_names_after_a_requirement(ws, settings):
    write(ws, "a.md", "---\ndate: 2023-03-01\n---\n# Build notes\n\nThe build requires glibc 2.17 or later. "
          "The web app requires Node.js 16 or later.\n")
    write(ws, "b.md", "---\ndate: 2024-03-01\n---\n# Build notes, again\n\nThe build requires glibc 2.28 or later. "
          "The web app requires Node.js 20 or later.\n")
    compile_workspace(ws, settings)
    facts = sorted(f.evidence["fact"] for f in by_rule(run_lint(ws, settings, ["superseded"], write=False), "superseded"))
    assert facts == ["minimum Node.js version (web app)", "minimum glibc version (build)"]


def test_sources_read_in_worker_processes_give_the_same_findings(ws, settings, monkeypatch):
    from wikimem.lint import corpus as lint_corpus

    compiled(ws, settings)
    (ws.state_dir / "lint-cache.db").unlink(missing_ok=True)
    monkeypatch.setattr(lint_corpus, "PARALLEL_THRESHOLD", 1)
    parallel = run_lint(ws, settings, ["superseded", "contradicted", "ungrounded"], write=False)
    (ws.state_dir / "lint-cache.db").unlink()
    monkeypatch.setattr(lint_corpus, "PARALLEL_THRESHOLD", 10**9)
    serial = run_lint(ws, settings, ["superseded", "contradicted", "ungrounded"], write=False)
    assert [f.to_json() for f in parallel.findings] == [f.to_json() for f in serial.findings]
    assert len(parallel.findings) == 2


def test_figures_stated_before_a_citation_must_be_in_the_source(ws, settings):
    compiled(ws, settings)
    cite = "([widget-2.md, line 11](../../raw/widget-2.md#L11))"
    page(ws, "answers/python.md", "---\ntitle: Python\nkind: answer\nsources: [raw/widget-2.md]\n---\n"
         f"Widget 2.0 needs Python 3.8 {cite}. It batches 64 frames {cite}.\n"
         f"Widget 2.0 needs Python 3.7 {cite}.\n")
    found = by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded")
    assert [(f.evidence["figures"], f.lines[0]) for f in found] == [(["3.7"], 7)]


def test_file_time_orders_undated_sources_only_with_a_clear_gap(ws, settings):
    import os

    a = write(ws, "a.md", "# Team notes\n\nThe service requires Postgres 14 or later.\n")
    b = write(ws, "b.md", "# More team notes\n\nThe service requires Postgres 16 or later.\n")
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, ["superseded", "contradicted"], write=False)
    assert [f.rule for f in report.findings] == ["contradicted"]  # written together: no order
    os.utime(a, ns=(a.stat().st_atime_ns, b.stat().st_mtime_ns - 30 * 86400 * 10**9))
    compile_workspace(ws, settings)
    (sup,) = run_lint(ws, settings, ["superseded", "contradicted"], write=False).findings
    assert sup.rule == "superseded" and sup.evidence["basis"] == "file time"
    assert sup.evidence["current"]["path"] == "raw/b.md"


def test_an_answer_page_that_states_a_replaced_value(ws, settings):
    compiled(ws, settings)
    page(ws, "answers/which-python.md", "---\ntitle: Which Python?\nkind: answer\nsources: [raw/widget-2.md]\n"
         "updated: 2023-06-01\n---\n# Which Python?\n\nWidget requires Python 3.8 or later.\n\n"
         "- \"Widget 2.0 requires Python 3.8 or later.\" ([widget-2.md, line 11](../../raw/widget-2.md#L11))\n")
    page(ws, "answers/fresh.md", "---\ntitle: Fresh\nkind: answer\nsources: []\nupdated: 2026-01-01\n---\n"
         "Widget requires Python 3.8 or later, as we pinned it.\n")
    found = [f for f in by_rule(run_lint(ws, settings, ["superseded"], write=False), "superseded")
             if f.evidence["basis"] == "answer page"]
    assert len(found) == 1
    (f,) = found
    assert f.paths[0] == "wiki/answers/which-python.md" and f.lines[0] == 9
    assert f.evidence["current"]["path"] == "raw/widget-4.md"
    assert f.evidence["old"]["sentence"] == "Widget requires Python 3.8 or later."


def test_a_crashing_rule_leaves_the_others_and_exits_1(ws, settings, monkeypatch):
    from wikimem import lint as lint_module

    compiled(ws, settings, widgets=False)
    page(ws, "notes/mine.md", "# Mine\n\n[gone](nope.md)\n")

    def boom(ctx):
        raise RuntimeError("planted bug")
        yield  # pragma: no cover

    monkeypatch.delenv("WIKIMEM_TESTING", raising=False)
    monkeypatch.setitem(lint_module.RULES, "orphan", lint_module.Rule("orphan", boom, "info", "x"))
    result = CliRunner().invoke(main, ["lint", "--root", str(ws.root), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["failed_rules"] == ["orphan"] and not data["ok"]
    assert any(f["rule"] == "broken-link" for f in data["findings"])
    assert not (ws.wiki / "lint.md").exists()  # an incomplete report does not become lint.md


def test_it_requires_in_notes_about_different_things_never_meet(ws, settings):
    write(ws, "a.md", "---\ndate: 2023-01-01\n---\n# Billing service\n\nIt requires Python 3.8 or later.\n")
    write(ws, "b.md", "---\ndate: 2024-01-01\n---\n# Search service\n\nIt requires Python 3.11 or later.\n")
    write(ws, "c.md", "---\ndate: 2025-01-01\n---\n# Billing service\n\nIt requires Python 3.12 or later.\n")
    compile_workspace(ws, settings)
    (sup,) = by_rule(run_lint(ws, settings, ["superseded", "contradicted"], write=False), "superseded")
    assert {sup.evidence["old"]["path"], sup.evidence["current"]["path"]} == {"raw/a.md", "raw/c.md"}


def test_a_kept_page_drawing_on_a_removed_source_is_stale(ws, settings):
    compiled(ws, settings)
    concept = next(p for p in sorted((ws.wiki / "concepts").glob("*.md")) if "raw/widget-3.md" in p.read_text(encoding="utf-8"))
    concept.write_text(concept.read_text(encoding="utf-8") + "\nMy note.\n", encoding="utf-8")  # a person keeps it
    (ws.raw / "widget-3.md").unlink()
    compile_workspace(ws, settings)  # removes the source page; the edited concept page is kept
    assert not (ws.wiki / "sources/widget-3.md").exists()
    found = [f for f in by_rule(run_lint(ws, settings, ["stale"], write=False), "stale")
             if f.evidence["page"] == f"wiki/{concept.relative_to(ws.wiki).as_posix()}"]
    assert found and found[0].evidence["sources"] == ["raw/widget-3.md"]


def test_help_names_every_rule():
    result = CliRunner().invoke(main, ["lint", "--help"], terminal_width=400)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in RULES:
        assert name in text, name


def test_quotes_compare_on_normalized_words():
    from wikimem.lint.corpus import words
    from wikimem.lint.sourcing import fragments

    assert words("Caf\u00e9 \ufb01ne") == words("Cafe\u0301 fine")
    assert words("you’re") == words("you're")
    # a `<` a page writes as an entity after a URL (pages.inert) is the source's `<`
    assert words("see x.org/&lt;b> here") == words("see x.org/<b> here")
    # link targets go, the word cut by an ellipsis goes
    assert fragments("see [the guide](https://x.org/g#L3) for details … and the rest") == \
        ["see [the guide] for", "the rest"]
    # a link to a page of the wiki is a cross-reference the compile resolved (the title of the
    # section a `:ref:` names): its text is not the quoted file's words
    assert fragments("as described at [Forcing NULL](../sources/orm.md) in the guide, which is long") == \
        ["as described at", "in the guide, which is long"]


def test_claims_from_claim_blocks_match_claims_from_every_sentence(ws):
    # sentences are split only in blocks with a digit and a hint word: the claims must be the ones
    # every sentence gives (words over a line break, list items, table rows)
    from wikimem.analysis import split_sentences
    from wikimem.facts import extract, statements_of
    from wikimem.lint import corpus as lint_corpus
    from wikimem.sources import load_source

    text = ("---\ndate: 2024-01-02\n---\n# Plugin 2.0\n\nThe plugin only\nsupports macOS 12 or later.\n\n"
            "Nothing here has a version.\n\n- The daemon requires\n  Python 3.10 or later.\n\n"
            "| tool | needs |\n|---|---|\n| cli | at least Node.js 18 |\n")
    path = write(ws, "plugin.md", text)
    fast = lint_corpus.compute("raw/plugin.md", str(path), "x", 0, 10**7)
    doc = load_source(path, "raw/plugin.md", max_bytes=10**7)
    assert fast.claims == extract(statements_of(doc, split_sentences(doc)))
    assert {c.key[1] for c in fast.claims} == {"macos", "python", "node.js"}
    # a release's notes say what it bundles with "use": lint reads the same there too
    path = write(ws, "CHANGES.md", "# Changes\n\n## 2.0 (2024-01-01)\n\n- Core: Use CLDR 49 by a contributor.\n\n"
                                   "## 1.0 (2023-01-01)\n\n- Core: Use CLDR 45.\n")
    fast = lint_corpus.compute("raw/CHANGES.md", str(path), "y", 0, 10**7)
    doc = load_source(path, "raw/CHANGES.md", max_bytes=10**7)
    assert fast.claims == extract(statements_of(doc, split_sentences(doc)))
    assert [c.value for c in fast.claims if c.key[1] == "cldr"] == [(49,), (45,)]


def test_code_spans_and_fences_pair_like_markdown():
    from wikimem.lint.context import blank_code, code_spans, fenced_blocks

    assert code_spans("a `b` c") == [(2, 5)]
    assert code_spans("``a`b`` x") == [(0, 7)]  # a shorter run inside is content
    assert code_spans("`a") == [] and code_spans("`a\nb`") == []  # unpaired, or across lines: text
    assert code_spans("x `a` `b` ```") == [(2, 5), (6, 9)]
    text = "t\n```py\n[x](gone.md)\n```\n[y](kept.md)\n~~~\n[z](open.md)\n"
    assert fenced_blocks(text) == [(2, 24)]  # the ~~~ fence is never closed: left as text
    prose = blank_code(text)
    assert "[x]" not in prose and "[y](kept.md)" in prose and "[z](open.md)" in prose
    assert len(prose) == len(text)


def test_quotes_are_found_back_from_their_citation():
    from wikimem.lint.sourcing import quotes

    cite = "([a.md, line 1](../../raw/a.md#L1))"
    text = f'- "He said "hi" to the team today" {cite}\n- "short" {cite}\n"one quote here" {cite} and "another one here" {cite}\n'
    found = [(q, t) for _at, q, t in quotes(text)]
    assert found == [
        ('He said "hi" to the team today', "../../raw/a.md#L1"),  # inner quote marks stay in the quote
        ("one quote here", "../../raw/a.md#L1"),  # "short": under 8 characters, not a quote
        ("another one here", "../../raw/a.md#L1"),
    ]
    # a key fact's section label may hold quote marks: the quote opens after the label
    label = f'- *Why doesn\'t Go have "implements" declarations?*: "The semantics of interfaces matter." {cite}\n'
    assert [q for _at, q, _t in quotes(label)] == ["The semantics of interfaces matter."]


@pytest.mark.slow
def test_pathological_lines_cost_their_length_not_its_square():
    """A person's page may hold a long line of brackets, quotes or backticks; each pattern lint
    runs over pages reads such a line in one pass (a backtracking pattern took 130 s for one
    280 KB line of quotes). No time is asserted: were it quadratic again, this test would hang."""
    from wikimem.lint.digest import compute

    head = "---\ntitle: T\nkind: concept\nsources: []\n---\n# T\n\n"
    tail = "\n\nSee [a](../../raw/a.md) and [b](../sources/b.md).\n"
    for unit in ('"abcdefghij", ', "[", "\\[", "`", "[[a", "([a](", '" ([', "[a](", "**a ", "```x\n", "](<", "[a]: "):
        body = unit * (200_000 // len(unit))
        digest = compute((head + body + tail).encode(), "concepts/t.md")
        assert "raw/a.md" in digest.other_targets and "sources/b.md" in digest.links_to, unit


def test_fix_adds_missing_back_links_up_to_the_concepts_lines_cap(ws, settings):
    from wikimem.backends.offline import MAX_CONCEPT_LINKS
    from wikimem.lint.fixes import _concept_links

    compiled(ws, settings)
    source = ws.wiki / "sources/widget-3.md"
    have = _concept_links(source.read_text(encoding="utf-8"))
    room = MAX_CONCEPT_LINKS - have
    assert room > 0
    for i in range(room + 2):  # two more concept pages than the line has room for
        page(ws, f"concepts/extra-{i:02d}.md", CONCEPT.format(
            title=f"Extra {i}", aliases="[]", body="Seen in [Widget 3.0](../sources/widget-3.md)."))
    planned = [f for f in run_lint(ws, settings, fix=True, dry_run=True).fixes
               if f.action == "add-backlink" and f.path == "wiki/sources/widget-3.md"]
    assert len(planned) == room and not any(f.skipped for f in planned)
    report = run_lint(ws, settings, fix=True)
    assert len([f for f in report.fixes if f.action == "add-backlink" and f.applied]) == room
    text = source.read_text(encoding="utf-8")
    assert _concept_links(text) == MAX_CONCEPT_LINKS
    assert "[Extra 0](../concepts/extra-00.md)" in text


def test_a_quote_of_code_that_looks_like_a_link_is_grounded(ws, settings):
    """`N[Int intType](Int) Int` is code, not a link to "Int": a quote of the sentence is in its file."""
    write(ws, "generics.md", "# Generics\n\nThe package now declares a generic method with signature\n"
                             "`(*Rand) N[Int intType](Int) Int` (see [below](#rand) for details).\n")
    cite = "([generics.md, line 3](../../raw/generics.md#L3-L4))"
    page(ws, "answers/generics.md", "---\ntitle: Generics\nkind: answer\nsources: [raw/generics.md]\n---\n"
         f'- "The package now declares a generic method with signature `(*Rand) N\\[Int intType\\](Int) Int` '
         f'(see below for details)." {cite}\n'
         f'- "The package now declares a generic method with signature `(*Rand) M\\[Int intType\\](Int) Int`." {cite}\n')
    found = by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded")
    assert len(found) == 1 and "M\\[Int" in found[0].message, found  # only the misquote


def test_a_quote_of_plain_text_that_looks_like_a_link_is_grounded(ws, settings):
    """A plain text (or a PDF) has no links: "x.[](i)" there is what it says, and a page quotes it
    with its brackets escaped. Lint read the file's words with "(i)" dropped as a link target,
    and reported the compile's own quote of it as an error."""
    write(ws, "indexing.txt", "Indexing\n\nThe expression x[i] means x.[](i) in the prototype.\n")
    cite = "([indexing.txt, line 3](../../raw/indexing.txt#L3))"
    page(ws, "answers/indexing.md", "---\ntitle: Indexing\nkind: answer\nsources: [raw/indexing.txt]\n---\n"
         f'- "The expression x\\[i\\] means x.\\[\\](i) in the prototype." {cite}\n'
         f'- "The expression x\\[i\\] means x.\\[\\](j)." {cite}\n')
    found = by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded")
    assert len(found) == 1 and "(j)" in found[0].message, [f.message for f in found]  # only the misquote


# --- stale notes: the wiki's own timelines as the yardstick ---------------------------------------

QUILL = {
    "quill/index.md": "# Quill documentation\n\nQuill is a toolkit for static sites. Start with the install page.\n",
    "quill/install.md": "# Installing Quill\n\nQuill supports Python 3.10 and newer.\n\nQuill supports PostgreSQL 14 and higher.\n",
    "quill/changes.md": ("# Changelog\n\n## Version 4.1 (2025-03-01)\n\n- Drop support for Python 3.9.\n\n"
                         "## Version 4.0 (2024-03-01)\n\n- Quill supports Python 3.9 and newer.\n"
                         "- The minimum supported version of PostgreSQL is increased from 13 to 14.\n\n"
                         "## Version 3.0 (2023-03-01)\n\n- Requires PostgreSQL 13 or later.\n"),
    "quill/guide.md": "# Writing pages\n\nA page is a Markdown file with a title.\n",
    "quill/themes.md": "# Themes\n\nA theme is a folder of templates.\n",
}


def write_quill(ws, newest: str = "", older: str = "") -> None:
    """Quill's documents, with `newest` items added to its newest release's notes (4.1) and
    `older` releases' notes after the oldest."""
    for rel, body in QUILL.items():
        write(ws, rel, body)
    if newest or older:
        changes = QUILL["quill/changes.md"].replace("- Drop support for Python 3.9.\n",
                                                    "- Drop support for Python 3.9.\n" + newest)
        write(ws, "quill/changes.md", changes + (f"\n{older}" if older else ""))


RUNBOOK = ("# Our runbook (Quill)\n\n"
           "- Quill supports Python 3.8 and newer, so the old build workers stay.\n"  # line 3: stale
           "- We need Python 3.10 at least on new hosts.\n"  # line 4: current
           "- PostgreSQL 12 is the oldest version the toolkit accepts.\n"  # line 5: stale, subject from the sentence
           "- Quill needs PostgreSQL 14 or later, which ops gave us.\n"  # line 6: current
           "- Redis 7.2 is what we run; do not go below 7.\n")  # line 7: no timeline tracks it


def test_a_list_a_sentence_introduces_is_read_by_lint_as_by_the_timelines(ws, settings):
    """ "The supported Python versions are:" then one version an item: lint reads the list as the
    timeline does (a note's "runs on Python 3.10" is stale against its oldest, 3.11), and the
    timeline page quotes the list in the file's own words (no ungrounded finding)."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite runs tasks.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "kite/history/whatsnew-5.7.rst", "What's new in Kite 5.7\n======================\n\n"
                                               "The supported Python versions are:\n\n- CPython 3.11\n- CPython 3.12\n"
                                               "- CPython 3.13\n")
    write(ws, "kite/history/whatsnew-5.6.rst", "What's new in Kite 5.6\n======================\n\n"
                                               "The supported Python versions are:\n\n- CPython 3.9\n- CPython 3.10\n"
                                               "- CPython 3.11\n")
    write(ws, "notes/runbook.md", "# Runbook\n\n- Kite still runs on Python 3.10, so the batch hosts stay.\n")
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "kite-minimum-python-version.md").read_text(encoding="utf-8")
    assert "Current: **CPython 3.11**" in timeline, timeline
    report = run_lint(ws, settings, ["stale-note", "ungrounded"], write=False)
    assert by_rule(report, "ungrounded") == []
    (stale,) = by_rule(report, "stale-note")
    assert stale.paths[0] == "raw/notes/runbook.md" and "CPython 3.11" in stale.message


def test_a_statement_read_with_the_sentence_opening_its_list_is_quoted_as_the_file_has_it(ws, settings):
    """ "The current version of Quill works on:", then "- Windows, Linux and macOS." and "- CPython
    3.10, 3.11 and 3.12.": the timeline quoted "The current version of Quill works on CPython
    3.10, ...", words the file does not hold in a row, and lint reported the compile's own quote
    as ungrounded. The item between is left out as such: "... works on: … CPython 3.10, ..."."""
    write_quill(ws)
    write(ws, "quill/install.md", "# Installing Quill\n\n## Compatibility\n\nThe current version of Quill works on:\n\n"
                                  "- Windows, Linux and macOS.\n- CPython 3.10, 3.11 and 3.12.\n")
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-minimum-python-version.md").read_text(encoding="utf-8")
    assert '"The current version of Quill works on: … CPython 3.10, 3.11 and 3.12."' in timeline, timeline
    assert by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded") == []


def test_a_default_written_as_a_string_and_its_timelines_quotes_are_read_whole(ws, settings):
    """A setting's reference says "Default: ``"quill.engines.Fast"``" and a release changed it to
    that string: the timeline showed the value in quote marks in its "Current" line and its table,
    and lint read each quote from the value's first mark, reporting the compile's own quotes as
    ungrounded. A string's value is shown as the release's words give it, and a quote in a
    table's row is read within its cell."""
    write_quill(ws, newest="- The default value of the `RENDER_ENGINE` setting was changed from `None` to "
                           '`"quill.engines.Fast"`.\n')
    write(ws, "quill/settings.rst", "Settings\n========\n\nQuill reads ``quill.toml``.\n\n"
                                    "RENDER_ENGINE\n-------------\n\n"
                                    'Default: ``"quill.engines.Fast"``\n\nThe engine that renders pages.\n')
    compile_workspace(ws, settings)
    timeline = next(p for p in (ws.wiki / "facts").glob("*render*engine*.md")).read_text(encoding="utf-8")
    assert "Current: **quill.engines.Fast**" in timeline, timeline
    assert by_rule(run_lint(ws, settings, ["ungrounded"], write=False), "ungrounded") == []
    from wikimem.lint.extract import quotes
    row = '| "x.Fast" | current documentation | "Default: `"x.Fast"`" ([s.rst, line 9](../../raw/s.rst#L9)) |\n'
    assert [q for _, q, _ in quotes(row)] == ['Default: `"x.Fast"`']


def test_stale_note_names_both_sentences_and_how_to_fix_it(ws, settings):
    write_quill(ws)
    write(ws, "notes/runbook.md", RUNBOOK)
    page(ws, "people/ana.md", "# Ana\n\nAna keeps the deploy images; Quill supports Python 3.9 and newer there.\n")
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    where = sorted((f.paths[0], f.lines[0]) for f in found)
    assert where == [("raw/notes/runbook.md", 3), ("raw/notes/runbook.md", 5), ("wiki/people/ana.md", 3)]
    python = next(f for f in found if f.lines[0] == 3 and f.paths[0] == "raw/notes/runbook.md")
    assert python.evidence["note"]["sentence"] == "Quill supports Python 3.8 and newer, so the old build workers stay."
    assert python.evidence["current"]["path"] == "raw/quill/install.md"
    assert python.evidence["current"]["sentence"] == "Quill supports Python 3.10 and newer."
    assert "update the note" in python.message and "raw/quill/install.md" in python.message


def test_a_note_that_says_a_version_is_accepted_is_stale_below_the_oldest_accepted(ws, settings):
    """What a team writes when it relies on a dependency's version being good enough for the
    product ("`x==13`, which Quill still accepts", "the oldest PostgreSQL that Quill accepts",
    "is recent enough", "is all Quill needs", "is still supported") is weighed against the
    product's minimum: below it, stale; at or above it, current. A version said to be not
    supported, or in the past, is not read as accepted."""
    write_quill(ws)
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- We pin `postgresql==13`, which Quill still accepts.\n"  # 3: stale
                                  "- The lock file has `postgresql>=12`, the oldest PostgreSQL that Quill accepts.\n"  # 4: stale
                                  "- The image's PostgreSQL 13.2 (from the distribution) is recent enough.\n"  # 5: stale
                                  "- Python 3.9 is all Quill needs on the build hosts.\n"  # 6: stale
                                  "- Python 3.8 LTS is still supported by Quill.\n"  # 7: stale
                                  "- PostgreSQL 14 is recent enough for the search page.\n"  # 8: current
                                  "- Python 3.11, which Quill still accepts, runs the docs job.\n"  # 9: current
                                  "- Python 3.7 is not supported anymore, so the old hosts went.\n"  # 10: not accepted
                                  "- Quill only asks for PostgreSQL 12 or later.\n"  # 11: stale, a minimum in other words
                                  "- Quill asks for PostgreSQL 14 or later.\n"  # 12: current
                                  "- Quill still installs on Python 3.9, so the batch image stays.\n")  # 13: stale
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert sorted(f.lines[0] for f in found if f.paths[0] == "raw/notes/runbook.md") == [3, 4, 5, 6, 7, 11, 13]
    pinned = next(f for f in found if f.lines[0] == 3)
    assert pinned.evidence["note"]["sentence"] == "We pin `postgresql==13`, which Quill still accepts."
    assert "Minimum PostgreSQL version" in pinned.message and "timeline says 14" in pinned.message


def test_a_note_is_stale_against_the_version_after_a_drop(ws, settings):
    """Nothing states Quill's minimum Python after 4.1 drops 3.9, but its documents number
    Python one by one past it: the minimum is 3.10, a note stating 3.9 is stale and one stating
    3.10 is current."""
    write_quill(ws)
    write(ws, "quill/install.md", "# Installing Quill\n\nQuill supports PostgreSQL 14 and higher.\n\n"
                                  "The test suite runs on Python 3.12 and Python 3.13.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Quill supports Python 3.9 and newer, so the old build workers stay.\n"  # line 3: stale
                                  "- We need Python 3.10 at least on new hosts.\n")  # line 4: current
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-minimum-python-version.md").read_text(encoding="utf-8")
    assert "Current: **Python 3.10**" in timeline
    (stale,) = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert (stale.paths[0], stale.lines[0]) == ("raw/notes/runbook.md", 3)
    assert stale.evidence["current"]["sentence"] == "Drop support for Python 3.9."
    assert "update the note to Python 3.10" in stale.message


def test_the_newest_version_supported_has_a_timeline_and_an_older_one_in_a_note_is_stale(ws, settings):
    write_quill(ws)
    write(ws, "quill/changes.md", QUILL["quill/changes.md"].replace(
        "- Drop support for Python 3.9.\n", "- Drop support for Python 3.9.\n- Test against Python 3.14.\n").replace(
        "- Quill supports Python 3.9 and newer.\n", "- Quill supports Python 3.9 and newer.\n- Add support for Python 3.13.\n"))
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Quill supports Python up to 3.13, so the new CI image has to wait.\n"  # line 3: stale
                                  "- Quill is tested against Python 3.14 at most.\n"  # line 4: current
                                  "- Quill is only tested up to Python 3.12, so the workers stay on it.\n"  # line 5: stale
                                  "- Quill is tested up to Python 3.14 in CI.\n"  # line 6: current
                                  "- Nothing newer than Python 3.13 is supported by Quill yet.\n"  # line 7: stale
                                  "- Quill only claims Python up to 3.13, so the pods stay on it.\n")  # line 8: stale
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-newest-python-version-supported.md").read_text(encoding="utf-8")
    assert "Current: **Python 3.14**, 4.1" in timeline and "Test against Python 3.14." in timeline
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    where = sorted(f.lines[0] for f in found if f.paths[0] == "raw/notes/runbook.md")
    assert where == [3, 5, 7, 8], [f.message for f in found]


def test_a_newest_version_supported_said_majors_ago_is_no_current_value(ws, settings):
    """The last release that named a newest Python is two major versions behind the newest
    release: versions were added since without a word the rules read, so no claim is made."""
    write_quill(ws)
    write(ws, "quill/changes.md", QUILL["quill/changes.md"].replace(
        "## Version 4.1 (2025-03-01)", "## Version 6.0 (2026-03-01)\n\n- Faster builds.\n\n## Version 4.1 (2025-03-01)").replace(
        "- Quill supports Python 3.9 and newer.\n", "- Quill supports Python 3.9 and newer.\n- Add support for Python 3.13.\n").replace(
        "## Version 3.0 (2023-03-01)\n\n", "## Version 3.0 (2023-03-01)\n\n- Add support for Python 3.12.\n"))
    compile_workspace(ws, settings)
    assert not (ws.wiki / "facts" / "quill-newest-python-version-supported.md").exists()
    # one major behind: the latest statement, not what holds now
    write(ws, "quill/changes.md", QUILL["quill/changes.md"].replace(
        "## Version 4.1 (2025-03-01)", "## Version 5.0 (2026-03-01)\n\n- Faster builds.\n\n## Version 4.1 (2025-03-01)").replace(
        "- Quill supports Python 3.9 and newer.\n", "- Quill supports Python 3.9 and newer.\n- Add support for Python 3.13.\n").replace(
        "## Version 3.0 (2023-03-01)\n\n", "## Version 3.0 (2023-03-01)\n\n- Add support for Python 3.12.\n"))
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-newest-python-version-supported.md").read_text(encoding="utf-8")
    assert "Latest statement (4.0, 2024-03-01): **Python 3.13**" in timeline, timeline


def test_a_note_still_using_a_name_a_release_removed_is_stale(ws, settings):
    """The changelog says `QUILL_ENV` and `site.theme_dir` went and `render_many` was renamed:
    a note that still uses them is stale; one that says it moved off them and a name that came
    back in a later release are not; a name only deprecated is worth an "info" finding, written
    as the note writes it (qualified by its module)."""
    write_quill(ws, newest=(
        "- The `QUILL_ENV` environment variable and `site.theme_dir` property are removed.\n"
        "- Rename `render_many` parameter to `render_all` in page hooks.\n"
        "- Remove `Site.page_cache` and `Site.asset_cache`.\n"
        "- `legacy_links` is deprecated.\n"
        "- The `rebuild()` method is deprecated.\n"
        "- Restore previously removed `Site.asset_cache`.\n"
        "- Renamed the `--root` CLI flag to `--search-root`, for clarity.\n"))
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Export `QUILL_ENV=dev` before `quill build` to get drafts.\n"  # line 3: stale
                                  "- Page hooks pass `render_many=True` to get every page.\n"  # line 4: stale
                                  "- We moved off `site.theme_dir` last spring.\n"  # line 5: says it went
                                  "- Assets are read through `site.asset_cache`.\n"  # line 6: came back
                                  "- Every page sets `quill.legacy_links = true`.\n"  # line 7: only deprecated
                                  "- We stopped using `legacy_links` when it was deprecated.\n"  # line 8: says so
                                  "- CI jobs rebuild the site every night.\n"  # line 9: the word, not the method
                                  "- `quill --root ci/ build` builds the CI site.\n"  # line 10: a renamed option
                                  "- `quill --root-dir ci/` is our wrapper's flag.\n")  # line 11: another option
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    where = sorted((f.paths[0], f.lines[0], f.severity) for f in found if f.paths[0].startswith("raw/notes/"))
    assert where == [("raw/notes/runbook.md", 3, "warning"), ("raw/notes/runbook.md", 4, "warning"),
                     ("raw/notes/runbook.md", 7, "info"), ("raw/notes/runbook.md", 10, "warning")], \
        [f.message for f in found]
    assert "deprecated legacy_links in 4.1" in next(f for f in found if f.lines[0] == 7).message
    env = next(f for f in found if f.lines[0] == 3)
    assert env.evidence["current"]["path"] == "raw/quill/changes.md" and "QUILL_ENV" in env.message
    assert "4.1" in env.message


def test_a_name_gone_is_one_finding_a_note_and_a_name_in_another_case_is_not_it(ws, settings):
    """A note that uses a name a release removed on three lines gets one finding, which lists
    them (six identical findings on one chapter before); a deprecated `Title` function is not
    the `<title>` element a note writes in lower case: code's names are case-sensitive."""
    write_quill(ws, newest="- The `QUILL_ENV` environment variable is removed.\n"
                           "- The `Title` function is now deprecated.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Export `QUILL_ENV=dev` before `quill build` to get drafts.\n"  # line 3
                                  "- The CI job sets `QUILL_ENV=ci` as well.\n"  # line 4
                                  "- Each page's `<title>` comes from its first heading.\n"  # line 5: not `Title`
                                  "- Nightly builds also export `QUILL_ENV`.\n")  # line 6
    compile_workspace(ws, settings)
    found = [f for f in by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
             if f.paths[0] == "raw/notes/runbook.md"]
    assert len(found) == 1, [f.message for f in found]
    assert found[0].lines[0] == 3 and found[0].evidence["note"]["lines"] == [3, 4, 6]
    assert "raw/notes/runbook.md (lines 3, 4, 6) still uses it" in found[0].message


def test_folders_the_front_pages_contents_list_are_the_products_documentation_not_notes(ws, settings):
    """A Sphinx set whose index lists `intro/install` and `topics/commands` in its toctree, those
    folders with no front page of their own: each of their documents was a series of its own and
    read as a team's note, and an unseen set had 95 stale-note findings on its own reference pages
    (a release removed a `spider` argument; every page says `spider`). They are the product's
    documentation: its timelines read them, and only the notes beside them are weighed."""
    write(ws, "index.rst", "Quill documentation\n===================\n\nQuill is a toolkit for static sites.\n\n"
                           ".. toctree::\n   :caption: First steps\n\n   intro/install\n   topics/commands\n")
    write(ws, "news.rst", "Release notes\n=============\n\nQuill 2.0.0 (2025-03-01)\n------------------------\n\n"
                          "- The ``QUILL_ENV`` environment variable is removed.\n\n"
                          "Quill 1.0.0 (2024-03-01)\n------------------------\n\n- Quill requires Python 3.8 or later.\n")
    write(ws, "intro/install.rst", "Installing Quill\n================\n\nQuill requires Python 3.10 or later.\n")
    write(ws, "intro/tutorial.rst", "Tutorial\n========\n\nA first site takes five minutes.\n")
    write(ws, "topics/commands.rst", "Commands\n========\n\nBefore 2.0, ``quill build`` read ``QUILL_ENV`` to pick drafts; "
                                     "``quill build`` reads ``QUILL_ENV`` no more.\n\n"
                                     "The ``quill serve`` command reads ``QUILL_ENV`` from the shell.\n")
    write(ws, "topics/settings.rst", "Settings\n========\n\nSettings live in ``quill.toml``.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n- Export `QUILL_ENV=dev` before `quill build` to get drafts.\n")
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-minimum-python-version.md").read_text(encoding="utf-8")
    assert "Current: **Python 3.10**" in timeline and "raw/intro/install.rst" in timeline, timeline
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert [f.paths[0] for f in found] == ["raw/notes/runbook.md"], [f.message for f in found]


def test_a_deprecation_said_of_both_names_or_of_the_old_name_is_read(ws, settings):
    """ "Both `X` and `Y` have been deprecated" deprecates both; "The old `render_all` name is now
    deprecated" deprecates a plain word, which the item says is a name: a note using them gets
    its "info" finding, written as code."""
    write_quill(ws, newest="- Both `quill.PageSet` and `quill.PageMatcher` have been deprecated.\n"
                           "- The keyword previously called `render_all` is now `render_every`.\n"
                           "  The old `render_all` name is now deprecated.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Drafts are grouped with `quill.PageMatcher`.\n"  # line 3: deprecated
                                  "- Hooks pass `render_all=True` to see every page.\n"  # line 4: deprecated
                                  "- We render all pages at night.\n")  # line 5: the words, not the name
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert sorted((f.lines[0], f.severity) for f in found if f.paths[0] == "raw/notes/runbook.md") == \
        [(3, "info"), (4, "info")], [f.message for f in found]


def test_a_note_using_the_replacement_a_deprecation_names_is_not_stale(ws, settings):
    """ "`quill.render_pages` has been deprecated in favor of `quill.lowlevel.render_pages`": the
    replacement ends in the same last part, and a note that uses it uses the new name; a note
    calling the old one on an object of its own (`site.render_pages()`) still gets its finding."""
    write_quill(ws, newest="- `quill.render_pages` has been deprecated in favor of `quill.lowlevel.render_pages`.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Drafts are built with `quill.lowlevel.render_pages`.\n"  # line 3: the replacement
                                  "- The nightly job calls `site.render_pages()` on the whole site.\n")  # line 4: the old one
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert [(f.paths[0], f.lines[0], f.severity) for f in found] == [("raw/notes/runbook.md", 4, "info")], \
        [f.message for f in found]


def test_a_note_using_a_name_a_release_removed_in_another_way_of_writing_it_is_stale(ws, settings):
    """Release notes write what went in more ways than code spans: a name without marks
    ("Removed ink_cache and ..."), an option ("support for the --dry-run parameter"), a plain
    word the item says is a name ("The `ordered` option is removed"), a worker that "has been
    dropped", a title that is only the name and "deprecated". A note using any of them is
    stale, also where a "not" stands elsewhere in its sentence; one that says it does not
    use the name, and one that only has the plain word as a word, are not. A name the release
    no longer deprecates ("Undeprecate `X`") makes a note that says it is deprecated stale. A
    common word a release a major version or more ago removed (the `install` command) is the
    word in a note, and a deprecation of one use of a name ("in case of ...") is not of the name."""
    write_quill(ws, newest=(
        "- Removed ink_cache and page_index modules.\n"
        "- Removed support for the --dry-run parameter to quill build.\n"
        "- The `ordered` class Meta option is removed. Field order is kept by default.\n"
        "- The `gevent` worker class has been dropped.\n"
        "- `quill.util.tree` deprecated\n"
        "- The `Layout` class is removed.\n"
        "- Undeprecate ``page_dot`` now that dot is maintained again.\n"
        "- Deprecate ``render_page`` in case of drafts, to change its return value in 5.0.\n"),
        older="## Version 2.0 (2021-03-01)\n\n- The vestigial ``install`` command has been removed.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- The bootstrap imports `ink_cache` to warm the pages.\n"  # line 3: stale
                                  "- Release checks run `quill build --dry-run` first.\n"  # line 4: stale
                                  "- Schemas keep `ordered = True` in their Meta.\n"  # line 5: stale
                                  "- Pages that are not drafts are then served by `-k gevent` workers.\n"  # line 6: stale
                                  "- Our plugin builds elements with `quill.util.tree`.\n"  # line 7: deprecated
                                  "- We do not use `ink_cache` any more.\n"  # line 8: says it does not
                                  "- Menus are ordered by weight.\n"  # line 9: the word, not the option
                                  "- The layout of each page is set in its header.\n"  # line 10: the word, not the class
                                  "- `page_dot` is deprecated, so diagrams go through graphviz.\n"  # line 11: stale
                                  "- Diagrams are drawn with `page_dot`.\n"  # line 12: uses it, rightly
                                  "- Setup runs `pip install quill` first.\n"  # line 13: the word, and long ago
                                  "- `render_page` builds each page.\n")  # line 14: one use deprecated, not the name
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    where = sorted((f.lines[0], f.severity) for f in found if f.paths[0] == "raw/notes/runbook.md")
    assert where == [(3, "warning"), (4, "warning"), (5, "warning"), (6, "warning"), (7, "info"), (11, "warning")], \
        [f.message for f in found]
    assert "no longer deprecates page_dot" in next(f for f in found if f.lines[0] == 11).message


def test_a_note_naming_the_product_as_its_front_page_titles_it_is_about_it(ws, settings):
    """The product is known by one word of its front page's title ("gizmo"); a note that names it
    in full ("Gizmo Extensions runs on ...") is about it, one naming another product that shares
    the word ("Gizmo Cloud") is not."""
    write(ws, "index.md", "# Gizmo Extensions\n\n## Overview\n\nGizmo Extensions is a collection of extensions "
                          "for Markdown. Each gizmo extension is loaded by name.\n")
    for name in ("tables", "keys", "tasks"):
        write(ws, f"extensions/{name}.md", f"# {name.title()}\n\nThe gizmo {name} extension renders {name}.\n")
    write(ws, "about/changelog.md", "# Changelog\n\n## 2.0\n\n- Drop Python 3.9 and require Python >= 3.10.\n\n"
                                    "## 1.0\n\n- Require Python 3.8 or newer.\n\n## 0.9\n\n- First release.\n")
    write(ws, "notes/platform.md", "# Platform notes\n\n"
                                   "- Gizmo Extensions runs on Python 3.9 and newer, so the old builder stays.\n"  # line 3
                                   "- Gizmo Cloud runs on Python 3.9 and newer, our vendor says.\n")  # line 4
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    lines = sorted(f.lines[0] for f in found if f.paths[0] == "raw/notes/platform.md")
    assert lines == [3], [f.message for f in found]


def test_a_note_stating_a_word_default_the_product_changed_is_stale(ws, settings):
    """A default that is a word, not a version: the changelog switched it, the timeline says
    so, and a note that still states the old value is a stale note; one that states the new
    value, written another way (a module path, a call), is not. A generic subject stated on two
    reference pages ("the default name") is no contradiction."""
    write_quill(ws, newest="- Switch the default page renderer to be 'markdown-it'.\n")
    write(ws, "quill/pages.md", "# Pages\n\nThe default name is `index`.\n")
    write(ws, "quill/themes.md", "# Themes\n\nA theme is a folder of templates. The default name is `plain`.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Quill's default page renderer is commonmark: tables need a plugin.\n"  # line 3: stale
                                  "- Our fork's default page renderer is `quill.render.MarkdownIt()`.\n")  # line 4: current
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-default-page-renderer.md").read_text(encoding="utf-8")
    assert "Current: **markdown-it**" in timeline
    report = run_lint(ws, settings, ["stale-note", "contradicted"], write=False)
    (stale,) = by_rule(report, "stale-note")
    assert (stale.paths[0], stale.lines[0]) == ("raw/notes/runbook.md", 3)
    assert stale.evidence["note"]["value"] == "commonmark" and stale.evidence["current"]["value"] == "markdown-it"
    assert "update the note to markdown-it" in stale.message
    assert not by_rule(report, "contradicted")


def test_a_note_stating_another_default_than_the_reference_is_stale(ws, settings):
    """No release changed it, so no timeline tracks it: the product's reference, which states
    each setting's default under it, is the yardstick. A note that says another value (a switch
    said as on/off, a number, a name in code) is stale; the same value written another way, a
    value said in a phrase, and a setting the reference does not give are not."""
    write_quill(ws)
    write(ws, "quill/settings.rst", "Settings\n========\n\nQuill reads ``quill.toml``.\n\n"
                                    ".. confval:: strict_links\n   :default: True\n\n   Fails the build on a broken link.\n\n"
                                    ".. confval:: worker_count\n   :default: 4\n\n   How many pages render at once.\n\n"
                                    ".. confval:: page_engine\n   :default: ``quill.engines.Fast``\n\n"
                                    "   The engine that renders pages, which the guide compares.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- `strict_links` is off by default, so we turn it on in CI.\n"  # line 3: stale
                                  "- `worker_count` defaults to 8 on the build hosts.\n"  # line 4: stale
                                  "- `page_engine` defaults to `Fast`, which is what we want.\n"  # line 5: current
                                  "- `page_engine` is the fast engine by default.\n"  # line 6: a phrase
                                  "- `cache_dir` defaults to `/tmp/quill`.\n")  # line 7: not in the reference
    compile_workspace(ws, settings)
    found = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert sorted(f.lines[0] for f in found if f.paths[0] == "raw/notes/runbook.md") == [3, 4]
    switch = next(f for f in found if f.lines[0] == 3)
    assert switch.evidence["current"]["path"] == "raw/quill/settings.rst"
    assert switch.evidence["note"]["value"] == "off" and switch.evidence["current"]["value"] == "True"
    assert "update the note to True" in switch.message


def test_a_note_stating_another_default_than_the_newest_release_says_is_stale(ws, settings):
    """A default one release's notes state once ("`generate_password_hash` uses scrypt by
    default", Werkzeug 3.0.0) makes no timeline, and no reference page states it: a team's note
    that says the hash defaults to PBKDF2 went unflagged. The newest release that says what the
    default is states it, when no reference does; a note that agrees is not stale."""
    write_quill(ws)
    write(ws, "quill/changes.md", QUILL["quill/changes.md"].replace(
        "- Drop support for Python 3.9.\n",
        "- Drop support for Python 3.9.\n- ``seal_page`` uses blake2 by default.\n").replace(
        "- Quill supports Python 3.9 and newer.\n", "- Quill supports Python 3.9 and newer.\n"
        "- ``pack_site`` uses zstd by default.\n"))
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- Pages are sealed with `seal_page`, which defaults to md5.\n"  # line 3: stale
                                  "- `pack_site` defaults to zstd, which the mirror reads.\n")  # line 4: current
    compile_workspace(ws, settings)
    found = [f for f in by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
             if f.paths[0] == "raw/notes/runbook.md"]
    assert [f.lines[0] for f in found] == [3]
    assert found[0].evidence["current"]["value"] == "blake2" and "the notes of 4.1 say blake2" in found[0].message


def test_a_default_under_a_settings_heading_or_changed_by_a_release_is_the_yardstick(ws, settings):
    """A settings reference that heads each setting with its name (a section titled
    ``render_timeout``, "Default: ``30``" under it, no directive naming it) states that
    setting's default; a release item that says a default changed ("defaults to 500kB instead
    of unlimited") states the new one. A note that says the old value of either is stale; one
    that agrees, and a "Default:" under a heading of words, are not weighed against it."""
    write_quill(ws)
    write(ws, "quill/settings.rst", "Settings\n========\n\nQuill reads ``quill.toml``.\n\n"
                                    "``render_timeout``\n------------------\n\nDefault: ``30``\n\n"
                                    "How long a page may render.\n\n"
                                    "``link_retries``\n----------------\n\nDefault: ``3``\n\n"
                                    "How often a link is tried.\n\n"
                                    "``page_options``\n----------------\n\nDefault: ``{'retry': True, 'limit': 3}``\n\n"
                                    "Passed to each page.\n\n"
                                    "Page cache\n----------\n\nDefault: ``64``\n\nThe cache's size.\n")
    write(ws, "quill/changes.md", QUILL["quill/changes.md"].replace(
        "- Drop support for Python 3.9.\n",
        "- Drop support for Python 3.9.\n- ``max_page_size`` defaults to 500kB instead of unlimited.\n"))
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- `render_timeout` defaults to 60, so slow pages pass.\n"  # line 3: stale
                                  "- `link_retries` defaults to 3, enough for CI.\n"  # line 4: current
                                  "- `max_page_size` is unlimited by default, so big pages build.\n"  # line 5: stale
                                  "- `page_cache` defaults to 128.\n"  # line 6: no setting of that name
                                  "- `page_options` is empty by default, so we pass our own.\n")  # line 7: stale
    compile_workspace(ws, settings)
    found = [f for f in by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
             if f.paths[0] == "raw/notes/runbook.md"]
    assert sorted(f.lines[0] for f in found) == [3, 5, 7], [f.message for f in found]
    timeout = next(f for f in found if f.lines[0] == 3)
    assert timeout.evidence["current"] == {"path": "raw/quill/settings.rst", "sentence": "Default: `30`",
                                           "value": "30"}, timeout.evidence
    assert timeout.evidence["note"]["value"] == "60" and "says 60;" in timeout.message  # not "60,"
    size = next(f for f in found if f.lines[0] == 5)
    assert size.evidence["current"]["path"] == "raw/quill/changes.md" and "500kB" in size.message


def test_n_identical_files_are_one_duplicate_finding_and_lint_agrees_cold_and_warm(ws, settings):
    """Six copies of a note are one finding, not fifteen; and a lint with no cache and the next
    one with a warm cache report the same findings, facts and stale notes included."""
    text = " ".join(f"Step {i} of the rollout flushes the render queue after frame {i * 7}." for i in range(25))
    for n in range(6):
        write(ws, f"copies/note-{n}.md", f"# Rollout copy {n}\n\n{text}\n")
    write_quill(ws)
    write(ws, "notes/runbook.md", RUNBOOK)
    compile_workspace(ws, settings)
    (ws.state_dir / "lint-cache.db").unlink(missing_ok=True)
    cold = run_lint(ws, settings, write=False)
    warm = run_lint(ws, settings, write=False)
    same_text = [f for f in by_rule(cold, "duplicate") if f.evidence.get("same_text")]
    assert [len(f.evidence["sources"]) for f in same_text] == [6]
    assert by_rule(cold, "stale-note") and by_rule(cold, "superseded") == by_rule(warm, "superseded")
    assert [f.to_json() for f in cold.findings] == [f.to_json() for f in warm.findings]


def test_a_releases_statement_beside_the_products_pages_is_history_not_a_contradiction(ws, settings):
    """A support table row of an old release (3.0: Python 3.8) and the install page (3.10) are
    not "neither is newer": the row is about its release; two pages that disagree still are."""
    write_quill(ws)
    write(ws, "quill/support.md", "# Support\n\n| Quill version | Python versions |\n|---|---|\n"
                                  "| 4.1 | 3.10, 3.11, 3.12 |\n| 3.0 | 3.8, 3.9 |\n")
    compile_workspace(ws, settings)
    assert not by_rule(run_lint(ws, settings, ["contradicted"], write=False), "contradicted")
    write(ws, "quill/faq.md", "# FAQ\n\nQuill supports Python 3.11 and newer.\n")
    compile_workspace(ws, settings)
    (con,) = by_rule(run_lint(ws, settings, ["contradicted"], write=False), "contradicted")
    assert set(con.paths) == {"raw/quill/install.md", "raw/quill/faq.md"}


def test_a_note_stating_an_older_bundled_version_is_stale(ws, settings):
    """An unseen set's changelog says "Bundled libtoolkit is updated to 4.3.5" (the version a
    release bundles, said of it); a team's note "The Quill wheels bundle libtoolkit 4.3.4" is
    stale against it, and one stating 4.3.5 is current."""
    write_quill(ws, newest="- Bundled libtoolkit is updated to 4.3.5, which changes its license.\n",
                older="## Version 2.0 (2022-03-01)\n\n- Bump bundled libtoolkit to 4.3.4\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- The Quill wheels bundle libtoolkit 4.3.4, the same as our hosts.\n"  # line 3: stale
                                  "- Quill ships with libtoolkit 4.3.5 now.\n")  # line 4: current
    compile_workspace(ws, settings)
    timeline = (ws.wiki / "facts" / "quill-libtoolkit-version.md").read_text(encoding="utf-8")
    assert "**libtoolkit 4.3.5**" in timeline
    (stale,) = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert (stale.paths[0], stale.lines[0]) == ("raw/notes/runbook.md", 3)


def test_a_switch_said_off_agrees_with_false(ws, settings):
    """An unseen set's note "`strict_mode` is off by default" was reported stale against the
    changelog's "`strict_mode` now defaults to `False` instead of `True`": off is False. A note
    that still says on is stale."""
    write_quill(ws, newest="- `strict_mode` now defaults to `False` instead of `True`.\n")
    write(ws, "notes/runbook.md", "# Our runbook (Quill)\n\n"
                                  "- `strict_mode` is off by default, so drafts build.\n"  # line 3: current
                                  "- `strict_mode` is on by default, so we pass it off.\n")  # line 4: stale
    compile_workspace(ws, settings)
    (stale,) = by_rule(run_lint(ws, settings, ["stale-note"], write=False), "stale-note")
    assert (stale.paths[0], stale.lines[0]) == ("raw/notes/runbook.md", 4)

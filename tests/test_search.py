"""Search: the derived whoosh index, its incremental updates, natural questions and ranking."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import corpus, past_racy_window, single_threaded, write
from wikimem import search as S
from wikimem.cli import main
from wikimem.compiler import compile_workspace

NOTES = {
    "notes/toolchain.md": "# Bootstrapping the toolchain\n\nThe build needs Go 1.22 to bootstrap.\n\n"
                          "## Caches\n\nThe build cache lives in ~/.cache/build and is pruned weekly.\n",
    "notes/release-1.md": "# Widget 1 Release Notes\n\nWidget 1 requires macOS 11 Big Sur or later.\n",
    "notes/release-2.md": "# Widget 2 Release Notes\n\nWidget 2 requires macOS 13 Ventura or later.\n",
    "notes/cooking.md": "# Sourdough\n\nFeed the starter twice a day with rye flour and water.\n",
}


@pytest.fixture
def compiled(ws, settings):
    for rel, text in NOTES.items():
        write(ws, rel, text)
    compile_workspace(ws, settings)
    return ws


def paths(hits):
    return [h.path for h in hits]


def test_natural_question_finds_the_passage_and_not_by_and_of_all_words(compiled):
    hits = S.search(compiled, "How long is the build cache kept before it is pruned?", limit=5)
    assert hits, "a natural question must match on its content words"
    top = hits[0]
    assert top.path in ("raw/notes/toolchain.md", "wiki/sources/notes-toolchain.md")
    assert "pruned weekly" in top.snippet
    assert top.kind in ("raw", "source") and top.title == "Bootstrapping the toolchain"
    assert all(h.path.startswith(("wiki/", "raw/")) for h in hits)


def test_hit_contract(compiled):
    hit = S.search(compiled, "sourdough starter", limit=1)[0]
    assert set(hit.to_json()) == {"path", "title", "kind", "score", "snippet"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        hit.score = 0  # type: ignore[misc]


def test_kinds_filter_and_bad_kind(compiled):
    assert {h.kind for h in S.search(compiled, "macOS", kinds=("raw",))} == {"raw"}
    assert {h.kind for h in S.search(compiled, "macOS", kinds=("source",))} == {"source"}
    from wikimem.errors import UsageError

    with pytest.raises(UsageError):
        S.search(compiled, "macOS", kinds=("nope",))


def test_newer_member_of_a_series_ranks_first_for_current_questions(compiled):
    hits = S.search(compiled, "What is the current minimum macOS version required by Widget?", limit=10)
    # the raw file or its source page, whichever ranks first
    first = {n: min(i for i, h in enumerate(hits) if f"release-{n}" in h.path) for n in (1, 2)}
    assert first[2] < first[1]
    # the timeline of the fact (current value first) or the newest release's notes
    assert hits[0].title in ("Minimum macOS version (widget)", "Widget 2 Release Notes")
    if hits[0].kind == "fact":
        assert "release-2" in (compiled.wiki / hits[0].path.removeprefix("wiki/")).read_text().split("## Every")[0]


def test_update_index_is_incremental_and_a_noop_when_nothing_changed(compiled):
    first = S.update_index(compiled)
    again = S.update_index(compiled)
    assert not again.changed and again.added == again.updated == again.removed == []
    assert first.files == again.files
    write(compiled, "notes/new.md", "# Zebra facts\n\nZebras have stripes that confuse flies.\n")
    report = S.update_index(compiled)
    assert report.added == ["raw/notes/new.md"] and not report.rebuilt
    assert S.search(compiled, "why do zebras have stripes", limit=1)[0].path == "raw/notes/new.md"
    (compiled.raw / "notes" / "new.md").unlink()
    report = S.update_index(compiled)
    assert report.removed == ["raw/notes/new.md"]
    assert "raw/notes/new.md" not in paths(S.search(compiled, "zebras stripes flies"))


def test_edit_in_place_is_seen(compiled):
    S.update_index(compiled)
    path = compiled.raw / "notes" / "cooking.md"
    path.write_text("# Sourdough\n\nFeed the starter with spelt flour.\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    assert S.update_index(compiled).updated == ["raw/notes/cooking.md"]
    assert "spelt" in S.search(compiled, "spelt", limit=1)[0].snippet


def test_index_is_derived_deleting_or_corrupting_it_rebuilds(compiled):
    S.update_index(compiled)
    shutil.rmtree(compiled.state_dir / "search")
    assert S.update_index(compiled).rebuilt
    # a damaged manifest is not trusted
    (compiled.state_dir / "search" / "manifest.json").write_text("{broken", encoding="utf-8")
    assert S.update_index(compiled).rebuilt
    S.engine(compiled).close()
    for f in (compiled.state_dir / "search").glob("*.seg"):
        f.write_bytes(b"garbage")
    (compiled.state_dir / "search" / "manifest.json").unlink()
    assert S.search(compiled, "sourdough", limit=1)[0].title == "Sourdough"


def test_unreadable_and_unsupported_files_are_skipped_not_fatal(ws):
    write(ws, "blob.bin", b"\x00\x01\x02" * 100)
    write(ws, "bad.md", b"\x00binary pretending to be markdown")
    write(ws, "ok.md", "# Fine\n\nA readable note about lighthouses.\n")
    report = S.update_index(ws)
    assert {p for p, _ in report.skipped} == {"raw/blob.bin", "raw/bad.md"}
    assert S.search(ws, "lighthouses")[0].path == "raw/ok.md"


def test_symlink_out_of_workspace_is_not_indexed(ws, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nThe launch code is swordfish.\n", encoding="utf-8")
    os.symlink(outside, ws.raw / "link.md")
    S.update_index(ws)
    assert S.search(ws, "swordfish launch code") == []


def test_stop_word_only_and_empty_queries(compiled):
    assert S.search(compiled, "") == []
    assert S.search(compiled, "the of and") == [] or all(h.path for h in S.search(compiled, "the of and"))
    # query syntax characters are plain text, never a parse error
    assert isinstance(S.search(compiled, 'macOS AND (OR "unbalanced'), list)


def test_repo_wiki_pages_index_front_matter_fields(ws):
    page = ws.wiki / "concepts" / "tardigrade.md"
    page.write_text("---\ntitle: Tardigrade\nkind: concept\naliases: [water bear, moss piglet]\n---\n"
                    "# Tardigrade\n\nMicro-animals that survive freezing.\n", encoding="utf-8")
    hit = S.search(ws, "moss piglet", limit=1)[0]
    assert (hit.path, hit.kind, hit.title) == ("wiki/concepts/tardigrade.md", "concept", "Tardigrade")


def test_cli_search_json_and_text(compiled):
    runner = CliRunner()
    result = runner.invoke(main, ["search", "sourdough", "starter", "--root", str(compiled.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"results"} and data["results"]
    first = data["results"][0]
    assert set(first) == {"path", "title", "kind", "score", "snippet", "line", "target"}
    # the line the snippet starts on, so an agent reads that stretch and not the whole file
    assert first["target"] == f"{first['path']}#L{first['line']}"
    lines = (compiled.root / first["path"]).read_text(encoding="utf-8").splitlines()
    assert first["snippet"].split()[0] in lines[first["line"] - 1]
    result = runner.invoke(main, ["search", "sourdough", "--root", str(compiled.root), "-n", "1"])
    assert result.exit_code == 0 and "Sourdough" in result.stdout
    result = runner.invoke(main, ["search", "x", "--root", str(compiled.root / "nope")])
    assert result.exit_code == 2


def test_cli_reindex(compiled):
    result = CliRunner().invoke(main, ["reindex", "--root", str(compiled.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] and data["rebuilt"] and data["files"] >= len(NOTES)


@pytest.mark.slow
def test_real_corpus_question(tmp_path, settings):
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    src = corpus("versions")
    ws = Workspace.at(tmp_path / "v")
    init_workspace(ws)
    (ws.raw / "release-notes").mkdir()
    for name in ("go1.21.md", "go1.23.md", "go1.25.md", "go1.27.md"):
        shutil.copy(src / "release-notes" / name, ws.raw / "release-notes" / name)
    hits = S.search(ws, "What is the current minimum macOS version required by Go?", limit=5)
    assert "raw/release-notes/go1.27.md" in [h.path for h in hits]


def test_walk_filters_agree_with_the_loader_and_the_index_page():
    from wikimem.index_page import is_catalog
    from wikimem.sources import is_ignored_name

    names = ["a.md", ".DS_Store", "Thumbs.db", "x.md~", "~$doc.docx", ".#lock", "f.swp", "d.part",
             "e.crdownload", "t.tmp", "z.download", "index.md", "notes.txt"]
    assert [S.ignored_path(n) for n in names] == [is_ignored_name(n) for n in names]
    for rel in ("wiki/index.md", "wiki/sources/index.md", "wiki/sources/index-2.md", "wiki/sources/index-2-1.md",
                "wiki/sources/reindex.md", "wiki/concepts/index-of-things.md"):
        assert bool(S.CATALOG_NAME.search(rel)) == is_catalog(rel.removeprefix("wiki/")), rel


def test_concurrent_updates_do_not_corrupt_the_index(compiled):
    import threading

    errors: list[BaseException] = []

    def update() -> None:
        try:
            S.update_index(compiled, wait=30)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=update) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not S.update_index(compiled).changed
    assert S.search(compiled, "sourdough", limit=1)[0].title == "Sourdough"


def test_reindex_swaps_in_a_new_index_under_an_open_engine(compiled):
    eng = S.Engine(compiled, fresh_within=0)
    assert eng.passages("sourdough", 1)[0].hit.title == "Sourdough"
    report = S.reindex(compiled)
    assert report.rebuilt and report.files >= len(NOTES)
    assert not (compiled.state_dir / "search.new").exists() and not (compiled.state_dir / "search.old").exists()
    write(compiled, "notes/bread.md", "# Rye bread\n\nRye sourdough needs a long proof.\n")
    assert "raw/notes/bread.md" in [p.hit.path for p in eng.passages("rye proof", 3)]
    eng.close()


def test_watching_engine_sees_new_files_without_walking_on_queries(compiled):
    import time as _time

    eng = S.Engine(compiled, fresh_within=3600)
    assert eng.passages("sourdough", 1)
    eng.watch(0.1)
    try:
        write(compiled, "notes/kelp.md", "# Kelp forests\n\nKelp grows half a metre a day.\n")
        deadline = _time.monotonic() + 30
        found: list[str] = []
        while _time.monotonic() < deadline and "raw/notes/kelp.md" not in found:
            found = [p.hit.path for p in eng.passages("how fast does kelp grow", 3)]
            _time.sleep(0.05)
        assert "raw/notes/kelp.md" in found
    finally:
        eng.stop()


def test_quoted_phrase_ranks_the_exact_wording_first(ws):
    write(ws, "a.md", "# Alpha\n\nThe cache of the build is cleared on Mondays.\n")
    write(ws, "b.md", "# Beta\n\nThe build cache is cleared on Fridays.\n")
    assert S.search(ws, '"build cache" cleared', limit=2)[0].path == "raw/b.md"


def many_notes(ws, n=90):
    # enough entries (> 200) that build_query splits common words off into AndMaybe
    for i in range(n):
        topic = ("kelp", "rye", "basalt", "falcon", "lantern")[i % 5]
        write(ws, f"many/n{i}.md", f"# Widget note {i} on {topic}\n\nWidget {topic} detail number {i}.\n\n"
                                   f"## Usage {i}\n\nThe widget uses {topic} in step {i} of {i % 7} stages.\n")


def test_an_update_deletes_a_changed_files_entries_without_loading_whooshs_queries(ws):
    # whoosh's delete_by_term made a searcher and a query for each path, loading modules a
    # compile of one changed file has no other use for (search.index._Deleter); a warmed
    # engine does not load the document loaders either
    many_notes(ws, 30)
    S.update_index(ws)
    before = S.search(ws, "basalt", limit=50)
    write(ws, "many/n2.md", "# Widget note 2 on quartz\n\nRewritten: quartz only.\n")
    (ws.raw / "many" / "n7.md").unlink()
    code = ("import sys; from wikimem.workspace import Workspace; from wikimem import search; "
            "search.update_index(Workspace.at(sys.argv[1])); "
            "print(sorted(m for m in ('whoosh.query', 'whoosh.searching') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(ws.root)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    after = {hit.path for hit in S.search(ws, "basalt", limit=50)}
    assert {hit.path for hit in before} - after == {"raw/many/n2.md", "raw/many/n7.md"}
    assert [hit.path for hit in S.search(ws, "quartz", limit=5)] == ["raw/many/n2.md"]
    code = ("import sys; from wikimem.workspace import Workspace; from wikimem import search; "
            "search.engine(Workspace.at(sys.argv[1])).warm(); print('wikimem.search.documents' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(ws.root)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_an_update_drops_the_segments_it_left_empty(ws):
    """Each small update deletes a changed file's entries and writes a segment of its own: a
    segment left without a live entry is dropped at once, not kept (and opened by every search)
    until whoosh's merge policy reaches it."""
    from whoosh import index as windex

    many_notes(ws, 30)
    S.update_index(ws)
    for i in range(7):
        write(ws, "many/n3.md", f"# Widget note 3\n\nRewritten {i}: the falcon flies in round{i}.\n")
        S.update_index(ws, only=["raw/many/n3.md"])
        segments = windex.open_dir(str(S.index_dir(ws)))._segments()
        assert len(segments) <= 2 and all(s.doc_count() > 0 for s in segments), \
            [(s.doc_count_all(), s.deleted_count()) for s in segments]
        assert paths(S.search(ws, f"round{i}")) == ["raw/many/n3.md"]
        assert i == 0 or not S.search(ws, f"round{i - 1}")
    assert paths(S.search(ws, "widget basalt detail number 12"))[0] == "raw/many/n12.md"


@pytest.mark.parametrize("edited", [False, True])
def test_fast_scorer_scores_exactly_as_whoosh_does(ws, edited):
    many_notes(ws)
    if edited:
        # incremental updates leave several segments and deleted entries: offsets and filtering
        S.update_index(ws)
        write(ws, "many/n3.md", "# Widget note 3 on falcon\n\nRewritten: falcon usage in twelve stages.\n")
        write(ws, "many/extra.md", "# Lantern widget\n\nA lantern step.\n")
        (ws.raw / "many" / "n7.md").unlink()
    eng = S.Engine(ws)
    eng.refresh()
    searcher = eng._searcher
    if edited:
        assert not searcher.is_atomic() or searcher.reader().has_deletions()
    # one scorer as a cold search has it (each entry's length decoded as a posting needs it),
    # one warmed as a server's (every length decoded up front)
    cold, warmed = S.FastScorer(searcher), S.FastScorer(searcher)
    warmed.warm()
    assert searcher.doc_count() > 200
    for question in ("widget kelp stages", "which falcon usage step 12", "lantern", "widget"):
        parsed = S.parse_query(question)
        q = S.build_query(parsed, searcher.doc_frequency, searcher.doc_count())
        expected = {docnum: score for score, docnum in searcher.search(q, limit=None, optimize=False).top_n}
        rare, common = S.select_terms(parsed, searcher.doc_frequency, searcher.doc_count())
        if not rare:
            rare, common = common, []
        for fast in (cold, warmed):
            got = fast.accumulate(rare)
            if common:
                fast.accumulate(common, into=got, only=True)
            assert set(got) == set(expected), question
            assert got == pytest.approx(expected, rel=1e-9), question
    eng.close()


def test_fast_scorer_reads_the_lengths_of_a_field_some_segments_lack(ws):
    many_notes(ws)
    S.update_index(ws)  # raw notes only: no entry has aliases, so no segment keeps their lengths
    (ws.wiki / "concepts").mkdir(parents=True, exist_ok=True)
    (ws.wiki / "concepts" / "falcon.md").write_text(
        "---\ntitle: Falcon\nkind: concept\naliases: [falcon lantern, kelp falcon]\n---\n\n# Falcon\n\nA falcon.\n",
        encoding="utf-8")
    S.update_index(ws)
    eng = S.Engine(ws)
    eng.refresh()
    searcher = eng._searcher
    fast = S.FastScorer(searcher)
    lacking = [r for r, _ in fast.leaves if fast._column(r, "aliases") is None]
    assert lacking and len(lacking) < len(fast.leaves)
    # every entry's length at once, the segments without the field's column as whoosh reads them
    raw = fast.length_bytes("aliases")
    assert raw is not None and len(raw) == searcher.doc_count_all()
    parsed = S.parse_query("falcon lantern")
    q = S.build_query(parsed, searcher.doc_frequency, searcher.doc_count())
    expected = {docnum: score for score, docnum in searcher.search(q, limit=None, optimize=False).top_n}
    got = fast.accumulate(parsed.terms)
    assert got == pytest.approx(expected, rel=1e-9)
    eng.close()


@pytest.mark.parametrize("edited", [False, True])
def test_phrase_scores_are_whooshs_and_of_the_words_in_a_row(ws, edited):
    many_notes(ws)
    write(ws, "many/ids.md", "# Widget uses\n\nThe widget_uses setting, and the widget of the uses.\n")
    if edited:
        S.update_index(ws)
        write(ws, "many/n4.md", "# Widget note 4\n\nThe widget uses basalt twice: widget uses.\n")
        (ws.raw / "many" / "n8.md").unlink()
    eng = S.Engine(ws)
    eng.refresh()
    searcher = eng._searcher
    from whoosh import query as Q

    from wikimem.search.ranking import PHRASE_FIELDS, phrase_scores

    ana = S.analyzer()

    def in_a_row(text, phrase):
        # the analyzer's own positions, as whoosh's phrase query would read them
        at = {}
        for t in ana(text, positions=True):
            at.setdefault(t.pos, set()).add(t.text)
        return any(phrase[0] in held and all(w in at.get(pos + j, ()) for j, w in enumerate(phrase[1:], 1))
                   for pos, held in at.items())

    fast = S.FastScorer(searcher)  # one for every question: a phrase asked again is read from its cache
    for question in ('"widget uses"', '"uses widget"', '"widget uses kelp"', '"note widget"', '"step 12 of"',
                     '"note widget" and "widget uses"', '"widget uses"'):
        parsed = S.parse_query(question)
        expected: dict[int, float] = {}
        for phrase in parsed.phrases:
            for field, boost in PHRASE_FIELDS:
                found = searcher.search(Q.And([Q.Term(field, t) for t in phrase]), limit=None, optimize=False)
                for score, docnum in found.top_n:
                    text = searcher.stored_fields(docnum).get(field)
                    if isinstance(text, str) and in_a_row(text, phrase):
                        expected[docnum] = expected.get(docnum, 0.0) + boost * score
        got = phrase_scores(fast, parsed)
        assert set(got) == set(expected), question
        assert got == pytest.approx(expected, rel=1e-9), question
        # the same sums, bit for bit, from a scorer that never saw the phrase and from the cache
        assert phrase_scores(S.FastScorer(searcher), parsed) == got == phrase_scores(fast, parsed), question
    assert phrase_scores(S.FastScorer(searcher), S.parse_query('"widget uses"'))
    eng.close()


@pytest.mark.parametrize("common", [False, True])
def test_a_phrase_is_read_only_for_the_entries_that_may_reach_the_window(ws, monkeypatch, common):
    # the quoted phrases' candidates are read while the window is taken, only those whose score
    # could reach it with their bonus (engine.read_phrases): the results, their order and their
    # scores are those of reading every candidate
    import importlib

    from wikimem.search import ranking as R

    E = importlib.import_module("wikimem.search.engine")  # the package names a function `engine` too
    many_notes(ws)
    for i in range(40):
        order = ("the widget uses kelp", "uses of the widget", "a widget that kelp uses", "widget_uses")[i % 4]
        write(ws, f"more/m{i}.md", f"# Kelp {i}\n\nIn step {i}, {order}: widget {'uses ' * (i % 3)}basalt.\n")
    if not common:
        monkeypatch.setattr(R, "COMMON_FRACTION", 1.0)  # every word picks candidates: no AndMaybe
    questions = ('"widget uses"', '"widget uses" basalt', '"uses widget"', 'kelp "widget uses" "step 12"',
                 '"widget uses kelp"')
    runs = [(q, limit, kinds) for q in questions for limit in (1, 3, 10) for kinds in (None, ("raw",))]

    def answers(bound: float) -> tuple[list[list[dict]], int]:
        monkeypatch.setattr(E, "PHRASE_BOUND", bound)
        got, read = [], 0
        for q, limit, kinds in runs:
            eng = S.Engine(ws)  # a scorer of its own: no candidate read by an earlier question
            eng.warm()
            got.append([p.to_json() for p in eng.passages(q, limit, kinds)])
            read += sum(len(check._held) for check in eng._fast_scorer()._phrases.values())
            eng.close()
        return got, read

    bound = E.PHRASE_BOUND
    every, read_all = answers(float("inf"))  # every candidate read, as phrase_scores reads them
    lazy, read = answers(bound)
    for run, want, got in zip(runs, every, lazy, strict=True):
        assert got == want, run
    # (with common words, this index's questions score fewer entries than a window from their
    # other words: every candidate is read, PhraseBonus's own test holds the sums)
    assert any(every) and (read <= read_all if common else read < read_all)


def test_phrase_bonus_scores_as_the_phrases_then_the_common_words_add(ws):
    # what an entry scores once its phrases are read (PhraseBonus.score) is, bit for bit, its
    # words' score plus what phrase_scores adds, then the common words' (AndMaybe); and `most`
    # bounds it before the text is read
    from wikimem.search.ranking import PhraseBonus, phrase_checks, phrase_scores, select_terms

    many_notes(ws)
    for i in range(30):
        write(ws, f"more/m{i}.md", f"# Kelp {i}\n\n{('the widget uses kelp', 'uses of the widget')[i % 2]}, step {i}.\n")
    eng = S.Engine(ws)
    eng.refresh()
    searcher = eng._searcher
    held_common = 0
    for question in ('"widget uses"', 'widget "uses kelp" step', '"widget uses" basalt stages', '"step 12" widget'):
        parsed = S.parse_query(question)
        rare, common = select_terms(parsed, searcher.doc_frequency, searcher.doc_count())
        fast = S.FastScorer(searcher)
        expected = fast.accumulate(rare)
        for d, added in phrase_scores(fast, parsed).items():
            expected[d] = expected.get(d, 0.0) + added
        fast.accumulate(common, into=expected, only=True)
        fast = S.FastScorer(searcher)
        got = fast.accumulate(rare)
        bonus = PhraseBonus(phrase_checks(fast, parsed), got, [fast.term_total(t) for t in common])
        bounds = {d: bonus.most(d) for d in bonus.of}
        fast.accumulate(common, into=got, only=True)
        for d in bonus.of:
            score = bonus.score(d)
            if score is not None:
                got[d] = score
                held_common += bool(common)
            assert bounds[d] >= expected.get(d, 0.0), (question, d)
        assert got == expected, question
    assert held_common
    eng.close()


def test_warmed_and_one_shot_engines_rank_alike(ws):
    many_notes(ws)
    S.update_index(ws)
    write(ws, "many/n5.md", "# Widget note 5 on kelp\n\nRewritten: kelp stages, step 5.\n")  # a deleted entry
    one_shot = S.Engine(ws)
    warmed = S.Engine(ws)
    warmed.warm()
    assert warmed._fast.warmed and not S.Engine(ws)._fast
    for question, kinds in (("kelp stages", None), ("falcon step", ("raw",)), ('"widget uses" rye', None)):
        a = [(p.hit.path, p.line, p.hit.snippet) for p in one_shot.passages(question, 5, kinds)]
        b = [(p.hit.path, p.line, p.hit.snippet) for p in warmed.passages(question, 5, kinds)]
        assert a == b and a, question
    assert not one_shot._fast.warmed  # a one-shot search reads a few stored entries, no tables
    one_shot.close()
    warmed.close()


def test_snippet_tokens_match_the_analyzer():
    body = "The Caches are pruned weekly; go1.21 needs TLS 1.3 and the build-cache's size.\nRunning runs ran."
    expected = [(t.startchar, t.text) for t in S.analyzer()(body, chars=True, removestops=False)]
    assert [(m.start(), S.stem_word(m.group())) for m in S.TOKEN.finditer(body)] == expected


def test_watcher_with_a_lock_swaps_in_a_warmed_searcher(compiled):
    import threading
    import time as _time

    lock = threading.Lock()
    eng = S.Engine(compiled, fresh_within=3600)
    eng.warm()
    first = eng._searcher
    eng.watch(0.1, lock=lock)
    try:
        write(compiled, "notes/kelp.md", "# Kelp forests\n\nKelp grows half a metre a day.\n")
        deadline = _time.monotonic() + 30
        while _time.monotonic() < deadline and eng._searcher is first:
            _time.sleep(0.05)
        assert eng._searcher is not first and eng._fast.warmed
        with lock:
            assert "raw/notes/kelp.md" in [p.hit.path for p in eng.passages("how fast does kelp grow", 3)]
    finally:
        eng.stop()


# --- passages, not pages that mention everything (issue 16) --------------------------------------


def test_identifiers_are_found_by_their_words(ws, settings):
    write(ws, "ref/config.rst", "Settings\n========\n\nraw_enabled\n-----------\n\n"
          "Enable or disable the raw directive.\n\nDefault: enabled (True).\n\n"
          "other\n-----\n\nSomething else entirely about directives.\n")
    write(ws, "guide.md", "# Guide\n\nCall `flask.g` to keep data for one request.\n")
    compile_workspace(ws, settings)
    top = S.search_passages(ws, "is the raw directive enabled by default", limit=3)[0]
    assert top.hit.path in ("raw/ref/config.rst", "wiki/sources/ref-config.md")
    assert "raw_enabled" in top.heading or "raw" in top.hit.snippet
    assert S.search(ws, "what is g for", limit=1)[0].path in ("raw/guide.md", "wiki/sources/guide.md")
    assert S.identifier_parts("flask.__version__") == ["flask", "__version__", "version"]
    assert S.identifier_parts("go1.21") == [] and S.identifier_parts("1.19") == []


def test_a_passage_holding_the_rare_words_beats_one_repeating_common_ones(ws, settings):
    # a page that says "minimum version" in every paragraph, and the one sentence that names the platform
    write(ws, "changes.md", "# Changes\n\n" + "".join(
        f"## Release {n}\n\nThe minimum version of the toolkit is now {n}. The minimum version matters.\n\n"
        for n in range(1, 30)))
    write(ws, "ports.md", "# Ports\n\n## Zephyr\n\nThe Zephyr port needs kernel 5.19 at least.\n\n"
          "## Other\n\nNothing here.\n")
    compile_workspace(ws, settings)
    hits = S.search(ws, "minimum version of Zephyr kernel", limit=3)
    assert hits[0].path in ("raw/ports.md", "wiki/sources/ports.md"), [h.path for h in hits]


def test_snippets_are_whole_sentences_with_their_line(ws, settings):
    text = ("# Sessions\n\n"
            "Sessions are stored in signed cookies. Each application sets a permanent session lifetime.\n"
            "It decides how long the cookie of a permanent session lasts in the\n"
            "browser.\n\nUnrelated words follow here.\n\nDefault: 31 days.\n")
    write(ws, "sessions.md", text)
    compile_workspace(ws, settings)
    passage = next(p for p in S.search_passages(ws, "how long does a permanent session cookie last by default")
                   if p.hit.path == "raw/sessions.md")
    snippet = passage.hit.snippet
    # the sentence that answers, whole across its line break, after the one "It" refers back to
    assert snippet.startswith("Each application sets a permanent session lifetime. It decides"), snippet
    assert "lasts in the browser." in snippet
    assert snippet.endswith("… Default: 31 days.")  # the value the question asks for, close behind
    assert passage.line == 3 and passage.target == "raw/sessions.md#L3"


def test_rst_objects_are_passages_of_their_own(ws, settings):
    write(ws, "config.rst", "Configuration\n=============\n\nValues\n------\n\n"
          ".. py:data:: SECRET_KEY\n\n    A secret key for signing cookies.\n\n    Default: ``None``\n\n"
          ".. py:data:: SESSION_LIFETIME\n\n    How long a permanent session lives.\n\n"
          "    Default: ``timedelta(days=31)``\n")
    compile_workspace(ws, settings)
    passage = next(p for p in S.search_passages(ws, "session lifetime default") if p.hit.path == "raw/config.rst")
    assert passage.heading.endswith("SESSION_LIFETIME")
    assert "timedelta(days=31)" in passage.text and "SECRET_KEY" not in passage.text


def test_a_question_with_a_word_no_passage_holds_still_finds_its_other_words(ws, settings):
    # every other word of the question is common (in more than 8% of the passages): the one word
    # no passage holds must not be the only one that picks candidates
    for n in range(24):
        write(ws, f"guide/part-{n}.md", f"# Part {n}\n\n" + "".join(
            f"## Step {n}.{k}\n\nThe gadget event dict of step {k} holds its keys.\n\n" for k in range(10)))
    compile_workspace(ws, settings)
    found = S.search_passages(ws, "What is an event dict in gadget terminology?", limit=3)
    assert found and "event dict" in found[0].hit.snippet, [p.hit.snippet for p in found]


def test_what_a_thing_is_is_answered_by_the_page_titled_with_it(ws, settings):
    # "What does DBAPI stand for in the docs?": the page titled DBAPI opens on what it is; many
    # pages hold "docs" and "stand", or repeat the name more often (its own second section too)
    write(ws, "reference/dbapi.md", "# DBAPI\n\nDBAPI is shorthand for the phrase Python Database API "
                                    "Specification.\n\n## Connections\n\nA DBAPI connection opens a DBAPI cursor; "
                                    "the DBAPI pool keeps each DBAPI connection.\n")
    for n in range(8):
        write(ws, f"guide/engine-{n}.md", f"# Engine part {n}\n\nThe engine docs stand by the DBAPI driver {n}: "
              f"every DBAPI connection of the DBAPI pool is a DBAPI cursor's, as the docs say.\n")
    compile_workspace(ws, settings)
    found = S.search_passages(ws, "What does DBAPI stand for in the docs?", limit=3)
    assert found and "shorthand" in found[0].text, [(p.hit.path, p.text[:80]) for p in found]
    # a question that asks nothing of the kind ranks as before
    plain = S.search_passages(ws, "DBAPI driver", limit=3)
    assert plain and plain[0].hit.path.startswith(("raw/guide/", "wiki/sources/guide")), [p.hit.path for p in plain]


def test_a_changelog_answers_a_current_question_from_its_newest_entry(ws, settings):
    write(ws, "CHANGES.rst", "Changes\n=======\n\nVersion 3.0\n-----------\n\n"
          "Released 2024-05-01\n\n- Requires Blinker 1.9 or later now.\n\n"
          + "".join(f"- Fixed bug {n} in the router.\n" for n in range(40)) + "\n"
          "Version 2.0\n-----------\n\nReleased 2022-05-01\n\n- Requires Blinker 1.6 or later.\n\n"
          + "".join(f"- Fixed issue {n} in templates.\n" for n in range(40)) + "\n"
          "Version 1.0\n-----------\n\nReleased 2020-05-01\n\n- Requires Blinker 1.0 or later.\n")
    compile_workspace(ws, settings)
    passage = next(p for p in S.search_passages(ws, "which Blinker version is required now")
                   if p.hit.path == "raw/CHANGES.rst")
    assert "Blinker 1.9" in passage.hit.snippet, passage.hit.snippet


def test_the_latest_release_named_in_a_question_is_its_changelogs_newest_release(ws, settings):
    # the newest release's opening (its version and date) holds no word of the question; the
    # older releases and the documentation around them hold many
    write(ws, "CHANGES.rst", "Changes\n=======\n\nVersion 3.1.3\n-------------\n\nReleased 2026-02-18\n\n"
          "- The session is marked as accessed for operations that only access the keys.\n\n"
          + "".join(f"Version 3.0.{n}\n-------------\n\nReleased 2025-0{1 + n % 9}-10\n\n"
                    f"- Fix how Gadget {n} release builds describe their changes.\n\n" for n in range(9, 0, -1)))
    write(ws, "release-process.rst", "Release process\n===============\n\n"
          "Each Gadget release is described in the changelog when it is released, a week after its branch.\n")
    write(ws, "install.rst", "Installation\n============\n\nGadget is described in its own file.\n")
    compile_workspace(ws, settings)
    found = S.search_passages(ws, "What is the latest Gadget release described in the changelog, and when was it released?",
                              limit=5)
    newest = [p for p in found if p.hit.path == "raw/CHANGES.rst"]
    assert newest and "2026-02-18" in newest[0].hit.snippet, [(p.hit.path, p.hit.snippet) for p in found]
    # a current question that names no release keeps its best passage (the window is not the newest release's)
    current = S.search_passages(ws, "which Gadget builds describe their changes in the current version", limit=3)
    assert current and "2026-02-18" not in current[0].hit.snippet


def test_a_timeline_answers_current_questions_with_its_source_next(compiled):
    found = S.search_passages(compiled, "What is the current minimum macOS version for Widget?", limit=5)
    assert found[0].hit.kind == "fact", [p.hit.path for p in found]
    assert found[0].hit.snippet.startswith("Current: **macOS 13 Ventura**")
    assert found[1].hit.path == "raw/notes/release-2.md" and found[1].line == 3
    assert "Widget 2 requires macOS 13 Ventura" in found[1].hit.snippet


# --- searchable when compiled (issue 19) ---------------------------------------------------------


def test_a_compile_leaves_the_index_current_and_touches_only_what_it_changed(ws, settings):
    for rel, text in NOTES.items():
        write(ws, rel, text)
    report = compile_workspace(ws, settings)
    assert report.index["rebuilt"] and report.index["files"] >= len(NOTES)
    assert not S.update_index(ws).changed  # the first search finds nothing to build
    # no wait past the racy window: a file just written is judged by its content, not read again
    write(ws, "notes/cooking.md", "# Sourdough\n\nFeed the starter once a day with spelt.\n")
    again = compile_workspace(ws, settings)
    assert not again.index["rebuilt"] and 0 < again.index["passages"] < 20
    assert not S.update_index(ws).changed
    assert "spelt" in S.search(ws, "what do I feed the starter with", limit=1)[0].snippet
    assert compile_workspace(ws, settings).index == {}  # a no-op compile leaves the index alone


def test_a_racily_clean_file_is_judged_by_its_content(ws, monkeypatch):
    from wikimem import workspace

    granularity = workspace.timestamp_granularity
    # a file system whose times tell nothing for a minute: every raw file stays racily clean
    monkeypatch.setattr("wikimem.workspace.timestamp_granularity", lambda ns: 60_000_000_000)
    write(ws, "notes/cooking.md", "# Sourdough\n\nFeed the starter once a day with spelt.\n")
    assert S.update_index(ws).added == ["raw/notes/cooking.md"]
    manifest = json.loads((ws.state_dir / "search" / "manifest.json").read_text(encoding="utf-8"))
    size, mtime, digest = manifest["files"]["raw/notes/cooking.md"]
    assert mtime == -1 and digest >= 0  # recorded as racy, with the digest of what was indexed
    # the same bytes: nothing to read again, however often it is asked
    assert not S.update_index(ws).changed
    assert not S.update_index(ws).changed
    # an edit that keeps the size (and, on such a file system, the times): read again
    path = ws.raw / "notes/cooking.md"
    st = path.stat()
    path.write_text("# Sourdough\n\nFeed the starter once a day with emmer.\n", encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert S.update_index(ws).updated == ["raw/notes/cooking.md"]
    assert "emmer" in S.search(ws, "what do I feed the starter with", limit=1)[0].snippet
    # once its times can tell again, it is checked by them, and the manifest says so
    monkeypatch.setattr("wikimem.workspace.timestamp_granularity", granularity)
    past_racy_window(ws)
    assert not S.update_index(ws).changed
    manifest = json.loads((ws.state_dir / "search" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["raw/notes/cooking.md"] == [size, path.stat().st_mtime_ns, path.stat().st_ctime_ns]
    assert "digests" not in manifest


def test_the_index_reads_what_the_compile_kept_and_parses_no_source_again(ws, settings, monkeypatch):
    for rel, text in NOTES.items():
        write(ws, rel, text)
    write(ws, "guide.rst", "Guide\n=====\n\nSetup\n-----\n\nRun the installer twice.\n")
    compile_workspace(ws, settings)
    before = {p.hit.path: p.hit.snippet for p in S.search_passages(ws, "installer twice setup")}

    def no_parsing(*args, **kwargs):
        raise AssertionError("a compiled text source was parsed again to index it")

    monkeypatch.setattr("wikimem.sources.load_source", no_parsing)
    S.reindex(ws)
    after = {p.hit.path: p.hit.snippet for p in S.search_passages(ws, "installer twice setup")}
    assert after == before and "raw/guide.rst" in after


def test_a_parallel_build_ranks_as_a_single_writer_does(ws, settings, monkeypatch):
    for rel, text in NOTES.items():
        write(ws, rel, text)
    for n in range(12):
        write(ws, f"more/note-{n}.md", f"# Note {n}\n\nThe widget {n} needs macOS {n + 10} and Go 1.{n}.\n")
    compile_workspace(ws, settings)
    questions = ["widget macOS", "which Go version is needed to bootstrap", "sourdough starter"]
    single = [[h.path for h in S.search(ws, q)] for q in questions]
    monkeypatch.setattr("wikimem.search.index.PARALLEL_INDEX", 2)
    single_threaded()
    from whoosh.multiproc import MpWriter

    started = []
    new_task = MpWriter._new_task
    monkeypatch.setattr(MpWriter, "_new_task", lambda self: (started.append(1), new_task(self))[1])
    S.reindex(ws)
    # built by more than one process (how many segments they leave depends on which of them
    # takes the jobs first: one may take them all)
    assert len(started) >= 2
    S.ENGINES.clear()
    assert [[h.path for h in S.search(ws, q)] for q in questions] == single


def _seeded_corpus(ws, monkeypatch):
    """Enough raw files for a compile from nothing to index raw/ in a process of its own."""
    for rel, text in NOTES.items():
        write(ws, rel, text)
    for n in range(12):
        write(ws, f"more/note-{n}.md", f"# Note {n}\n\nThe widget {n} needs macOS {n + 10} and Go 1.{n}.\n")
    write(ws, "guide.rst", "Guide\n=====\n\nSetup\n-----\n\nRun the installer twice.\n")
    past_racy_window(ws)  # read once by each index compared, not again as racily clean by one
    monkeypatch.setattr("wikimem.search.index.PARALLEL_INDEX", 4)
    monkeypatch.setattr("wikimem.backends.offline.PARALLEL_THRESHOLD", 4)
    single_threaded()
    seeds = []
    start = S.start_seed

    def spy(*args, **kwargs):
        seeds.append(start(*args, **kwargs))
        return seeds[-1]

    monkeypatch.setattr("wikimem.search.start_seed", spy)
    return seeds


def _index_of(ws):
    manifest = json.loads((S.index_dir(ws) / "manifest.json").read_text(encoding="utf-8"))
    questions = ["widget macOS", "installer twice setup", "which Go version is needed to bootstrap"]
    S.ENGINES.clear()
    found = [[(p.hit.path, p.line, p.hit.snippet, round(p.hit.score, 6)) for p in S.search_passages(ws, q)] for q in questions]
    return {k: manifest[k] for k in ("files", "docs", "skipped", "priors")}, found


def test_a_compile_from_nothing_indexes_raw_beside_its_pages_as_a_rebuild_would(ws, settings, monkeypatch):
    seeds = _seeded_corpus(ws, monkeypatch)
    report = compile_workspace(ws, settings)
    assert len(seeds) == 1 and seeds[0] is not None and seeds[0].done  # raw/ was indexed in its own process
    assert not (ws.state_dir / "search.seed").exists()  # it became the index
    assert report.index["rebuilt"] and report.index["files"] == len(S.walk_files(ws))
    seeded = _index_of(ws)
    assert any(p.startswith("raw/") for p in seeded[0]["docs"]) and seeded[1][1]
    S.reindex(ws)  # the same index, built by one updater from wiki/ and raw/
    assert _index_of(ws) == seeded


def test_the_seed_says_when_its_core_is_spare(ws, monkeypatch):
    # the compile's renderer takes work beside it only then (Batch.spare, backends/beside.py)
    import time

    from wikimem.compiler import _Seeding
    from wikimem.raw_tree import scan

    _seeded_corpus(ws, monkeypatch)
    assert _Seeding(ws, 10**7).spare()  # no seed: nothing else at work
    files = {f.path: (f.size, f.mtime_ns) for f in scan(ws).files}
    seed = S.start_seed(ws, files, {}, 10**7)
    assert seed is not None
    try:
        deadline = time.monotonic() + 30
        while not seed.waits() and time.monotonic() < deadline:  # raw/ indexed, it waits for pages
            time.sleep(0.01)
        assert seed.waits()
        assert seed.finish() is not None
        assert seed.waits()  # ended
    finally:
        seed.discard()


@pytest.mark.parametrize("taker", ["compile", "seed"])
def test_the_pages_indexed_by_either_process_make_the_same_index(ws, settings, monkeypatch, taker):
    # the compile shares the wiki's pages with the seed and each indexes those it takes first;
    # here one of them takes them all (the other finds none left), and the index is the same
    seeds = _seeded_corpus(ws, monkeypatch)
    take = S.index._take
    parent = os.getpid()

    def only_by(pages, taken, *rest):
        in_seed = os.getpid() != parent
        return take(pages, taken, *rest) if in_seed == (taker == "seed") else None

    monkeypatch.setattr("wikimem.search.index._take", only_by)
    compile_workspace(ws, settings)
    assert seeds[0] is not None and seeds[0].done
    shared = _index_of(ws)
    assert any(p.startswith("wiki/") for p in shared[0]["docs"]) and any(p.startswith("raw/") for p in shared[0]["docs"])
    assert not (ws.state_dir / "search.pages").exists() and not (ws.state_dir / "search.seed.json").exists()
    S.reindex(ws)
    assert _index_of(ws) == shared


def _share_once_all_taken(monkeypatch):
    """The compile withdraws the batches the seed has not taken (Seed.share) only
    once it has taken every batch offered (it may be indexing raw/ yet; 30 s at most), so that
    the pages are the seed's to keep or index again."""
    import time

    withdraw = S.Seed._withdraw

    def withdrawn_once_all_taken(self):
        deadline = time.monotonic() + 30
        while self.claimed.value < len(self.batches) and time.monotonic() < deadline:
            time.sleep(0.01)
        return withdraw(self)

    monkeypatch.setattr(S.Seed, "_withdraw", withdrawn_once_all_taken)


@pytest.mark.parametrize("claims", [True, False])
def test_pages_offered_as_rendered_make_the_same_index(ws, settings, monkeypatch, claims):
    # the compile offers the seed its pages as the backend renders them, before they are
    # written (Seed.offer); the seed indexes those it takes meanwhile, and the batches it has not
    # taken when the pages are shared go back to be shared: the index is the same either way

    seeds = _seeded_corpus(ws, monkeypatch)
    monkeypatch.setattr("wikimem.backends.offline.OFFER_EVERY", 3)
    claim = S.index._claim
    parent = os.getpid()

    def seed_claims(offers, claimed, seen, peek=False):
        return claim(offers, claimed, seen, peek) if claims or os.getpid() == parent else False

    monkeypatch.setattr("wikimem.search.index._claim", seed_claims)
    if claims:
        _share_once_all_taken(monkeypatch)
    compile_workspace(ws, settings)
    seed = seeds[0]
    assert seed is not None and seed.done and len(seed.batches) > 3
    assert seed.claimed.value == (len(seed.batches) if claims else 0)
    offered_pages = {p for batch in seed.batches for p in batch}
    assert set(seed.offered) == (offered_pages if claims else set()) and len(offered_pages) > 10
    assert all(p.startswith("wiki/") for p in offered_pages)
    assert not (ws.state_dir / "search.seed.offers").exists()
    offered = _index_of(ws)
    assert {p for p in offered[0]["docs"] if p.startswith("wiki/")} == \
        {p for p in S.walk_files(ws) if p.startswith("wiki/")}
    S.reindex(ws)
    assert _index_of(ws) == offered


def test_the_compile_loads_what_the_seed_needs_while_its_workers_read(ws, settings, monkeypatch):
    # Batch.reading: the offline backend calls it once its workers are reading, and the compile
    # loads search's modules then (search.ready_seed), not once the workers are done
    import multiprocessing

    seeds = _seeded_corpus(ws, monkeypatch)
    ready = S.ready_seed
    calls: list[tuple[int, int]] = []

    def spy():
        calls.append((len(multiprocessing.active_children()), len(seeds)))
        ready()

    monkeypatch.setattr("wikimem.search.ready_seed", spy)
    compile_workspace(ws, settings)
    assert len(calls) == 1 and calls[0][0] >= 2 and calls[0][1] == 0  # workers alive, no seed yet
    assert seeds and seeds[0] is not None and seeds[0].done


def test_the_seed_writes_the_offered_pages_segment_before_they_are_written(ws, settings, monkeypatch):
    # once the backend has rendered every page (Seed.close), the seed commits its segment of the
    # pages it took while the compile writes them: the segment is there before the pages are
    # shared (Seed.share_offered waits for it here, 30 s at most), and the index is a rebuild's
    import time

    from whoosh import index as windex

    seeds = _seeded_corpus(ws, monkeypatch)
    monkeypatch.setattr("wikimem.backends.offline.OFFER_EVERY", 3)
    _share_once_all_taken(monkeypatch)
    share_offered = S.Seed.share_offered
    segments: list[int] = []

    def once_committed(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            segments[:] = [s.doc_count_all() for s in windex.open_dir(str(self.folder))._segments()]
            if len(segments) == 2:
                break
            time.sleep(0.01)
        return share_offered(self)

    monkeypatch.setattr(S.Seed, "share_offered", once_committed)
    compile_workspace(ws, settings)
    seed = seeds[0]
    assert seed is not None and seed.closed.is_set() and seed.claimed.value == len(seed.batches) > 3
    assert len(segments) == 2  # raw/'s, then the offered pages'
    shared = _index_of(ws)
    S.reindex(ws)
    assert _index_of(ws) == shared


def test_a_page_written_otherwise_than_offered_is_indexed_as_written(ws, settings, monkeypatch):
    # what the seed indexed of an offered page is kept only where the file holds the text
    # offered: here the offer says "zeppelin" where the page (as written) does not
    seeds = _seeded_corpus(ws, monkeypatch)
    offer = S.Seed.offer

    def misoffered(self, pages):
        return offer(self, [(p, t + "\nA zeppelin note.\n" if p.startswith("wiki/sources/") else t) for p, t in pages])

    monkeypatch.setattr(S.Seed, "offer", misoffered)
    _share_once_all_taken(monkeypatch)
    compile_workspace(ws, settings)
    assert seeds[0] is not None and any(p.startswith("wiki/sources/") for p in seeds[0].offered)
    S.ENGINES.clear()
    assert not S.search(ws, "zeppelin")
    written = _index_of(ws)
    S.reindex(ws)
    # the same files and entries; a page indexed again leaves its first entry deleted in the
    # segment (whoosh counts it in its statistics until a merge), so scores and order move a little
    again = _index_of(ws)
    assert written[0] == again[0]
    assert [q[0][:3] for q in written[1]] == [q[0][:3] for q in again[1]]


def test_the_compile_writes_the_page_texts_its_seed_made_as_it_would_make_them(ws, settings, tmp_path, monkeypatch):
    # the seed makes every page offered as it will be written (the compile's _new_page_text), to
    # index it, and hands the texts back (search.index._hand_back): the compile writes those
    # rather than make them again (PageWriter.made), byte for byte the pages it makes itself
    import time

    from conftest import snapshot
    from wikimem.config import load_settings
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    seeds = _seeded_corpus(ws, monkeypatch)
    monkeypatch.setattr("wikimem.backends.offline.OFFER_EVERY", 3)
    written_text = S.Seed.written_text
    used: list[bool] = []
    handing = True

    def once_handed_back(self, path, content):
        deadline = time.monotonic() + (30 if handing else 0)  # the seed's last batch handed back
        last = self.offers_folder(self.folder) / f"{len(self.batches) - 1}.texts.json"
        while not last.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        text = written_text(self, path, content)
        used.append(text is not None)
        return text

    monkeypatch.setattr(S.Seed, "written_text", once_handed_back)
    compile_workspace(ws, settings)
    assert seeds[0] is not None and len(seeds[0].batches) > 3
    assert len(used) > 3 and all(used)

    other = Workspace.at(tmp_path / "other")
    init_workspace(other)
    shutil.rmtree(other.raw)
    shutil.copytree(ws.raw, other.raw)
    monkeypatch.setattr("wikimem.search.index._hand_back", lambda *args: None)
    handing = False
    used.clear()
    compile_workspace(other, load_settings(other.root, environ={}))
    assert used and not any(used)  # made by the compile alone
    mine, theirs = snapshot(ws.wiki), snapshot(other.wiki)
    assert mine.pop("log.md") and theirs.pop("log.md")  # the compile's seconds aside
    assert mine == theirs


def test_index_md_reads_the_new_pages_from_what_the_seed_worked_out_of_them(ws, settings, tmp_path, monkeypatch):
    # the seed works out each offered page's catalog row (index_page.catalog_row) while it has
    # nothing to index, and the compile stores those of the pages written as the seed made them
    # before index.md is regenerated (_Seeding.catalog): index.md is then made without reading
    # those pages again, and what it and the catalog hold is what reading them gives
    import time

    from conftest import snapshot
    from wikimem import index_page
    from wikimem.config import load_settings
    from wikimem.init import init_workspace
    from wikimem.state import State
    from wikimem.workspace import Workspace

    seeds = _seeded_corpus(ws, monkeypatch)
    monkeypatch.setattr("wikimem.backends.offline.OFFER_EVERY", 3)
    abouts = S.Seed.abouts
    handing = True

    def once_handed_over(self):
        deadline = time.monotonic() + (30 if handing else 0)
        while not (self.offers_folder(self.folder) / "about.json").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return abouts(self)

    monkeypatch.setattr(S.Seed, "abouts", once_handed_over)
    read: list[str] = []  # the pages index.md's regeneration reads from disk
    collect, entry_from_text = index_page.collect, index_page.entry_from_text
    collecting = [False]

    def collect_reading(*args):
        collecting[0] = True
        try:
            return collect(*args)
        finally:
            collecting[0] = False

    def reading(rel, text):
        if collecting[0]:
            read.append(rel)
        return entry_from_text(rel, text)

    monkeypatch.setattr(index_page, "collect", collect_reading)
    monkeypatch.setattr(index_page, "entry_from_text", reading)
    compile_workspace(ws, settings)
    assert seeds[0] is not None and len(seeds[0].batches) > 3
    offered = {p.removeprefix("wiki/") for p in seeds[0].contents}
    pages = {p for p in offered if index_page.catalog_row(p, "") is not None}
    assert len(pages) > 10
    assert read and not pages & set(read)  # the timelines, written after, are read

    other = Workspace.at(tmp_path / "other")
    init_workspace(other)
    shutil.rmtree(other.raw)
    shutil.copytree(ws.raw, other.raw)
    monkeypatch.setattr("wikimem.search.index._Abouts.hand_over", lambda self, offers: None)
    handing = False
    read.clear()
    compile_workspace(other, load_settings(other.root, environ={}))
    assert pages <= set(read)  # read from disk
    mine, theirs = snapshot(ws.wiki), snapshot(other.wiki)
    assert mine.pop("log.md") and theirs.pop("log.md")  # the compile's seconds aside
    assert mine == theirs

    def catalog(w):
        state = State(w.state_db)
        try:
            return {rel: (size, title, data) for rel, (_, size, title, data) in state.catalog().items()}
        finally:
            state.close()

    assert catalog(ws) == catalog(other)


def test_the_seed_holds_a_bounded_number_of_page_texts_to_work_out(tmp_path, monkeypatch):
    # a seed that is never spare while the pages come (a large wiki) works the oldest out at
    # once past _Abouts.MOST, rather than hold every page's text to the end; what it hands over
    # is every page's, worked out once
    from wikimem.search import index as I

    monkeypatch.setattr(I._Abouts, "MOST", 5)
    seen: list[str] = []

    def about(path, text):
        seen.append(path)
        return [len(text), path.upper()]

    told = I._Abouts(about)
    for batch in range(6):
        told.add([(f"wiki/p{batch}-{n}.md", "x" * n) for n in range(4)])
        assert len(told.todo) <= 5
    told.hand_over(tmp_path)
    got = json.loads((tmp_path / "about.json").read_text(encoding="utf-8"))
    assert len(got) == 24 and sorted(seen) == sorted(got)  # each once
    assert got["wiki/p3-2.md"] == [2, "WIKI/P3-2.MD"]


def _compile_with_a_seed_killed_holding(ws, settings, monkeypatch, lock_of):
    """Compile with a seed that takes the lock of `lock_of(its arguments)` and dies at once
    (ws, folder, files, outlines, max_bytes, send, ready, taken, ppid, offers, ...); the
    compile failing if it is not done in 60 s."""
    import signal

    def dies_holding_the_lock(*args):
        lock_of(args).get_lock().acquire()
        os._exit(1)

    monkeypatch.setattr("wikimem.search.index._grow_seed", dies_holding_the_lock)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the compile hung on the seed's lock"))
    signal.alarm(60)
    try:
        return compile_workspace(ws, settings)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_seed_killed_holding_the_page_counter_neither_hangs_nor_loses_the_index(ws, settings, monkeypatch):
    # the seed dies while it holds the lock of the counter the two processes take pages by: the
    # compile takes every page itself, sees the seed failed, and builds the index as without one
    seeds = _seeded_corpus(ws, monkeypatch)
    report = _compile_with_a_seed_killed_holding(ws, settings, monkeypatch, lambda args: args[7])  # taken
    assert seeds[0] is not None and report.index["rebuilt"] and not report.warnings
    assert not (ws.state_dir / "search.seed").exists() and not (ws.state_dir / "search.pages").exists()
    S.ENGINES.clear()
    assert "raw/guide.rst" in {p.hit.path for p in S.search_passages(ws, "installer twice setup")}
    assert any(p.startswith("wiki/") for p in json.loads((S.index_dir(ws) / "manifest.json").read_text())["docs"])


def test_a_seed_killed_holding_the_offers_lock_neither_hangs_nor_loses_the_index(ws, settings, monkeypatch):
    # the lock of the count of batches offered (the seed takes a batch under it): a seed killed
    # holding it neither blocks the compile's offers nor its sharing of the pages
    seeds = _seeded_corpus(ws, monkeypatch)
    monkeypatch.setattr("wikimem.backends.offline.OFFER_EVERY", 3)
    report = _compile_with_a_seed_killed_holding(ws, settings, monkeypatch, lambda args: args[9])  # offers
    assert seeds[0] is not None and seeds[0].batches and report.index["rebuilt"] and not report.warnings
    assert not (ws.state_dir / "search.seed").exists() and not (ws.state_dir / "search.seed.offers").exists()
    indexed = _index_of(ws)
    assert any(p.startswith("wiki/") for p in indexed[0]["docs"]) and any(p.startswith("raw/") for p in indexed[0]["docs"])
    S.reindex(ws)
    assert _index_of(ws) == indexed


def test_a_raw_file_changed_after_the_seed_read_it_is_indexed_as_it_is_now(ws, settings, monkeypatch):
    _seeded_corpus(ws, monkeypatch)
    finish = S.Seed.finish

    def edit_then_finish(self):
        got = finish(self)
        write(ws, "guide.rst", "Guide\n=====\n\nSetup\n-----\n\nRun the uninstaller once, then reboot.\n")
        (ws.raw / "more" / "note-3.md").unlink()
        return got

    monkeypatch.setattr(S.Seed, "finish", edit_then_finish)
    compile_workspace(ws, settings)
    S.ENGINES.clear()
    assert "raw/guide.rst" in {p.hit.path for p in S.search_passages(ws, "uninstaller reboot")}
    assert "raw/guide.rst" not in {p.hit.path for p in S.search_passages(ws, "installer twice")}
    assert "raw/more/note-3.md" not in {h.path for h in S.search(ws, "widget 3 macOS 13")}
    manifest = json.loads((S.index_dir(ws) / "manifest.json").read_text(encoding="utf-8"))
    assert "raw/more/note-3.md" not in manifest["files"]
    entry, now = manifest["files"]["raw/guide.rst"], list(S.walk_files(ws)["raw/guide.rst"])
    # recorded with its times; or, read in the same tick as it was written (a loaded machine),
    # as racily clean: times -1 and the digest of the bytes indexed, which are the new ones
    from wikimem.search.index import _content_digest

    assert entry == now or (entry[0] == now[0] and entry[1] == -1 and entry[2] == _content_digest(ws, "raw/guide.rst"))


def test_a_failed_seed_leaves_the_index_to_be_built_with_the_pages(ws, settings, monkeypatch):
    seeds = _seeded_corpus(ws, monkeypatch)

    def failing(*args):
        args[5].send(("failed", "RuntimeError: the disk is full"))  # (ws, folder, files, outlines, max_bytes, send, ...)

    monkeypatch.setattr("wikimem.search.index._grow_seed", failing)
    report = compile_workspace(ws, settings)
    assert seeds[0] is not None and not (ws.state_dir / "search.seed").exists()
    assert report.index["rebuilt"] and not report.warnings
    assert "raw/guide.rst" in {p.hit.path for p in S.search_passages(ws, "installer twice setup")}


def test_a_compile_that_fails_stops_its_seed_and_removes_it(ws, settings, monkeypatch):
    seeds = _seeded_corpus(ws, monkeypatch)

    def broken(*args, **kwargs):
        raise RuntimeError("out of disk writing index.md")

    monkeypatch.setattr("wikimem.compiler.index_page.write_index", broken)
    with pytest.raises(RuntimeError):
        compile_workspace(ws, settings)
    assert seeds[0] is not None and not seeds[0].process.is_alive()
    assert not (ws.state_dir / "search.seed").exists()


def test_an_update_recomputes_the_series_it_touched_as_a_rebuild_would(ws, settings):
    for n in (1, 2, 3):
        write(ws, f"notes/release-{n}.md", f"# Widget {n} Release Notes\n\nWidget {n} requires macOS {10 + n}.\n")
    write(ws, "notes/other.md", "# Gadget 7 Notes\n\nGadget 7 needs a charger.\n")
    compile_workspace(ws, settings)
    write(ws, "notes/release-4.md", "# Widget 4 Release Notes\n\nWidget 4 requires macOS 15.\n")
    (ws.raw / "notes" / "release-1.md").unlink()
    compile_workspace(ws, settings)
    manifest = json.loads((S.index_dir(ws) / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["priors"] == S.compute_priors(manifest["docs"])
    assert manifest["priors"]["raw/notes/release-4.md"] == 1.0


# --- wiki pages read line by line (search.documents.page_blocks) ---------------------------------


def test_a_wiki_page_is_split_at_its_headings_with_each_block_on_its_line():
    from wikimem.search.documents import page_blocks

    body = "\n".join([
        "# Title",                                    # 11
        "",
        "A lead that links [Ownership](../concepts/ownership.md) and",  # 13
        "goes on a second line.",
        "",
        "## Key points",                               # 16
        "",
        "- \"`Box\\<T>` lives on the heap.\" ([a.md, line 3](../../raw/a.md#L3))",  # 18
        "- a second point",
        "",
        "| setting | default |",                      # 21
        "|---|:---:|",
        "| `opt-level` | 3 |",                         # 23
        "",
        "```rust",
        "let x = 5; # not a heading",                  # 26
        "```",
        "Setext title",                                 # 28
        "============",
        "[The \\`match\\` construct](../sources/m.md) · <b>bold</b>",  # 30
    ])
    blocks = [(b.kind, b.text, b.line, b.level) for b in page_blocks(body, 10)]
    assert blocks == [
        ("heading", "Title", 11, 1),
        ("para", "A lead that links Ownership and\ngoes on a second line.", 13, 0),
        ("heading", "Key points", 16, 2),
        ("item", "\"`Box<T>` lives on the heap.\" (a.md, line 3)", 18, 0),
        ("item", "a second point", 19, 0),
        ("table", "setting | default", 21, 0),
        ("table", "`opt-level` | 3", 23, 0),
        ("code", "let x = 5; # not a heading", 26, 0),
        ("heading", "Setext title", 28, 1),
        ("para", "The `match` construct · bold", 30, 0),
    ]


def test_a_pathological_wiki_page_costs_its_length_not_its_square():
    """A person's page may hold a long line of brackets, escapes or backticks. No time is
    asserted: were reading it quadratic, this test would hang."""
    from wikimem.search.documents import page_blocks

    for unit in ("[", "\\", "`", "| ", "([a](", "[a](", "\\[", "<a ", "# ", "- ", "```x\n"):
        body = unit * (200_000 // len(unit))
        blocks = page_blocks(f"# Head\n\n{body}\n\nLast [word](a.md).\n")
        # (a run of backquotes opens a code fence: then the last line is code)
        assert blocks[0].text == "Head" and "Last" in blocks[-1].text, unit


def test_the_package_imports_each_part_on_first_use():
    # unpickling the index's schema imports the analyzer alone; the engine is not loaded with it
    # (the package's import hook is, to be in place before whoosh loads: search/spared.py)
    code = ("import sys, wikimem.search.analysis; "
            "print(sorted(m for m in sys.modules if m.startswith('wikimem.search.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['wikimem.search.analysis', 'wikimem.search.spared']"
    # every exported name resolves, and `engine` is the function, not the submodule of that name,
    # even when the submodule is imported first
    assert all(getattr(S, name) is not None for name in S.__all__)
    assert callable(S.engine) and S.engine.__module__ == "wikimem.search.engine"
    code = ("import importlib; importlib.import_module('wikimem.search.engine'); "
            "from wikimem import search; print(callable(search.engine))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"


def test_a_cold_search_process_sees_each_change(compiled):
    # `wikimem search` checks the index beside its query (a core free) or before it (none):
    # either way an edited, added or deleted file must be in the very next search's answer
    def cold(question: str) -> list[dict]:
        proc = subprocess.run([sys.executable, "-m", "wikimem.cli", "search", question, "--root", str(compiled.root),
                               "--json"], capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)["results"]

    S.update_index(compiled)
    assert cold("sourdough starter")[0]["title"] == "Sourdough"
    path = compiled.raw / "notes" / "cooking.md"
    path.write_text("# Sourdough\n\nFeed the starter with spelt flour.\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    assert "spelt" in cold("spelt")[0]["snippet"]
    write(compiled, "notes/new.md", "# Zebra facts\n\nZebras have stripes that confuse flies.\n")
    assert cold("zebras stripes flies")[0]["path"] == "raw/notes/new.md"
    (compiled.raw / "notes" / "new.md").unlink()
    assert "raw/notes/new.md" not in [r["path"] for r in cold("zebras stripes flies")]
    page = compiled.wiki / "concepts" / "okapi.md"
    page.write_text("---\ntitle: Okapi\nkind: concept\n---\n# Okapi\n\nThe okapi is a giraffid.\n", encoding="utf-8")
    assert cold("okapi giraffid")[0]["path"] == "wiki/concepts/okapi.md"
    page.unlink()
    assert "wiki/concepts/okapi.md" not in [r["path"] for r in cold("okapi giraffid")]


def test_the_check_beside_the_query_keeps_an_answer_only_from_a_current_index(compiled, monkeypatch, caplog):
    import importlib
    import logging

    single_threaded()  # search_once forks only then
    engine_module = importlib.import_module("wikimem.search.engine")
    monkeypatch.setattr(engine_module, "_core_free", lambda: True)
    caplog.set_level(logging.DEBUG, logger="wikimem.search")

    def once(question: str) -> tuple[list[S.Passage], str]:
        caplog.clear()
        S.engine(compiled).close()  # as a new process would find it
        found = S.search_once(compiled, question)
        return found, caplog.text

    S.update_index(compiled)
    found, log = once("sourdough starter")
    assert found[0].hit.title == "Sourdough" and "checked beside the query: current" in log
    path = compiled.raw / "notes" / "cooking.md"
    path.write_text("# Sourdough\n\nFeed the starter with spelt flour.\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    found, log = once("spelt")
    assert "spelt" in found[0].hit.snippet and "bringing it up to date first" in log
    write(compiled, "notes/new.md", "# Zebra facts\n\nZebras have stripes that confuse flies.\n")
    found, log = once("zebras stripes flies")
    assert found[0].hit.path == "raw/notes/new.md" and "bringing it up to date first" in log
    # another process updated the index after this one opened it: asked again, on the new one
    S.engine(compiled).close()
    eng = S.engine(compiled)
    assert eng.open_as_is() and eng.unchanged_since_open()
    write(compiled, "notes/later.md", "# Later\n\nA note about lemurs.\n")
    past_racy_window(compiled)  # else the next check reads it once more, as racily clean
    S.update_index(compiled)
    assert not eng.unchanged_since_open()
    found, log = once("lemurs")
    assert found[0].hit.path == "raw/notes/later.md" and "checked beside the query: current" in log


def test_a_segment_file_read_from_the_map_reads_as_whooshs_copy_of_it():
    from wikimem.search.mapped import _View

    data = pickle.dumps({"terms": [1, 2, 3]}) + b"line one\nline two\n" + bytes(range(256))
    ours, theirs = _View(memoryview(data)), io.BytesIO(data)
    steps = [pickle.load, lambda f: f.readline(), lambda f: f.read(5), lambda f: f.tell(), lambda f: f.seek(3),
             lambda f: f.read(), lambda f: f.read(), lambda f: f.seek(-4, io.SEEK_END), lambda f: f.read(10),
             lambda f: f.seek(2, io.SEEK_SET), lambda f: f.seek(7, io.SEEK_CUR), lambda f: f.read(3)]
    for step in steps:
        assert step(ours) == step(theirs)
    with pytest.raises(ValueError):
        ours.seek(-1)


def test_a_pickle_read_from_the_map_reads_as_pickle_load_reads_it(monkeypatch):
    # a block's header is read from a copy of the bytes it may need (mapped._load_pickle): the
    # same object, and the stream left where pickle.load leaves it, for pickles short and long
    # (read again wider), of every protocol, and a damaged one fails as pickle.load fails
    from wikimem.search import mapped

    monkeypatch.setattr(mapped, "PICKLE_READ", 8)
    objects = [("block", 1, 2.5), list(range(3000)), {"x": "y" * 500}, None, b"\x00" * 70]
    data = b"".join(pickle.dumps(o, protocol=n % (pickle.HIGHEST_PROTOCOL + 1)) for n, o in enumerate(objects))
    ours, theirs = mapped._View(memoryview(data)), io.BytesIO(data)
    for _ in objects:
        assert mapped._load_pickle(memoryview(data), ours) == pickle.load(theirs)
        assert ours.tell() == theirs.tell()
    torn = memoryview(data[:-3])
    ours, theirs = mapped._View(torn), io.BytesIO(bytes(torn))
    for _ in objects[:-1]:
        mapped._load_pickle(torn, ours)
        pickle.load(theirs)
    with pytest.raises(Exception) as ours_failed:
        mapped._load_pickle(torn, ours)
    with pytest.raises(Exception) as theirs_failed:
        pickle.load(theirs)
    assert type(ours_failed.value) is type(theirs_failed.value)


def test_the_entry_tables_are_those_of_the_stored_fields(ws):
    # FastScorer.entries reads each segment's own paths: the path, level and kind of every live
    # entry, and each file's first passage, as the stored fields give them, also across segments
    # with deleted entries
    many_notes(ws)
    S.update_index(ws)
    write(ws, "many/n5.md", "# Widget note 5 on kelp\n\nRewritten: kelp stages, step 5.\n\n## More\n\nText.\n")
    (ws.raw / "many" / "n7.md").unlink()
    S.update_index(ws)
    write(ws, "many/zz.md", "# New\n\nA new note.\n")
    eng = S.Engine(ws)
    eng.refresh()
    fast = S.FastScorer(eng._searcher)
    assert len(fast.leaves) > 1
    paths, levels, kinds = fast.entries()
    reader = eng._searcher.reader()
    live = [d for d in range(eng._searcher.doc_count_all()) if not reader.is_deleted(d)]
    assert len(live) < eng._searcher.doc_count_all()
    first: dict[str, int] = {}
    # the stored fields FastScorer reads from each segment's column are whoosh's, offsets and all
    read = S.FastScorer(eng._searcher)
    for d in live:
        stored = eng._searcher.stored_fields(d)
        assert (paths[d], bool(levels[d]), kinds[d]) == (stored["path"], stored["level"] == "doc", stored["kind"])
        assert read.fields(d) == stored
        if stored["level"] != "doc":
            first.setdefault(stored["path"], d)
    assert fast.first_part == first
    assert all(column is not None for column in read.stored_columns())
    eng.close()


def test_the_entry_tables_are_kept_for_the_next_process_to_open_the_same_index(ws, monkeypatch):
    # the first scorer to build the entry tables keeps them in the index's folder; a scorer on
    # the same index reads them back, equal to what it would build, and one on the index after
    # an update builds its own (the kept ones name another generation) and removes the old ones
    many_notes(ws)
    S.update_index(ws)
    folder = S.index_dir(ws)

    def kept() -> list[str]:
        return sorted(p.name for p in folder.iterdir() if p.name.startswith(".entries-"))

    def tables(eng):
        fast = S.FastScorer(eng._searcher)
        entries = (*fast.entries(), fast.first_part)
        return fast, (*entries, tuple(fast.collections()))  # the collections' table comes with them

    eng = S.Engine(ws)
    eng.refresh()
    assert kept() == []
    _, built = tables(eng)
    assert len(kept()) == 1
    from wikimem.search import ranking

    postings = ranking._id_postings
    monkeypatch.setattr(ranking, "_id_postings", lambda *a: pytest.fail("the tables were built again"))
    read_postings = ranking.FastScorer._read
    monkeypatch.setattr(ranking.FastScorer, "_read", lambda *a: pytest.fail("the collections were read again"))
    _, read = tables(eng)
    assert read == built and read[-1][0]  # a collection at least
    monkeypatch.setattr(ranking.FastScorer, "_read", read_postings)
    monkeypatch.setattr(ranking, "_id_postings", postings)
    eng.close()

    write(ws, "many/n5.md", "# Widget note 5 on kelp\n\nRewritten: kelp stages, step 5.\n")
    S.update_index(ws)
    eng = S.Engine(ws)
    eng.refresh()
    before = kept()
    _, after = tables(eng)
    assert after != built and len(kept()) == 1 and kept() != before
    (folder / kept()[0]).write_bytes(b"torn")  # a file cut short is passed by, and built again
    fast = S.FastScorer(eng._searcher)
    assert (*fast.entries(), fast.first_part, tuple(fast.collections())) == after
    eng.close()


def test_manifest_parts_are_read_only_for_the_manifest_json_they_were_made_from(compiled):
    from wikimem.search import index as I

    S.update_index(compiled)
    folder = S.index_dir(compiled)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    parts = I._load_parts(folder, I._stamp(folder / "manifest.json"), I._PART_NAMES)
    assert parts is not None and parts["files"] == manifest["files"]
    for path, info in manifest["docs"].items():  # a doc's title, kind, ... and prior, found by its path
        assert parts["docs"].get(path) == (*(info.get(k) for k in I._SHOWN), manifest["priors"].get(path))
    assert "raw/nowhere.md" not in parts["docs"] and "raw/notes/cooking.md" in parts["docs"]
    # manifest.json rewritten (here with the same content): the parts made from the old one are stale
    (folder / "manifest.json").write_text(json.dumps(manifest) + " ", encoding="utf-8")
    assert I._load_parts(folder, I._stamp(folder / "manifest.json"), ("files",)) is None
    # damaged parts are not trusted: the search reads manifest.json and writes the parts again
    (folder / I.PARTS_NAME).write_bytes(b"garbage")
    I._PARTS.clear()
    S.engine(compiled).close()
    assert S.search(compiled, "sourdough starter", limit=1)[0].title == "Sourdough"
    assert I._load_parts(folder, I._stamp(folder / "manifest.json"), ("files",)) == {"files": manifest["files"]}


def test_an_update_remakes_the_docs_part_of_what_changed_only_and_reads_as_a_full_one(compiled, settings, monkeypatch):
    from wikimem.search import index as I

    folder = S.index_dir(compiled)
    updates: list[set[str]] = []
    real = I._docs_part
    monkeypatch.setattr(I, "_docs_part", lambda m, update=None: (updates.append(update[1]) if update else None,
                                                                 real(m, update))[1])

    def docs_part() -> I.Docs:
        parts = I._load_parts(folder, I._stamp(folder / "manifest.json"), ("docs",))
        assert parts is not None
        return parts["docs"]

    before = docs_part()
    # a new release joins the series (the priors of its siblings move), a note goes, one changes
    write(compiled, "notes/release-3.md", "# Widget 3 Release Notes\n\nWidget 3 requires macOS 14 Sonoma or later.\n")
    (compiled.raw / "notes/cooking.md").unlink()
    write(compiled, "notes/toolchain.md", NOTES["notes/toolchain.md"] + "\nThe linker is lld.\n")
    compile_workspace(compiled, settings)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    after, full = docs_part(), I.Docs(I._docs_part(manifest))
    assert updates and {"raw/notes/cooking.md", "raw/notes/release-3.md", "raw/notes/toolchain.md"} <= updates[-1]
    remade = {n for n, blob in enumerate(after.raw) if blob != before.raw[n]}
    assert 0 < len(remade) < 64  # the buckets of the paths that moved, of 1,024
    for path in manifest["docs"]:
        assert after.get(path) == full.get(path)
    assert after.get("raw/notes/cooking.md") is None and after.get("raw/notes/release-3.md") is not None


def test_a_check_without_a_walk_sees_what_a_walk_would(compiled, monkeypatch, tmp_path):
    # search.unchanged: when no folder changed since a walk matched the index, one stat per
    # folder and per file decides. Each change below must still be seen, and a walk must then
    # decide (the folders here are brand new: treat them as old enough to keep a trace of)
    import time

    from wikimem.search import index as I
    from wikimem.search import unchanged

    monkeypatch.setattr(unchanged, "RECENT_NS", 0)
    folder = S.index_dir(compiled)

    def signed() -> bool:
        parts = I.read_parts(folder, ("files",))
        return unchanged.since_signed(compiled, folder, parts["stamp"], parts["files"],
                                      unchanged.rules_digest(I.WIKI_FOLDERS))

    def settle() -> None:
        past_racy_window(compiled)  # a file just written is read once more, as racily clean
        S.update_index(compiled)
        assert S.is_current(compiled)  # walks, and keeps the trace
        time.sleep(0.05)  # past the clock tick of the last change, as RECENT_NS is in earnest
        assert signed() and S.is_current(compiled)

    settle()
    write(compiled, "notes/new.md", "# Zebra facts\n\nZebras have stripes.\n")  # a new name
    assert not signed() and S.is_current(compiled) is False
    settle()
    path = compiled.raw / "notes" / "new.md"
    path.write_text("# Zebra facts\n\nZebras have spots.\n", encoding="utf-8")  # same size
    os.utime(path, ns=(1, 1))
    assert not signed() and S.is_current(compiled) is False
    settle()
    write(compiled, "notes/.wikimemignore", "new.md\n")  # a rule: the file leaves the index
    assert not signed() and S.is_current(compiled) is False
    settle()
    assert "raw/notes/new.md" not in paths(S.search(compiled, "zebras spots"))
    (compiled.raw / "notes" / ".wikimemignore").write_text("old.md\n", encoding="utf-8")  # same size
    assert not signed() and S.is_current(compiled) is False
    settle()
    os.link(path, tmp_path / "outside.md")  # a second name outside raw/: the file is refused
    assert not signed() and S.is_current(compiled) is False
    S.update_index(compiled)
    assert "raw/notes/new.md" not in paths(S.search(compiled, "zebras spots"))
    (tmp_path / "outside.md").unlink()
    settle()
    page = compiled.wiki / "concepts" / "okapi.md"
    page.write_text("---\ntitle: Okapi\nkind: concept\n---\n# Okapi\n\nA giraffid.\n", encoding="utf-8")
    assert not signed() and S.is_current(compiled) is False
    settle()
    # what a trace cannot vouch for is not kept: a symbolic link, a folder changed just now
    os.symlink(path, compiled.raw / "notes" / "alias.md")
    S.update_index(compiled)
    assert S.is_current(compiled) and not signed()
    (compiled.raw / "notes" / "alias.md").unlink()
    monkeypatch.setattr(unchanged, "RECENT_NS", 60_000_000_000)
    S.update_index(compiled)
    assert S.is_current(compiled) and not signed()


def test_index_reads_what_the_compile_kept_and_never_parses_again(ws, settings, monkeypatch):
    """The compile keeps an outline of every source (headings, releases; an HTML file's blocks):
    the index's passages built from it equal those from parsing the file again, and indexing
    after a compile loads no source."""
    from wikimem.search import documents, index
    from wikimem.sources import load_source

    write(ws, "guide.md", "# Guide\n\nIntro text.\n\n## Setup\n\nRun `make` first.\n")
    write(ws, "ref.rst", "Reference\n=========\n\nThe ``timeout`` is 30 s.\n\nLimits\n------\n\nAt most 8.\n")
    write(ws, "page.html", "<html><head><title>Page</title></head><body><h1>Page</h1><p>Hello there.</p>"
                           "<h2>Part</h2><ul><li>One item.</li></ul><table><tr><td>a</td><td>b</td></tr></table>"
                           "</body></html>")
    compile_workspace(ws, settings)
    current = {p: (e.stat().st_size, e.stat().st_mtime_ns)
               for p, e in ((f"raw/{n}", ws.raw / n) for n in ("guide.md", "ref.rst", "page.html"))}
    outlines = index._Outlines(ws, current)
    try:
        for path in current:
            kept = outlines.get(path)
            assert kept is not None, path
            assert documents.load_raw_file(ws, path, 10**7, kept) == documents.load_raw_file(ws, path, 10**7), path
        assert "blocks" in outlines.get("raw/page.html") and "blocks" not in outlines.get("raw/guide.md")
    finally:
        outlines.close()

    loaded: list[str] = []

    def counting(file, rel, **kw):
        loaded.append(rel)
        return load_source(file, rel, **kw)

    monkeypatch.setattr("wikimem.sources.load_source", counting)
    report = S.update_index(ws, rebuild=True)
    assert report.rebuilt and loaded == []
    assert paths(S.search(ws, "Hello there", limit=1)) == ["raw/page.html"]


ANALYZED = ("The `raw_enabled` setting of flask.__version__ and go1.21 (1.19, 3.0.2rc1): THE of a__b __init__ "
            "x.y.z é_ü ñandú *glob* a*b _ __ ___a. Ünïcode_Wörd naïve café; the of and; it's don’t 12:30 "
            "Caching caches cached, SESSION_COOKIE_DOMAIN=None. İstanbul Straße ǅemal ÀB_ÇD.")


@pytest.mark.parametrize("text", [ANALYZED, "", "the of and", "\n\n  \t", ANALYZED * 3])
def test_analyzer_equals_the_whoosh_chain_it_stands_for(text):
    """The one-pass analyzer (per-word cache) gives the tokens, positions and counts of the
    chain of whoosh filters it replaces, for indexing and for queries. Words it has not seen
    go through its plain steps (analysis._chain_steps), not the chain."""
    from collections import Counter

    from wikimem.search.analysis import forget_words

    forget_words()
    ana = S.analyzer()
    for positions in (False, True):
        for mode in ("index", "query", ""):
            fast = [(t.text, t.pos if positions else None, t.boost, t.stopped)
                    for t in ana(text, positions=positions, mode=mode)]
            slow = [(t.text, t.pos if positions else None, t.boost, t.stopped)
                    for t in ana.chain(text, positions=positions, mode=mode)]
            assert fast == slow
    assert ana.counts(text) == Counter(t.text for t in ana.chain(text))
    # what the chain alone does (stop words kept, character offsets) goes through it
    kept = [(t.text, t.startchar) for t in ana(text, chars=True, removestops=False)]
    assert kept == [(t.text, t.startchar) for t in ana.chain(text, chars=True, removestops=False)]


def test_quoted_phrase_needs_its_words_in_a_row_in_any_field(ws):
    write(ws, "a.md", "# Session cookie\n\nThe domain is set per request.\n")
    write(ws, "b.md", "# Notes\n\nA cookie for the session, and a domain.\n")
    write(ws, "c.md", "# Other\n\nThe `SESSION_COOKIE_DOMAIN` setting names the domain.\n")
    # a phrase scores again where its words stand in a row: a title, an identifier's parts; the
    # words apart (b.md) still match as words, below
    assert paths(S.search(ws, '"session cookie"', limit=3)) == ["raw/a.md", "raw/c.md", "raw/b.md"]
    assert paths(S.search(ws, 'cookie domain', limit=3))[1:] == ["raw/b.md", "raw/c.md"]
    assert paths(S.search(ws, '"cookie domain"', limit=3))[1:] == ["raw/c.md", "raw/b.md"]


def _segment_files(folder):
    """The files inside an index's one compound segment, by extension."""
    from whoosh import index as windex
    from whoosh.filedb.compound import CompoundStorage

    ix = windex.open_dir(str(folder))
    (segment,) = ix._segments()
    inner = CompoundStorage(ix.storage.open_file(segment.make_filename(".seg")), use_mmap=False)
    return {name.split(".", 1)[1]: inner.open_file(name).read(inner.file_length(name)) for name in inner.list()}


@pytest.mark.parametrize("how", ["in memory", "in runs on disk", "merged", "out of order", "boosted", "compressed"])
def test_the_index_writer_writes_what_whooshs_own_writes(tmp_path, monkeypatch, how):
    # the segment writer adds a document's postings grouped by term (index._segment_writer_class,
    # _pool_class) and writes them a block at a time (_field_writer_class): the files must be
    # whoosh's, byte for byte, blocks cut where it cuts them (a word in every document fills
    # several), with its statistics and field lengths; also when the pool outgrows its memory
    # (runs sorted on disk), when segments are merged into one (postings of merged segments),
    # for a field whose weights are boosted, and for a codec that compresses its blocks (then
    # written a posting at a time, through whoosh's postings writer)
    from whoosh import index as windex
    from whoosh.codec.whoosh3 import W3Codec

    from wikimem.search import analysis
    from wikimem.search import index as I

    def schema():
        made = analysis.schema()
        if how == "boosted":
            made["body"].format.field_boost = 2.5
        return made

    if how == "compressed":
        monkeypatch.setattr(I, "COMPRESSION", 3)
        monkeypatch.setattr(I, "_CODEC", None)

    docs = [dict(path=f"raw/n{n}.md", kind="source", level="part", body=" ".join(
        ["widget"] * (1 + n % 7) + [f"part{n % 13}", "gear" if n % 3 else "", "bolt " * (n % 5),
                                    "cog" if n < 256 else ""]),  # cog: two full blocks exactly
        headings="Setup" if n % 2 else "", lines=[[1, 2]], **({"era": str(n % 11)} if n % 4 else {}))
        for n in range(300)]
    # a file's doc entry: its title, aliases and path words, stored values of every kind
    docs += [dict(path=f"raw/n{n}.md", kind="source", level="doc", title=f"Ünïcode gear {n} the",
                       aliases=["Gear box", "gb"][n % 2], where=f"raw n{n} md", anchor=f"L{n}") for n in range(6)]
    options = {"limitmb": 0.02} if how == "in runs on disk" else {}
    built, stored = {}, {}
    for name, writer_of in (("whoosh", lambda ix: ix.writer(codec=W3Codec(compression=I.COMPRESSION), **options)),
                            ("wikimem", lambda ix: I._writer(ix, **options))):
        folder = tmp_path / name
        folder.mkdir()
        ix = windex.create_in(str(folder), schema())
        parts = [docs[:120], docs[120:]] if how == "merged" else [docs]
        for at, part in enumerate(parts):
            writer = writer_of(ix)
            for doc in part:
                writer.add_document(**doc)
            if how == "out of order" and name == "wikimem":
                # postings that came otherwise than a document at a time (as Pool.add takes them)
                grouped = writer.pool.grouped()
                for flat, width in [*((f, 2) for _, terms in grouped.counted.values() for f in terms.values()),
                                    *((f, 3) for terms in grouped.posted.values() for f in terms.values())]:
                    flat[:] = [x for at in range(len(flat) - width, -1, -width) for x in flat[at:at + width]]
                grouped.unordered = True
            if how == "merged" and at == 1:
                writer.commit(optimize=True)  # the first segment's postings through the pool again
            else:
                writer.commit(merge=False)
        built[name] = _segment_files(folder)
        reader = windex.open_dir(str(folder)).reader()
        assert reader.doc_frequency("body", "widget") == 300 and reader.doc_field_length(5, "body") > 0
        # the stored fields, as read back (wikimem stores them at its own zlib level, STORED_LEVEL)
        stored[name] = [reader.stored_fields(n) for n in range(reader.doc_count_all())]
    assert stored["wikimem"] == stored["whoosh"] and stored["whoosh"][0]["body"].startswith("widget")
    assert built["wikimem"].pop("_stored.col") != built["whoosh"].pop("_stored.col")
    assert built["wikimem"] == built["whoosh"]
    assert len(built["wikimem"]["pst"]) > 1000


def _two_collections(ws) -> None:
    write(ws, "book/ch01-getting-started.md",
          "# Getting started\n\nThis book assumes you use Widget 1.97.0 or later, with the widget compiler "
          "installed.\n\nEach chapter of the book builds one small program.\n")
    write(ws, "book/ch02-guessing-game.md",
          "# A guessing game\n\nThe widget compiler turns each chapter's program into a binary.\n")
    write(ws, "book/ch03-ownership.md",
          "# Ownership\n\nWidget programs own their values; the book explains borrowing next.\n")
    for minor in range(10, 22):
        write(ws, f"notes/gizmo1.{minor}.md",
              f"# Gizmo 1.{minor} release notes\n\nGizmo 1.{minor} requires macOS 10.{minor} or later; the minimum "
              f"version of the Gizmo toolchain you use to build it is now 1.{minor - 2}. This version assumes "
              f"a new linker.\n\nThe version of the bundled time zone database is 2024{minor}.\n")


def test_a_question_whose_words_belong_to_one_collection_ranks_its_passages_first(ws, settings):
    """A book beside another product's release notes: a question about the book's version is
    answered from the book, not from five release notes that say "version" more often."""
    _two_collections(ws)
    compile_workspace(ws, settings)
    hits = S.search(ws, "Which minimum Widget version does the book need?", limit=5)
    assert hits and "book" in hits[0].path, [h.path for h in hits]
    tops = [h.path for h in hits[:3]]
    assert all("book" in p for p in tops), tops


def test_a_collection_is_asked_by_the_share_of_the_questions_words_it_holds() -> None:
    from wikimem.search.ranking import asked_collection

    # entries 0-9 are collection 1 (a book), 10-99 collection 2 (release notes)
    of = [1] * 10 + [2] * 90
    sizes = [10, 90]
    widget = {d: 1.0 for d in (0, 1, 2)}  # said only in the book
    version = {d: 1.0 for d in (*range(0, 10, 3), *range(10, 100, 3))}  # said everywhere
    assert asked_collection([widget, version], [3.0, 1.0], of, sizes) == 1
    assert asked_collection([version], [1.0], of, sizes) == 0  # a word of every collection asks for none
    assert asked_collection([], [], of, sizes) == 0


def test_the_latest_release_is_its_newest_releases_content_not_the_boilerplate_all_releases_share(ws, settings):
    write(ws, "releases/0.9.txt", "Acme version 0.9 release notes\n==============================\n\nWelcome to Acme 0.9, "
                                  "the last release before the API froze.\n\nThe latest release fixes the old scheduler.\n")
    topics = ["the cache", "the scheduler", "the parser", "the mailer", "the uploader", "the router", "the logger"]
    for minor, topic in enumerate(topics, 1):
        write(ws, f"releases/1.{minor}.txt",
              f"Acme 1.{minor} release notes\n========================\n\n*January {minor}, 2026*\n\n"
              f"Acme 1.{minor} fixes a crash in {topic} when a widget is released twice.\n\n"
              f"Backwards incompatible changes\n------------------------------\n\n"
              f"After making the deprecation warning fixes, your app should be compatible with Acme 1.{minor}. "
              f"The latest release notes of every series describe what changed.\n")
    write(ws, "guide/install.txt", "Installing Acme\n===============\n\nInstall the latest release with the installer.\n")
    compile_workspace(ws, settings)
    for question in ("What does the latest Acme release fix?", "What changed in the latest Acme release?"):
        hits = S.search(ws, question, limit=5)
        # the newest release's page and its raw file, before any older release
        assert len(hits) >= 2 and all("1.7" in h.title for h in hits[:2]), [(h.path, h.title) for h in hits]
    assert "logger" in S.search(ws, "What does the latest Acme release fix?", limit=1)[0].snippet


def test_boilerplate_is_text_many_releases_share_numbers_aside() -> None:
    from wikimem.search.ranking import boilerplate_key, parse_query

    assert boilerplate_key("After the fixes, your app works with Acme 5.0.") == \
        boilerplate_key("After the fixes, your app  works with Acme 4.2.1.")
    assert parse_query("What is in the latest release?").latest
    assert not parse_query("What is the latest value of the cache size?").latest


def test_a_stem_keeps_its_word_but_at_most_its_last_four_letters():
    # what Analyzer.terms_for relies on to stem only the words that may make a phrase's terms
    from whoosh.lang.porter import stem

    from wikimem import lexicon

    words = (Path(lexicon.__file__).parent / "english.txt").read_text(encoding="utf-8").split()
    endings = ("", "s", "es", "ies", "ed", "ing", "ly", "y", "ness", "ation", "ational", "ization", "izer",
               "fulness", "iveness", "biliti", "icate", "ical", "alize", "ence", "enci", "anci", "ement", "e")
    checked = 0
    for word in words[::7]:
        for ending in endings:
            text = word.lower() + ending
            made = stem(text)
            assert text.startswith(made[:max(1, len(made) - 4)]), (text, made)
            checked += 1
    assert checked > 10_000


def test_a_snippet_finds_the_words_that_make_the_questions_stems_stemming_only_what_may_make_them():
    from wikimem import lexicon
    from wikimem.search import analysis, snippets

    listed = (Path(lexicon.__file__).parent / "english.txt").read_text(encoding="utf-8").split()
    words = [w for w in (w.lstrip("=") for w in listed[::13]) if w.isalpha()]
    endings = ("", "s", "ing", "ed", "ation", "ly", "ness", "izer")
    made = [w + endings[i % len(endings)] for i, w in enumerate(words)]
    idents = ["raw_enabled", "flask.g", "Config.from_object", "go1.21", "__version__", "*emph*", "İstanbul"]
    text = " ".join(made[1:] + idents) + ". Configuring configurations, relating relations."

    def every_word(body: str, stems: set[str]) -> list[tuple[int, str]]:
        hits = []
        for m in analysis.TOKEN.finditer(body):
            word = m.group()
            if analysis.stem_word(word) in stems:
                hits.append((m.start(), analysis.stem_word(word)))
            elif "_" in word or "." in word:
                hits += [(m.start(), analysis.stem_word(p)) for p in analysis.identifier_parts(word)
                         if analysis.stem_word(p) in stems]
        return hits

    questions = [{analysis.stem_word(w) for w in made[i:i + 3]} for i in range(1, len(made) - 3, 67)]
    questions += [{"configur", "relat"}, {"enabl", "raw"}, {"g", "flask"}, {"version"}, {"go1.21"}, {"istanbul"}]
    for stems in questions:
        analysis.STEMS.clear()  # every word new to the process, as in a first search
        expected = every_word(text, stems)
        analysis.STEMS.clear()
        assert snippets._hits(text, stems) == expected, stems
        assert expected or stems == {"istanbul"}, stems  # a dotted capital I is no plain i


def test_a_phrase_is_checked_against_the_analyzers_terms_stemming_only_what_may_make_them():
    from wikimem.search.ranking import holds_phrase

    ana = S.analyzer()
    texts = [
        "Hoping to configure the widget_uses setting, the widgets used it.",
        "The configuration of a relational database: relations, relating, relate.",
        "error handling in Go: errors are handled, handling errors, the handler's error.",
        "flask.g and raw_enabled: the raw enabled flag, raw_enabled_flag, enabled raw.",
        "Happiness, happily, happy; a generalization generalizes; the trait objects of traits.",
        "trait of objects, trait-objects, TraitObjects, trait_objects and objects trait.",
    ]
    phrases = [("hope", "configur"), ("widget", "us"), ("relat", "databas"), ("error", "handl"),
               ("raw", "enabl"), ("enabl", "raw"), ("happi", "happili"), ("trait", "object"),
               ("object", "trait"), ("gener", "gener"), ("flask", "g")]
    held = 0
    for phrase in phrases:
        unmade: dict[str, tuple[None, ...]] = {}  # shared by every text, as phrase_scores shares it
        for text in texts:
            terms = ana.terms(text)
            expected = any(terms[i:i + len(phrase)] == list(phrase) for i in range(len(terms)))
            assert holds_phrase(text, phrase, unmade) is expected, (phrase, text)
            held += expected
    assert held >= 8


@pytest.mark.parametrize("around", [1, 2, 24])
def test_a_phrase_is_read_around_the_places_its_rarest_letters_occur(monkeypatch, around):
    # Analyzer.in_a_row reads the words around each place the letters of one of the phrase's
    # terms occur, wider until enough words that make terms stand on each side: it answers as
    # the analyzer's whole list of terms does, across stop words, identifiers, dots, capitals,
    # other scripts and the edges of the text
    import random

    from wikimem.search import analysis

    monkeypatch.setattr(analysis, "READ_AROUND", around)
    ana = S.analyzer()
    vocab = ["trait", "traits", "Trait", "object", "objects", "OBJECTS", "of", "the", "a", "and", "trait_object",
             "foo.trait", "trait.object", "objects_trait", "x", "1.2", "go1.21", "\u03a3\u0391\u03a3", "\u0130stanbul",
             "stra\u00dfe", "na\u00efve", "ob", "t", "*", "relational", "databases", "relate", "hoping", "configured",
             "minimum", "macOS", "versions", "__init__", "a.b.c", "trait..object", ".trait", "object."]
    seps = [" ", " ", " ", ", ", ". ", "-", "\u2014", "\n", "..", "'", "(", ") ", "/", "\u201c", ": "]
    phrases = [("trait", "object"), ("object", "trait"), ("relat", "databas"), ("hope", "configur"),
               ("minimum", "maco", "version"), ("trait", "trait"), ("istanbul", "trait"), ("g", "trait")]
    rnd = random.Random(around)
    unmade: dict[tuple[str, ...], dict[str, tuple[None, ...]]] = {phrase: {} for phrase in phrases}
    held = 0
    for _ in range(1500):
        text = "".join(rnd.choice(vocab) + rnd.choice(seps) for _ in range(rnd.randint(1, 40)))
        text = (text, text.upper(), text.title())[rnd.randrange(3)]
        terms = ana.terms(text)
        for phrase in phrases:
            expected = any(terms[i:i + len(phrase)] == list(phrase) for i in range(len(terms)))
            assert ana.in_a_row(text, phrase, unmade[phrase]) is expected, (phrase, text)
            held += expected
    assert held > 1000


def test_a_raw_file_and_its_pages_move_down_alike_in_any_order():
    """A long source compiled into a page and its parts: which of each (page, raw file) pair moves
    down is decided by the scores before any move, and the raw file moves down once, whatever
    order the window lists them in (entry numbers, which differ between builds of the index)."""
    from itertools import permutations

    from wikimem.search.engine import DUPLICATE_DEMOTE, demote_duplicates

    scores = {"raw/notes/history.rst": 21.5, "wiki/sources/notes-history.md": 29.4,
              "wiki/sources/notes-history/1-0.md": 11.2, "wiki/sources/notes-history/2-0.md": 11.2,
              "raw/other.md": 15.0}
    source = {p: "raw/notes/history.rst" for p in scores if p.startswith("wiki/")}
    results = set()
    for order in permutations(scores):
        by_path = {p: scores[p] for p in order}
        demote_duplicates(by_path, source.get)
        results.add(tuple(sorted(by_path.items())))
    assert len(results) == 1
    got = dict(next(iter(results)))
    # the page beats its raw file, the raw file beats each part: each moves down once
    assert got["raw/notes/history.rst"] == 21.5 * DUPLICATE_DEMOTE
    assert got["wiki/sources/notes-history.md"] == 29.4
    assert got["wiki/sources/notes-history/1-0.md"] == got["wiki/sources/notes-history/2-0.md"] == 11.2 * DUPLICATE_DEMOTE
    assert got["raw/other.md"] == 15.0


def test_the_window_keeps_every_entry_that_ties_its_last():
    from wikimem.search.engine import window

    scores = {7: 3.0, 2: 1.0, 9: 2.0, 4: 1.0, 5: 1.0, 1: 0.5}
    assert window(scores, 3) == [(3.0, -7), (2.0, -9), (1.0, -2), (1.0, -4), (1.0, -5)]
    assert window(scores, 2) == [(3.0, -7), (2.0, -9)]
    assert window(scores, 10) == sorted(((sc, -d) for d, sc in scores.items()), reverse=True)

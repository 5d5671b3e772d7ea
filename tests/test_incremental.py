"""An incremental compile gives exactly the wiki a full compile of the same raw/ gives.

The offline backend keeps running totals in state.db (per-phrase document counts, which
source holds which phrase, what each page last showed) and renders only the pages whose
content moved. These tests drive a few hundred generated sources through edits, additions,
deletions and renames, and compare every page with a fresh compile after each step.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import corpus, snapshot
from wikimem.backends.offline import MemoryStats, _StoreStats, choose_concepts
from wikimem.backends.offline_store import Store
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.raw_tree import MIN_COLLECTION, collections
from wikimem.state import State
from wikimem.workspace import Workspace

pytestmark = pytest.mark.slow  # each test runs several full compiles: 2 to 35 s apiece

# things the notes talk about, spelled the ways people spell them: more than a few hundred
# sources make pages for, so the concept budget binds and concepts come and go
_SYLLABLES = "ka lo mi ne ru sa ti vo ze pa do fi gu".split()


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def _topics() -> list[tuple[str, str]]:
    rng = random.Random(11)
    out = []
    for i in range(320):
        a, b = _word(rng), _word(rng)
        prose = f"{a} {b}" if i % 3 else a
        style = i % 4
        surface = (f"`{a.title()}{b.title()}`" if style == 0 and i % 3 else f"`{a}`" if style == 0
                   else f"**{prose}**" if style == 1 else f"*{prose}*" if style == 2 else prose)
        out.append((surface, prose))
    return out


TOPICS = _topics()
WORDS = ("latency budget throughput replica leader follower quorum partition shard index query planner "
         "memory allocator garbage collector scheduler thread pool backpressure queue consumer producer "
         "snapshot compaction checkpoint manifest release train incident pager runbook dashboard alert").split()


def note(rng: random.Random, i: int, edit: int = 0) -> str:
    # a skewed pick: some topics are in many notes, most in a few
    topics = list(dict.fromkeys(TOPICS[min(len(TOPICS) - 1, int(rng.paretovariate(0.8)) - 1)] for _ in range(rng.randint(3, 28))))
    lines = [f"# {topics[0][1].title()} notes {i}", ""]
    if rng.random() < 0.3:
        lines[0:0] = ["---", f"date: 2025-{1 + i % 12:02d}-{1 + i % 27:02d}", "---"]
    for n, (surface, prose) in enumerate(topics):
        if n and rng.random() < 0.5:
            lines += [f"## {prose.title()}", ""]
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        lines += [f"The {surface} keeps the {words} steady. A {prose} shows up in {rng.randint(2, 90)} "
                  f"services, and the {prose} is reviewed every {rng.randint(1, 12)} weeks by the team.", ""]
    for k in range(edit):
        lines += [f"## Edit {k}", "", f"Later the {rng.choice(TOPICS)[1]} met the {rng.choice(WORDS)} again in release {k}.", ""]
    return "\n".join(lines)


def compile_(ws: Workspace, **kwargs):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}), **kwargs)


def pages(ws: Workspace) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(ws.wiki).items() if k != "log.md"}


def fresh_compile(ws: Workspace, where: Path) -> dict[str, bytes]:
    other = Workspace.at(where)
    if where.exists():
        shutil.rmtree(where)
    init_workspace(other)
    shutil.rmtree(other.raw)
    shutil.copytree(ws.raw, other.raw)
    compile_(other)
    return pages(other)


def assert_same(ws: Workspace, where: Path, step: str) -> None:
    ours, theirs = pages(ws), fresh_compile(ws, where)
    differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    assert not differ, f"after {step}: incremental and full compiles differ in {differ[:10]}"


def counted_analyses(state: State) -> dict[str, dict[str, Any]]:
    """Each counted source's cached analysis, by path: what a count from nothing would read."""
    return {path: json.loads(data) for path, data in state.db.execute(
        "SELECT d.path, a.data FROM offline_docs d JOIN analyses a ON a.sha256 = d.sha256")}


def test_incremental_compiles_equal_a_full_compile(ws: Workspace, tmp_path: Path) -> None:
    rng = random.Random(7)
    # 250 sources: adding a few crosses 256, where every source's links are ranked again
    for i in range(250):
        (ws.raw / f"n{i // 50}").mkdir(exist_ok=True)
        (ws.raw / f"n{i // 50}" / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    assert len(list((ws.wiki / "concepts").glob("*.md"))) >= 20
    files = sorted(p for p in ws.raw.rglob("*.md"))

    # edits: one source, then several at once
    files[3].write_text(note(random.Random(3), 3, edit=2), encoding="utf-8")
    report = compile_(ws)
    assert report.compiled == [f"raw/{files[3].relative_to(ws.raw).as_posix()}"]
    assert_same(ws, tmp_path / "full", "one edit")
    for f in rng.sample(files, 6):
        f.write_text(note(rng, 999, edit=3), encoding="utf-8")
    # deletions and renames in the same compile
    for f in files[10:14]:
        f.unlink()
    files[20].rename(files[20].with_name("renamed-20.md"))
    files[21].rename(ws.raw / "moved-21.md")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "edits, deletions and renames")
    # additions past 256 sources, and a source that stops mentioning everything it did
    for i in range(250, 262):
        (ws.raw / "new").mkdir(exist_ok=True)
        (ws.raw / "new" / f"note-{i}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    files[30].write_text("# Nothing much\n\nA short note about the weather today.\n", encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "additions")
    # and back below 256, deleting the sources of one concept
    for f in sorted(ws.raw.rglob("*.md"))[:15]:
        f.unlink()
    compile_(ws)
    assert_same(ws, tmp_path / "full", "deletions")
    assert compile_(ws).noop

    # the running totals in state.db choose what counting every analysis would choose
    state = State(ws.state_db)
    try:
        analyses = counted_analyses(state)
        from_db = choose_concepts(_StoreStats(Store(state.db), collections(analyses)))
        # ... and the phrases that hold a word, and how often each is said, are read from the
        # totals as from the analyses
        memory, stored = MemoryStats(analyses), _StoreStats(Store(state.db), collections(analyses))
        for c in memory.collections():
            words = {k for k in memory.df[c] if " " not in k}
            found = stored.phrases(c, words)
            assert found and found == memory.phrases(c, words)
            keys = [*sorted(words)[::3], *(p for p, _ in found)]
            assert stored.said(c, keys) == memory.said(c, keys)
        # ... and each source's postings say how often and how strongly it names each key, as
        # its analysis does (concept pages rank their sources from them)
        ids = dict(state.db.execute("SELECT path, id FROM offline_docs"))
        scope = collections(analyses)
        for path, data in list(analyses.items())[::7]:
            keys = sorted(data["terms"])[::5]
            got = Store(state.db).mentions([f"{scope[path]}\x1f{k}" for k in keys])
            for key in keys:
                one = Store(state.db).mentions([f"{scope[path]}\x1f{key}"])[ids[path]]
                assert one == (data["terms"][key], data["signals"].get(key, [0])[0]), (path, key)
            assert got[ids[path]][0] == sum(data["terms"][k] for k in keys)
    finally:
        state.close()
    assert len(analyses) == len(list(ws.raw.rglob("*.md")))
    assert from_db == choose_concepts(MemoryStats(analyses))


def test_a_source_no_longer_readable_leaves_the_wiki_as_a_deleted_one(ws: Workspace, tmp_path: Path) -> None:
    """A source emptied (or made binary) was skipped, and its page stayed, listed in index.md,
    saying what the file no longer says; a full compile of the same raw/ has no such page."""
    for i in range(30):
        (ws.raw / f"note-{i:02d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    target = "raw/note-04.md"
    state = State(ws.state_db)
    try:
        page = state.sources()[target].page
    finally:
        state.close()
    assert page and (ws.wiki / page).exists()
    (ws.root / target).write_text("", encoding="utf-8")
    report = compile_(ws)
    assert [p for p, _ in report.skipped] == [target]
    assert not (ws.wiki / page).exists()
    assert page not in (ws.wiki / "index.md").read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "a source emptied")
    # readable again: its page comes back
    (ws.root / target).write_text(note(random.Random(4), 4), encoding="utf-8")
    compile_(ws)
    assert (ws.wiki / page).exists()
    assert_same(ws, tmp_path / "full", "the source written again")


def test_lost_analysis_cache_counts_everything_again(ws: Workspace, tmp_path: Path) -> None:
    for i in range(40):
        (ws.raw / f"note-{i:02d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    state = State(ws.state_db)
    state.db.execute("DELETE FROM analyses")  # the totals can no longer be counted down
    state.close()
    (ws.raw / "note-05.md").write_text(note(random.Random(5), 5, edit=1), encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "losing the analysis cache")


def test_older_state_db_is_migrated_without_reading_sources_again(ws: Workspace, tmp_path: Path) -> None:
    for i in range(30):
        (ws.raw / f"note-{i:02d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    state = State(ws.state_db)
    for table in ("offline_terms", "offline_surfaces", "offline_postings", "offline_docs", "offline_concepts"):
        state.db.execute(f"DROP TABLE {table}")
    state.db.execute("PRAGMA user_version=2")
    cached = state.db.execute("SELECT count(*) FROM analyses").fetchone()[0]
    state.close()
    (ws.raw / "note-07.md").write_text(note(random.Random(7), 7, edit=1), encoding="utf-8")
    report = compile_(ws)
    assert report.compiled == ["raw/note-07.md"]
    state = State(ws.state_db)
    assert state.db.execute("SELECT count(*) FROM offline_docs").fetchone()[0] == 30
    assert state.db.execute("SELECT count(*) FROM analyses").fetchone()[0] == cached  # kept, one replaced
    state.close()
    assert_same(ws, tmp_path / "full", "migrating state.db")


def test_a_version_3_state_db_gains_the_postings_counts_without_reading_sources_again(
        ws: Workspace, tmp_path: Path) -> None:
    for i in range(30):
        (ws.raw / f"note-{i:02d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    state = State(ws.state_db)
    state.db.execute("DROP TABLE offline_postings")  # as version 3 made it: no counts
    state.db.execute("CREATE TABLE offline_postings (term INTEGER NOT NULL, doc INTEGER NOT NULL, "
                     "PRIMARY KEY (term, doc)) WITHOUT ROWID")
    state.db.execute("PRAGMA user_version=3")
    state.close()
    (ws.raw / "note-07.md").write_text(note(random.Random(7), 7, edit=1), encoding="utf-8")
    report = compile_(ws)
    assert report.compiled == ["raw/note-07.md"]  # the others from the analysis cache
    assert_same(ws, tmp_path / "full", "migrating a version 3 state.db")


def test_sentences_cached_without_their_tokens_give_the_same_pages(ws: Workspace) -> None:
    """The pages read a sentence's tokens from its row in state.db (Sentence.words, as the
    analysis made them); a row without them (an older cache) is tokenized again, to the same pages."""
    for i in range(30):
        (ws.raw / f"note-{i:02d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    before = pages(ws)
    state = State(ws.state_db)
    cached = state.db.execute("SELECT sha256, backend, sentences FROM analyses").fetchall()
    assert all(row[7] is not None for _, _, text in cached for row in json.loads(text) if row[2] != "data")
    state.db.executemany("UPDATE analyses SET sentences=? WHERE sha256=? AND backend=?",
                         [(json.dumps([row[:7] for row in json.loads(text)]), sha, backend) for sha, backend, text in cached])
    state.set_meta("backend.version", "offline:0")  # pages of another version: every page is rendered again
    state.close()
    report = compile_(ws)
    assert any("re-rendered every page" in w for w in report.warnings)
    assert pages(ws) == before


def test_index_catalogs_a_person_touched_are_written_again(ws: Workspace, tmp_path: Path) -> None:
    for i in range(200):  # past one page of index.md: catalogs per folder
        (ws.raw / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    catalogs = sorted(p.relative_to(ws.wiki).as_posix() for p in (ws.wiki / "sources").glob("index*.md"))
    assert "sources/index.md" in catalogs and len(catalogs) > 1
    (ws.wiki / catalogs[-1]).write_text("scribbled over\n", encoding="utf-8")
    (ws.wiki / "sources" / "index-99.md").write_text("a stray catalog\n", encoding="utf-8")
    (ws.raw / "note-004.md").write_text(note(random.Random(4), 4, edit=1), encoding="utf-8")
    compile_(ws)
    assert (ws.wiki / catalogs[-1]).read_bytes() != b"scribbled over\n"
    assert not (ws.wiki / "sources" / "index-99.md").exists()
    assert_same(ws, tmp_path / "full", "a person touching the catalogs")
    # a compile that changes no entry (a file wikimem skips) leaves every catalog file alone
    stats = {c: (ws.wiki / c).stat().st_mtime_ns for c in catalogs}
    (ws.raw / "table.xyz").write_text("not a document\n", encoding="utf-8")
    report = compile_(ws)
    assert [p for p, _ in report.skipped] == ["raw/table.xyz"]
    assert {c: (ws.wiki / c).stat().st_mtime_ns for c in catalogs} == stats
    assert_same(ws, tmp_path / "full", "a skipped file")


@pytest.mark.corpus
def test_incremental_equals_full_on_the_real_corpus(ws: Workspace, tmp_path: Path) -> None:
    shutil.rmtree(ws.raw)
    shutil.copytree(corpus("topics"), ws.raw / "topics")
    shutil.copytree(corpus("versions"), ws.raw / "versions")
    compile_(ws)
    rng = random.Random(3)
    texts = sorted(p for p in ws.raw.rglob("*") if p.is_file() and p.suffix in (".md", ".txt", ".rst"))
    edited, gone, moved = texts[:4], texts[5], texts[7]
    for p in edited:
        p.write_text(p.read_text(encoding="utf-8") + f"\n\nA note on the **borrow checker** and `HashMap` ({rng.random():.3f}).\n",
                     encoding="utf-8")
    gone.unlink()
    moved.rename(moved.with_name("moved-" + moved.name))
    report = compile_(ws)
    assert len(report.compiled) == 5 and len(report.removed_sources) == 1 and len(report.renamed) == 1  # a rename counts as compiled
    assert_same(ws, tmp_path / "full", "edits, a deletion and a rename of real documents")


def test_one_thing_spelled_with_a_hyphen_a_space_or_an_underscore_is_one_concept() -> None:
    """Sphinx's docs write `sphinx-quickstart` in code and "sphinx quickstart" in prose: one
    page, not sphinx-quickstart.md beside sphinx-quickstart-2.md. Also across collections."""
    analyses = {}
    for n in range(8):
        for folder, name, key, surface in (("docs", "man", "sphinx-quickstart", "`sphinx-quickstart`"),
                                           ("docs", "guide", "sphinx quickstart", "sphinx quickstart"),
                                           ("notes", "api", "sphinx_quickstart", "`sphinx_quickstart`")):
            analyses[f"raw/{folder}/{name}-{n}.md"] = {
                "terms": {key: 3, f"topic {n}": 1}, "signals": {key: [4, surface]}}
    concepts = choose_concepts(MemoryStats(analyses))
    quickstart = [c for c in concepts.values() if "quickstart" in c.slug]
    assert len(quickstart) == 1, [(c.key, c.slug) for c in quickstart]
    assert set(quickstart[0].keys) == {"sphinx-quickstart", "sphinx quickstart", "sphinx_quickstart"}
    assert quickstart[0].slug == "sphinx-quickstart" and quickstart[0].collections == ("docs", "notes")


def test_a_phrase_in_its_short_form_is_the_same_concept() -> None:
    """Typer's docs say "env var" and "environment variable": one page, not env-var.md beside
    environment-variable.md."""
    analyses = {}
    for n in range(8):
        for name, key in (("guide", "environment variable"), ("tips", "env var")):
            analyses[f"raw/docs/{name}-{n}.md"] = {
                "terms": {key: 3, f"topic {n}": 1}, "signals": {key: [3, key]}}
    concepts = choose_concepts(MemoryStats(analyses))
    found = [c for c in concepts.values() if {"env var", "environment variable"} & set(c.keys)]
    assert len(found) == 1 and set(found[0].keys) == {"env var", "environment variable"}
    assert found[0].slug == "environment-variable"
    # a logging library's glossary: "Event Dictionary ... often abbreviated as event dict"
    analyses = {}
    for n in range(8):
        for name, key in (("glossary", "event dictionary"), ("processors", "event dict")):
            analyses[f"raw/docs/{name}-{n}.md"] = {
                "terms": {key: 3, f"topic {n}": 1}, "signals": {key: [3, key]}}
    concepts = choose_concepts(MemoryStats(analyses))
    found = [c for c in concepts.values() if {"event dict", "event dictionary"} & set(c.keys)]
    assert len(found) == 1 and found[0].slug == "event-dictionary", [(c.key, c.slug) for c in found]


def test_files_at_the_top_of_raw_join_the_one_collection_beside_them(ws: Workspace, tmp_path: Path) -> None:
    """A package's docs/ and, directly in raw/, its README and changelog are one collection
    (raw_tree.collection_in): a name said once in the changelog and once in a guide is said by
    two sources of it. A second folder that becomes a collection leaves the top files in none,
    and the pages are those of a full compile both ways."""
    (ws.raw / "docs").mkdir()
    for i in range(6):
        (ws.raw / "docs" / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    for i, name in ((6, "README.md"), (7, "CHANGES.md")):
        (ws.raw / name).write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "top files beside one collection")
    state = State(ws.state_db)
    try:
        keys = {k.split("\x1f", 1)[0] for (k,) in state.db.execute("SELECT key FROM offline_terms")}
    finally:
        state.close()
    assert keys == {"docs"}, keys  # nothing counted apart, in a collection of two
    (ws.raw / "guide").mkdir()
    for i in range(8, 13):
        (ws.raw / "guide" / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full2", "a second collection beside them")


def notes_beside_a_new_folder(ws: Workspace, count: int, per_folder: int) -> None:
    """`count` notes in folders of `per_folder` (collections), and raw/fresh with one note fewer
    than a collection needs (raw_tree.MIN_COLLECTION): the next note there makes it one."""
    for i in range(count):
        (ws.raw / f"n{i // per_folder}").mkdir(exist_ok=True)
        (ws.raw / f"n{i // per_folder}" / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    (ws.raw / "fresh").mkdir()
    for i in range(count, count + MIN_COLLECTION - 1):
        (ws.raw / "fresh" / f"note-{i}.md").write_text(note(random.Random(i), i), encoding="utf-8")


def test_a_folder_that_becomes_a_collection_counts_only_its_own_sources_again(ws: Workspace, tmp_path: Path) -> None:
    """The fifth source in a new folder makes it a collection (raw_tree.MIN_COLLECTION): its
    sources move from the shared collection to their own, and only they are counted again.
    Before, every source was counted again and every page rendered (seconds at 187 sources);
    the pages are still those of a full compile, both ways across the threshold."""
    notes_beside_a_new_folder(ws, 30, 10)
    compile_(ws)

    def ids() -> dict[str, int]:
        state = State(ws.state_db)
        try:
            return dict(state.db.execute("SELECT path, id FROM offline_docs"))
        finally:
            state.close()

    kept = ids()
    (ws.raw / "fresh" / "note-34.md").write_text(note(random.Random(34), 34), encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "a folder became a collection")
    now = ids()
    assert {p: i for p, i in now.items() if "/fresh/" not in p} == {p: i for p, i in kept.items() if "/fresh/" not in p}
    (ws.raw / "fresh" / "note-31.md").unlink()
    compile_(ws)
    assert_same(ws, tmp_path / "full", "a folder stopped being a collection")
    assert {p: i for p, i in ids().items() if "/fresh/" not in p} == {p: i for p, i in now.items() if "/fresh/" not in p}


def store_tables(ws: Workspace) -> tuple[dict[str, Any], dict[tuple[str, str], Any], dict[tuple[str, str], int]]:
    """The offline backend's running totals by key and by source path (their ids depend on the order
    sources were counted in): the terms' counts, the postings and the spellings."""
    state = State(ws.state_db)
    try:
        terms = {r[0]: tuple(r[1:]) for r in state.db.execute(
            "SELECT key, squashed, df, strength, signal_docs, strong_docs, weight FROM offline_terms")}
        postings = {(r[0], r[1]): (r[2], r[3]) for r in state.db.execute(
            "SELECT t.key, d.path, p.n, p.level FROM offline_postings p JOIN offline_terms t ON t.id = p.term"
            " JOIN offline_docs d ON d.id = p.doc")}
        surfaces = {(r[0], r[1]): r[2] for r in state.db.execute(
            "SELECT t.key, s.surface, s.level FROM offline_surfaces s JOIN offline_terms t ON t.id = s.term")}
    finally:
        state.close()
    return terms, postings, surfaces


def test_the_running_totals_after_edits_equal_those_counted_from_nothing(ws: Workspace, tmp_path: Path) -> None:
    """The totals are a sum: after sources are edited, deleted, added, and moved into a folder
    that becomes a collection of its own (counted out of the collection they were in), every
    term's counts, every posting and every spelling equal those of a compile from nothing."""
    notes_beside_a_new_folder(ws, 36, 12)
    compile_(ws)
    files = sorted(ws.raw.rglob("*.md"))
    files[2].write_text(note(random.Random(2), 2, edit=3), encoding="utf-8")
    files[15].unlink()
    files[20].write_text("# Nothing much\n\nA short note about the weather today.\n", encoding="utf-8")
    (ws.raw / "fresh" / "note-40.md").write_text(note(random.Random(40), 40), encoding="utf-8")  # a collection now
    compile_(ws)
    other = Workspace.at(tmp_path / "full")
    fresh_compile(ws, other.root)
    ours, theirs = store_tables(ws), store_tables(other)
    assert len(ours[0]) > 500 and len(ours[1]) > 2000 and ours[2]
    assert any(k.startswith("fresh\x1f") for k in ours[0])
    for got, want in zip(ours, theirs, strict=True):
        assert got == want
    # ... and those a count of the analyses in memory gives
    state = State(ws.state_db)
    try:
        memory = MemoryStats(counted_analyses(state))
    finally:
        state.close()
    counted = {f"{c}\x1f{k}": (memory.df[c][k], memory.strength[c][k], memory.signal_docs[c][k], memory.strong_docs[c][k])
               for c in memory.collections() for k in memory.df[c]}
    assert {k: row[1:5] for k, row in ours[0].items()} == counted


def test_an_edit_chooses_again_only_its_own_collections_concepts(ws: Workspace, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each collection's concepts are a function of its own counts: an edit in one collection
    chooses that one's again and takes the others' as they were chosen (kept in state.db), and
    the pages are still those of a full compile. A concept page whose members' shown content did
    not move is not rendered, and the analyses of its members are not read."""
    for i in range(60):
        (ws.raw / f"n{i // 20}").mkdir(exist_ok=True)
        (ws.raw / f"n{i // 20}" / f"note-{i:03d}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    compile_(ws)
    from wikimem.backends import offline

    chosen_in: list[str] = []
    real_choose_in = offline.choose_in

    def choose_in(stats, collection, n):  # type: ignore[no-untyped-def]
        chosen_in.append(collection)
        return real_choose_in(stats, collection, n)

    monkeypatch.setattr(offline, "choose_in", choose_in)
    edited = ws.raw / "n1" / "note-025.md"
    edited.write_text(note(random.Random(25), 25, edit=2), encoding="utf-8")
    compile_(ws)
    assert chosen_in == ["n1"]
    assert_same(ws, tmp_path / "full", "an edit in one collection")

    # the analyses read are those of the edited source and of the members the concept pages
    # rendered read sentences from, not those of every member of every concept it names
    rendered: dict[str, set[str]] = {}
    read: list[str] = []
    real_page, real_analysis = offline.concept_page, offline.OfflineBackend._analysis

    def concept_page(concept, members, *args, **kwargs):  # type: ignore[no-untyped-def]
        rendered[concept.key] = {m.path for m in offline.read_by_concept_page(members)}
        return real_page(concept, members, *args, **kwargs)

    def analysis(self, batch, path, sha):  # type: ignore[no-untyped-def]
        read.append(path)
        return real_analysis(self, batch, path, sha)

    monkeypatch.setattr(offline, "concept_page", concept_page)
    monkeypatch.setattr(offline.OfflineBackend, "_analysis", analysis)
    chosen_in.clear()
    quiet = ws.raw / "n2" / "note-059.md"
    quiet.write_text(quiet.read_text(encoding="utf-8") + "\nA line about the weather.\n", encoding="utf-8")
    compile_(ws)
    assert chosen_in == ["n2"]
    assert "raw/n2/note-059.md" in read
    assert set(read) <= {"raw/n2/note-059.md", *(p for members in rendered.values() for p in members)}
    assert_same(ws, tmp_path / "full", "an edit of a source its concept pages read")

    # the collections' choice kept in state.db is dropped by --rebuild and by a damaged record
    state = State(ws.state_db)
    try:
        state.set_meta(offline.CHOSEN, {"version": "another", "in": {}})
    finally:
        state.close()
    chosen_in.clear()
    quiet.write_text(quiet.read_text(encoding="utf-8") + "\nAnother line.\n", encoding="utf-8")
    compile_(ws)
    assert sorted(chosen_in) == ["n0", "n1", "n2"]


def concept_pages_rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The concept pages the offline backend renders from their members' sentences from now on,
    in turn (those made otherwise, or left as they are, are not in it)."""
    from wikimem.backends import offline

    rendered: list[str] = []
    real_page = offline.concept_page

    def concept_page(concept, *args, **kwargs):  # type: ignore[no-untyped-def]
        rendered.append(concept.page)
        return real_page(concept, *args, **kwargs)

    monkeypatch.setattr(offline, "concept_page", concept_page)
    return rendered


def test_a_page_whose_related_concepts_alone_moved_is_made_from_the_one_kept(
        ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A concept that comes (or goes) moves the Related section of the concept pages whose main
    sources link it, and nothing else on them: those pages are made from the page kept in
    state.db with the new section, not rendered from their members' sentences again, and are
    what a full compile writes. Without a kept page (a state.db from before), it is rendered."""
    (ws.raw / "alpha.md").write_text("# The alpha engine\n\nThe alpha engine turns the shaft. The alpha engine is "
                                     "loud.\n\n## Widget\n\nThe widget spins inside the alpha engine.\n", encoding="utf-8")
    (ws.raw / "beta.md").write_text("# Tuning the alpha engine\n\nThe alpha engine needs oil. Tune the alpha engine "
                                    "weekly.\n", encoding="utf-8")
    compile_(ws)
    rendered = concept_pages_rendered(monkeypatch)
    page = ws.wiki / "concepts" / "alpha-engine.md"
    before = page.read_text(encoding="utf-8")
    assert "## Related" not in before
    # a third source says "widget" (named under a heading of alpha.md): it becomes a concept
    gamma = ws.raw / "gamma.md"
    gamma.write_text("# Spare parts\n\nA widget wears out. Order a widget early.\n", encoding="utf-8")
    report = compile_(ws)
    assert "concepts/widget.md" in report.created and "concepts/alpha-engine.md" in report.updated
    assert rendered == ["concepts/widget.md"]
    assert "## Related\n\n[Widget](widget.md)" in page.read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "a concept came")

    # the concept goes again, and no page is kept (as in a state.db an older wikimem wrote)
    state = State(ws.state_db)
    try:
        state.db.execute("DELETE FROM offline_kept")
    finally:
        state.close()
    rendered.clear()
    gamma.unlink()
    report = compile_(ws)
    assert "concepts/alpha-engine.md" in report.updated and rendered == ["concepts/alpha-engine.md"]
    assert "## Related" not in page.read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "a concept went")


def test_an_edit_where_a_concept_page_does_not_look_leaves_it_unrendered(
        ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source a concept page quotes is edited: the page is rendered again only when what it
    reads of the source moved (the sentences that may name the concept, its key facts,
    definition, default and entry). A line added elsewhere leaves it unrendered, a change to a
    sentence it quotes renders it; either way the pages are those of a full compile."""
    alpha = ws.raw / "alpha.md"
    alpha.write_text("# The alpha engine\n\nThe alpha engine turns the shaft. The alpha engine is loud.\n", encoding="utf-8")
    (ws.raw / "beta.md").write_text("# Tuning the alpha engine\n\nThe alpha engine needs oil. Tune the alpha engine "
                                    "weekly.\n", encoding="utf-8")
    compile_(ws)
    rendered = concept_pages_rendered(monkeypatch)
    alpha.write_text(alpha.read_text(encoding="utf-8") + "\nIt rained all day in the valley.\n", encoding="utf-8")
    report = compile_(ws)
    assert report.updated == ["sources/alpha.md"] and rendered == []
    assert_same(ws, tmp_path / "full", "a line added where the concept page does not look")

    rendered.clear()  # the full compile above rendered it
    alpha.write_text(alpha.read_text(encoding="utf-8").replace("is loud", "is very loud"), encoding="utf-8")
    report = compile_(ws)
    assert rendered == ["concepts/alpha-engine.md"] and "concepts/alpha-engine.md" in report.updated
    assert "very loud" in (ws.wiki / "concepts" / "alpha-engine.md").read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "a sentence the concept page quotes changed")


def _book(ws: Workspace, chapters: int = 30) -> list[str]:
    """A book: an mdBook SUMMARY.md that lists its chapters, each a note. More than
    PARALLEL_THRESHOLD sources, so a compile from nothing analyses them in worker processes."""
    (ws.raw / "book").mkdir()
    names = [f"chapter-{i:02d}.md" for i in range(chapters)]
    for i, name in enumerate(names):
        (ws.raw / "book" / name).write_text(note(random.Random(i), i), encoding="utf-8")
    summary = ["# Summary", ""] + [f"- [Chapter {i}]({name})" for i, name in enumerate(names)]
    (ws.raw / "book" / "SUMMARY.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    return names


def test_a_hub_read_by_a_worker_process_lists_again_what_changed(ws: Workspace, tmp_path: Path) -> None:
    """A compile from nothing reads its sources in worker processes, which handed back what
    counting needs but not the table of contents: the hubs were never recorded (state.db,
    offline.hubs), so an incremental compile kept listing a deleted chapter, and an edited
    chapter's old lead, on the hub's page."""
    names = _book(ws)
    compile_(ws)
    book = ws.raw / "book"
    (book / names[3]).write_text("# Chapter three\n\nAn entirely new lead for the third chapter.\n", encoding="utf-8")
    compile_(ws)
    assert "An entirely new lead for the third chapter." in (ws.wiki / "sources" / "book-summary.md").read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "an edit of a chapter a hub lists")
    (book / names[5]).unlink()
    compile_(ws)
    assert names[5].removesuffix(".md") not in (ws.wiki / "sources" / "book-summary.md").read_text(encoding="utf-8")
    assert_same(ws, tmp_path / "full", "a deletion of a chapter a hub lists")


def test_a_state_db_that_missed_hubs_reads_them_from_the_cached_analyses(ws: Workspace, tmp_path: Path) -> None:
    """A state.db written before every hub was recorded (offline.hubs, which missed those read
    in worker processes) has them read once from the cached analyses."""
    names = _book(ws)
    compile_(ws)
    state = State(ws.state_db)
    state.delete_meta("offline.hub_targets")
    state.set_meta("offline.hubs", {})
    state.close()
    (ws.raw / "book" / names[7]).unlink()
    compile_(ws)
    assert_same(ws, tmp_path / "full", "a deletion, with the hubs missing from state.db")
    state = State(ws.state_db)
    try:
        assert state.get_meta("offline.hubs") is None
        assert list(state.get_meta("offline.hub_targets")) == ["raw/book/SUMMARY.md"]
    finally:
        state.close()


def test_page_names_follow_raw_as_a_full_compile_names_them(ws: Workspace, tmp_path: Path) -> None:
    """Two files whose names make one page name: the first in path order has it, the other a
    longer one (compiler.assign_page). When the first goes, the other's page takes the short
    name, as a compile from nothing names it; when a file that comes first arrives, it takes
    the name and the other's page moves. Links to the moved page follow it."""
    for i in range(6):
        (ws.raw / f"note-{i}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    (ws.raw / "CHANGES.md").write_text("# Changes\n\nRelease notes: the gearbox turns both ways.\n", encoding="utf-8")
    (ws.raw / "changes.md").write_text(note(random.Random(40), 40), encoding="utf-8")
    (ws.raw / "SUMMARY.md").write_text("# Summary\n\n- [Changes](changes.md)\n- [Note](note-1.md)\n", encoding="utf-8")
    compile_(ws)
    assert (ws.wiki / "sources" / "changes.md").is_file() and (ws.wiki / "sources" / "changes-md.md").is_file()
    (ws.raw / "CHANGES.md").unlink()
    report = compile_(ws)
    assert not (ws.wiki / "sources" / "changes-md.md").exists()
    assert "raw/changes.md" in (ws.wiki / "sources" / "changes.md").read_text(encoding="utf-8")
    assert "raw/changes.md" in report.compiled
    assert_same(ws, tmp_path / "full", "the file that held the short name deleted")
    (ws.raw / "CHANGES.md").write_text("# Changes\n\nRelease notes, back again.\n", encoding="utf-8")
    compile_(ws)
    assert_same(ws, tmp_path / "full", "a file that comes first in path order added")
    assert compile_(ws).noop


def test_a_page_name_held_by_a_persons_page_is_not_taken(ws: Workspace) -> None:
    """The file that held a name goes, but a person edited its page (kept): the other source
    keeps its longer name rather than write over it."""
    for i in range(4):
        (ws.raw / f"note-{i}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    (ws.raw / "CHANGES.md").write_text("# Changes\n\nRelease notes: the gearbox turns both ways.\n", encoding="utf-8")
    (ws.raw / "changes.md").write_text(note(random.Random(40), 40), encoding="utf-8")
    compile_(ws)
    short = ws.wiki / "sources" / "changes.md"
    short.write_text(short.read_text(encoding="utf-8") + "\nA person's own note.\n", encoding="utf-8")
    (ws.raw / "CHANGES.md").unlink()
    compile_(ws)
    assert "A person's own note." in short.read_text(encoding="utf-8")
    assert "raw/changes.md" in (ws.wiki / "sources" / "changes-md.md").read_text(encoding="utf-8")
    assert compile_(ws).noop


def test_a_folder_emptied_of_its_pages_goes_with_them(ws: Workspace, tmp_path: Path) -> None:
    """A long document's part pages (sources/<page stem>/) go when it is renamed or deleted:
    their folder goes with them, as a compile from nothing has none."""
    from test_source_parts import reference

    (ws.raw / "reference.md").write_text(reference(), encoding="utf-8")
    (ws.raw / "note.md").write_text(note(random.Random(1), 1), encoding="utf-8")
    compile_(ws)
    assert (ws.wiki / "sources" / "reference").is_dir()
    (ws.raw / "reference.md").rename(ws.raw / "settings.md")
    compile_(ws)
    assert not (ws.wiki / "sources" / "reference").exists() and (ws.wiki / "sources" / "settings").is_dir()
    (ws.raw / "settings.md").unlink()
    compile_(ws)
    assert not (ws.wiki / "sources" / "settings").exists()
    assert (ws.wiki / "sources").is_dir()  # a folder of the layout stays, empty or not
    assert_same(ws, tmp_path / "full", "a long document renamed and deleted")


def test_a_copy_of_a_document_titled_as_its_file_is_named_so_however_it_came(ws: Workspace, tmp_path: Path) -> None:
    """`download-handlers.md`, titled "Download handlers", and a copy of it added later: the copy
    shares the first's cached analysis, and a document named for its file is named for its own
    (identical READMEs). The title equals the one its file name gives, so the copy was taken for
    one that names none: "Added 2" in concept pages' source lists when it came by an edit,
    "Download handlers" from nothing. A title the document gives is its own, whatever its file."""
    for i in range(6):
        (ws.raw / f"note-{i}.md").write_text(note(random.Random(i), i), encoding="utf-8")
    text = "# Download handlers\n\nDownload handlers fetch the gearbox pages, and each handler turns both ways.\n"
    (ws.raw / "download-handlers.md").write_text(text, encoding="utf-8")
    (ws.raw / "untitled.md").write_text("The gearbox notes, without a heading.\n", encoding="utf-8")
    compile_(ws)
    (ws.raw / "added-2.md").write_text(text, encoding="utf-8")
    (ws.raw / "untitled-copy.md").write_text("The gearbox notes, without a heading.\n", encoding="utf-8")
    compile_(ws)
    state = State(ws.state_db)
    try:
        titles = dict(state.db.execute("SELECT path, title FROM offline_docs").fetchall())
    finally:
        state.close()
    assert titles["raw/added-2.md"] == "Download handlers", titles
    assert titles["raw/untitled-copy.md"] == "Untitled copy", titles  # one that names none: its own file's name
    assert_same(ws, tmp_path / "full", "a copy of a document added")

"""The offline backend: deterministic, no network. Same inputs, byte-identical pages.

It analyses each changed source once (cached by content hash), chooses concepts per
collection from running totals (offline_concepts.py), and renders only the pages a change
touches (offline_pages.py): the changed sources' pages, the concept pages whose sources or
whose main source's links moved, and source pages whose concept links moved. The counts
concept selection needs are running totals in state.db (offline_store.py), so a compile
reads the sources that changed, not every source.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import timelines
from ..analysis import (
    ABOUT,
    ANALYSIS_VERSION,
    CODE,
    DEFINED,
    NAMED_THINGS,
    Sentence,
    analyze,
    phrase_keys,
    tokens,
)
from ..config import Settings
from ..facts import FORMAT as FACTS_FORMAT
from ..lexicon import read_word_list
from ..patterns import compile_all as compile_patterns
from ..raw_tree import collection_in
from ..raw_tree import collections as collections_of
from ..sources import (
    SkipSource,
    load_source,
    outline,
    ready_readers,
    source_suffix,
    title_from_name,
    xref,
)
from ..state import encode_analysis
from . import offline_hubs
from .base import Batch, BatchResult, PageEdit, SourceOutcome
from .beside import shared
from .offline_concepts import (
    Concept,
    MemoryStats,
    TermStats,
    choose_concepts,
    choose_in,
    relevance,
    title_of,
)
from .offline_pages import (
    MAIN_MEMBERS,
    QUOTED_MEMBERS,
    SHOWN_MEMBERS,
    KeptPage,
    Member,
    Sentences,
    concept_page,
    is_entry_for,
    read_by_concept_page,
    read_digest,
    recent,
    shows,
    source_pages,
)
from .offline_store import STORE_FORMAT, STRONG, Doc, Store, StoredConcept, scoped
from .offline_xrefs import Resolver, XrefIndex, document_named

RENDER_VERSION = 55  # bump when page rendering changes: every page is rendered again
MAX_CONCEPT_LINKS = 12  # per source page
RELATED = 8  # per concept page
PARALLEL_THRESHOLD = 24  # uncached sources before analysis uses worker processes
# state.db: the targets each hub's table of contents names, of every source (offline_hubs.moved)
HUBS_KEY = "offline.hub_targets"
OFFER_EVERY = 16  # pages rendered between two hand-overs to the compiler (Listener.rendered)
CHOSEN = "offline.chosen"  # state.db's meta key of each collection's own concepts (_Compile._choose_in)

# a concept page to render: its key, the concept, its ranked members, its related concepts, its
# timelines (title, page) and how many sources it has
_ConceptJob = tuple[str, Concept, list[Member], list[Concept], list[tuple[str, str]], int, tuple[str, ...]]
# the same, its members not ranked yet (its counted sources, as _Compile.members holds them)
_Unranked = tuple[str, Concept, list[Doc], list[Concept], list[tuple[str, str]], int, tuple[str, ...]]

__all__ = ["Concept", "MemoryStats", "OfflineBackend", "TermStats", "choose_concepts", "select_concepts", "title_of"]


def select_concepts(analyses: dict[str, dict[str, Any]]) -> dict[str, Concept]:
    """Concepts chosen from analyses in memory (the reference; compiles read state.db)."""
    return choose_concepts(MemoryStats(analyses))


def link_rank(n_sources: int, concept_sources: int) -> float:
    """How rare a concept is, for ranking the links of a source page: log(1 + n/df) with n
    rounded up and df rounded down to powers of two. The rounding keeps a source page
    unchanged when another source joins one of its concepts, unless a count crosses a power
    of two; so a compile re-ranks only the sources of the concepts whose class moved, and an
    incremental compile still gives exactly the pages a full compile gives."""
    return math.log(1 + _ceil2(n_sources) / _floor2(concept_sources))


def _ceil2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _floor2(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _load_and_analyse(job: tuple[str, str, int]) -> tuple[str, Any]:
    """Worker process: ("ok", (what counting needs, the outline search indexes, the analysis
    encoded for state.db)) | ("skipped", reason) | ("failed", error). Encoding the analysis
    here, beside the other workers, rather than in the compile, which waits for them, spares
    the compile a decoding (of pickle) and an encoding (to JSON) of every analysis."""

    file, path, max_bytes = job
    try:
        doc = load_source(Path(file), path, max_bytes=max_bytes, xrefs=True)
        data = analyze(doc).to_json()
        toc = outline(doc)
        counted = {"title": data["title"], "date": data.get("date"), "anchor": data["anchor"],
                   "terms": data["terms"], "signals": data["signals"], "labels": data["labels"],
                   "xrefs": data["xrefs"], "named": data["named"], "title_from": data.get("title_from"),
                   "toc": [row[:1] for row in data.get("toc") or [] if row]}  # the targets: which hubs name what
        return "ok", (counted, toc, encode_analysis(data, toc))
    except SkipSource as exc:
        return "skipped", str(exc)
    except Exception as exc:  # noqa: BLE001 - reported per source, never stops the run
        return "failed", f"{type(exc).__name__}: {exc}"


PAGE_TEMPLATES = ("source_page.md.j2", "source_part.md.j2", "concept_page.md.j2")


def _ready_pages() -> None:
    """Load what the pages need and the workers do not (Jinja, the page templates compiled,
    packaging's versions): for this process to do while the workers read the sources, rather
    than after them, when it renders every page alone on its core."""
    from packaging import version  # noqa: F401 - loaded, for lexicon.parse_version

    from .. import templating

    templating.warm(None, PAGE_TEMPLATES)


class OfflineBackend:
    name = "offline"
    needs: str | None = None

    def __init__(self, settings: Settings):
        self.settings = settings
        # the analysis cache key: a new analyser version never reuses old analyses, and the
        # compiler re-renders every page when the version it last compiled with differs
        self.cache_key = f"{self.name}:{ANALYSIS_VERSION}"
        # the store chooses the concepts; the facts' format is what the timeline pages are read from
        self.version = f"{self.cache_key}.{RENDER_VERSION}.{STORE_FORMAT}.{FACTS_FORMAT}"

    # the offline analysis, cached in state.db by content hash
    def _analysis(self, batch: Batch, path: str, sha: str) -> dict[str, Any]:
        cached = batch.state.get_analysis(sha, self.cache_key)
        if cached is not None:
            return own_title(path, cached)
        analysis = analyze(batch.load(path, xrefs=True)).to_json()
        batch.state.put_analysis(sha, self.cache_key, analysis)
        batch.state.put_facts(sha, analysis.get("claims") or {})  # read by timelines.py, whatever the backend
        return own_title(path, {k: v for k, v in analysis.items() if k != "sentences"})

    def _analyse_in_parallel(self, batch: Batch, todo: list[str], stack: ExitStack) -> Iterator[tuple[str, Any]] | None:
        """Load and analyse uncached sources on every core when there are many of them.

        A first `wikimem compile` of a large raw/ is CPU-bound; analysis of one source
        never depends on another, so worker processes split it. Small batches stay
        in-process (starting workers would cost more), and so does the daemon. Returns
        (path, result) pairs as they arrive, largest file first, or None to analyse in-process.
        """
        workers = min(4, os.cpu_count() or 1)
        if len(todo) < PARALLEL_THRESHOLD or workers < 2 or threading.active_count() > 1:
            # in a process with other threads (the daemon: watcher, scheduler) work stays
            # in-process: forking there is unsafe, and a forkserver would outlive the batch
            return None

        # loaded here: a compile of a few sources (a drop) has no use for them
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        read_word_list()  # once, before the fork: the workers share it rather than each reading it
        compile_patterns()  # the analysis's patterns, which every worker asks: compiled once, shared
        ready_readers([source_suffix(p) for p in todo])  # and so the libraries that read the sources
        context = multiprocessing.get_context("fork")  # single-threaded here, so fork is safe
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers, mp_context=context))
        # the largest files first, one at a time while there are few: a large file taken late
        # keeps one core busy alone at the end (the longest-first rule of scheduling)
        size = {p: _size(batch.files[p]) for p in todo}
        order = sorted(todo, key=lambda p: (-size[p], p))
        jobs = [(str(batch.files[p]), p, batch.max_bytes) for p in order]
        return zip(order, pool.map(_load_and_analyse, jobs, chunksize=1 if len(jobs) < 2000 else 4), strict=True)

    @staticmethod
    def _ranked(concept: Concept, docs: list[Doc], weights: dict[int, tuple[int, int]],
                analysis_of: Any = None) -> list[Member]:
        """A concept's members, most relevant first. Ranked from the store's counts; the members
        its page reads sentences from (the most relevant, and the first that define it) are
        made from their analyses, the rest are listed by title only. Without `analysis_of`,
        every member is made from the counts alone: in the same order, with the same level and
        mentions (the store counts them as the analysis does), but no sentences to read."""
        order = sorted(docs, key=lambda d: (-relevance(weights[d.id][1], weights[d.id][0]), d.path))
        # a page shows its first members and the first that define it (concept_page): members
        # are made of those alone, the rest counted (a concept of 7,519 sources made 7,519)
        defining = [d for d in order if weights[d.id][1] >= DEFINED][:MAIN_MEMBERS]
        newest = recent(order)  # for its changes over time
        shown = {d.path for d in (*order[:SHOWN_MEMBERS], *defining, *newest)}
        full = {d.path for d in (*order[:QUOTED_MEMBERS], *defining, *newest)}
        return [_member(d, analysis_of(d), concept) if analysis_of is not None and d.path in full
                else _light_member(d, *weights[d.id])
                for d in order if d.path in shown]

    def compile(self, batch: Batch) -> BatchResult:
        """Count the sources that changed in and out of the running totals in state.db, choose
        concepts from the totals, and render only the pages whose content moved.

        Every step is a function of the totals and of per-source analyses, so the pages equal
        those of a full compile of the same raw/ (tests/test_incremental.py checks this after
        edits, additions, deletions and renames). The steps are _Compile's, in this order."""
        run = _Compile(self, batch)
        run.sort_sources()
        run.read_changed()
        run.count()
        run.included_titles()
        run.choose_concepts()
        run.sources_to_rank()
        run.hubs_to_list_again()
        run.cross_references()
        run.timelines()
        run.render_source_pages()
        run.report_sources()
        run.concepts_to_check_again()
        run.concept_jobs()
        run.render_concept_pages()
        return run.finish()


class _Compile:
    """One offline compile of a batch, in named steps (OfflineBackend.compile runs them in order):
    what a step works out and a later step uses is kept here."""

    def __init__(self, backend: OfflineBackend, batch: Batch):
        self.backend = backend
        self.batch = batch
        self.cache_key = backend.cache_key
        self.state = state = batch.state
        self.store = Store(state.db)
        self.index = XrefIndex(state.db)
        self.outcomes: list[SourceOutcome] = []
        self.touched = set(batch.changed) | set(batch.renamed)
        self.full = batch.rebuild or batch.rerender  # render every page
        self.cleared = False  # every source is counted again (and read again for what it holds)
        self.meta = state.get_meta("offline.store") or {}
        if batch.rebuild:
            state.clear_analyses(self.cache_key)  # --rebuild means: read every source again
        self.cached = state.analysed(self.cache_key)
        counted = self.store.docs()
        self.folders = sorted({c for c in collections_of(batch.sources).values() if c})
        self.collection = collection_in(self.folders)
        # a folder that became (or stopped being) a collection: its sources' counts are kept
        # under their collection, so they leave the one they were counted in and come into the
        # new one, as an edit of each would (counting everything again, and rendering every
        # page, made the fifth file dropped into a new folder cost seconds)
        self.counted_in = collection_in(self.meta.get("collections", []))
        self.regrouped = {p for p in counted if self.counted_in(p) != self.collection(p)}
        if (batch.rebuild or self.meta.get("key") != self.cache_key or self.meta.get("store") != STORE_FORMAT
                or any(d.sha256 not in self.cached for d in counted.values())):
            # counts made by another analyser, or sources whose analysis is gone (so they cannot
            # be counted out): count everything again
            self.regrouped = set()
            self.store.clear()
            self.index.clear()
            counted = {}
            self.full = True
            self.cleared = True
        self.counted = counted
        # the labels and documents whose resolution may move: those of every source leaving or
        # coming (offline_xrefs); the sources that refer to them are worked out again below
        self.dirty: set[str] = set()
        self.tocs: dict[str, list[str]] = {}  # the documents each source that came names in its table of contents
        self.analyses: dict[str, dict[str, Any]] = {}
        self.sentences: dict[str, Sentences] = {}  # by content hash: of the sources concept pages read
        # how often and how strongly each member names its concept (from the store's postings:
        # ranking thousands of members must not read thousands of analyses)
        self.weight_of: dict[str, dict[int, tuple[int, int]]] = {}
        self.edits: list[PageEdit] = []
        self.offered = 0  # edits the listener was told of
        self.includes: dict[str, str] = {}  # of the sources that came: the file each includes before its title
        # each collection's own concepts as last chosen, and as chosen now (_choose_in)
        kept = None if self.full else state.get_meta(CHOSEN)
        self.chosen_before: dict[str, Any] = \
            kept["in"] if isinstance(kept, dict) and kept.get("version") == backend.version else {}
        self.chosen_now: dict[str, Any] = {}

    def analysis_of(self, doc: Doc) -> dict[str, Any]:
        if doc.path not in self.analyses:
            self.analyses[doc.path] = self.backend._analysis(self.batch, doc.path, doc.sha256)
        return self.analyses[doc.path]

    # --- which sources stay counted as they are, which leave, which come
    def sort_sources(self) -> None:
        batch = self.batch
        self.ok: dict[str, Doc] = {}  # every source compiled, after this compile
        self.coming: list[str] = []
        for path in sorted(batch.sources):
            ref = batch.sources[path]
            doc = self.counted.get(path)
            if (doc is not None and doc.sha256 == ref.sha256 and doc.page == ref.page and path not in self.touched
                    and path not in self.regrouped):
                self.ok[path] = doc
            else:
                self.coming.append(path)
        self.leaving = {path: doc for path, doc in sorted(self.counted.items()) if self.ok.get(path) is not doc}

    def read_changed(self) -> None:
        """The uncached sources that came, analysed in worker processes when there are many: take
        every result as it arrives and keep only what counting needs (the phrase keys as shared
        strings, with their counts; the signals), then count. Counting while the workers run
        competed with them for the CPU and the GIL (30% slower on a corpus of a few hundred
        sources); holding whole analyses took 600 MB at 10k sources."""
        batch, state = self.batch, self.state
        todo = [p for p in self.coming if p in batch.files and batch.sources[p].sha256 not in self.cached]
        self.from_workers: dict[str, tuple[str, Any]] = {}
        outlines: dict[str, dict[str, Any]] = {}
        with ExitStack() as stack:
            parallel = self.backend._analyse_in_parallel(batch, todo, stack)
            if parallel is not None:
                batch.listener.reading()  # this process waits for the workers: a moment for the compiler's own loading
                _ready_pages()  # and for the backend's
            for path, result in parallel or ():
                status, data = result
                if status == "ok":
                    data, outlines[path], encoded = data
                    state.put_encoded(batch.sources[path].sha256, self.cache_key, encoded)
                    data["terms"] = {sys.intern(t): n for t, n in data["terms"].items()}
                self.from_workers[path] = (status, data)
        batch.listener.read(outlines)  # the workers are gone: the compiler may work beside the pages

    # --- the running totals: the sources that left counted out, those that came counted in
    def _removals(self) -> Iterator[tuple[Doc, dict[str, Any]]]:
        for doc in self.leaving.values():
            self.dirty.update(self.index.forget(doc.path))
            data = self.state.get_analysis(doc.sha256, self.cache_key)
            assert data is not None  # checked above: every counted source's analysis is cached
            yield doc, data

    def _additions(self) -> Iterator[tuple[Doc, dict[str, Any]]]:
        batch = self.batch
        for path in self.coming:
            ref = batch.sources[path]
            if path in self.from_workers:
                status, data = self.from_workers.pop(path)
                if status != "ok":
                    self.outcomes.append(SourceOutcome(path, status, str(data)))
                    continue
            else:
                try:
                    data = self.backend._analysis(batch, path, ref.sha256)
                except SkipSource as exc:
                    self.outcomes.append(SourceOutcome(path, "skipped", str(exc)))
                    continue
                except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
                    self.outcomes.append(SourceOutcome(path, "failed", f"{type(exc).__name__}: {exc}"))
                    continue
            doc = Doc(0, path, ref.sha256, ref.page, data["title"], data.get("date"), data["anchor"], None)
            self.ok[path] = doc
            if data.get("title_from"):
                self.includes[path] = str(data["title_from"])
            self.tocs[path] = _toc_targets(data)
            self.dirty.update(self.index.record(path, data.get("labels") or [], data.get("xrefs") or []))
            yield doc, data

    def count(self) -> None:
        moved = self.store.update(self._removals(), self._additions(), self.collection, self.counted_in)
        self.moved_keys = {key.split("\x1f", 1)[1] for key in moved}
        self.added = {p for p in self.coming if p in self.ok}
        # the collections whose counts moved (those of every source counted in or out)
        self.recounted = {key.split("\x1f", 1)[0] for key in moved} | {self.collection(p) for p in self.added} \
            | {self.counted_in(p) for p in self.leaving}
        self.n = len(self.ok)
        self.collections = sorted({self.collection(p) for p in self.ok})

    # --- a document that includes another file before any title of its own shows that file's
    # title, as Sphinx does (sources/rst.py): looked up among the counted sources at every
    # compile, so an edit of the file included retitles what includes it
    def included_titles(self) -> None:
        state, ok = self.state, self.ok
        known: dict[str, str] = {} if self.cleared else dict(state.get_meta("offline.includes") or {})
        for path in [*self.leaving, *self.added]:
            known.pop(path, None)
        known.update(self.includes)
        shown: dict[str, str] = {}

        def title_of(path: str, depth: int = 0) -> str | None:
            """The title a source shows: the title of the file it includes first, if that file has
            one (it may include another), else its own; None for a title made of its file's name."""
            target = known.get(path)
            named = document_named(ok, path, target) if target and depth < 4 else None
            included = title_of(named, depth + 1) if named is not None and named != path else None
            return included or (None if ok[path].title == title_from_name(path) else ok[path].title)

        for path in sorted(known):
            if path in ok and (title := title_of(path)) is not None and title != ok[path].title:
                shown[path] = title
        for path, title in shown.items():
            self.ok[path] = replace(ok[path], title=title)
        before = {} if self.cleared else dict(state.get_meta("offline.include_titles") or {})
        self.retitled = shown
        self.retitle_moved = {p for p in set(shown) | set(before) if p in ok and shown.get(p) != before.get(p)}
        if known != (state.get_meta("offline.includes") or {}):
            state.set_meta("offline.includes", known)
        if shown != before:
            state.set_meta("offline.include_titles", shown)

    # --- concepts, from the totals, per collection
    def choose_concepts(self) -> None:
        ok, store = self.ok, self.store
        self.old = old = store.concepts()
        self.concepts = concepts = choose_concepts(_StoreStats(store, {p: self.collection(p) for p in ok}),
                                                   self._choose_in)
        if self.chosen_now != self.chosen_before:
            self.state.set_meta(CHOSEN, {"version": self.backend.version, "in": self.chosen_now})
        # a word one concept merged in and another is named for ("map" in "hash map", and "Map")
        # is the named one's
        self.by_key = {k: c for c in concepts.values() for k in c.keys} | {c.key: c for c in concepts.values()}
        self.redefined = {
            k for k, c in concepts.items()
            if k not in old or (old[k].keys, old[k].title, old[k].aliases, old[k].slug, old[k].collections)
            != (c.keys, c.title, c.aliases, c.slug, c.collections)
        }
        self.dropped = sorted(set(old) - set(concepts))
        self.existing = _pages_on_disk(self.batch.workspace.wiki)
        # the concepts whose sources (or what their page shows of one) may have moved: also those
        # with a word another concept came to be named for, or stopped being (see _members_of)
        named_anew = set(concepts) ^ set(old)
        self.check = {
            k for k, c in concepts.items()
            if self.full or k in self.redefined or not old[k].fingerprint or c.page not in self.existing
            or any(key in self.moved_keys or (key in named_anew and key != k) for key in c.keys)
        }
        self.by_id = {doc.id: doc for doc in ok.values()}
        self.members: dict[str, list[Doc]] = {}
        self.df = {k: old[k].df for k in concepts if k not in self.check}
        for k in sorted(self.check):
            self._gather(k)

    def _choose_in(self, stats: TermStats, collection: str, n: int) -> list[Concept]:
        """A collection's own concepts: those chosen last time while its counts have not moved
        (an edit in one collection leaves the others' choice as it was), else chosen again. What
        each collection chose is kept in state.db, under the version of the code that chose it."""
        before = self.chosen_before.get(collection)
        if before is not None and before["n"] == n and collection not in self.recounted:
            chosen = [Concept(key, title, list(aliases), slug, tuple(keys), tuple(colls))
                      for key, title, aliases, slug, keys, colls in before["concepts"]]
        else:
            chosen = choose_in(stats, collection, n)
        # as chosen, before choose_concepts merges them across collections
        self.chosen_now[collection] = {"n": n, "concepts": [[c.key, c.title, list(c.aliases), c.slug, list(c.keys),
                                                             list(c.collections)] for c in chosen]}
        return chosen

    def _members_of(self, c: Concept) -> list[Doc]:
        """The sources a concept gathers: those of the collections that chose it that mention
        it, and those of other collections that name it (a heading, a definition, code). A word
        its collections merged into it that another concept is named for ("map" into "hash map",
        and a page "Map") names that concept elsewhere: one page per thing."""
        store, by_id = self.store, self.by_id
        own = store.mentions([scoped(coll, k) for coll in c.collections for k in c.keys])
        others = [coll for coll in self.collections if coll not in c.collections]
        its = [k for k in c.keys if k == c.key or k not in self.concepts]
        named = {i: w for i, w in store.mentions([scoped(coll, k) for coll in others for k in its]).items()
                 if w[1] >= CODE}
        weights = self.weight_of[c.key] = {i: w for i, w in {**named, **own}.items() if i in by_id}
        return sorted((by_id[i] for i in weights), key=lambda d: d.path)

    def _gather(self, k: str) -> None:
        """A concept to check: its members and their number, counted again."""
        self.members[k] = self._members_of(self.concepts[k])
        self.df[k] = len(self.members[k])

    # --- the sources whose concept links may have moved: rank them again
    def sources_to_rank(self) -> None:
        ok, old, concepts, store, by_id = self.ok, self.old, self.concepts, self.store, self.by_id
        self.n_class = _ceil2(self.n)
        rank: set[str] = set(self.added)
        if self.full or self.meta.get("n_class") != self.n_class:
            rank = set(ok)
        else:
            for k in self.check:
                if k in self.redefined or k not in old or _floor2(self.df[k]) != _floor2(old[k].df):
                    rank.update(d.path for d in self.members[k])
                    if k in old and (old[k].keys, old[k].collections) != (concepts[k].keys, concepts[k].collections):
                        # the sources it gathered under its old definition may link it no more
                        rank.update(by_id[i].path for i in store.sources_of(
                            [scoped(coll, key) for coll in self.collections for key in old[k].keys]) if i in by_id)
            for k in self.dropped:
                rank.update(by_id[i].path for i in store.sources_of(
                    [scoped(coll, key) for coll in self.collections for key in old[k].keys]) if i in by_id)
            rank.update(p for p, d in ok.items() if d.concepts is None or d.page not in self.existing)
        # a part page gone from disk (sources/<page stem>/): its source's pages are rendered again
        self.lost = {owner for rel, owner in self.state.pages_of_kind("part").items()
                     if owner in ok and not (self.batch.workspace.wiki / rel).is_file()}
        rank.update(self.lost)
        rank.update(self.retitle_moved)
        self.rank = rank

    # --- hubs (offline_hubs): a source whose table of contents names a document that came,
    # went or changed lists it again
    def hubs_to_list_again(self) -> None:
        state = self.state
        recorded = state.get_meta(HUBS_KEY)
        stored = None if self.cleared else recorded
        if stored is None and not self.cleared:
            # a state.db that never recorded the hubs of every source (before offline.hub_targets,
            # the hubs a compile from nothing read in worker processes were left out): read
            # them once from the cached analyses
            state.delete_meta("offline.hubs")
            stored = {path: targets for path, doc in self.ok.items() if path not in self.tocs
                      if (targets := _toc_targets(self.backend._analysis(self.batch, path, doc.sha256)))}
        known_hubs: dict[str, list[str]] = dict(stored or {})
        for path in self.leaving:
            known_hubs.pop(path, None)
        for path, targets in self.tocs.items():
            if targets:
                known_hubs[path] = targets
            else:
                known_hubs.pop(path, None)
        self.hub_moved = {h for h in offline_hubs.moved(known_hubs, set(self.leaving) | self.added | self.retitle_moved)
                          if h in self.ok}
        self.rank.update(self.hub_moved)
        if known_hubs != recorded:
            state.set_meta(HUBS_KEY, known_hubs)

    # --- cross-references: the sources whose references resolve otherwise than their pages
    # show (a label they name moved, a document they name came or went): render them again
    def cross_references(self) -> None:
        ok = self.ok
        self.resolver = Resolver(self.index, ok, self.analysis_of)
        self.seen = self.index.seen()
        asking = set(ok) if self.full else (self.index.users(self.dirty) | self.added) & set(ok)
        self.digests: dict[str, str] = {}
        for path in sorted(asking):
            refs = self.analysis_of(ok[path]).get("xrefs") or []
            if refs:
                self.digests[path] = self.resolver.resolved(path, refs)[2]
        self.xref_moved = {p for p, d in self.digests.items() if self.seen.get(p) != d}
        self.rank.update(self.xref_moved)

    # --- timelines (facts that changed, wiki/facts/, written by the compiler): a source page
    # links those it states, a concept page those of its subject
    def timelines(self) -> None:
        ok, collection = self.ok, self.collection
        self.lines = timelines.current(self.batch.workspace, self.state,
                                       {p: (d.sha256, collection(p)) for p, d in ok.items()})
        self.stated = {p: tuple(f"{timelines.FOLDER}/{t.slug}" for t in ts)
                       for p, ts in timelines.links_by_source(self.lines).items()}
        self.by_page = {f"{timelines.FOLDER}/{t.slug}": t for t in self.lines}
        self.rank.update(p for p, d in ok.items() if _fact_links(d.concepts) != self.stated.get(p, ()))

    def offer(self, every: int = 1) -> None:
        """Tell the compiler of the pages rendered since the last offer (Listener.rendered),
        `every` pages at a time: it may work on them while the others are rendered."""
        if len(self.edits) - self.offered >= every:
            self.batch.listener.rendered(self.edits[self.offered:])
            self.offered = len(self.edits)

    # --- source pages: each ranked source's concept links, and its pages when they moved
    def render_source_pages(self) -> None:
        ok, concepts, state, stated = self.ok, self.concepts, self.state, self.stated
        self.links: dict[str, tuple[str, ...]] = {}
        self.new_links: list[tuple[int, tuple[str, ...]]] = []
        for path in sorted(self.rank):
            doc = ok[path]
            data = self.analysis_of(doc)
            if path in self.retitled:
                data = {**data, "title": doc.title}  # the title of the file it includes first
            counts: dict[str, int] = {}
            own = self.collection(path)
            for term, count in data["terms"].items():
                concept = self.by_key.get(term)
                # a source links the concepts it is a member of (see _members_of); a kind of thing
                # (Functions, Types) only from a source about it: every chapter uses functions
                if concept is not None and (own in concept.collections or _level(data, concept.keys) >= CODE) \
                        and (concept.key not in NAMED_THINGS or _level(data, concept.keys) >= ABOUT):
                    counts[concept.key] = counts.get(concept.key, 0) + count
            # what this source says most about, weighed against how common the concept is
            present = sorted(counts, key=lambda k: (
                -counts[k] * (1 + _level(data, concepts[k].keys)) * link_rank(self.n, self.df[k]), k))
            # stored with the concept keys: a change in either renders the page again
            self.links[path] = links = (*present[:MAX_CONCEPT_LINKS], *stated.get(path, ()))
            if links != doc.concepts:
                self.new_links.append((doc.id, links))
            if (self.full or path in self.added or links != doc.concepts or doc.page not in self.existing
                    or path in self.lost or path in self.hub_moved or path in self.xref_moved
                    or any(k in self.redefined for k in links)):
                sentences = [Sentence(*x) for x in state.get_sentences(doc.sha256, self.cache_key) or []]
                resolved, notes, digest = self.resolver.resolved(path, data.get("xrefs") or [])
                if data.get("xrefs"):
                    self.digests[path] = digest
                # the page, then its part pages when its outline is too long for it (the compiler
                # removes the parts a page no longer has)
                hub = offline_hubs.entries(path, data.get("toc") or (), ok,
                                           lambda target: str(self.analysis_of(ok[target]).get("gist") or ""))
                for page in source_pages(doc.page, path, doc.sha256, data, sentences,
                                         [concepts[k] for k in links if k in concepts],
                                         [(self.by_page[x].title, x) for x in stated.get(path, ())],
                                         shows(doc.page, resolved), notes, hub):
                    self.edits.append(PageEdit(page.path, page.dumps(), "source" if page.path == doc.page else "part",
                                               path))
                self.offer(every=OFFER_EVERY)
        self.offer()
        self.store.set_doc_concepts(self.new_links)
        for doc_id, linked in self.new_links:
            self.by_id[doc_id].concepts = linked

    def report_sources(self) -> None:
        """An outcome for every source whose state row may change; the compiler counts the
        others as unchanged (10k outcomes for 10k untouched sources cost more than the edit)."""
        for path in sorted(self.touched | set(self.links) | self.added):
            doc = self.ok.get(path)
            if doc is not None:
                self.outcomes.append(SourceOutcome(
                    path, "compiled" if path in self.touched else "unchanged", title=doc.title,
                    concepts=tuple(k for k in self.links.get(path, doc.concepts or ()) if k in self.concepts)))

    # --- the concept pages to check again beside those whose members moved
    def concepts_to_check_again(self) -> None:
        ok, concepts, check, state = self.ok, self.concepts, self.check, self.state
        # a concept page lists related concepts from its main sources' links: when those move,
        # the page is checked again
        relinked = {self.by_id[doc_id].path for doc_id, _ in self.new_links}
        renamed = self.redefined | set(self.dropped)  # a related concept's title or page may have changed

        def related_moved(row: StoredConcept) -> bool:
            if relinked.intersection(row.shown):
                return True
            return any(key in renamed for path in row.shown if path in ok for key in ok[path].concepts or ())

        # the timelines of a concept's subject: a concept whose timelines changed is checked again
        self.of_subject: dict[str, list[timelines.Timeline]] = {}
        for t in self.lines:
            self.of_subject.setdefault(t.key[1], []).append(t)
        heads = {t.slug: [t.key[1], t.title] for t in self.lines}
        last_heads = state.get_meta("offline.timelines") or {}
        moved_subjects = {v[0] for k, v in {**last_heads, **heads}.items() if last_heads.get(k) != heads.get(k)}
        for k, c in concepts.items():
            if k not in check and any(key in moved_subjects for key in c.keys):
                check.add(k)
                self._gather(k)
        if heads != last_heads:
            state.set_meta("offline.timelines", heads)

        for k, row in self.old.items():
            if k in concepts and k not in check and related_moved(row):
                check.add(k)
                self._gather(k)

        # a source whose cross-references resolve otherwise: the concept pages that may quote a
        # sentence of it that holds one (those named in the sentence, or in its section's title)
        # are checked again (their fingerprints hold the digests of what the members they read show)
        quoting: set[str] = set()
        for path in sorted(self.xref_moved):
            sections = self.analysis_of(ok[path]).get("sections") or []
            for row in state.get_sentences(ok[path].sha256, self.cache_key) or []:
                if xref.OPEN in row[0]:
                    quoting |= phrase_keys(tokens(row[0]))
                    if 0 <= row[3] < len(sections):
                        quoting |= phrase_keys(tokens(str(sections[row[3]][0])))
        for k, c in concepts.items():
            if k not in check and any(key in quoting for key in c.keys):
                check.add(k)
                self._gather(k)

    # --- concept pages whose content moved
    def concept_jobs(self) -> None:
        """The concept pages to render (those whose fingerprint, what the page is made of,
        moved) and the concepts to store again."""
        ok, concepts, old, df = self.ok, self.concepts, self.old, self.df
        shown_as = {**self.seen, **self.digests}
        self.stored: list[StoredConcept] = []
        self.to_render: list[_ConceptJob] = []
        self.relinked: list[_Unranked] = []  # pages whose Related section alone moved
        self.kept: list[tuple[str, str | None]] = []  # the pages rendered, to keep (finish)
        longer = _longer_names(concepts, self.check)
        for k in sorted(self.check):
            concept = concepts[k]
            docs = self.members[k]
            # ranked from the counts alone: the members' analyses are read only for a page
            # rendered (checking the concepts of one edited source read 85 analyses for 6 pages)
            ranked = self.backend._ranked(concept, docs, self.weight_of[k])
            main = [m.path for m in ranked[:2]]
            related = _related(concept, [ok[p] for p in main], concepts)
            its_lines = sorted({t.slug: t for key in concept.keys for t in self.of_subject.get(key, [])}.values(),
                               key=lambda t: t.slug)
            head = json.dumps([concept.title, concept.aliases, concept.slug, concept.keys,
                               [(t.slug, t.title) for t in its_lines], longer.get(k, ())])
            # what the page is made of (_made_of); a source it reads edited where it does not
            # look leaves it as it was (_reads_alike)
            read = {m.path for m in read_by_concept_page(ranked)}
            made_of = functools.partial(self._made_of, head, len(docs), ranked, read, shown_as)
            content = made_of(lambda path: ok[path].sha256)
            # the page's Related section apart (KeptPage): "<what the rest is made of>.<related>"
            linked = hashlib.sha1(json.dumps([(c.key, c.title, c.slug) for c in related]).encode()).hexdigest()[:16]
            fingerprint = content + "." + linked
            before = old.get(k)
            last_content, _, last_linked = before.fingerprint.partition(".") if before is not None else ("", "", "")
            job = (k, concept, docs, related, [(t.title, f"{timelines.FOLDER}/{t.slug}") for t in its_lines],
                   len(docs), longer.get(k, ()))
            if self.full or before is None or before.slug != concept.slug or concept.page not in self.existing \
                    or (last_content != content and not self._reads_alike(concept, read, made_of, last_content)):
                self._render_whole(job)
            elif last_linked != linked:
                self.relinked.append(job)
            if (before is None or k in self.redefined or before.df != df[k] or before.fingerprint != fingerprint
                    or list(before.shown) != main):
                self.stored.append(StoredConcept(k, concept.keys, concept.title, concept.aliases, concept.slug,
                                                 df[k], fingerprint, tuple(main), concept.collections))

    @staticmethod
    def _made_of(head: str, total: int, ranked: list[Member], read: set[str], shown_as: dict[str, str],
                 sha: Callable[[str], str]) -> str:
        """What a concept page is made of: the members it can show, in their order, and how many
        there are in all; the content (`sha`) of those it reads sentences from and how their
        cross-references resolve; the rest are listed by title alone. A member it cannot show
        changing (the one edited note among thousands), or one it only lists, leaves the page as
        it is, unrendered."""
        return hashlib.sha1("\n".join([
            head, str(total),
            *(f"{m.path}\0{m.page}\0{m.title}\0{m.date}\0{m.level}\0{m.mentions}"
              + (f"\0{sha(m.path)}\0{shown_as.get(m.path, '')}" if m.path in read else "")
              for m in ranked),
        ]).encode()).hexdigest()

    def _reads_alike(self, concept: Concept, read: set[str], made_of: Callable[[Callable[[str], str]], str],
                     last: str) -> bool:
        """Whether a concept page is what it was though sources it reads sentences from were
        edited: made of the same members as before with those sources as they were (`made_of`
        the content hash of each, against the page's `last` fingerprint), and each of them reads
        the same to the page before and after the edit (read_digest: an edit where the page does
        not look, a line added about something else). The sources as they were are those this
        compile counted out, whose analyses are still in state.db."""
        ok, counted = self.ok, self.counted
        edited = sorted(path for path in read if path in counted and counted[path].sha256 != ok[path].sha256)
        if not edited or made_of(lambda path: counted[path].sha256 if path in edited else ok[path].sha256) != last:
            return False
        for path in edited:
            was = counted[path]
            data = self.state.get_analysis(was.sha256, self.cache_key)
            if data is None:
                return False
            then = read_digest(_member(was, own_title(path, data), concept), self._sentences_of(was), concept)
            if then != read_digest(_member(ok[path], self.analysis_of(ok[path]), concept),
                                   self._sentences_of(ok[path]), concept):
                return False
        return True

    def _sentences_of(self, doc: Doc) -> Sentences:
        """A source's sentences as a concept page reads them, kept for the compile (by content hash)."""
        got = self.sentences.get(doc.sha256)
        if got is None:
            got = self.sentences[doc.sha256] = Sentences(
                Sentence(*x) for x in self.state.get_sentences(doc.sha256, self.cache_key) or [])
        return got

    def _render_whole(self, job: _Unranked) -> None:
        """A concept page to render from its members' sentences (the members ranked, read here)."""
        k, concept, docs, related, fact_pages, total, names = job
        ranked = self.backend._ranked(concept, docs, self.weight_of[k], self.analysis_of)
        self.to_render.append((k, concept, ranked, related, fact_pages, total, names))

    def render_concept_pages(self) -> None:
        """The pages, rendered here and in a process beside this one (beside.shared) from the
        sentences they read, loaded here first: the other process cannot read state.db. A page
        whose Related section alone moved is made from the one kept (KeptPage); one kept by
        no compile before is rendered."""
        ok, to_render = self.ok, self.to_render
        kept = self.store.kept(job[0] for job in self.relinked)
        relinked = []
        for job in self.relinked:
            if job[0] in kept:
                relinked.append(job)
            else:
                self._render_whole(job)
        sentences_cache: dict[str, Sentences] = {}
        member_xrefs: dict[str, dict[tuple[str, str], Any]] = {}
        for _, _, ranked, _, _, _, _ in to_render:
            for member in read_by_concept_page(ranked):
                if member.path not in sentences_cache:
                    sentences_cache[member.path] = self._sentences_of(ok[member.path])
                refs = self.analysis_of(ok[member.path]).get("xrefs")
                if refs and member.path not in member_xrefs:
                    member_xrefs[member.path] = self.resolver.resolved(member.path, refs)[0]

        def render_concept(job: _ConceptJob) -> tuple[str, str | None]:
            _, concept, ranked, related, fact_pages, total, names = job
            page = concept_page(concept, ranked, lambda m: sentences_cache[m.path], fact_pages,
                                total=total, longer=names, xrefs=member_xrefs)
            return page.page(related).dumps(), page.dumps()

        edits = self.edits
        first = len(edits)
        for i, (text, keep) in shared(to_render, render_concept, spare=self.batch.listener.spare):
            edits.append(PageEdit(to_render[i][1].page, text, "concept", to_render[i][0]))
            self.kept.append((to_render[i][0], keep))
            self.offer(every=OFFER_EVERY)
        for k, concept, _, related, *_ in relinked:
            edits.append(PageEdit(concept.page, KeptPage.loads(concept.page, kept[k]).page(related).dumps(), "concept", k))
            self.offer(every=OFFER_EVERY)
        self.offer()
        # the concepts' order, as in one process rendering each
        edits[first:] = sorted(edits[first:], key=lambda e: str(e.owner))

    def finish(self) -> BatchResult:
        """The concepts and cross-references stored, the concept pages no concept renders any
        more removed, and the store stamped with what counted it."""
        store = self.store
        store.delete_concepts(self.dropped)
        store.put_concepts(self.stored)
        store.keep(self.kept)
        # every concept page wikimem wrote that no chosen concept renders any more goes
        live_pages = {c.page for c in self.concepts.values()}
        for page_path, owner in store.concept_pages():
            if page_path not in live_pages and page_path.startswith("concepts/"):
                self.edits.append(PageEdit(page_path, None, "concept", owner))
        self.index.set_seen({p: d for p, d in self.digests.items() if self.seen.get(p) != d})
        stamp = {"key": self.cache_key, "n_class": self.n_class, "collections": self.folders, "store": STORE_FORMAT}
        if self.meta != stamp:
            self.state.set_meta("offline.store", stamp)
        return BatchResult(tuple(self.edits), tuple(self.outcomes))


def _longer_names(concepts: dict[str, Concept], wanted: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each concept in `wanted`, the keys of the other concepts whose name holds its name as
    whole words ("development server" holds "server"): a sentence that names it only there is
    about the other thing."""
    by_word: dict[str, set[str]] = {}
    for concept in concepts.values():
        for key in concept.keys:
            if " " in key:
                for word in key.split():
                    by_word.setdefault(word, set()).add(key)
    out: dict[str, tuple[str, ...]] = {}
    for k in wanted:
        concept = concepts[k]
        own = set(concept.keys)
        found: set[str] = set()
        for key in concept.keys:
            words = key.split()
            pool = set.intersection(*(by_word.get(w, set()) for w in words)) if words else set()
            found.update(name for name in pool if name not in own and f" {key} " in f" {name} ")
        if found:
            out[k] = tuple(sorted(found))
    return out


def own_title(path: str, data: dict[str, Any]) -> dict[str, Any]:
    """An analysis as the source at `path` reads: a document that names no title is named for
    its own file (or folder), never for the file whose analysis it shares (identical READMEs in
    several folders are cached once, by content)."""
    if data.get("named"):
        data["title"] = title_from_name(path)
    return data


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0  # reported by the worker that reads it


def _light_member(doc: Doc, mentions: int, level: int) -> Member:
    """A member as a concept page lists it ("Also mentioned in"): no sentences read."""
    return Member(path=doc.path, page=doc.page, title=doc.title, date=doc.date, version=None, anchor=doc.anchor,
                  level=level, mentions=mentions)


def _toc_targets(data: Mapping[str, Any]) -> list[str]:
    """The documents a source's table of contents names, as written (offline_hubs.resolve)."""
    return [str(row[0]) for row in data.get("toc") or [] if row]


def _fact_links(linked: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(k for k in linked or () if k.startswith(f"{timelines.FOLDER}/"))


def _level(data: dict[str, Any], keys: tuple[str, ...]) -> int:
    """The strongest evidence a source gives for a concept's keys (0 when it only mentions them)."""
    return max((data["signals"][k][0] for k in keys if k in data["signals"]), default=0)


def _member(doc: Doc, data: dict[str, Any], concept: Concept) -> Member:
    definitions = data.get("definitions") or {}
    headed = data.get("headed") or {}
    sections = data.get("sections") or []
    # its section: the reference's entry for its name, where one of its keys has one
    entry = next((headed[k] for k in concept.keys if k in headed and is_entry_for(sections, headed[k], concept.title)),
                 None)
    return Member(
        path=doc.path, page=doc.page, title=doc.title, date=doc.date, version=data.get("version"), anchor=doc.anchor,
        level=_level(data, concept.keys), mentions=sum(data["terms"].get(k, 0) for k in concept.keys),
        definition=next((definitions[k] for k in concept.own_keys if k in definitions), None),
        headed=entry if entry is not None else next((headed[k] for k in concept.keys if k in headed), None),
        sections=sections,
        facts=frozenset(data.get("facts") or ()),
        default=_default_of(data, concept, sections, entry),
    )


ENTRY_OPENING = 12  # the lines under a reference entry's heading that open it: its default, its versions


def _default_of(data: dict[str, Any], concept: Concept, sections: list[list[Any]], entry: int | None
                ) -> tuple[str, int] | None:
    """The default a source states for the concept itself, (value, sentence): the one its
    reference entry for the name (section `entry`, is_entry_for) states ("Default: `1`" under
    `MAX_RETRIES`), not one of a parameter's that a class's entry lists, nor one a release's notes
    tell of. The entry opens with it, right under its heading: further down it is an attribute's
    ("It defaults to 5.")."""
    if entry is None:
        return None
    heading_line = int(sections[entry][2])
    for row in data.get("defaults") or ():
        if len(row) >= 5 and row[3] == entry and isinstance(row[2], int) \
                and 0 < int(row[4]) - heading_line <= ENTRY_OPENING \
                and str(row[0]).strip("`*").removesuffix("()") == concept.title.removesuffix("()"):
            return str(row[1]), row[2]
    return None


def _related(concept: Concept, main: list[Doc], concepts: dict[str, Concept]) -> list[Concept]:
    """The concepts its main sources talk about most (their pages' links), itself left out."""
    out: list[Concept] = []
    for doc in main:
        for key in doc.concepts or ():
            other = concepts.get(key)
            if other is not None and other.key != concept.key and other not in out:
                out.append(other)
    return out[:RELATED]


class _StoreStats:
    """TermStats read from the running totals in state.db."""

    def __init__(self, store: Store, collection: dict[str, str]):
        self.store = store
        counts: dict[str, int] = {}
        for c in collection.values():
            counts[c] = counts.get(c, 0) + 1
        self._collections = counts

    def collections(self) -> dict[str, int]:
        return dict(self._collections)

    def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
        return self.store.candidates(collection, limit)

    def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
        return self.store.spellings(collection, squashed)

    def union(self, collection: str, keys: Iterable[str]) -> tuple[int, int, int, int]:
        found = self.store.mentions(scoped(collection, k) for k in keys)
        levels = [level for _, level in found.values()]
        return len(levels), sum(levels), sum(level > 0 for level in levels), sum(level >= STRONG for level in levels)

    def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]:
        return self.store.phrases(collection, words)

    def said(self, collection: str, keys: Iterable[str]) -> dict[str, int]:
        return self.store.said(collection, keys)

    def surfaces(self, collection: str, keys: Iterable[str]) -> dict[str, Any]:
        return self.store.surfaces(collection, keys)


def _pages_on_disk(wiki: Path) -> set[str]:
    """Source and concept pages present under wiki/: two directory reads, not one stat per page."""
    found: set[str] = set()
    for folder in ("sources", "concepts"):
        try:
            with os.scandir(wiki / folder) as entries:
                found.update(f"{folder}/{e.name}" for e in entries if e.name.endswith(".md"))
        except OSError:
            continue
    return found

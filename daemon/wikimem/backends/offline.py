"""The offline backend: deterministic, no network. Same inputs, byte-identical pages.

It analyses each changed source once (cached by content hash), chooses
concepts across all sources (phrases several sources share, signalled by
headings, code spans, emphasis or recurrence), and renders only the pages a
change touches: the changed sources' pages, the concept pages they feed, and
source pages whose concept links moved. The counts concept selection needs are
running totals in state.db (offline_store.py), so a compile reads the sources
that changed, not every source.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import posixpath
import re
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..analysis import ANALYSIS_VERSION, Sentence, analyze, tokens
from ..config import Settings
from ..pages import Page, escape_link_text, relative_link, slugify
from ..sources import SkipSource
from ..templating import render
from . import Batch, BatchResult, PageEdit, SourceOutcome
from .offline_store import Doc, Store, StoredConcept, term_weight

RENDER_VERSION = 3  # bump when page rendering changes: every page is rendered again
MAX_CONCEPT_LINKS = 20  # per source page
PARALLEL_THRESHOLD = 24  # uncached sources before analysis uses worker processes
MAX_QUOTED_SOURCES = 25  # per concept page
QUOTES_PER_SOURCE = 2


@dataclass
class Concept:
    key: str
    title: str
    aliases: list[str]
    slug: str
    sources: list[str] = field(default_factory=list)  # paths, newest first
    keys: tuple[str, ...] = ()  # every phrase key that names it ("hash map", "hashmap")

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = (self.key,)

    def in_terms(self, terms: dict[str, int]) -> int:
        return sum(terms.get(k, 0) for k in self.keys)

    @property
    def page(self) -> str:
        return f"concepts/{self.slug}.md"


class TermStats(Protocol):
    """What concept selection reads: counts over every source, from memory or state.db."""

    n: int  # sources

    def candidates(self, max_df: int, min_docs: int, budget: int) -> list[tuple[str, int]]: ...
    def partners(self, squashed: set[str]) -> list[tuple[str, int]]: ...
    def surfaces(self, keys: Iterable[str]) -> dict[str, Counter[str]]: ...


class MemoryStats:
    """TermStats counted from analyses in memory: the reference the state.db tables must equal."""

    def __init__(self, analyses: dict[str, dict[str, Any]]):
        self.n = len(analyses)
        self.df: Counter[str] = Counter()
        self.strength: Counter[str] = Counter()
        self.strong_docs: Counter[str] = Counter()
        self.signal_docs: Counter[str] = Counter()
        self.by_surface: dict[str, Counter[str]] = defaultdict(Counter)
        for data in analyses.values():
            self.df.update(data["terms"].keys())
            for key, (level, surface) in data["signals"].items():
                self.strength[key] += level
                self.signal_docs[key] += 1
                if level >= 2:
                    self.strong_docs[key] += 1
                self.by_surface[key][surface] += level

    def candidates(self, max_df: int, min_docs: int, budget: int) -> list[tuple[str, int]]:
        scored: list[tuple[float, str]] = []
        for key, count in self.strength.items():
            docs = self.df[key]
            if docs < 2 or docs > max_df:
                continue
            if " " in key:
                ok = self.strong_docs[key] >= 1 or self.signal_docs[key] >= 2
            else:
                ok = self.strong_docs[key] >= 1 and (self.signal_docs[key] >= 2 or docs >= min_docs)
            if ok:
                scored.append((term_weight(docs, count, key), key))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [(key, self.df[key]) for _, key in scored[:budget]]

    def partners(self, squashed: set[str]) -> list[tuple[str, int]]:
        return [(k, d) for k, d in self.df.items() if d >= 2 and k.replace(" ", "") in squashed]

    def surfaces(self, keys: Iterable[str]) -> dict[str, Counter[str]]:
        return {k: self.by_surface[k] for k in keys if k in self.by_surface}


def select_concepts(analyses: dict[str, dict[str, Any]]) -> dict[str, Concept]:
    """Concepts chosen from analyses in memory (the reference; compiles read state.db)."""
    return choose_concepts(MemoryStats(analyses))


def choose_concepts(stats: TermStats) -> dict[str, Concept]:
    """Concepts: phrases several sources share, with a signal that they name a thing.

    A single word needs a strong signal (a heading, a type-like code span, an
    emphasized definition) and weight across sources; phrases found in most
    sources are too general to be worth a page, as are one-source phrases.
    """
    n = stats.n
    max_df = n if n < 10 else max(2, int(0.6 * n))
    # about one concept per two sources in a small wiki, growing more slowly past that
    budget = 20 + (n // 2 if n <= 400 else 200 + (n - 400) // 5)
    chosen = stats.candidates(max_df, min(5, max(2, n // 2)), budget)
    df: dict[str, int] = dict(chosen)
    # one page per thing: "hashmap" (from `HashMap`) and "hash map" (prose) are one concept
    merged: dict[str, list[str]] = defaultdict(list)
    for key, _ in chosen:
        merged[key.replace(" ", "")].append(key)
    for key, docs in sorted(stats.partners(set(merged))):
        squashed = key.replace(" ", "")
        df[key] = docs
        if squashed in merged and key not in merged[squashed] and docs >= 2:
            merged[squashed].append(key)
    # a word that mostly appears inside one chosen phrase is that phrase ("canary" in "canary release")
    phrases_with: dict[str, list[str]] = defaultdict(list)  # word -> groups with a phrase holding it
    for squashed, group in merged.items():
        for word in {w for k in group if " " in k for w in k.split()}:
            phrases_with[word].append(squashed)
    for squashed, group in sorted(merged.items()):
        if len(group) != 1 or " " in group[0] or squashed not in merged:
            continue
        word = group[0]
        hosts = [merged[s2] for s2 in phrases_with.get(word, []) if s2 != squashed]
        if len(hosts) == 1 and max(df[k] for k in hosts[0]) >= 0.6 * df[word]:
            hosts[0].append(word)
            merged[squashed] = []
    groups = sorted((g for g in merged.values() if g), key=lambda g: min(g))
    surfaces = stats.surfaces(k for g in groups for k in g)
    concepts: dict[str, Concept] = {}
    used_slugs: set[str] = set()
    for group in groups:
        # the name: one word where the group has its spelling as one ("rollback" over "roll
        # back", "hashmap" over "hash map"), else the phrase a lone word was merged into
        one_word = [k for k in group if " " not in k and any(" " in g and g.replace(" ", "") == k for g in group)]
        key = one_word[0] if one_word else max(sorted(group), key=lambda k: (" " in k, df[k]))
        own = surfaces.get(key) or Counter({key: 1})
        forms: Counter[str] = Counter()
        for k in group:
            forms.update(surfaces.get(k) or Counter({k: 1}))
        title = _title(max(sorted(own), key=lambda f: own[f]))
        # (lower, exact): a total order, so "Error"/"error" never depend on set iteration order
        aliases = sorted({_title(f) for f in forms if _title(f).lower() != title.lower()},
                         key=lambda a: (a.lower(), a))[:8]
        slug = slugify(key)
        if slug == "index" or slug.startswith("index-"):
            slug = "concept-" + slug  # index*.md names are the catalogs'
        while slug in used_slugs:
            slug += "-2"
        used_slugs.add(slug)
        concepts[key] = Concept(key, title, aliases, slug, keys=tuple(sorted(group)))
    return concepts


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


def _title(surface: str) -> str:
    """Prose phrases get a capital ("Rollback"); code keeps its spelling (`i32`, `println!`)."""
    surface = surface.strip()
    if surface.startswith("`"):
        return surface.strip("`")
    surface = surface.strip("*_")
    return surface[:1].upper() + surface[1:] if surface[:1].islower() else surface


def _order_key(item: tuple[str, dict[str, Any]]) -> tuple[Any, ...]:
    """Newest source first: by the date it carries; undated ones by the version in their
    title, highest first ("Go 1.22" before "Go 1.9"); then by path."""
    path, data = item
    date = data.get("date") or ""
    return (0 if date else 1, _invert(date), _version_desc(data.get("title") or ""), path)


def _version_desc(title: str) -> tuple[int, ...]:
    match = re.search(r"\d+(?:\.\d+)+|\d+", title)
    return tuple(-int(x) for x in match.group(0).split(".")) if match else (1,)


def _invert(date: str) -> str:
    return "".join(chr(255 - ord(c)) for c in date)


def _mentions(sentences: list[tuple[Sentence, str]], keys: tuple[str, ...]) -> list[Sentence]:
    """The first sentences of a source that mention a concept (first mentions tend to define)."""
    needles = [f" {key} " for key in keys]
    found = []
    for s, folded in sentences:
        if any(needle in folded for needle in needles):
            found.append(s)
            if len(found) >= QUOTES_PER_SOURCE:
                break
    return found


def _quotable(sentences: list[Sentence]) -> list[tuple[Sentence, str]]:
    return [
        (s, " " + " ".join(tokens(s.text)) + " ")
        for s in sentences
        if s.kind in ("para", "item", "table") and 25 <= len(s.text) <= 400
    ]


def _load_and_analyse(job: tuple[str, str, int]) -> tuple[str, Any]:
    """Worker process: ("ok", analysis JSON) | ("skipped", reason) | ("failed", error)."""
    from pathlib import Path

    from ..sources import load_source

    file, path, max_bytes = job
    try:
        return "ok", analyze(load_source(Path(file), path, max_bytes=max_bytes)).to_json()
    except SkipSource as exc:
        return "skipped", str(exc)
    except Exception as exc:  # noqa: BLE001 - reported per source, never stops the run
        return "failed", f"{type(exc).__name__}: {exc}"


def citation(from_page: str, source_path: str, anchor: str, line: int) -> str:
    """Relative link from a page to a line (or PDF page) of a raw file."""
    return f"{relative_link(from_page, '../' + source_path)}#{anchor}{line}"


# "[text](target)" left in a quote that is not an absolute link: code such as x.[](i), or
# a link the loader could not parse; escaped so it renders as text instead of a dead link
_LINK_LIKE = re.compile(r"(?<!\\)\[([^\[\]]*)\]\((?!(?:https?|mailto):)")


def quote_text(text: str) -> str:
    """A quote fit for a list item: one line, no stray link syntax that would dangle."""
    from ..pages import inert  # imported here: this module's header is being reworked on main

    text = " ".join(text.split())
    text = _LINK_LIKE.sub(lambda m: f"\\[{m.group(1)}\\](", text)
    return inert(text.replace("[[", "[ [").replace("]]", "] ]"))  # no HTML, no javascript: link


class OfflineBackend:
    name = "offline"
    needs: str | None = None

    def __init__(self, settings: Settings):
        self.settings = settings
        # the analysis cache key: a new analyser version never reuses old analyses, and the
        # compiler re-renders every page when the version it last compiled with differs
        self.cache_key = f"{self.name}:{ANALYSIS_VERSION}"
        self.version = f"{self.cache_key}.{RENDER_VERSION}"

    # the offline analysis, cached in state.db by content hash
    def _analysis(self, batch: Batch, path: str, sha: str) -> dict[str, Any]:
        cached = batch.state.get_analysis(sha, self.cache_key)
        if cached is not None:
            return cached
        analysis = analyze(batch.load(path)).to_json()
        batch.state.put_analysis(sha, self.cache_key, analysis)
        return {k: v for k, v in analysis.items() if k != "sentences"}

    def _analyse_in_parallel(self, batch: Batch, todo: list[str], stack: ExitStack) -> Iterator[tuple[str, Any]] | None:
        """Load and analyse uncached sources on every core when there are many of them.

        A first `wikimem compile` of a large raw/ is CPU-bound; analysis of one source
        never depends on another, so worker processes split it. Small batches stay
        in-process (starting workers would cost more), and so does the daemon. Returns the
        results in the order of `todo` as they arrive, or None to analyse in-process.
        """
        workers = min(4, os.cpu_count() or 1)
        if len(todo) < PARALLEL_THRESHOLD or workers < 2 or threading.active_count() > 1:
            # in a process with other threads (the daemon: watcher, scheduler) work stays
            # in-process: forking there is unsafe, and a forkserver would outlive the batch
            return None
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("fork")  # single-threaded here, so fork is safe
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers, mp_context=context))
        jobs = [(str(batch.files[p]), p, batch.max_bytes) for p in todo]
        return pool.map(_load_and_analyse, jobs, chunksize=4)

    def compile(self, batch: Batch) -> BatchResult:
        """Count the sources that changed in and out of the running totals in state.db, choose
        concepts from the totals, and render only the pages whose content moved.

        Every step is a function of the totals and of per-source analyses, so the pages equal
        those of a full compile of the same raw/ (tests/test_incremental.py checks this after
        edits, additions, deletions and renames)."""
        state = batch.state
        store = Store(state.db)
        outcomes: list[SourceOutcome] = []
        touched = set(batch.changed) | set(batch.renamed)
        full = batch.rebuild or batch.rerender  # render every page
        meta = state.get_meta("offline.store") or {}
        if batch.rebuild:
            state.clear_analyses(self.cache_key)  # --rebuild means: read every source again
        cached = state.analysed(self.cache_key)
        counted = store.docs()
        if batch.rebuild or meta.get("key") != self.cache_key or any(d.sha256 not in cached for d in counted.values()):
            # counts made by another analyser, or sources whose analysis is gone (so they
            # cannot be counted out): count everything again
            store.clear()
            counted = {}
            full = True

        # --- which sources stay counted as they are, which leave, which come
        ok: dict[str, Doc] = {}  # every source compiled, after this compile
        coming: list[str] = []
        for path in sorted(batch.sources):
            ref = batch.sources[path]
            doc = counted.get(path)
            if doc is not None and doc.sha256 == ref.sha256 and doc.page == ref.page and path not in touched:
                ok[path] = doc
            else:
                coming.append(path)
        leaving = {path: doc for path, doc in sorted(counted.items()) if ok.get(path) is not doc}
        # a few sources moving (the usual compile): remember their phrase keys, so a concept
        # page can be shown unchanged without reading its sources back
        watch = not full and len(leaving) + len(coming) <= 256
        keys_before: dict[str, set[str]] = {}
        keys_after: dict[str, set[str]] = {}

        def removals() -> Iterator[tuple[Doc, dict[str, Any]]]:
            for doc in leaving.values():
                data = state.get_analysis(doc.sha256, self.cache_key)
                assert data is not None  # checked above: every counted source's analysis is cached
                if watch:
                    keys_before[doc.path] = set(data["terms"])
                yield doc, data

        todo = [p for p in coming if p in batch.files and batch.sources[p].sha256 not in cached]
        # analysed in worker processes: take every result as it arrives and keep only what
        # counting needs (the phrase keys, shared strings; the signals), then count. Counting
        # while the workers run competed with them for the CPU and the GIL (30% slower on
        # the 187-source corpus); holding whole analyses took 600 MB at 10k sources
        from_workers: dict[str, tuple[str, Any]] = {}
        with ExitStack() as stack:
            parallel = self._analyse_in_parallel(batch, todo, stack)
            for path, result in zip(todo, parallel or (), strict=False):
                status, data = result
                if status == "ok":
                    state.put_analysis(batch.sources[path].sha256, self.cache_key, data)
                    data = {"title": data["title"], "date": data.get("date"), "anchor": data["anchor"],
                            "terms": list(map(sys.intern, data["terms"])), "signals": data["signals"]}
                from_workers[path] = (status, data)

        def additions() -> Iterator[tuple[Doc, dict[str, Any]]]:
            for path in coming:
                ref = batch.sources[path]
                if path in from_workers:
                    status, data = from_workers.pop(path)
                    if status != "ok":
                        outcomes.append(SourceOutcome(path, status, str(data)))
                        continue
                else:
                    try:
                        data = self._analysis(batch, path, ref.sha256)
                    except SkipSource as exc:
                        outcomes.append(SourceOutcome(path, "skipped", str(exc)))
                        continue
                    except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
                        outcomes.append(SourceOutcome(path, "failed", f"{type(exc).__name__}: {exc}"))
                        continue
                doc = Doc(0, path, ref.sha256, ref.page, data["title"], data.get("date"), data["anchor"], None)
                ok[path] = doc
                if watch:
                    keys_after[path] = set(data["terms"])
                yield doc, data

        moved = store.update(removals(), additions())
        added = {p for p in coming if p in ok}
        n = len(ok)

        # --- concepts, from the totals
        old = store.concepts()
        concepts = choose_concepts(_StoreStats(store, n))
        by_key = {k: c for c in concepts.values() for k in c.keys}
        redefined = {
            k for k, c in concepts.items()
            if k not in old or (old[k].keys, old[k].title, old[k].aliases, old[k].slug) != (c.keys, c.title, c.aliases, c.slug)
        }
        dropped = sorted(set(old) - set(concepts))
        existing = _pages_on_disk(batch.workspace.wiki)
        # the concepts whose sources (or what their page shows of one) may have moved
        check = {
            k for k, c in concepts.items()
            if full or k in redefined or not old[k].fingerprint or c.page not in existing
            or any(key in moved for key in c.keys)
        }

        def unmoved(k: str) -> bool:
            """A concept whose page provably shows what it showed: the same sources, listed
            the same way, and none of those it quotes changed content."""
            if not watch or k in redefined or not old[k].fingerprint or concepts[k].page not in existing:
                return False
            keys = concepts[k].keys
            before = {p for p, held in keys_before.items() if any(x in held for x in keys)}
            after = {p for p, held in keys_after.items() if any(x in held for x in keys)}
            if before != after:
                return False
            for p in before:
                a, b = leaving[p], ok[p]
                if (a.page, a.title, a.date) != (b.page, b.title, b.date) or (p in old[k].shown and a.sha256 != b.sha256):
                    return False
            return True

        check -= {k for k in check if unmoved(k)}
        by_id = {doc.id: doc for doc in ok.values()}
        members: dict[str, list[Doc]] = {}
        df = {k: old[k].df for k in concepts if k not in check}
        order: dict[int, tuple[Any, ...]] = {}  # a source's place in "newest first", worked out once

        def newest_first(doc: Doc) -> tuple[Any, ...]:
            key = order.get(doc.id)
            if key is None:
                key = order[doc.id] = _doc_order(doc)
            return key

        for k in sorted(check):
            members[k] = sorted((by_id[i] for i in store.sources_of(concepts[k].keys)), key=newest_first)
            df[k] = len(members[k])
        for k, docs in members.items():
            concepts[k].sources = [d.path for d in docs]

        # --- the sources whose concept links may have moved: rank them again
        n_class = _ceil2(n)
        rank: set[str] = set(added)
        if full or meta.get("n_class") != n_class:
            rank = set(ok)
        else:
            for k in check:
                if k in redefined or k not in old or _floor2(df[k]) != _floor2(old[k].df):
                    rank.update(d.path for d in members[k])
                    if k in old and old[k].keys != concepts[k].keys:
                        rank.update(by_id[i].path for i in store.sources_of(old[k].keys) if i in by_id)
            for k in dropped:
                rank.update(by_id[i].path for i in store.sources_of(old[k].keys) if i in by_id)
            rank.update(p for p, d in ok.items() if d.concepts is None or d.page not in existing)

        edits: list[PageEdit] = []
        links: dict[str, tuple[str, ...]] = {}
        new_links: list[tuple[int, tuple[str, ...]]] = []
        for path in sorted(rank):
            doc = ok[path]
            data = self._analysis(batch, path, doc.sha256)
            counts: dict[str, int] = {}
            for term, count in data["terms"].items():
                concept = by_key.get(term)
                if concept is not None:
                    counts[concept.key] = counts.get(concept.key, 0) + count
            # what this source says most about, weighed against how common the concept is
            present = sorted(counts, key=lambda k: (
                -counts[k] * (1 + data["signals"].get(k, [0])[0]) * link_rank(n, df[k]), k))
            links[path] = tuple(present[:MAX_CONCEPT_LINKS])
            if links[path] != doc.concepts:
                new_links.append((doc.id, links[path]))
            if (full or path in added or links[path] != doc.concepts or doc.page not in existing
                    or any(k in redefined for k in links[path])):
                sentences = [Sentence(*x) for x in state.get_sentences(doc.sha256, self.cache_key) or []]
                page = self._source_page(doc.page, path, doc.sha256, data, sentences,
                                         [concepts[k] for k in links[path]])
                edits.append(PageEdit(doc.page, page.dumps(), "source", path))
        store.set_doc_concepts(new_links)
        # an outcome for every source whose state row may change; the compiler counts the
        # others as unchanged (10k outcomes for 10k untouched sources cost more than the edit)
        for path in sorted(touched | set(links) | added):
            doc = ok.get(path)
            if doc is not None:
                outcomes.append(SourceOutcome(
                    path, "compiled" if path in touched else "unchanged", title=doc.title,
                    concepts=links.get(path, doc.concepts or ())))

        # --- concept pages whose content moved
        stored: list[StoredConcept] = []
        render_now: list[str] = []
        for k in sorted(check):
            concept = concepts[k]
            docs = members[k]
            shown = docs[:MAX_QUOTED_SOURCES]
            head = json.dumps([concept.title, concept.aliases, concept.slug, concept.keys])
            # what the page shows of each source: the quoted ones by content, the others
            # (listed by title only) by path, page and title
            fingerprint = hashlib.sha1("\n".join([
                head,
                *(f"{d.path}\0{d.page}\0{d.title}\0{d.sha256}" for d in shown),
                *(f"{d.path}\0{d.page}\0{d.title}" for d in docs[MAX_QUOTED_SOURCES:]),
            ]).encode()).hexdigest()
            before = old.get(k)
            if full or before is None or before.fingerprint != fingerprint or before.slug != concept.slug \
                    or concept.page not in existing:
                render_now.append(k)
            paths = tuple(d.path for d in shown)
            if (before is None or k in redefined or before.df != df[k] or before.fingerprint != fingerprint
                    or before.shown != paths):
                stored.append(StoredConcept(k, concept.keys, concept.title, concept.aliases, concept.slug,
                                            df[k], fingerprint, paths))
        # the quotes: each quoted source's sentences are read and folded once, for every page
        # that quotes it (a first compile of 10k sources quotes some sources on hundreds of pages)
        quoting: dict[str, list[str]] = defaultdict(list)  # source -> concepts whose page quotes it
        for k in render_now:
            for d in members[k][:MAX_QUOTED_SOURCES]:
                quoting[d.path].append(k)
        quotes: dict[tuple[str, str], list[Sentence]] = {}
        for path in sorted(quoting):
            doc = ok[path]
            quotable = _quotable([Sentence(*x) for x in state.get_sentences(doc.sha256, self.cache_key) or []])
            for k in quoting[path]:
                quotes[(k, path)] = _mentions(quotable, concepts[k].keys)
        for k in render_now:
            concept = concepts[k]
            shown = members[k][:MAX_QUOTED_SOURCES]
            page = self._concept_page(concept, [(d, quotes[(k, d.path)]) for d in shown], members[k][MAX_QUOTED_SOURCES:])
            edits.append(PageEdit(concept.page, page.dumps(), "concept", k))
        store.delete_concepts(dropped)
        store.put_concepts(stored)
        # every concept page wikimem wrote that no chosen concept renders any more goes
        live_pages = {c.page for c in concepts.values()}
        for page_path, owner in store.concept_pages():
            if page_path not in live_pages and page_path.startswith("concepts/"):
                edits.append(PageEdit(page_path, None, "concept", owner))
        if meta != {"key": self.cache_key, "n_class": n_class}:
            state.set_meta("offline.store", {"key": self.cache_key, "n_class": n_class})
        return BatchResult(tuple(edits), tuple(outcomes))

    # --- rendering -------------------------------------------------------------------------

    def _source_page(
        self,
        page_path: str,
        source_path: str,
        sha: str,
        data: dict[str, Any],
        sentences: list[Sentence],
        concepts: list[Concept],
    ) -> Page:
        anchor = data["anchor"]
        raw_link = relative_link(page_path, "../" + source_path)

        def cite(line: int) -> str:
            return citation(page_path, source_path, anchor, line)

        name = posixpath.basename(source_path)
        unit = "page" if anchor.startswith("page") else "line"
        summary = " ".join(quote_text(sentences[i].text) for i in data["summary"] if i < len(sentences))
        facts = [
            {"text": quote_text(sentences[i].text), "link": cite(sentences[i].line),
             "where": f"{name}, {unit} {sentences[i].line}"}
            for i in data["facts"] if i < len(sentences)
        ]
        outline = [
            {"indent": "  " * max(0, level - min(o[0] for o in data["outline"])),
             "text": escape_link_text(re.sub(r"`", "", text)), "link": cite(line)}
            for level, text, line in data["outline"]
        ]
        body = render(
            "source_page.md.j2",
            title=data["title"],
            summary=summary,
            source_path=source_path,
            raw_link=raw_link,
            format=data["format"],
            date=data.get("date"),
            outline=outline,
            facts=facts,
            concepts=[{"title": escape_link_text(c.title), "link": relative_link(page_path, c.page)} for c in concepts],
            warnings=data.get("warnings", []),
        )
        meta: dict[str, Any] = {
            "title": data["title"],
            "kind": "source",
            "sources": [source_path],
            "source_sha256": sha,
            "aliases": [],
        }
        if data.get("date"):
            meta["date"] = data["date"]
        return Page(page_path, meta, body)

    def _concept_page(
        self,
        concept: Concept,
        quotes: list[tuple[Doc, list[Sentence]]],
        more_docs: list[Doc],
    ) -> Page:
        page_path = concept.page
        blocks = []
        for doc, sentences in quotes:
            unit = "page" if doc.anchor.startswith("page") else "line"
            blocks.append({
                "title": escape_link_text(doc.title),
                "link": relative_link(page_path, doc.page),
                "date": doc.date,
                "quotes": [
                    {"text": quote_text(s.text), "link": citation(page_path, doc.path, doc.anchor, s.line),
                     "where": f"{posixpath.basename(doc.path)}, {unit} {s.line}"}
                    for s in sentences
                ],
            })
        more = [{"title": escape_link_text(d.title), "link": relative_link(page_path, d.page)} for d in more_docs]
        body = render(
            "concept_page.md.j2",
            title=concept.title,
            aliases=concept.aliases,
            count=len(concept.sources),
            blocks=blocks,
            more=more,
        )
        meta = {
            "title": concept.title,
            "kind": "concept",
            "sources": list(concept.sources),
            "aliases": concept.aliases,
        }
        return Page(page_path, meta, body)


class _StoreStats:
    """TermStats read from the running totals in state.db."""

    def __init__(self, store: Store, n: int):
        self.n = n
        self.candidates = store.candidates
        self.partners = store.partners
        self.surfaces = store.surfaces


def _doc_order(doc: Doc) -> tuple[Any, ...]:
    """Newest source first (see _order_key)."""
    return _order_key((doc.path, {"date": doc.date, "title": doc.title}))


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

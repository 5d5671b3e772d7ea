"""The offline backend: deterministic, no network. Same inputs, byte-identical pages.

It analyses each changed source once (cached by content hash), chooses
concepts across all sources (phrases several sources share, signalled by
headings, code spans, emphasis or recurrence), and renders only the pages a
change touches: the changed sources' pages, the concept pages they feed, and
source pages whose concept links moved.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import posixpath
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..analysis import ANALYSIS_VERSION, Sentence, analyze, tokens
from ..config import Settings
from ..pages import Page, escape_link_text, relative_link, slugify
from ..sources import SkipSource
from ..templating import render
from . import Batch, BatchResult, PageEdit, SourceOutcome

RENDER_VERSION = 2  # bump when page rendering changes: every page is rendered again
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


def select_concepts(analyses: dict[str, dict[str, Any]]) -> dict[str, Concept]:
    """Concepts: phrases several sources share, with a signal that they name a thing.

    A single word needs a strong signal (a heading, a type-like code span, an
    emphasized definition) and weight across sources; phrases found in most
    sources are too general to be worth a page, as are one-source phrases.
    """
    df: Counter[str] = Counter()
    strength: Counter[str] = Counter()
    strong_docs: Counter[str] = Counter()
    signal_docs: Counter[str] = Counter()
    surfaces: dict[str, Counter[str]] = defaultdict(Counter)
    for data in analyses.values():
        df.update(data["terms"].keys())
        for key, (level, surface) in data["signals"].items():
            strength[key] += level
            signal_docs[key] += 1
            if level >= 2:
                strong_docs[key] += 1
            surfaces[key][surface] += level
    n = len(analyses)
    max_df = n if n < 10 else max(2, int(0.6 * n))
    scored: list[tuple[float, str]] = []
    for key, count in strength.items():
        docs = df[key]
        if docs < 2 or docs > max_df:
            continue
        if " " in key:
            ok = strong_docs[key] >= 1 or signal_docs[key] >= 2
        else:
            ok = strong_docs[key] >= 1 and (signal_docs[key] >= 2 or docs >= min(5, max(2, n // 2)))
        if ok:
            # how widely it is discussed, times how clearly it is named (capped so one doc's code
            # spans cannot outweigh breadth)
            weight = math.log(1 + docs) * (2 + min(count, 12)) * (1.3 if " " in key else 1.0)
            scored.append((weight, key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    # about one concept per two sources in a small wiki, growing more slowly past that
    budget = 20 + (n // 2 if n <= 400 else 200 + (n - 400) // 5)
    keep = [key for _, key in scored[:budget]]
    # one page per thing: "hashmap" (from `HashMap`) and "hash map" (prose) are one concept
    merged: dict[str, list[str]] = defaultdict(list)
    for key in keep:
        merged[key.replace(" ", "")].append(key)
    for key in df:
        squashed = key.replace(" ", "")
        if squashed in merged and key not in merged[squashed] and df[key] >= 2:
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
    concepts: dict[str, Concept] = {}
    used_slugs: set[str] = set()
    for group in sorted((g for g in merged.values() if g), key=lambda g: min(g)):
        # the name: one word where the group has its spelling as one ("rollback" over "roll
        # back", "hashmap" over "hash map"), else the phrase a lone word was merged into
        one_word = [k for k in group if " " not in k and any(" " in g and g.replace(" ", "") == k for g in group)]
        key = one_word[0] if one_word else max(sorted(group), key=lambda k: (" " in k, df[k]))
        own = surfaces.get(key, Counter({key: 1}))
        forms: Counter[str] = Counter()
        for k in group:
            forms.update(surfaces.get(k, Counter({k: 1})))
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
    text = " ".join(text.split())
    text = _LINK_LIKE.sub(lambda m: f"\\[{m.group(1)}\\](", text)
    return text.replace("[[", "[ [").replace("]]", "] ]")


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
        self._fresh.add(path)  # analysed now: its page is rendered again (same bytes are not rewritten)
        analysis = analyze(batch.load(path)).to_json()
        batch.state.put_analysis(sha, self.cache_key, analysis)
        return {k: v for k, v in analysis.items() if k != "sentences"}

    def _analyse_in_parallel(self, batch: Batch) -> dict[str, tuple[str, Any]]:
        """Load and analyse uncached sources on every core when there are many of them.

        A first `wikimem compile` of a large raw/ is CPU-bound; analysis of one source
        never depends on another, so worker processes split it. Small batches stay
        in-process (starting workers would cost more), and so does the daemon.
        """
        cached = batch.state.analysed(self.cache_key)  # one query, not one per source
        todo = [
            (p, batch.sources[p].sha256)
            for p in sorted(batch.sources)
            if p in batch.files and batch.sources[p].sha256 not in cached
        ]
        workers = min(4, os.cpu_count() or 1)
        if len(todo) < PARALLEL_THRESHOLD or workers < 2 or threading.active_count() > 1:
            # in a process with other threads (the daemon: watcher, scheduler) work stays
            # in-process: forking there is unsafe, and a forkserver would outlive the batch
            return {}
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("fork")  # single-threaded here, so fork is safe
        results: dict[str, tuple[str, Any]] = {}
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            jobs = [(str(batch.files[p]), p, batch.max_bytes) for p, _ in todo]
            for (path, sha), result in zip(todo, pool.map(_load_and_analyse, jobs, chunksize=4), strict=True):
                if result[0] == "ok":
                    batch.state.put_analysis(sha, self.cache_key, result[1])
                    self._fresh.add(path)
                results[path] = result
        return results

    def compile(self, batch: Batch) -> BatchResult:
        analyses: dict[str, dict[str, Any]] = {}
        outcomes: list[SourceOutcome] = []
        changed = set(batch.changed)
        self._fresh: set[str] = set()
        if batch.rebuild:
            batch.state.clear_analyses(self.cache_key)  # --rebuild means: read every source again
        parallel = self._analyse_in_parallel(batch)
        for path in sorted(batch.sources):
            status, detail = parallel.get(path, ("", None))
            if status in ("skipped", "failed"):
                outcomes.append(SourceOutcome(path, status, str(detail)))
                continue
            ref = batch.sources[path]
            try:
                analyses[path] = self._analysis(batch, path, ref.sha256)
            except SkipSource as exc:
                outcomes.append(SourceOutcome(path, "skipped", str(exc)))
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
                outcomes.append(SourceOutcome(path, "failed", f"{type(exc).__name__}: {exc}"))
        concepts = select_concepts(analyses)
        # phrase key -> the concept it names; one pass over each source's terms, not
        # concepts x sources
        by_key = {k: c for c in concepts.values() for k in c.keys}
        mentions: dict[str, dict[str, int]] = {}  # source -> concept -> count
        for path, data in sorted(analyses.items(), key=_order_key):
            counts: dict[str, int] = {}
            for term, count in data["terms"].items():
                concept = by_key.get(term)
                if concept is not None:
                    counts[concept.key] = counts.get(concept.key, 0) + count
            mentions[path] = counts
            for key in counts:
                concepts[key].sources.append(path)  # in newest-first order

        previous = {path: row.concepts for path, row in batch.state.sources().items()}
        source_concepts: dict[str, tuple[str, ...]] = {}
        n_sources = max(1, len(analyses))
        for path, data in analyses.items():
            counts = mentions[path]
            # what this source says most about, weighed against how common the concept is
            present = sorted(counts, key=lambda k: (
                -counts[k] * (1 + data["signals"].get(k, [0])[0])
                * math.log(1 + n_sources / len(concepts[k].sources)), k))
            source_concepts[path] = tuple(present[:MAX_CONCEPT_LINKS])

        wiki = batch.workspace.wiki
        touched = changed | set(batch.renamed)
        edits: list[PageEdit] = []
        sentence_cache: dict[str, list[Sentence]] = {}

        def sentences_of(path: str) -> list[Sentence]:
            if path not in sentence_cache:
                raw = batch.state.get_sentences(batch.sources[path].sha256, self.cache_key) or []
                sentence_cache[path] = [Sentence(*s) for s in raw]
            return sentence_cache[path]

        quotable_cache: dict[str, list[tuple[Sentence, str]]] = {}

        def quotable_of(path: str) -> list[tuple[Sentence, str]]:
            if path not in quotable_cache:
                quotable_cache[path] = _quotable(sentences_of(path))
            return quotable_cache[path]

        for path, data in sorted(analyses.items()):
            ref = batch.sources[path]
            needs = (
                batch.rebuild
                or batch.rerender
                or path in touched
                or path in self._fresh
                or previous.get(path) != source_concepts[path]
                or not (wiki / ref.page).exists()
            )
            if needs:
                page = self._source_page(ref.page, path, ref.sha256, data, sentences_of(path),
                                         [concepts[k] for k in source_concepts[path]])
                edits.append(PageEdit(ref.page, page.dumps(), "source", path))
            outcomes.append(SourceOutcome(
                path, "compiled" if path in touched else "unchanged", title=data["title"],
                concepts=source_concepts[path]))

        # concept pages: re-render those whose inputs changed (fingerprint in state meta)
        # key -> [fingerprint, page]; a concept re-renders only when its inputs changed
        old_prints: dict[str, list[str]] = batch.state.get_meta("offline.concepts", {})
        new_prints: dict[str, list[str]] = {}
        # what a concept page shows of each source, as one string per source (built once): the
        # quoted sources by content, the others (listed by title only) by path, page and title
        listed = {p: f"{p}\0{batch.sources[p].page}\0{data['title']}" for p, data in analyses.items()}
        for key, concept in sorted(concepts.items()):
            shown = concept.sources[:MAX_QUOTED_SOURCES]
            head = json.dumps([concept.title, concept.aliases, concept.slug, concept.keys])
            fingerprint = hashlib.sha1("\n".join([
                head,
                *(f"{listed[p]}\0{batch.sources[p].sha256}" for p in shown),
                *(listed[p] for p in concept.sources[MAX_QUOTED_SOURCES:]),
            ]).encode()).hexdigest()
            new_prints[key] = [fingerprint, concept.page]
            if batch.rebuild or batch.rerender or old_prints.get(key) != new_prints[key] or not (wiki / concept.page).exists():
                quotes = [(p, analyses[p], _mentions(quotable_of(p), concept.keys)) for p in shown]
                page = self._concept_page(concept, quotes, analyses, batch)
                edits.append(PageEdit(concept.page, page.dumps(), "concept", key))
        # every concept page wikimem wrote that no chosen concept renders any more goes
        live_pages = {page for _, page in new_prints.values()}
        written = batch.state.pages()
        for page_path in sorted(written):
            _, kind, owner = written[page_path]
            if kind == "concept" and page_path not in live_pages and page_path.startswith("concepts/"):
                edits.append(PageEdit(page_path, None, "concept", owner))
        batch.state.set_meta("offline.concepts", new_prints)
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
        quotes: list[tuple[str, dict[str, Any], list[Sentence]]],
        analyses: dict[str, dict[str, Any]],
        batch: Batch,
    ) -> Page:
        page_path = concept.page
        blocks = []
        for path, data, sentences in quotes:
            unit = "page" if data["anchor"].startswith("page") else "line"
            blocks.append({
                "title": escape_link_text(data["title"]),
                "link": relative_link(page_path, batch.sources[path].page),
                "date": data.get("date"),
                "quotes": [
                    {"text": quote_text(s.text), "link": citation(page_path, path, data["anchor"], s.line),
                     "where": f"{posixpath.basename(path)}, {unit} {s.line}"}
                    for s in sentences
                ],
            })
        more = [
            {"title": escape_link_text(analyses[p]["title"]), "link": relative_link(page_path, batch.sources[p].page)}
            for p in concept.sources[MAX_QUOTED_SOURCES:]
        ]
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

"""The engine: an open index answering questions with passages, one per file, best first; and
the module-level entry points (search, search_passages)."""

from __future__ import annotations

import contextlib
import heapq
import math
import operator
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..workspace import Workspace
from .index import NUMBER, index_dir, is_current, log, read_parts, update_index
from .ranking import (
    BOILERPLATE,
    DEFINED_BY_TITLE,
    DUPLICATE_DEMOTE,
    KIND_PRIOR,
    LARGE_INDEX,
    OLDER_RELEASE,
    OTHER_COLLECTION,
    RECENCY,
    RECENCY_CURRENT,
    FastScorer,
    PhraseBonus,
    asked_collection,
    boilerplate_key,
    coordination,
    parse_query,
    phrase_checks,
    select_terms,
    title_key,
    weighting,
)
from .snippets import make_snippet

_RELEASE_TITLE = re.compile(r"\d+\.\d+")  # a title that names a version: a release's page
BOILERPLATE_READ = 200  # the best candidate passages read for boilerplate, at most
BOILERPLATE_FILES = 3  # files that share a passage's text for it to be boilerplate

# the names of a page that speaks for raw/ as a whole (raw_tree.ENTRY_NAMES, as files are named)
ROOT_ENTRIES = ("index", "Index", "INDEX", "readme", "README", "Readme", "summary", "SUMMARY", "contents", "CONTENTS")
ROOT_SUFFIXES = (".md", ".rst", ".txt", ".markdown", ".html", "")

# a doc as the manifest's docs part gives it (index.Docs), and one it lacks
_TITLE, _KIND, _SOURCE, _CURRENT, _PRIOR = range(5)
_NO_DOC: tuple[Any, ...] = (None, None, None, None, None)


@dataclass(frozen=True)
class Hit:
    """One search result: a wiki page or a raw source, with the passage that matched best."""

    path: str  # workspace-relative: wiki/... or raw/...
    title: str
    kind: str  # source | concept | answer | raw
    score: float
    snippet: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "kind": self.kind,
                "score": round(self.score, 4), "snippet": self.snippet}


@dataclass(frozen=True)
class Passage:
    """A hit with the detail citations need: the line the snippet starts on and the passage text."""

    hit: Hit
    line: int | None  # line in the file (page number for PDF sources)
    anchor: str  # "L" (#L12) or "page=" (#page=3)
    heading: str
    text: str

    @property
    def target(self) -> str:
        """`raw/x.md#L12` (or `raw/x.pdf#page=3`): where the snippet is, to read or cite."""
        return f"{self.hit.path}#{self.anchor}{self.line}" if self.line else self.hit.path

    def to_json(self) -> dict[str, Any]:
        """A result as `search --json` and the MCP search tool give it: the hit, the line its
        snippet starts on, and the citation target (path#L<line>)."""
        return {**self.hit.to_json(), "line": self.line, "target": self.target}


class Engine:
    """An open index and searcher, reused across queries by long-lived callers (MCP, daemon).

    `fresh_within` lets a server skip the directory walk when it checked less than that
    many seconds ago and log.md has not changed (every compile appends to it).
    """

    def __init__(self, ws: Workspace, *, fresh_within: float = 0.0):
        self.ws = ws
        self.fresh_within = fresh_within
        self._watch: Any = None  # the background checker's thread, once started
        self._stop: Any = None
        self._checked = 0.0
        self._log_stat: tuple[int, int] | None = None
        self._ix: Any = None
        self._searcher: Any = None
        self._docs: Any = {}  # path -> (title, kind, source, current, prior): an index.Docs
        self._fast: FastScorer | None = None
        self._opened_as: tuple[int, int, int] | None = None  # see open_as_is
        self._tree_of: Any = None  # the docs _one_tree last answered for
        self._tree = False
        self._newest_of: Any = None  # the docs _latest last answered for
        self._newest: list[int] = []
        self._latest_paths: set[str] = set()

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
        self._searcher = self._ix = self._fast = None

    def _fast_scorer(self) -> FastScorer:
        # one per open searcher: its caches hold that index generation's postings and lengths
        if self._fast is None or self._fast.searcher is not self._searcher:
            self._fast = FastScorer(self._searcher)
        return self._fast

    def watch(self, every: float = 2.0, lock: Any = None) -> None:
        """Look for changed files in a background thread every `every` seconds, so no query
        waits on the directory walk (a fifth of a second at 10k sources). Queries then see a
        change within `every` seconds, or at once when a compile already updated the index.

        When the index changed, the thread also opens and warms the new searcher itself and
        swaps it in holding `lock` (the lock queries hold), so no query pays for the reopen."""
        import threading

        if self._watch is not None:
            return
        self._stop = threading.Event()
        guard = lock if lock is not None else contextlib.nullcontext()

        def loop() -> None:
            while not self._stop.wait(every):
                try:
                    update_index(self.ws, wait=0.0)
                    if lock is not None and self._stale():
                        state = self._open(warm=True)  # its own reader: safe beside queries
                        with guard:
                            self._install(state)
                except Exception as exc:  # noqa: BLE001 - derived data: log, keep serving
                    log.warning("search index not updated: %s", exc)

        self._watch = threading.Thread(target=loop, name="wikimem-index-watch", daemon=True)
        self._watch.start()

    @property
    def ready(self) -> bool:
        """Watched and warmed: a query only checks the index is current, then scores."""
        fast = self._fast
        return (self._watch is not None and fast is not None and fast.warmed
                and fast.searcher is self._searcher)

    def _stale(self) -> bool:
        """The open searcher is missing, behind the index, or was opened without warming."""
        searcher, fast = self._searcher, self._fast
        if searcher is None or fast is None or fast.searcher is not searcher or not fast.warmed:
            return True
        try:
            return not searcher.up_to_date()
        except Exception:  # noqa: BLE001 - the index folder was swapped: reopen
            return True

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.close()

    def _log_signature(self) -> tuple[int, int] | None:
        try:
            st = (self.ws.wiki / "log.md").stat()
            return (st.st_size, st.st_mtime_ns)
        except OSError:
            return None

    def refresh(self, force: bool = False) -> None:
        if self._watch is not None and self._searcher is not None and not force:
            # the watcher (or a compile, or another process) keeps the index current
            if not self._searcher.up_to_date():
                self._reopen()
            return
        now = time.monotonic()
        sig = self._log_signature()
        if (not force and self._searcher is not None and self.fresh_within > 0
                and now - self._checked < self.fresh_within and sig == self._log_stat):
            return
        try:
            report = update_index(self.ws)
        except Exception as exc:
            # an update that had to read a torn segment (a merge): built again, if that is why
            from ..errors import WikimemError
            from .index import repair

            if isinstance(exc, WikimemError) or repair(self.ws) is None:
                raise
            log.warning("search index damaged (%s: %s); rebuilt it", type(exc).__name__, exc)
            self._checked, self._log_stat = now, sig
            self._reopen()
            return
        self._checked, self._log_stat = now, sig
        # another process (or another Engine) may have updated the index since we opened it
        if self._searcher is None or report.changed or not self._searcher.up_to_date():
            self._reopen()

    def _reopen(self, warm: bool = False) -> None:
        self._install(self._open(warm))

    def open_as_is(self) -> bool:
        """Open the index without looking at wiki/ and raw/ first, for a caller that checks them
        beside the query (see search_once). False when there is no index to open."""
        try:
            self._install(self._open(warm=False, build=False))
            self._opened_as = self._identity()
        except Exception:  # noqa: BLE001 - missing, unreadable or swapped away: the caller's usual path
            return False
        return self._opened_as is not None

    def unchanged_since_open(self) -> bool:
        """The index open_as_is opened is still the latest: no commit since, and no rebuild
        (which swaps in a new folder whose generations start again)."""
        try:
            return self._opened_as is not None and self._identity() == self._opened_as
        except Exception:  # noqa: BLE001 - the folder went away mid-swap
            return False

    def _identity(self) -> tuple[int, int, int] | None:
        """(inode, mtime, size) of the open searcher's table of contents while it is the latest
        generation; None once a newer one exists. A commit writes a new file, a rebuild a new
        folder, so an unchanged identity means an unchanged index."""
        if self._searcher is None or not self._searcher.up_to_date():
            return None
        gen = self._searcher.reader().generation()
        st = (index_dir(self.ws) / f"_{self._ix.indexname}_{gen}.toc").stat()
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _open(self, warm: bool, build: bool = True) -> tuple[Any, Any, FastScorer, Any]:
        """The index as it is now: (index, searcher, scorer, docs), warmed if asked;
        built first if there is none (unless `build` is false: then whoosh's error is raised)."""
        from whoosh import index as windex

        from . import mapped

        mapped.install()  # read the segments from their map, not from a copy of each file
        folder = index_dir(self.ws)
        try:
            ix = windex.open_dir(str(folder))
        except Exception:  # noqa: BLE001 - missing or swapped away mid-rebuild: bring it back once
            if not build:
                raise
            update_index(self.ws)
            ix = windex.open_dir(str(folder))
        try:
            searcher = ix.searcher(weighting=weighting())
        except Exception as exc:  # noqa: BLE001 - a segment torn or damaged: derived data, built again once
            if not build:
                raise
            log.warning("search index damaged (%s: %s); rebuilding it", type(exc).__name__, exc)
            update_index(self.ws, rebuild=True, wait=30.0)
            ix = windex.open_dir(str(folder))
            searcher = ix.searcher(weighting=weighting())
        fast = FastScorer(searcher)
        if warm:
            fast.warm()
        parts = read_parts(folder, ("docs",)) or {}
        return ix, searcher, fast, parts.get("docs", {})

    def _install(self, state: tuple[Any, Any, FastScorer, Any]) -> None:
        old = self._searcher
        self._ix, self._searcher, self._fast, self._docs = state
        if old is not None:
            old.close()

    def warm(self) -> None:
        """Open the index and build the scorer's tables now (servers: before the first query)."""
        for _ in self.warm_steps():
            pass

    def warm_steps(self) -> Iterator[None]:
        """`warm`'s work, a step between yields: a server that holds its query lock for each step
        lets the queries that wait go first (mcp_server.Searching)."""
        self.refresh()
        yield
        yield from self._fast_scorer().warm_steps()

    def _newest_entries(self) -> list[int]:
        """The entries of the latest releases (see _latest)."""
        self._latest()
        return self._newest

    def _latest(self) -> set[str]:
        """The files that are the latest release of their folder: the newest of their series
        (the docs' prior 1.0) whose title names the highest version among those of the folder
        (release notes titled two ways, "Acme 0.96 release notes" and "Acme version 1.0 release
        notes", are two series of one folder)."""
        docs = self._docs
        if self._newest_of is not docs:
            from .index import version_of

            best: dict[str, tuple[Any, list[str]]] = {}
            for path in docs.newest() if hasattr(docs, "newest") else []:
                title, _kind, source = docs.get(path, _NO_DOC)[:3]
                if not _RELEASE_TITLE.search(str(title or "")):
                    continue
                folder = (source or path).rsplit("/", 1)[0]
                order = version_of(str(title))
                got = best.get(folder)
                if got is None or order > got[0]:
                    best[folder] = (order, [path])
                elif order == got[0]:
                    got[1].append(path)
            latest = {p for _, paths in best.values() for p in paths}
            found = [d for path in sorted(latest) for d in self._entries_of(path)]
            self._newest_of, self._newest, self._latest_paths = docs, found, latest
        return self._latest_paths

    def _entries_of(self, path: str) -> list[int]:
        """A file's entries in the index (its own and its passages'), none when it is not there."""
        try:
            return list(self._searcher.reader().postings("path", path).all_ids())
        except Exception:  # noqa: BLE001 - TermNotFound: not in this index any more
            return []

    def _opening(self, path: str, entry: Any) -> int | None:
        """The first passage of a page (the entry after its own), or None."""
        return next((d for d in sorted(self._entries_of(path)) if not entry(d)[1]), None)

    def _boilerplate(self, fast: FastScorer, cands: dict[str, list[tuple[float, int]]]) -> set[int]:
        """The candidate passages whose text (numbers aside) BOILERPLATE_FILES files or more among
        the candidates share: what every release note of a series says alike."""
        by_text: dict[str, set[str]] = {}
        entries: dict[str, list[int]] = {}
        # ties to the path (then the passage), not to entry numbers, which differ between builds (window)
        best = heapq.nlargest(BOILERPLATE_READ, ((sc, path, -d) for path, found in cands.items() for sc, d in found))
        for _, path, neg in best:
            d = -neg
            key = boilerplate_key(str(fast.fields(d).get("body") or ""))
            if len(key) < 40:
                continue
            by_text.setdefault(key, set()).add(path)
            entries.setdefault(key, []).append(d)
        return {d for key, paths in by_text.items() if len(paths) >= BOILERPLATE_FILES for d in entries[key]}

    def _one_tree(self) -> bool:
        """raw/ has a page of its own at its top (an index, a README, a SUMMARY.md): one
        documentation tree whose folders are its sections, not a workspace of collections."""
        docs = self._docs
        if self._tree_of is not docs:
            self._tree_of = docs
            self._tree = any(f"raw/{stem}{suffix}" in docs for stem in ROOT_ENTRIES for suffix in ROOT_SUFFIXES)
        return self._tree

    def _first_passage(self, path: str) -> dict[str, Any]:
        """The first passage of a file that matched by its title alone. Read through the file's
        own short posting list: a query on `level` would walk every entry of the index."""
        reader = self._searcher.reader()
        try:
            docnums = list(reader.postings("path", path).all_ids())
        except Exception:  # noqa: BLE001 - whoosh raises TermNotFound for a path it lacks
            return {}
        for docnum in docnums:
            fields = reader.stored_fields(docnum)
            if fields.get("level") == "part":
                return fields
        return {}

    def _passage_at(self, path: str, line: int) -> dict[str, Any]:
        """The stored passage of `path` that holds file line `line` (else its first)."""
        reader = self._searcher.reader()
        try:
            docnums = list(reader.postings("path", path).all_ids())
        except Exception:  # noqa: BLE001 - TermNotFound: not indexed (skipped, or gone)
            return {}
        best: dict[str, Any] = {}
        for docnum in docnums:
            fields = reader.stored_fields(docnum)
            if fields.get("level") != "part":
                continue
            lines = fields.get("lines") or []
            if not best or (lines and lines[0][1] <= line):
                best = fields
        return best

    def passages(self, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None, *,
                 refresh: bool = True) -> list[Passage]:
        """The best passage of each of the `limit` best files; the index is brought up to date
        first unless `refresh` is false (the caller has checked, or checks beside the query)."""
        if kinds:
            from .analysis import KINDS

            bad = [k for k in kinds if k not in KINDS]
            if bad:
                from ..errors import UsageError

                raise UsageError(f"unknown kind {', '.join(bad)}; valid: {', '.join(KINDS)}")
        parsed = parse_query(query)
        if not parsed.terms and not parsed.phrases or limit <= 0:
            return []
        if refresh:
            self.refresh()
        searcher = self._searcher
        recency = RECENCY_CURRENT if parsed.current else RECENCY
        want = max(limit * 8, 60)
        parts: dict[str, tuple[float, int]] = {}  # path -> (score, entry) of its best passage
        heads: dict[str, float] = {}
        kind_of: dict[str, str] = {}
        # the ranking whoosh gives build_query's query, with the words scored by FastScorer
        # and the quoted phrases (if any) by PhraseBonus
        fast = self._fast_scorer()
        # each word's document frequency, read once: it picks the words and weighs them
        df = {t: searcher.doc_frequency("body", t) for t in parsed.terms}
        rare, common = select_terms(parsed, lambda _field, t: df[t], searcher.doc_count())
        if parsed.latest and searcher.doc_count() <= LARGE_INDEX:
            # "the latest release": its page says "release" and the product's name, the words every
            # release says; they pick candidates too, or the newest release is never among them
            rare, common = rare + common, []
        if parsed.subject and common:
            # "what does DBAPI stand for": the words of what it asks about pick candidates, however
            # common, as its other words ("stand", "docs") would otherwise do alone
            named = set(parsed.subject_terms)
            rare, common = rare + [t for t in common if t in named], [t for t in common if t not in named]
        phrases = any(len(p) > 1 for p in parsed.phrases)
        if not rare and not phrases:
            rare, common = common, []
        if not rare and not phrases:
            return []
        # the phrases' candidates first: their words' title and headings postings, read unboosted
        # for them, then serve the words' boosted scores (FastScorer._scores)
        checks = phrase_checks(fast, parsed) if phrases else []
        scores = fast.accumulate(rare)
        # what the quoted phrases add: read now, for every candidate, when entries outside the
        # window count (the latest releases'); else while the window is taken, only for the
        # candidates that may enter it (see read_phrases)
        unread: list[tuple[float, int]] = []
        bonus: PhraseBonus | None = None
        if phrases and parsed.latest:
            eager = PhraseBonus(checks)
            for docnum in eager.of:
                added = eager.add(docnum)
                if added is not None:
                    scores[docnum] = scores.get(docnum, 0.0) + added
        elif phrases:
            bonus = PhraseBonus(checks, scores, [fast.term_total(t) for t in common])
            allowed = fast.kind_entries(kinds) if kinds else None
            unread = sorted((bonus.most(d) * PHRASE_BOUND, -d) for d in bonus.of if allowed is None or d in allowed)
        if common:
            fast.accumulate(common, into=scores, only=True)
        if kinds:
            allowed = fast.kind_entries(kinds)
            scores = {d: sc for d, sc in scores.items() if d in allowed}
        entry = fast.entry
        # which of the question's words an entry holds, as a bit mask, and what each word
        # weighs (its idf): a passage that holds the rare words of the question beats one
        # that repeats its common words (see coordination)
        used = [*rare, *common]
        totals = [fast.term_total(t) for t in used]
        count = searcher.doc_count_all()
        weights = [math.log((count + 1) / (df[t] + 1)) + 1 for t in used]
        masks: dict[int, int] = {}

        def mask(docnum: int) -> int:
            got = masks.get(docnum)
            if got is None:
                got = masks[docnum] = sum(1 << i for i, tot in enumerate(totals) if docnum in tot)
            return got

        head_mask: dict[str, int] = {}
        head_entry: dict[str, int] = {}
        part_cands: dict[str, list[tuple[float, int]]] = {}
        while True:
            if unread and bonus is not None:
                read_phrases(scores, unread, bonus, want)
            # best first, ties to the lower entry number, as whoosh's collector orders them
            top = window(scores, want)
            if parsed.latest:
                # the newest release's own entries are candidates however the window fell
                seen = {-neg for _, neg in top}
                top += [(scores[d], -d) for d in self._newest_entries() if d in scores and d not in seen]
            for score, neg in top:
                docnum = -neg
                path, is_doc, kind = entry(docnum)
                kind_of[path] = kind
                if is_doc:
                    heads[path] = score
                    head_mask[path] = mask(docnum)
                    head_entry[path] = docnum
                else:
                    part_cands.setdefault(path, []).append((score, docnum))
            # a long document can fill the window with its own passages; widen until enough files
            if len(kind_of) >= limit or len(top) < want or want >= 5000:
                break
            want *= 4
            heads.clear()
            head_mask.clear()
            head_entry.clear()
            part_cands.clear()
        coord = coordination(weights)
        # "the latest release": the newest release's own content first; text that many releases
        # repeat alike (numbers aside) is boilerplate, not what the latest one says
        repeated: set[int] = set()
        latest: set[str] = set()
        if parsed.latest:
            repeated = self._boilerplate(fast, part_cands)
            latest = self._latest()
            # a question that names the release ("the latest Acme release") asks for each
            # changelog's newest release, whose opening (its version and date) may hold none of
            # the question's words: it ranks as the best passage found
            # (ties to the path, then the passage: not to entry numbers, which differ between builds)
            found = max(((sc, path, -d) for path, cands in part_cands.items() for sc, d in cands), default=None)
            if parsed.release and found is not None:
                best_score, best_entry = found[0], -found[2]
                best_mask = mask(best_entry)
                for path, first in fast.newest_release().items():
                    masks[first] = best_mask
                    cands = part_cands.setdefault(path, [])
                    cands[:] = [c for c in cands if c[1] != first] + [(best_score, first)]
                    kind_of.setdefault(path, entry(first)[2])
                    repeated.discard(first)
        # a question whose words belong to one collection of several ranks that collection's
        # passages first: the others' count OTHER_COLLECTION
        others: Any = None
        if len(rare) and not self._one_tree():
            names, of, sizes = fast.collections()
            if len(names) >= 2:
                asked = asked_collection(totals[:len(rare)], weights[:len(rare)], of, sizes)
                if asked:
                    others = (of, asked)
        eras = fast.eras()
        # the pages titled with what the question asks the meaning of ("what is X")
        defined = {p for p in kind_of if parsed.subject
                   and title_key(str(self._docs.get(p, _NO_DOC)[_TITLE] or "")) == parsed.subject}
        for path, cands in part_cands.items():
            hm = head_mask.get(path, 0)
            # in a changelog, a newer release's entry beats an older one's (strongly when the
            # question asks what holds now)
            parts[path] = max(((sc * coord(mask(d) | hm) * (1 + recency * eras.get(d, 10) / 10) / (1 + recency)
                                * (BOILERPLATE if d in repeated else 1.0)
                                * (OLDER_RELEASE if parsed.latest and eras.get(d, 10) < 10 else 1.0), d)
                               for sc, d in cands), key=lambda x: (x[0], -x[1]))
            if path in defined:
                # "what is X": the page titled X answers it, with its opening (its definition), not
                # the passage that repeats X most
                parts[path] = (parts[path][0], self._opening(path, entry) or min(d for _, d in cands))

        def final(path: str) -> float:
            if path in parts:
                base = parts[path][0] + heads.get(path, 0.0) * coord(head_mask.get(path, 0) | mask(parts[path][1]))
            else:
                base = heads.get(path, 0.0) * coord(head_mask.get(path, 0))
            factor = 1.0
            doc = self._docs.get(path, _NO_DOC)
            prior = doc[_PRIOR]
            if parsed.latest and path not in latest and (
                    prior is not None or _RELEASE_TITLE.search(str(doc[_TITLE] or ""))):
                factor = OLDER_RELEASE  # a release that is not the latest of its folder
            if others is not None:
                of, asked = others
                entry_of = parts[path][1] if path in parts else head_entry.get(path)
                if entry_of is not None and of[entry_of] not in (0, asked):
                    factor = OTHER_COLLECTION
            return base * factor * KIND_PRIOR.get(kind_of[path], 1.0) * (1 + recency * (prior or 0.0))

        by_path = {p: final(p) for p in kind_of}
        if defined and by_path:
            # "what is X": the pages titled X come first, whatever other words the question has
            best = max(by_path.values())
            for p in defined:
                by_path[p] = max(by_path[p], best) * DEFINED_BY_TITLE
        if DUPLICATE_DEMOTE < 1:
            demote_duplicates(by_path, lambda page: self._docs.get(page, _NO_DOC)[_SOURCE])
        ranked = with_current_sources(
            sorted(((sc, p) for p, sc in by_path.items()), key=lambda sp: (-sp[0], sp[1])), self._docs, limit)
        stems = set(parsed.terms) | {t for p in parsed.phrases for t in p}
        term_weights = dict(zip(used, weights, strict=True))
        out = []
        for score, path, at in ranked:
            if at is not None:
                fields = self._passage_at(path, at)
                kind_of.setdefault(path, str(self._docs.get(path, _NO_DOC)[_KIND] or "raw"))
            elif kind_of[path] == "fact" and (parsed.current or not NUMBER.search(query)):
                # what a timeline says is current is its first passage, whatever else matched
                # (a question that names no release asks about now)
                fields = fast.fields(fast.first_part[path]) if path in fast.first_part else self._first_passage(path)
            elif path in parts:
                fields = fast.fields(parts[path][1])
            elif path in fast.first_part:
                fields = fast.fields(fast.first_part[path])
            else:
                fields = self._first_passage(path)
            snippet, line = make_snippet(fields.get("body") or "", stems, fields.get("lines") or [], at=at,
                                         weights=term_weights)
            heading = fields.get("headings") or ""
            title = str(self._docs.get(path, _NO_DOC)[_TITLE] or path)
            out.append(Passage(
                Hit(path, title, kind_of[path], score, snippet or heading or title),
                line, fields.get("anchor") or "L", heading, fields.get("body") or "",
            ))
        return out


def window(scores: dict[int, float], want: int) -> list[tuple[float, int]]:
    """The `want` best entries as (score, minus the entry's number), best first, with every entry
    that ties the last of them: entry numbers follow the order the index was written in, which
    differs from one build of the same files to the next (the seed and the compile share pages,
    whoosh's parallel writer shares batches), so a window cut between equal scores would let the
    build decide which of them a question finds."""
    top = heapq.nlargest(want + 1, zip(scores.values(), map(operator.neg, scores), strict=True))
    if len(top) <= want or top[want][0] != top[want - 1][0]:
        return top[:want]
    floor = top[want - 1][0]
    taken = {neg for _, neg in top[:want]}
    return [*top[:want], *sorted(((sc, -d) for d, sc in scores.items() if sc == floor and -d not in taken), reverse=True)]


def demote_duplicates(by_path: dict[str, float], source_of: Callable[[str], str | None]) -> None:
    """A source page and the raw file it was compiled from (`source_of`) say the same thing: the
    better of the two keeps its place and the other moves down (DUPLICATE_DEMOTE), so other
    documents get the next places. Each pair is weighed by the scores before any move, and a
    path moves down once however many pairs it is the lower of (a long source's page and its
    parts): moved in turn, a raw file fell further with each page weighed, in the order the
    window listed them, which differed from one build of the index to the next."""
    lower = set()
    for page, score in by_path.items():
        raw = source_of(page)
        if raw is not None and raw in by_path:
            lower.add(raw if by_path[raw] <= score else page)
    for path in lower:
        by_path[path] *= DUPLICATE_DEMOTE


# what bounds an entry's score with its phrases' bonus is raised by this much: the bound is
# exact (positive scores, rounded sums that never fall), this keeps it so whatever the rounding
PHRASE_BOUND = 1.0 + 1e-9


def read_phrases(scores: dict[int, float], unread: list[tuple[float, int]], bonus: PhraseBonus, want: int) -> None:
    """Add the quoted phrases' bonus to every entry that may be among the `want` best: `unread`
    holds (the most the entry may score, minus its number), best last, for the entries whose
    candidates' text was not read; it is read, a window's worth at a time, while the best of
    them could reach the window as it stands. The window only rises as bonuses are added, so an
    entry left unread cannot be in it: the window, and every score in it, are those of reading
    every candidate."""
    while unread:
        top = heapq.nlargest(want, zip(scores.values(), map(operator.neg, scores), strict=True))
        floor = top[-1] if len(top) >= want else None
        if floor is not None and unread[-1] < floor:
            return
        for _ in range(min(want, len(unread))):
            if floor is not None and unread[-1] < floor:
                break
            docnum = -unread.pop()[1]
            got = bonus.score(docnum)
            if got is not None:
                scores[docnum] = got


def with_current_sources(ranked: list[tuple[float, str]], docs: Any,
                         limit: int) -> list[tuple[float, str, int | None]]:
    """The top `limit` of (score, path), where a fact page that ranks well brings the passage
    stating its current value right after it: the page answers "what is it now", the source
    passage is the evidence an agent quotes. (score, path, line): line is set for a passage
    brought this way."""
    if not ranked:
        return []
    best = ranked[0][0]
    out: list[tuple[float, str, int | None]] = []
    placed: set[str] = set()
    for score, path in ranked:
        if len(out) >= limit:
            break
        if path in placed:
            continue
        out.append((score, path, None))
        placed.add(path)
        current = docs.get(path, _NO_DOC)[_CURRENT] if path.startswith("wiki/facts/") else None
        if current and score >= 0.75 * best and len(out) < limit:
            raw, _, anchor = str(current).partition("#L")
            if raw not in placed and raw in docs:
                out.append((score, raw, int(anchor) if anchor.isdigit() else 1))
                placed.add(raw)
    return out


ENGINES: dict[Path, Engine] = {}


def engine(ws: Workspace, *, fresh_within: float = 0.0) -> Engine:
    """The engine for a workspace, kept for the life of the process."""
    eng = ENGINES.get(ws.root)
    if eng is None:
        eng = ENGINES[ws.root] = Engine(ws, fresh_within=fresh_within)
    eng.fresh_within = fresh_within
    return eng


def search(ws: Workspace, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Hit]:
    """Rank wiki pages and raw sources for a question or keywords; brings the index up to date first."""
    return [p.hit for p in engine(ws).passages(query, limit, kinds)]


def search_passages(ws: Workspace, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Passage]:
    """As `search`, with the line and passage text that query answers and context packs cite."""
    return engine(ws).passages(query, limit, kinds)


def search_once(ws: Workspace, query: str, limit: int = 10, kinds: tuple[str, ...] | None = None) -> list[Passage]:
    """search_passages for a process that searches once and exits (`wikimem search`).

    When a core is free, the check that the index is current (40 ms at 10k sources without a
    walk, see search.unchanged; a fifth of a second with one) runs in a child process while
    this one imports whoosh, opens the index and runs the query: the answer is the one
    search_passages gives, since it is kept only when the check found every file as the index
    has it and the index opened is still the latest. Otherwise (a file changed, another process
    updated the index, or no index yet) the index is brought up to date and the query runs
    again, as search_passages would have run it. With no core free the two processes would
    share one, and the fork and the child's imports would only add to it: then the check runs
    first, in this process."""
    wait = _check_beside(ws) if _core_free() else None
    if wait is None:
        return search_passages(ws, query, limit, kinds)
    eng = engine(ws)
    found: list[Passage] | None = None
    try:
        if eng.open_as_is():
            found = eng.passages(query, limit, kinds, refresh=False)
    finally:
        current = wait()
    kept = found is not None and current is True and eng.unchanged_since_open()
    log.debug("index checked beside the query: %s", "current" if kept else "bringing it up to date first")
    if found is not None and kept:
        return found
    return eng.passages(query, limit, kinds)


def _core_free() -> bool:
    """A core is free for a second process: fewer processes ran, on average over the last
    minute, than this one may use, by at least one."""
    try:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return cores - os.getloadavg()[0] >= 1.0
    except OSError:
        return False


def _check_beside(ws: Workspace) -> Any:
    """Start index.is_current(ws) in a forked child; return a function that waits for its
    answer (True, False, or None when it had none). None when forking is not safe here: with
    other threads running, the child could inherit a lock one of them holds."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: one byte of answer, and never back into the caller's code
        try:
            os.close(read)
            answer = is_current(ws)
            os.write(write, b"-" if answer is None else b"y" if answer else b"n")
        finally:
            os._exit(0)
    os.close(write)

    def wait() -> bool | None:
        try:
            with open(read, "rb") as pipe:
                got = pipe.read(1)
        finally:
            os.waitpid(pid, 0)
        return {b"y": True, b"n": False}.get(got)

    return wait


@contextlib.contextmanager
def opened(ws: Workspace, *, fresh_within: float = 0.0) -> Iterator[Engine]:
    eng = Engine(ws, fresh_within=fresh_within)
    try:
        yield eng
    finally:
        eng.close()

"""From a question to scored entries: its terms and intent, BM25F as whoosh computes it (done
faster by FastScorer), and the coordination factor that favours the passage holding the
question's rare words."""

from __future__ import annotations

import bisect
import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from ..lexicon import QUERY_STOP
from .analysis import KINDS, NEWEST_ERA, analyzer

# query-time field weights (BM25F per field, summed): the words a page is *about*
# (title, aliases, headings) say more than a passing mention in the body
FIELD_BOOSTS = {"title": 3.0, "aliases": 2.5, "headings": 2.0, "where": 1.2, "body": 1.0}


# source and answer pages summarize and cite: prefer them a little over the raw text when
# both match. Concept pages quote a sentence or two from many sources, so they match many
# questions broadly; they rank below the specific page unless they match clearly better.
KIND_PRIOR = {"source": 1.15, "concept": 0.7, "answer": 1.2, "raw": 1.0}


DUPLICATE_DEMOTE = 0.5  # score factor for the lower of a source page and its own raw file
SUBJECT_WORDS = 3  # what "what is X" asks the meaning of is a name or a term of at most this many words
DEFINED_BY_TITLE = 1.05  # the page titled with what a question asks the meaning of, over the best other


COORD_POWER = 1.5  # how much the share of the question's words held counts (see coordination)


RECENCY = 0.15  # bonus for the newest member of a series


RECENCY_CURRENT = 1.0  # ... when the question asks for the current / latest value


# a word in more than this share of index entries only adds to passages that match a rarer one
COMMON_FRACTION = 0.08


POSTINGS_BUDGET = 4000  # passages the rarest words of a question may pick as candidates


LARGE_INDEX = 50_000  # entries; above it common words are not scored at all (see build_query)


CURRENT_WORDS = {"current", "currently", "latest", "newest", "now", "today", "still", "recent", "nowadays"}


# "the latest release", "the newest version": the question asks for the newest member of a series
# of releases and what it says, not for what every release says alike
RELEASE_WORDS = {"release", "releases", "released", "version", "versions", "changelog", "changes"}
LATEST = {"latest", "newest", "recent", "last", "current"}
# a question that asks what something is: "What is an event dict in structlog terminology?",
# "What does DBAPI stand for in the docs?", "Define rollback"; a page titled with it answers it
_DEFINES = re.compile(r"^\s*(?:what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(?P<a>.+?)|what\s+does\s+(?P<b>.+?)\s+(?:stand\s+for|mean)"
                      r"|(?:define|definition\s+of|meaning\s+of)\s+(?P<c>.+?))"
                      r"(?:\s+(?:in|for)\s+(?:the\s+)?[\w .-]+?)?\s*[?.!]*\s*$", re.I)


def title_key(text: str) -> str:
    """A title or a question's subject as compared: lowercase words, code marks and a plural's
    "s" dropped ("`Event dicts`" and "event dict" are one)."""
    words = re.findall(r"[\w.-]+", text.lower().replace("()", ""))
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


# "the latest release", "the newest Acme release", "the most recent release": the release itself
NAMED_RELEASE = re.compile(r"\b(?:latest|newest|last|most\s+recent)\s+(?:[\w.-]+\s+){0,2}?releases?\b", re.I)
OLDER_RELEASE = 0.3  # ... then an older release's pages and passages count this much
BOILERPLATE = 0.3  # ... and a passage that many releases repeat word for word (numbers aside)


# how questions ask for a bound that pages call a minimum: the word the pages use is searched too
INTENT_SYNONYMS = {"oldest": "minimum", "earliest": "minimum", "lowest": "minimum"}


_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class ParsedQuery:
    terms: tuple[str, ...]  # analyzed (stemmed) terms, stop words dropped
    phrases: tuple[tuple[str, ...], ...]
    current: bool  # asks for the current value: favour the newest in a series
    latest: bool = False  # asks for the latest release itself: its pages and passages first
    release: bool = False  # names it: "the latest release", "the newest Acme release"
    subject: str = ""  # what a question asks the meaning of ("what is an event dict"), as title_key writes it
    subject_terms: tuple[str, ...] = ()  # its analysed terms


def parse_query(text: str) -> ParsedQuery:
    """Natural language in, terms out: every content word counts, none is required."""
    ana = analyzer()
    phrases = tuple(
        tuple(t.text for t in ana(p)) for p in _PHRASE.findall(text) if any(True for _ in ana(p))
    )
    words = re.findall(r"[\w.]+", text.lower())
    current = any(w in CURRENT_WORDS for w in words)
    latest = any(w in LATEST for w in words) and any(w in RELEASE_WORDS for w in words)
    kept = [w for w in re.findall(r"\S+", text) if w.lower().strip("?!.,;:\"'()`") not in QUERY_STOP]
    if current:
        # "now", "currently": how the question asks, not what it asks about (they would match
        # every passage that says "now supports")
        content_words = [w for w in kept if w.lower().strip("?!.,;:\"'()`") not in CURRENT_WORDS]
        kept = content_words or kept
    kept += [INTENT_SYNONYMS[w.lower().strip("?!.,;:\"'()`")] for w in kept
             if w.lower().strip("?!.,;:\"'()`") in INTENT_SYNONYMS]
    terms = [t.text for t in ana(" ".join(kept))]
    if not terms:  # a query of only stop words: search them rather than nothing
        from whoosh.analysis import StandardAnalyzer

        terms = [t.text for t in StandardAnalyzer(stoplist=None)(text)]
    seen: dict[str, None] = {}
    for term in terms:
        seen.setdefault(term, None)
    defines = _DEFINES.match(text)
    asked = next(g for g in defines.groups() if g) if defines else ""
    if len(asked.split()) > SUBJECT_WORDS or "'s " in asked or "’s " in asked \
            or re.search(r"\s(?:for|of|in|to|with|by|on|used|made)$", asked, re.I):
        # "what is the recommended way now to find out ...", "what is Black's default line length",
        # "what is flask.g used for": a question, a thing's setting or its use, not a name
        asked = ""
    return ParsedQuery(tuple(seen), phrases, current, latest, latest and bool(NAMED_RELEASE.search(text)),
                       title_key(asked), tuple(t.text for t in ana(asked)) if asked else ())


def weighting() -> Any:
    """BM25F without length normalization for the doc-level fields: only doc entries have a
    title, so the average title length over all entries is tiny and normal BM25 would
    crush every title match."""
    from whoosh.scoring import BM25F

    return BM25F(title_B=0.0, aliases_B=0.0, where_B=0.0)


def select_terms(parsed: ParsedQuery, doc_frequency: Any = None, doc_count: int = 0) -> tuple[list[str], list[str]]:
    """(rare, common): the words that pick candidates and the words that only add to them
    (see build_query)."""
    common: list[str] = []
    rare = list(parsed.terms)
    if doc_frequency is not None and doc_count > 200:
        cutoff = COMMON_FRACTION * doc_count
        df = {t: doc_frequency("body", t) for t in parsed.terms}
        common = [t for t in parsed.terms if df[t] > cutoff]
        rare = [t for t in parsed.terms if t not in common]
        if common and not any(df[t] for t in rare):
            # words no entry holds pick nothing: with only them among the rare words, a question
            # whose other words are all common found no answer at all
            rare, common = [*rare, *common], []
        # bound the candidates on a large wiki: the rarest words pick the passages, up to a
        # budget of postings. On a small wiki every word fits and this changes nothing.
        budget, total = POSTINGS_BUDGET, 0
        picked: list[str] = []
        for t in sorted(rare, key=lambda t: df[t]):
            if picked and total + df[t] > budget:
                break
            picked.append(t)
            total += df[t]
        rare = [t for t in rare if t in picked]
        if doc_count > LARGE_INDEX:
            # scoring the common words' long posting lists, even only for the candidates,
            # costs four times the rest of the query on a 10k-source wiki (bench/search_speed.py)
            common = []
    return rare, common


# candidates checked for a quoted phrase, per field: the best-scoring entries holding all its words
PHRASE_CANDIDATES = 1000
PHRASE_FIELDS = (("body", 2.0), ("title", 4.0), ("headings", 3.0))
_SCORED_TWICE = frozenset(f for f, _ in PHRASE_FIELDS if FIELD_BOOSTS.get(f, 1.0) != 1.0)


class PhraseCheck:
    """What a quoted phrase of two words or more may add to a question's entries, and what it
    does add once its candidates are read.

    The index keeps no word positions (they were a third of the index build, and only quoted
    phrases used them): the entries that hold all the phrase's words (its candidates, the best
    PHRASE_CANDIDATES of each field) are scored as whoosh scores an And of the words (the sum of
    their BM25F scores, from the fast scorer's posting lists, not whoosh's matchers), times the
    field's weight, and that is added where their stored text, analysed as it was indexed, has
    the words in a row. A candidate's text is read when `held` is first asked about it, and the
    answer kept for the searcher's life (FastScorer.phrase_check), as the words' scores are."""

    def __init__(self, fast: FastScorer, phrase: tuple[str, ...]) -> None:
        self.fast, self.phrase = fast, phrase
        # (field, entry, what it adds), fields in PHRASE_FIELDS' order, each best first with ties
        # to the lower entry number, as whoosh's collector keeps them
        self.candidates: list[tuple[str, int, float]] = []
        for field, boost in PHRASE_FIELDS:
            lists = [fast.field_scores(field, t) for t in phrase]
            smallest = min(lists, key=len)
            if not smallest:
                continue
            # the entries in every list (a set's intersection), as (minus the score, entry): in
            # order, best first with ties to the lower entry number
            anded = sorted((-sum(scores[d] for scores in lists), d)
                           for d in set(smallest).intersection(*(s for s in lists if s is not smallest)))
            self.candidates += [(field, d, boost * -score) for score, d in anded[:PHRASE_CANDIDATES]]
        self._held: dict[tuple[str, int], bool] = {}
        self._unmade: dict[str, tuple[None, ...]] = {}  # words that cannot make the phrase's terms

    def held(self, field: str, docnum: int) -> bool:
        """Whether the entry's text in `field` has the phrase's words in a row."""
        got = self._held.get((field, docnum))
        if got is None:
            text = self.fast.fields(docnum).get(field)
            got = self._held[(field, docnum)] = isinstance(text, str) and holds_phrase(text, self.phrase, self._unmade)
        return got


def phrase_checks(fast: FastScorer, parsed: ParsedQuery) -> list[PhraseCheck]:
    """The question's quoted phrases of two words or more, each as a PhraseCheck."""
    return [fast.phrase_check(phrase) for phrase in parsed.phrases if len(phrase) >= 2]


class PhraseBonus:
    """What a question's quoted phrases add to each entry, read lazily: `most` bounds an entry's
    score without reading its text, `score` reads it. The scores are those of adding every
    held candidate in turn, phrase after phrase, as phrase_scores adds them, to the entry's
    score from the question's words (`scores`, as it is when this is made), then the common
    words' (`common`: term_total of each, added only to the entries scored so far, as
    FastScorer.accumulate adds them)."""

    def __init__(self, checks: list[PhraseCheck], scores: dict[int, float] | None = None,
                 common: list[dict[int, float]] | None = None) -> None:
        self.of: dict[int, list[tuple[PhraseCheck, str, float]]] = {}
        for check in checks:
            for field, d, score in check.candidates:
                self.of.setdefault(d, []).append((check, field, score))
        scores = scores or {}
        self.base = {d: scores[d] for d in self.of if d in scores}
        self.common = common or []

    def add(self, docnum: int) -> float | None:
        """What the phrases add to the entry, None when none of its candidates holds."""
        total, any_held = 0.0, False
        for check, field, score in self.of[docnum]:
            if check.held(field, docnum):
                total += score
                any_held = True
        return total if any_held else None

    def most(self, docnum: int) -> float:
        """The most the entry may score, its text unread: what it scores if all its candidates
        hold, no less than it does (the scores are positive, and a rounded sum never falls when
        a term is added or grows)."""
        total = 0.0
        for _, _, score in self.of[docnum]:
            total += score
        return self._with_common(self.base.get(docnum, 0.0) + total, docnum)

    def score(self, docnum: int) -> float | None:
        """The entry's score, its text read; None when no candidate holds (its score is then
        the words' alone, already in place)."""
        added = self.add(docnum)
        return None if added is None else self._with_common(self.base.get(docnum, 0.0) + added, docnum)

    def _with_common(self, score: float, docnum: int) -> float:
        for scores in self.common:
            got = scores.get(docnum)
            if got is not None:
                score += got
        return score


def phrase_scores(fast: FastScorer, parsed: ParsedQuery) -> dict[int, float]:
    """A quoted phrase of two words or more scores again, in the body, title or headings (see
    PhraseCheck): entry -> what the question's phrases add to it, every candidate read."""
    out: dict[int, float] = {}
    for check in phrase_checks(fast, parsed):
        for field, d, score in check.candidates:
            if check.held(field, d):
                out[d] = out.get(d, 0.0) + score
    return out


def holds_phrase(text: str, phrase: tuple[str, ...], others: dict[str, tuple[None, ...]] | None = None) -> bool:
    """Whether the analysed text has the phrase's terms at consecutive positions, as the
    analyzer numbers them (each term it keeps one after the one before). `others`: the words
    found unable to make the phrase's terms in the texts checked before (Analyzer.terms_for)."""
    return bool(analyzer().in_a_row(text, phrase, others))


def build_query(parsed: ParsedQuery, doc_frequency: Any = None, doc_count: int = 0) -> Any:
    """Every content word may match (OR), in any field, with the field's weight.

    Words found in a large share of passages (a product's name in its own release notes) only add to the
    score of passages that match a rarer word too (whoosh's AndMaybe): they rarely decide
    anything, and scoring their long posting lists is most of the cost of a query. On a
    large wiki the candidates are bounded too: the rarest words pick them, up to a budget of
    postings, and the rest of the words are left out (pure-Python scoring costs about a
    microsecond a posting; a 10k-source wiki has lists of 20k+).
    """
    from whoosh import query as Q

    def clauses(terms: Iterable[str]) -> list[Any]:
        return [Q.Term(f, t, boost=b) for t in terms for f, b in FIELD_BOOSTS.items()]

    def either(items: list[Any], matcher: int) -> Any:
        if len(items) == 1:
            return items[0]
        query = Q.Or(items)
        query.matcher_type = matcher
        return query

    rare, common = select_terms(parsed, doc_frequency, doc_count)
    main = clauses(rare)  # quoted phrases are scored apart (phrase_scores)
    if not main:  # only common words: score them all
        main, common = clauses(common), []
    if not main:
        return None
    # on a small index the words score into arrays (3x faster than whoosh's tree of union
    # matchers); the array matcher walks the whole range of entries, though, so on a large
    # index the tree is faster (105 vs 195 ms at 181k entries)
    matcher = Q.Or.ARRAY_MATCHER if doc_count <= LARGE_INDEX else Q.Or.DEFAULT_MATCHER
    query = either(main, matcher)
    if common:
        query = Q.AndMaybe(query, either(clauses(common), matcher))
    return query


# a question whose words belong to one collection of a workspace of several (a book beside release
# notes): the other collections' passages count this much (see asked_collection)
OTHER_COLLECTION = 0.5
ASKED_SHARE = 0.6  # the share of the question's weight that must belong to one collection


def asked_collection(postings: list[dict[int, float]], weights: list[float], of: Any, sizes: list[int]) -> int:
    """The collection a question asks about (its number in `sizes`, 1-based), or 0 for none.

    A word belongs to a collection by how densely the collection uses it: its entries there
    over the collection's entries, against the same in the others (a name said only in one
    book's chapters belongs to that book; "version", said everywhere, to none). The question
    belongs to the collection that holds ASKED_SHARE of its words' weight (their idf) so. A
    collection's own name is such a word."""
    total = 0.0
    share = [0.0] * (len(sizes) + 1)
    for found, weight in zip(postings, weights, strict=True):
        counts = [0] * (len(sizes) + 1)
        for d in found:
            counts[of[d]] += 1
        density = [counts[c] / sizes[c - 1] if sizes[c - 1] else 0.0 for c in range(1, len(sizes) + 1)]
        spread = sum(density)
        if not spread:
            continue
        total += weight
        for c, value in enumerate(density, 1):
            share[c] += weight * value / spread
    if not total:
        return 0
    best = max(range(1, len(sizes) + 1), key=lambda c: share[c])
    return best if share[best] >= ASKED_SHARE * total else 0


_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def boilerplate_key(text: str) -> str:
    """A passage's words with its numbers as one mark: what release notes repeat from release to
    release ("After making the deprecation warning fixes, your app should be compatible with
    Acme 5.0.")."""
    return " ".join(_DIGITS.sub("#", text.lower()).split())[:300]


def coordination(weights: list[float]) -> Any:
    """mask -> factor in (0, 1]: the share of the question's weight (each word's idf) that an
    entry holds, to the power COORD_POWER. BM25 sums what matches, so a passage that says
    "version" and "minimum" five times can beat the one sentence that names the asked-for
    platform; weighing by the words held puts the rare, telling words first."""
    total = sum(weights) or 1.0
    cache: dict[int, float] = {}

    def factor(mask: int) -> float:
        got = cache.get(mask)
        if got is None:
            held = sum(w for i, w in enumerate(weights) if mask >> i & 1)
            got = cache[mask] = (held / total) ** COORD_POWER if mask else 1.0
        return got

    return factor


class FastScorer:
    """BM25F exactly as whoosh's `weighting()` scores it, for the plain term queries
    `build_query` makes (an Or of field-boosted terms, optionally AndMaybe common words).

    whoosh scores a posting at a time through a tree of Python matchers, about 5 µs each:
    30 ms a question at 10k sources. Here each (field, term) posting list is read a block
    at a time and scored in one comprehension against the field lengths, decoded once per
    searcher, then summed into a dict; lists are cached for the searcher's life, so a word
    seen before costs a dict merge. A quoted phrase's words are scored here too (phrase_scores).
    """

    # scored postings kept across queries, per field and per word (about 100 bytes each):
    # past this the caches start over
    CACHE_POSTINGS = 1_500_000

    ENTRY_PATHS = 100  # paths read for the entry tables between a warm-up's yields (a few ms)
    TABLES_FORMAT = 2  # of the entry tables kept in the index's folder (_kept_tables): bump when they change

    def __init__(self, searcher: Any):
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
        from whoosh.util.numeric import byte_to_length

        self.searcher = searcher
        self.leaves = [(s.reader(), offset) for s, offset in searcher.leaf_searchers()]
        self._offsets = [offset for _, offset in self.leaves]
        self._stored_columns: list[Any] | None = None
        self._lenfield, self._lencolumn = _lenfield, LENGTHS_COLUMN
        self._byte_len = [float(byte_to_length(b)) or 1.0 for b in range(256)]  # a length of 0 scores as 1
        self._lengths: dict[str, list[float]] = {}
        self._length_bytes: dict[str, bytes | None] = {}
        self._cache: dict[tuple[str, str, float], dict[int, float]] = {}
        self._postings: dict[tuple[str, str], tuple[list[int], list[float]]] = {}  # see _scores
        self._cached = 0
        self._totals: dict[str, dict[int, float]] = {}
        self._weighting = searcher.weighting
        self._paths: list[str] | None = None
        self._levels: bytearray | None = None
        self._kinds: list[str] | None = None
        self.first_part: dict[str, int] = {}  # path -> its first passage's entry
        self._entry_cache: dict[int, tuple[str, bool, str]] = {}
        self._fields: dict[int, dict[str, Any]] = {}
        self._kind_sets: dict[tuple[str, ...], set[int]] = {}
        self._phrases: dict[tuple[str, ...], PhraseCheck] = {}
        self._eras: dict[int, int] | None = None
        self._collections: tuple[list[str], Any, list[int]] | None = None

    def _column(self, reader: Any, field: str) -> Any:
        perdoc = getattr(reader, "_perdoc", None)
        return perdoc._cached_reader(self._lenfield(field), self._lencolumn) if perdoc is not None else None

    def length_bytes(self, field: str) -> bytes | None:
        """Every entry's length in `field` as whoosh keeps it, a byte each (`_byte_len` decodes
        one); None when a segment's reader keeps no columns."""
        if field not in self._length_bytes:
            parts: list[bytes] | None = []
            for reader, _ in self.leaves:
                if parts is None or getattr(reader, "_perdoc", None) is None:
                    parts = None
                    continue
                column = self._column(reader, field)
                # a segment none of whose entries has the field keeps no column: whoosh gives each
                # entry the default length, which scores as a zero byte does (as 1). Asking
                # whoosh entry by entry looks for the column's file each time
                parts.append(bytes(reader.doc_count_all()) if column is None
                             else column_bytes(column, reader.doc_count_all()))
            self._length_bytes[field] = b"".join(parts) if parts is not None else None
        return self._length_bytes[field]

    def lengths(self, field: str) -> list[float]:
        """Every entry's length in `field`, as whoosh's scorer sees it (one byte, decoded)."""
        got = self._lengths.get(field)
        if got is None:
            table = self._byte_len
            raw = self.length_bytes(field)
            if raw is not None:
                got = list(map(table.__getitem__, raw))
            else:
                got = []
                for reader, _ in self.leaves:
                    count = reader.doc_count_all()
                    column = self._column(reader, field)
                    if column is None:
                        got.extend(float(reader.doc_field_length(d, field, 1) or 1) for d in range(count))
                    else:
                        got.extend(map(table.__getitem__, column_bytes(column, count)))
            self._lengths[field] = got
        return got

    def _read(self, field: str, term: str) -> tuple[list[int], list[float]]:
        ids: list[int] = []
        weights: list[float] = []
        for reader, offset in self.leaves:
            self._read_leaf(reader, offset, field, term, ids, weights)
        return ids, weights

    @staticmethod
    def _read_leaf(reader: Any, offset: int, field: str, term: str, ids: list[int], weights: list[float]) -> None:
        """One segment's postings of the term, its live entries only, numbered as the searcher numbers them."""
        try:
            m = reader.postings(field, term)
        except Exception:  # noqa: BLE001 - TermNotFound: the word is not in this segment
            return
        deleted = reader.deleted_docs_set if reader.has_deletions() else None
        leaf = getattr(m, "child", m) if deleted else m
        if hasattr(leaf, "_read_ids") and hasattr(leaf, "_next_block"):
            # a block at a time: whoosh3's leaf matcher holds each block as two arrays
            while leaf.is_active():
                bids = block_ids(leaf)
                leaf._read_weights()
                bw = leaf._weights
                if deleted:
                    pairs = [(d, w) for d, w in zip(bids, bw, strict=True) if d not in deleted]
                    ids.extend(d + offset for d, _ in pairs)
                    weights.extend(w for _, w in pairs)
                else:
                    if offset:
                        ids.extend(d + offset for d in bids)
                    else:
                        ids.extend(bids)
                    weights.extend(bw)
                leaf._next_block()
        else:
            while m.is_active():
                ids.append(m.id() + offset)
                weights.append(m.weight())
                m.next()

    def term_scores(self, field: str, term: str) -> dict[int, float]:
        """entry -> BM25F score of one word in one field, times the field's boost."""
        return self._scores(field, term, FIELD_BOOSTS.get(field, 1.0))

    def field_scores(self, field: str, term: str) -> dict[int, float]:
        """entry -> BM25F score of one word in one field, unboosted: whoosh's score of a plain
        term query (a quoted phrase's words, see phrase_scores)."""
        return self._scores(field, term, None)

    def _scores(self, field: str, term: str, boost: float | None) -> dict[int, float]:
        # a boost of 1 scores as none does (a float times 1.0 is itself): the body's boosted
        # scores are a quoted phrase's too, read once
        factor = 1.0 if boost is None else boost
        key = (field, term, factor)
        got = self._cache.get(key)
        if got is not None:
            return got
        # a title's or headings' postings are scored twice when the word is in a quoted phrase:
        # unboosted for the phrase, then boosted for the word (the body's boost is 1: one score
        # serves both); read once, and kept only until the boosted score is made
        read = self._postings.pop((field, term), None)
        ids, weights = read if read is not None else self._read(field, term)
        if read is None and boost is None and field in _SCORED_TWICE \
                and (field, term, FIELD_BOOSTS[field]) not in self._cache:
            self._postings[(field, term)] = (ids, weights)
            self._cached += len(ids)
        got = {}
        if ids:
            w = self._weighting
            b = w._field_B.get(field, w.B)
            k1 = w.K1
            idf = self.searcher.idf(field, term)
            if factor != 1.0:
                idf *= factor
            avg = self.searcher.avg_field_length(field) or 1
            # bm25(idf, tf, fl, avgfl, B, K1) from whoosh.scoring, inlined, with the boost
            c1, c2 = k1 * (1 - b), k1 * b / avg
            k = k1 + 1
            raw = self.length_bytes(field) if field not in self._lengths else None
            if raw is not None:
                # not decoded yet (a cold search): decode the lengths of these entries alone, not
                # of all (400k entries in four fields at 10k sources)
                table = self._byte_len
                got = {d: idf * ((tf * k) / (tf + c1 + c2 * table[raw[d]])) for d, tf in zip(ids, weights, strict=True)}
            else:
                lengths = self.lengths(field)
                got = {d: idf * ((tf * k) / (tf + c1 + c2 * lengths[d])) for d, tf in zip(ids, weights, strict=True)}
        self._make_room()
        self._cache[key] = got
        self._cached += len(got)
        return got

    def _make_room(self) -> None:
        """Past CACHE_POSTINGS cached scores and postings, the caches start again (they hold the same postings)."""
        if self._cached > self.CACHE_POSTINGS:
            self._cache.clear()
            self._postings.clear()
            self._totals.clear()
            self._phrases.clear()
            self._cached = 0

    def phrase_check(self, phrase: tuple[str, ...]) -> PhraseCheck:
        """A quoted phrase's candidates and what is known of them, kept while the scores are:
        reading its candidates' text is most of a phrase's cost."""
        got = self._phrases.get(phrase)
        if got is None:
            got = PhraseCheck(self, phrase)
            self._make_room()
            self._phrases[phrase] = got
            self._cached += len(got.candidates) + 1
        return got

    def term_total(self, term: str) -> dict[int, float]:
        """entry -> one word's boosted score summed over every field, as whoosh's Or sums it."""
        got = self._totals.get(term)
        if got is None:
            got = {}
            for fname in FIELD_BOOSTS:
                scores = self.term_scores(fname, term)
                if not got:
                    got = dict(scores)
                    continue
                get = got.get
                for d, s in scores.items():
                    got[d] = get(d, 0.0) + s
            self._make_room()
            self._totals[term] = got
            self._cached += len(got)
        return got

    def accumulate(self, terms: Iterable[str], into: dict[int, float] | None = None,
                   only: bool = False) -> dict[int, float]:
        """Sum the words' scores into entry -> score. With `only`, add to the entries already
        in `into` and no others (whoosh's AndMaybe)."""
        acc: dict[int, float] = {} if into is None else into
        for term in terms:
            scores = self.term_total(term)
            if not scores:
                continue
            if only:
                if len(acc) < len(scores):
                    hits = [(d, scores[d]) for d in acc if d in scores]
                else:
                    hits = [(d, s) for d, s in scores.items() if d in acc]
                for d, s in hits:
                    acc[d] += s
            elif not acc:
                acc.update(scores)
            else:
                get = acc.get
                for d, s in scores.items():
                    acc[d] = get(d, 0.0) + s
        return acc

    def entry(self, docnum: int) -> tuple[str, bool, str]:
        """(path, is the file's doc entry, kind) of one entry: from the tables `warm` builds,
        else from its stored fields (a one-shot search reads a few dozen, not every entry)."""
        if self._paths is not None:
            return self._paths[docnum], bool(self._levels[docnum]), self._kinds[docnum]  # type: ignore[index]
        got = self._entry_cache.get(docnum)
        if got is None:
            fields = self.fields(docnum)
            got = self._entry_cache[docnum] = (fields["path"], fields.get("level") == "doc", fields["kind"])
        return got

    def eras(self) -> dict[int, int]:
        """entry -> its release's era (0..10), for changelog passages only (see release_eras)."""
        if self._eras is None:
            self._eras = {d: n for n in range(11) for d in self._read("era", str(n))[0]}
        return self._eras

    def newest_release(self) -> dict[str, int]:
        """path -> the first passage of its newest release, for each changelog (see release_eras)."""
        first: dict[str, int] = {}
        for d in sorted(self._read("era", str(NEWEST_ERA))[0]):
            first.setdefault(self.entry(d)[0], d)
        return first

    def collections(self) -> tuple[list[str], Any, list[int]]:
        """(names, entry -> index into names + 1 (0 for none), entries of each): the collection
        each entry belongs to (documents.collection_of), read from its posting lists once."""
        if self._collections is None:
            from array import array

            names: list[str] = []
            sizes: list[int] = []
            of = array("H", bytes(2 * self.searcher.doc_count_all()))
            for term in self.searcher.reader().lexicon("collection"):
                text = term.decode("utf-8") if isinstance(term, bytes) else term
                if len(names) >= 65_534:
                    break
                names.append(text)
                number = len(names)
                ids = self._read("collection", text)[0]
                for d in ids:
                    of[d] = number
                sizes.append(len(ids))
            self._collections = (names, of, sizes)
        return self._collections

    def kind_entries(self, kinds: tuple[str, ...]) -> set[int]:
        got = self._kind_sets.get(kinds)
        if got is None:
            got = self._kind_sets[kinds] = {d for k in kinds for d in self._read("kind", k)[0]}
        return got

    def fields(self, docnum: int) -> dict[str, Any]:
        """An entry's stored fields, kept for later queries: whoosh decompresses each entry's
        text anew, a tenth of a millisecond, and the same pages answer many questions."""
        got = self._fields.get(docnum)
        if got is None:
            if len(self._fields) >= 4096:
                self._fields.clear()
            got = self._fields[docnum] = self._stored_fields(docnum)
        return got

    def _stored_fields(self, docnum: int) -> dict[str, Any]:
        """The searcher's stored_fields, read from the entry's segment's column directly: a quoted
        phrase reads a hundred entries' text on a large wiki, and whoosh's layers between the
        searcher and the column took as long as the column's read and unpickling. Fields the
        schema no longer holds are left out, as whoosh leaves them out."""
        n = bisect.bisect_right(self._offsets, docnum) - 1
        column = self.stored_columns()[n]
        if column is None:
            return self.searcher.stored_fields(docnum)
        schema = self.searcher.schema
        return {name: value for name, value in (column[docnum - self._offsets[n]] or {}).items() if name in schema}

    def stored_columns(self) -> list[Any]:
        """Each segment's column of stored fields, opened on first use (None where the codec
        keeps them otherwise)."""
        if self._stored_columns is None:
            from whoosh.codec.whoosh3 import STORED_COLUMN

            columns = []
            for reader, _ in self.leaves:
                opened = getattr(getattr(reader, "_perdoc", None), "_cached_reader", None)
                columns.append(opened("_stored", STORED_COLUMN) if opened is not None and reader.doc_count_all()
                               else None)
            self._stored_columns = columns
        return self._stored_columns

    @property
    def warmed(self) -> bool:
        return self._paths is not None

    def warm(self) -> None:
        """Build what later queries would otherwise build on first use (about a second at
        10k sources): the entry tables, the collections, every field's lengths, the
        stored-fields file of every segment."""
        for _ in self.warm_steps():
            pass

    def warm_steps(self) -> Iterator[None]:
        """`warm`'s work, a step between yields (the entry tables, a third of a second at 10k
        sources, in steps of ENTRY_PATHS paths)."""
        if self._paths is None:
            yield from self._entry_steps()
        self.eras()
        self.collections()  # a question's first look at them cost 25 ms at 10k sources
        yield
        for fname in FIELD_BOOSTS:
            self.lengths(fname)
            yield
        self.stored_columns()
        yield

    def entries(self) -> tuple[list[str], bytearray, list[str]]:
        """Path, level (1 = doc entry) and kind of every entry, from the short `path`,
        `level` and `kind` posting lists rather than the stored fields (a pickle with the
        passage text for each)."""
        if self._paths is None:
            for _ in self._entry_steps():
                pass
        return self._paths, self._levels, self._kinds  # type: ignore[return-value]

    def _entry_steps(self) -> Iterator[None]:
        """`entries`' work, a step between yields, ENTRY_PATHS paths a step."""
        total = self.searcher.doc_count_all()
        tables = self._tables_file()
        kept = self._kept_tables(tables, total)
        if kept is not None:
            if self._collections is None:
                self._collections = kept[4]
            if self._paths is None:
                self._levels, self._kinds, self.first_part = kept[1], kept[2], kept[3]
                self._paths = kept[0]
            yield
            return
        paths = [""] * total
        kinds = [""] * total
        levels = bytearray(total)
        for d in self._read("level", "doc")[0]:
            levels[d] = 1
        first: dict[str, int] = {}
        # segment by segment, each its own paths: asking every segment for every path
        # (most have not got it) was most of a warm-up at 10k sources
        for reader, offset in self.leaves:
            for n, (text, ids) in enumerate(_id_postings(reader, offset, "path"), 1):
                for d in ids:
                    paths[d] = text
                    if not levels[d] and text not in first:
                        first[text] = d
                if n % self.ENTRY_PATHS == 0:
                    yield
        for kind in KINDS:
            for d in self._read("kind", kind)[0]:
                kinds[d] = kind
        if self._paths is None:  # not built meanwhile by a query's entries()
            self._levels, self._kinds, self.first_part = levels, kinds, first
            self._paths = paths  # last: entry() reads the tables once this is set
        self._keep_tables(tables, paths, levels, kinds, first, self.collections())
        yield

    # The entry tables are the most of a warm-up (21 ms of 8,700 entries, 0.29 s of 97,000), and
    # the same for every process that opens the same index: the first to build them keeps them
    # in the index's folder, and the next (an agent's MCP server, started again and again on one
    # wiki) reads them (3.8 and 9.7 ms), with the collections' (2 ms more to build at 8,700
    # entries, read with the rest). The file is named for what the tables are of: the index's
    # generation and each segment's name, entries and deletions, which no later index shares
    # (whoosh names a segment at random, and a commit makes a new generation).
    def _tables_file(self) -> str | None:
        try:
            import hashlib

            folder = self.searcher._ix.storage.folder
            key = [self.TABLES_FORMAT, self.searcher.reader().generation()]
            for reader, offset in self.leaves:
                segment = reader._segment
                key.append((segment.segment_id(), offset, reader.doc_count_all(), segment.deleted_count()))
        except Exception:  # noqa: BLE001 - an index not in a folder, or not whoosh's own readers
            return None
        return os.path.join(folder, f".entries-{hashlib.sha1(repr(key).encode()).hexdigest()[:24]}.marshal")

    @staticmethod
    def _kept_tables(name: str | None, total: int) -> tuple[list[str], bytearray, list[str], dict[str, int],
                                                          tuple[list[str], Any, list[int]]] | None:
        """The entry tables another process kept in `name` (_keep_tables), if they are whole,
        with the collections' (see collections)."""
        import marshal
        from array import array

        if name is None:
            return None
        try:
            with open(name, "rb") as handle:
                paths, levels, kinds, first, (names, of, sizes) = marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if not (isinstance(paths, list) and isinstance(levels, bytes) and isinstance(kinds, list)
                and isinstance(first, dict) and len(paths) == len(levels) == len(kinds) == total
                and isinstance(names, list) and isinstance(sizes, list) and len(names) == len(sizes)
                and isinstance(of, bytes) and len(of) == 2 * total):
            return None
        collections = array("H")
        collections.frombytes(of)
        return paths, bytearray(levels), kinds, first, (names, collections, sizes)

    @staticmethod
    def _keep_tables(name: str | None, paths: list[str], levels: bytearray, kinds: list[str],
                     first: dict[str, int], collections: tuple[list[str], Any, list[int]]) -> None:
        """Keep the tables in `name` for the next process to open this index, whole or not at
        all, and remove those kept for the indexes before it."""
        import marshal
        from pathlib import Path

        from ..errors import PathEscape
        from ..workspace import atomic_write

        if name is None:
            return
        folder, mine = os.path.split(name)
        with contextlib.suppress(OSError, PathEscape):  # derived: the next process builds them again
            names, of, sizes = collections
            atomic_write(Path(name), marshal.dumps((paths, bytes(levels), kinds, first, (names, of.tobytes(), sizes))),
                         durable=False)
            for other in os.listdir(folder):
                if other.startswith(".entries-") and other != mine:
                    os.unlink(os.path.join(folder, other))


def _id_postings(reader: Any, offset: int, field: str) -> Iterator[tuple[str, list[int]]]:
    """Each term of the field in one segment and its live entries, numbered as the searcher
    numbers them, in the segment's order of terms. With whoosh3's readers the terms' entries are
    read in the order the terms file keeps them (a term found by its hash, then its postings'
    weights read too, were most of the cost); else through the reader's own lexicon."""
    terms = getattr(reader, "_terms", None)
    items_from = getattr(terms, "items_from", None)
    codec, postfile = getattr(terms, "_codec", None), getattr(terms, "_postfile", None)
    if items_from is None or codec is None or postfile is None or field not in reader.schema:
        for term in reader.lexicon(field):
            text = term.decode("utf-8") if isinstance(term, bytes) else term
            ids: list[int] = []
            FastScorer._read_leaf(reader, offset, field, text, ids, [])
            yield text, ids
        return
    deleted = reader.deleted_docs_set if reader.has_deletions() else None
    fmt = reader.schema[field].format
    for (name, tbytes), info in items_from(field, b""):
        if name != field:
            break
        m = codec.postings_reader(postfile, info, fmt, term=(field, tbytes))
        got: list[int] = []
        if hasattr(m, "_read_ids") and hasattr(m, "_next_block"):
            while m.is_active():
                got.extend(block_ids(m))
                m._next_block()
        else:
            while m.is_active():
                got.append(m.id())
                m.next()
        if deleted:
            got = [d for d in got if d not in deleted]
        yield tbytes.decode("utf-8"), [d + offset for d in got] if offset else got


def block_ids(leaf: Any) -> Any:
    """The entry numbers of a whoosh3 leaf matcher's current block, as its _read_ids makes them:
    stored as the gaps between them, added up here by itertools.accumulate rather than by a
    generator of whoosh's, a step of Python per posting (about a tenth of reading postings, in
    a profile of 14 first-pass questions)."""
    if leaf._data is None:
        leaf._read_data()
    ids = leaf._data[0]
    leaf._ids = ids = ids if leaf._byteids else tuple(accumulate(ids))
    return ids


def column_bytes(column: Any, count: int) -> bytes:
    """A one-byte-per-entry lengths column as bytes: one read instead of a call per entry."""
    dbfile, base, stored = getattr(column, "_dbfile", None), getattr(column, "_basepos", None), getattr(column, "_count", None)
    if dbfile is None or base is None or stored is None or getattr(column, "_fixedlen", 1) != 1:
        return bytes(column[d] for d in range(count))
    raw = bytes(dbfile.get(base, min(stored, count)))
    return raw + bytes(count - len(raw))  # entries past the column's end have the default, 0

"""What the offline backend keeps in state.db between compiles, so one changed source costs
what it touches rather than what the wiki holds.

Concept selection needs, per phrase key, how many sources hold it and how strongly they
name it; a concept page needs which sources hold its keys. Recomputing those from every
source's cached analysis made one changed source in a 10k-source wiki cost seconds. Here
they are counters and postings, updated by the difference a compile makes (the analyses of
the sources that left and of those that came), so they always equal what a count over every
source would give: the tables are a sum, and a sum does not depend on how it was reached.

Concepts are chosen per collection (a top folder of raw/), so every key is counted per
collection: a row's key is "<collection>\x1f<phrase key>" (see `scoped`).

Tables (created by state.SCHEMA): offline_terms (per phrase key: document count, signal
strength, the weight that ranks it as a concept candidate), offline_surfaces (the spellings
that named a key, weighted by signal level), offline_postings (key -> source, with how often
and how strongly the source names it: a concept page ranks its sources from them), offline_docs
(per counted source: content hash, page, what its pages show of it, the concepts its page
links), offline_concepts (per chosen concept: its definition, source count and the
fingerprint of what its page last showed) and offline_kept (per concept: its page as last
rendered but for the Related section, which alone moves on most pages when a concept comes or
goes; made in state.State._open).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..lexicon import run_together

CHUNK = 500  # host parameters per IN (...) query; SQLite allows 999 in old builds
REINDEX_AT = 2_000  # new keys into an empty table from which its indexes are built after (_indexes_built_after)


@dataclass
class Doc:
    """A source counted in the tables."""

    id: int
    path: str
    sha256: str
    page: str
    title: str
    date: str | None
    anchor: str
    concepts: tuple[str, ...] | None  # None: render its page again (git put back another version)


@dataclass
class StoredConcept:
    key: str
    keys: tuple[str, ...]
    title: str
    aliases: list[str]
    slug: str
    df: int
    fingerprint: str
    shown: tuple[str, ...] = ()  # paths of its main sources (its related concepts are their links)
    collections: tuple[str, ...] = ()  # the collections that chose it


SEP = "\x1f"
# the layout of these tables: a compile that finds another one counts every source again
STORE_FORMAT = 3


STRONG = 4  # a signal at this level or above: the source is about the thing or defines it


def scoped(collection: str, key: str) -> str:
    return f"{collection}{SEP}{key}"


def unscoped(key: str) -> str:
    return key.split(SEP, 1)[1]


def term_weight(docs: int, strength: int, key: str, signal_docs: int = 0, strong_docs: int = 0) -> float:
    """How clearly the sources name a candidate as a thing (sources about it or defining it
    count most, then sources that head a section for it or mark it as code), times how widely
    it is discussed."""
    named = 5.0 * min(strong_docs, 10) + min(signal_docs - strong_docs, 20) + 0.05 * min(strength, 100)
    return named * (1.0 + math.log(1 + docs)) * (1.2 if " " in key else 1.0)


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


class Store:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    # --- bookkeeping -----------------------------------------------------------------------
    def clear(self) -> None:
        for table in ("offline_terms", "offline_surfaces", "offline_postings", "offline_docs", "offline_concepts",
                      "offline_kept"):
            self.db.execute(f"DELETE FROM {table}")

    def docs(self) -> dict[str, Doc]:
        rows = self.db.execute(
            "SELECT id, path, sha256, page, title, date, anchor, concepts FROM offline_docs")
        # concepts are stored one per line (keys are words joined by spaces): split is much
        # cheaper than JSON, and this runs for every source on every compile
        return {
            r[1]: Doc(r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                      None if r[7] is None else tuple(r[7].split("\n")) if r[7] else ())
            for r in rows
        }

    def set_doc_concepts(self, items: Iterable[tuple[int, tuple[str, ...]]]) -> None:
        self.db.executemany("UPDATE offline_docs SET concepts=? WHERE id=?", [("\n".join(c), i) for i, c in items])

    def concepts(self) -> dict[str, StoredConcept]:
        rows = self.db.execute("SELECT key, keys, title, aliases, slug, df, fingerprint, shown FROM offline_concepts")
        out = {}
        for r in rows:
            # the keys column holds {"keys": [...], "collections": [...]}
            named = json.loads(r[1])
            keys, collections = (named, []) if isinstance(named, list) else (named["keys"], named["collections"])
            out[r[0]] = StoredConcept(r[0], tuple(keys), r[2], json.loads(r[3]), r[4], r[5], r[6],
                                      tuple(json.loads(r[7])), tuple(collections))
        return out

    def put_concepts(self, items: Iterable[StoredConcept]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO offline_concepts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(c.key, json.dumps({"keys": list(c.keys), "collections": list(c.collections)}), c.title,
              json.dumps(c.aliases), c.slug, c.df, c.fingerprint, json.dumps(list(c.shown))) for c in items],
        )

    def concept_pages(self) -> list[tuple[str, str | None]]:
        """(page, owner) of every concept page wikimem wrote (state's pages table), by path."""
        return list(self.db.execute("SELECT path, owner FROM pages WHERE kind='concept' ORDER BY path"))

    def delete_concepts(self, keys: Iterable[str]) -> None:
        items = [(k,) for k in keys]
        self.db.executemany("DELETE FROM offline_concepts WHERE key=?", items)
        self.db.executemany("DELETE FROM offline_kept WHERE key=?", items)

    def kept(self, keys: Iterable[str]) -> dict[str, str]:
        """The concept pages kept as last rendered but for their Related section (key -> the
        page, as offline_pages.KeptPage.dumps wrote it), of those of `keys` that have one."""
        out: dict[str, str] = {}
        for part in _chunks(sorted(set(keys))):
            out.update(self.db.execute(
                f"SELECT key, page FROM offline_kept WHERE key IN ({','.join('?' * len(part))})", part))
        return out

    def keep(self, items: Iterable[tuple[str, str | None]]) -> None:
        """Keep each concept's page (key, KeptPage.dumps()); None: it has none to keep."""
        rows = list(items)
        self.db.executemany("INSERT OR REPLACE INTO offline_kept VALUES (?, ?)",
                            [(k, page) for k, page in rows if page is not None])
        self.db.executemany("DELETE FROM offline_kept WHERE key=?", [(k,) for k, page in rows if page is None])

    # --- counting sources in and out -------------------------------------------------------
    def update(self, removed: Iterable[tuple[Doc, dict[str, Any]]], added: Iterable[tuple[Doc, dict[str, Any]]],
               collection: Callable[[str], str], collection_before: Callable[[str], str] | None = None) -> set[str]:
        """Take `removed` sources out of the counts and count `added` ones in (their Doc.id is
        assigned here); a removed source is counted out of the collection it was counted in
        (`collection_before`, when the collections changed). Analyses are consumed one at a time, so a first compile of a large
        raw/ never holds them all. Returns every phrase key whose counts moved."""
        # a first compile counts a hundred thousand (source, key) pairs: each pair is one append
        # to its key's postings, by collection and by the key as the analysis spells it; the
        # key is scoped to its collection once, and a key's count of sources moves by the
        # length of its postings
        leaving: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))  # prefix -> key -> ids
        coming: dict[str, dict[str, list[tuple[int, int, int]]]] = defaultdict(lambda: defaultdict(list))
        signalled: dict[str, list[int]] = {}  # scoped key -> [strength, signal docs, strong docs]
        surf: Counter[tuple[str, str]] = Counter()

        def count_signals(prefix: str, signals: dict[str, tuple[int, str]], sign: int) -> None:
            for key, (level, surface) in signals.items():
                key = prefix + key
                d = signalled.get(key)
                if d is None:
                    d = signalled[key] = [0, 0, 0]
                d[0] += sign * level
                d[1] += sign
                if level >= STRONG:
                    d[2] += sign
                surf[(key, surface)] += sign * level

        for doc, data in removed:
            prefix = (collection_before or collection)(doc.path) + SEP
            gone_from = leaving[prefix]
            for key in data["terms"]:
                gone_from[key].append(doc.id)
            count_signals(prefix, data["signals"], -1)
            self.db.execute("DELETE FROM offline_docs WHERE id=?", (doc.id,))
        for doc, data in added:
            cursor = self.db.execute(
                "INSERT INTO offline_docs (path, sha256, page, title, date, anchor, concepts) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (doc.path, doc.sha256, doc.page, doc.title, doc.date, doc.anchor, None))
            doc.id = doc_id = int(cursor.lastrowid or 0)
            prefix = collection(doc.path) + SEP
            held_by = coming[prefix]
            signals = data["signals"]
            for key, n in data["terms"].items():
                signal = signals.get(key)
                held_by[key].append((doc_id, n, signal[0] if signal else 0))
            count_signals(prefix, signals, +1)
        post_del = {prefix + key: ids for prefix, table in leaving.items() for key, ids in table.items()}
        post_add = {prefix + key: got for prefix, table in coming.items() for key, got in table.items()}
        delta: dict[str, list[int]] = {key: [-len(ids), 0, 0, 0] for key, ids in post_del.items()}
        for key, got in post_add.items():
            d = delta.get(key)
            if d is None:
                delta[key] = [len(got), 0, 0, 0]
            else:
                d[0] += len(got)
        for key, (strength, signal_docs, strong_docs) in signalled.items():
            d = delta.get(key)
            if d is None:
                d = delta[key] = [0, 0, 0, 0]
            d[1] += strength
            d[2] += signal_docs
            d[3] += strong_docs
        if not delta:
            return set()

        # the rows of the keys that moved: all of them when most keys moved (a first compile)
        rows: dict[str, list[Any]] = {}  # key -> [id, df, strength, signal docs, strong docs]
        keys = list(delta)
        select = "SELECT key, id, df, strength, signal_docs, strong_docs FROM offline_terms"
        if len(keys) > 20 * CHUNK:
            for r in self.db.execute(select):
                if r[0] in delta:
                    rows[r[0]] = list(r[1:])
        else:
            for part in _chunks(keys):
                for r in self.db.execute(f"{select} WHERE key IN ({','.join('?' * len(part))})", part):
                    rows[r[0]] = list(r[1:])
        updates, inserts, gone = [], [], []
        for key, d in delta.items():
            row = rows.get(key)
            if row:
                df, strength, signal_docs, strong_docs = (a + b for a, b in zip(row[1:], d, strict=True))
            else:
                df, strength, signal_docs, strong_docs = d
            if df <= 0:
                if row:
                    gone.append(row[0])
                continue
            weight = term_weight(df, strength, unscoped(key), signal_docs, strong_docs) if signal_docs > 0 else None
            if row:
                if d != [0, 0, 0, 0]:
                    updates.append((df, strength, signal_docs, strong_docs, weight, row[0]))
            else:
                scope, _, bare = key.partition(SEP)
                inserts.append((key, scope + SEP + run_together(bare), df, strength, signal_docs, strong_docs, weight))
        self.db.executemany(
            "UPDATE offline_terms SET df=?, strength=?, signal_docs=?, strong_docs=?, weight=? WHERE id=?", updates)
        ids = {k: r[0] for k, r in rows.items()}
        if inserts:
            # new keys in key order, numbered here after the highest id: the key index grows at
            # its end rather than at random places (a first compile inserts every key), and no
            # query asks for the ids SQLite gave
            inserts.sort()
            first = int(self.db.execute("SELECT coalesce(max(id), 0) FROM offline_terms").fetchone()[0]) + 1
            with self._indexes_built_after(len(inserts) >= REINDEX_AT and first == 1):
                self.db.executemany(
                    "INSERT INTO offline_terms (id, key, squashed, df, strength, signal_docs, strong_docs, weight) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(first + n, *row) for n, row in enumerate(inserts)])
            ids.update((row[0], first + n) for n, row in enumerate(inserts))
        # removals first: a new source may reuse the id of one that left
        self.db.executemany("DELETE FROM offline_postings WHERE term=? AND doc=?",
                            ((ids[k], d) for k in post_del if k in ids for d in post_del[k]))
        # in key order (a first compile of 10k sources inserts a million rows: _insert_postings).
        # A key's postings are in doc order already: added sources are counted in turn, each
        # given an id above the last
        self._insert_postings([(ids[k], post_add[k]) for k in sorted(post_add, key=ids.__getitem__)])
        # spellings: level sums, gone at zero
        moved = [(ids[k], s, level) for (k, s), level in surf.items() if level and k in ids]
        self.db.executemany(
            "INSERT INTO offline_surfaces VALUES (?, ?, ?) ON CONFLICT(term, surface) DO UPDATE SET level=level+excluded.level",
            moved)
        self.db.executemany("DELETE FROM offline_surfaces WHERE term=? AND surface=? AND level<=0",
                            [(t, s) for t, s, _ in moved])
        self.db.executemany("DELETE FROM offline_terms WHERE id=?", [(g,) for g in gone])
        self.db.executemany("DELETE FROM offline_surfaces WHERE term=?", [(g,) for g in gone])
        return set(delta)

    def _insert_postings(self, by_term: list[tuple[int, list[tuple[int, int, int]]]]) -> None:
        # one statement run for every row: since a posting holds four columns, JSON arrays of
        # many rows read back with json_each (value ->> 0, ...) took twice as long (88k rows:
        # 0.20 s against 0.12 s; 880k rows: 1.4 s against 0.6-0.9 s)
        self.db.executemany("INSERT INTO offline_postings VALUES (?, ?, ?, ?)",
                            [(term, *d) for term, docs in by_term for d in docs])

    @contextmanager
    def _indexes_built_after(self, empty: bool) -> Iterator[None]:
        """Inserting many rows into an empty offline_terms: its secondary indexes (squashed
        spellings, candidate weights) are dropped and built again once the rows are in. A
        first compile inserts every key, and an index built from all its rows at once (a sort)
        costs less than one kept up row by row in another order than the keys'. The same
        indexes, the same rows: only the time differs (45k keys: 0.09 + 0.03 s against 0.14-0.22 s)."""
        if not empty:
            yield
            return
        indexes = self.db.execute("SELECT name, sql FROM sqlite_master WHERE type='index' AND tbl_name='offline_terms'"
                                  " AND sql IS NOT NULL ORDER BY name").fetchall()
        for name, _ in indexes:
            self.db.execute(f'DROP INDEX "{name}"')
        try:
            yield
        finally:
            for _, sql in indexes:
                self.db.execute(sql)

    # --- what concept selection reads ------------------------------------------------------
    def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
        """A collection's concept candidates, strongest first: (key, document count, strength,
        signalling documents, documents that are about it or define it)."""
        low = collection + SEP
        high = collection + chr(ord(SEP) + 1)
        return [(unscoped(r[0]), r[1], r[2], r[3], r[4]) for r in self.db.execute(
            "SELECT key, df, strength, signal_docs, strong_docs FROM offline_terms"
            " WHERE key >= ? AND key < ? AND weight IS NOT NULL AND df >= 2"
            " ORDER BY weight DESC, key LIMIT ?", (low, high, limit))]

    def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
        """Every key of a collection spelled as one of `squashed` without spaces, hyphens and
        underscores, with its counts: (key, df, strength, signal_docs, strong_docs)."""
        out: list[tuple[str, int, int, int, int]] = []
        items = sorted(collection + SEP + s for s in squashed)
        for part in _chunks(items):
            out.extend((unscoped(r[0]), r[1], r[2], r[3], r[4]) for r in self.db.execute(
                "SELECT key, df, strength, signal_docs, strong_docs FROM offline_terms"
                f" WHERE squashed IN ({','.join('?' * len(part))})", part))
        return sorted(out)

    def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]:
        """A collection's two-word keys that hold one of `words` first or last, said in two
        sources or more and named (headed, marked) in one at least: (key, df)."""
        low = collection + SEP
        high = collection + chr(ord(SEP) + 1)
        out = []
        for key, df in self.db.execute(
                "SELECT key, df FROM offline_terms WHERE key >= ? AND key < ? AND df >= 2 AND signal_docs >= 1"
                " AND instr(key, ' ') > 0", (low, high)):
            parts = unscoped(key).split(" ")
            if len(parts) == 2 and (parts[0] in words or parts[1] in words):
                out.append((unscoped(key), df))
        return sorted(out)

    def said(self, collection: str, keys: Iterable[str]) -> dict[str, int]:
        """How often a collection's sources say each of `keys`, all together."""
        out: dict[str, int] = {}
        items = sorted({collection + SEP + k for k in keys})
        for part in _chunks(items):
            for key, n in self.db.execute(
                    "SELECT t.key, sum(p.n) FROM offline_terms t JOIN offline_postings p ON p.term = t.id"
                    f" WHERE t.key IN ({','.join('?' * len(part))}) GROUP BY t.key", part):
                out[unscoped(key)] = n
        return out

    def surfaces(self, collection: str, keys: Iterable[str]) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = defaultdict(Counter)
        items = sorted({collection + SEP + k for k in keys})
        for part in _chunks(items):
            for key, surface, level in self.db.execute(
                    "SELECT t.key, s.surface, s.level FROM offline_terms t JOIN offline_surfaces s ON s.term = t.id"
                    f" WHERE t.key IN ({','.join('?' * len(part))})", part):
                out[unscoped(key)][surface] += level
        return dict(out)

    def mentions(self, keys: Iterable[str]) -> dict[int, tuple[int, int]]:
        """For each counted source holding any of `keys` (scoped keys): how often it says them
        and how strongly it names them (the highest signal level), as its analysis would."""
        items = sorted(set(keys))
        found: dict[int, tuple[int, int]] = {}
        for part in _chunks(items):
            for doc, n, level in self.db.execute(
                    "SELECT p.doc, p.n, p.level FROM offline_terms t JOIN offline_postings p ON p.term = t.id"
                    f" WHERE t.key IN ({','.join('?' * len(part))})", part):
                had = found.get(doc)
                found[doc] = (n, level) if had is None else (had[0] + n, max(had[1], level))
        return found

    def sources_of(self, keys: Iterable[str]) -> set[int]:
        """Ids of the counted sources holding any of `keys` (scoped keys)."""
        items = sorted(set(keys))
        found: set[int] = set()
        for part in _chunks(items):
            found.update(r[0] for r in self.db.execute(
                "SELECT p.doc FROM offline_terms t JOIN offline_postings p ON p.term = t.id"
                f" WHERE t.key IN ({','.join('?' * len(part))})", part))
        return found

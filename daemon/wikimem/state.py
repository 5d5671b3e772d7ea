"""`.wikimem/state.db`: what wikimem last saw and wrote. Derived, never canonical.

Deleting it is safe: the next compile rebuilds it from the pages' front matter
and the raw files, recompiling nothing that is up to date.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,          -- workspace-relative: raw/...
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    page TEXT,                      -- wiki-relative page path
    status TEXT NOT NULL,           -- compiled | skipped | failed | kept
    reason TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    concepts TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS analyses (
    sha256 TEXT NOT NULL,
    backend TEXT NOT NULL,
    data TEXT NOT NULL,             -- JSON without the sentences (read for every source)
    sentences TEXT NOT NULL,        -- JSON sentences (read only when a page quotes them)
    PRIMARY KEY (sha256, backend)
);
CREATE TABLE IF NOT EXISTS catalog (   -- index.md entries, keyed by the page file's stat
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL
);
-- the offline backend's running counts (backends/offline_store.py): one changed source
-- updates the rows of the phrases it holds instead of every source being read again
CREATE TABLE IF NOT EXISTS offline_terms (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,       -- phrase key ("hash map")
    squashed TEXT NOT NULL,         -- the key without spaces ("hashmap"), to merge spellings
    df INTEGER NOT NULL,            -- counted sources holding it
    strength INTEGER NOT NULL,      -- sum of its signal levels over those sources
    signal_docs INTEGER NOT NULL,   -- sources that signal it (heading, code span, emphasis...)
    strong_docs INTEGER NOT NULL,   -- sources that signal it at level 2 or more
    weight REAL                     -- concept-candidate weight; NULL when nothing signals it
);
CREATE INDEX IF NOT EXISTS offline_terms_squashed ON offline_terms(squashed);
CREATE INDEX IF NOT EXISTS offline_terms_weight ON offline_terms(weight DESC, key) WHERE weight IS NOT NULL;
CREATE TABLE IF NOT EXISTS offline_surfaces (
    term INTEGER NOT NULL, surface TEXT NOT NULL, level INTEGER NOT NULL,
    PRIMARY KEY (term, surface)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS offline_postings (
    term INTEGER NOT NULL, doc INTEGER NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS offline_docs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    sha256 TEXT NOT NULL,
    page TEXT NOT NULL,
    title TEXT NOT NULL,
    date TEXT,
    anchor TEXT NOT NULL,
    concepts TEXT                   -- keys its page links, one per line; NULL: render the page again
);
CREATE TABLE IF NOT EXISTS offline_concepts (
    key TEXT PRIMARY KEY,
    keys TEXT NOT NULL,             -- JSON phrase keys that name it
    title TEXT NOT NULL,
    aliases TEXT NOT NULL,
    slug TEXT NOT NULL,
    df INTEGER NOT NULL,            -- counted sources holding any of its keys
    fingerprint TEXT NOT NULL,      -- of what its page shows; '' renders it again
    shown TEXT NOT NULL             -- JSON paths of the sources its page quotes
);
CREATE TABLE IF NOT EXISTS pages (
    path TEXT PRIMARY KEY,          -- wiki-relative
    sha256 TEXT NOT NULL,           -- hash of the bytes wikimem last wrote
    kind TEXT NOT NULL,
    owner TEXT                      -- the source (source pages) or concept key (concept pages)
);
"""


@dataclass(frozen=True)
class SourceRow:
    path: str
    sha256: str
    size: int
    mtime_ns: int
    page: str | None
    status: str
    reason: str | None
    attempts: int
    concepts: tuple[str, ...]


class State:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fresh = not path.exists()
        self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == 2:
            # version 3 only adds the offline backend's tables: keep the analysis cache, and
            # the backend fills its tables from it on the next compile
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            version = SCHEMA_VERSION
        if version not in (0, SCHEMA_VERSION):
            # an older layout: state is derived, so start over rather than migrate
            self.db.close()
            path.unlink()
            self.fresh = True
            self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
        if version != SCHEMA_VERSION:
            # only on a new database: a no-op compile must not write state.db either
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- meta
    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    # --- sources
    def sources(self) -> dict[str, SourceRow]:
        rows = self.db.execute(
            "SELECT path, sha256, size, mtime_ns, page, status, reason, attempts, concepts FROM sources"
        )
        return {
            r[0]: SourceRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(json.loads(r[8])))
            for r in rows
        }

    def put_source(self, row: SourceRow) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.path, row.sha256, row.size, row.mtime_ns, row.page, row.status, row.reason,
             row.attempts, json.dumps(list(row.concepts))),
        )

    def delete_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path=?", (path,))

    # --- analyses (cache keyed by content hash, so a renamed file is not re-analysed)
    def get_analysis(self, sha256: str, backend: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT data FROM analyses WHERE sha256=? AND backend=?", (sha256, backend)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def analysed(self, backend: str) -> set[str]:
        """Content hashes with a cached analysis for this backend key."""
        return {r[0] for r in self.db.execute("SELECT sha256 FROM analyses WHERE backend=?", (backend,))}

    def get_sentences(self, sha256: str, backend: str) -> list[Any] | None:
        row = self.db.execute(
            "SELECT sentences FROM analyses WHERE sha256=? AND backend=?", (sha256, backend)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def put_analysis(self, sha256: str, backend: str, data: dict[str, Any]) -> None:
        body = {k: v for k, v in data.items() if k != "sentences"}
        self.db.execute(
            "INSERT OR REPLACE INTO analyses VALUES (?, ?, ?, ?)",
            (sha256, backend, json.dumps(body), json.dumps(data.get("sentences", []))),
        )

    def clear_analyses(self, backend: str) -> None:
        self.db.execute("DELETE FROM analyses WHERE backend=?", (backend,))

    def prune_analyses(self, keep: Iterable[str]) -> None:
        keep_set = set(keep)
        stale = [r[0] for r in self.db.execute("SELECT sha256 FROM analyses") if r[0] not in keep_set]
        self.db.executemany("DELETE FROM analyses WHERE sha256=?", [(s,) for s in stale])

    # --- catalog cache for index.md
    def catalog(self) -> dict[str, tuple[int, int, str, str]]:
        rows = self.db.execute("SELECT path, mtime_ns, size, title, description FROM catalog")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def set_catalog(self, entries: dict[str, tuple[int, int, str, str]],
                    old: dict[str, tuple[int, int, str, str]] | None = None) -> None:
        """Store the catalog; with `old` (what catalog() returned), write only the difference."""
        if old is None:
            self.db.execute("DELETE FROM catalog")
            old = {}
        self.db.executemany("DELETE FROM catalog WHERE path=?", [(k,) for k in old if k not in entries])
        self.db.executemany(
            "INSERT OR REPLACE INTO catalog VALUES (?, ?, ?, ?, ?)",
            [(k, *v) for k, v in entries.items() if old.get(k) != v],
        )

    # --- pages
    def pages(self) -> dict[str, tuple[str, str, str | None]]:
        return {r[0]: (r[1], r[2], r[3]) for r in self.db.execute("SELECT path, sha256, kind, owner FROM pages")}

    def put_page(self, path: str, sha256: str, kind: str, owner: str | None) -> None:
        self.db.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?)", (path, sha256, kind, owner))

    def delete_page(self, path: str) -> None:
        self.db.execute("DELETE FROM pages WHERE path=?", (path,))

    def forget_renders(self, pages: Iterable[str]) -> None:
        """Pages changed underneath (git put back another version): whatever backend rendered
        them renders them again on its next compile instead of trusting what it last wrote."""
        items = [(p,) for p in pages]
        self.db.executemany("UPDATE offline_docs SET concepts=NULL WHERE page=?", items)
        self.db.executemany("UPDATE offline_concepts SET fingerprint='' WHERE 'concepts/' || slug || '.md'=?", items)

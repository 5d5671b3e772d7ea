"""`.wikimem/state.db`: what wikimem last saw and wrote. Derived, never canonical.

Deleting it is safe: the next compile rebuilds it from the pages' front matter
and the raw files, recompiling nothing that is up to date.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .workspace import racy

log = logging.getLogger("wikimem.state")

SCHEMA_VERSION = 4
# meta key of a database made empty (first run, a fresh clone, a corrupt file set aside) whose
# pages have not yet been read back: `fresh` survives until a compile rebuilds it
UNREBUILT = "state.unrebuilt"
# meta key set when git brought in pages another clone wrote beside this one's (a merge): the
# next compile runs its backend even with no source changed, so the merged wiki becomes what a
# compile of the merged raw/ on one machine gives; the compile that commits clears it
RENDER_PENDING = "render.pending"

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
    n INTEGER NOT NULL,             -- how often the source says it
    level INTEGER NOT NULL,         -- how strongly it names it (its signal level, 0: a mention)
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
CREATE TABLE IF NOT EXISTS facts (    -- facts.py's statements of one source, by content hash
    sha256 TEXT PRIMARY KEY,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pages (
    path TEXT PRIMARY KEY,          -- wiki-relative
    sha256 TEXT NOT NULL,           -- hash of the bytes wikimem last wrote
    kind TEXT NOT NULL,             -- source | part (a long source's part page) | concept
    owner TEXT                      -- the source (source and part pages) or concept key (concept pages)
);
"""


# added after schema 4 without a new version: every database gains them when opened (a
# statement that writes nothing when they are there already)
XREF_SCHEMA = """
-- cross-references across the set (backends/offline_xrefs.py): what each counted source names
-- (`.. _label:`), what it refers to (`:ref:`, `:doc:`), and the digest of how its references
-- resolved when its pages were last rendered
CREATE TABLE IF NOT EXISTS xref_labels (
    path TEXT NOT NULL, name TEXT NOT NULL, line INTEGER NOT NULL, title TEXT
);
CREATE INDEX IF NOT EXISTS xref_labels_name ON xref_labels(name);
CREATE INDEX IF NOT EXISTS xref_labels_path ON xref_labels(path);
CREATE TABLE IF NOT EXISTS xref_uses (
    path TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
    key TEXT NOT NULL               -- a label, or a document's name (the last part of its path)
);
CREATE INDEX IF NOT EXISTS xref_uses_key ON xref_uses(key);
CREATE INDEX IF NOT EXISTS xref_uses_path ON xref_uses(path);
CREATE TABLE IF NOT EXISTS xref_seen (path TEXT PRIMARY KEY, digest TEXT NOT NULL);
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
    ctime_ns: int = 0  # the file's ctime when recorded (0: not known, so not trusted)
    seen_ns: int = 0  # the wall clock of the scan that read the file's times (see workspace.racy)

    def same_file(self, size: int, mtime_ns: int, ctime_ns: int) -> bool:
        """Whether a file with these times is, without reading it, the one this row recorded:
        the same size, mtime and ctime (ctime cannot be set back, so restoring an mtime does
        not hide an edit), and not racily clean when recorded (then its content decides)."""

        return (self.size == size and self.mtime_ns == mtime_ns and self.ctime_ns == ctime_ns and ctime_ns != 0
                and not racy(mtime_ns, ctime_ns, self.seen_ns))


@dataclass(frozen=True)
class EncodedAnalysis:
    """A source's analysis, its facts and its outline as state.db holds them (JSON texts), made
    where the analysis is (encode_analysis): a compile's worker processes encode theirs, and
    the compile stores the texts (State.put_encoded) rather than decoding and encoding them."""

    body: str  # the analysis without its sentences
    sentences: str
    facts: str
    outline: str


def encode_analysis(data: Mapping[str, Any], outline: Mapping[str, Any]) -> EncodedAnalysis:
    """`data` (an analysis, SourceAnalysis.to_json) and `outline` as put_analysis, put_facts
    and put_outline store them."""
    return EncodedAnalysis(*_analysis_texts(data), json.dumps(data.get("claims") or {}), json.dumps(outline))


def _analysis_texts(data: Mapping[str, Any]) -> tuple[str, str]:
    """An analysis as the analyses table holds it: its body, its sentences."""
    return json.dumps({k: v for k, v in data.items() if k != "sentences"}), json.dumps(data.get("sentences", []))


def is_corrupt(exc: BaseException) -> bool:
    """An SQLite error that means the file is damaged or not a database at all (not a lock,
    a full disk or a bug in a query): state.db is derived, so such a file is set aside."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(exc)
    return "malformed" in text or "not a database" in text


def _plain_error(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF == sqlite3.SQLITE_ERROR)
    return "no such" in str(exc) or "has no column" in str(exc)


def _truncated(path: Path) -> bool:
    """The file is shorter than its own header says: a cut copy or a disk that filled up.

    SQLite notices only when a query reaches a missing page, which may be any later query;
    the header check costs one 100-byte read and catches the common case before any work."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return False
    if len(header) < 100:
        return bool(header)  # a few bytes: a database has at least a full header
    if not header.startswith(b"SQLite format 3\x00"):
        return True
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]  # the page count is trusted only when these agree
    return valid and pages * page_size > size


def _checks_out(path: Path) -> bool:
    """SQLite's own quick check, for a file the header check doubts: a database being
    checkpointed by another process (the daemon, while lint opens it) may for a moment be
    shorter than its new header says, and must not be taken for a damaged one."""
    try:
        db = sqlite3.connect(str(path), timeout=30)
    except sqlite3.Error:
        return False
    try:
        row = db.execute("PRAGMA quick_check(1)").fetchone()
        return bool(row) and row[0] == "ok"
    except sqlite3.DatabaseError as exc:
        return not is_corrupt(exc)
    finally:
        db.close()


_EXPECTED: dict[str, tuple[str, ...]] = {}


def _schema_damage(db: sqlite3.Connection) -> str | None:
    """Why a database that opened is still not a state.db wikimem can use (a table missing, or
    with other columns: a file written by something else, or damaged by hand), or None. Its
    tables and columns are read in one query and compared with SCHEMA's."""
    if not _EXPECTED:
        memory = sqlite3.connect(":memory:")
        memory.executescript(SCHEMA)
        _EXPECTED.update(_columns(memory))
        memory.close()
    found = _columns(db)
    for table, columns in _EXPECTED.items():
        if table not in found:
            return f"it has no {table} table"
        if found[table] != columns:
            return f"its {table} table has other columns"
    return None


def _columns(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for table, column in db.execute(
            "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p "
            "WHERE m.type = 'table' ORDER BY m.name, p.cid"):
        out.setdefault(table, []).append(column)
    return {k: tuple(v) for k, v in out.items()}


def set_aside(path: Path) -> Path:
    """Move a damaged state.db (and its -wal/-shm) out of the way; returns where it went."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 2
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    with contextlib.suppress(FileNotFoundError):
        os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path.with_name(path.name + suffix), target.with_name(target.name + suffix))
    return target


class State:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # set when the file was unreadable and moved aside: the caller says so in one line
        self.recovered: str | None = None
        # what one compile works out once and reads twice (timelines.current), gone with it
        self.memo: dict[str, Any] = {}
        if (path.exists() or path.is_symlink()) and not path.is_file():
            self._set_aside("it is not a file")  # a folder, a dangling link: nothing SQLite can open
        elif path.exists() and _truncated(path) and not _checks_out(path):
            self._set_aside("it is shorter than its header says")
        try:
            self._open()
            damage = _schema_damage(self.db)
        except sqlite3.DatabaseError as exc:
            # damaged, or SQLite's plain error while the schema was read or made (a table of
            # that name with other columns): never a lock, a full disk or an I/O error
            if not (is_corrupt(exc) or _plain_error(exc)):
                raise
            damage = str(exc)
        if damage is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self._set_aside(damage)
            self._open()

    def _set_aside(self, why: str) -> None:
        moved = set_aside(self.path)
        self.recovered = (
            f"state.db was unreadable ({why}); moved it to {moved.name} and rebuilt it from the pages"
        )
        log.warning("%s", self.recovered)

    def _open(self) -> None:
        path = self.path
        # a new database starts unrebuilt: whoever opens it first (a compile, or lint writing
        # index.md) leaves the rebuild from the pages to the next compile, which reads raw/
        new = not path.exists()
        self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            # the header alone reads fine on a file cut short or overwritten past it: touch the
            # schema too, so a damaged file fails here rather than halfway through a compile
            self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if version in (2, 3):
            # version 3 added the offline backend's tables, version 4 its postings' counts:
            # keep the analysis cache, and the backend fills its tables from it on the next
            # compile (its store format changed with them, so it counts everything again)
            self.db.execute("DROP TABLE IF EXISTS offline_postings")
            self.db.executescript(SCHEMA)
            self.db.execute("DELETE FROM meta WHERE key = 'offline.store'")  # its totals: count again
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            version = SCHEMA_VERSION
        if version not in (0, SCHEMA_VERSION):
            # an older layout: state is derived, so start over rather than migrate
            self.db.close()
            path.unlink()
            new = True
            self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
        if version != SCHEMA_VERSION:
            # only on a new database: a no-op compile must not write state.db either
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            if new or version == 0:
                self.set_meta(UNREBUILT, True)
        self.fresh = bool(self.get_meta(UNREBUILT))
        # added after schema 3 without a new version: an existing database gains the table
        # (a statement that writes nothing when it is there already)
        self.db.execute("CREATE TABLE IF NOT EXISTS facts (sha256 TEXT PRIMARY KEY, data TEXT NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS outlines (sha256 TEXT PRIMARY KEY, data TEXT NOT NULL)")
        # a source's ctime and when its times were read (SourceRow.same_file), beside its row
        self.db.execute("CREATE TABLE IF NOT EXISTS source_stats (path TEXT PRIMARY KEY, ctime_ns INTEGER NOT NULL,"
                        " seen_ns INTEGER NOT NULL)")
        # the offline backend's concept pages as last rendered, but for their Related section
        # (offline_pages.KeptPage): a page whose related concepts alone moved is made from it
        self.db.execute("CREATE TABLE IF NOT EXISTS offline_kept (key TEXT PRIMARY KEY, page TEXT NOT NULL)")
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'xref_seen'").fetchone() is None:
            self.db.executescript(XREF_SCHEMA)

    def rebuilt(self) -> None:
        """The pages were read back into this database (compiler.rebuild_state)."""
        self.db.execute("DELETE FROM meta WHERE key=?", (UNREBUILT,))
        self.fresh = False

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

    def delete_meta(self, key: str) -> None:
        self.db.execute("DELETE FROM meta WHERE key=?", (key,))

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))

    # --- sources
    def sources(self) -> dict[str, SourceRow]:
        rows = self.db.execute(
            "SELECT s.path, sha256, size, mtime_ns, page, status, reason, attempts, concepts, t.ctime_ns, t.seen_ns"
            " FROM sources s LEFT JOIN source_stats t ON t.path = s.path"
        )
        return {
            r[0]: SourceRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], tuple(json.loads(r[8])), r[9] or 0, r[10] or 0)
            for r in rows
        }

    def put_source(self, row: SourceRow) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.path, row.sha256, row.size, row.mtime_ns, row.page, row.status, row.reason,
             row.attempts, json.dumps(list(row.concepts))),
        )
        self.db.execute("INSERT OR REPLACE INTO source_stats VALUES (?, ?, ?)", (row.path, row.ctime_ns, row.seen_ns))

    def delete_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path=?", (path,))
        self.db.execute("DELETE FROM source_stats WHERE path=?", (path,))

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
        self._put_analysis(sha256, backend, *_analysis_texts(data))

    def _put_analysis(self, sha256: str, backend: str, body: str, sentences: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO analyses VALUES (?, ?, ?, ?)", (sha256, backend, body, sentences))

    def put_encoded(self, sha256: str, backend: str, encoded: EncodedAnalysis) -> None:
        """put_analysis, put_facts and put_outline of an analysis encoded already."""
        self._put_analysis(sha256, backend, encoded.body, encoded.sentences)
        self._put_facts(sha256, encoded.facts)
        self._put_outline(sha256, encoded.outline)

    def clear_analyses(self, backend: str) -> None:
        self.db.execute("DELETE FROM analyses WHERE backend=?", (backend,))

    def prune_analyses(self, keep: Iterable[str]) -> None:
        keep_set = set(keep)
        stale = [r[0] for r in self.db.execute("SELECT sha256 FROM analyses") if r[0] not in keep_set]
        self.db.executemany("DELETE FROM analyses WHERE sha256=?", [(s,) for s in stale])
        for table in ("facts", "outlines"):
            gone = [r[0] for r in self.db.execute(f"SELECT sha256 FROM {table}") if r[0] not in keep_set]
            self.db.executemany(f"DELETE FROM {table} WHERE sha256=?", [(s,) for s in gone])

    # --- outlines (sources.outline: what search indexes a text source by), by content hash
    def put_outline(self, sha256: str, outline: dict[str, Any]) -> None:
        self._put_outline(sha256, json.dumps(outline))

    def _put_outline(self, sha256: str, text: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO outlines VALUES (?, ?)", (sha256, text))

    def get_outline(self, sha256: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT data FROM outlines WHERE sha256=?", (sha256,)).fetchone()
        got = json.loads(row[0]) if row else None
        return got if isinstance(got, dict) else None

    # --- facts (facts.py), by content hash
    def get_facts(self, sha256: str) -> Any:
        row = self.db.execute("SELECT data FROM facts WHERE sha256=?", (sha256,)).fetchone()
        return json.loads(row[0]) if row else None

    def facts_with(self, shas: Iterable[str]) -> dict[str, Any]:
        """The cached facts of many sources at once, by content hash (those cached): one scan of
        the table rather than a query per source (10k sources: 10k queries)."""
        wanted = set(shas)
        return {sha: ([] if data == "[]" else json.loads(data))
                for sha, data in self.db.execute("SELECT sha256, data FROM facts") if sha in wanted}

    def put_facts(self, sha256: str, facts: Any) -> None:
        self._put_facts(sha256, json.dumps(facts))

    def _put_facts(self, sha256: str, text: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO facts VALUES (?, ?)", (sha256, text))

    # --- catalog cache for index.md
    def catalog(self) -> dict[str, tuple[int, int, str, str]]:
        rows = self.db.execute("SELECT path, mtime_ns, size, title, description FROM catalog")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def add_catalog(self, entries: dict[str, tuple[int, int, str, str]]) -> None:
        """Store these rows of the catalog, leaving the others as they are."""
        self.db.executemany("INSERT OR REPLACE INTO catalog VALUES (?, ?, ?, ?, ?)",
                            [(k, *v) for k, v in entries.items()])

    def set_catalog(self, entries: dict[str, tuple[int, int, str, str]],
                    old: dict[str, tuple[int, int, str, str]] | None = None) -> None:
        """Store the catalog; with `old` (what catalog() returned), write only the difference."""
        if old is None:
            self.db.execute("DELETE FROM catalog")
            old = {}
        self.db.executemany("DELETE FROM catalog WHERE path=?", [(k,) for k in old if k not in entries])
        self.add_catalog({k: v for k, v in entries.items() if old.get(k) != v})

    # --- pages
    def pages(self) -> dict[str, tuple[str, str, str | None]]:
        return {r[0]: (r[1], r[2], r[3]) for r in self.db.execute("SELECT path, sha256, kind, owner FROM pages")}

    def pages_of_kind(self, kind: str) -> dict[str, str | None]:
        """path -> owner of the pages of one kind (`part`: a long source's part pages, by source)."""
        return {r[0]: r[1] for r in self.db.execute("SELECT path, owner FROM pages WHERE kind=?", (kind,))}

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


JOURNAL_NAME = "pages.journal"
# the kinds of page state.db's pages table records
JOURNALLED_KINDS = ("source", "part", "concept")


@dataclass(frozen=True)
class Journalled:
    """What the journal holds for one page: every hash written for it, its kind and owner,
    and whether a writer created it (no file was there before)."""

    hashes: frozenset[str]
    kind: str
    owner: str | None
    created: bool


class WriteJournal:
    """`.wikimem/pages.journal`: the hash of every page a writer is about to write, made
    durable before the first page is written, emptied once state.db has committed them.

    A compile writes its pages and then commits state.db; a kill, a full disk or a power
    cut in between leaves pages whose bytes state.db has never seen. A page wikimem wrote
    whole says so itself (its digest, pages.page_owner); the journal is the record of the
    set: which pages that writer had written, so that those it created are removed when
    the redone compile would not create them again, and state.db records the others. It
    lives beside state.db, not in it: the compile's changes to state.db are one transaction
    that must commit after the pages, so nothing in that database can be durable before
    them; and a corrupt state.db set aside does not take the journal with it. Lines
    accumulate over interrupted runs until one commits: every hash written for a page is
    kept till then. Every writer uses it (ownership.write_pages), each line naming which.
    """

    def __init__(self, state_dir: Path):
        self.path = state_dir / JOURNAL_NAME

    def record(self, writes: Iterable[tuple[Any, ...]], *, writer: str = "compile") -> None:
        """(page, sha256, kind, owner[, created]) for pages about to be written; fsynced before returning."""
        lines = "".join(
            json.dumps({"page": w[0], "sha256": w[1], "kind": w[2], "owner": w[3],
                        "created": bool(w[4]) if len(w) > 4 else True, "writer": writer}, ensure_ascii=False) + "\n"
            for w in writes
        )
        if not lines:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, lines.encode("utf-8", "surrogateescape"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> dict[str, Journalled]:
        """page -> what the journal holds for it; a line cut short by a kill is skipped. A line
        from before the journal said whether a page was created counts as a compile's creation."""
        try:
            text = self.path.read_bytes().decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            return {}
        out: dict[str, Journalled] = {}
        for line in text.splitlines():
            try:
                item = json.loads(line)
                page, sha, kind, owner = str(item["page"]), str(item["sha256"]), str(item["kind"]), item["owner"]
                created = bool(item.get("created", True))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            before = out.get(page)
            if before is None:
                out[page] = Journalled(frozenset({sha}), kind, owner if isinstance(owner, str) else None, created)
            else:
                out[page] = Journalled(before.hashes | {sha}, before.kind, before.owner, before.created or created)
        return out

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


def recover_pages(wiki: Path, state: State, journal: Mapping[str, Journalled]) -> tuple[list[str], list[str]]:
    """Pages an interrupted writer wrote, made wikimem's again; returns (adopted, removed).

    A page whose bytes are one of the journalled hashes is wikimem's: if state.db knew the
    page, it now records those bytes (and whatever rendered it renders it again, since the
    backend's own records rolled back with the rest of that compile); if state.db did not
    know it and the writer created it (an interrupted compile), it is removed, and the compile
    that follows creates it again if it is still wanted, so no page outlives the sources that
    made it; if the writer wrote over a page state.db did not know (one that certified itself),
    state.db records it. A page whose bytes are not journalled (a person edited it since) is
    left as it is.
    """
    known = state.pages()
    adopted: list[str] = []
    removed: list[str] = []
    base = os.path.realpath(wiki)
    for rel, entry in sorted(journal.items()):
        file = os.path.realpath(os.path.join(base, rel))
        if not file.startswith(base + os.sep):
            continue  # never ours to touch: the journal names pages inside wiki/ only
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            continue  # gone (the compile that follows sees it missing) or unreadable
        sha = _sha256(data)
        if sha not in entry.hashes:
            continue
        row = known.get(rel)
        if row is not None and row[0] == sha:
            continue
        if row is None and entry.created:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(file)
            removed.append(rel)
        elif row is None:
            if entry.kind in JOURNALLED_KINDS:
                state.put_page(rel, sha, entry.kind, entry.owner)
                adopted.append(rel)
        else:
            state.put_page(rel, sha, row[1], row[2])
            adopted.append(rel)
    if adopted:
        state.forget_renders(adopted)
    return adopted, removed


def skipped_reason(db_path: Path, path: str, size: int, mtime_ns: int) -> str | None:
    """Why the compile skipped the raw file `path` as it is now (the same size and mtime), read
    from state.db without writing it (an agent's read in another process); None when it did not,
    or state.db cannot say."""
    if not db_path.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1)
        try:
            row = db.execute("SELECT size, mtime_ns, status, reason FROM sources WHERE path=?", (path,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    if row is None or row[2] != "skipped" or (row[0], row[1]) != (size, mtime_ns):
        return None
    return str(row[3] or "skipped")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def skipped_sources(path: Path) -> set[str]:
    """The raw files the last compile skipped (read as no source: empty, binary, no prose, a
    template), read from state.db opened read-only; empty when there is no readable state.
    `wikimem status` and lint count the sources compile compiles: the files raw/'s walk finds,
    less these."""
    if not path.exists():
        return set()
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return set()
    try:
        return {r[0] for r in db.execute("SELECT path FROM sources WHERE status = 'skipped'")}
    except sqlite3.Error:
        return set()
    finally:
        db.close()

"""Page digests: what the rules need from each page's bytes, computed once per page version.

A compiled 10k-source wiki is some 80 MB of Markdown; reading, parsing and
scanning all of it was most of what lint cost, on every run. Everything a rule
needs that depends on a page's own bytes and path alone (front matter, the
distinct targets it links, its [[wikilinks]], terms in bold, secrets, the quotes
and figures it cites) is a PageDigest, stored in `.wikimem/lint-cache.db` under
the page's path, size, mtime, ctime and content hash. A later run computes
digests only for pages that changed, and reads no unchanged page at all. What
depends on other files is decided at run time: where a [[wikilink]] leads,
whether a target exists, and whether a quote is in its source (cached apart, per
page, checked against the cited sources' current hashes).

The first run over many pages computes digests in the run's worker processes
(workers.py). The cache is derived: delete it and the next run rebuilds it.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import hashlib
import json
import logging
import posixpath
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from ..index_page import is_catalog
from ..links import REF_DEF, RESOLVED_TARGETS, WIKILINK, blank_code, md_links, resolve_target
from ..pages import FrontMatterError, parse_meta, simple_meta, split_front_matter
from ..workspace import ensure_state_dir
from . import workers
from .extract import (
    meta_problems,
    page_bold,
    page_figures,
    page_hits,
    page_quotes,
    redact,
    secret_id,
    title_key,
)
from .model import SECTIONS, SPECIAL, PageDigest, code_version

if TYPE_CHECKING:
    from .context import Context

log = logging.getLogger("wikimem.lint")

RACY_NS = 3_000_000_000  # FAT keeps times to 2 s; ext4, APFS, NTFS and tmpfs to the nanosecond or 100 ns
PARALLEL_THRESHOLD = 400  # pages to digest before worker processes pay for their start
CHUNK = 200  # pages per worker task


# digests are keyed by the code that computes them
VERSION = code_version(b"page-digest-1", "digest.py", "extract.py", "model.py", "corpus.py", "../links.py",
                       "../pages.py", "../naming.py", "../index_page.py",
                       "../lexicon/__init__.py", "../lexicon/english.txt")


def compute(data: bytes, rel: str) -> PageDigest:
    """The digest of one page, from its bytes and its wiki-relative path."""

    text = data.decode("utf-8", errors="replace")
    fm, body, offset = split_front_matter(text)
    error: str | None = None
    meta: dict[str, Any] | None
    if fm is None:
        meta = {}
        if text.startswith("---"):
            error, meta = "front matter is opened with '---' but never closed", None
    else:
        try:
            meta = simple_meta(fm)
            if meta is None:
                # YAML makes dates of `updated: 2026-11-29`; the rules read them as ISO text, as
                # simple_meta gives them, and so can the cache
                meta = {k: v.isoformat() if isinstance(v, datetime.date) else v for k, v in parse_meta(fm).items()}
        except FrontMatterError as exc:
            meta, error = None, str(exc)
    if b"\xef\xbf\xbd" not in data and "\ufffd" in text:
        error = error or "file is not valid UTF-8"
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    line_of = _LineCounter(text)

    secrets = tuple((line_of(at), kind, redact(value), secret_id(value)) for at, kind, value in page_hits(text))
    title_keys: tuple[str, ...] = ()
    if meta is not None:
        names = [str(meta.get("title") or posixpath.splitext(posixpath.basename(rel))[0])]
        aliases = meta.get("aliases")
        if isinstance(aliases, list):
            names += [str(a) for a in aliases]
        title_keys = tuple(dict.fromkeys(key for name in names if (key := title_key(name))))
    problems: tuple[str, ...] = ()
    if meta is not None and fm is not None and "/" in rel and rel.split("/", 1)[0] in SECTIONS:
        problems = tuple(meta_problems(meta))
    if rel in ("log.md", "lint.md"):
        # log.md records history (links to pages since removed are true there); lint.md is ours
        return PageDigest(meta, error, fm is not None, offset, lines, (), (), title_keys, problems, (), (), secrets, (), (), ())
    generated = rel in SPECIAL or is_catalog(rel)
    body_start = len(text) - len(body)
    prose = blank_code(text)
    folder = posixpath.dirname(rel)
    written: dict[str, None] = {}
    if "](" in prose:
        # the distinct targets only: a page links the same pages and sources many times, and
        # broken_links reads the page again for every occurrence of a target that is missing;
        # without their #fragments: a source page cites one raw file at many lines
        written = dict.fromkeys(
            (bracketed or bare).partition("#")[0] for _label, bracketed, bare in md_links(prose).findall(prose, body_start)
        )
    if "]:" in prose:
        for label, target in REF_DEF.findall(prose, body_start):
            if not label.startswith("^"):  # a footnote, not a link
                written[target] = None
    # resolve_target's cache, read here first: most targets repeat across the pages of a folder
    known = RESOLVED_TARGETS
    wiki: dict[str, None] = {}
    other: dict[str, None] = {}
    for target in written:
        resolved = (known.get((folder, target)) or resolve_target(rel, target, folder))[0]
        if resolved is None:
            continue
        if resolved.startswith("wiki/"):
            if resolved[5:] != rel:
                wiki[resolved[5:]] = None
        else:
            other[resolved] = None
    wikinames: tuple[str, ...] = ()
    if "[[" in prose:
        wikinames = tuple(dict.fromkeys(name.strip() for name, _frag, _label in WIKILINK.findall(prose, body_start)))
    links_to, others = tuple(wiki), tuple(other)
    if generated:
        return PageDigest(meta, error, fm is not None, offset, lines, links_to, others, title_keys, problems,
                          wikinames, (), secrets, (), (), ())
    quotes = page_quotes(text, body_start, rel, line_of)
    figures = page_figures(prose, body_start, rel, line_of)
    cites = tuple(sorted({q[0] for q in quotes} | {f[0] for f in figures}))
    return PageDigest(
        meta, error, fm is not None, offset, lines, links_to, others, title_keys, problems, wikinames,
        page_bold(prose, body, body_start), secrets, cites, quotes, figures,
    )


class _LineCounter:
    """1-based line of an offset, counted from the previous one (offsets mostly come in order)."""

    def __init__(self, text: str):
        self.text = text
        self.at = 0
        self.line = 1

    def __call__(self, at: int) -> int:
        if at < self.at:
            self.at, self.line = 0, 1
        self.line += self.text.count("\n", self.at, at)
        self.at = at
        return self.line


def _encode(digest: PageDigest) -> str | None:
    """The digest as JSON, or None when its front matter does not survive JSON (a YAML date, a
    nested mapping with number keys): such a page is digested again on every run, never served wrong."""
    if digest.meta and not _json_safe(digest.meta):
        return None
    try:
        return json.dumps(digest._replace(quotes=None, figures=None), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def _json_safe(value: Any) -> bool:
    """Does JSON give this value back as it is (str keys; no tuples, dates or sets)?"""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    return False


def _decode(data: str) -> PageDigest | None:
    try:
        fields = json.loads(data)
        return PageDigest(*fields)
    except (ValueError, TypeError):
        return None


def digest_file(file: str, rel: str) -> tuple[PageDigest, str | None, str]:
    """A page's digest, its encoding for the cache (None: not to be cached) and its content hash."""
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        unreadable = PageDigest(None, f"cannot read ({exc.strerror})", False, 0, 0, (), (), (), (), (), (), (), (), (), ())
        return unreadable, None, ""
    digest = compute(data, rel)
    return digest, _encode(digest), hashlib.blake2b(data, digest_size=16).hexdigest()


def _content_hash(file: str) -> str | None:
    try:
        with open(file, "rb") as handle:
            return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
    except OSError:
        return None


Digested = tuple[str, str | None, PageDigest | tuple[Any, Any], str]


def _digest_all(jobs: list[tuple[str, str]]) -> list[Digested]:
    """(rel, encoded, digest, content hash) of (file, rel) pages; where there is an encoding, instead
    of the digest only what the encoding leaves out, its quotes and figures (half the bytes through
    a worker's pipe)."""
    out: list[Digested] = []
    for file, rel in jobs:
        digest, encoded, sha = digest_file(file, rel)
        out.append((rel, encoded, digest if encoded is None else (digest.quotes, digest.figures), sha))
    return out


def _compute_chunk(jobs: list[tuple[str, str]]) -> list[Digested]:
    gc.disable()  # in a worker: many small objects, few cycles, and the worker exits when done
    return _digest_all(jobs)


class DigestStore:
    """The page_digests table of lint-cache.db: digests, and per page the grounding of its quotes.

    A row is trusted while the page's size, mtime and ctime match it, and only when the page had
    not been written in the RACY_NS before it was digested: a file system that keeps times to the
    second (or two) could otherwise hide an edit of the same size made right after the digest
    (the "racy clean" case git guards against the same way). A row that is racy, or whose times
    moved (a copied or restored workspace, a checkout), is checked against the page's content
    hash instead: the page is read, not digested again, when its bytes are the same.
    """

    COLUMNS = ("path", "size", "mtime_ns", "ctime_ns", "digested_ns", "sha", "version", "digest", "grounding")

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.db: sqlite3.Connection | None = None
        # path -> (size, mtime_ns, ctime_ns, racy, sha, digest, grounding)
        self.rows: dict[str, tuple[int, int, int, bool, str, str, str | None]] = {}
        self.write: dict[str, tuple[int, int, int, str, str]] = {}  # path -> (size, mtime, ctime, sha, digest)
        self.grounding_write: dict[str, str] = {}
        self.grounding_rows: dict[str, str | None] = {}
        self.digested_ns = 0
        self.complete = False  # every page of the wiki was seen: rows of pages gone may be dropped
        try:
            ensure_state_dir(ctx.ws)  # a fresh clone has no .wikimem/ yet: the next run is then warm
        except OSError:
            return
        try:
            self.db = sqlite3.connect(str(ctx.ws.state_dir / "lint-cache.db"), isolation_level=None, timeout=5)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("DROP TABLE IF EXISTS pages")  # an early layout
            columns = tuple(r[1] for r in self.db.execute("PRAGMA table_info(page_digests)"))
            if columns and columns != self.COLUMNS:  # another layout: derived data, so start again
                self.db.execute("DROP TABLE page_digests")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS page_digests (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER,"
                " ctime_ns INTEGER, digested_ns INTEGER, sha TEXT, version INTEGER, digest TEXT, grounding TEXT)"
            )
            for path, size, mtime, ctime, digested, sha, data, grounding in self.db.execute(
                "SELECT path, size, mtime_ns, ctime_ns, digested_ns, sha, digest, grounding FROM page_digests"
                " WHERE version=?", (VERSION,),
            ):
                # racy: written shortly before it was digested; a same-second edit could keep size and times
                racy = digested - max(mtime, ctime) < RACY_NS
                self.rows[path] = (size, mtime, ctime, racy, sha, data, grounding)
        except sqlite3.Error as exc:  # a cache that cannot be read costs time, nothing else
            log.info("lint: page cache unavailable (%s)", exc)
            self.close()

    def digests(self, found: list[tuple[str, str, int, int, int]]) -> dict[str, PageDigest]:
        """rel -> digest for the pages found: from the cache while size, mtime and ctime match,
        or while the content hash does; the others are digested (in worker processes when many)."""
        # taken before any page is read: an edit while they are read makes the row racy, not trusted
        self.digested_ns = time.time_ns()
        out: dict[str, PageDigest] = {}
        todo: list[tuple[str, str, int, int, int]] = []
        for item in found:
            rel, file, size, mtime, ctime = item
            row = self.rows.get(rel)
            if row is not None:
                same_times = row[0] == size and row[1] == mtime and row[2] == ctime and not row[3]
                digest = _decode(row[5]) if same_times or _content_hash(file) == row[4] else None
                if digest is not None:
                    out[rel] = digest
                    self.grounding_rows[rel] = row[6]
                    if not same_times:  # the same bytes: keep the digest under the page's new times
                        self.write[rel] = (size, mtime, ctime, row[4], row[5])
                    continue
            todo.append(item)
        keys = {rel: (size, mtime, ctime) for rel, _file, size, mtime, ctime in todo}
        for rel, encoded, made, sha in self._compute([(file, rel) for rel, file, *_ in todo]):
            if isinstance(made, PageDigest):
                out[rel] = made
            else:
                quotes, figures = made
                out[rel] = PageDigest(*json.loads(encoded or "null"))._replace(quotes=quotes, figures=figures)
            if encoded is not None:
                self.write[rel] = (*keys[rel], sha, encoded)
        self.complete = True
        return out

    def _compute(self, jobs: list[tuple[str, str]]) -> list[Digested]:
        pool = workers.pool(self.ctx.run) if len(jobs) >= PARALLEL_THRESHOLD else None
        if pool is None:
            return _digest_all(jobs)
        chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
        out: list[Digested] = []
        try:
            for part in pool.map(_compute_chunk, chunks):
                out.extend(part)
            return out
        except (OSError, RuntimeError) as exc:  # the workers died: digest the pages one by one instead
            log.info("lint: digesting pages in one process (%s)", exc)
            return _digest_all(jobs)

    def grounding(self, rel: str) -> str | None:
        return self.grounding_rows.get(rel)

    def set_grounding(self, rel: str, data: str) -> None:
        if self.grounding_rows.get(rel) != data:
            self.grounding_rows[rel] = data
            self.grounding_write[rel] = data

    def close(self) -> None:
        if self.db is None:
            return
        try:
            with contextlib.suppress(sqlite3.Error):
                if self.write or self.grounding_write:
                    self.db.execute("BEGIN")
                    self.db.executemany(
                        "INSERT OR REPLACE INTO page_digests (path, size, mtime_ns, ctime_ns, digested_ns, sha, version,"
                        " digest, grounding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(rel, size, mtime, ctime, self.digested_ns, sha, VERSION, data,
                          self.grounding_write.get(rel, self.grounding_rows.get(rel)))
                         for rel, (size, mtime, ctime, sha, data) in self.write.items()],
                    )
                    self.db.executemany(
                        "UPDATE page_digests SET grounding=? WHERE path=?",
                        [(data, rel) for rel, data in self.grounding_write.items() if rel not in self.write],
                    )
                    self.db.execute("COMMIT")
                self.db.execute("DELETE FROM page_digests WHERE version != ?", (VERSION,))
                if self.complete:
                    gone = [(rel,) for rel in self.rows if rel not in self.ctx.pages]
                    if gone:
                        self.db.executemany("DELETE FROM page_digests WHERE path=?", gone)
        finally:
            self.db.close()
            self.db = None


def store(ctx: Context) -> DigestStore:
    existing = ctx.run.digests
    if existing is None:
        existing = ctx.run.digests = DigestStore(ctx)
    return existing  # type: ignore[no-any-return]


def for_pages(ctx: Context, found: list[tuple[str, str, int, int, int]]) -> dict[str, PageDigest]:
    return store(ctx).digests(found)


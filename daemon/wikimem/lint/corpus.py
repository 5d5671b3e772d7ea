"""The raw sources as lint reads them: words, dated order and claims, cached by content hash.

Lint reads the raw files themselves (through sources.load_source), never what a
page summarised. Loading and claim extraction are cached in
`.wikimem/lint-cache.db` by the file's SHA-256, so a second run on an unchanged
wiki reads no source twice; the cache is derived and safe to delete.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import logging
import os
import re
import sqlite3
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis import split_sentences
from ..facts import (
    DIGIT,
    HINT,
    Fact,
    Profile,
    extract,
    introduces_list,
    may_remove,
    statements_of,
    title_version,
)
from ..links import LINK_TARGET
from ..sources import Block, Document, SkipSource, clean_inline, load_source
from ..workspace import ensure_state_dir, file_sha256
from . import workers
from .extract import text_sketch
from .model import code_version

if TYPE_CHECKING:
    from .context import Context

log = logging.getLogger("wikimem.lint")


# records are keyed by the code that makes them: the loaders' use here, the claim rules, the sketch
CACHE_VERSION = code_version(b"lint-cache-1", "corpus.py", "claims.py", "extract.py", "../facts.py",
                             "../lexicon/__init__.py", "../lexicon/english.txt", "../links.py",
                             # how a document is read: its sections and releases date each claim
                             "../sources/__init__.py", "../sources/sections.py", "../sources/rst.py",
                             "../sources/markdown.py")
_WORDS = re.compile(r"\w+")
UNLINKED_FORMATS = frozenset({"text", "pdf"})  # formats whose text holds no Markdown links


def words(text: str) -> str:
    """Lowercase word sequence, space-padded, so `" a b " in words(doc)` tests a run of words.

    NFKC first: a composed and a decomposed "é", or a PDF's "ﬁ" ligature and "fi", are the same words.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if "&lt;" in text:
        text = text.replace("&lt;", "<")  # how a page writes a `<` glued to a URL (pages.inert)
    return " " + " ".join(_WORDS.findall(text.lower())) + " "


@dataclass
class SourceText:
    path: str  # raw/...
    sha256: str
    title: str = ""
    date: str | None = None  # the date the document carries (front matter or its own text)
    version: tuple[str, tuple[int, ...]] | None = None  # ("go", (1, 22)) from the title: release order
    mtime_ns: int = 0
    loaded_words: str | None = ""  # None until .words is read: a cached record's words are fetched on demand
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (text, line); not cached
    skipped: str | None = None
    claims: list[Any] = field(default_factory=list)  # claims.Claim, extracted once and cached
    profile: Profile = field(default_factory=Profile)  # facts.Profile: what kind of document, whose releases
    sketch: tuple[int, ...] | None = None  # passage hashes for the duplicate rule, cached
    fetch_words: Callable[[str], str] | None = field(default=None, repr=False, compare=False)

    @property
    def words(self) -> str:
        """The document's words (see words()); only the quote rules read them, for pages that changed."""
        if self.loaded_words is None:
            self.loaded_words = self.fetch_words(self.sha256) if self.fetch_words is not None else ""
        return self.loaded_words

    def to_json(self) -> dict[str, Any]:
        """The cached record, without the words (kept apart: most runs never read them)."""
        return {
            "title": self.title, "date": self.date,
            "version": [self.version[0], list(self.version[1])] if self.version else None,
            "skipped": self.skipped, "sketch": list(self.sketch) if self.sketch is not None else None,
            "claims": [c.to_json() for c in self.claims], "profile": self.profile.to_json(),
        }


class SourceCache:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.memo: dict[str, SourceText | None] = {}
        self.shas: dict[str, str | None] = {}
        self.db: sqlite3.Connection | None = None
        path = ctx.ws.state_dir / "lint-cache.db"
        with contextlib.suppress(OSError):
            ensure_state_dir(ctx.ws)
        if ctx.ws.state_dir.is_dir():
            with contextlib.suppress(sqlite3.Error):
                self.db = sqlite3.connect(str(path), isolation_level=None, timeout=5)
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("DROP TABLE IF EXISTS docs")  # the layout before words had a column of their own
                self.db.execute(
                    "CREATE TABLE IF NOT EXISTS sources (sha256 TEXT, version INTEGER, data TEXT, words TEXT,"
                    " PRIMARY KEY (sha256, version))"
                )
        self.pending: list[tuple[str, int, str, str]] = []
        self._rows: dict[str, str] = {}
        self._words: dict[str, str] = {}  # words of the records computed in this run
        self._futures: list[tuple[list[tuple[str, str, str, int, int]], Any]] = []

    def close(self) -> None:
        self._shutdown()
        if self.db is None:
            return
        try:
            # a cache that cannot be written only costs time on the next run
            with contextlib.suppress(sqlite3.Error):
                if self.pending:
                    self.db.execute("BEGIN")
                    self.db.executemany("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)", self.pending)
                    self.db.execute("COMMIT")
                # derived data: drop records of older code, and of files gone when this run saw every file
                self.db.execute("DELETE FROM sources WHERE version != ?", (CACHE_VERSION,))
                live = {sha for sha in self.shas.values() if sha}
                if live and len(self.shas) == len(self.ctx.raw_files) and len(live) < 30_000:
                    marks = ",".join("?" * len(live))
                    self.db.execute(f"DELETE FROM sources WHERE sha256 NOT IN ({marks})", tuple(live))
        finally:
            self.db.close()
            self.db = None

    def sha(self, path: str) -> str | None:
        """Current hash of a raw file; state.db's row is trusted while size and mtime match."""
        if path in self.shas:
            return self.shas[path]
        file = self.ctx.raw_files.get(path)
        value: str | None = None
        if file is not None:
            try:
                st = os.stat(file)
                row = self.ctx.state_sources.get(path)
                if row is not None and row.sha256 and row.size == st.st_size and row.mtime_ns == st.st_mtime_ns:
                    value = row.sha256
                else:
                    value = file_sha256(file)
            except OSError:
                value = None
        self.shas[path] = value
        return value

    def preload(self, paths: list[str]) -> None:
        """Fetch cached records for many sources in a few queries instead of one each."""
        self.start(paths)
        self.finish()

    def start(self, paths: list[str]) -> None:
        """Look up cached records and hand the uncached sources to worker processes, without waiting.

        run_lint calls this before it reads the pages, so the workers parse sources while
        this process reads pages and runs the rules that need no source; finish() collects.
        """
        if self.db is None:
            return
        wanted = {sha: p for p in paths if p not in self.memo and (sha := self.sha(p)) is not None}
        shas = list(wanted)
        for i in range(0, len(shas), 500):
            chunk = shas[i : i + 500]
            marks = ",".join("?" * len(chunk))
            with contextlib.suppress(sqlite3.Error):
                for sha, data in self.db.execute(
                    f"SELECT sha256, data FROM sources WHERE version=? AND sha256 IN ({marks})", (CACHE_VERSION, *chunk)
                ):
                    self._rows[sha] = data
        self._submit([(sha, p) for sha, p in wanted.items() if sha not in self._rows])

    def _submit(self, missing: list[tuple[str, str]]) -> None:
        """A first lint of a large wiki reads every source: split that over the cores (the run's
        pool, workers.py), only for many uncached sources, where starting workers pays off."""
        if len(missing) < PARALLEL_THRESHOLD or workers.count() < 2:
            return
        max_bytes = int(self.ctx.settings.max_source_mb * 1_000_000)
        jobs = []
        for sha, path in missing:
            file = self.ctx.raw_files[path]
            try:
                jobs.append((path, file, sha, os.stat(file).st_mtime_ns, max_bytes))
            except OSError:
                continue
        # chunks of jobs, not single jobs: one result message per chunk keeps the pipe traffic low
        chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
        pool = workers.pool(self.ctx.run)
        if pool is None:
            return  # no worker processes here: get() reads them one by one instead
        try:
            self._futures = [(chunk, pool.submit(_compute_records, chunk)) for chunk in chunks]
        except (OSError, RuntimeError) as exc:
            log.info("lint: reading sources in one process (%s)", exc)
            self._shutdown()

    def finish(self) -> None:
        """Wait for the records the workers compute (a chunk that failed is read here, one by one, later)."""
        try:
            for chunk, future in self._futures:
                try:
                    records = future.result()
                except (OSError, RuntimeError) as exc:
                    log.info("lint: reading %d sources in one process (%s)", len(chunk), exc)
                    continue
                for job, (record, record_words) in zip(chunk, records, strict=True):
                    self._rows[job[2]] = record
                    self._words[job[2]] = record_words
                    self.pending.append((job[2], CACHE_VERSION, record, record_words))
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        for _chunk, future in self._futures:
            future.cancel()  # the pool is the run's; run_lint stops it
        self._futures = []

    def get(self, path: str) -> SourceText | None:
        if path in self.memo:
            return self.memo[path]
        result = self._load(path)
        self.memo[path] = result
        return result

    def _load(self, path: str) -> SourceText | None:
        file = self.ctx.raw_files.get(path)
        sha = self.sha(path)
        if file is None or sha is None:
            return None
        try:
            mtime = os.stat(file).st_mtime_ns
        except OSError:
            return None
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                preloaded = self._rows.get(sha)
                row = (preloaded,) if preloaded is not None else self.db.execute(
                    "SELECT data FROM sources WHERE sha256=? AND version=?", (sha, CACHE_VERSION)
                ).fetchone()
                if row:
                    return self._record(path, sha, mtime, str(row[0]))
        max_bytes = int(self.ctx.settings.max_source_mb * 1_000_000)
        text = compute(path, file, sha, mtime, max_bytes)
        data = json.dumps(text.to_json())
        self.pending.append((sha, CACHE_VERSION, data, text.words))
        self._words[sha] = text.words
        # read back as a cached record is: a first run and the next one see the very same claims
        return self._record(path, sha, mtime, data)

    def _record(self, path: str, sha: str, mtime: int, data_text: str) -> SourceText:
        data = json.loads(data_text)
        version = data.get("version")
        # claims are cached without their path: a copied or renamed file shares the hash
        claims = [Fact.from_json(path, c) for c in data.get("claims", [])]
        sketch = data.get("sketch")
        profile = Profile.from_json(data["profile"]) if data.get("profile") else Profile(data["title"])
        return SourceText(
            path, sha, data["title"], data["date"],
            (version[0], tuple(version[1])) if version else None, mtime, None,
            [], data.get("skipped"), claims, profile, tuple(sketch) if sketch is not None else None, self._fetch_words,
        )

    def _fetch_words(self, sha: str) -> str:
        fresh = self._words.get(sha)
        if fresh is not None:
            return fresh
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                row = self.db.execute("SELECT words FROM sources WHERE sha256=? AND version=?", (sha, CACHE_VERSION)).fetchone()
                if row is not None:
                    return str(row[0])
        return ""


def compute(path: str, file: str, sha: str, mtime: int, max_bytes: int) -> SourceText:
    """Load one raw source and extract what the rules need (runs in a worker process too)."""
    try:
        doc = load_source(Path(file), path, max_bytes=max_bytes)
    except SkipSource as exc:
        return SourceText(path, sha, mtime_ns=mtime, skipped=str(exc))
    except (OSError, ValueError) as exc:
        return SourceText(path, sha, mtime_ns=mtime, skipped=f"unreadable ({exc})")
    except RecursionError:
        # markup nested deeper than the parsers recurse (HTML 200,000 elements deep): this
        # source is left out of the rules, cached as such by its hash, so it neither takes a
        # rule down for every other page nor costs its parse again on the next run
        return SourceText(path, sha, mtime_ns=mtime, skipped="unreadable (nested too deeply to parse)")
    claim_sentences = split_sentences(_claim_blocks(doc))
    sentences = [(s.text, s.line) for s in claim_sentences if s.kind != "heading"]
    joined = "\n".join(b.text for b in doc.blocks)
    # compared on their words, without link targets (the compile drops some); a text or a PDF has
    # no links: "x.[](i)" there is what it says, and a page quotes it so (the brackets escaped)
    text = SourceText(
        path, sha, doc.title, doc.date, title_version(doc.title), mtime,
        words(joined if doc.format in UNLINKED_FORMATS else LINK_TARGET.sub("]", joined)), sentences,
    )

    statements = statements_of(doc, claim_sentences)
    text.claims = extract(statements)
    text.profile = statements.profile
    text.sketch = text_sketch(text.words)
    return text


def _compute_records(jobs: list[tuple[str, str, str, int, int]]) -> list[tuple[str, str]]:
    gc.disable()  # as in run_lint: many small objects, few cycles; the worker exits when done
    try:
        return [(json.dumps(text.to_json()), text.words) for job in jobs for text in (compute(*job),)]
    finally:
        gc.enable()


def _claim_blocks(doc: Document) -> Document:
    """The blocks that can hold a claim: sentences are split only for them.

    Sentences feed claims.extract alone, which skips every sentence without a digit and
    a hint word, except one that names a default (a word value: facts._choices); a block
    without them has no such sentence (a sentence is a piece of one block, with its
    whitespace collapsed, hence \\s+ between the hint's words here). A table is read whole
    (its header says what its rows list), with the blocks either side of it, which end it as
    they do in the compile's reading. "use" is a hint in a release's notes (facts.has_hint):
    it is kept wherever it is, the extractor decides.
    """

    hint = _block_hint(HINT.pattern + "|use|drop|remov")  # "Drop Python 3.8 in #1281" (facts._DROP_ITEM)
    blocks = doc.blocks
    near_table = {i + d for i, b in enumerate(blocks) if b.kind == "table" for d in (-1, 0, 1)}
    # a sentence that introduces a list ("Acme 5.7 runs on:"), and the items of the list, which
    # the extractor reads with it ("- CPython 3.11"): neither need hold both a digit and a hint
    listed: set[int] = set()
    for i, b in enumerate(blocks):
        if b.kind != "item" and b.kind != "heading" and introduces_list(b.text):
            listed.add(i)
            j = i + 1
            while j < len(blocks) and blocks[j].kind == "item":
                listed.add(j)
                j += 1
    kept = [b for i, b in enumerate(blocks)
            if i in near_table or i in listed
            or (b.kind != "heading" and ((DIGIT.search(b.text) and hint.search(b.text))
                                         or "default" in b.text.lower() or may_remove(b.text)))]
    return replace(doc, blocks=kept)


@functools.lru_cache(maxsize=4)
def _block_hint(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace(" ", r"\s+"), re.IGNORECASE)


PARALLEL_THRESHOLD = 200  # uncached sources worth starting worker processes for
CHUNK = 64  # sources per worker task


_CODE_LIKE = re.compile(r"[{};][ \t]*$|:=|^[ \t]*(?:func|import|package|return|if|for|var|const|type|def|class)\b|^[ \t]*[$#>]\s|\)[ \t]*$", re.M)


def _with_prose_code(doc: Document) -> Document:
    """The document with prose that the loader read as indented code given back as paragraphs.

    Definition-list continuations (`:   text` then lines indented four spaces) come out of the Markdown loader as code blocks, yet they
    are the sentences that state defaults and requirements. A paragraph of such a
    block counts as prose when it reads like sentences and has no code tokens.
    """
    if not any(b.kind == "code" for b in doc.blocks):
        return doc
    blocks: list[Block] = []
    for block in doc.blocks:
        if block.kind != "code":
            blocks.append(block)
            continue
        lines = block.text.split("\n")
        start = 0
        for i in range(len(lines) + 1):
            if i < len(lines) and lines[i].strip():
                continue
            para = lines[start:i]
            first = start
            start = i + 1
            if not para:
                continue
            joined = "\n".join(line.strip() for line in para)
            if _CODE_LIKE.search(joined) or not re.search(r"[a-z]{3,}[^.!?]*[.!?](?:\s|$)", joined):
                continue
            cleaned_lines = [clean_inline(line) for line in joined.split("\n")]
            lead = 0
            while lead < len(cleaned_lines) and not cleaned_lines[lead]:
                lead += 1
            text = "\n".join(cleaned_lines[lead:]).strip()
            letters = sum(ch.isalpha() or ch == " " for ch in text)
            if text and letters >= 0.75 * len(text):
                blocks.append(Block("para", text, block.line + first + lead))
    return Document(doc.path, doc.format, doc.title, blocks, doc.meta, doc.date, doc.anchor, doc.warnings)


def start(ctx: Context) -> SourceCache:
    """Begin reading the raw sources (in worker processes when many are uncached); cache() waits for them."""
    existing = ctx.run.sources
    if existing is None:
        existing = ctx.run.sources = SourceCache(ctx)
        existing.start(list(ctx.raw_files))
    return existing


def cache(ctx: Context) -> SourceCache:
    existing = start(ctx)
    existing.finish()
    return existing

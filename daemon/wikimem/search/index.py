"""The derived whoosh index in .wikimem/search/: kept current from a manifest of sizes and
mtimes (or from the paths a compile names), built from nothing on every core, with the
series priors that rank the newer release higher."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import marshal
import os
import re
import shutil
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..naming import CATALOG_NAME, is_ignored_name
from ..workspace import Workspace, atomic_write
from .analysis import path_words, schema

if TYPE_CHECKING:
    from ..raw_tree import Trace
    from .documents import Doc

log = logging.getLogger("wikimem.search")


INDEX_DIR = "search"


# bump when the schema, chunking or analysis changes: an old index is then rebuilt
INDEX_VERSION = 24
# a file as the manifest records it: (size, mtime_ns, ctime_ns); a racily clean raw file as
# (size, -1, digest of the bytes indexed, or -1), so that the next check judges it by its content
# (see _smudge_racy, _confirmed)
FileStat = tuple[int, ...]


WIKI_FOLDERS = ("sources", "concepts", "facts", "answers")


PARALLEL_INDEX = 100  # files; a build from nothing of more uses every core (see _update_locked)


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    passages: int = 0
    rebuilt: bool = False
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)

    def to_json(self) -> dict[str, Any]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped], "files": self.files,
                "passages": self.passages, "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3)}


def index_dir(ws: Workspace) -> Path:
    return ws.state_dir / INDEX_DIR


def walk_files(ws: Workspace, trace: Trace | None = None) -> dict[str, FileStat]:
    """Every file search covers, with (size, mtime_ns, ctime_ns): raw/ as compile sees it (raw_tree's one
    walk: its ignore rules, symlink and hard-link policy) and the wiki's pages. No reads.
    With `trace`, also what decided which files those are (see raw_tree.Trace).

    This runs before every search, so it stays lean: string paths, no per-file imports.
    """
    from ..raw_tree import scan

    found: dict[str, FileStat] = {f.path: (f.size, f.mtime_ns, f.ctime_ns) for f in scan(ws, trace).files}

    from ..wiki_tree import pages

    for folder in WIKI_FOLDERS:
        # wiki_tree's rule for what is a page (not hidden, not a symlink, not editor noise)
        for entry, rel in pages(str(ws.wiki / folder), f"wiki/{folder}", trace=trace):
            if CATALOG_NAME.search(rel):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                if trace is not None:
                    trace.unsure = True
                continue
            found[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


# from naming, not sources/index_page: those would pull YAML, front matter and the template engine into
# every cold search
ignored_path = is_ignored_name


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest, whole (the index updater's truth); None when missing, damaged or old."""
    try:
        data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return None
    return data


# The manifest again, beside it, in the parts a search reads: a freshness check needs the
# files, a query the docs and priors. Parsing the whole JSON at 10k sources (5.6 MB) took
# 45 ms in each; a part in marshal takes a fraction of that, and only the parts asked for.
PARTS_NAME = "manifest.parts"
_PARTS_FORMAT = 3
_PART_NAMES = ("files", "docs")
_SHOWN = ("title", "kind", "source", "current")  # all a query reads of a doc, and its prior (see Docs)
_BUCKETS = 1024
_PARTS: dict[tuple[Path, str], tuple[tuple[int, int, int], Any]] = {}


def _stamp(path: Path) -> tuple[int, int, int]:
    """Which manifest.json this is: a new one is a new file (atomic_write renames one in)."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _write_manifest(folder: Path, manifest: dict[str, Any], changed: set[str] | None = None) -> None:
    """manifest.json, then its parts, stamped with the manifest.json they were made from.
    `changed`: the only paths whose doc or prior differ from the manifest.json being replaced
    (an update): the docs part keeps that one's other buckets as they are."""
    path = folder / "manifest.json"
    before = None
    if changed is not None:
        with contextlib.suppress(OSError):
            before = _load_parts(folder, _stamp(path), ("docs",))
    atomic_write(path, json.dumps(manifest, separators=(",", ":"), sort_keys=True))
    _write_parts(folder, manifest, _stamp(path), (before["docs"], changed) if before and changed is not None else None)


def _write_parts(folder: Path, manifest: dict[str, Any], stamp: tuple[int, int, int],
                 update: tuple[Docs, set[str]] | None = None) -> None:
    blobs = [marshal.dumps(manifest["files"]), _docs_part(manifest, update)]
    head = marshal.dumps((_PARTS_FORMAT, INDEX_VERSION, stamp, tuple(len(b) for b in blobs)))
    # derived from the file beside it, so no fsync: a torn copy fails its stamp or its decoding
    atomic_write(folder / PARTS_NAME, head + b"".join(blobs), durable=False)


def _docs_part(manifest: dict[str, Any], update: tuple[Docs, set[str]] | None = None) -> bytes:
    """The docs part: each doc as a tuple (see Docs; marshal reads one in half the time of a
    dict), in buckets by path, each marshalled on its own so a query unmarshals the few it needs.
    `update`: the previous part and the paths changed since; only their buckets are made again
    (at 10k sources making all 1,024 took 0.13 s of a one-note change)."""
    priors = manifest.get("priors", {})
    docs = manifest["docs"]

    def shown(path: str) -> tuple[Any, ...]:
        return (*(docs[path].get(k) for k in _SHOWN), priors.get(path))

    if update is not None and len(update[0].raw) == _BUCKETS:
        previous, changed = update
        blobs = list(previous.raw)
        for n, paths in _by_bucket(changed).items():
            bucket = marshal.loads(blobs[n])
            for path in paths:
                if path in docs:
                    bucket[path] = shown(path)
                else:
                    bucket.pop(path, None)
            blobs[n] = marshal.dumps(bucket)
        return marshal.dumps(tuple(blobs))
    buckets: list[dict[str, tuple[Any, ...]]] = [{} for _ in range(_BUCKETS)]
    for path in docs:
        buckets[_bucket(path, _BUCKETS)][path] = shown(path)
    return marshal.dumps(tuple(marshal.dumps(bucket) for bucket in buckets))


def _by_bucket(paths: Iterable[str]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for path in sorted(paths):
        out.setdefault(_bucket(path, _BUCKETS), []).append(path)
    return out


def _bucket(path: str, buckets: int) -> int:
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % buckets


class Docs:
    """(title, kind, source, current, prior) of each indexed file, by path, None where it has
    none; unmarshalled a bucket at a time as paths are looked up (a query looks up a few
    hundred of the 20k docs of a 10k-source wiki)."""

    def __init__(self, part: bytes):
        self.raw: tuple[bytes, ...] = marshal.loads(part)  # each bucket, marshalled
        self._loaded: dict[int, dict[str, tuple[Any, ...]]] = {}
        self._newest: list[str] | None = None

    def get(self, path: str, default: Any = None) -> Any:
        n = _bucket(path, len(self.raw))
        bucket = self._loaded.get(n)
        if bucket is None:
            bucket = self._loaded[n] = marshal.loads(self.raw[n])
        return bucket.get(path, default)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def newest(self) -> list[str]:
        """The files that are the newest of their series (prior 1.0): every bucket is read, so
        only a question that asks for the latest release asks."""
        if self._newest is None:
            found: list[str] = []
            for n, blob in enumerate(self.raw):
                bucket = self._loaded.get(n)
                if bucket is None:
                    bucket = self._loaded[n] = marshal.loads(blob)
                found.extend(path for path, shown in bucket.items() if shown[-1] == 1.0)
            self._newest = sorted(found)
        return self._newest


def read_parts(folder: Path, names: tuple[str, ...]) -> dict[str, Any] | None:
    """Parts of the manifest ("files"; "docs", what a query reads of each, see Docs), each kept
    while manifest.json is unchanged, and the "stamp" of the manifest.json they are of.
    Read from the marshal copy when it was made from that manifest.json, else from it. None:
    no usable manifest."""
    try:
        stamp = _stamp(folder / "manifest.json")
    except OSError:
        return None
    kept = {name: hit[1] for name in names if (hit := _PARTS.get((folder, name))) and hit[0] == stamp}
    if len(kept) == len(names):
        return {**kept, "stamp": stamp}
    parts = _load_parts(folder, stamp, names)
    if parts is None:
        manifest = read_manifest(folder)
        if manifest is None:
            return None
        parts = {"files": manifest["files"], "docs": Docs(_docs_part(manifest))}
        # an index from before the parts (or a copy made by another Python): write them, so the
        # next search reads them (a copy stamped for a manifest.json since replaced is never read)
        def write() -> None:
            if _stamp(folder / "manifest.json") == stamp:
                _write_parts(folder, manifest, stamp)

        _write_beside(folder, write)
    for name in names:
        _PARTS[(folder, name)] = (stamp, parts[name])
    return {**{name: parts[name] for name in names}, "stamp": stamp}


def _load_parts(folder: Path, stamp: tuple[int, int, int], names: tuple[str, ...]) -> dict[str, Any] | None:
    """The parts asked for from the marshal copy, if it was made from manifest.json `stamp`."""
    try:
        with open(folder / PARTS_NAME, "rb") as handle:
            fmt, version, made_from, sizes = marshal.load(handle)
            if (fmt, version, tuple(made_from)) != (_PARTS_FORMAT, INDEX_VERSION, stamp):
                return None  # an older copy, or another Python's: manifest.json decides
            at = handle.tell()
            got = {}
            for name, size in zip(_PART_NAMES, sizes, strict=True):
                if name in names:
                    handle.seek(at)
                    blob = handle.read(size)
                    got[name] = Docs(blob) if name == "docs" else marshal.loads(blob)
                at += size
            return got
    except (OSError, EOFError, ValueError, TypeError):
        return None


NUMBER = re.compile(r"\d+(?:\.\d+)*")


def series_key(path: str, title: str) -> str | None:
    """Documents that differ only by the numbers in their title belong to one series."""
    if not NUMBER.search(title):
        return None
    folder = path.rsplit("/", 1)[0] if path.startswith("raw/") else "wiki"
    return folder + "|" + NUMBER.sub("#", title.lower()).strip()


def version_of(title: str) -> tuple[Any, ...]:
    """The order of a series member by the version its title names (the lexicon's order)."""
    # imported here, not at the top: only an index update orders series; a cold search does not
    from ..lexicon import first_number, version_key

    return version_key(first_number(title))


def _series_of(path: str, info: dict[str, Any]) -> str | None:
    """A manifest doc's series key: kept in it when indexed ("series"), else worked out."""
    if "series" in info:
        return info["series"] or None
    return series_key(path, info.get("title") or "")


def compute_priors(docs: dict[str, dict[str, Any]], only: set[str] | None = None) -> dict[str, float]:
    """Recency rank in [0, 1] within each series (1 = newest); only series of two or more.
    With `only` (series keys), just those series: an update recomputes the series it touched."""
    groups: dict[str, list[tuple[Any, str]]] = {}
    parts: list[tuple[str, str]] = []
    for path, info in docs.items():
        key = _series_of(path, info)
        if key is None or (only is not None and key not in only):
            continue
        if info.get("part_of"):
            parts.append((path, info["part_of"]))  # ranked as its page is, below
            continue
        order = (info.get("date") or "", version_of(info["title"]))
        groups.setdefault(key, []).append((order, path))
    ranks: dict[str, float] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort()
        # documents whose version or date ties share a rank
        distinct = sorted({o for o, _ in members})
        for order, path in members:
            ranks[path] = distinct.index(order) / max(1, len(distinct) - 1)
    for path, page in parts:
        if page in ranks:
            ranks[path] = ranks[page]
    return ranks


def _settings_max_bytes(ws: Workspace) -> int:
    try:
        from ..config import load_settings

        return int(load_settings(ws.root).max_source_mb * 1_000_000)
    except Exception:  # a broken wikimem.toml must not stop search; compile reports it
        return 10_000_000


def _add(writer: Any, doc: Doc) -> int:
    # one file's entries in one segment, in order (whoosh's parallel writer would otherwise split
    # them between its workers at a batch's end), so passages that score the same go to the
    # earlier one however the index was built: the batch is sent before a file, never inside one
    buffered = getattr(writer, "docbuffer", None)  # MpWriter's (whoosh 2.7, no longer developed)
    if buffered and len(buffered) + len(doc.chunks) >= writer.batchsize:
        writer._enqueue()
    from .documents import collection_of

    collection = collection_of(doc)
    kept: dict[str, str] = {"collection": collection} if collection else {}
    with writer.group():
        writer.add_document(path=doc.path, kind=doc.kind, level="doc", title=doc.title, aliases=doc.aliases,
                            where=path_words(doc.path), anchor=doc.anchor, **kept)
        for chunk in doc.chunks:
            extra = {**kept, "era": str(chunk.era)} if chunk.era is not None else kept
            writer.add_document(path=doc.path, kind=doc.kind, level="part", headings=chunk.heading,
                                body=chunk.text, lines=[list(x) for x in chunk.lines], anchor=doc.anchor, **extra)
    return len(doc.chunks)


def _codec() -> Any:
    """whoosh's codec for the segments this module writes: the same files, but while a segment's
    postings are written, each entry's field lengths are read from a table in memory rather than
    from the column file, one seek and read per posting (a sixth of a build's CPU); and posting
    blocks are not compressed (zlib was a tenth of the build, and is undone on every query's
    read; the index is a third larger: 5.8 -> 7.8 MB for the Sphinx trees)."""
    global _CODEC
    if _CODEC is None:
        from whoosh import columns
        from whoosh.codec.whoosh3 import W3Codec, W3PerDocReader, W3PerDocWriter

        # a document's stored fields as whoosh stores them (a pickle in a zlib stream, read by its
        # own reader), at STORED_LEVEL
        stored = columns.PickleColumn(columns.CompressedBytesColumn(level=STORED_LEVEL))

        class Lengths(W3PerDocReader):  # type: ignore[misc]
            def table(self, fieldname: str) -> list[int | None] | None:
                """Every document's length of the field (None for a zero byte); None without a column."""
                tables = self.__dict__.setdefault("_wikimem_lengths", {})
                if fieldname not in tables:
                    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
                    from whoosh.util.numeric import byte_to_length

                    reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
                    tables[fieldname] = None if reader is None else [byte_to_length(b) if b else None for b in reader]
                return tables[fieldname]  # type: ignore[no-any-return]

            def length_bytes(self, fieldname: str) -> bytes | None:
                """Every document's length byte of the field (0 for none) in one read; None
                without a column."""
                from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield

                from .ranking import column_bytes

                reader = self._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
                return None if reader is None else column_bytes(reader, self._doccount)

            def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
                table = self.table(fieldname)
                if table is None:  # whoosh's own answers: default without a column
                    return default
                if docnum > self._doccount:
                    raise IndexError(f"Asked for docnum {docnum!r} of {self._doccount}")
                return table[docnum]

        class PerDoc(W3PerDocWriter):  # type: ignore[misc]
            def _create_column(self, fieldname: str, column: Any) -> None:
                if fieldname == "_stored":
                    column = stored
                W3PerDocWriter._create_column(self, fieldname, column)

        class Codec(W3Codec):  # type: ignore[misc]
            def per_document_reader(self, storage: Any, segment: Any) -> Any:
                return Lengths(storage, segment)

            def per_document_writer(self, storage: Any, segment: Any) -> Any:
                return PerDoc(self, storage, segment)

            def field_writer(self, storage: Any, segment: Any) -> Any:
                return _field_writer_class()(self, storage, segment)

            def new_segment(self, storage: Any, indexname: str) -> Any:
                # the segment names whoosh's own codec (which then reads its blocks as written):
                # the index is read without this module
                return W3Codec(compression=COMPRESSION).new_segment(storage, indexname)

        _CODEC = Codec(compression=COMPRESSION)
    return _CODEC


_CODEC: Any = None
COMPRESSION = 0  # zlib level of posting blocks (whoosh's default: 3)
STORED_LEVEL = 0  # zlib level of a document's stored fields (whoosh's: 3)


def _merge_small_live(writer: Any, segments: list[Any]) -> list[Any]:
    """whoosh's merge policy of an update (MERGE_SMALL), over the segments that still hold a
    document: one whose every document was deleted is dropped. A small update deletes what an
    earlier one wrote (a changed file's entries) and adds a segment of its own; MERGE_SMALL
    merges only from the fifth smallest segment on, and never the large ones, so emptied
    segments stayed, each opened by every search and every update (a workspace after a few
    dozen compiles: 11 segments, 8 of them empty, two of those the size of the wiki)."""
    from whoosh.writing import MERGE_SMALL

    return MERGE_SMALL(writer, [s for s in segments if s.doc_count() > 0])  # type: ignore[no-any-return]


def _writer(ix: Any, **options: Any) -> Any:
    """A whoosh writer of one segment with this module's codec, posting pool and add_document."""
    writer = ix.writer(codec=_codec(), **options)
    writer.pool.__class__ = _pool_class()
    writer.__class__ = _segment_writer_class()
    return writer


@functools.cache
def _segment_writer_class() -> type:
    """whoosh's SegmentWriter, adding a document's text fields from the analyzer's counts
    (search.analysis.Analyzer.counts) in one loop: whoosh's add_document passes every posting
    through three generators and a call to the pool, a third of indexing a passage. What it
    writes is whoosh's own (tests/test_search.py builds both); fields of other types, and boosts,
    take whoosh's way. What each field asks of a document is worked out once per set of field
    names (_plan), not once per field of every document: the schema's answers were a tenth of
    adding one."""
    from whoosh.analysis import IDTokenizer
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3PerDocWriter, _lenfield
    from whoosh.formats import Existence
    from whoosh.writing import SegmentWriter

    from .terms import Terms

    class Writer(SegmentWriter):  # type: ignore[misc]
        def add_field(self, *args: Any, **kwargs: Any) -> None:
            self.__dict__.pop("_plans", None)  # the schema changes: its fields are asked again
            SegmentWriter.add_field(self, *args, **kwargs)

        def remove_field(self, *args: Any, **kwargs: Any) -> None:
            self.__dict__.pop("_plans", None)
            SegmentWriter.remove_field(self, *args, **kwargs)

        def _plan(self, names: tuple[str, ...]) -> list[_FieldPlan] | None:
            """How add_document takes each of these fields; None when whoosh's own add_document
            takes the document (a boost or a custom stored value, a field not in the schema, a
            per-document writer of another codec)."""
            plans = self.__dict__.setdefault("_plans", {})
            if names in plans:
                return plans[names]  # type: ignore[no-any-return]
            schema = self.schema
            known = schema._fields  # the schema's own fields by name (`in schema` also tries its dynamic ones)
            if not isinstance(self.perdocwriter, W3PerDocWriter) or \
                    any(name.startswith("_") or (name not in known and name not in schema) for name in names):
                plans[names] = None
                return None
            got: list[_FieldPlan] = []
            for name in names:
                field = known.get(name) or schema[name]
                way = _NOT_INDEXED
                counts = None
                if field.separate_spelling() or field.vector:
                    way = _UNSUPPORTED
                elif field.indexed:
                    counts = getattr(field.analyzer, "counts", None)
                    if type(field.format) is Terms and counts is not None:
                        way = _COUNTED
                    elif type(field.format) is Existence and type(field.analyzer) is IDTokenizer:
                        way = _WHOLE
                    else:
                        way = _INDEXED
                got.append(_FieldPlan(name, field, way, counts, field.format.field_boost if field.indexed else 1.0,
                                      bool(field.stored), bool(field.scorable), field.column_type, _lenfield(name)))
            plans[names] = got
            return got

        def add_document(self, **fields: Any) -> None:
            plans = self._plan(tuple(sorted(fields)))
            if plans is None:
                SegmentWriter.add_document(self, **fields)
                return
            self._check_state()
            perdoc = self.perdocwriter
            docnum = self.docnum
            counted: list[tuple[str, dict[str, int], float]] = []  # a text field's term counts
            other: list[tuple[str, list[tuple[bytes, float, bytes | None]]]] = []  # any other field's postings
            perdoc.start_doc(docnum)
            stored, totals, columns = perdoc._storedfields, perdoc._fieldlengths, perdoc._colwriters
            try:
                for plan in plans:
                    name = plan.name
                    value = fields[name]
                    if value is None:
                        continue
                    way = plan.way
                    length = 0
                    if way is _UNSUPPORTED:
                        raise NotImplementedError(f"field {name!r}: spelling or vectors (none in the index)")
                    if way is _COUNTED and isinstance(value, str):
                        found = plan.counts(value)  # type: ignore[misc]
                        if found:
                            counted.append((name, found, plan.boost))
                        length = sum(found.values())
                    elif way is _WHOLE and isinstance(value, str):
                        # a whole value as one term (an ID field): the one posting field.index
                        # makes of it, without its tokenizer and three generators
                        other.append((name, [(value.encode("utf-8"), plan.boost * 1.0, b"")]))
                        length = 1
                    elif way is not _NOT_INDEXED:
                        items = []
                        for btext, n, weight, vbytes in plan.field.index(value):
                            items.append((btext, weight * 1.0, vbytes))
                            length += n
                        if items:
                            other.append((name, items))
                    # W3PerDocWriter.add_field, its length column kept at hand
                    if plan.stored:
                        stored[name] = value
                    if length and plan.scorable:
                        column = columns.get(plan.lengths)
                        if column is None:
                            perdoc._create_column(plan.lengths, LENGTHS_COLUMN)
                            column = columns[plan.lengths]
                        column.add(docnum, _length_byte(length))
                        totals[name] += length
                    if plan.column:
                        perdoc.add_column_value(name, plan.column, plan.field.to_column_value(value))
            except Exception:
                perdoc.cancel_doc()
                raise
            # the document's postings go to the pool once it is whole (whoosh's would keep those of
            # a field before one that failed)
            pool = self.pool
            grouped = pool.grouped()
            size = 0
            for name, found, boost in counted:
                field_terms = grouped.counted.get(name)
                if field_terms is None:
                    field_terms = grouped.counted[name] = (boost, {})
                    pool.fieldnames.add(name)
                terms = field_terms[1]
                for term, n in found.items():
                    flat = terms.get(term)
                    if flat is None:
                        terms[term] = [docnum, n]
                    else:
                        flat += (docnum, n)
                # whoosh's estimate of the postings' memory (characters for bytes: it only decides
                # when the pool writes a run)
                size += (154 + len(name)) * len(found) + 2 * sum(map(len, found))
            for name, items in other:
                for btext, weight, vbytes in items:
                    pool.add((name, btext, docnum, weight, vbytes))
            pool.currentsize += size
            if pool.currentsize > pool.limit:
                pool.save()  # a run on disk (whoosh checks before each posting, here after a document)
            perdoc.finish_doc()
            self._added = True
            self.docnum += 1

    return Writer


# how Writer.add_document indexes a field's value (_FieldPlan.way)
_NOT_INDEXED, _COUNTED, _WHOLE, _INDEXED = "not indexed", "counted", "whole", "indexed"
_UNSUPPORTED = "spelling or vectors"  # whoosh's extras no field of the index has


@dataclass(frozen=True)
class _FieldPlan:
    """What a field asks of each document's value (Writer._plan)."""

    name: str
    field: Any
    way: str  # _COUNTED: the analyzer's counts; _WHOLE: the value as one term; _INDEXED: field.index;
    # _NOT_INDEXED: stored only; _UNSUPPORTED: refused
    counts: Callable[[str], dict[str, int]] | None
    boost: float
    stored: bool
    scorable: bool
    column: Any  # the field's own column type, if any
    lengths: str  # the name of its lengths column


_LENGTH_BYTES: list[int] = []


def _length_byte(length: int) -> int:
    """whoosh's length_to_byte, from a table for the lengths most fields have."""
    if not _LENGTH_BYTES:
        from whoosh.util.numeric import length_to_byte

        _LENGTH_BYTES.extend(length_to_byte(n) for n in range(4096))
    return _LENGTH_BYTES[length] if 0 <= length < 4096 else _length_to_byte(length)


def _length_to_byte(length: int) -> int:
    from whoosh.util.numeric import length_to_byte

    return length_to_byte(length)  # type: ignore[no-any-return]


class _Grouped:
    """A pool's postings by field and term, as documents add them (docnums rising unless
    `unordered`: postings that came otherwise). A text field's terms (`counted`) keep a flat
    [docnum, count, docnum, count, ...] by the term's text, its weights and values made when the
    segment is written (a term's bytes once, not once per posting: UTF-8 keeps the order);
    other postings (`posted`) keep [docnum, weight, value, ...] by the term's bytes."""

    def __init__(self) -> None:
        self.counted: dict[str, tuple[float, dict[str, list[int]]]] = {}
        self.posted: dict[str, dict[bytes, list[Any]]] = {}
        self.unordered = False

    def fields(self) -> list[str]:
        return sorted(self.counted.keys() | self.posted.keys())

    def __iter__(self) -> Iterator[tuple[str, bytes, int, float, bytes | None]]:
        """The postings as whoosh's pool gives them: (field, term, docnum, weight, value), in order."""
        for name in self.fields():
            for btext, entry in self.terms(name):
                for docnum, weight, value in _in_order(entry, self.unordered):
                    yield name, btext, docnum, weight, value

    def terms(self, name: str) -> list[tuple[bytes, tuple[list[int], list[float], list[bytes | None]]]]:
        """A field's terms as bytes, in order, with their (docnums, weights, values)."""
        found: dict[bytes, tuple[list[int], list[float], list[bytes | None]]] = {}
        if name in self.counted:
            boost, counted = self.counted[name]
            for term, flat in counted.items():
                counts = flat[1::2]
                found[term.encode("utf-8")] = (flat[0::2], [n * boost * 1.0 for n in counts],
                                               [_PACKED[n] if n < 256 else _pack(n) for n in counts])
        posted: dict[bytes, list[Any]] = self.posted.get(name, {})
        for btext, rows in posted.items():
            if btext in found:  # the same term both ways
                docs, weights, values = found[btext]
                docs.extend(rows[0::3])
                weights.extend(rows[1::3])
                values.extend(rows[2::3])
                self.unordered = True
            else:
                found[btext] = (rows[0::3], rows[1::3], rows[2::3])
        return sorted(found.items())


def _pack(n: int) -> bytes:
    from whoosh.system import pack_uint

    return pack_uint(n)  # type: ignore[no-any-return]


_PACKED = [(n).to_bytes(4, "big") for n in range(256)]  # whoosh.system.pack_uint's bytes (a big-endian uint32)


@functools.cache
def _pool_class() -> type:
    """whoosh's posting pool, keeping the postings grouped by field and term as they come (a
    document's docnum is above those before it) rather than in one list of tuples sorted when
    the segment is written; the field writer takes the groups as they are (_field_writer_class).
    A run written to disk (over its memory limit) is whoosh's own, sorted tuples."""
    from whoosh.writing import PostingPool

    class Pool(PostingPool):  # type: ignore[misc]
        def grouped(self) -> _Grouped:
            got = self.__dict__.get("_grouped")
            if got is None:
                got = self._grouped = _Grouped()
            return got  # type: ignore[no-any-return]

        def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
            # whoosh's, without its type checks of what its own add_document made: a call per posting
            name, btext, docnum, weight, vbytes = item
            self.fieldnames.add(name)
            self.currentsize += 150 + len(name) + 2 * len(btext) + len(vbytes or b"")  # whoosh's estimate
            if self.currentsize > self.limit:
                self.save()
            grouped = self.grouped()
            terms = grouped.posted.setdefault(name, {})
            flat = terms.get(btext)
            if flat is None:
                terms[btext] = [docnum, weight, vbytes]
            else:
                if flat[-3] >= docnum:
                    grouped.unordered = True
                flat += (docnum, weight, vbytes)

        def _as_tuples(self) -> None:
            """The grouped postings into whoosh's list of tuples (current), in order."""
            self.current.extend(self.grouped())
            self._grouped = _Grouped()

        def save(self) -> None:
            self._as_tuples()
            PostingPool.save(self)

        def iter_postings(self) -> Any:
            if self.runs or self.current:
                self._as_tuples()
                return PostingPool.iter_postings(self)
            return self.grouped()

    return Pool


def _in_order(entry: tuple[list[int], list[float], list[bytes | None]], unordered: bool) -> Any:
    """A term's (docnum, weight, value) postings, by docnum."""
    rows = zip(*entry, strict=True)
    return sorted(rows) if unordered else rows


@functools.cache
def _field_writer_class() -> type:
    """whoosh's W3FieldWriter, writing a term's postings a block at a time: whoosh's own
    add_postings makes five calls and a dozen checks for each posting, two fifths of an index
    build. The files are the same: blocks cut where whoosh cuts them, with its statistics
    (kept as it keeps them: a block's highest weight before its weights become 32-bit floats,
    a length of zero or none left out of its shortest). A field's blocks and term entries are
    gathered in memory and written at its end, their places counted here: asking the file
    where it is and writing to it were a call each per term."""
    from hashlib import md5
    from operator import sub
    from pickle import dumps
    from struct import Struct

    from whoosh.codec.base import OutOfOrderError
    from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3FieldWriter, W3TermInfo
    from whoosh.filedb.filetables import OrderedHashWriter, md5_hash
    from whoosh.filedb.filetables import _lengths as KEY_LENGTHS
    from whoosh.filedb.filetables import _pointer as POINTER
    from whoosh.system import pack_int, pack_ushort
    from whoosh.util.numeric import byte_to_length

    TERMINFO: Struct = W3TermInfo._struct
    EXTENT = Struct("!qi")  # W3TermInfo.to_bytes's pack_long(offset) + pack_int(length)

    class TermTable(OrderedHashWriter):  # type: ignore[misc]
        def _write_hashes(self) -> None:
            """whoosh's hash tables, each written in one go rather than a write per slot."""
            dbfile = self.dbfile
            null = (0, 0)
            for entries in self.buckets:
                numslots = 2 * len(entries)
                self.directory.append((dbfile.tell(), numslots))
                hashtable = [null] * numslots
                for hashval, position in entries:
                    slot = (hashval >> 8) % numslots
                    while hashtable[slot] != null:
                        slot = (slot + 1) % numslots
                    hashtable[slot] = (hashval, position)
                dbfile.write(b"".join([POINTER.pack(h, p) for h, p in hashtable]))

    class FieldWriter(W3FieldWriter):  # type: ignore[misc]
        def __init__(self, *args: Any) -> None:
            W3FieldWriter.__init__(self, *args)
            if type(self._tindex) is OrderedHashWriter:
                self._tindex.__class__ = TermTable
            self._posts: list[bytes] = []  # the field's blocks not yet written, from _postat on
            self._entries: list[bytes] = []  # its term entries not yet written, from _entryat on
            self._postat = self._entryat = 0

        def add_postings(self, schema: Any, lengths: Any, items: Any) -> None:
            if isinstance(items, _Grouped):
                self._add_grouped(schema, lengths, items)
                return
            lastfn: str | None = None
            lasttext: bytes | None = None
            sizes: bytes | None = None
            docs: list[int] = []
            weights: list[float] = []
            values: list[bytes | None] = []
            for fieldname, btext, docnum, weight, value in items:
                if btext != lasttext or fieldname != lastfn:
                    if lasttext is not None:
                        self._term(lasttext, docs, weights, values, sizes)
                        docs, weights, values = [], [], []
                    if fieldname != lastfn:
                        if lastfn is not None:
                            if fieldname < lastfn:
                                raise OutOfOrderError(f"Field {lastfn!r} .. {fieldname!r}")
                            self.finish_field()
                        self.start_field(fieldname, schema[fieldname])
                        sizes = _length_bytes(lengths, fieldname)
                        lastfn, lasttext = fieldname, None
                    if docnum == -1:
                        continue  # whoosh's mark of a word for the spelling graph (none here)
                    if lasttext is not None and btext < lasttext:
                        raise OutOfOrderError(f"Term {fieldname}:{lasttext!r} .. {fieldname}:{btext!r}")
                    lasttext = btext
                docs.append(docnum)
                weights.append(weight)
                values.append(value)
            if lasttext is not None:
                self._term(lasttext, docs, weights, values, sizes)
            if lastfn is not None:
                self.finish_field()

        def _add_grouped(self, schema: Any, lengths: Any, grouped: _Grouped) -> None:
            """The pool's postings as it keeps them (_pool_class): sorted by field and term alone."""
            for fieldname in grouped.fields():
                self.start_field(fieldname, schema[fieldname])
                sizes = _length_bytes(lengths, fieldname)
                counted = grouped.counted.get(fieldname)
                if counted is not None and fieldname not in grouped.posted and not grouped.unordered \
                        and self._fixed == 4:
                    # a text field's counts, as they are: a term's weights are its counts times the
                    # field's boost, its values the counts as whoosh packs them (pack_uint)
                    boost, terms = counted
                    for term in sorted(terms):  # the order of their UTF-8 bytes
                        flat = terms[term]
                        counts = flat[1::2]
                        self._term(term.encode("utf-8"), flat[0::2],
                                   counts if boost == 1.0 else [n * boost * 1.0 for n in counts],
                                   _uint32s(counts), sizes)
                else:
                    for btext, entry in grouped.terms(fieldname):
                        docs, weights, values = entry
                        if grouped.unordered:
                            docs, weights, values = (list(x) for x in zip(*_in_order(entry, True), strict=True))
                        self._term(btext, docs, weights, values, sizes)
                self.finish_field()

        def start_field(self, fieldname: str, fieldobj: Any) -> None:
            W3FieldWriter.start_field(self, fieldname, fieldobj)
            self._fixed = fieldobj.format.fixed_value_size()
            self._prefix = pack_ushort(self._fieldid)
            writer = self._postwriter
            self._fast = not writer._compression and not writer._byteids and writer._inlinelimit <= 1
            self._postat, self._entryat = self._postfile.tell(), self._tindex.dbfile.tell()

        def finish_field(self) -> None:
            self._write_out()
            W3FieldWriter.finish_field(self)

        def _write_out(self) -> None:
            if self._posts:
                self._postfile.write(b"".join(self._posts))
                self._posts.clear()
            if self._entries:
                self._tindex.dbfile.write(b"".join(self._entries))
                self._entries.clear()

        def _term(self, btext: bytes, docs: list[int], weights: list[float] | list[int],
                  values: list[bytes | None] | bytes, sizes: bytes | None) -> None:
            """A term's postings (their docnums, weights, and values: each one's, or all of them
            joined when each has the format's fixed size) into blocks of whoosh's block limit,
            and its entry into the terms table. `sizes`: each entry's length byte in the field."""
            if not self._fast:
                self._whooshs_term(btext, docs, weights, values, sizes)
                return
            n = len(docs)
            limit = self._postwriter._blocklimit
            fixed = self._fixed
            parts: list[bytes] = [WHOOSH3_HEADER_MAGIC]
            total: float = 0  # the term's statistics, as W3TermInfo.add_block gathers them
            shortest: int | None = None
            longest = 0
            heaviest: float = 0
            for start in range(0, n, limit):
                end = min(n, start + limit)
                ids = docs[start:end] if n > limit else docs
                floats = array("f", weights[start:end] if n > limit else weights)  # kept as 32-bit floats
                first = floats[0]
                if floats.count(first) != end - start:
                    mini_weights: Any = tuple(floats)
                else:
                    mini_weights = None if first == 1.0 else first
                if fixed == 0:
                    mini_values: Any = None
                elif isinstance(values, bytes):
                    mini_values = values[start * fixed:end * fixed] if n > limit else values
                else:
                    kept = [v for v in values[start:end] if v]
                    mini_values = tuple(kept) if fixed is None or fixed < 0 else b"".join(kept)
                top = max(weights[start:end] if n > limit else weights)
                maxweight = float(top) if top > 0 else 0
                low, high = _shortest_longest(sizes, ids)
                data = dumps(((ids[0], *map(sub, ids[1:], ids)), mini_weights, mini_values), 2)
                info = dumps((end - start, ids[-1], maxweight, 0, low or 0, high), 2)
                size = len(info) + len(data)
                parts += (pack_int(size if end < n else -size), info, data)
                total += sum(floats)
                shortest = low if shortest is None else min(shortest, low)  # type: ignore[type-var]
                longest = max(longest, high)
                heaviest = max(heaviest, maxweight)
            block = b"".join(parts)
            at = self._postat
            self._posts.append(block)
            self._postat = at + len(block)
            # the term's entry: W3TermInfo.to_bytes, then OrderedHashWriter.add
            value = TERMINFO.pack(0, total, n, shortest or 0, longest, heaviest, docs[0], docs[-1]) \
                + EXTENT.pack(at, len(block))
            self._entry(self._prefix + btext, value)

        def _entry(self, key: bytes, value: bytes) -> None:
            tindex = self._tindex
            if key <= tindex.lastkey:
                raise ValueError(f"Keys must increase: {tindex.lastkey!r}..{key!r}")
            at = self._entryat
            tindex.index.append(at)
            entry = b"".join((KEY_LENGTHS.pack(len(key), len(value)), key, value))
            self._entries.append(entry)
            self._entryat = at + len(entry)
            hashfn = tindex.hashfn
            # md5_hash's number: the digest's last four bytes
            h = int.from_bytes(md5(key, usedforsecurity=False).digest()[12:], "big") if hashfn is md5_hash \
                else hashfn(key)
            tindex.buckets[h & 255].append((h, at))
            tindex.lastkey = key

        def _whooshs_term(self, btext: bytes, docs: list[int], weights: list[float] | list[int],
                          values: list[bytes | None] | bytes, sizes: bytes | None) -> None:
            """A term through whoosh's own postings writer, a posting at a time: for a codec
            that compresses its blocks or inlines short lists, which _term does not write."""
            self._write_out()
            fixed = self._fixed
            self.start_term(btext)
            for i, docnum in enumerate(docs):
                value = (values[i * fixed:(i + 1) * fixed] if isinstance(values, bytes) else values[i]) or b""
                size = sizes[docnum] if sizes is not None else 0
                self.add(docnum, weights[i] * 1.0, value, byte_to_length(size) if size else None)
            self.finish_term()
            self._postat, self._entryat = self._postfile.tell(), self._tindex.dbfile.tell()

    return FieldWriter


def _shortest_longest(sizes: bytes | None, docs: list[int]) -> tuple[int | None, int]:
    """The length bytes of the shortest and the longest of these entries whose length is known
    (not 0): (None, 0) when none is."""
    if sizes is None:
        return None, 0
    got = bytes(map(sizes.__getitem__, docs))
    longest = max(got)
    if 0 not in got:
        return min(got), longest
    return min((b for b in got if b), default=None), longest


def _length_bytes(lengths: Any, fieldname: str) -> bytes | None:
    """Each entry's length byte in the field (0: none), from the segment's per-document reader
    (the codec's Lengths); None without one, or without the field's column."""
    if not lengths:
        return None
    if hasattr(lengths, "length_bytes"):
        return lengths.length_bytes(fieldname)  # type: ignore[no-any-return]
    table = lengths.table(fieldname)
    if table is None:
        return None
    from whoosh.util.numeric import length_to_byte

    return bytes(length_to_byte(n) if n else 0 for n in table)


def _uint32s(counts: list[int]) -> bytes:
    """whoosh.system.pack_uint of each count, joined: big-endian 32-bit."""
    packed = array("I", counts)
    if packed.itemsize != 4:
        return b"".join(_PACKED[n] if n < 256 else _pack(n) for n in counts)
    if sys.byteorder == "little":
        packed.byteswap()
    return packed.tobytes()


def _index_one(writer: Any, ws: Workspace, path: str, stat: FileStat, max_bytes: int,
               outline: dict[str, Any] | None, manifest: dict[str, Any], report: IndexReport, *,
               added: bool, text: str | None = None) -> str | None:
    """Index one file and record it in the manifest (its stat, its doc, or why it was skipped);
    returns its series key. A file that vanished or cannot be read mid-walk is left out, to be
    tried again next time. `text`: a wiki page's text as it will be written (Seed.offer)."""
    from ..sources import SkipSource
    from .documents import load_raw_file, load_wiki_page

    files, docs, skipped = manifest["files"], manifest["docs"], manifest.setdefault("skipped", {})
    digest, digests = _racy_digest(ws, path, stat), manifest.setdefault("digests", {})
    if digest is not None:
        digests[path] = digest
    else:
        digests.pop(path, None)
    try:
        doc = load_wiki_page(ws, path.removeprefix("wiki/"), text) if path.startswith("wiki/") else \
            load_raw_file(ws, path, max_bytes, outline)
    except SkipSource as exc:
        skipped[path] = str(exc)
        report.skipped.append((path, str(exc)))
        docs.pop(path, None)
        files[path] = list(stat)
        return None
    except RecursionError:
        # nested deeper than the parsers recurse: one such file must not stop the index
        # for every other; recorded like a skip, so it is not parsed again until it changes
        reason = "unreadable (nested too deeply to parse)"
        skipped[path] = reason
        report.skipped.append((path, reason))
        docs.pop(path, None)
        files[path] = list(stat)
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        # vanished or unreadable mid-walk: try again next time
        log.info("not indexed %s: %s", path, exc)
        files.pop(path, None)
        docs.pop(path, None)
        return None
    skipped.pop(path, None)
    report.passages += _add(writer, doc)
    key = series_key(path, doc.title)
    if doc.part_of:
        # a part of a source page belongs to the release its page is of (priors: the page's rank)
        key = (docs.get(doc.part_of) or {}).get("series") or None
    docs[path] = {"title": doc.title, "kind": doc.kind, "date": doc.date, "series": key or ""}
    if doc.part_of:
        docs[path]["part_of"] = doc.part_of
    if doc.kind == "source" and len(doc.sources) == 1:
        docs[path]["source"] = doc.sources[0]
    if doc.current and doc.current.startswith("raw/"):
        docs[path]["current"] = doc.current
    files[path] = list(stat)
    (report.added if added else report.updated).append(path)
    return key


@dataclass
class Grown:
    """What a seed indexed: the manifest's files, docs and skipped for raw/, and its passages."""

    manifest: dict[str, Any]
    passages: int


class Seed:
    """raw/ indexed in a process of its own while the compile writes the pages (start_seed); the
    compile hands it pages as it renders them (offer), and its update of the index then shares
    the wiki's other pages with it (share, take) and adds them to it (finish). A seed not
    finished is discarded: its process stopped, its folder removed."""

    def __init__(self, folder: Path, process: Any, receive: Any, ready: Any, taken: Any,
                 root: Path, offers: Any, claimed: Any, signal: Any, closed: Any, waiting: Any):
        self.folder = folder
        self.process = process
        self.receive = receive
        self.ready = ready  # set once the pages are shared
        self.closed = closed  # set once no more pages will be offered
        self.taken = taken  # how many of the shared pages have been taken, by either process
        self.root = root  # the workspace's, which page paths are relative to
        self.offers = offers  # how many batches of pages are offered (its lock: of `claimed` too)
        self.claimed = claimed  # how many of them the seed has taken
        self.signal = signal  # released for every batch offered, and once the pages are shared
        self.waiting = waiting  # set while the seed has nothing to index (waits) or has ended
        self.offered: set[str] = set()  # the pages offered
        self.batches: list[list[str]] = []  # the pages of each batch offered
        self.contents: dict[str, str] = {}  # what each page offered was offered as
        self.texts: dict[str, str] = {}  # the text the seed made of each (_hand_back), as read so far
        self.handed = 0  # batches whose texts were read
        self.pages: list[tuple[str, FileStat]] = []
        self.done = False

    @staticmethod
    def pages_file(folder: Path) -> Path:
        return folder.with_name(folder.name + ".json")

    @staticmethod
    def offers_folder(folder: Path) -> Path:
        return folder.with_name(folder.name + ".offers")

    def offer(self, pages: list[tuple[str, str]]) -> None:
        """Hand the seed pages (path, content) before they are written: it indexes them, as
        they will be written (start_seed's `written_as`), while the compile renders others,
        once it has indexed raw/. When the pages are shared it keeps those whose file holds
        that text; the batches it has not taken are shared with the caller. Never waits for
        the seed; a batch that cannot be handed over is shared."""
        if self.done or self.ready.is_set() or self.closed.is_set():
            return
        batch = [(path, text) for path, text in pages
                 if path not in self.offered and path.startswith("wiki/") and _covered(path)]
        if not batch:
            return
        try:
            # read and written without the lock: this process alone writes it (the lock makes the
            # seed's taking of a batch and share()'s withdrawal of the rest one step each)
            n = self.offers.get_obj().value
            folder = self.offers_folder(self.folder)
            folder.mkdir(exist_ok=True)
            atomic_write(folder / f"{n}.json", json.dumps(batch).encode("utf-8"), durable=False)
        except (OSError, UnicodeError, ValueError) as exc:
            log.debug("pages not offered to the search seed: %s", exc)
            return
        self.offered.update(path for path, _ in batch)
        self.contents.update(batch)
        self.batches.append([path for path, _ in batch])
        self.offers.get_obj().value = n + 1
        self.signal.release()

    def close(self) -> None:
        """No more pages will be offered: once the seed has taken every batch offered, it writes
        its segment of them while the compile writes the pages (the batches it has not taken
        when the pages are shared are withdrawn then: share)."""
        if self.closed.is_set() or self.ready.is_set():
            return
        self.closed.set()
        self.signal.release()

    def _withdraw(self) -> None:
        """Let the seed take no more of the batches offered."""
        lock = self.offers.get_lock()
        held = lock.acquire(timeout=1.0)
        while not held and self.process.is_alive():  # a seed killed holding it is no taker
            held = lock.acquire(timeout=1.0)
        try:
            self.offers.get_obj().value = self.claimed.value
        finally:
            if held:
                lock.release()

    def share(self, pages: list[tuple[str, FileStat]]) -> None:
        """Offer the seed these (path, stat) to index once it has indexed raw/: each is then
        indexed by whichever of it and the caller takes it first (take); a page of a batch
        offered before (offer) that the seed took is the seed's (it keeps what it indexed of
        it if its file holds that text); the batches it has not taken are withdrawn, their
        pages shared."""
        if self.ready.is_set():
            return
        self._withdraw()
        for batch in self.batches[self.claimed.value:]:
            self.offered.difference_update(batch)
        written = {path: stat for path, stat in pages if path in self.offered}
        self.pages = [(path, stat) for path, stat in pages if path not in self.offered]
        self.pages_file(self.folder).write_text(json.dumps({"pages": self.pages, "written": written}),
                                                encoding="utf-8")
        self.ready.set()
        self.signal.release()

    def share_offered(self) -> None:
        """share() the pages offered (offer) once they are written, and only those: the seed
        keeps what it indexed of each whose file holds that text and takes those of the batches
        withdrawn; the pages not offered (the timelines, written after) are indexed by the
        compile's update of the index."""
        if self.ready.is_set() or not self.offered:
            return
        pages: list[tuple[str, FileStat]] = []
        for path in sorted(self.offered):
            try:
                st = os.lstat(self.root / path)
            except OSError:
                continue
            pages.append((path, (st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
        self.share(pages)

    def written_text(self, path: str, content: str) -> str | None:
        """The text the seed made (start_seed's `written_as`) of page `path` offered as `content`,
        once it has handed back that page's batch; None otherwise (or if offered otherwise). Asked
        once a page: the text is not kept after."""
        if self.contents.get(path) != content:
            return None
        if path not in self.texts:
            folder = self.offers_folder(self.folder)
            while self.handed < len(self.batches):
                try:
                    texts = json.loads((folder / f"{self.handed}.texts.json").read_text(encoding="utf-8"))
                except FileNotFoundError:
                    break  # not yet: the seed takes the batches in turn
                except (OSError, UnicodeError, ValueError):
                    texts = []
                self.texts.update((p, t) for p, t in texts if isinstance(p, str) and isinstance(t, str))
                self.handed += 1
        return self.texts.pop(path, None)  # each page is written once: not held after

    def abouts(self) -> dict[str, Any]:
        """page -> what start_seed's `about` gave of the text the seed made of it, for the pages
        offered, once the seed has worked them all out; {} before, or if it could not."""
        try:
            got = json.loads((self.offers_folder(self.folder) / "about.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeError, ValueError):
            return {}
        return got if isinstance(got, dict) else {}

    def waits(self) -> bool:
        """Whether the seed has nothing to index now (its core is spare). Read in any process."""
        return bool(self.waiting.value)

    def take(self) -> tuple[str, FileStat] | None:
        return _take(self.pages, self.taken, lambda: not self.process.is_alive())

    def finish(self) -> Grown | None:
        """Wait for the seed; None (its folder removed) if its process failed."""
        self.share([])  # nothing shared: it has raw/ alone to commit
        self.done = True
        got: Any = None
        try:
            got = self.receive.recv()
        except (EOFError, OSError):
            pass
        self.receive.close()
        self.process.join()
        self.pages_file(self.folder).unlink(missing_ok=True)
        shutil.rmtree(self.offers_folder(self.folder), ignore_errors=True)
        if not (isinstance(got, tuple) and got[0] == "ok"):
            log.info("search seed failed (%s); indexing raw/ with the pages", got[1] if got else "no report")
            shutil.rmtree(self.folder, ignore_errors=True)
            return None
        return Grown(got[1], got[2])

    def discard(self) -> None:
        if not self.done:
            self.done = True
            self.process.kill()
            self.process.join()
            self.receive.close()
        # gone already when it became the index; left when the update that took it gave up
        shutil.rmtree(self.folder, ignore_errors=True)
        self.pages_file(self.folder).unlink(missing_ok=True)
        shutil.rmtree(self.offers_folder(self.folder), ignore_errors=True)


class _Flag:
    """A flag two processes share without a lock (multiprocessing's Event has one, which a process
    killed inside it would hold for good): set once by the compile, read by the seed."""

    def __init__(self, value: Any):
        self.value = value

    def is_set(self) -> bool:
        return bool(self.value.value)

    def set(self) -> None:
        self.value.value = 1


def _digest(data: bytes) -> bytes:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).digest()


def _holds(ws: Workspace, path: str, digest: bytes) -> bool:
    """Whether the file at `path` holds the bytes of this digest."""
    try:
        return _digest((ws.root / path).read_bytes()) == digest
    except OSError:
        return False


def _take(pages: list[tuple[str, FileStat]], taken: Any,
          alone: Callable[[], bool] | None = None) -> tuple[str, FileStat] | None:
    """The next page no process has taken, or None. `alone`: whether the other taker is gone,
    asked while the shared counter's lock is not free (a process killed holding it)."""
    lock = taken.get_lock()
    # the other taker gone: no waiting for a lock it may have died holding
    held = lock.acquire(timeout=1.0) if alone is None or not alone() else lock.acquire(False)
    while not held and not (alone is not None and alone()):
        held = lock.acquire(timeout=1.0)
    try:
        counter = taken.get_obj()  # its value without the lock again (`taken.value` takes it)
        at = counter.value
        if at >= len(pages):
            return None
        counter.value = at + 1
    finally:
        if held:
            lock.release()
    path, stat = pages[at]
    return path, tuple(stat)


SEED_NAME = INDEX_DIR + ".seed"


def ready_seed() -> None:
    """Load what start_seed needs before it forks (whoosh's index and field modules, the schema),
    and what the compile needs after, to index the pages the seed has not taken and finish the
    index (whoosh's writer, codec and reader, the page loader, the reader repair opens): for a
    compile to call while its workers read the sources, rather than at start_seed, when the
    workers are done and a core waits for the seed, or at the end, when nothing else is left to
    do."""
    import whoosh.codec.whoosh3  # noqa: F401 - loaded, for _codec
    import whoosh.reading  # noqa: F401
    import whoosh.writing  # noqa: F401
    from whoosh import index as windex  # noqa: F401 - loaded, for start_seed

    from . import documents, mapped, ranking  # noqa: F401 - loaded, for the pages and the field writer

    schema()


def start_seed(ws: Workspace, files: dict[str, FileStat], outlines: dict[str, dict[str, Any]],
               max_bytes: int, written_as: Callable[[str], str] | None = None,
               about: Callable[[str, str], Any] | None = None) -> Seed | None:
    """Index raw/ in a forked process, for a compile that will build the search index from
    nothing: the compile's pages take one core for seconds after its workers have read the
    sources, and raw/'s passages (most of the index) need nothing of those pages. `files`: raw/'s
    files with (size, mtime_ns, ctime_ns) as the compile found them; `outlines`: what the compile kept of
    the sources it read (sources.outline), so they are not parsed again. `about(path, text)`:
    what else the compile wants worked out of each page offered, from the text it will be
    written as (JSON), in the seed's spare moments (Seed.abouts). None when there is an index to
    update instead, too few files to be worth a process, or forking is unsafe here."""
    import threading

    if (not hasattr(os, "fork") or threading.active_count() > 1 or len(files) < PARALLEL_INDEX
            or (index_dir(ws) / "manifest.json").exists()):
        return None
    import multiprocessing

    from whoosh import index as windex

    folder = ws.state_dir / SEED_NAME
    if folder.exists():
        shutil.rmtree(folder)
    Seed.pages_file(folder).unlink(missing_ok=True)
    shutil.rmtree(Seed.offers_folder(folder), ignore_errors=True)
    folder.mkdir(parents=True)
    windex.create_in(str(folder), schema())
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    ready, closed, taken = _Flag(context.RawValue("b", 0)), _Flag(context.RawValue("b", 0)), context.Value("q", 0)
    offers, claimed, signal = context.Value("q", 0), context.Value("q", 0, lock=False), context.Semaphore(0)
    waiting = context.RawValue("b", 0)
    process = context.Process(target=_grow_seed, args=(ws, folder, files, outlines, max_bytes, send, ready, taken,
                                                       os.getpid(), offers, claimed, signal, closed, waiting,
                                                       written_as, about),
                              name="wikimem-search-seed", daemon=True)
    from ..lifetime import start_frozen

    start_frozen(process)  # the seed reads little of what the compile holds: the two keep sharing it
    send.close()
    return Seed(folder, process, receive, ready, taken, ws.root, offers, claimed, signal, closed, waiting)


def _grow_seed(ws: Workspace, folder: Path, files: dict[str, FileStat],
               outlines: dict[str, dict[str, Any]], max_bytes: int, send: Any, ready: Any, taken: Any,
               ppid: int, offers: Any, claimed: Any, signal: Any, closed: Any, waiting: Any,
               written_as: Callable[[str], str] | None, about: Callable[[str, str], Any] | None = None) -> None:
    """The seed's process: raw/'s files into one segment, then into another the wiki pages the
    compile offers as it renders them (written once the last is rendered: Seed.close), and into
    a third those it takes of the pages the compile shares; the manifest's part back to the
    compile."""
    try:
        from ..lifetime import die_with

        die_with(ppid)
        from whoosh import index as windex

        manifest: dict[str, Any] = {"files": {}, "docs": {}, "skipped": {}}
        report = IndexReport()
        stored = _Outlines(ws, files)
        writer = _writer(windex.open_dir(str(folder)), limitmb=256)
        try:
            for path in sorted(files):
                _index_one(writer, ws, path, files[path], max_bytes, outlines.get(path) or stored.get(path),
                           manifest, report, added=True)
            # raw/'s segment is written before the pages are taken: writing it is a good part of
            # the work, and the compile indexes the pages meanwhile
            writer.commit(merge=False)
        except BaseException:
            writer.cancel()
            raise
        finally:
            stored.close()
        pages_writer = None
        offered: dict[str, bytes] = {}  # page -> digest of the text indexed for it
        told = _Abouts(about)
        try:
            seen = 0
            while True:
                while _claim(offers, claimed, seen):
                    batch = json.loads((Seed.offers_folder(folder) / f"{seen}.json").read_text(encoding="utf-8"))
                    texts = [(path, written_as(content) if written_as is not None else content) for path, content in batch]
                    if written_as is not None:
                        _hand_back(Seed.offers_folder(folder), seen, texts)
                    for path, text in texts:
                        if pages_writer is None:
                            pages_writer = _writer(windex.open_dir(str(folder)), limitmb=128)
                        # its stat once its file is found to hold this text, none till then
                        _index_one(pages_writer, ws, path, (-1, -1), max_bytes, None, manifest, report,
                                   added=True, text=text)
                        offered[path] = _digest(text.encode("utf-8"))
                    told.add(texts)
                    seen += 1
                if closed.is_set() or ready.is_set():
                    if not _claim(offers, claimed, seen, peek=True):  # none left to take
                        break
                    continue
                if told.work_some():
                    continue  # a moment spare, used: any batch offered meanwhile goes first
                waiting.value = 1  # for the compile: a core is spare (Seed.waits)
                signal.acquire(timeout=1.0)
                waiting.value = 0
            # what the compile reads once it has written the pages comes first, then the segment
            # of every page offered, written while the compile writes them
            told.hand_over(Seed.offers_folder(folder))
            if pages_writer is not None:
                pages_writer.commit(merge=False)
                pages_writer = None
            waiting.value = 1
            while not ready.is_set():
                signal.acquire(timeout=1.0)
            waiting.value = 0
            shared = json.loads(Seed.pages_file(folder).read_text(encoding="utf-8"))
        except BaseException:
            if pages_writer is not None:
                pages_writer.cancel()
            raise
        pages, written = shared["pages"], shared["written"]
        for path, digest in offered.items():
            if path in manifest["files"]:
                # a page not written as offered: the compile's update indexes it again (stale)
                manifest["files"][path] = list(written[path]) if path in written and _holds(ws, path, digest) \
                    else [-1, -1]
        page = _take(pages, taken)
        if page is not None:  # nothing taken: no segment
            _index_taken(_writer(windex.open_dir(str(folder)), limitmb=128), ws,
                         lambda: _take(pages, taken), max_bytes, manifest, report, first=page)
        send.send(("ok", manifest, report.passages))
    except Exception as exc:  # noqa: BLE001 - reported to the compile, which indexes raw/ itself
        send.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        waiting.value = 1  # ended: its core is spare
        send.close()


class _Abouts:
    """What the compile asked the seed to work out of each page's text (start_seed's `about`),
    worked out a few pages at a time while the seed has nothing to index, the rest once every
    page offered is indexed, and handed over in one file (Seed.abouts)."""

    STEP = 8  # pages worked out between two looks for a batch offered
    MOST = 256  # pages' texts held at most: past them the oldest are worked out at once

    def __init__(self, about: Callable[[str, str], Any] | None):
        self.about = about
        self.todo: list[tuple[str, str]] = []
        self.done: dict[str, Any] = {}

    def add(self, texts: list[tuple[str, str]]) -> None:
        """Pages to work out. A seed that is never spare while the pages are rendered (a large
        wiki) would hold every page's text until the end: past MOST it works some out now."""
        if self.about is not None:
            self.todo.extend(texts)
            if len(self.todo) > self.MOST:
                self.work_some(len(self.todo) - self.MOST)

    def work_some(self, n: int = STEP) -> bool:
        """Work out up to `n` pages; False when none was left."""
        if not self.todo or self.about is None:
            return False
        for path, text in self.todo[:n]:
            self.done[path] = self.about(path, text)
        del self.todo[:n]
        return True

    def hand_over(self, offers: Path) -> None:
        """The rest worked out, and all of it written whole for the compile, or nothing at all
        if anything failed (the compile then works it out itself)."""
        if self.about is None:
            return
        try:
            self.work_some(len(self.todo))
            atomic_write(offers / "about.json", json.dumps(self.done), durable=False)
        except Exception:  # noqa: BLE001 - derived, and the compile does without it
            log.debug("what was worked out of the pages not handed over", exc_info=True)


def _hand_back(offers: Path, n: int, texts: list[tuple[str, str]]) -> None:
    """The texts the seed made of offered batch `n` (each page as it will be written), for the
    compile to write rather than make them again (Seed.written_text): the seed's core has time to
    spare while the compile renders, none of the compile's own. Renamed into place whole, or not
    there at all (the compile then makes them itself)."""
    try:
        tmp = offers / f".{n}.texts.tmp"
        tmp.write_text(json.dumps(texts), encoding="utf-8")
        os.replace(tmp, offers / f"{n}.texts.json")
    except (OSError, UnicodeError, ValueError):
        log.debug("texts of offered pages not handed back", exc_info=True)


def _claim(offers: Any, claimed: Any, seen: int, peek: bool = False) -> bool:
    """Whether the seed takes the offered batch number `seen` (the one after those it took): one
    offered and not withdrawn (Seed.share). `peek`: say so without taking it."""
    with offers.get_lock():
        if seen >= offers.value:
            return False
        if not peek:
            claimed.value = seen + 1
        return True


@dataclass
class _Beside:
    """The pages the compile indexed itself while the seed indexed others (_index_pages_beside)."""

    folder: Path
    manifest: dict[str, Any]
    passages: int


def _index_pages_beside(ws: Workspace, seed: Seed, current: dict[str, FileStat], max_bytes: int) -> _Beside:
    """Share the wiki's pages with the seed, and index those this process takes into an index of
    its own beside the seed's (one segment, adopted into the seed's by _adopt)."""
    from whoosh import index as windex

    seed.share([(p, current[p]) for p in sorted(current) if p.startswith("wiki/")])
    folder = ws.state_dir / (INDEX_DIR + ".pages")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    manifest: dict[str, Any] = {"files": {}, "docs": {}, "skipped": {}}
    report = IndexReport()
    try:
        _index_taken(_writer(windex.create_in(str(folder), schema()), limitmb=128), ws, seed.take, max_bytes,
                     manifest, report)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _Beside(folder, manifest, report.passages)


def _index_taken(writer: Any, ws: Workspace, take: Callable[[], tuple[str, FileStat] | None],
                 max_bytes: int, manifest: dict[str, Any], report: IndexReport,
                 first: tuple[str, FileStat] | None = None) -> None:
    """Index the shared pages `take` hands this process (after `first`, taken already) into
    `writer`'s segment and commit it; cancelled on any failure. The compile's and the seed's."""
    try:
        page = first if first is not None else take()
        while page is not None:
            _index_one(writer, ws, page[0], page[1], max_bytes, None, manifest, report, added=True)
            page = take()
        writer.commit(merge=False)
    except BaseException:
        writer.cancel()
        raise


def _adopt(into: Path, beside: Path) -> None:
    """Move the segments of the whoosh index in `beside` into the one in `into` (the same schema,
    neither being written): their files moved, then a new generation of `into`'s table of
    contents listing them too. A segment is searched where it is; none is merged."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import _DEF_INDEX_NAME, TOC

    source, target = FileStorage(str(beside)), FileStorage(str(into))
    theirs = TOC.read(source, _DEF_INDEX_NAME)
    if not theirs.segments:
        return
    for segment in theirs.segments:
        for name in segment.list_files(source):
            os.replace(beside / name, into / name)
    ours = TOC.read(target, _DEF_INDEX_NAME)
    TOC(ours.schema, ours.segments + theirs.segments, ours.generation + 1).write(target, _DEF_INDEX_NAME)


def update_index(ws: Workspace, *, rebuild: bool = False, wait: float = 5.0,
                 only: Iterable[str] | None = None, seed: Seed | None = None) -> IndexReport:
    """Bring the index in line with wiki/ and raw/; the minimum work when nothing changed.

    Returns what changed. When another process holds the index's write lock it waits
    up to `wait` seconds, then leaves the index as it is (searches still work on it).
    `only` (workspace-relative paths, as a compile names what it wrote) looks at those files
    alone, without walking the folders; without an index yet, it builds the whole one, on
    `seed` (raw/ indexed meanwhile: start_seed) if the compile started one.
    """
    started = time.perf_counter()
    folder = index_dir(ws)
    manifest = None if rebuild else read_parts(folder, ("files",))
    if only is not None and manifest is not None:
        only = sorted(set(only))
        with _index_lock(ws, wait) as acquired:
            if not acquired:
                return IndexReport(seconds=time.perf_counter() - started)
            return _update_locked(ws, False, wait, started, only=only)
    if manifest is not None and _unchanged(ws, manifest):
        return IndexReport(files=len(manifest["files"]), seconds=time.perf_counter() - started)
    try:
        with _index_lock(ws, wait) as acquired:
            if not acquired:
                log.info("another process is updating the search index; searching it as it is")
                return IndexReport(seconds=time.perf_counter() - started)
            # under the lock, look again: the process we waited for may have done the work
            return _update_locked(ws, rebuild, wait, started, seed=seed)
    except OSError as exc:
        if manifest is not None and not rebuild:
            # e.g. a read-only copy of a workspace: search the index as it is
            log.warning("search index not updated (%s); results may miss recent changes", exc)
            return IndexReport(seconds=time.perf_counter() - started)
        from ..errors import WikimemError

        raise WikimemError(
            f"cannot write the search index in {folder} ({exc.strerror or exc}); check that folder's permissions"
        ) from exc


def _matches(manifest: dict[str, Any], current: dict[str, FileStat]) -> bool:
    """The manifest (its "files" part) lists exactly the files walked, each with the same size
    and mtime."""
    files = manifest["files"]
    return len(files) == len(current) and all(files.get(p) == list(st) for p, st in current.items())


def is_current(ws: Workspace) -> bool | None:
    """Whether the index holds wiki/ and raw/ as they are now: update_index's check, without
    updating anything. None: no usable index yet."""
    manifest = read_parts(index_dir(ws), ("files",))
    if manifest is None:
        return None
    return _unchanged(ws, manifest)


def _unchanged(ws: Workspace, manifest: dict[str, Any]) -> bool:
    """The files are as the manifest (its files part) lists them: without a walk when the folders
    are as the last walk that found so left them (see search.unchanged), else by walking, and
    then that walk is kept for the next check."""
    from ..raw_tree import Trace
    from . import unchanged

    folder, rules = index_dir(ws), unchanged.rules_digest(WIKI_FOLDERS)
    if unchanged.since_signed(ws, folder, manifest["stamp"], manifest["files"], rules):
        return True
    trace, started = Trace(), time.time_ns()
    if not _matches(manifest, walk_files(ws, trace)):
        return False
    _write_beside(folder, lambda: unchanged.sign(ws, folder, manifest["stamp"], trace, started, rules))
    return True


@contextlib.contextmanager
def _index_lock(ws: Workspace, wait: float) -> Iterator[bool]:
    """One index updater at a time across processes (an OS lock, freed if the holder dies)."""
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    with _lock_in(ws.state_dir, wait) as acquired:
        yield acquired


def _write_beside(folder: Path, write: Callable[[], object]) -> None:
    """Write a copy derived from the index beside it (manifest.parts, walk.signs) holding the
    index lock, so no updater is swapping the folder meanwhile; skipped when one holds it, or
    on an OSError (a read-only workspace): a later search writes it."""
    try:
        with _lock_in(folder.parent, 0.0) as acquired:
            if acquired and folder.is_dir():
                write()
    except OSError:
        pass


@contextlib.contextmanager
def _lock_in(state_dir: Path, wait: float) -> Iterator[bool]:
    """The index lock: workspace.file_lock on search.lock (freed if the holder dies, let go of in
    forked children, taken over from a dead holder)."""
    from ..workspace import file_lock

    with file_lock(state_dir / "search.lock", wait=wait, holder="wikimem search index", poll=0.05) as acquired:
        yield acquired


def _covered(rel: str) -> bool:
    """Whether search covers the file at this path (the rules of walk_files, for a path named
    rather than walked; wiki_tree's rule for a page)."""
    from ..wiki_tree import is_page_name

    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in ("raw", "wiki") or any(p.startswith(".") for p in parts[1:]):
        return False
    return parts[0] == "raw" or (parts[1] in WIKI_FOLDERS and len(parts) >= 3 and is_page_name(parts[-1])
                                 and not CATALOG_NAME.search(rel))


def _stat_for_index(ws: Workspace, rel: str) -> FileStat | None:
    """(size, mtime_ns, ctime_ns) of one file search covers, None if it is gone or not one it covers
    (the rules of walk_files, for a path named rather than walked)."""
    if not _covered(rel):
        return None
    try:
        st = os.lstat(ws.root / rel)
    except OSError:
        return None
    import stat as stat_

    if not stat_.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _racy_digest(ws: Workspace, path: str, stat: FileStat) -> int | None:
    """For a raw file changed so shortly before now that an edit after could keep its size and
    times (workspace.racy: a second-granular file system, or the same clock tick), the digest
    of its bytes (63 bits, as the manifest keeps ints), or -1 when they cannot be read; None for
    any other file. Taken before the file is read, so what is indexed is these bytes, or an edit
    made after (which the next check then finds in the content)."""
    from ..workspace import racy

    if not path.startswith("raw/") or len(stat) != 3 or stat[1] < 0 or not racy(stat[1], stat[2], time.time_ns()):
        return None
    got = _content_digest(ws, path)
    return -1 if got is None else got


def _smudge_racy(manifest: dict[str, Any]) -> None:
    """Record each raw file that was racily clean when it was read (_racy_digest) with times of
    -1 and the digest of the bytes indexed: the next check then judges it by its content
    (_confirmed) instead of trusting times that cannot tell. The wiki's pages are left as they
    are: wikimem has just written most of them, and a person's edit in the same tick is not to
    be had."""
    files: dict[str, list[int]] = manifest["files"]
    for path, digest in (manifest.pop("digests", None) or {}).items():
        stat = files.get(path)
        if stat is not None and len(stat) == 3 and stat[1] >= 0:
            files[path] = [stat[0], -1, digest]


def _confirmed(ws: Workspace, files: dict[str, list[int]], changed: list[str],
               current: dict[str, FileStat]) -> tuple[list[str], bool]:
    """`changed` without the racily clean raw files whose bytes are the ones indexed (their
    size as recorded, their digest the same): each is recorded with its times again, or as
    racy still while it is. Returns the files changed, and whether any record was renewed."""
    from ..workspace import racy

    kept, renewed = [], False
    for path in changed:
        entry, stat = files.get(path), current[path]
        if (entry is None or len(entry) != 3 or entry[1] != -1 or entry[2] < 0 or entry[0] != stat[0]
                or _content_digest(ws, path) != entry[2]):
            kept.append(path)
            continue
        again = list(stat) if not racy(stat[1], stat[2], time.time_ns()) else entry
        renewed = renewed or again != entry
        files[path] = again
    return kept, renewed


def _content_digest(ws: Workspace, path: str) -> int | None:
    try:
        return int.from_bytes(_digest((ws.root / path).read_bytes())[:8], "big") >> 1
    except OSError:
        return None


def _update_locked(ws: Workspace, rebuild: bool, wait: float, started: float,
                   only: list[str] | None = None, seed: Seed | None = None) -> IndexReport:
    report = IndexReport(rebuilt=rebuild)
    folder = index_dir(ws)
    from ..workspace import remove_stale_temp_files

    # what an updater killed mid-write left (under this lock, no other updater is writing one)
    remove_stale_temp_files(folder)
    manifest = None if rebuild else read_manifest(folder)
    if manifest is None:
        rebuild = report.rebuilt = True
        only = None
        manifest = {"version": INDEX_VERSION, "files": {}, "docs": {}, "skipped": {}}
    files: dict[str, list[int]] = manifest["files"]
    if only is None:
        current = walk_files(ws)
    else:
        current = {p: tuple(st) for p, st in files.items()}
        for path in only:
            got = _stat_for_index(ws, path)
            if got is None:
                current.pop(path, None)
            else:
                current[path] = got
    report.files = len(current)
    changed, renewed = _confirmed(ws, files, [p for p, stat in current.items() if files.get(p) != list(stat)],
                                  current)
    gone = [p for p in files if p not in current]
    max_bytes = _settings_max_bytes(ws)
    if manifest.get("max_bytes", max_bytes) != max_bytes:
        # max_source_mb changed: the files skipped (as too large, or for another reason) are
        # read again, as the compile reads again those it skipped as too large
        changed += [p for p in manifest.get("skipped", {}) if p in current and p not in changed]
    manifest["max_bytes"] = max_bytes
    if not (changed or gone or rebuild):
        if renewed:  # racily clean files found as indexed, and clean now: checked by their times again
            _write_manifest(folder, manifest, set())
        report.seconds = time.perf_counter() - started
        return report

    from whoosh import index as windex
    from whoosh.index import LockError

    build_in = folder
    ix: Any = None
    seeded = False
    if not rebuild:
        try:
            ix = windex.open_dir(str(folder))
        except Exception as exc:  # noqa: BLE001 - a damaged index is derived data: rebuild it
            log.warning("search index unreadable (%s); rebuilding", exc)
            rebuild = report.rebuilt = True
    beside: _Beside | None = None
    if rebuild and seed is not None and not seed.done:
        # the pages, indexed here and by the seed (once it has indexed raw/), each by whichever
        # takes it first: two cores, and no process started for them
        beside = _index_pages_beside(ws, seed, current, max_bytes)
    try:
        grown = seed.finish() if rebuild and seed is not None else None
        if grown is not None and beside is not None:
            _adopt(seed.folder, beside.folder)  # type: ignore[union-attr]
            for part in ("files", "docs", "skipped"):
                grown.manifest[part].update(beside.manifest[part])
            grown.passages += beside.passages
    finally:
        if beside is not None:
            shutil.rmtree(beside.folder, ignore_errors=True)
    if grown is not None:
        # raw/ was indexed while the compile wrote the pages (see start_seed), the pages since:
        # build on it, and index again what changed since they were read
        manifest = {"version": INDEX_VERSION, **grown.manifest}
        files = manifest["files"]
        build_in = seed.folder  # type: ignore[union-attr]
        ix = windex.open_dir(str(build_in))
        stale = [p for p in files if current.get(p) is None or files[p] != list(current[p])]

        changed, gone = [p for p in current if p not in files or p in stale], []
        report.passages, report.added, report.skipped = grown.passages, [p for p in files if p not in stale], \
            [(p, r) for p, r in manifest["skipped"].items() if p not in stale]
        seeded = True
    elif rebuild:
        # build beside the live index and swap it in at the end, so searches running
        # meanwhile (another process, the MCP server) keep a complete index to read
        manifest = {"version": INDEX_VERSION, "files": {}, "docs": {}, "skipped": {}}
        files = manifest["files"]
        changed, gone = list(current), []
        build_in = folder.with_name(INDEX_DIR + ".new")
        if build_in.exists():
            shutil.rmtree(build_in)
        build_in.mkdir(parents=True)
        ix = windex.create_in(str(build_in), schema())
    # a build from nothing of many files: whoosh's multiprocessing writer analyses on every core
    # (each worker writes a segment of its own; the segments are searched as they are). Not in a
    # process with other threads (the daemon, the MCP server): forking there is unsafe.
    import threading

    procs = min(4, os.cpu_count() or 1)
    parallel = rebuild and len(changed) >= PARALLEL_INDEX and procs > 1 and threading.active_count() == 1
    try:
        # jobs of ~100 entries (whoosh's default) in a small build would all go to one worker;
        # each worker keeps 256 MB of postings in memory (whoosh counts ~160 bytes each): past
        # that it sorts them in runs on disk and merges the runs, which at 10k sources doubled
        # the build (10k: 128 MB 49 s, 192 MB 47 s, 256 MB 33 s, no run; peak RSS 221 -> 391 MB)
        batch = max(20, min(100, len(changed) // (2 * procs)))
        writer = ix.writer(procs=procs, batchsize=batch, multisegment=True, timeout=wait, limitmb=256,
                           codec=_codec()) if parallel else _writer(ix, timeout=wait, limitmb=128)
    except LockError:
        log.info("search index is being updated by another process; searching it as it is")
        report.seconds = time.perf_counter() - started
        return report
    outlines = _Outlines(ws, current)
    delete = _Deleter(writer)
    docs: dict[str, Any] = manifest["docs"]
    skipped: dict[str, Any] = manifest.setdefault("skipped", {})
    # the series (versioned titles) of every file this update touches, before and after
    before_titles = {p: docs[p] for p in (*gone, *changed) if p in docs}
    old_priors = manifest.get("priors")
    touched_series: set[str] = {k for p, info in before_titles.items() if (k := _series_of(p, info)) is not None}
    try:
        if seeded:
            for path in stale:
                delete(path)
                for part in ("files", "docs", "skipped"):
                    manifest[part].pop(path, None)
        for path in gone:
            delete(path)
            files.pop(path, None)
            docs.pop(path, None)
            skipped.pop(path, None)
            report.removed.append(path)
        for path in sorted(changed):
            known = path in files
            if known and not rebuild:
                delete(path)
            key = _index_one(writer, ws, path, current[path], max_bytes, outlines.get(path), manifest, report,
                             added=not known or rebuild)
            if key is not None:
                touched_series.add(key)
        if rebuild or "priors" not in manifest:
            manifest["priors"] = compute_priors(docs)
        elif touched_series:
            # only the series a changed file belongs to (or belonged to) can change their order
            priors = {p: v for p, v in manifest["priors"].items()
                      if _series_of(p, docs.get(p) or before_titles.get(p) or {}) not in touched_series}
            priors.update(compute_priors(docs, touched_series))
            manifest["priors"] = priors
        delete.close()
        # a seeded build keeps raw/'s segment as it is: merging it would index it twice over
        if rebuild or seeded:
            writer.commit(optimize=rebuild and not parallel and not seeded, merge=not seeded)
        else:
            writer.commit(mergetype=_merge_small_live)
    except BaseException:
        writer.cancel()
        raise
    finally:
        delete.close()
        outlines.close()
    moved: set[str] | None = None  # the paths whose doc or prior this update changed
    if not rebuild and isinstance(old_priors, dict):
        new_priors = manifest["priors"]
        moved = {*changed, *gone}
        if new_priors is not old_priors:
            moved.update(p for p in old_priors.keys() | new_priors.keys() if old_priors.get(p) != new_priors.get(p))
    manifest["max_bytes"] = max_bytes  # the cap its skipped files were skipped under
    _smudge_racy(manifest)
    _write_manifest(build_in, manifest, moved)
    if build_in != folder:
        old = folder.with_name(INDEX_DIR + ".old")
        if old.exists():
            shutil.rmtree(old)
        if folder.exists():
            os.replace(folder, old)
        os.replace(build_in, folder)
        shutil.rmtree(old, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    return report


class _Deleter:
    """Deletes a file's entries from the segments a writer started from: whoosh's
    `delete_by_term`, without the searcher and the query it makes for it (loading whoosh's
    query and searching modules was 10 ms of a compile of one changed file). The segments'
    reader is opened on the first deletion and closed before the writer commits."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self._leaves: list[tuple[Any, int]] | None = None
        self._reader: Any = None

    def __call__(self, path: str) -> None:
        from whoosh.reading import TermNotFound

        if self._leaves is None:
            self._reader = self.writer.reader()
            self._leaves = list(self._reader.leaf_readers())
        for reader, offset in self._leaves:
            try:
                ids = list(reader.postings("path", path).all_ids())  # live entries only
            except TermNotFound:
                continue
            for docnum in ids:
                self.writer.delete_document(offset + docnum)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._leaves = None


class _Outlines:
    """The outlines the compile kept in state.db (sources.outline), for raw files whose size and
    mtime still match the compiled version; read-only, and empty when there is no state.db."""

    def __init__(self, ws: Workspace, current: dict[str, FileStat]):
        import sqlite3

        self.db: Any = None
        self.shas: dict[str, str] = {}
        if not ws.state_db.exists():
            return
        try:
            self.db = sqlite3.connect(f"file:{ws.state_db}?mode=ro", uri=True, timeout=1.0)
            for path, sha, size, mtime in self.db.execute("SELECT path, sha256, size, mtime_ns FROM sources"):
                if current.get(path, ())[:2] == (size, mtime):
                    self.shas[path] = sha
        except sqlite3.Error:
            self.close()

    def get(self, path: str) -> dict[str, Any] | None:
        sha = self.shas.get(path)
        if sha is None or self.db is None:
            return None
        import sqlite3

        try:
            row = self.db.execute("SELECT data FROM outlines WHERE sha256=?", (sha,)).fetchone()
        except sqlite3.Error:
            return None
        return json.loads(row[0]) if row else None

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


def repair(ws: Workspace) -> str | None:
    """Open every segment of the index, as a search does first; when one cannot be read (a write
    torn by a kill or a full disk, a damaged disk) build the index again. Returns the line to
    report, or None when it read fine (or there is no index yet)."""
    from whoosh import index as windex

    from . import mapped

    folder = index_dir(ws)
    if not (folder / "manifest.json").exists():
        return None
    try:
        mapped.install()  # as Engine._open reads them
        ix = windex.open_dir(str(folder))
        # a searcher reads nothing more of the files than its reader does (it wraps one per
        # segment), and it would load whoosh's query modules, which a compile has no use for
        ix.reader().close()
    except Exception as exc:  # noqa: BLE001 - whatever whoosh raises on a damaged file: derived data, rebuilt
        reindex(ws)
        return f"search index was damaged ({type(exc).__name__}: {exc}); rebuilt it"
    return None


def reindex(ws: Workspace) -> IndexReport:
    """Throw the index away and build it again from wiki/ and raw/."""
    return update_index(ws, rebuild=True, wait=30.0)

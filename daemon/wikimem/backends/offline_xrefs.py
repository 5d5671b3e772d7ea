"""Cross-references resolved across the set, as Sphinx resolves them, and kept so an incremental
compile stays correct and cheap.

A source's analysis keeps what it names (`.. _label:` with the line and title of what the label
marks) and the references its sentences make (`:ref:` to a label, `:doc:` to a document, as
marks in the text: sources/xref.py). Both go into state.db when the source is counted
(xref_labels, xref_uses) and leave with it, so the index of every label in raw/ is always the
one a full compile would build.

A page shows a reference as the title of what it names, linked to the wiki page (or part page)
holding it; what a page showed is kept as a digest per source (xref_seen). A compile works out
again only the sources that refer to a label or document a changed source defines (and new
ones): when a digest moves, the source's page and the concept pages quoting it are rendered
again. One source edited in a set of thousands costs the lookups of the sources that refer to
it, not a pass over the set.

Sphinx's rules: `:ref:`label`` shows the title of the section the label marks (the caption of a
figure or table); with a text of its own, that text. A label defined twice is a warning in
Sphinx: here the definition in the referring document wins, else the first by path, and the
page says so. `:doc:`path`` is relative to the document, or, with a leading "/", to the top of
the documentation tree (the nearest folder above the document that holds it).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..sources import xref
from .offline_pages import Resolved, part_holding, part_spans
from .offline_store import CHUNK, Doc

# the labels Sphinx itself defines, with the titles it shows for them (pages it generates)
BUILT_IN = {"genindex": "Index", "modindex": "Module Index", "py-modindex": "Python Module Index",
            "search": "Search Page"}
# how a document's path may be written in `:doc:` (Sphinx's source suffixes)
_SUFFIXES = ("", ".rst", ".txt", ".md", ".rest", ".markdown")
NOTES = 3  # at most this many names a page's note lists


def doc_key(target: str) -> str:
    """The key a document is referred to by: the last part of its path, lowercased, without a
    suffix ("/ref/models/index" and "raw/ref/models/index.txt" are both "index")."""
    name = target.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and "." + suffix in _SUFFIXES else name


def _keys(kind: str, target: str) -> set[str]:
    """What a reference's resolution depends on: a label, a document's name, or either."""
    return {target} if kind == "ref" else {doc_key(target)} if kind == "doc" else {target, doc_key(target)}


def document_named(docs: Mapping[str, Any], source: str, target: str) -> str | None:
    """The source of `docs` a `:doc:` target (or an included file) names, seen from `source`:
    relative to its folder, or with a leading "/" to the nearest folder above it that holds the
    document."""
    written = target.strip()
    if written.startswith("/"):
        folder = posixpath.dirname(source)
        bases = []
        while folder.startswith("raw"):
            bases.append(folder)
            folder = posixpath.dirname(folder)
        tails = [written.lstrip("/")]
    else:
        bases, tails = [posixpath.dirname(source)], [written]
    for base in bases:
        for tail in tails:
            stem = posixpath.normpath(posixpath.join(base, tail))
            for suffix in _SUFFIXES:
                if stem + suffix in docs:
                    return stem + suffix
    return None


class XrefIndex:
    """The labels and references of the counted sources (tables in state.db, state.XREF_SCHEMA)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def clear(self) -> None:
        for table in ("xref_labels", "xref_uses", "xref_seen"):
            self.db.execute(f"DELETE FROM {table}")

    def forget(self, path: str) -> set[str]:
        """Take a source out; the keys whose resolution may move with it (its labels, its name)."""
        names = {r[0] for r in self.db.execute("SELECT name FROM xref_labels WHERE path=?", (path,))}
        self.db.execute("DELETE FROM xref_labels WHERE path=?", (path,))
        self.db.execute("DELETE FROM xref_uses WHERE path=?", (path,))
        self.db.execute("DELETE FROM xref_seen WHERE path=?", (path,))
        return names | {doc_key(path)}

    def record(self, path: str, labels: Iterable[Any], refs: Iterable[Any]) -> set[str]:
        """Count a source in; the keys whose resolution may move with it."""
        rows = [(path, str(name), int(line), title) for name, line, title in labels]
        self.db.executemany("INSERT INTO xref_labels (path, name, line, title) VALUES (?, ?, ?, ?)", rows)
        self.db.executemany(
            "INSERT INTO xref_uses (path, kind, target, key) VALUES (?, ?, ?, ?)",
            [(path, kind, target, key) for kind, target in refs for key in _keys(kind, target)])
        return {r[1] for r in rows} | {doc_key(path)}

    def labels(self, names: Iterable[str]) -> dict[str, list[tuple[str, int, str | None]]]:
        """Each label's definitions: (path, line, title), in path order."""
        out: dict[str, list[tuple[str, int, str | None]]] = {}
        wanted = sorted(set(names))
        for at in range(0, len(wanted), CHUNK):
            chunk = wanted[at: at + CHUNK]
            for name, path, line, title in self.db.execute(
                    f"SELECT name, path, line, title FROM xref_labels WHERE name IN ({','.join('?' * len(chunk))})", chunk):
                out.setdefault(name, []).append((path, line, title))
        for found in out.values():
            found.sort(key=lambda d: (d[0], d[1]))
        return out

    def users(self, keys: Iterable[str]) -> set[str]:
        """The sources that refer to any of `keys` (a label, or a document's name)."""
        found: set[str] = set()
        wanted = sorted(set(keys))
        for at in range(0, len(wanted), CHUNK):
            chunk = wanted[at: at + CHUNK]
            found.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT path FROM xref_uses WHERE key IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def seen(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT path, digest FROM xref_seen"))

    def set_seen(self, digests: Mapping[str, str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO xref_seen (path, digest) VALUES (?, ?)", sorted(digests.items()))


class Resolver:
    """Resolves the references of the counted sources (`docs`, by path) for one compile."""

    def __init__(self, index: XrefIndex, docs: Mapping[str, Doc], analysis_of: Callable[[Doc], dict[str, Any]]):
        self.index = index
        self.docs = docs
        self.analysis_of = analysis_of
        self._labels: dict[str, list[tuple[str, int, str | None]]] = {}
        self._asked: set[str] = set()
        self._spans: dict[str, list[tuple[int, int, str]]] = {}
        self._done: dict[str, tuple[dict[tuple[str, str], Resolved], list[str], str]] = {}

    def _definitions(self, names: Iterable[str]) -> None:
        wanted = [n for n in names if n not in self._asked]
        if wanted:
            self._labels.update(self.index.labels(wanted))
            self._asked.update(wanted)

    def _page(self, path: str, line: int) -> str:
        """The page (or part page) that lists the section holding `line` of source `path`."""
        doc = self.docs[path]
        data = self.analysis_of(doc)
        if path not in self._spans:
            self._spans[path] = part_spans(doc.page, path, data)
        return part_holding(doc.page, data, self._spans[path], line)

    def _document(self, source: str, target: str) -> str | None:
        return document_named(self.docs, source, target)

    def resolved(self, source: str, refs: Iterable[Any]) -> tuple[dict[tuple[str, str], Resolved], list[str], str]:
        """How `source`'s references resolve ((kind, target) -> (title, page)), the notes its page
        gives about them (a label defined twice, a reference to nothing), and their digest."""
        if source in self._done:
            return self._done[source]
        refs = [(str(kind), str(target)) for kind, target in refs]
        self._definitions(target for kind, target in refs if kind in ("ref", "any"))
        out: dict[tuple[str, str], Resolved] = {}
        missing: list[str] = []
        twice: list[str] = []
        for kind, target in refs:
            if (kind, target) in out:
                continue
            if kind == "any" and not self._labels.get(target):
                # Sphinx's `any`: a label, else a document; what answers neither is a name as written
                named = self._document(source, target)
                out[(kind, target)] = (self.docs[named].title, self.docs[named].page) if named else (None, None)
                continue
            if kind in ("ref", "any"):
                found = self._labels.get(target, [])
                if xref.is_substitution(target):
                    # a substitution another file defines: its text, no link; one defined nowhere
                    # in raw/ (conf.py's) is its name, as before, with no note
                    out[(kind, target)] = (found[0][2] if found else None, None)
                    continue
                if not found:
                    out[(kind, target)] = (BUILT_IN.get(target), None)
                    if target not in BUILT_IN:
                        missing.append(target)
                    continue
                own = [d for d in found if d[0] == source]
                path, line, title = (own or found)[0]
                if len(found) > 1:
                    twice.append(f"`{target}` ({', '.join(f'{p} line {n}' for p, n, _ in found[:NOTES])})")
                out[(kind, target)] = (title, self._page(path, line) if path in self.docs else None)
            else:
                named = self._document(source, target)
                if named is None:
                    out[(kind, target)] = (None, None)
                    missing.append(target)
                    continue
                out[(kind, target)] = (self.docs[named].title, self.docs[named].page)
        notes = []
        if missing:
            shown = ", ".join(f"`{m}`" for m in sorted(set(missing))[:NOTES])
            more = len(set(missing)) - NOTES
            notes.append(f"cross-references to what raw/ does not hold, shown as their names: {shown}"
                         + (f" and {more} more" if more > 0 else ""))
        for item in twice[:NOTES]:
            notes.append(f"the label {item} is defined more than once; linked to "
                         + ("its definition in this document" if any(d[0] == source for d in self._labels.get(
                             item.split("`")[1], [])) else "the first"))
        digest = hashlib.sha1(json.dumps([sorted(out.items()), notes]).encode()).hexdigest()
        self._done[source] = (out, notes, digest)
        return self._done[source]


__all__ = ["Resolver", "XrefIndex", "doc_key", "document_named"]

"""A hub document's map: the documents its table of contents names, as links to their pages.

A reST toctree, an mdBook SUMMARY.md, a MyST toctree, a list of links to other files of the set:
the documentation's own map, which an agent reading the wiki should be able to follow. The
source page of such a document lists them in the author's order, under the section (or the
toctree's caption) that lists them, each as a link to the target's wiki page with the target's
lead in a line (analysis `gist`), so a hub page is never a dead end.

The targets are resolved as the loaders wrote them (sources._resolve: a raw path, with or
without its suffix, or a folder standing for its index); what names no compiled source is left
out. Which hub pages to render again is worked out from the targets each hub names (kept in
state.db, `offline.hub_targets`): a hub is rendered again when a document it names comes, goes or
changes, so an incremental compile gives the pages a full one gives.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# how a document's path may be written in a table of contents (Sphinx's source suffixes, mdBook's)
SUFFIXES = ("", ".rst", ".txt", ".md", ".rest", ".markdown", ".mdx")
# the file that stands for a folder a table of contents names
FOLDER_PAGES = ("index", "README", "readme", "Index")
LEAD_CHARS = 100  # a target's lead as its hub lists it


@dataclass(frozen=True)
class HubEntry:
    target: str  # the raw path of the document named
    title: str
    page: str  # its wiki page
    lead: str
    line: int  # where the hub lists it
    group: str | None  # the caption of the toctree that lists it


def resolve(target: str, known: Mapping[str, Any]) -> str | None:
    """The compiled source a table of contents' target names: the path as written, with a
    source suffix, or the page that stands for the folder it names."""
    base = target.rstrip("/")
    for suffix in SUFFIXES:
        if base + suffix in known:
            return base + suffix
    for name in FOLDER_PAGES:
        for suffix in SUFFIXES[1:]:
            candidate = f"{base}/{name}{suffix}"
            if candidate in known:
                return candidate
    return None


def entries(source: str, toc: Iterable[Any], docs: Mapping[str, Any], gist_of: Callable[[str], str]) -> list[HubEntry]:
    """What a hub (`source`) lists, in its order: each toc row ([target, title, line, group])
    that names another compiled source, once."""
    out: list[HubEntry] = []
    seen: set[str] = {source}
    for row in toc:
        if not isinstance(row, (list, tuple)) or not row:
            continue
        target = resolve(str(row[0]), docs)
        if target is None or target in seen:
            continue
        seen.add(target)
        doc = docs[target]
        given = str(row[1]) if len(row) > 1 and row[1] else ""
        line = int(row[2]) if len(row) > 2 and isinstance(row[2], int) else 0
        group = str(row[3]) if len(row) > 3 and row[3] else None
        out.append(HubEntry(target, given or doc.title, doc.page, _line_of(gist_of(target)), line, group))
    return out


def _line_of(text: str) -> str:
    """A lead in at most LEAD_CHARS: its first sentence when that fits, else cut at a word."""
    text = " ".join(text.split())
    if len(text) <= LEAD_CHARS:
        return text
    cut = text[: LEAD_CHARS - 1]
    end = cut.rfind(". ")
    return cut[: end + 1] if end >= LEAD_CHARS // 3 else cut.rsplit(" ", 1)[0] + "…"


def moved(hubs: Mapping[str, list[str]], changed: set[str]) -> set[str]:
    """The hubs that name a document that came, went or changed."""
    if not changed:
        return set()
    keys: set[str] = set()
    for path in changed:
        stem, _ = posixpath.splitext(path)
        keys.update((path, stem))
        if posixpath.basename(stem) in FOLDER_PAGES:
            keys.add(posixpath.dirname(path))
    return {hub for hub, targets in hubs.items() if any(t.rstrip("/") in keys for t in targets)}


__all__ = ["HubEntry", "entries", "moved", "resolve"]

"""Context packs: for an agent that cannot call tools, the wiki's best material for a task,
within a token budget, as one Markdown document to paste into a prompt.

A pack holds an excerpt of index.md (its header and the catalog lines that match the
query) and then the best pages, whole when they fit, else their best passage. Every
item says where it lives and how fresh it is: the page's `updated` date, and `stale`
when a raw source it was compiled from changed or vanished since.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

from .workspace import Workspace

CHARS_PER_TOKEN = 4  # a rough, conservative estimate for English and code
INDEX_SHARE = 0.2  # at most this share of the budget goes to the index excerpt


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


@dataclass(frozen=True)
class ContextItem:
    path: str
    title: str
    kind: str
    updated: str | None
    stale: bool
    whole: bool  # the full page, or only its best passage
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "kind": self.kind, "updated": self.updated,
                "stale": self.stale, "whole": self.whole, "tokens": self.tokens, "text": self.text}


@dataclass(frozen=True)
class ContextPack:
    query: str
    budget: int
    index_excerpt: str
    items: tuple[ContextItem, ...] = field(default_factory=tuple)
    left_out: tuple[str, ...] = ()  # matching paths that did not fit the budget

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.render())

    def render(self) -> str:
        parts = [f"# Context from the wiki for: {self.query}\n",
                 "Paths are relative to the workspace root. Pages in wiki/ are compiled summaries that "
                 "cite raw/ sources by line; `stale` means a source changed since the page was compiled.\n"]
        if self.index_excerpt:
            parts.append("## From index.md\n\n" + self.index_excerpt.strip() + "\n")
        for item in self.items:
            fresh = f"updated {item.updated}" if item.updated else "date unknown"
            if item.stale:
                fresh += ", STALE: a source changed since this page was compiled"
            scope = "" if item.whole else ", best passage only"
            parts.append(f"## {item.path} ({item.kind}, {fresh}{scope})\n\n{item.text.strip()}\n")
        if self.left_out:
            parts.append("## Also relevant (did not fit)\n\n" + "\n".join(f"- {p}" for p in self.left_out) + "\n")
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "budget": self.budget, "tokens": self.tokens,
                "index_excerpt": self.index_excerpt, "items": [i.to_json() for i in self.items],
                "left_out": list(self.left_out), "text": self.render()}


def _index_excerpt(ws: Workspace, terms: set[str], budget_chars: int) -> str:
    """The entries of index.md (a page's line, or one link of a group's line of pages) that
    mention the query's words, most matching first: where the map points for this question."""
    from .search import analyzer

    try:
        text = (ws.wiki / "index.md").read_text(encoding="utf-8")
    except OSError:
        return ""
    from .pages import split_front_matter

    _, body, _ = split_front_matter(text)
    ana = analyzer()
    scored = []
    for n, line in enumerate(body.splitlines()):
        if "](" not in line or line.startswith(("Conventions", "Catalog:")):
            continue
        items = [line[2:]] if line.startswith("- ") else line.split(": ", 1)[-1].split(" · ")
        for k, item in enumerate(items):
            hits = len({t.text for t in ana(item)} & terms)
            if hits:
                scored.append((-hits, n, k, item.strip()))
    out = ""
    for _, _, _, item in sorted(scored)[:40]:
        line = f"- {item}"
        if len(out) + len(line) + 1 > budget_chars:
            break
        out += ("\n" if out else "") + line
    return out


def freshness(ws: Workspace, path: str, text: str) -> tuple[str | None, bool]:
    """(updated date, stale?) for a wiki page or a raw file."""
    if path.startswith("raw/"):
        try:
            mtime = (ws.root / path).stat().st_mtime
        except OSError:
            return None, False
        return dt.datetime.fromtimestamp(mtime, dt.UTC).date().isoformat(), False
    from .pages import FrontMatterError, loads_page

    try:
        page = loads_page(path, text)
    except FrontMatterError:
        return None, False
    updated = str(page.meta.get("updated")) if page.meta.get("updated") else None
    stale = False
    sha = page.meta.get("source_sha256")
    if page.kind == "source" and sha and page.sources:
        raw = ws.root / page.sources[0]
        try:
            stale = hashlib.sha256(raw.read_bytes()).hexdigest() != str(sha)
        except OSError:
            stale = True  # the source is gone
    elif page.sources:
        stale = any(not (ws.root / s).exists() for s in page.sources if s.startswith("raw/"))
    return updated, stale


def build_context(ws: Workspace, query: str, budget: int = 8000, *, candidates: int = 12) -> ContextPack:
    """The best material for `query` within about `budget` tokens."""
    from .errors import UsageError
    from .search import parse_query, search_passages

    if budget < 200:
        raise UsageError(f"--budget {budget} is too small for a useful pack; give at least 200 tokens")
    query = " ".join(query.split())
    if not query:
        raise UsageError("empty query; say what the context is for, e.g. wikimem context \"build the toolchain\"")
    terms = set(parse_query(query).terms)
    excerpt = _index_excerpt(ws, terms, int(budget * INDEX_SHARE) * CHARS_PER_TOKEN)
    pack = ContextPack(query, budget, excerpt)
    used = pack.tokens
    items: list[ContextItem] = []
    left_out: list[str] = []
    for p in search_passages(ws, query, limit=candidates):
        hit = p.hit
        try:
            full = (ws.root / hit.path).read_text(encoding="utf-8", errors="replace") if not hit.path.endswith(".pdf") else p.text
        except OSError:
            continue
        updated, stale = freshness(ws, hit.path, full)
        if hit.path.startswith("wiki/"):
            # the item header already gives path, kind and freshness: spare the front matter's tokens
            from .pages import split_front_matter

            full = split_front_matter(full)[1].strip("\n") + "\n"
        overhead = estimate_tokens(f"## {hit.path} ({hit.kind}, updated 0000-00-00, best passage only)\n\n") + 2
        for text, whole in ((full, True), (p.text or hit.snippet, False)):
            cost = estimate_tokens(text) + overhead
            if used + cost <= budget:
                items.append(ContextItem(hit.path, hit.title, hit.kind, updated, stale, whole, text))
                used += cost
                break
        else:
            left_out.append(hit.path)
    pack = ContextPack(query, budget, excerpt, tuple(items), tuple(left_out))
    # the list of left-out paths costs tokens too: drop from its end until the pack fits
    while left_out and pack.tokens > budget:
        left_out.pop()
        pack = ContextPack(query, budget, excerpt, tuple(items), tuple(left_out))
    return pack

"""Context packs: for an agent that cannot call tools, the wiki's best material for a task,
within a token budget, as one Markdown document to paste into a prompt.

A pack is built the way a careful reader would brief someone: the passages that answer
first, most relevant first, each with the line it sits on (path#L12) so it can be cited;
then, while the budget lasts, the whole wiki pages behind the best of them (a timeline, a
concept's article); last, the entries of index.md that point at more. Results that score
far below the best are left out rather than padded in. Every item says how fresh it is:
the page's `updated` date, and `stale` when a raw source it was compiled from changed or
vanished since. The budget counts what is printed, with an estimate that errs high.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import UnsafePath, UsageError
from .links import LINK_TARGET
from .pages import FrontMatterError, loads_page, split_front_matter
from .search import analyzer, make_snippet, parse_query, search_passages
from .workspace import Workspace, open_checked, read_owned

INDEX_SHARE = 0.1  # at most this share of the budget goes to the index entries
RELEVANT_SHARE = 0.3  # a result scoring below this share of the best one is not printed
PAGES = 2  # whole wiki pages added after the passages, when the budget allows
PASSAGE_CHARS = 900  # a passage longer than this is given as its best sentences
READ_LIMIT = 8_000_000  # bytes of one file read for a pack (a pack is a few thousand tokens)

_PIECES = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """Tokens as a model's tokenizer counts them, estimated high: a word is a token, a long
    one a token per 6 characters, each punctuation mark one (Markdown and code are mostly
    punctuation, where four characters a token undercounts)."""
    count = 0
    for m in _PIECES.finditer(text):
        n = m.end() - m.start()
        count += 1 if n <= 6 else (n + 5) // 6
    return count


@dataclass(frozen=True)
class ContextItem:
    path: str
    title: str
    kind: str
    updated: str | None
    stale: bool
    whole: bool  # the full page, or one passage of it
    text: str
    line: int | None = None  # the passage's first line (#L), for a passage
    anchor: str = "L"

    @property
    def target(self) -> str:
        return f"{self.path}#{self.anchor}{self.line}" if self.line and not self.whole else self.path

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def header(self) -> str:
        fresh = f"updated {self.updated}" if self.updated else "date unknown"
        if self.stale:
            fresh += ", STALE: a source changed since this page was compiled"
        return f"### {self.target} ({self.kind}, {fresh})"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "target": self.target, "line": self.line, "title": self.title,
                "kind": self.kind, "updated": self.updated, "stale": self.stale, "whole": self.whole,
                "tokens": self.tokens, "text": self.text}


@dataclass(frozen=True)
class ContextPack:
    query: str
    budget: int
    index_excerpt: str
    items: tuple[ContextItem, ...] = field(default_factory=tuple)
    left_out: tuple[str, ...] = ()  # relevant paths that did not fit the budget

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.render())

    def render(self) -> str:
        parts = [f"# Context from the wiki for: {self.query}\n",
                 "Passages that answer first, then whole pages; paths are relative to the workspace "
                 "root, #L gives the line. wiki/ pages are compiled summaries that cite raw/ sources.\n"]
        passages = [i for i in self.items if not i.whole]
        pages = [i for i in self.items if i.whole]
        if passages:
            parts.append("## Passages, most relevant first\n")
            parts += [f"{i.header()}\n\n{i.text.strip()}\n" for i in passages]
        if pages:
            parts.append("## Whole pages\n")
            parts += [f"{i.header()}\n\n{i.text.strip()}\n" for i in pages]
        if self.index_excerpt:
            parts.append("## Where index.md points for this\n\n" + self.index_excerpt.strip() + "\n")
        if self.left_out:
            parts.append("## Also relevant (did not fit)\n\n" + "\n".join(f"- {p}" for p in self.left_out) + "\n")
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "budget": self.budget, "tokens": self.tokens,
                "index_excerpt": self.index_excerpt, "items": [i.to_json() for i in self.items],
                "left_out": list(self.left_out), "text": self.render()}


def _index_excerpt(ws: Workspace, terms: set[str], budget_tokens: int) -> str:
    """The entries of index.md (a page's line, or one link of a group's line of pages) that
    mention the query's words, most matching first: where the map points for this question.
    Links are given relative to the workspace root, like every other path in the pack."""

    try:
        text = read_owned(ws.wiki, ws.wiki / "index.md", limit=READ_LIMIT, single_link=True).decode("utf-8", "replace")
    except (OSError, UnsafePath):
        return ""

    _, body, _ = split_front_matter(text)

    ana = analyzer()
    entries: list[tuple[int, int, str, set[str]]] = []
    for n, line in enumerate(body.splitlines()):
        if "](" not in line or line.startswith(("Conventions", "Catalog:")):
            continue
        items = [line[2:]] if line.startswith("- ") else line.split(": ", 1)[-1].split(" · ")
        entries += [(n, k, item.strip(), {t.text for t in ana(item)}) for k, item in enumerate(items)]
    # a word on most entries (the product's name in a wiki about it) says little: weigh each by how rare it is here
    df: dict[str, int] = {}
    for *_, words in entries:
        for w in words & terms:
            df[w] = df.get(w, 0) + 1
    weight = {w: math.log((len(entries) + 1) / (c + 0.5)) for w, c in df.items()}
    scored = [(-sum(weight[w] for w in words & terms), n, k, item) for n, k, item, words in entries if words & terms]
    if not scored:
        return ""
    top = -min(scored)[0]
    out = ""
    for score, _, _, item in sorted(scored)[:12]:
        if -score < 0.5 * top:
            break
        item = _from_root(item)
        line = f"- {item}"
        if estimate_tokens(out + line) + 1 > budget_tokens:
            break
        out += ("\n" if out else "") + line
    return out


def _from_root(item: str) -> str:
    """index.md's links are relative to wiki/: make them workspace paths."""

    def rooted(m: re.Match[str]) -> str:
        target = m.group(1)
        if not target or target.startswith(("http:", "https:", "/", "#")):
            return m.group(0)  # a web address or an anchor: not a path in wiki/
        return "](" + posixpath.normpath("wiki/" + target) + ")"

    return LINK_TARGET.sub(rooted, item)


def freshness(ws: Workspace, path: str, text: str) -> tuple[str | None, bool]:
    """(updated date, stale?) for a wiki page or a raw file."""
    if path.startswith("raw/"):
        try:
            mtime = (ws.root / path).stat().st_mtime
        except OSError:
            return None, False
        return dt.datetime.fromtimestamp(mtime, dt.UTC).date().isoformat(), False

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
    """The best material for `query` within `budget` tokens (as estimate_tokens counts them)."""

    if budget < 200:
        raise UsageError(f"--budget {budget} is too small for a useful pack; give at least 200 tokens")
    query = " ".join(query.split())
    if not query:
        raise UsageError("empty query; say what the context is for, e.g. wikimem context \"build the toolchain\"")
    parsed = parse_query(query)
    found = search_passages(ws, query, limit=candidates)
    best = found[0].hit.score if found else 0.0
    relevant = [p for p in found if p.hit.score >= RELEVANT_SHARE * best]
    texts: dict[str, str] = {}
    fresh: dict[str, tuple[str | None, bool]] = {}

    def page_text(path: str, fallback: str) -> str:
        if path not in texts:
            try:
                if path.endswith(".pdf"):
                    texts[path] = fallback
                else:  # a regular file with one link, as every read served to an agent
                    with open_checked(ws.root / path, path, single_link=True) as handle:
                        texts[path] = handle.read(READ_LIMIT).decode("utf-8", "replace")
            except (OSError, UnsafePath):
                texts[path] = fallback
            fresh[path] = freshness(ws, path, texts[path])
        return texts[path]

    items: list[ContextItem] = []
    left_out: list[str] = []
    index_budget = int(budget * INDEX_SHARE)
    used = estimate_tokens(ContextPack(query, budget, "").render()) + 12  # headers of the sections

    def add(item: ContextItem) -> bool:
        nonlocal used
        cost = estimate_tokens(item.header()) + item.tokens + 2
        if used + cost > budget - index_budget:
            return False
        items.append(item)
        used += cost
        return True

    for p in relevant:
        hit = p.hit
        page_text(hit.path, p.text)
        text = p.text or hit.snippet
        if len(text) > PASSAGE_CHARS:
            text = make_snippet(text, set(parsed.terms), [], width=PASSAGE_CHARS // 2)[0]
        updated, stale = fresh[hit.path]
        if not add(ContextItem(hit.path, hit.title, hit.kind, updated, stale, False, text, p.line, p.anchor)):
            # a shorter passage of it may still fit: its best sentences
            if not add(ContextItem(hit.path, hit.title, hit.kind, updated, stale, False, hit.snippet, p.line,
                                   p.anchor)):
                left_out.append(p.target)
    # then the whole pages behind the best results: a timeline, a concept's article, a source page
    shown = 0
    for p in relevant:
        if shown >= PAGES or not p.hit.path.startswith("wiki/") or p.hit.score < 0.5 * best:
            continue

        body = split_front_matter(page_text(p.hit.path, p.text))[1].strip("\n") + "\n"
        updated, stale = fresh[p.hit.path]
        if add(ContextItem(p.hit.path, p.hit.title, p.hit.kind, updated, stale, True, body)):
            shown += 1
    excerpt = _index_excerpt(ws, set(parsed.terms), min(index_budget + max(0, budget - index_budget - used), budget))
    pack = ContextPack(query, budget, excerpt, tuple(items), tuple(left_out))
    # what is printed is what counts: drop from the end until the pack fits
    while pack.tokens > budget and (left_out or excerpt or items):
        if left_out:
            left_out.pop()
        elif excerpt:
            excerpt = excerpt.rsplit("\n", 1)[0] if "\n" in excerpt else ""
        else:
            items.pop()
        pack = ContextPack(query, budget, excerpt, tuple(items), tuple(left_out))
    return pack

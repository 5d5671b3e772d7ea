"""Timelines: a page per fact that changed, current value first, written by code.

From every source's facts (facts.py) this groups the statements of one fact of one series (a
product's releases), orders them by release (version, then date), and
writes `wiki/facts/<slug>.md` for each fact whose value changed: the current value at the top
with the statement that gives it and what it replaced, then a table of every statement,
newest first, each quoted and cited. A statement from another series never supersedes one
of this series; plans ("1.19 will require ...") are listed as plans, never as current.

Why pages of their own rather than a section of concept pages: a fact's subject ("minimum
macOS version") is rarely a concept page, search must be able to rank the timeline first for
"what is the current ...", and index.md links them as a group. Concept pages of the subject and
the source pages that state a fact link their timeline.

Timeline pages are generated like index.md: rewritten from the sources on every compile that
changes anything, deterministic, and only written when their bytes change.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .facts import Fact, compatible, label
from .pages import Page, certify, escape_link_text, inert, relative_link, slugify

if TYPE_CHECKING:
    from .state import State
    from .workspace import Workspace

FOLDER = "facts"
MAX_ROWS = 40


@dataclass
class Timeline:
    series: str
    key: tuple[str, str, str]
    title: str
    slug: str
    rows: list[Fact]  # outcomes, newest first
    plans: list[Fact]
    current: Fact
    replaced: Fact | None

    @property
    def page(self) -> str:
        return f"{FOLDER}/{self.slug}.md"


def _release(f: Fact) -> tuple[Any, ...]:
    """Newest first: by the release the statement belongs to, then its date; a statement that
    names no release (a documentation page) sorts as the oldest here (see current())."""
    return (1 if f.subject else 0, f.subject or (), f.date or "", -f.line)


def _value_text(f: Fact) -> str:
    text = " ".join(f.value_text.split())
    if f.change == "drop":
        return f"drops {text}"
    if f.change == "last":
        return f"last release supporting {text}"
    if f.change == "from":
        return ".".join(map(str, f.value)) + " (was " + ".".join(map(str, f.old)) + ")"
    return text


def build(facts: Iterable[Fact]) -> list[Timeline]:
    groups: dict[tuple[str, tuple[str, str, str]], list[Fact]] = defaultdict(list)
    for f in facts:
        groups[(f.series, f.key)].append(f)
    out: list[Timeline] = []
    used: set[str] = set()
    for (series, key), group in sorted(groups.items()):
        unique = list({(f.source, f.line, f.value, f.change): f for f in group}.values())  # one statement once
        outcomes = sorted((f for f in unique if not f.plan), key=_release, reverse=True)
        plans = sorted((f for f in unique if f.plan), key=_release, reverse=True)
        # a plan is shown as its sentence: one sentence once, even when it states two values
        plans = list({(f.source, f.line): f for f in plans}.values())
        if not outcomes:
            continue
        values = {f.value for f in outcomes}
        changed = len(values) > 1 or any(f.change for f in outcomes)
        if not changed or len({f.source for f in group}) < 1:
            continue
        current = _current(key, outcomes)
        # what the current value replaced: the newest value of an earlier release (or, for a
        # documentation page, of any release) that differs from it
        replaced = next((f for f in outcomes if f is not current and f.change != "last"
                         and not compatible(f.value, current.value)
                         and (current.subject is None or (f.subject is not None and f.subject < current.subject))),
                        None)
        said = label(key, current)
        # a capital for a phrase ("Minimum macOS version"), not inside a name spelled with one ("jQuery")
        shown = said[:1].upper() + said[1:] if said[:1].islower() and not any(
            c.isupper() for c in said.split(" ", 1)[0]) else said
        title = f"{shown} ({series or 'all sources'})"
        slug = slugify(f"{series} {said}")
        while slug in used:
            slug += "-2"
        used.add(slug)
        out.append(Timeline(series, key, title, slug, outcomes[:MAX_ROWS], plans[:10], current, replaced))
    return out


def _current(key: tuple[str, str, str], outcomes: list[Fact]) -> Fact:
    """The current value: what the newest release states (its own statement of the value
    rather than a note that it dropped one). A page that names no release (the documentation
    of the product as it is) is current when it agrees with, or moves past, what the newest
    release said; it never brings back an older value."""
    newest = outcomes[0]
    same_release = [f for f in outcomes if f.subject == newest.subject and f.subject is not None]
    stated = next((f for f in same_release if not f.change), None)
    pick = stated or next((f for f in outcomes if f.change != "last"), newest)
    for f in outcomes:
        if f.subject is None and f.date is None and not f.change and pick.subject is not None and key[0] == "min":
            if f.value > pick.value or (f.value == pick.value and not pick.change):
                return f
    return pick


# --- rendering ------------------------------------------------------------------------------


def _where(f: Fact) -> str:
    return f"{f.source.rsplit('/', 1)[-1]}, line {f.line}"


def _cite(page: str, f: Fact) -> str:
    return f"{relative_link(page, '../' + f.source)}#L{f.line}"


def _when(f: Fact, inside: bool = False) -> str:
    """The release a fact belongs to: "3.1.0 (2024-11-13)"; `inside` parentheses already,
    "3.1.0, 2024-11-13"."""
    if f.subject:
        version = ".".join(map(str, f.subject))
        if not f.date:
            return version
        return f"{version}, {f.date}" if inside else f"{version} ({f.date})"
    return f.date or "current documentation"


def render(t: Timeline, pages_of: dict[str, str]) -> str:
    """The timeline page; `pages_of` maps raw paths to their source pages (for links)."""
    page = t.page

    def quote(f: Fact) -> str:
        return f'"{inert(" ".join(f.sentence.split()))}" ([{escape_link_text(_where(f))}]({_cite(page, f)}))'

    lines = [f"# {escape_link_text(t.title)}", ""]
    now = f"Current: **{inert(_value_text(t.current))}**, {_when(t.current)}: {quote(t.current)}."
    if t.replaced is not None:
        if t.replaced.change == "drop":
            now += f" It replaced {inert(' '.join(t.replaced.value_text.split()))}, dropped in {_when(t.replaced)}."
        else:
            now += f" It replaced {inert(_value_text(t.replaced))} ({_when(t.replaced, inside=True)})."
    lines += [now, "", "## Every statement, newest first", "", "| value | release | statement |", "|---|---|---|"]
    for f in t.rows:
        lines.append(f"| {inert(_value_text(f)).replace('|', '/')} | {_when(f)} | {quote(f).replace('|', '/')} |")
    if t.plans:
        lines += ["", "## Plans", ""]
        lines += [f"- for {_when(f)}: {quote(f)}" for f in t.plans]
    sources = sorted({f.source for f in [*t.rows, *t.plans]})
    linked = [f"[{escape_link_text(s.rsplit('/', 1)[-1])}]({relative_link(page, pages_of[s])})" for s in sources
              if s in pages_of]
    if linked:
        lines += ["", "## Sources", "", " · ".join(linked)]
    meta = {"title": t.title, "kind": "fact", "sources": sources, "aliases": [],
            "description": f"currently {_value_text(t.current)} ({_when(t.current, inside=True)})",
            # where the current value is stated: search puts that passage next to this page
            "current": f"{t.current.source}#L{t.current.line}" if t.current.line else t.current.source}
    # written by code, not a backend: certified as wikimem's all the same (pages.certify), so a
    # copy pulled from a teammate merges as wikimem's own pages do
    return certify(Page(page, meta, "\n".join(lines) + "\n").dumps(), f"wikimem:{__version__}")


# --- the facts of every source, and the pages -------------------------------------------------------


def facts_of(ws: Workspace, state: State, sources: dict[str, tuple[str, str]]) -> list[Fact]:
    """Every current source's facts ({raw path: (sha256, collection)}), from state.db's cache;
    a source never seen is read once (the offline backend fills the cache as it analyses)."""
    from .analysis import split_sentences
    from .facts import extract, in_series, statements_of
    from .raw_tree import fact_series
    from .sources import SkipSource, load_source

    series_of = fact_series(sources)
    out: list[Fact] = []
    known = state.facts_with(sha for sha, _ in sources.values())
    for path, (sha, _collection) in sorted(sources.items()):
        cached = known.get(sha)
        if cached is None:
            try:
                doc = load_source(ws.root / path, path, max_bytes=50_000_000)
                found = extract(statements_of(doc, split_sentences(doc)))
            except (SkipSource, OSError, RecursionError, ValueError):
                found = []
            cached = [f.to_json() for f in found]
            state.put_facts(sha, cached)
        for data in cached:
            fact = Fact.from_json(path, data)
            # a source whose title names no product belongs to its folder's product line, or
            # stands alone (raw_tree.fact_series)
            out.append(fact if fact.series else in_series(fact, series_of[path]))
    return out


def current(ws: Workspace, state: State, sources: dict[str, tuple[str, str]]) -> list[Timeline]:
    """The timelines of these sources, built once per compile (per State): the backend links
    them from pages, the compiler writes them (at 10k sources each build took 0.2 s)."""
    key = sorted(sources.items())
    memo = state.memo.get("timelines")
    if memo is not None and memo[0] == key:
        return memo[1]
    lines = build(facts_of(ws, state, sources))
    state.memo["timelines"] = (key, lines)
    return lines


def write(ws: Workspace, state: State, sources: dict[str, tuple[str, str]], pages_of: dict[str, str]) -> list[tuple[str, str]]:
    """Write wiki/facts/ from the sources' facts; remove timelines no longer there. Returns changes.
    Written without a fsync each (22 waits on the disk in a first compile of the Sphinx trees):
    the compile's one sync makes them durable with its pages, before state.db records them."""
    from .workspace import owned, read_owned, remove_owned, write_changed

    timelines = current(ws, state, sources)
    folder = ws.wiki / FOLDER
    owned(ws.wiki, folder, folder=True)  # a link there would take these writes and deletes elsewhere
    wanted: dict[str, str] = {t.page: render(t, pages_of) for t in timelines}
    changes = write_changed(ws.wiki, wanted, durable=False)
    if folder.is_dir():
        for file in sorted(folder.glob("*.md")):
            rel = f"{FOLDER}/{file.name}"
            if rel in wanted or file.name.startswith("index") or file.is_symlink():
                continue
            # only a timeline goes: a person's own note in facts/ is theirs
            try:
                head = read_owned(ws.wiki, file, limit=4096)
            except OSError:
                continue
            if _is_timeline(head) and remove_owned(ws.wiki, file):
                changes.append((rel, "removed"))
    return changes


def _is_timeline(head: bytes) -> bool:
    """Whether a file in facts/ opens as the timelines wikimem writes do (front matter with
    `kind: fact`), by its first bytes."""
    if not head.startswith(b"---\n"):
        return False
    end = head.find(b"\n---\n")
    return b"\nkind: fact\n" in head[: end + 1 if end >= 0 else len(head)]


def links_by_source(timelines: list[Timeline]) -> dict[str, list[Timeline]]:
    """The timelines each raw source states a fact of (its page links them)."""
    out: dict[str, list[Timeline]] = defaultdict(list)
    for t in timelines:
        for source in sorted({f.source for f in [*t.rows, *t.plans]}):
            out[source].append(t)
    return out


def subject_words(t: Timeline) -> set[str]:
    return set(re.findall(r"[a-z0-9][\w.+-]*", t.key[1].lower()))


__all__ = ["FOLDER", "Timeline", "build", "facts_of", "links_by_source", "render", "write", "json", "Path"]

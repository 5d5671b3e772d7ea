"""`wikimem query`: answer a question from the wiki, with citations; optionally file the answer.

Offline (the default backend) the answer is the best passages search finds, each
quoted with a citation to the page or raw line it came from: no model, no
network, nothing invented. A backend that writes prose (anthropic) plugs in by
building an `Answer` from the same passages (see `gather`).

`--save` files the answer as a page under wiki/answers/ (kind: answer, with the
raw files it draws on in `sources`), appends a `query` entry to log.md and
regenerates index.md, all under the writer lock.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any

from . import history, log_page
from .backends import resolve
from .backends.answer import synthesize
from .config import Settings
from .errors import UnsafePath, UsageError
from .links import LINK_TEXT_TARGET
from .ownership import PageWrite, persons_page, write_pages
from .pages import (
    FrontMatterError,
    Page,
    certify,
    guard_page,
    loads_page,
    relative_link,
    slugify,
    stamp,
)
from .search import search_passages
from .workspace import Workspace, atomic_write, read_owned, writer_lock

PASSAGES = 5


@dataclass(frozen=True)
class Cited:
    """One passage of the answer: what it says and where it comes from."""

    path: str  # workspace-relative file the passage was found in
    title: str
    kind: str
    score: float
    quote: str
    line: int | None
    anchor: str  # "L" or "page="
    sources: tuple[str, ...] = ()  # raw files behind it (the file itself for raw hits)

    @property
    def target(self) -> str:
        """`raw/x.md#L12`: the path with its line or page anchor."""
        return f"{self.path}#{self.anchor}{self.line}" if self.line else self.path

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "kind": self.kind, "score": round(self.score, 4),
                "quote": self.quote, "line": self.line, "citation": self.target, "sources": list(self.sources)}


@dataclass(frozen=True)
class Answer:
    question: str
    text: str  # Markdown; links are workspace-relative (rewritten when saved into wiki/answers/)
    passages: tuple[Cited, ...]
    sources: tuple[str, ...]  # raw files the answer draws on
    backend: str = "offline"
    saved: str | None = None  # wiki/answers/<slug>.md once filed (.wikimem/proposed/... when `kept`)
    usage: dict[str, int] = field(default_factory=dict)
    kept: str | None = None  # wiki/answers/<slug>.md, kept as a person edited it

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.text, "backend": self.backend,
                "passages": [p.to_json() for p in self.passages], "sources": list(self.sources),
                "saved": self.saved, "kept": self.kept, "usage": self.usage}


def _page_sources(ws: Workspace, path: str) -> tuple[str, ...]:
    try:
        page = loads_page(path, (ws.root / path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return ()
    return tuple(s for s in page.sources if s.startswith("raw/"))


_CITED_IN_TEXT = re.compile(r"\(([^()]+?), (?:line|page) (\d+)\)")


def gather(ws: Workspace, question: str, limit: int = PASSAGES) -> list[Cited]:
    """The best passages for a question, each with the line it sits on and its raw sources."""

    out: list[Cited] = []
    for p in search_passages(ws, question, limit=limit + 1):
        hit = p.hit
        if hit.kind == "answer" and hit.title == question:
            continue  # an earlier answer to this very question: answer afresh from the material
        if len(out) == limit:
            break
        # search's snippet is already the sentence that answers, whole (with the one it refers
        # back to, or the value it names close behind); a timeline's says what is current
        quote = hit.snippet
        sources: tuple[str, ...]
        if hit.kind == "raw":
            sources = (hit.path,)
        else:
            # pages quote their sources as "... (notes-1.23.md, line 582)": name the raw files behind
            # the quoted words, not every file the page draws on
            behind = _page_sources(ws, hit.path)
            by_name: dict[str, list[str]] = {}
            for raw in behind:
                by_name.setdefault(posixpath.basename(raw), []).append(raw)
            cited = [by_name[m.group(1)][0] for m in _CITED_IN_TEXT.finditer(quote)
                     if len(by_name.get(m.group(1), [])) == 1]
            sources = tuple(dict.fromkeys(cited)) or (behind[:1] if hit.kind == "source" else ())
        out.append(Cited(hit.path, hit.title, hit.kind, hit.score, quote, p.line, p.anchor, sources))
    return out


def offline_text(question: str, passages: list[Cited]) -> str:
    if not passages:
        return ("Nothing in the wiki or its sources matches this question. Try other words, or add a "
                "source that covers it to raw/.")
    best = passages[0]
    # the first prose line doubles as the page's one-line description in index.md
    lines = [f"Best match, from [{best.title}]({best.target}): {best.quote}", ""]
    lines.append("All passages that match, most relevant first (offline backend: quoted, not summarized):")
    lines.append("")
    for n, c in enumerate(passages, 1):
        label = f"{posixpath.basename(c.path)}, {'page' if c.anchor.startswith('page') else 'line'} {c.line}" \
            if c.line else posixpath.basename(c.path)
        lines.append(f"{n}. **{c.title}** ([{label}]({c.target}))")
        lines.append(f"   > {c.quote}")
    return "\n".join(lines)


def answer(ws: Workspace, settings: Settings, question: str, save: bool = False) -> Answer:
    """Answer a question from the wiki; `save` files it under wiki/answers/."""

    question = " ".join(question.split())
    if not question:
        raise UsageError("empty question; ask something, e.g. wikimem query \"what is ownership\"")
    passages = gather(ws, question)
    sources = tuple(dict.fromkeys(s for c in passages for s in c.sources))

    if resolve(settings.backend, settings)[0] == "anthropic" and passages:
        # a synthesized answer from the same passages; with nothing found there is nothing to pay for

        text, usage = synthesize(ws, settings, question, passages)
        result = Answer(question, text, tuple(passages), sources, backend="anthropic", usage=usage)
    else:
        result = Answer(question, offline_text(question, passages), tuple(passages), sources, backend="offline")
    if save:
        result = save_answer(ws, settings, result)
    return result


def _relink(text: str, page: str) -> str:
    """Workspace-relative link targets -> relative to the answer page inside wiki/."""

    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        path, _, frag = target.partition("#")
        if path.startswith("wiki/"):
            rel = relative_link(page, path.removeprefix("wiki/"))
        elif path.startswith("raw/"):
            rel = relative_link(page, "../" + path)
        else:
            return m.group(0)
        return f"[{m.group(1)}]({rel}{'#' + frag if frag else ''})"

    return LINK_TEXT_TARGET.sub(fix, text)


def save_answer(ws: Workspace, settings: Settings, result: Answer, *, wait: float = 5.0) -> Answer:
    """File the answer as wiki/answers/<slug>.md, log it, regenerate the index and (in a git
    work tree) commit exactly those files as one operation.

    An answer page is a page like the others: what is written passes the guard every page
    does (pages.guard_page: no live HTML, no link but relative and http(s)/mailto, whatever
    the sources or a model said), and the same question asked again replaces the page only
    while it is as wikimem wrote it. Once a person edited it, it is kept, and wikimem's new
    answer goes to .wikimem/proposed/answers/ (as a compile's proposals do)."""

    with writer_lock(ws, wait=wait, holder="wikimem query --save"):
        base = slugify(result.question, max_length=60)
        rel = f"answers/{base}.md"
        n = 2
        # the same question again updates its page; another question never overwrites one
        while (ws.wiki / rel).exists() and not _same_question(ws, rel, result.question):
            rel = f"answers/{base}-{n}.md"
            n += 1
        target = ws.wiki / rel
        existed = target.exists()
        meta: dict[str, Any] = {"title": result.question, "kind": "answer", "sources": list(result.sources),
                                "question": result.question, "backend": result.backend}
        body = f"# {result.question}\n\n{_relink(result.text, rel)}\n"
        if result.passages:
            body += "\n## Found in\n\n" + "\n".join(
                f"- [{c.title}]({_relink_path(rel, c.path)})" for c in result.passages) + "\n"
        writer = f"query:{result.backend}"
        # certified as every page wikimem writes, so any copy says whether a person edited it
        text = certify(guard_page(Page(rel, meta, body).dumps()), writer)
        disk = read_owned(ws.wiki, target) if existed else None
        kept = disk is not None and persons_page(disk, None)
        if kept:
            # a person's page (or one that does not certify itself): theirs to keep
            atomic_write(ws.state_dir / "proposed" / rel, stamp(text, None), base=ws.state_dir)
        else:
            data = stamp(text, disk.decode("utf-8", "replace") if disk is not None else None).encode("utf-8")
            # journalled as every writer's pages are (ownership.write_pages)
            write_pages(ws, [PageWrite(rel, data, "answer")], writer="query")

        def entry(index: list[tuple[str, str]]) -> list[log_page.LogEntry]:
            if kept:
                lines = log_page.list_lines("kept (edited by a person)", [rel])
                lines += log_page.list_lines("proposed", [f".wikimem/proposed/{rel}"])
            else:
                lines = log_page.list_lines("updated" if existed else "created", [rel])
            lines += log_page.list_lines("sources", list(result.sources))
            lines += log_page.list_lines("index", [p for p, _ in index])
            lines.append(f"- backend: {result.backend}")
            return [log_page.LogEntry("query", result.question, lines)]

        history.finish(ws, settings, operation="query", entries=entry, paths=[] if kept else [rel])
    if kept:
        return replace(result, saved=f".wikimem/proposed/{rel}", kept="wiki/" + rel)
    return replace(result, saved="wiki/" + rel)


def _relink_path(page: str, path: str) -> str:
    return relative_link(page, path.removeprefix("wiki/") if path.startswith("wiki/") else "../" + path)


def _same_question(ws: Workspace, rel: str, question: str) -> bool:
    try:
        page = loads_page(rel, read_owned(ws.wiki, ws.wiki / rel).decode("utf-8"))
    except (OSError, UnicodeDecodeError, FrontMatterError, UnsafePath):
        return False
    return str(page.meta.get("question") or page.meta.get("title") or "") == question

"""The shape checks the anthropic backend runs on a model's pages before it accepts them: a
source page's title and `Source:` line, a concept page that is an article (a lead, a few key
points, no section per source, under its size cap), and the links a page makes."""

from __future__ import annotations

import logging
import posixpath
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..links import LINK_TEXT, link_targets
from ..pages import FrontMatterError, split_front_matter
from .memory import ROOT

if TYPE_CHECKING:
    from .anthropic import SourceText

log = logging.getLogger("wikimem.anthropic")


# the shape of a concept page (docs/compile.md, "What a compile writes"): an article with a
# handful of key points, not a concordance; the checks hand these limits back to the model
MAX_KEY_POINTS = 8


MAX_CONCEPT_BYTES = 20_000


def page_links(text: str) -> list[str]:
    """Targets of the Markdown links in a page body (images and web links excluded)."""
    return [t for t in link_targets(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


def resolve_link(page: str, target: str) -> tuple[str, str, str]:
    """(where, path, fragment): where is wiki | raw | outside; path relative to wiki/ or the workspace."""
    path, _, fragment = target.partition("#")
    path = urllib.parse.unquote(path)
    joined = posixpath.normpath(posixpath.join("wiki", posixpath.dirname(page), path))
    if joined.startswith("wiki/"):
        return "wiki", joined[len("wiki/") :], fragment
    if joined.startswith("raw/"):
        return "raw", joined, fragment
    return "outside", joined, fragment


@dataclass(frozen=True)
class ConceptShape:
    h1: bool  # the body opens with `# Title`
    lead: bool  # a prose paragraph between the title and the first `## ` section
    per_source: tuple[str, ...]  # section headings named after a source (its link or its title)
    key_points: int  # top-level bullets under `## Key points`
    size: int  # bytes of the body: the front matter's `sources` list is code's, the model cannot shorten it


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$")


_BULLET = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+\S")


_LABEL = re.compile(r"^\W*(?:main sources?|also called|aliases|sources?)\W*:", re.I)


def _outside_fences(body: str) -> list[str]:
    """The body's lines with fenced code blocks blanked: a `## ` inside code is not a section."""
    out: list[str] = []
    fence = ""
    for line in body.split("\n"):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            out.append("")
        elif match:
            fence = match.group(1)
            out.append("")
        else:
            out.append(line)
    return out


def _plain(text: str) -> str:
    """Markdown reduced to its words: links to their text, emphasis and code marks dropped."""
    text = LINK_TEXT.sub(r"\1", text)
    return " ".join(re.sub(r"[*_`]", "", text).split())


def _is_prose(paragraph: str) -> bool:
    """A paragraph that says something: not a label line (Main source:, Also called:) or bare links."""
    if _LABEL.match(paragraph.strip()):
        return False
    words = LINK_TEXT.sub(" ", paragraph)
    return len(re.findall(r"\w", words)) >= 10


def concept_shape(text: str, source_titles: Sequence[str] = ()) -> ConceptShape:
    """How a concept page is built, from its whole text (front matter included)."""

    try:
        body = split_front_matter(text)[1]
    except FrontMatterError:
        body = text
    lines = _outside_fences(body)
    titles = {_plain(t).casefold() for t in source_titles if _plain(t)}
    lead = False
    per_source: list[str] = []
    key_points = 0
    section = ""  # the current `## ` section, lowercased; "" before the first
    paragraph: list[str] = []
    first = next((line for line in lines if line.strip()), "")
    h1 = bool(re.match(r"^#\s+\S", first))

    def close_paragraph() -> None:
        nonlocal lead
        if paragraph and not section and _is_prose(" ".join(paragraph)):
            lead = True
        paragraph.clear()

    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            close_paragraph()
            level, title = len(heading.group(1)), re.sub(r"(?:^|[ \t])#+$", "", heading.group(2).rstrip()).strip()
            if level == 1:
                continue
            if level == 2:
                section = _plain(title).casefold() or "?"
            named = [t for t in page_links(title) if "sources/" in t or "raw/" in t] or (
                [title] if _plain(title).casefold() in titles else []
            )
            if named:
                per_source.append(title)
            continue
        if not line.strip():
            close_paragraph()
            continue
        if not section:
            paragraph.append(line)
        elif section == "key points" and _BULLET.match(line):
            key_points += 1
    close_paragraph()
    return ConceptShape(h1, lead, tuple(per_source), key_points, len(body.encode("utf-8")))


def concept_page_problems(rel: str, text: str, before: str | None, source_titles: Sequence[str]) -> list[str]:
    """What keeps a concept page this source wrote or changed from being an article.

    A new page (before is None) must have the whole shape; an existing one is held to what it
    had: the edit may not take away its title or lead, add a section per source, or add key
    points past the limit or bytes past the cap.
    """
    now = concept_shape(text, source_titles)
    was = concept_shape(before, source_titles) if before is not None else None
    shown = f"{ROOT}/{rel}"
    problems: list[str] = []
    if not now.h1 and (was is None or was.h1):
        problems.append(f"{shown} does not open with `# Title`; start the body with the concept's name as its heading")
    if not now.lead and (was is None or was.lead):
        problems.append(
            f"{shown} has no lead: right under `# Title`, before any `## ` section, write one sentence saying "
            "what it is, quoted from the source that defines it, with its citation"
        )
    # a new page may have one such section (a one-source page in the older shape reads fine); an
    # existing page may gain none: that is the appended per-source section the instructions forbid
    if len(now.per_source) > (1 if was is None else len(was.per_source)):
        problems.append(
            f"{shown} has a section per source (`## {now.per_source[-1]}`); a concept page is one article: merge "
            "what the sources say into `## Key points` (a handful, best first, no repeats) and list them on one "
            "line under `## Also mentioned in`"
        )
    if now.key_points > MAX_KEY_POINTS and (was is None or now.key_points > was.key_points):
        problems.append(
            f"{shown} has {now.key_points} key points; keep the best {MAX_KEY_POINTS} or fewer, most informative "
            "first, and drop those that repeat another"
        )
    if now.size > MAX_CONCEPT_BYTES and (was is None or now.size > was.size):
        problems.append(
            f"{shown} has {now.size // 1000} KB of text; a concept page stays well under 8 KB and never over "
            f"{MAX_CONCEPT_BYTES // 1000} KB: keep a handful of key points and name the other sources under "
            "`## Also mentioned in` instead of quoting them"
        )
    return problems


def source_page_problems(rel: str, body: str, st: SourceText) -> list[str]:
    """A source page opens with its title and says which raw file it is."""
    shown = f"{ROOT}/{rel}"
    problems: list[str] = []
    lines = _outside_fences(body)
    if not any(re.match(r"^#\s+\S", line) for line in lines):
        problems.append(f"{shown} has no `# Title`; start the body with the document's own title")
    linked = False
    for line in lines:
        if re.match(r"^\W*source\W*:", line, re.I):
            linked = linked or any(resolve_link(rel, t)[:2] == ("raw", st.path) for t in page_links(line))
    if not linked:
        name = posixpath.basename(st.path)
        problems.append(
            f"{shown} has no `Source:` line linking the raw file; add `Source: [{name}](../../{st.path})` "
            "under the lead"
        )
    return problems

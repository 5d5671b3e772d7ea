"""Pages the offline backend writes: a source page that carries its answers, and a concept page
that reads as an article.

A source page: the document's own lead, where it came from, an outline of every section (a
section that is one setting shows its default on its line), the facts a reader asks for
(definitions, defaults, requirements, limits, numbers with their subject), its tables in
compact form, a table of the other defaults it states, and its concepts.

A concept page: one sentence saying what the thing is (the definition, cited, from the source
that defines it), its main sources, a handful of key points ranked by how much they say about
it, the changes its facts went through in true version order where they carry versions,
related concepts, and a compact list of the other sources that mention it.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..analysis import (
    ABOUT,
    DEFINED,
    HEADED,
    Sentence,
    defined_term,
    entry_names,
    is_content,
    tokens,
)
from ..analysis import forget_sentences as analysis_forget
from ..lexicon import version_key
from ..links import LINK_OR_URL, LINK_TARGET, RELATIVE_LINK_OPENING
from ..naming import is_catalog
from ..pages import Page, escape_link_text, inert, relative_link, slugify
from ..patterns import lazy
from ..sources import xref
from ..templating import render
from ..words import (
    CHATTY,
    POINTER,
    REFERS_BACK,
    code_like,
    lowercase_pattern,
    narrates,
    points_forward,
    says_name,
)
from .offline_concepts import Concept, relevance
from .offline_hubs import HubEntry

KEY_POINTS = 6
QUOTED_MEMBERS = 8  # the most relevant sources a concept page reads sentences from
MAIN_MEMBERS = 3  # the sources about it (that define it) a concept page names as its main sources
CHANGES = 8
ALSO_LISTED = 12  # the most relevant first; `wikimem search` finds every mention
# the most a concept page shows: its quoted sources, its main ones and those it lists as well
SHOWN_MEMBERS = QUOTED_MEMBERS + MAIN_MEMBERS + ALSO_LISTED
RECENT_MEMBERS = 2  # the newest dated sources a concept page also reads: its changes over time


def recent(items: Sequence[Any]) -> list[Any]:
    """The newest of a concept's members (or sources) that carry a date, newest first: a page
    reads them for its changes over time, however little they say of it beside older ones."""
    return sorted((x for x in items if x.date), key=lambda x: (x.date, x.path), reverse=True)[:RECENT_MEMBERS]
TABLE_BYTES = 5_000  # the document's tables shown on its page, at most this much of them
OUTLINE_DEPTH = 2  # levels of the outline shown as nested lines; deeper ones are folded into their parent's
# A source page's outline larger than this is split into part pages (docs/compile.md, "Long
# documents"): an agent reads index.md (~3.5 KB) and a catalog (~2-3 KB) to reach a source page,
# and the whole path should stay well within 20 KB, the unit of the agents' load caps; with an
# outline of at most 4 KB the source page stays near 8 KB, and a part (a section's outline, split
# again while it is larger than this and has subsections of its own) adds a few KB more.
OUTLINE_BYTES = 4_000
# a page whose outline and key facts pass this is split into parts too: each part carries its
# sections' key facts (docs/compile.md, "Long documents")
PAGE_BYTES = 5_000
# a part page's outline and key facts, at most: the part is the last page on an agent's way to a
# section's answer, read after index.md and the source page, so it is smaller than a whole page;
# the source page's list of parts grows a line per part, which costs less than the bytes saved
PART_BYTES = 3_500
# a source page's outline lists the part pages a run of its sections links (a changelog's releases
# with parts of their own) while its lines at that level, the runs' own included, stay within this
# many bytes, so they are a step from the page
HOISTED_BYTES = 1_200
_LINK_BYTES = 40  # a link's target and a citation's "L12", as a layout counts them (_weights)
LEAD_BYTES = 120  # a listed document's lead, as a layout counts it (its gist runs to analysis.GIST_CHARS)
PART_MIN_BYTES = 500  # a section whose outline is smaller stays folded on its line: a page for it costs more than it saves

# one word boundary before the words, not one per word (a fourth of the time per sentence)
_SIGNAL = lazy(r"\d|\b(?:defaults?|requires?|minimum|maximum|must|supports?|deprecated|removed|no longer)\b",
               re.IGNORECASE)
_SIGNAL_LOW = lowercase_pattern(_SIGNAL)
# "[text](target)" left in a quote that is not an absolute link: code such as x.[](i), or
# a link the loader could not parse; escaped so it renders as text instead of a dead link


Shows = Callable[[str, str, str], str]  # a cross-reference's mark (kind, target, its text) as a page shows it


def quote_text(text: str, xrefs: Shows | None = None) -> str:
    """A quote fit for a list item: one line, no stray link syntax that would dangle, no HTML
    and no link but relative, http(s) and mailto ones (pages.inert). Its cross-references
    (sources/xref.py) are shown by `xrefs` (offline_xrefs: the title of what they name,
    linked to its page), else as the text they show alone."""
    text = " ".join(text.split())
    text = RELATIVE_LINK_OPENING.sub(lambda m: f"\\[{m.group(1)}\\](", text)
    text = inert(text.replace("[[", "[ [").replace("]]", "] ]"))
    if xref.OPEN in text:
        text = xref.replace(text, xrefs or _unlinked)
    return text


def _unlinked(kind: str, target: str, shown: str) -> str:
    return inert(shown or xref.readable(kind, target))


def citation(from_page: str, source_path: str, anchor: str, line: int, end: int = 0) -> str:
    """Relative link from a page to a line (or PDF page) of a raw file, or to the lines a
    sentence runs over (`#L12-L13`)."""
    span = f"-{anchor}{end}" if end > line and anchor == "L" else ""
    return f"{relative_link(from_page, '../' + source_path)}#{anchor}{line}{span}"


def _where(source_path: str, anchor: str, line: int) -> str:
    unit = "page" if anchor.startswith("page") else "line"
    return f"{posixpath.basename(source_path)}, {unit} {line}"


# --- source pages ------------------------------------------------------------------------------


def outline(headings: list[Any], cite: Any, defaults: dict[int, tuple[str, int]] | None = None) -> list[dict[str, Any]]:
    """Every section of the source, with a line link: three levels as nested list items, the
    sections below them folded onto their parent's line, so a long reference (a settings page
    of 200 entries) is listed whole without a deep, tall list.

    A section that is one setting carries its default there, linked to the line that states it
    (`[tab_width](...#L796) = 8`): the setting is found in its place in the document (a name
    may recur under several writers), and is listed once, not again in a table."""
    if not headings:
        return []
    defaults = defaults or {}
    top = min(h[0] for h in headings)
    items: list[dict[str, Any]] = []
    for level, text, line in headings:
        entry = {"text": escape_link_text(re.sub(r"`", "", text)), "link": cite(line), "value": ""}
        if line in defaults:
            value, at = defaults[line]
            entry["link"], entry["value"] = cite(at), f" = {value}"
        depth = level - top
        if depth < OUTLINE_DEPTH or not items:
            items.append({**entry, "indent": "  " * min(depth, OUTLINE_DEPTH - 1), "more": []})
        else:
            items[-1]["more"].append(entry)
    for item in items:
        more = item.pop("more")
        item["tail"] = item.pop("value") + (
            (": " + " · ".join(f"[{m['text']}]({m['link']}){m['value']}" for m in more)) if more else "")
    return items


def _size(items: list[dict[str, Any]]) -> int:
    """The bytes an outline's lines take on a page (as source_page.md.j2 writes them)."""
    return sum(len(i["indent"]) + len(i["text"]) + len(i["link"]) + len(i["tail"]) + 7 for i in items)


@dataclass
class Part:
    """A page of a long source's outline: one section's outline, or a run of sections."""

    slug: str
    name: str  # what it holds: a section's title, or "first – last" for a run of sections
    trail: list[str]  # the sections it sits in, outermost first (the document's title left out)
    span: str  # "its section [X](line)", or "the sections [A](line) to [B](line)", linked from the page
    lines: list[dict[str, Any]]  # its outline, its links relative to the source page
    first: int = 0  # the lines of the first and last heading it lists (a reference to a section
    last: int = 0  # in between leads to the innermost part holding it: part_holding)
    homes: set[int] = field(default_factory=set)  # the heading lines whose key facts it carries


def split_outline(headings: list[Any], cite: Any, defaults: dict[int, tuple[str, int]], stem: str,
                  doc_title: str, weights: dict[int, int] | None = None) -> tuple[list[dict[str, Any]], list[Part]]:
    """The outline a source page shows, and its part pages, for an outline too large for one page.

    Each section is a line of the page. A section whose outline (every subsection) fits
    OUTLINE_BYTES, and PART_BYTES with its key facts (`weights`: the bytes of the facts under
    each heading line), is a part page linked from its line, or, under PART_MIN_BYTES, stays on the page as it would
    without parts; a larger one is opened: its line, then its subsections one level in, each
    treated the same way. Where the lines of one section's subsections still pass
    OUTLINE_BYTES (a hundred short entries, a flat list of settings, a changelog's
    releases), runs of consecutive subsections become parts of at most OUTLINE_BYTES each,
    named for their first and last section. Every section keeps one line link, on the page
    or on a part, and its key facts go where its line is; links in a part's lines are
    relative to the source page (rebased when the part page is rendered)."""
    parts: list[Part] = []
    slugs: set[str] = set()
    weights = weights or {}
    homed: set[int] = set()  # heading indexes whose facts a part carries

    def weight(start: int, end: int) -> int:
        return sum(weights.get(headings[k][2], 0) for k in range(start, end) if k not in homed)

    def home(part: Part, start: int, end: int) -> Part:
        for k in range(start, end):
            if k not in homed:
                homed.add(k)
                part.homes.add(headings[k][2])
        return part

    def slug_for(text: str) -> str:
        slug = slugify(text.replace("`", "")) or "part"
        if is_catalog(f"{slug}.md"):
            slug += "-section"  # index.md names a catalog, never a page
        base, n = slug, 2
        while slug in slugs:
            slug, n = f"{base}-{n}", n + 1
        slugs.add(slug)
        return slug

    def entry(i: int, depth: int) -> dict[str, Any]:
        _level, text, line = headings[i]
        item = {"text": _heading_text(text), "link": cite(line), "indent": "  " * depth, "tail": ""}
        if line in defaults:
            value, at = defaults[line]
            item["link"], item["tail"] = cite(at), f" = {value}"
        return item

    def shifted(items: list[dict[str, Any]], depth: int) -> list[dict[str, Any]]:
        """The lines moved `depth` levels in (out, when negative)."""
        if depth >= 0:
            return [{**o, "indent": "  " * depth + o["indent"]} for o in items]
        return [{**o, "indent": o["indent"][-2 * depth:]} for o in items]

    def lay_out(start: int, end: int, depth: int, trail: list[str]) -> list[dict[str, Any]]:
        children: list[tuple[int, int, list[dict[str, Any]]]] = []
        i = start
        while i < end:
            level = headings[i][0]
            j = i + 1
            while j < end and headings[j][0] > level:
                j += 1
            sub = headings[i + 1:j]
            title = headings[i][1].replace("`", "")
            if not sub:
                own = [entry(i, depth)]
            else:
                inside = outline(sub, cite, defaults)
                size, facts = _size(inside), weight(i, j)
                if size + facts < PART_MIN_BYTES:
                    own = shifted(outline(headings[i:j], cite, defaults), depth)
                elif _fits(size, facts, PART_BYTES):
                    slug = slug_for(title)
                    item = entry(i, depth)
                    parts.append(home(Part(slug, title, trail, f"its section [{item['text']}]({cite(headings[i][2])})",
                                           inside, headings[i + 1][2], headings[j - 1][2]), i, j))
                    count = len(sub)
                    item["link"] = f"{stem}/{slug}.md"
                    item["tail"] += (f": {count} {'section' if count == 1 else 'sections'}, "
                                     f"from [line {headings[i][2]}]({cite(headings[i][2])})")
                    own = [item]
                else:
                    own = [entry(i, depth), *lay_out(i + 1, j, depth + 1,
                                                     trail if title == doc_title else [*trail, title])]
            children.append((i, j, own))
            i = j
        lines = [x for _, _, own in children for x in own]
        # the page's own sections may take a page; an opened section's, no more than a part, or
        # its lines would fill the page with what a part page holds better
        if _fits(_size(lines), weight(start, end), PAGE_BYTES if not trail else PART_BYTES) or len(children) < 2:
            return lines
        runs: list[list[tuple[int, int, list[dict[str, Any]]]]] = [[]]
        size = facts = 0
        # runs of about equal size: as few as the parts' budget allows, none left with a remnant
        total = sum(_size(own) + weight(i, j) for i, j, own in children)
        target = total / max(1, -(-total // PART_BYTES))
        for child in children:
            grows, more = _size(child[2]), weight(child[0], child[1])
            if runs[-1] and (not _fits(size + grows, facts + more, PART_BYTES)
                             or size + facts + (grows + more) / 2 > target):
                runs.append([])
                size = facts = 0
            runs[-1].append(child)
            size += grows
            facts += more
        out: list[dict[str, Any]] = []
        hubs: list[tuple[int, list[dict[str, Any]]]] = []  # (where a run's line is, the part pages its lines link)
        for run in runs:
            if len(run) == 1 and len(run[0][2]) == 1 and weight(run[0][0], run[0][1]) < PART_MIN_BYTES:
                out.extend(run[0][2])  # one line: a page for it would save nothing
                continue
            first, last = run[0][0], run[-1][0]
            names = [_heading_text(headings[first][1]), _heading_text(headings[last][1])]
            name = names[0] if first == last else f"{names[0]} – {names[1]}"  # as a link's text
            plain = [headings[k][1].replace("`", "") for k in (first, last)]
            title = plain[0] if first == last else f"{plain[0]} – {plain[1]}"  # the part's title, as a section's is
            if first != last and trail:
                title = f"{trail[-1]}: {title}"  # a run's two ends do not say which section it is a run of
            slug = slug_for(headings[first][1] if first == last else f"{headings[first][1]} {headings[last][1]}")
            span = (f"its section [{names[0]}]({cite(headings[first][2])})" if first == last else
                    f"the sections [{names[0]}]({cite(headings[first][2])}) to [{names[1]}]({cite(headings[last][2])})")
            parts.append(home(Part(slug, title, trail, span, shifted([x for _, _, own in run for x in own], -depth),
                                   headings[first][2], headings[run[-1][1] - 1][2]), run[0][0], run[-1][1]))
            count = sum(j - i for i, j, _ in run)
            out.append({"text": name, "link": f"{stem}/{slug}.md", "indent": "  " * depth,
                        "tail": f": {count} {'section' if count == 1 else 'sections'}"})
            nested = []
            top = ""  # the run's line a deeper line sits under ("2.0.0" for its "Removed – Deprecated")
            for x in (x for _, _, own in run for x in own):
                if len(x["indent"]) <= 2 * depth:
                    top = x["text"]
                if x["link"].startswith(f"{stem}/") and x["link"].endswith(".md"):
                    deeper = len(x["indent"]) > 2 * depth and top
                    # the part's own line says where it starts; here its name and link are enough
                    nested.append({**x, "text": f"{top}: {x['text']}" if deeper else x["text"],
                                   "tail": x["tail"].split(", from [line ", 1)[0]})
            if nested:
                hubs.append((len(out), nested))
        # a run whose lines link part pages of their own (a changelog's releases) is a page of
        # links: its first ones are linked from here too, under its line, while they take little
        # room, so the newest release's part is one step from the source page, not two
        # (only for the page's own top sections: a run deeper in sits in an outline long already)
        room = HOISTED_BYTES - _size(out) if depth <= 1 else 0
        added: dict[int, list[dict[str, Any]]] = {}
        for at, nested in hubs:
            for x in nested:
                x = {**x, "indent": "  " * (depth + 1)}
                if _size([x]) > room:
                    break
                room -= _size([x])
                added.setdefault(at, []).append(x)
            else:
                continue
            break
        for at in sorted(added, reverse=True):
            out[at:at] = added[at]
        return out

    lines = lay_out(0, len(headings), 0, [])
    # parts of one name in two places ("Bug fixes" of two releases) are told apart by the section
    # each sits in: "3.14.0 (2026-06-01): Bug fixes", not two pages titled alike
    named = Counter(part.name for part in parts)
    for part in parts:
        if named[part.name] > 1 and part.trail:
            part.name = f"{part.trail[-1]}: {part.name}"
    return lines, parts


def _fits(outline_bytes: int, fact_bytes: int, page: int = PAGE_BYTES) -> bool:
    """Whether an outline and its sections' key facts fit one page (or part: PART_BYTES)."""
    return outline_bytes <= OUTLINE_BYTES and outline_bytes + fact_bytes <= page


def _heading_text(text: str) -> str:
    return escape_link_text(re.sub(r"`", "", text))


def source_page(page_path: str, source_path: str, sha: str, data: dict[str, Any], sentences: list[Sentence],
                concepts: list[Concept], fact_pages: Sequence[tuple[str, str]] = (), xrefs: Shows | None = None) -> Page:
    """The source's page alone (source_pages gives its part pages too)."""
    return source_pages(page_path, source_path, sha, data, sentences, concepts, fact_pages, xrefs)[0]


def source_pages(page_path: str, source_path: str, sha: str, data: dict[str, Any], sentences: list[Sentence],
                 concepts: list[Concept], fact_pages: Sequence[tuple[str, str]] = (), xrefs: Shows | None = None,
                 notes: Sequence[str] = (), hub: Sequence[HubEntry] = ()) -> list[Page]:
    """The source page, then its part pages when its outline is too large for it (split_outline).
    `xrefs` shows its cross-references (offline_xrefs), `notes` says what about them went wrong;
    `hub`: the documents its table of contents names (offline_hubs), listed as links to their
    pages under the section that lists them."""
    anchor = data["anchor"]
    raw_link = relative_link(page_path, "../" + source_path)

    def cite(line: int, end: int = 0) -> str:
        return citation(page_path, source_path, anchor, line, end)

    sections = data.get("sections") or []
    lead_ids = [i for i in data.get("lead") or data.get("summary") or [] if i < len(sentences)]
    lead = data.get("description") or " ".join(quote_text(sentences[i].text, xrefs) for i in lead_ids)
    tables, tabled = _tables(sentences, sections, cite, xrefs)
    facts: list[dict[str, Any]] = []
    for i in data["facts"]:
        if i >= len(sentences) or i in tabled:
            continue
        s = sentences[i]
        context = ""
        if s.subject and not says_name(s.text, s.subject):
            context = f"`{s.subject}`" if not s.subject.startswith("`") else s.subject
        elif 0 <= s.section < len(sections) and sections[s.section][1] > 1 and len(sections[s.section][0]) <= 60 \
                and not _mentions_title(s, sections[s.section][0]):
            context = "*" + escape_link_text(sections[s.section][0].replace("*", "")) + "*"
        # one source per page: a citation needs only the line; the short code a fact introduces
        # is shown after it, and cited with it
        code = (data.get("code") or {}).get(str(i))
        code_text = " ".join(_code_span(line) for line in code[0]) if code else ""
        facts.append({"text": quote_text(s.text, xrefs), "code": code_text,
                      "link": cite(s.line, max(s.end, code[1] if code else 0)),
                      "where": _where("", anchor, s.line).lstrip(", "), "context": context, "line": s.line,
                      "heading": sections[s.section][2] if 0 <= s.section < len(sections) else None})
    show_outline, in_outline = _outline_defaults(data, sentences)
    shown = {line for _, line in in_outline.values()}
    defaults: list[dict[str, Any]] = []
    for row in data.get("defaults") or []:
        at = _default_at(row, sentences)
        if at is not None and at[1] not in shown:
            defaults.append({"subject": escape_link_text(str(row[0])).replace("|", "\\|"),
                             "value": quote_text(str(row[1]), xrefs).replace("|", "\\|"), "link": cite(at[1]),
                             "line": at[1], "heading": sections[at[0]][2] if 0 <= at[0] < len(sections) else None})
    contents = _contents(page_path, hub, sections, data["title"])
    lines, parts, expanded = _layout(page_path, data, cite, in_outline, show_outline)
    if expanded:
        for row in (*facts, *defaults, *tables):
            row["heading"] = _home_line(row["heading"], row["line"], expanded)
    homes = {line: part for part in parts for line in part.homes}
    dated = _newest_part(data, parts)
    on_page = _within(PAGE_BYTES - min(_size(lines), OUTLINE_BYTES // 2),
                      [f for f in facts if f["heading"] not in homes])
    page_defaults = [d for d in defaults if d["heading"] not in homes]
    page_contents = [c for c in contents if c["heading"] not in homes]
    body = render(
        "source_page.md.j2",
        title=data["title"],
        summary=lead,
        source_path=source_path,
        raw_link=raw_link,
        format=data["format"],
        date=data.get("date"),
        date_link=cite(data["date_line"]) if data.get("date_line") else None,
        dated=({"name": escape_link_text(dated.name), "link": relative_link(page_path, part_path(page_path, dated.slug))}
               if dated else None),
        version=data.get("version"),
        outline=lines,
        facts=_by_context(on_page),
        contents=_by_context(page_contents),
        # a table sits with its section: on the part that holds it, not on every reader's path
        tables=[t for t in tables if t["heading"] not in homes],
        defaults=page_defaults,
        unit="page" if anchor.startswith("page") else "line",
        concepts=[{"title": escape_link_text(c.title), "link": relative_link(page_path, c.page)} for c in concepts],
        timelines=[{"title": escape_link_text(title), "link": relative_link(page_path, page + ".md")}
                   for title, page in fact_pages],
        warnings=[*data.get("warnings", []), *notes],
    )
    meta: dict[str, Any] = {
        "title": data["title"],
        "kind": "source",
        "sources": [source_path],
        "source_sha256": sha,
        "aliases": [],
        "format": data["format"],
    }
    if data.get("date"):
        meta["date"] = data["date"]
    if data.get("version"):
        meta["version"] = data["version"]
    return [Page(page_path, meta, body),
            *(_part_page(page_path, source_path, sha, data, part, [f for f in facts if homes.get(f["heading"]) is part],
                         [d for d in defaults if homes.get(d["heading"]) is part],
                         [c for c in contents if homes.get(c["heading"]) is part],
                         [t for t in tables if homes.get(t["heading"]) is part])
              for part in parts)]


def _newest_part(data: dict[str, Any], parts: Sequence[Part]) -> Part | None:
    """The part page of the newest release's section, innermost first: the section whose heading
    states the document's date (a changelog dated in its headings), else, in a changelog of two
    releases or more, the section of the highest version. The page links it beside its date
    (or as its newest release) and index.md beside the page, so the newest release is a step
    from the map, not a walk down the parts."""
    if not parts:
        return None
    at = data.get("date_line")
    if at:
        heading = max((h[2] for h in data["outline"] if h[2] <= at), default=None)
        if heading is None or at - heading > 4:
            return None  # the date is the document's, not a section's (a reST heading's underline and a blank line may come between)
    else:
        releases = [(version_key(str(s[4])), -j, int(s[2])) for j, s in enumerate(data.get("sections") or [])
                    if len(s) > 4 and s[4]]
        if len({key for key, _, _ in releases}) < 2:
            return None
        key, _, heading = max(releases)
        if key[0] == 0:
            return None  # no section's version reads as one: none is the newest
    holding = [p for p in parts if p.first <= heading <= p.last or heading in p.homes]
    return min(holding, key=lambda p: p.last - p.first) if holding else None


def _contents(page_path: str, hub: Sequence[HubEntry], sections: list[list[Any]], title: str) -> list[dict[str, Any]]:
    """The documents a hub lists, as its page shows them: a link to each one's page with its
    lead, grouped under the toctree's caption or the section that lists them."""
    lines = sorted((s[2], j) for j, s in enumerate(sections))
    out: list[dict[str, Any]] = []
    for entry in hub:
        at = bisect_right(lines, (entry.line, len(sections))) - 1 if entry.line else -1
        section = sections[lines[at][1]] if at >= 0 else None
        heading = section[2] if section is not None else None
        context = entry.group or (str(section[0]) if section is not None and section[0] != title else "")
        out.append({"title": escape_link_text(entry.title), "link": relative_link(page_path, entry.page),
                    "lead": inert(entry.lead), "heading": heading,
                    "context": "*" + escape_link_text(context.replace("*", "")) + "*" if context else ""})
    return out


def _entry_size(row: dict[str, Any]) -> int:
    """The bytes a listed document takes on a page."""
    return len(row["title"]) + len(row["link"]) + len(row["lead"]) + 12


def _default_size(row: dict[str, Any]) -> int:
    """The bytes a row of the defaults table takes on a page."""
    return len(row["subject"]) + len(row["value"]) + len(row["link"]) + len(str(row["line"])) + 16


def _within(budget: int, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first facts, in the document's order, that fit `budget` bytes: what a page with no
    sections to split along (a changelog of directives, a long note) shows of its facts."""
    out: list[dict[str, Any]] = []
    for fact in facts:
        budget -= _fact_size(fact)
        if budget < 0 and out:
            break
        out.append(fact)
    return out


def _fact_size(fact: dict[str, Any]) -> int:
    """The bytes a key fact takes on a page (as source_page.md.j2 writes it)."""
    return len(fact["text"]) + len(fact["code"]) + len(fact["link"]) + len(fact["where"]) + len(fact["context"]) + 12


def _code_span(line: str) -> str:
    """A line of code as an inline code span (fenced with more backquotes than it holds)."""
    line = inert(" ".join(line.split()))
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{ticks}{pad}{line}{pad}{ticks}"


def _default_at(row: Sequence[Any], sentences: Sequence[Sentence]) -> tuple[int, int] | None:
    """(section, line) of the sentence that states a default (analysis._defaults' row)."""
    if len(row) >= 5:
        return int(row[3]), int(row[4])
    i = row[2]
    return (sentences[i].section, sentences[i].line) if 0 <= i < len(sentences) else None


def _outline_defaults(data: dict[str, Any], sentences: Sequence[Sentence] = ()) -> tuple[bool, dict[int, tuple[str, int]]]:
    """Whether a source page shows an outline, and the defaults its outline lines show: a
    default whose subject is the section it sits in is shown on that section's line (heading
    line -> (value, line of the sentence that states it)). From the analysis alone, so a
    reference elsewhere finds the page or part holding a section without the sentences."""
    heads = data["outline"]
    sections = data.get("sections") or []
    show_outline = not (len(heads) <= 1 and (not heads or heads[0][1] == data["title"]))
    in_outline: dict[int, tuple[str, int]] = {}
    if not show_outline:
        return show_outline, in_outline
    heading_lines = {h[2] for h in heads}
    for row in data.get("defaults") or []:
        at = _default_at(row, sentences)
        if at is None:
            continue
        section, line = at
        if 0 <= section < len(sections) and sections[section][0] == row[0] and sections[section][2] in heading_lines \
                and sections[section][2] not in in_outline:
            # the value as it reads alone: the layout must not depend on other sources' titles
            in_outline[sections[section][2]] = (quote_text(str(row[1])), line)
    return show_outline, in_outline


def _layout(page_path: str, data: dict[str, Any], cite: Callable[[int], str], in_outline: dict[int, tuple[str, int]],
            show_outline: bool) -> tuple[list[dict[str, Any]], list[Part], dict[int, list[int]]]:
    """A source page's outline lines, its part pages (split_outline when it is too long), and
    the sections split along their terms (_expanded: section line -> its terms' lines)."""
    heads = data["outline"]
    lines = outline(heads, cite, in_outline) if show_outline else []
    weights = _weights(data, in_outline)
    if lines and not _fits(_size(lines), sum(weights.values())):
        stem = posixpath.splitext(posixpath.basename(page_path))[0]
        expanded = _expanded(data, weights)
        if expanded:
            heads = sorted([*heads, *(head for terms in expanded.values() for head in terms)], key=lambda h: h[2])
            term_bytes = data.get("term_bytes") or {}
            for section_line, terms in expanded.items():
                for _level, _name, line in terms:
                    moved = int(term_bytes.get(str(line), 0))
                    weights[line] = moved
                    weights[section_line] = weights.get(section_line, 0) - moved
        split, parts = split_outline(heads, cite, in_outline, stem, data["title"], weights)
        if not _all_in_one(parts, lines, weights):
            return split, parts, {line: [t[2] for t in terms] for line, terms in expanded.items()}
    return lines, [], {}


def _all_in_one(parts: list[Part], lines: list[dict[str, Any]], weights: dict[int, int]) -> bool:
    """Whether one part would hold most of what the page shows (a hub whose contents all sit
    under its title's heading): a step to it would save a reader nothing, so the page keeps it."""
    if len(parts) != 1:
        return False
    held = sum(weights.get(line, 0) for line in parts[0].homes) + _size(parts[0].lines)
    return held * 5 >= (sum(weights.values()) + _size(lines)) * 4


def _expanded(data: dict[str, Any], weights: dict[int, int]) -> dict[int, list[tuple[int, str, int]]]:
    """The sections to split along the terms they define: each that has no subsections, whose
    key facts alone pass a part (a reference's eighty settings under one heading), and that
    defines two terms or more; each with its terms as headings one level in."""
    heads = data["outline"]
    sections = data.get("sections") or []
    section_at = {int(section[2]): j for j, section in enumerate(sections)}
    by_section: dict[int, list[tuple[str, int]]] = {}
    for section, name, line in data.get("term_heads") or []:
        by_section.setdefault(int(section), []).append((str(name), int(line)))
    out: dict[int, list[tuple[int, str, int]]] = {}
    for k, (level, _text, line) in enumerate(heads):
        if k + 1 < len(heads) and heads[k + 1][0] > level:
            continue  # it has subsections: split along them
        terms = by_section.get(section_at.get(line, -1), [])
        if weights.get(line, 0) > PART_BYTES and len(terms) >= 2:
            out[line] = [(level + 1, name, at) for name, at in terms if at > line]
    return {line: terms for line, terms in out.items() if len(terms) >= 2}


def _home_line(heading: int | None, line: int, expanded: dict[int, list[int]]) -> int | None:
    """The outline line a fact or a default at `line` is shown under: its section's heading,
    or, in a section split along its terms, the term it sits under."""
    terms = expanded.get(heading) if heading is not None else None
    if not terms:
        return heading
    at = bisect_right(terms, line) - 1
    return terms[at] if at >= 0 else heading


def _weights(data: dict[str, Any], in_outline: dict[int, tuple[str, int]]) -> dict[int, int]:
    """The bytes of what a page shows under each heading line besides its outline: its key
    facts, the defaults its outline lines do not show, the documents it lists. From the
    analysis alone, as the layout must be (part_spans): the facts as analysis.fact_bytes
    counts them, a listed document's lead at its usual length."""
    heading_lines = {h[2] for h in data["outline"]}
    sections = data.get("sections") or []
    out: dict[int, int] = {}

    def add(heading: int, size: int) -> None:
        if heading in heading_lines:
            out[heading] = out.get(heading, 0) + size

    for line, size in (data.get("fact_bytes") or {}).items():
        add(int(line), int(size))
    shown = {line for _, line in in_outline.values()}
    for row in data.get("defaults") or []:
        if len(row) >= 5 and row[4] not in shown and 0 <= row[3] < len(sections):
            add(sections[row[3]][2], len(str(row[0])) + len(str(row[1])) + _LINK_BYTES + 16)
    starts = sorted((s[2], j) for j, s in enumerate(sections))
    for row in data.get("toc") or []:
        line = row[2] if len(row) > 2 and isinstance(row[2], int) else 0
        at = bisect_right(starts, (line, len(sections))) - 1 if line else -1
        if at >= 0:
            add(sections[starts[at][1]][2], len(str(row[1] or row[0])) + _LINK_BYTES + LEAD_BYTES + 12)
    return out


def part_spans(page_path: str, source_path: str, data: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The part pages of a source's page (split_outline) with the lines of the first and last
    heading each lists: (first, last, wiki-relative path), innermost parts first; [] when the
    page has none."""
    show_outline, in_outline = _outline_defaults(data)
    _lines, parts, _ = _layout(page_path, data, lambda at: citation(page_path, source_path, data["anchor"], at),
                               in_outline, show_outline)
    return sorted(((p.first, p.last, part_path(page_path, p.slug)) for p in parts), key=lambda span: span[1] - span[0])


def part_path(page_path: str, slug: str) -> str:
    """Where a part page lives: beside its source page, in a folder named for it
    (sources/<page stem>/<slug>.md)."""
    return posixpath.join(posixpath.dirname(page_path), posixpath.splitext(posixpath.basename(page_path))[0], slug + ".md")


def part_holding(page_path: str, data: dict[str, Any], spans: list[tuple[int, int, str]], line: int) -> str:
    """The page that lists the section holding `line` of a source: the innermost part page that
    lists its heading (`spans`: part_spans), else the source page itself."""
    before = [h[2] for h in data["outline"] if h[2] <= line]
    if not before or not spans:
        return page_path
    heading = max(before)
    return next((path for first, last, path in spans if first <= heading <= last), page_path)


def _part_page(page_path: str, source_path: str, sha: str, data: dict[str, Any], part: Part,
               facts: list[dict[str, Any]], defaults: list[dict[str, Any]], contents: list[dict[str, Any]],
               tables: Sequence[dict[str, Any]] = ()) -> Page:
    """A part of a long source's page (split_outline): its lines, its sections' key facts and
    tables, links rebased from the page to it."""
    folder = posixpath.dirname(page_path)
    path = part_path(page_path, part.slug)

    def rebase(link: str) -> str:
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|[#/]", link):
            return link  # a web address, an anchor on the page or an absolute path names the same place from anywhere
        target, hash_, fragment = link.partition("#")
        return relative_link(path, posixpath.normpath(posixpath.join(folder, target))) + hash_ + fragment

    def rebased(text: str) -> str:
        return LINK_TARGET.sub(lambda m: f"]({rebase(m.group(1))})" if m.group(1) else m.group(0), text)

    title = f"{data['title']}: {part.name}"
    body = render(
        "source_part.md.j2",
        title=title,
        document=escape_link_text(data["title"]),
        back=relative_link(path, page_path),
        trail=[escape_link_text(t) for t in part.trail],
        span=rebased(part.span),
        source_path=source_path,
        raw_link=relative_link(path, "../" + source_path),
        outline=[{**item, "link": rebase(item["link"]), "tail": rebased(item["tail"])} for item in part.lines],
        # a quote's cross-references link pages relative to the source page too
        facts=_by_context([{**f, "text": rebased(f["text"]), "link": rebase(f["link"])} for f in facts]),
        defaults=[{**d, "value": rebased(d["value"]), "link": rebase(d["link"])} for d in defaults],
        contents=_by_context([{**c, "link": rebase(c["link"])} for c in contents]),
        tables=[{**t, "link": rebase(t["link"]), "header": rebased(t["header"]),
                 "rows": [rebased(row) for row in t["rows"]]} for t in tables],
        unit="page" if data["anchor"].startswith("page") else "line",
    )
    meta: dict[str, Any] = {
        "title": title,
        "kind": "source",
        "part_of": page_path,
        "sources": [source_path],
        "source_sha256": sha,
        "aliases": [],
    }
    return Page(path, meta, body)


def _by_context(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Key facts in runs: the facts of one section, in a row, are items under one that names the
    section once ("- *Ownership Rules*:", then each quote) rather than repeating its name on each."""
    groups: list[dict[str, Any]] = []
    for fact in facts:
        if fact["context"] and groups and groups[-1]["context"] == fact["context"]:
            groups[-1]["quotes"].append(fact)
        else:
            groups.append({"context": fact["context"], "quotes": [fact]})
    return groups


def _tables(sentences: list[Sentence], sections: list[list[Any]], cite: Any,
            xrefs: Shows | None = None) -> tuple[list[dict[str, Any]], set[int]]:
    """The document's tables as compact Markdown tables, each cited at its first line: a table
    of operators, limits or versions is the document's facts in their densest form. At most
    TABLE_BYTES of rows in all; a table cut short says how many rows it leaves out. Returns
    the tables and the sentences shown in them (not repeated as key facts)."""
    runs: list[list[int]] = []
    for i, s in enumerate(sentences):
        if s.kind not in ("table", "data"):
            continue
        before = sentences[runs[-1][-1]] if runs else None
        if before is not None and runs[-1][-1] == i - 1 and before.section == s.section and s.line <= before.line + 2:
            runs[-1].append(i)
        else:
            runs.append([i])
    out: list[dict[str, Any]] = []
    shown: set[int] = set()
    budget = TABLE_BYTES
    for run in runs:
        if len(run) < 2 or budget <= 0:
            continue
        # a "|" in code (`||`) would split a cell: escaped, as GitHub's tables read it
        rows = [re.sub(r"`[^`]*`", lambda m: m.group(0).replace("|", "\\|"), quote_text(sentences[i].text, xrefs))
                for i in run]
        columns = max(row.count(" | ") + 1 for row in rows[:1])
        kept: list[str] = []
        for i, row in zip(run, rows, strict=True):
            if budget - len(row) < 0 and len(kept) > 1:
                break
            kept.append(f"| {row} |")
            shown.add(i)
            budget -= len(row) + 4
        first = sentences[run[0]]
        title = ""
        heading = None
        if 0 <= first.section < len(sections):
            title = escape_link_text(str(sections[first.section][0]).replace("*", ""))
            heading = sections[first.section][2]
        out.append({"title": title, "link": cite(first.line), "line": first.line, "heading": heading,
                    "header": kept[0], "rule": "|" + "---|" * columns, "rows": kept[1:],
                    "more": len(run) - len(kept)})
    return out, shown


def _mentions_title(s: Sentence, title: str) -> bool:
    """Whether a sentence says every word of four letters or more of its section's title (as the
    title writes them: "Maps" counts, though its key "map" is three letters)."""
    words = _title_words(title)
    return bool(words) and words <= set(_words_of(s))


@lru_cache(maxsize=4096)  # a section's facts ask of its title in turn
def _title_words(title: str) -> frozenset[str]:
    return frozenset(key for word in title.split() if len(word.strip("?!.,:;()*`'\"")) > 3 for key in tokens(word))


# --- concept pages ------------------------------------------------------------------------------


@dataclass
class Member:
    """A source that mentions a concept, with what the concept page needs to know of it."""

    path: str
    page: str
    title: str
    date: str | None
    version: str | None
    anchor: str
    level: int  # the strongest evidence it gives (ABOUT, DEFINED, HEADED, CODE, 0)
    mentions: int
    definition: int | None = None  # its sentence that defines the concept
    headed: int | None = None  # its section named for the concept
    sections: list[list[Any]] = field(default_factory=list)
    facts: frozenset[int] = frozenset()  # the sentences its source page shows as key facts
    default: tuple[str, int] | None = None  # the default it states for the concept: (value, sentence)

    @property
    def score(self) -> float:
        return relevance(self.level, self.mentions)


@lru_cache(maxsize=4096)  # bounded: the daemon lives on, and its heap with it (a batch's concepts' members fit)
def _folded(text: str, first: int | None = None) -> str:
    """" word word ... ": a sentence's tokens (its `first` ones), spaced for matching whole
    phrases. Cached: a source's sentences are read again for every concept it belongs to."""
    return " " + " ".join(_tokens_of(text)[:first]) + " "


@lru_cache(maxsize=16384)
def _tokens_of(text: str) -> tuple[str, ...]:
    """A sentence's tokens, once for its folded forms (_folded: all of them, and the first eight
    a key point is weighed by); on the Sphinx trees one text in three was tokenized twice."""
    return tuple(tokens(text))


def _words_of(s: Sentence, first: int | None = None) -> Sequence[str]:
    """A sentence's tokens (its `first` ones): those its analysis made (Sentence.words, no token
    holds a space), else made again."""
    if s.words is None:
        return _tokens_of(s.text)[:first]
    return s.words.split(" ")[:first] if s.words else ()


def _spaced(s: Sentence) -> str:
    """_folded of a sentence's text, from the tokens its analysis made when it kept them."""
    return f" {s.words} " if s.words is not None else _folded(s.text)


def _needles(key: str) -> tuple[str, ...]:
    """What a sentence's lowercased text must hold for its tokens to hold `key` (" borrow checker
    "): each word's part that folding leaves in place (a plural's "librar" of "library", a word
    with an apostrophe in its pieces, as the text may spell it ’). Folding only cuts a word's end
    or lowercases a code name, so a sentence lacking a needle cannot name the key: it is skipped
    without being tokenized, the most of a concept page's time on a large tree."""
    out: list[str] = []
    for word in key.split():
        out.extend(part for part in word.removesuffix("y").split("'") if part)
    return tuple(out)


class Sentences(list[Sentence]):
    """A member's sentences, with their lowercased text joined once per compile: a concept
    page finds the few that hold its words with str.find over the whole document instead of
    testing each sentence (a reference of 3,000 sentences is quoted for many concepts)."""

    _joined: tuple[str, list[int]] | None = None
    _subjects: dict[str, list[int]] | None = None

    def with_subject_in(self, keys: Sequence[str]) -> set[int]:
        """The sentences that define or describe a term (`DEBUG`: ...) whose folded name is one
        of `keys` (spaced, as _folded gives them): a settings reference describes thousands of
        terms, and each concept asks for its own."""
        if self._subjects is None:
            subjects: dict[str, list[int]] = {}
            for i, s in enumerate(self):
                if s.subject:
                    subjects.setdefault(_folded(s.subject), []).append(i)
            self._subjects = subjects
        return {i for key in keys for i in self._subjects.get(key, ())}

    def holding(self, needles: Sequence[tuple[str, ...]]) -> set[int]:
        """The sentences whose lowercased text holds every needle of a group (a superset:
        the first needle of the group is looked for, the rest checked by the caller)."""
        if self._joined is None:
            starts: list[int] = []
            at = 0
            for s in self:
                starts.append(at)
                at += len(s.text) + 1
            self._joined = ("\n".join(s.text.lower() for s in self), starts)
        text, starts = self._joined
        found: set[int] = set()
        for group in needles:
            if not group:
                return set(range(len(self)))
            needle = max(group, key=len)
            at = text.find(needle)
            while at >= 0:
                found.add(bisect_right(starts, at) - 1)
                at = text.find(needle, at + 1)
        return found


def forget_sentences() -> None:
    """Drop the folded sentences and titles concept pages kept (the daemon, after each batch)."""
    _folded.cache_clear()
    _tokens_of.cache_clear()
    _openings.cache_clear()
    _content_words.cache_clear()
    _as_point.cache_clear()
    analysis_forget()


def _roles(members: list[Member]) -> tuple[list[Member], list[Member], list[Member]]:
    """A concept's members that its page reads: the main ones (those that define it), the quoted
    (the most relevant) and the newest of the rest (read for the changes over time only)."""
    main = [m for m in members if m.level >= DEFINED][:MAIN_MEMBERS] or [m for m in members[:1] if m.level >= HEADED]
    quoted = members[:QUOTED_MEMBERS]
    return main, quoted, [m for m in recent(members) if m not in quoted]


def read_by_concept_page(members: list[Member]) -> list[Member]:
    """The members whose sentences concept_page asks `sentences_of` for, and no other."""
    main, quoted, newest = _roles(members)
    return [*main, *quoted, *newest]


Resolved = tuple[str | None, str | None]  # what a cross-reference names: (its title, its page); None: nothing


def shows(from_page: str, resolved: dict[tuple[str, str], Resolved]) -> Shows:
    """How a page at `from_page` shows cross-references resolved as `resolved` ((kind, target) ->
    (title, page)): the text its author gave it, else the title of what it names, linked to the
    page (or part page) holding that; what names nothing is its text, or its target made readable."""
    def show(kind: str, target: str, given: str) -> str:
        title, page = resolved.get((kind, target), (None, None))
        text = given or title or xref.readable(kind, target)
        if page is None:
            return inert(text)
        return f"[{escape_link_text(text)}]({relative_link(from_page, page)})"

    return show


def read_digest(member: Member, sentences: Sentences, concept: Concept) -> str:
    """A digest of everything concept_page can read of one of the members it reads
    (read_by_concept_page): the member's own fields (its sections, key facts, definition,
    default and entry, how strongly and often it names the concept) and the sentences the page
    can quote or weigh: those that may name one of its keys or have one as their subject, the
    key facts, the definition, the default and the sentences of its entry for the concept. An
    edit of the source that leaves all of these as they were (a line added about something
    else) leaves the page as it was (offline._Compile._reads_alike compares the digests of
    the source before and after the edit)."""
    keys = [f" {k} " for k in concept.keys]
    n = len(sentences)
    at = sentences.holding([_needles(k) for k in concept.keys]) | sentences.with_subject_in(keys) | set(member.facts)
    default = member.default[1] if member.default is not None else None
    for i in (member.definition, default):
        if i is not None:
            at.add(i)
    if member.headed is not None:
        at.update(i for i, s in enumerate(sentences) if s.section == member.headed)
    h = hashlib.sha1(json.dumps([
        member.path, member.page, member.title, member.date, member.version, member.anchor, member.level,
        member.mentions, member.definition, member.headed, member.sections, sorted(member.facts), member.default,
    ]).encode())
    for i in sorted(j for j in at if 0 <= j < n):
        s = sentences[i]
        h.update(json.dumps([i, s.text, s.line, s.kind, s.section, s.subject, s.version, s.end, s.words]).encode())
    return h.hexdigest()


# where a concept page kept but for its Related section has it (KeptPage): no page holds a NUL
RELATED_MARK = "\x00related\x00"


def related_section(page_path: str, related: Sequence[Concept]) -> str:
    """A concept page's Related section: the concepts its main sources link, each linked."""
    return render("concept_related.md.j2",
                  related=[{"title": escape_link_text(c.title), "link": relative_link(page_path, c.page)} for c in related])


@dataclass(frozen=True)
class KeptPage:
    """A concept page as concept_page rendered it, its Related section left as RELATED_MARK.

    The Related section lists the concepts the page's main sources link: when a concept comes
    or goes (a note dropped beside a dozen documents admits one), the section moves on every
    page whose main sources link it, and nothing else on them does. Such a page is made from
    the one kept (state.db's offline_kept) with the new section, rather than rendered again
    from its members' sentences: the same text, without reading them."""

    path: str
    meta: dict[str, Any]
    body: str

    def page(self, related: Sequence[Concept]) -> Page:
        """The page, with the Related section of `related`."""
        return Page(self.path, self.meta, self.body.replace(RELATED_MARK, related_section(self.path, related), 1))

    def dumps(self) -> str | None:
        """What state.db keeps; None when the page cannot be kept (its text held the mark, or
        its front matter a value JSON does not hold): it is rendered whole the next time."""
        if self.body.count(RELATED_MARK) != 1:
            return None
        try:
            return json.dumps([self.meta, self.body])
        except (TypeError, ValueError):
            return None

    @classmethod
    def loads(cls, path: str, text: str) -> KeptPage:
        meta, body = json.loads(text)
        return cls(path, meta, body)


def concept_page(concept: Concept, members: list[Member], sentences_of: Any,
                 fact_pages: Sequence[tuple[str, str]] = (), total: int | None = None,
                 longer: Sequence[str] = (), xrefs: dict[str, dict[tuple[str, str], Resolved]] | None = None) -> KeptPage:
    """The article, but for its Related section (KeptPage.page adds it). `members` are ranked,
    the first SHOWN_MEMBERS of them and the first that define it at least, of `total` (all of
    them when not given); `sentences_of(member)` gives a
    member's sentences. `longer`: the keys of other concepts whose name holds this one's
    ("development server" for "server"): a sentence that names it only inside one of them is
    about that other thing; `xrefs` how the cross-references of each member (by path) resolve.

    One sense per page: its lead, key points and changes come from the sources that use the
    name as its main sources do; a source in another collection whose sentences share no
    words of substance with theirs uses the name for something else, and is only listed."""
    total = len(members) if total is None else total
    page_path = concept.page
    keys = [f" {k} " for k in concept.keys]
    needles = [_needles(k) for k in concept.keys]
    longer_spaced = [f" {k} " for k in longer]
    main, quoted, newest = _roles(members)

    def link(m: Member) -> str:
        return relative_link(page_path, m.page)

    def quote(m: Member, text: str) -> str:
        return quote_text(text, shows(page_path, xrefs[m.path]) if xrefs and m.path in xrefs else None)

    def cite(m: Member, s: Sentence) -> dict[str, str]:
        return {"text": quote(m, s.text), "link": citation(page_path, m.path, m.anchor, s.line, s.end),
                "where": _where(m.path, m.anchor, s.line)}

    mentioning: dict[str, list[tuple[int, Sentence]]] = {}
    by_name: set[tuple[str, int]] = set()  # (member, sentence) that name it, as a lead must
    # sentences in a section named for it are about it even when they do not name it again
    # (the items under "Ownership Rules": "Each value has an owner.")
    named_for: dict[str, set[int]] = {}
    for m in (*quoted, *newest):
        found = []
        # (a section of the document, not the document's own title)
        named = {j for j, section in enumerate(m.sections)
                 if (j == m.headed or _opens_with(str(section[0]), keys)) and section[0] != m.title}
        named_for[m.path] = named
        sentences = sentences_of(m)
        if not isinstance(sentences, Sentences):
            sentences = Sentences(sentences)
        # the sentences that may name it, those whose subject it is, and the key facts of
        # sections named for it: the others cannot be found below
        maybe = sentences.holding(needles) | sentences.with_subject_in(keys) | set(m.facts)
        for i in sorted(j for j in maybe if 0 <= j < len(sentences)):
            s = sentences[i]
            if s.kind not in ("para", "item", "table", "term") or not (20 <= len(s.text) <= 500):
                continue
            lower = s.text.lower()
            names_it = any(all(n in lower for n in group) for group in needles) \
                and any(k in _without(_spaced(s), longer_spaced) for k in keys)
            if names_it or (s.subject and _folded(s.subject) in keys):
                found.append((i, s))
                by_name.add((m.path, i))
            elif s.section in named and i in m.facts:
                found.append((i, s))
        mentioning[m.path] = found

    # one sense: the sources of another collection that share nothing with the main ones' use
    # of the name are left out of what the page says (they stay listed below)
    for path in _other_senses(main or quoted[:1], quoted, mentioning, concept):
        mentioning[path] = []
    # the lead: the sentence that defines it, from the source that defines it
    # the lead: the sentence that says what it is. In turn: the definition a main source gives
    # ("*Ownership* is a set of rules ..."), one another source gives, a term the author marks
    # where it is defined; else the first plain statement a source about it makes, the concept
    # as its subject ("The builder is the language's build system ...") if one comes early. Never
    # an aside that points elsewhere ("..., a feature that we'll discuss in Chapter 10"), chatter,
    # or a sentence that only refers back
    lead, lead_member = _choose_lead(concept, main, quoted, sentences_of, mentioning, by_name, named_for)
    # what it is when left alone: the default its reference states, from the source that leads
    # ("Default: `1` (fallback: `0`)" under a setting's entry)
    stated = next((m for m in (lead_member, *main, *quoted)
                   if m is not None and m.default is not None and 0 <= m.default[1] < len(sentences_of(m))), None)
    said = sentences_of(stated)[stated.default[1]] if stated is not None and stated.default is not None else None
    if said is not None and not _DEFAULT_LABEL.match(said.text):
        said = None  # a default said of something else in the entry: a key point, if anything
    default = None
    if stated is not None and stated.default is not None and said is not None:
        default = {**cite(stated, said), "value": quote(stated, stated.default[0])}

    # key points: what the most relevant sources say about it, each cited, a handful
    scored: list[tuple[float, int, Member, Sentence]] = []
    best = max((m.score for m in quoted), default=1.0) or 1.0
    for rank, m in enumerate(quoted):
        for i, s in mentioning.get(m.path, []):
            if s is lead or s.kind in ("term", "table") or _release_of(m, s)[0]:
                continue  # a statement tied to a release belongs to the changes over time
            point = _as_point(s.text, " " + " ".join(_words_of(s, 8)) + " ")
            if point is None:
                continue
            head, defined, bonus = point
            score = 4.0 * (m.score / best) + bonus
            if any(k in head for k in keys):
                score += 2
            if defined and defined[0] in concept.keys:
                score += 1.5
            if m in main:
                score += 1  # the sources about it say what it is better than those that use it
            if i in m.facts and (any(k in head for k in keys) or s.section in named_for.get(m.path, ())):
                score += 1.5  # what its source page holds as a key fact: a rule, a default, a figure
                if s.section in named_for.get(m.path, ()):
                    score += 1  # ... in the section about it
            scored.append((score, rank * 10_000 + i, m, s))
    scored.sort(key=lambda t: (-t[0], t[1]))
    points: list[dict[str, Any]] = []
    per_member: dict[str, int] = {}
    seen_text: set[str] = {lead.text} if lead is not None else set()
    if said is not None:
        seen_text.add(said.text)
    for score, _, m, s in scored:
        if len(points) >= KEY_POINTS or score < 1:
            break
        if s.text in seen_text or per_member.get(m.path, 0) >= (4 if m in main else 2):
            continue
        seen_text.add(s.text)
        per_member[m.path] = per_member.get(m.path, 0) + 1
        points.append({**cite(m, s), "source": escape_link_text(m.title), "source_link": link(m),
                       "context": _subject_of(m, s, concept)})

    # changes over time: statements tied to a release, in release order, newest first
    changes: list[tuple[tuple[Any, ...], str, dict[str, Any], Member]] = []
    for m in (*quoted, *newest):
        for _, s in mentioning.get(m.path, []):
            if s.kind == "table":
                continue  # a table's row is data (a release index, code side by side), not a statement
            version, date = _release_of(m, s)
            if not version or s.text in seen_text:
                continue
            changes.append((version_key(version), date or "", {**cite(m, s), "version": version, "date": date,
                                                                "source": escape_link_text(m.title), "source_link": link(m)}, m))
    changes.sort(key=lambda c: (c[0], c[1]), reverse=True)
    timeline: list[dict[str, Any]] = []
    cited = set(per_member)  # the members a key point or a change quotes
    for _, _, item, m in changes:
        if item["text"] in {t["text"] for t in timeline}:
            continue
        timeline.append(item)
        cited.add(m.path)
        if len(timeline) >= CHANGES:
            break

    # every source it gathers is linked from the page (links go both ways)
    in_main = {m.path for m in main}
    listed = [m for m in members if m.path not in in_main]
    # the front matter lists the sources the page shows (those it links, quotes or cites), not
    # every one that mentions it: at 10k sources a product's name was mentioned in 7,519, a 214 KB list an
    # agent read before the article; search finds every mention
    shown = {m.path for m in (*main, *listed[:ALSO_LISTED])} | cited
    if lead_member is not None:
        shown.add(lead_member.path)
    if said is not None and stated is not None:
        shown.add(stated.path)
    body = render(
        "concept_page.md.j2",
        title=concept.title,
        aliases=concept.aliases,
        lead={**cite(lead_member, lead), "text": quote(lead_member, _lead_text(lead.text))}
        if lead is not None and lead_member is not None else None,
        lead_source={"title": escape_link_text(lead_member.title), "link": link(lead_member)} if lead_member else None,
        default=default,
        main=[{"title": escape_link_text(m.title), "link": link(m), "section": _section_note(m, page_path)} for m in main],
        points=points,
        changes=timeline,
        related_section=RELATED_MARK,
        timelines=[{"title": escape_link_text(title), "link": relative_link(page_path, page + ".md")}
                   for title, page in fact_pages],
        also=[{"title": escape_link_text(m.title), "link": link(m)} for m in listed[:ALSO_LISTED]],
        more=_about(max(0, total - len(main) - ALSO_LISTED)),
        count=total,
    )
    meta = {
        "title": concept.title,
        "kind": "concept",
        "sources": [m.path for m in members if m.path in shown],
        "mentioned_in": _about(total),
        "aliases": concept.aliases,
    }
    return KeptPage(page_path, meta, body)


def _without(folded: str, longer: Sequence[str]) -> str:
    """A sentence's folded tokens with the longer names taken out ("the development server is"
    keeps no " server " for the concept "server" when "development server" is a concept of its own)."""
    for name in longer:
        if name in folded:
            folded = folded.replace(name, " | ")
    return folded


SENSE_WORDS = 2  # content words another collection's use of a name must share with the main one's


def _other_senses(main: Sequence[Member], quoted: Sequence[Member], mentioning: dict[str, list[tuple[int, Sentence]]],
                  concept: Concept) -> list[str]:
    """The quoted sources, in another collection than every main source, whose sentences about
    the name share fewer than SENSE_WORDS content words with the main sources' sentences (and
    titles): the same word for another thing ("Server" for a web server and for a test server)."""
    home = {_collection(m.path) for m in main}
    if not main or len({_collection(m.path) for m in quoted} | home) < 2:
        return []
    own = {w for k in concept.keys for w in k.split()}

    def words(m: Member) -> set[str]:
        found = {w for _, s in mentioning.get(m.path, []) for w in _words_of(s)}
        found.update(_tokens_of(m.title))
        return {w for w in found if len(w) > 2 and w not in own and is_content(w) and not w.isdigit()}

    reference = set().union(*(words(m) for m in main))
    return [m.path for m in quoted if _collection(m.path) not in home and mentioning.get(m.path)
            and len(words(m) & reference) < SENSE_WORDS]


def _collection(raw_path: str) -> str:
    """The top folder of raw/ a source sits in ("" for a file directly in raw/)."""
    parts = raw_path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "raw" else ""


def _subject_of(m: Member, s: Sentence, concept: Concept) -> str:
    """What a key point is about when the sentence does not say it: the term its markup
    describes, or the section named for one term it sits in ("*`SlugField`*" before "If
    `max_length` is not specified, Django will use a default length of 50."); "" when the
    sentence names it, or it is the concept itself."""
    subject = s.subject or ""
    if not subject and 0 <= s.section < len(m.sections):
        title = str(m.sections[s.section][0])
        if title != m.title and _CODE_NAME.search(title) and len(title) <= 60 and " " not in title.strip("`"):
            subject = title
    bare = subject.strip("`*").removesuffix("()")
    if not bare or bare.lower() in s.text.lower() or _folded(bare).strip() in concept.keys:
        return ""
    return f"*`{bare}`*" if _CODE_NAME.search(bare) else f"*{escape_link_text(bare)}*"


# a name in code: an identifier with an inner capital, an underscore or a dot, or all capitals
_CODE_NAME = lazy(r"`|\w[_.]\w|^[A-Z][A-Z0-9_]+$|[a-z][A-Z]|[A-Z]{2}[a-z]|\(\)$")


def _about(count: int) -> int:
    """A count as a concept page states it: exact below 100, else to two significant figures
    (4,774 -> 4,800), so that a source starting or ceasing to name a concept that thousands
    name leaves its page as it was (a one-note change at 10k sources rewrote ten pages for a
    count); `wikimem search` finds every mention."""
    if count < 100:
        return count
    step = 10 ** (len(str(count)) - 2)
    return (count + step // 2) // step * step


def _opens_with(title: str, keys: list[str]) -> bool:
    """A title whose first words are the concept ("Ownership Rules", "What Is Ownership?" is not
    needed here: that is the member's section named for it). `keys` spaced (" hash map ")."""
    openings = _openings(title)
    return any(k in openings for k in keys)


@lru_cache(maxsize=4096)
def _openings(title: str) -> frozenset[str]:
    """A section title's first content words, one, two, ... all of them, each spaced as a key
    (cached: every concept a source belongs to asks of each of its sections)."""
    words = _content_words(title)
    return frozenset(" " + " ".join(words[:n]) + " " for n in range(1, len(words) + 1))


@lru_cache(maxsize=1024)
def _content_words(title: str) -> tuple[str, ...]:
    """A section title's content words (cached: every concept a source belongs to asks)."""
    return tuple(w for w in tokens(title) if is_content(w))


def _choose_lead(concept: Concept, main: list[Member], quoted: list[Member], sentences_of: Any,
                 mentioning: dict[str, list[tuple[int, Sentence]]], by_name: set[tuple[str, int]],
                 named_for: dict[str, set[int]]) -> tuple[Sentence | None, Member | None]:
    keys = [f" {k} " for k in concept.own_keys]  # what says what it is, not what a word of its name is
    others = [m for m in quoted if m not in main]
    for group, strict in ((main, False), (others, True)):
        for m in group:
            sentences = sentences_of(m)
            # a reference's entry for it says what it is first, before any sentence that names it
            described = None if strict else _entry_description(m, sentences, concept)
            if described is not None:
                return described, m
            if m.definition is not None and m.definition < len(sentences) \
                    and _defines_plainly(sentences[m.definition]) and not _release_of(m, sentences[m.definition])[0]:
                penalty = _lead_penalty(sentences[m.definition].text)
                if penalty == 0 or (not strict and penalty > -2):
                    return sentences[m.definition], m
    for m in [*main, *others]:
        for i, s in mentioning.get(m.path, []):
            term = defined_term(s.text) if (m.path, i) in by_name else None
            if term and term[0] in concept.own_keys and term[2] and _lead_penalty(s.text) == 0 \
                    and not _release_of(m, s)[0]:
                return s, m
    # a glossary's entry for it (a section headed by its very name) opens by saying what it is:
    # the entry's first sentence, the concept as its subject ("A canary release sends ..."); in
    # another document such a section's first sentence leads only when it classifies the thing
    # ("X is a ..."): "Comments that contradict the code are ..." is advice, not a definition
    for m in [*main, *others]:
        glossary = _GLOSSARY.search(m.title) is not None
        entries = {j for j in named_for.get(m.path, ()) if _names_only(str(m.sections[j][0]), concept.key)}
        opened: set[int] = set()
        for i, s in mentioning.get(m.path, []):
            if s.section not in entries or s.section in opened:
                continue
            opened.add(s.section)  # an entry's first sentence that names it, or none
            if (m.path, i) in by_name and s.kind in ("para", "item") and not s.text.endswith((":", "?")) \
                    and not REFERS_BACK.match(s.text) and not _release_of(m, s)[0] \
                    and _lead_score(s, keys) >= 3 and _lead_penalty(s.text) == 0 \
                    and (glossary or _CLASSIFIES.search(s.text)):
                return s, m
    for m in [*main, *others]:
        plain = [(i, s) for i, s in mentioning.get(m.path, [])
                 if (m.path, i) in by_name and s.kind in ("para", "item") and len(s.text) >= 30 and "://" not in s.text
                 and _OPENS_SENTENCE.match(s.text)  # not a piece: "(PNG or SVG) like e.g. Wikipedia."
                 and s.text.rstrip("*_\"'”)").endswith((".", "!"))
                 and not REFERS_BACK.match(s.text) and not s.text.endswith((":", "?"))
                 and not _release_of(m, s)[0]]  # what a release changed is history, not what it is
        clean = [s for _, s in plain if _lead_penalty(s.text) == 0]
        subject = [s for s in clean[:8] if _lead_score(s, keys) >= 3]
        fair = [s for _, s in plain if _lead_penalty(s.text) >= -1.5]
        for found in (subject, clean, fair):
            if found:
                return found[0], m
    return None, None


def _entry_description(m: Member, sentences: Sequence[Sentence], concept: Concept) -> Sentence | None:
    """The description a reference gives a name in code under a heading that is that name alone
    (`MAX_RETRIES`, then "How many times a failed fetch is tried again."): the entry's first statement,
    which says what it is without naming it again; its default and version notes passed over."""
    headed = m.headed
    if headed is None or not is_entry_for(m.sections, headed, concept.title):
        return None
    looked = 0
    for s in sentences:
        if s.section < headed:
            continue
        if s.section > headed or looked >= 3:
            break
        if s.kind not in ("para", "item"):
            continue
        looked += 1
        if _NOT_A_DESCRIPTION.match(s.text) or _release_of(m, s)[0]:
            continue
        if 15 <= len(s.text) <= 300 and _OPENS_SENTENCE.match(s.text) and s.text.rstrip("*_\"'”)").endswith(".") \
                and not REFERS_BACK.match(s.text) and _lead_penalty(s.text) == 0:
            return s
        return None
    return None


def is_entry_for(sections: Sequence[Sequence[Any]], index: int | None, title: str) -> bool:
    """Whether section `index` is a reference's entry for the name `title`: its heading is that
    name in code and nothing else, spelled as the title is ("`PASSWORD`" is a setting's entry,
    not the entry of a concept "Password")."""
    if index is None or not 0 <= index < len(sections):
        return False
    named = entry_names(str(sections[index][0]))
    return len(named) == 1 and named[0][1].strip("`").removesuffix("()") == title.removesuffix("()")


# an entry's line that is no description of it: its default, a version note, a signature
# ("Default: `1`", "**Type**: int"; "Default broker URL." describes it)
_NOT_A_DESCRIPTION = lazy(r"[*_]*(?:(?:defaults?|type|signature)[*_]*\s*(?::|=|is\b|to\b|values?\b)|"
                          r"(?:new|changed|added|deprecated)\s+(?:in|since)\b|deprecated\b|since\b)"
                          r"|[*_]{1,2}[^*_:\n]{1,40}(?::[*_]{1,2}|[*_]{1,2}:)", re.IGNORECASE)  # a field: "**Command line:** ..."
# a line that states a default as its label does ("Default: `1`", "**Default:** `30`"), not a
# sentence that says what something in the entry defaults to ("When `detail` is not provided, it
# defaults to ...")
_DEFAULT_LABEL = lazy(r"[*_]*defaults?[*_]*\s*[:=]", re.IGNORECASE)


_PROSE_WORD = lazy(r"[^\W\d_]{2,}")


@lru_cache(maxsize=4096)  # a sentence is weighed for every concept it names
def _as_point(text: str, head: str) -> tuple[str, tuple[str, str, bool] | None, float] | None:
    """What a sentence is worth as a key point, whatever the concept: None for code, a bare link
    or a pointer elsewhere ("For more, see ..."); else `head`, its first eight tokens (folded, as
    _folded gives them), the term it defines, and its score from its own words (a default or
    requirement up; a pointer to a later part, chatter, a question, a sentence that refers back or
    narrates, a long one down)."""
    if code_like(text) or _thin(text) or POINTER.match(text):
        return None
    score = 0.0
    low = text.lower()
    if _SIGNAL_LOW.search(low):
        score += 1
    if points_forward(text, low):
        score -= 1.5  # "... described later in this chapter" points elsewhere
    if CHATTY.match(text) or text.endswith(("?", ":")):
        score -= 2.5
    if REFERS_BACK.match(text):
        score -= 1.5
    if narrates(text, low):
        score -= 1.5
    if len(text) > 300:
        score -= 1
    return head, defined_term(text), score


def _thin(text: str) -> bool:
    """A sentence that is little but a link or an address ("[Learn more.](https://...)",
    "Background: https://..."): under four words of its own once links are their text; or an
    aside in parentheses that is no sentence ("*(Optional, with `pkg[extra]`)*" after a list
    item, "(The Chicago Manual of Style, section 1.80)")."""
    bare = text.strip("*_ ")
    if bare.startswith("(") and bare.endswith(")") and not bare.endswith((".)", "!)", "?)")):
        return True
    if "](" in text or "://" in text:  # what LINK_OR_URL needs
        text = LINK_OR_URL.sub(lambda m: m.group(1) or " ", text)
    return len(_PROSE_WORD.findall(text)) < 4


_GLOSSARY = lazy(r"\b(?:glossary|glossaries|terminology|terms|definitions|vocabulary)\b", re.IGNORECASE)
_CLASSIFIES = lazy(r"^[^,;:]{0,80}?\b(?:is|are)\s+(?:a|an|one)\s")


def _names_only(heading: str, key: str) -> bool:
    """A heading that is the concept's name and nothing else ("Canary release", "What Is
    Ownership?"), its function words aside."""
    return " ".join(w for w in tokens(heading) if is_content(w) and w != "what") == key


def _defines_plainly(s: Sentence) -> bool:
    """A definition that says what the thing is: the author marks the term ("*Ownership* is"),
    or it classifies it ("X is a ..."); "The application context is created and destroyed as
    necessary" is a statement about it, and the first plain statement may say more. (The
    description of a term or an API name, "A proxy to the application ...", is taken when it is
    a phrase of its own, not "Enable testing mode." or "`template.txt` in the installation ...".)"""
    if not _OPENS_SENTENCE.match(s.text):
        return False  # a piece of one: "(PNG or SVG) like e.g. Wikipedia."
    if s.subject and not s.text.startswith("`") and len(s.text.split()) >= 4:
        return True
    term = defined_term(s.text)
    return bool(term and term[2]) or re.search(r"\b(?:is|are)\s+(?:a|an|the|one)\s", s.text) is not None


def _lead_score(s: Sentence, keys: list[str]) -> float:
    """How well a sentence that mentions a concept says what it is: the concept as its subject
    ("A feature flag turns ...", the longer name first), "X is ..."."""
    words = tokens(re.sub(r"^(?:(?:a|an|the|[\w.]+['’]s)\s+)+", "", s.text, flags=re.IGNORECASE))  # "The language’s closures are"
    text = " " + " ".join(words) + " "
    for k in sorted(keys, key=len, reverse=True):
        if text.startswith(k):
            # "X is a ..." says what it is; "X annotations ..." may be about something else
            # "X is", or "X, on the other hand, are" / "X (or Y) is"
            copula = re.match(r"(?:is|are|means|refers)\b", text[len(k):]) or (
                re.match(r"[^,(]{0,60}[,(]", s.text) and re.match(r"(?:\S+ ){0,5}?(?:is|are)\b", text[len(k):]))
            article = copula and re.search(r"\b(?:is|are)\s+(?:a|an|the|one)\s", s.text)  # "X is a ..."
            return 3 + 0.5 * k.count(" ") + (2 if copula else 0) + (1 if article else 0)
        at = (" " + " ".join(words[:4]) + " ").find(k)
        if at >= 0:
            # the head of a longer name that is then defined ("Application dispatching is the ...")
            after = (" " + " ".join(words) + " ")[at + len(k):]
            return 3 if re.match(r"(?:is|are)\s+(?:a|an|the|one)\b", after) else 1
    return 0


# the end of a sentence that introduces what follows it in the document ("..., and it looks like
# this:", "...; as follows:"): what it introduces (code, a list) is not on the page
_INTRODUCER = lazy(r"\s*[,;]\s*(?:and\s+|so\s+)?(?:(?:it|this|they|these|that|which)\s+(?:looks?|reads?)\s+"
                   r"like\s+(?:this|so)|as\s+follows)\s*:\s*$", re.IGNORECASE)


# a sentence opens with a capital or a name ("reStructuredText is ...", "html is an alias ..."),
# not with a bracket or a small word: the piece of one a split left ("(PNG or SVG) like e.g.
# Wikipedia.", "a template has the ability ...")
_OPENS_SENTENCE = lazy(
    r"(?![\"'“`*_]*(?:[(\[{,;:.]|(?:a|an|the|and|or|but|so|which|that|like|of|to|in|for|with|as|if|when|"
    r"while|because|than|then|e\.g|i\.e|etc)\b))")


def _lead_text(text: str) -> str:
    """A lead as a page shows it: without the end that introduces what is not shown ("A *string
    slice* is a reference to ... of a `String` …", not "..., and it looks like this:")."""
    match = _INTRODUCER.search(text)
    return text[:match.start()] + " …" if match else text


def _lead_penalty(text: str) -> float:
    """What makes a sentence a poor lead: chatter, narration, a pointer elsewhere, length, an end
    that introduces what follows it ("Images are a common use for substitution references:").
    Weighed on its words, not on its links' targets ("en-US" in a URL is no "us" narrating)."""
    penalty = 0.0
    if "](" in text or "://" in text:
        text = _LINK_TARGET.sub("", text)
    if text.endswith(":") and _INTRODUCER.search(text) is None:
        penalty -= 2  # what it introduces is not shown, and no clause says what the thing is alone
    if re.match(r"(?:Note|See|Warning|Tip|Hint)\b", text) or re.search(r"\bsee\s+[“\"`*_]", text):
        penalty -= 2  # a pointer elsewhere
    if _VERSION_NOTE.match(text):
        penalty -= 2  # when it changed ("*New in version 1.2:* In turbo mode, ..."), not what it is
    if CHATTY.match(text):
        penalty -= 3
    if points_forward(text):
        penalty -= 3
    if narrates(text):
        penalty -= 1.5
    if len(text) > 250:
        penalty -= 1
    return penalty


_LINK_TARGET = lazy(r"(?<=\])\([^()\s]*\)|<?https?://[^\s>)]+>?")
_VERSION_NOTE = lazy(r"[*_]*(?:new|changed|added|deprecated)\s+(?:in|since)\s+(?:version\s+)?v?\d", re.IGNORECASE)


def _release_of(m: Member, s: Sentence) -> tuple[str | None, str | None]:
    """The release a statement belongs to: the version the markup ties it to, else its changelog
    section's, else the document's own (a release note is about one release)."""
    if s.version:
        return s.version, None
    index = s.section
    while 0 <= index < len(m.sections):
        title, _level, _line, parent, version, date = m.sections[index]
        if version:
            return version, date
        index = parent
    if m.version:
        return m.version, m.date
    return None, None


def _section_note(m: Member, page_path: str) -> str:
    """"the section Foo, line N" when a member is main because a section is named for it."""
    if m.level >= DEFINED or m.headed is None or not (0 <= m.headed < len(m.sections)):
        return ""
    title, _level, line = m.sections[m.headed][:3]
    return f"section [{escape_link_text(title.replace('`', ''))}]({citation(page_path, m.path, m.anchor, line)})"


__all__ = ["ABOUT", "Member", "Part", "Resolved", "Sentences", "concept_page", "part_holding", "part_spans", "shows",
           "source_page",
           "source_pages", "outline",
           "split_outline", "quote_text", "citation",
           "version_key"]

"""Sections, and the versions and dates they carry: a changelog holds many releases in one file.

Every loader gives headings with a level; here they become a tree of Sections, each block
learns the section it sits in, and a section that heads a release ("Version 3.1.0" then
"Released 2024-11-13"; "Release 0.16 (2020-01-12)"; "## [1.2.0] - 2024-01-01") carries that
version and date, so lint, timelines and search know which statement is newer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from typing import Any

from .document import Block, Section

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_TEXT_DATE = re.compile(
    r"\b(\d{1,2})\.?\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?,?\s+((?:19|20)\d\d)\b"
    r"|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b"
)


def find_date(text: str) -> str | None:
    """The first calendar date in a short text, as YYYY-MM-DD."""
    iso = _ISO_DATE.search(text)
    m = _TEXT_DATE.search(text)
    candidates: list[tuple[int, str]] = []
    if iso:
        candidates.append((iso.start(), f"{iso.group(1)}-{iso.group(2)}-{iso.group(3)}"))
    if m:
        if m.group(1):
            day, month, year = m.group(1), m.group(2), m.group(3)
        else:
            month, day, year = m.group(4), m.group(5), m.group(6)
        candidates.append((m.start(), f"{year}-{_MONTHS[month[:3].lower()]:02d}-{int(day):02d}"))
    for _, value in sorted(candidates):
        try:
            dt.date.fromisoformat(value)
            return value
        except ValueError:
            continue
    return None


def meta_date(meta: dict[str, Any]) -> str | None:
    for key in ("date", "published", "released", "created", "updated"):
        value = meta.get(key)
        if isinstance(value, dt.datetime):
            return value.date().isoformat()
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, str) and (found := find_date(value)):
            return found
    return None


# a version as release notes write it: 3.1.0, 0.16, 1.2.0rc1, 2.0.0-beta.2, 3.2.x, v2
VERSION = r"v?(\d+(?:\.\d+)+(?:\.x)?(?:[-.]?(?:a|b|c|rc|alpha|beta|dev|post|pre|final)\.?\d*)*|\d+(?=\s*$|\s*[(\[:\u2013\u2014]|\s+-))"
# "Version 3.1.0", "Release 0.16 (2020-01-12)", "[1.2.0] - 2024-01-01", "Changes in 0.17",
# "What's new in 2.0", "v2.0.0", "1.4.2 (unreleased)"
_MARKED = re.compile(
    r"^(?:(?:version|release|changes\s+(?:in|for)|what['’]?s\s+new\s+in|new\s+in)\s+)?\[?" + VERSION
    + r"\]?(?P<rest>.*)$", re.IGNORECASE)
# "Go 1.21", "Flask 2.0.1 Release Notes", "Docutils 0.17": a product name before the number
_PRODUCT = re.compile(r"^(?P<product>[A-Za-z][\w+.-]*(?:\s[A-Za-z][\w+.-]*)?)\s+" + VERSION + r"(?P<rest>.*)$")
_LEAD_WORD = re.compile(r"^(?:version|release|changes|what|new|\[|v\d)", re.IGNORECASE)
_RELEASED = re.compile(r"^\s*(?:\(?\s*(?:released|release date|date)\b|\(?unreleased\b)", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class HeadingVersion:
    version: str
    date: str | None
    marked: bool  # says it is a release ("Version 2.0", "[2.0]"), rather than a bare number
    product: str | None = None


def heading_version(title: str) -> HeadingVersion | None:
    """The release a heading names, if it names one, with the date it gives."""
    title = " ".join(title.split()).strip(" #*=")
    if len(title) > 120 or len(title.split()) > 9:
        return None
    match = _MARKED.match(title)
    product = None
    if match is None:
        match = _PRODUCT.match(title)
        if match is None:
            return None
        product = match.group("product")
    version = match.group(1)
    rest = match.group("rest").strip()
    date = find_date(rest)
    # what follows the number may be a date, "(unreleased)", a codename, or "Release Notes";
    # a longer phrase means the heading is about something else ("2.0 API changes")
    tail = re.sub(r"[()\[\]\u2013\u2014:,-]", " ", _ISO_DATE.sub("", rest)).split()
    if date is None and len(tail) > 4:
        return None
    marked = bool(_LEAD_WORD.match(title)) or title.startswith("[")
    return HeadingVersion(version.lstrip("vV"), date, marked, product)


def section_tree(blocks: list[Block]) -> tuple[list[Block], list[Section]]:
    """Sections from the heading blocks, every block told the innermost section it sits in,
    and the release sections given their version and date."""
    sections: list[Section] = []
    open_at: list[int] = []  # indexes of the open sections, outermost first
    placed: list[Block] = []
    for block in blocks:
        if block.kind == "heading":
            while open_at and sections[open_at[-1]].level >= block.level:
                open_at.pop()
            parent = open_at[-1] if open_at else -1
            sections.append(Section(block.text, block.level, block.line, parent))
            open_at.append(len(sections) - 1)
        current = open_at[-1] if open_at else -1
        placed.append(block if block.section == current else block.in_section(current))
    return placed, _versions(placed, sections)


def release_of(sections: list[Section], index: int) -> Section | None:
    """The release section `index` belongs to: itself, or the nearest enclosing section that
    heads a release (a changelog's "Version 3.1.0" over its "Fixes"); None outside any."""
    while 0 <= index < len(sections):
        section = sections[index]
        if section.version:
            return section
        if section.parent >= index:
            break  # a parent comes before its sections (section_tree): anything else is no tree
        index = section.parent
    return None


def _versions(blocks: list[Block], sections: list[Section]) -> list[Section]:
    """Give release sections their version and date.

    A bare number in a heading is a release only among siblings that are releases too (a
    changelog has many); "Version 2.0", "Release 0.16" and "[1.2.0]" are releases alone.
    """
    found = {i: heading_version(s.title) for i, s in enumerate(sections)}
    siblings: dict[int, int] = {}
    for i, s in enumerate(sections):
        if found[i] is not None:
            siblings[s.parent] = siblings.get(s.parent, 0) + 1
    first_text: dict[int, str] = {}
    for block in blocks:
        if block.kind != "heading" and block.section >= 0 and block.section not in first_text:
            first_text[block.section] = block.text
    out = []
    for i, s in enumerate(sections):
        hv = found[i]
        if hv is None or not (hv.marked or siblings.get(s.parent, 0) >= 2):
            out.append(s)
            continue
        date = hv.date
        lead = first_text.get(i, "")
        if date is None and lead and (_RELEASED.match(lead) or len(lead) < 60):
            date = find_date(lead[:200])
        out.append(dataclasses.replace(s, version=hv.version, date=date))
    return out


def title_version(title: str) -> str | None:
    """The release a document's own title names ("Go 1.21 Release Notes", "Go 1.21 is released!")."""
    match = re.search(r"\b[A-Za-z][\w+.-]*\s+v?(\d+(?:\.\d+)+)\b", title) or re.search(
        r"\b[A-Za-z][\w+.-]*\s+(?:version\s+)?v?(\d+)\s+(?:release|is released)", title, re.IGNORECASE)
    return match.group(1) if match else None


_COMMENT_META = re.compile(r"\A\s*<!--(\{.*?\})-->", re.DOTALL)


def comment_meta(body: str, warnings: list[str]) -> dict[str, Any]:
    """The metadata go.dev's documents open with, `<!--{"Title": "Data Race Detector"}-->`
    (HTML and Markdown alike), keys lowercased; {} when there is none."""
    found = _COMMENT_META.match(body)
    if not found:
        return {}
    try:
        data = json.loads(found.group(1))
    except ValueError:
        warnings.append("unreadable metadata comment ignored")
        return {}
    return {str(k).lower(): v for k, v in data.items()} if isinstance(data, dict) else {}

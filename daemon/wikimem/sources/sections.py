"""Sections, and the versions and dates they carry: a changelog holds many releases in one file.

Every loader gives headings with a level; here they become a tree of Sections, each block
learns the section it sits in, and a section that heads a release ("Version 3.1.0" then
"Released 2024-11-13"; "Release 0.16 (2020-01-12)"; "## [1.2.0] - 2024-01-01") carries that
version and date, so lint, timelines and search know which statement is newer.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from ..lexicon import ISO_DATE, VERSION, find_date, release_date, unreleased
from ..patterns import lazy
from .document import Block, Section

# "Version 3.1.0", "Release 0.16 (2020-01-12)", "[1.2.0] - 2024-01-01", "Changes in 0.17",
# "Changes in Version 4.2 (2024/05/01)", "What's new in 2.0", "v2.0.0", "1.4.2 (unreleased)"
_MARKED = lazy(
    r"^(?:(?:(?:changes\s+(?:in|for)|what['’]?s\s+new\s+in|new\s+in)\s+(?:(?:version|release)\s+)?|version\s+|release\s+))?\[?"
    + VERSION + r"\]?(?P<rest>.*)$", re.IGNORECASE)
# "Name 1.21", "Name 2.0.1 Release Notes", "name 6.1.0 (2020-09-26)": a product name before the number
_PRODUCT = lazy(r"^(?P<product>[A-Za-z][\w+.-]*(?:\s[A-Za-z][\w+.-]*)?)\s+" + VERSION + r"(?P<rest>.*)$")
_LEAD_WORD = lazy(r"^(?:version|release|changes|what|new|\[|v\d)", re.IGNORECASE)
_RELEASED = lazy(r"^\s*(?:\(?\s*(?:released|release date|date|published)\b|\(?unreleased\b)", re.IGNORECASE)
# a heading's link, as a Markdown loader keeps it ("[v1.2.0](https://.../releases/tag/v1.2.0)"): its text
_HEADING_LINK = lazy(r"\[([^\[\]]*)\]\([^()\s]*\)")


@dataclasses.dataclass(frozen=True)
class HeadingVersion:
    version: str
    date: str | None
    marked: bool  # says it is a release ("Version 2.0", "[2.0]"), rather than a bare number
    product: str | None = None
    unreleased: bool = False  # says it has no release date yet ("1.4.2 (unreleased)")


def heading_version(title: str) -> HeadingVersion | None:
    """The release a heading names, if it names one, with the date it gives.

    What follows the number may be a date (the release's: "name 6.1.0 (2020-09-26)", even with
    words after it, "(2018-10-15 - not published ...)"), "(unreleased)", a codename or "Release
    Notes"; without a date, a longer phrase means the heading is about something else ("2.0
    API changes"). A date in the future is no release date (lexicon.release_date)."""
    title = " ".join(_HEADING_LINK.sub(r"\1", title).split()).strip(" #*=")
    if len(title) > 160:
        return None
    match = _MARKED.match(title)
    product = None
    if match is None:
        match = _PRODUCT.match(title)
        if match is None:
            return None
        product = match.group("product")
        version = match.group(2)
    else:
        version = match.group(1)
    rest = match.group("rest").strip()
    date = release_date(rest)
    tail = re.sub(r"[()\[\]\u2013\u2014:,-]", " ", ISO_DATE.sub("", rest)).split()
    if date is None and (len(tail) > 4 or len(title.split()) > 9):
        return None
    marked = bool(_LEAD_WORD.match(title)) or title.startswith("[")
    # a date to come says the release is not out yet, as "(unreleased)" does
    upcoming = date is None and (unreleased(rest) or find_date(rest) is not None)
    return HeadingVersion(version.lstrip("vV"), date, marked, product, upcoming)


# a paragraph that is only a release set in bold ("**4.16.0**", "**Version 2.1** (2024-03-01)")
_BOLD_RELEASE = lazy(r"^\*\*(?P<name>[^*\n]{1,60})\*\*(?P<rest>[^*\n]{0,60})$")
# a paragraph that is only a short emphasized name ("*Bug fixes*", "**Other changes:**")
_EMPHASIZED_LABEL = lazy(r"^(?P<mark>\*{1,2})(?P<name>[^*\n]{1,40}?):?(?P=mark):?$")
BOLD_RELEASES_MIN = 2  # paragraphs of a document that name a release in bold, for them to be its releases
LABEL_WORDS = 4  # words of such a name, at most, for it to head a release's lists
_VERSION_START = lazy(r"\s*v?\d")


def bold_releases(blocks: list[Block]) -> list[Block]:
    """Releases a changelog marks with bold paragraphs rather than headings ("**4.16.0**" alone on
    its line, its changes below it), read as the headings they stand for: each one level under
    the heading before it, when the document has at least two such paragraphs (one bold version
    is emphasis), and the short emphasized paragraphs that head a release's lists ("*New
    features*", "*Bug fixes*") one level under their release."""
    releases = {i for i, b in enumerate(blocks) if b.kind == "para" and _bold_release(b.text)}
    if len(releases) < BOLD_RELEASES_MIN:
        return blocks
    out: list[Block] = []
    heading_level = 1  # the level of the last heading the markup gives
    release_level = 0  # the level given to the release being read, 0 outside one
    for i, block in enumerate(blocks):
        if block.kind == "heading":
            heading_level, release_level = block.level, 0
        elif i in releases:
            release_level = heading_level + 1
            block = Block("heading", " ".join(block.text.replace("**", " ").split()), block.line, release_level,
                          subject=block.subject)
        elif release_level and block.kind == "para" and i + 1 < len(blocks) and blocks[i + 1].kind == "item":
            label = _EMPHASIZED_LABEL.match(block.text)
            if label and len(label.group("name").split()) <= LABEL_WORDS and not _VERSION_START.match(label.group("name")):
                block = Block("heading", label.group("name").strip(), block.line, release_level + 1,
                              subject=block.subject)
        out.append(block)
    return out


# a document of one heading whose body is a definition list of at least this many entries (a
# reference of keywords, options, a glossary) has a section per entry
TERM_SECTIONS_MIN = 12


def term_sections(blocks: list[Block]) -> list[Block]:
    """A reference written as one long definition list under its title (`name`, then what it
    is; forty keywords in a row) read as the sections it stands for: each entry a heading one
    level under the title, its term kept under it, so that its page can be read by parts, an
    entry's description in the part that names it. A document with headings of its own below
    its title keeps its sections as they are."""
    headings = [b for b in blocks if b.kind == "heading"]
    if len(headings) > 1:
        return blocks
    entries = {i for i, b in enumerate(blocks) if b.kind == "term" and b.level == 0 and b.subject == b.text}
    if len(entries) < TERM_SECTIONS_MIN:
        return blocks
    level = headings[0].level + 1 if headings else 1
    out: list[Block] = []
    for i, block in enumerate(blocks):
        if i in entries:
            out.append(Block("heading", block.text, block.line, level, subject=block.subject))
        out.append(block)
    return out


def _bold_release(text: str) -> bool:
    """Whether a paragraph's text is only a release in bold: a version, said bare or as a
    release ("Version 2.1", not "Python 3.12"), with at most a date or a codename after it."""
    m = _BOLD_RELEASE.match(text)
    if m is None or not _MARKED.match(m.group("name").strip()):
        return False
    found = heading_version(m.group("name") + m.group("rest"))
    return found is not None and (found.date is not None or len(m.group("rest").split()) <= 3)


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
            # a heading's version is a release the markup declares (a changelog directive's)
            sections.append(Section(block.text, block.level, block.line, parent, block.version))
            open_at.append(len(sections) - 1)
        current = open_at[-1] if open_at else -1
        placed.append(block if block.section == current else block.in_section(current))
    return placed, _versions(placed, sections)


def release_of(sections: list[Section], index: int) -> Section | None:
    """The release section `index` belongs to: itself, or the nearest enclosing section that
    heads a release (a changelog's "Version 3.1.0" over its "Fixes"), or the changes not yet
    released ("[Unreleased]": its version None, `unreleased` true); None outside any."""
    while 0 <= index < len(sections):
        section = sections[index]
        if section.version or section.unreleased:
            return section
        if section.parent >= index:
            break  # a parent comes before its sections (section_tree): anything else is no tree
        index = section.parent
    return None


def _versions(blocks: list[Block], sections: list[Section]) -> list[Section]:
    """Give release sections their version and date.

    A bare number in a heading is a release only among siblings that are releases too (a
    changelog has many), or as the title of a document of its own (one page of notes per
    release, "13.0.0" over "Backwards incompatible changes"); "Version 2.0", "Release 0.16" and
    "[1.2.0]" are releases alone.
    """
    found = {i: heading_version(s.title) for i, s in enumerate(sections)}
    top = [i for i, s in enumerate(sections) if s.parent < 0]
    titled = top[0] if len(top) == 1 and top[0] == 0 and _only_a_release(sections[0].title, found[0]) else None
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
        if s.version:
            # a release the markup declares (a changelog directive's :version:): its date as
            # its heading gives it
            out.append(dataclasses.replace(s, date=hv.date if hv else None, unreleased=bool(hv and hv.unreleased)))
            continue
        words = " ".join(_HEADING_LINK.sub(r"\1", s.title).split()).strip("[]").split()
        if words and not words[0][:1].isdigit() and unreleased(" ".join(words[:2])):
            # a section of changes not released yet, named so from its first words: Keep a
            # Changelog's "[Unreleased]", "Unreleased changes", "Release TBD" (a version that
            # says it is unreleased, "1.4.2 (unreleased)", is a release without a date below)
            out.append(dataclasses.replace(s, unreleased=True))
            continue
        if hv is None or not (hv.marked or siblings.get(s.parent, 0) >= 2 or i == titled):
            out.append(s)
            continue
        date = hv.date
        lead = first_text.get(i, "")
        # the release's date, when the heading has none: its first line ("Released 2024-11-13")
        said = ""
        if date is None and not hv.unreleased and lead and (_RELEASED.match(lead) or len(lead) < 60):
            said = lead[:200]
            date = release_date(said)
        out.append(dataclasses.replace(s, version=hv.version, date=date, unreleased=hv.unreleased or (
            date is None and (unreleased(lead[:60]) or (bool(said) and find_date(said) is not None)))))
    return [_topic(out, i) for i in range(len(out))]


def _only_a_release(title: str, found: HeadingVersion | None) -> bool:
    """Whether a heading says a release and nothing else: its number, perhaps its date ("13.0.0",
    "v2.1 (2024-05-01)"); "2.0 Changelog" and "Python 3.15" say more."""
    if found is None or found.product is not None:
        return False
    rest = " ".join(_HEADING_LINK.sub(r"\1", title).split()).strip(" #*=[]").lstrip("vV")
    rest = rest[len(found.version):] if rest.startswith(found.version) else rest
    return found.date is not None or not re.search(r"[^\W\d_]", rest)


def _topic(sections: list[Section], index: int) -> Section:
    """A numbered heading inside a release, whose number does not refine the release's and
    which is titled unlike it ("Python 3.15 Support", "PEP 747: Type Forms" inside "Mypy 2.4"),
    is a topic of that release, not a release: its version and date dropped. "Mypy 2.4.1"
    inside "Mypy 2.4" stays a release, and so does "1.2.0 (2024-05-01)" under "2024"."""
    section = sections[index]
    if not section.version:
        return section
    parent, seen = section.parent, 0
    while 0 <= parent < index and seen < 64:
        outer = sections[parent]
        if outer.version:
            if section.version.startswith(outer.version + ".") or _named_before(section) == _named_before(outer):
                return section
            return dataclasses.replace(section, version=None, date=None, unreleased=False)
        parent, seen = outer.parent, seen + 1
    return section


def _named_before(section: Section) -> str:
    """What a versioned heading says before its version ("mypy" of "Mypy 2.4", "" of "2024")."""
    return str(section.title).split(str(section.version), 1)[0].strip(" #*`:[-v").lower()


_COMMENT_META = lazy(r"\A\s*<!--(\{.*?\})-->", re.DOTALL)


def comment_meta(body: str, warnings: list[str]) -> dict[str, Any]:
    """The metadata a document may open with in an HTML comment, `<!--{"Title": "Data Race Detector"}-->`
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

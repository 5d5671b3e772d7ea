"""What a loader makes of a raw file: a Document of blocks, each knowing its line and section.

Every loader keeps the mapping back to the raw file (a line, or a page for PDF) so the wiki
can cite exactly where a sentence came from, and the section each block sits in, so a
changelog's statements carry the version and date of their own release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# a table of more rows than this is data (a generated list of plugins, an index of releases):
# its rows give no concept, fact or key point, though the source page still shows the table
LONG_TABLE = 50


class SkipSource(Exception):
    """The file is not a source wikimem can read; the message says why in one line."""


@dataclass(frozen=True)
class Block:
    """One piece of a document.

    kind: heading | para | item | table | code | term. A `term` is a name the document
    defines (a glossary or definition-list term, an API description such as
    `.. py:data:: DEBUG`); the blocks that define it carry its name as `subject`; an API
    description given inside another's (a method in its class's) is a member, level 1. A `table`
    block is one row of a table (its cells joined by " | "), and knows how many rows the
    table has (`rows`; `data` for a long one).
    """

    kind: str
    text: str
    line: int  # 1-based line in the raw file (page number for PDF)
    level: int = 0  # headings: 1 for the document's title, 2 for its sections, ...; terms: 1 for a member (below)
    section: int = -1  # index into Document.sections of the innermost section holding it
    subject: str | None = None  # the term or API name this block defines or describes
    version: str | None = None  # a fact the markup ties to a version (`.. versionadded:: 2.0`)
    rows: int = 0  # a table's row: how many rows its table has (see LONG_TABLE)

    def in_section(self, section: int) -> Block:
        """This block in section `section`: dataclasses.replace written out (twice as fast, and
        section_tree places every block of every document)."""
        return Block(self.kind, self.text, self.line, self.level, section, self.subject, self.version, self.rows)

    @property
    def data(self) -> bool:
        """A row of a long table: data (a list of plugins, a changelog's index), not prose; it
        defines nothing and states no fact a reader would look for in it alone."""
        return self.kind == "table" and self.rows > LONG_TABLE


def counted(blocks: list[Block], start: int) -> None:
    """Tell the rows of the table that blocks[start:] holds how many rows it has."""
    rows = sum(1 for b in blocks[start:] if b.kind == "table")
    for at in range(start, len(blocks)):
        b = blocks[at]
        if b.kind == "table":
            blocks[at] = Block(b.kind, b.text, b.line, b.level, b.section, b.subject, b.version, rows)


@dataclass(frozen=True)
class Section:
    """A heading and what it heads. A changelog's release sections carry their version and date
    (sections.release_of finds the release a block belongs to)."""

    title: str
    level: int
    line: int
    parent: int = -1  # index of the enclosing section, -1 for none
    version: str | None = None  # the release it heads, when it heads one
    date: str | None = None  # that release's date, never a date in the future
    unreleased: bool = False  # it heads changes not released yet ("[Unreleased]", "2.0.59 (unreleased)")


@dataclass(frozen=True)
class TocEntry:
    """A document the source lists in its reading order (a reST toctree, a SUMMARY.md of links)."""

    target: str  # workspace-relative raw path when it resolves, else the text as written
    title: str | None = None
    line: int = 0  # where the document lists it (0: not known)
    group: str | None = None  # the caption of the toctree that lists it ("Getting Started")


@dataclass
class Document:
    path: str  # workspace-relative, e.g. raw/notes/a.md
    format: str  # markdown | rst | text | html | pdf | present
    title: str
    blocks: list[Block]
    meta: dict[str, Any] = field(default_factory=dict)
    date: str | None = None
    anchor: str = "L"  # "L" for line anchors (#L12), "page=" for PDF pages
    warnings: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    version: str | None = None  # the release the whole document is about ("Acme 1.21 Release Notes")
    description: str | None = None  # the document's own one-line summary (front matter, abstract)
    toc: list[TocEntry] = field(default_factory=list)
    keywords: list[tuple[str, int]] = field(default_factory=list)  # index entries, tags: (term, line)
    # what `:ref:` may name here (`.. _label:`): (label, line, the title it shows: a section's, a
    # caption; None for what has none)
    labels: list[tuple[str, int, str | None]] = field(default_factory=list)
    # the file an include before the document's first title brings in (`.. include:: ../CHANGES.rst`),
    # as written: Sphinx shows that file's title, which the offline backend looks up
    title_from: str | None = None
    # the title is its file's name (title_from_name): the document gives none of its own
    named: bool = False

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


SIGNATURE = "Signature: "  # the lead of the sentence that shows an API's signature (rst's Api directives)
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def title_from_name(path: str) -> str:
    stem = Path(path).stem
    if stem.lower() in ("readme", "index") and len(Path(path).parts) > 2:
        stem = Path(path).parent.name  # raw/attrs/README.md is attrs' README
    if _DOTTED_NAME.fullmatch(stem):
        return stem  # a module's page named for it ("acme.utils.text_tools"): code, as written
    title = re.sub(r"[-_]+", " ", stem).strip() or stem
    if title.isupper():
        title = title.lower()
    return title[:1].upper() + title[1:]

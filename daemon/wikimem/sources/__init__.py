"""Loaders: a raw file becomes a Document of blocks, read as its author wrote it.

The format is known by content, not only by extension (a `.txt` may be reStructuredText,
Markdown or plain text); reST goes through docutils (sources/rst.py), Markdown through
markdown-it-py (sources/markdown.py), HTML through BeautifulSoup and markdownify, PDF through
pdfium. Every block keeps its line (or PDF page) and its section, and sections that head a
release carry its version and date (sources/sections.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..lexicon import find_date, meta_date, title_release
from ..links import LINK_OR_URL, LINK_TARGET
from ..naming import is_ignored_name as is_ignored_name  # re-exported: the watcher uses it
from ..pages import FrontMatterError, parse_meta, split_front_matter
from ..patterns import lazy
from . import xref
from .document import Block, Document, Section, SkipSource, TocEntry, title_from_name
from .html import load_html
from .inline import clean_inline, code_span, drop_comments
from .markdown import parse_markdown
from .pdf import load_pdf
from .rst import NestedTooDeep, parse_rst
from .sections import bold_releases, comment_meta, section_tree, term_sections

__all__ = [
    "Block", "Document", "Section", "SkipSource", "TocEntry", "clean_inline", "drop_comments", "find_date",
    "is_ignored_name", "load_source", "parse_markdown", "read_text", "sniff_format",
    "SUPPORTED_SUFFIXES", "TEXT_SUFFIXES",
]

MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd", ".mdx"}
RST_SUFFIXES = {".rst", ".rest"}
PLAIN_SUFFIXES = {".txt", ".text"}
PRESENT_SUFFIXES = {".article", ".slide"}
# a fragment a Sphinx set includes (`.. include:: global.rst.inc`: substitutions, a shared
# section): read when it holds reStructuredText, skipped otherwise (a C include is no document)
INCLUDE_SUFFIXES = {".inc"}
TEXT_SUFFIXES = MARKDOWN_SUFFIXES | RST_SUFFIXES | PLAIN_SUFFIXES | PRESENT_SUFFIXES | INCLUDE_SUFFIXES
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES
# the text files a project keeps without an extension, read as .txt (format by content)
PLAIN_NAMES = frozenset(
    "readme news changes changelog history install contributing hacking todo thanks authors notes faq "
    "upgrading release-notes".split())


def source_suffix(path: str | Path) -> str:
    """The suffix that says how a raw file is read: its own, or `.txt` for a project's
    extensionless text files (README, NEWS, CHANGES, INSTALL, ...)."""
    name = path.name if isinstance(path, Path) else posixpath.basename(path)
    stem, dot, ext = name.rpartition(".")
    if dot and stem:
        return "." + ext.lower() if ext else ""
    return ".txt" if name.lower() in PLAIN_NAMES else ""

_CONTROL = lazy(r"[\x00-\x08\x0b\x0e-\x1f]")


def read_text(path: Path, raw_bytes: bytes | None = None) -> tuple[str, list[str]]:
    """Decode a text file: UTF-8 (with BOM), else a clearly reported Windows-1252 fallback."""
    data = path.read_bytes() if raw_bytes is None else raw_bytes
    if b"\x00" in data[:8192]:
        raise SkipSource("binary file (contains NUL bytes)")
    warnings: list[str] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("cp1252", errors="replace")
        warnings.append(f"not valid UTF-8 (byte {exc.start}); decoded as Windows-1252")
    controls = len(_CONTROL.findall(text, 0, 8192))
    if controls > 0.1 * max(1, min(len(text), 8192)):
        raise SkipSource("binary file (mostly control characters)")
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


# --- knowing the format by content ------------------------------------------------------------

# a directive, or a substitution's definition (`.. |acme| replace:: Acme`)
_RST_DIRECTIVE = lazy(r"^[ \t]*\.\. (?:\|[^|\n]+\|\s+)?[A-Za-z][\w:-]*::", re.MULTILINE)
_RST_TARGET = lazy(r"^\.\. _[^:\n]+:", re.MULTILINE)
_RST_ROLE = lazy(r":[A-Za-z][\w:+-]*:`[^`\n]+`")
_RST_FIELD = lazy(r"^:[A-Za-z][\w -]*: \S", re.MULTILINE)
_RST_REFERENCE = lazy(r"`[^`\n]+`__?(?!\w)")
_RST_LITERAL = lazy(r"::\n\n[ \t]+\S")
_ADORNMENT = lazy(r"^([=\-~^\"'`#*+<>:._])\1{2,}[ \t]*$")
_ADORNMENT_LINE = lazy(_ADORNMENT.pattern, re.MULTILINE)
_MD_HEADING = lazy(r"^#{1,6} \S", re.MULTILINE)
_MD_FENCE = lazy(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
_MD_TABLE = lazy(r"^\|?[ \t]*:?-{3,}:?[ \t]*\|", re.MULTILINE)


def _count(pattern: re.Pattern[str], text: str, most: int, *needs: str) -> int:
    """How many times `pattern` matches `text`, counted up to `most` (the search stops there).
    `needs`: strings one of which every match holds; a text without any is not searched (a
    pattern that matches nowhere is tried at every character: a Markdown link's, over a reST
    file, was half of telling the format)."""
    if needs and not any(need in text for need in needs):
        return 0
    return sum(1 for _ in itertools.islice(pattern.finditer(text), most))


def _underlines(text: str) -> tuple[int, int, int, int]:
    """Section underlines: lines of one punctuation mark under a line of text at least as long,
    as ("=" or "-" underlines, which Markdown has too; the others, reST's alone; titles with an
    overline of the same mark too, which only reST has, whatever the mark; the adornment lines
    of those that look like Markdown's code fences, "~~~" and "```")."""
    either = only_rst = overlined = fenced = 0
    for match in _ADORNMENT_LINE.finditer(text):
        end = match.start() - 1  # the newline before the adornment; none on the first line
        if end < 0:
            continue
        start = text.rfind("\n", 0, end) + 1
        previous = text[start:end]
        if previous.strip() and not _ADORNMENT.match(previous) and len(match.group(0).rstrip()) >= len(previous.rstrip()):
            over = text[text.rfind("\n", 0, max(0, start - 1)) + 1 : max(0, start - 1)] if start > 0 else ""
            if over.rstrip() == match.group(0).rstrip():
                overlined += 1
                fenced += 2 if match.group(1) in "~`" else 0
            elif match.group(1) in "=-":
                either += 1
            else:
                only_rst += 1
    return either, only_rst, overlined, fenced


# a document that opens with reST's explicit markup (a target, a comment, a directive) or a
# field list (`:orphan:`, `:tocdepth: 2`): neither Markdown nor plain text starts so
_RST_OPENING = lazy(r"\A\s*(?:\.\. (?:_[^:\n]+:|[A-Za-z][\w:-]*::|\S)|:[A-Za-z][\w -]*:(?:[ \t]|$))", re.MULTILINE)


def sniff_format(text: str, suffix: str) -> str:
    """markdown | rst | text: what a plain-text file really holds.

    `.md` is Markdown and `.rst` reST whatever they hold; a `.txt` is read as reST when it
    has reST's marks (directives, roles, field lists, targets, section adornments Markdown
    does not use), as Markdown when it has Markdown's, and as plain text otherwise.
    """
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in RST_SUFFIXES:
        return "rst"
    sample = text[:200_000]
    rst = _count(_RST_DIRECTIVE, sample, 10, ".. ") * 2 + _count(_RST_TARGET, sample, 5, ".. _") \
        + _count(_RST_ROLE, sample, 5, ":`") + _count(_RST_FIELD, sample, 5, ":") \
        + _count(_RST_REFERENCE, sample, 5, "`_") + _count(_RST_LITERAL, sample, 3, "::\n\n")
    markdown = _count(_MD_HEADING, sample, 10, "# ") + _count(_MD_FENCE, sample, 5, "```", "~~~") * 2 \
        + _count(LINK_TARGET, sample, 5, "](") + _count(_MD_TABLE, sample, 3, "---") * 2
    # "=" and "-" underline headings in Markdown too; the others only in reST
    underlines, rst_only, overlined, fenced = _underlines(sample)
    rst += 2 * rst_only + min(underlines, 5) + 3 * min(overlined, 3)
    markdown -= 2 * min(fenced, 5)  # an overlined title's "~~~~" lines are no code fences
    if _RST_OPENING.match(sample):
        rst += 2
    if rst >= 3 and rst > markdown:
        return "rst"
    if markdown >= 2:
        return "markdown"
    if underlines >= 2:
        return "rst"
    return "text"


# --- loaders -------------------------------------------------------------------------------------


def _front_matter(text: str, warnings: list[str]) -> tuple[dict[str, Any], str, int]:
    fm, body, offset = split_front_matter(text)
    if fm is None:
        return {}, body, offset
    try:
        return parse_meta(fm), body, offset
    except FrontMatterError as exc:
        warnings.append(f"{exc}; front matter ignored")
        return {}, body, offset


def _meta_text(meta: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


def _keywords(meta: dict[str, Any]) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for key in ("tags", "keywords"):
        value = meta.get(key)
        items = value if isinstance(value, list) else str(value).split(",") if isinstance(value, str) else []
        found.extend((str(item).strip(), 1) for item in items if str(item).strip())
    return found


def _finish(doc: Document, *, titled_by_heading: bool = False) -> Document:
    """Sections and their releases; the document's own version. `titled_by_heading`: the title
    is the text of the document's first heading; when that heading is the first of several
    releases (a CHANGES.md of "## Version 8.5.0", "## Version 8.4.2", ...), it titles one
    release, not the document, which is then named for its file."""
    blocks, sections = section_tree(term_sections(bold_releases(help_options(doc.blocks))))
    doc.blocks, doc.sections = blocks, sections
    if titled_by_heading:
        releases = [s for s in sections if s.version]
        if len(releases) >= 2 and doc.title == releases[0].title:
            doc.title, doc.named = title_from_name(doc.path), True
    if doc.version is None:
        declared = re.search(r"\d+(?:\.\d+)+", str(doc.meta.get("version") or ""))
        doc.version = declared.group(0) if declared else (found[1] if (found := title_release(doc.title)) else None)
    return doc


# a line of a command's --help output that lists an option: "  -c FILE, --config=FILE  Read ...",
# its description on the line or on the lines under it, indented deeper
_OPTION_FORM = r"-{1,2}[A-Za-z0-9?][\w-]*(?:[ =][^\s,]+)?"  # one form of an option: "-c FILE", "--config=FILE", "-?"
_HELP_OPTION = lazy(rf"^(?P<indent>[ \t]{{0,8}})(?P<options>{_OPTION_FORM}"
                    r"(?:,[ \t]*-{1,2}[A-Za-z0-9][\w-]*(?:[ =][^\s,]+)?)*)(?:[ \t]{2,}(?P<text>\S.*))?$")
_OPTION = lazy(_OPTION_FORM)
HELP_OPTIONS_MIN = 3  # options with a description, at least, for a code block to be read as a --help listing


def help_options(blocks: list[Block]) -> list[Block]:
    """A command's --help output pasted as a code block ("Options:" and its options) read as the
    option list it is, as reStructuredText's option lists are: an item per option after the
    block ("`-c CONFIG_FILE`, `--extension_configs=CONFIG_FILE`: Read extension configurations
    from CONFIG_FILE."), at the option's line. The code block stays as it is."""
    out: list[Block] = []
    for block in blocks:
        out.append(block)
        if block.kind != "code" or "-" not in block.text:
            continue
        found: list[tuple[int, str, list[str], int]] = []  # (line, options, description lines, indent)
        for offset, line in enumerate(block.text.split("\n")):
            m = _HELP_OPTION.match(line)
            if m:
                found.append((block.line + offset, m.group("options"), [m.group("text")] if m.group("text") else [],
                              len(m.group("indent").expandtabs(4))))
            elif found and line.strip() and len(line) - len(line.lstrip()) > found[-1][3] + 2:
                found[-1][2].append(line.strip())  # the description goes on, indented under its option
            elif line.strip():
                found.append((0, "", [], 0))  # any other line ends the option before it
        options = [f for f in found if f[0] and f[2]]
        if len(options) < HELP_OPTIONS_MIN:
            continue
        for at, names, described, _ in options:
            forms = _OPTION.findall(names)
            shown = ", ".join(code_span(o) for o in forms)
            # it describes the option, named by its last form without its argument ("--config")
            out.append(Block("item", f"{shown}: {' '.join(described)}", at, subject=re.split(r"[ =]", forms[-1])[0]))
    return out


# a towncrier news fragment: `1234.bugfix.rst`, `1234.feature.1.md`, an orphan `+abc.misc.rst`
_FRAGMENT = lazy(r"^(?P<id>\d+|\+[\w-]+)\.(?P<type>[A-Za-z]+)(?:\.\d+)?\.(?:rst|rest|md|markdown|txt)$")
_FRAGMENT_TYPES = {"bugfix": "bug fix", "bugfixes": "bug fix", "bug": "bug fix", "fix": "bug fix", "doc": "documentation",
                   "docs": "documentation", "misc": "change", "trivial": "change", "removal": "removal",
                   "deprecation": "deprecation", "feature": "feature", "breaking": "breaking change",
                   "improvement": "improvement", "vendor": "vendored change", "packaging": "packaging change",
                   "contrib": "contributor change", "performance": "performance change", "security": "security fix"}


def _change_entry(doc: Document, changes: int) -> Document:
    """A document that is one unreleased change (a towncrier news fragment, `1234.bugfix.rst`;
    a file of `.. change::` entries alone, which the changelog extension pulls into the next
    release) and names no title: titled for what it is ("Unreleased bug fix 1234"), under one
    heading whose section is unreleased (Section.unreleased), so its statements are never
    taken for a release's."""
    name = posixpath.basename(doc.path)
    fragment = _FRAGMENT.match(name)
    if fragment is None and not changes:
        return doc
    ident = fragment.group("id").lstrip("+") if fragment else posixpath.splitext(name)[0]
    kind = _FRAGMENT_TYPES.get(fragment.group("type").lower(), fragment.group("type").lower()) if fragment else "change"
    doc.title = f"Unreleased {kind} {ident}"
    first = min((b.line for b in doc.blocks), default=1)
    doc.blocks.insert(0, Block("heading", doc.title, first, 1))
    return doc


def load_markdown(path: str, text: str) -> Document:
    warnings: list[str] = []
    meta, body, offset = _front_matter(text, warnings)
    meta = {**comment_meta(body, warnings), **meta}
    toc: list[TocEntry] = []
    is_summary = posixpath.basename(path).lower() == "summary.md"
    labels: list[tuple[str, int, str | None]] = []
    # a SUMMARY.md's lists are a book's chapters; another document's links that open a list item
    # (or make up a paragraph) and lead to another file of the set are its map (a MyST toctree too)
    includes: list[tuple[str, int, bool]] = []
    blocks = parse_markdown(body, offset, toc=toc, summary=is_summary, labels=labels, includes=includes)
    title = _meta_text(meta, "title") or _heading_title(blocks) or _documented_object(body)
    # a file included before any heading: Sphinx (MyST) shows that file's title
    first_heading = next((b.line for b in blocks if b.kind == "heading"), None)
    title_from = next((target for target, line, from_top in includes[:1]
                       if from_top and (first_heading is None or line < first_heading)), None)
    date = meta_date(meta) or find_date("\n".join(b.text for b in blocks[:6]))
    # a heading's text is clean already; a front matter title may hold markup
    title = clean_inline(title) if title and title == _meta_text(meta, "title") else title
    doc = Document(path, "markdown", title or title_from_name(path), blocks, meta, date,
                   warnings=warnings, description=_meta_text(meta, "description", "summary", "subtitle"),
                   toc=[_resolve(path, e) for e in toc], keywords=_keywords(meta), labels=labels,
                   title_from=None if _meta_text(meta, "title") else title_from, named=not title)
    if not title:
        doc = _change_entry(doc, 0)
    return _finish(doc, titled_by_heading=bool(title) and title != _meta_text(meta, "title"))


# the object an API page documents, by the autodoc directive it opens on (mkdocstrings' "::: acme.utils")
_AUTODOC = lazy(r"\A\s*:::[ \t]+(?P<name>[A-Za-z_][\w.]*)[ \t]*$", re.M)


def _documented_object(body: str) -> str | None:
    """The name an API page without a heading documents, where its text opens on the directive
    that renders it: the page is the object's ("::: acme.utils.text" -> "acme.utils.text")."""
    m = _AUTODOC.match(body)
    return m.group("name") if m else None


def _heading_title(blocks: list[Block]) -> str | None:
    """A Markdown document's own title: its one H1 wherever it is, else its first heading when
    nothing but a banner comes before it (a logo, badges, links, a rule). Otherwise the
    headings are sections: a README that opens with a paragraph and then has "# Quick start",
    "# Links", ..., or a logo, a tagline and "## Sponsors", has no title of its own and is
    named for its file."""
    h1 = [b for b in blocks if b.kind == "heading" and b.level == 1]
    if len(h1) == 1:
        return h1[0].text
    for block in blocks:
        if block.kind == "heading":
            return block.text
        if len(re.findall(r"[^\W\d_]{2,}", LINK_OR_URL.sub(" ", block.text))) >= 3:
            return None  # text: the document has begun
    return None


def load_rst(path: str, text: str) -> Document:
    warnings: list[str] = []
    meta, body, offset = _front_matter(text, warnings)
    try:
        result = parse_rst(body, offset)
    except NestedTooDeep as exc:  # memory for docutils grows with depth: the text read as text
        doc = load_plain(path, text)
        doc.warnings.append(f"{exc}; read as plain text")
        return doc
    except Exception as exc:  # noqa: BLE001 - docutils on input it never expected: read it as text
        doc = load_plain(path, text)
        doc.warnings.append(f"reStructuredText could not be parsed ({type(exc).__name__}); read as plain text")
        return doc
    meta = {**result.meta, **meta}
    if result.errors:
        first = result.errors[0]
        more = f" and {len(result.errors) - 1} more" if len(result.errors) > 1 else ""
        warnings.append(f"reStructuredText problems: {first}{more}; the rest was read")
    title = _meta_text(meta, "title") or result.title
    date = meta_date(meta) or find_date("\n".join(b.text for b in result.blocks[:6]))
    doc = Document(path, "rst", title or title_from_name(path), result.blocks, meta, date,
                   warnings=warnings, description=_meta_text(meta, "abstract", "description", "summary", "subtitle"),
                   toc=[_resolve(path, e) for e in result.toc], keywords=[*_keywords(meta), *result.keywords],
                   labels=result.labels, title_from=None if _meta_text(meta, "title") else result.title_from,
                   named=not title)
    if not title:
        doc = _change_entry(doc, result.changes)
    return _finish(doc, titled_by_heading=result.first_of_several and title == result.title)


def _resolve(path: str, entry: TocEntry) -> TocEntry:
    """A toctree or SUMMARY.md target as the raw path it names, when it names one."""
    target = entry.target.strip()
    if not target or re.match(r"^[a-z]+:", target, re.IGNORECASE):
        return entry
    base = "raw" if target.startswith("/") else posixpath.dirname(path)
    resolved = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    if not resolved.startswith("raw/"):
        return entry
    return TocEntry(resolved, entry.title, entry.line, entry.group)


def load_plain(path: str, text: str) -> Document:
    """Plain text: paragraphs between blank lines; the title is a short first line."""
    blocks: list[Block] = []
    start = None
    lines = text.split("\n")
    for i, line in enumerate([*lines, ""]):
        if line.strip():
            if start is None:
                start = i
            continue
        if start is not None:
            para = "\n".join(lines[start:i]).strip()
            blocks.append(Block("para", para, start + 1))
            start = None
    title = ""
    for index, block in enumerate(blocks[:5]):
        if _ADORNMENT.match(block.text.split("\n", 1)[0]) and "\n" in block.text:
            # an overline ("=====" over the title and under it): markup, not text
            block = blocks[index] = Block(block.kind, block.text.split("\n", 1)[1], block.line + 1)
        first = block.text.split("\n")[0].strip()
        if re.match(r"(?i)(copyright|\(c\)|all rights reserved|license)", first) or "://" in first:
            continue
        following = block.text.split("\n")[1].lstrip() if "\n" in block.text else ""
        if following[:1].islower():
            break  # a sentence going on to the next line: the text has begun, without a title
        if 0 < len(first) <= 80 and not first.endswith((".", ",", ";", ":")):
            title = first
            blocks[index] = Block("heading", first, block.line, 1)
            rest = block.text.split("\n", 1)[1] if "\n" in block.text else ""
            at = block.line + 1
            if rest and _ADORNMENT.match(rest.split("\n", 1)[0]):
                # the title's underline ("Widget" over "======"): markup, not text
                rest, at = (rest.split("\n", 1)[1] if "\n" in rest else ""), at + 1
            if rest.strip():
                blocks.insert(index + 1, Block("para", rest.strip(), at))
            break
    doc = Document(path, "text", title or title_from_name(path), blocks, {}, find_date(text[:2000]), named=not title)
    return _finish(doc)


def load_present(path: str, text: str) -> Document:
    """Go present format (.article, .slide): title line, header block, `*` sections, `.code` directives."""
    lines = text.split("\n")
    title = ""
    header_end = 0
    for i, line in enumerate(lines):
        if line.strip():
            title = line.strip()
            header_end = i
            break
    i = header_end + 1
    header_lines = []
    while i < len(lines) and not lines[i].startswith("*"):
        header_lines.append(lines[i])
        i += 1
        if len(header_lines) > 20:
            break
    date = find_date("\n".join(header_lines))
    subtitle = next((line.strip() for line in header_lines if line.strip()), None)
    body_lines = []
    for j, line in enumerate(lines):
        if j <= header_end:
            body_lines.append("")
            continue
        heading = re.match(r"^(\*{1,3})\s+(.*)$", line)
        if heading:
            body_lines.append("#" * (len(heading.group(1)) + 1) + " " + heading.group(2))
        elif re.match(r"^\.(code|play|image|iframe|html|link|caption|background|video|figure)\b", line):
            body_lines.append("")
        elif line.startswith(": "):
            body_lines.append(line[2:])  # presenter notes are prose too
        else:
            body_lines.append(line)
    blocks = parse_markdown("\n".join(body_lines))
    doc = Document(path, "present", title or title_from_name(path), blocks, {}, date,
                   description=subtitle if subtitle and not find_date(subtitle) else None, named=not title)
    return _finish(doc)


def load_source(file: Path, rel_path: str, *, max_bytes: int, xrefs: bool = False) -> Document:
    """Load one raw file. Raises SkipSource with a one-line reason for anything it cannot use.

    `xrefs`: leave the marks of cross-references (`:ref:`, `:doc:`) in the text, for the offline
    backend to resolve against the whole set (sources/xref.py); without it, each shows the text
    it shows alone (its author's, else its target made readable)."""
    suffix = source_suffix(file)
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipSource(f"unsupported file type {suffix or '(no extension)'}")
    size = file.stat().st_size
    if size > max_bytes:
        raise SkipSource(
            f"too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB cap; raise max_source_mb in wikimem.toml)"
        )
    if size == 0:
        raise SkipSource("empty file")
    if suffix in PDF_SUFFIXES:
        return load_pdf(rel_path, file, title_from_name(rel_path))
    text, warnings = read_text(file)
    if not text.strip():
        raise SkipSource("empty file (only white space)")
    if suffix in HTML_SUFFIXES:
        doc = load_html(rel_path, text)
    elif suffix in PRESENT_SUFFIXES:
        doc = load_present(rel_path, text)
    else:
        fmt = sniff_format(text, ".txt" if suffix in INCLUDE_SUFFIXES else suffix)
        if suffix in INCLUDE_SUFFIXES and fmt != "rst":
            raise SkipSource("an include file that holds no reStructuredText")
        doc = load_rst(rel_path, text) if fmt == "rst" else load_markdown(rel_path, text) if fmt == "markdown" \
            else load_plain(rel_path, text)
    doc.warnings[:0] = warnings
    if not any(b.kind != "code" for b in doc.blocks) and not doc.labels:
        # (a file of definitions alone, `.. |acme| replace:: Acme`, is what others include)
        raise SkipSource("no prose found to compile")
    if not xrefs and doc.format in ("rst", "markdown"):
        doc.blocks = [b if xref.OPEN not in b.text else dataclasses.replace(b, text=xref.plain(b.text))
                      for b in doc.blocks]
    return doc


# a few lines of each format, read before a fork (ready_readers): what reading a first file of it
# loads and sets up, in a worker, is then loaded in the process the workers are forked from
_SAMPLES = {
    "markdown": "# Acme\n\nA *sentence* with `code`, [a link](https://example.com/) and **more**.\n\n- An item\n",
    "rst": "Acme\n====\n\nA *sentence* with ``code``, :func:`acme.run` and `a link <https://example.com/>`_.\n\n"
           "- An item\n\n.. note::\n\n   A note.\n",
    "html": "<html><head><title>Acme</title></head><body><h1>Acme</h1><p>A <em>sentence</em>.</p></body></html>",
}


def ready_readers(suffixes: Iterable[str], least: int = 2) -> None:
    """Load the libraries that read the given kinds of file (one suffix a file), and set up
    their parsers, by reading a few lines of each format: for a process about to fork workers
    that will read such files. Each worker then shares what was loaded here rather than
    loading it itself on its first file of the kind (markdown-it, docutils and its language
    modules, BeautifulSoup and markdownify: a tenth of a second, about). A kind fewer than
    `least` files need is left to the worker that reads them. PDF's library is not loaded
    before a fork: pdfium is a C library that sets itself up when loaded."""
    wanted: Counter[str] = Counter()
    for suffix in suffixes:
        # a .txt may be Markdown or reST (sniff_format), an HTML page is read as Markdown
        if suffix in MARKDOWN_SUFFIXES | PLAIN_SUFFIXES | PRESENT_SUFFIXES | HTML_SUFFIXES:
            wanted["markdown"] += 1
        if suffix in RST_SUFFIXES | PLAIN_SUFFIXES | INCLUDE_SUFFIXES:
            wanted["rst"] += 1
        if suffix in HTML_SUFFIXES:
            wanted["html"] += 1
    loaders = {"markdown": load_markdown, "rst": load_rst, "html": load_html}
    for kind, sample in _SAMPLES.items():
        if wanted[kind] >= least:
            loaders[kind](f"raw/ready.{kind}", sample)


def outline(doc: Document) -> dict[str, Any]:
    """What search needs of a loaded source besides its lines: title, date, anchor, the
    headings ([line, level, text]) and the sections' releases ([line, parent, version]); for a
    format search cannot read line by line (HTML, PDF), its blocks ([kind, text, line, level]).
    Also the documents its table of contents names (index.md's reading order). The compile keeps
    it in state.db by content hash, so indexing never parses a file again."""
    found: dict[str, Any] = {
        "title": doc.title, "date": doc.date, "anchor": doc.anchor,
        "headings": [[b.line, b.level, b.text] for b in doc.blocks if b.kind == "heading"],
        "sections": [[s.line, s.parent, s.version] for s in doc.sections],
        "toc": [t.target for t in doc.toc],
    }
    if source_suffix(doc.path) not in TEXT_SUFFIXES:
        found["blocks"] = [[b.kind, b.text, b.line, b.level] for b in doc.blocks]
    return found


def replace(doc: Document, **changes: Any) -> Document:
    """A copy of a Document with some fields changed (lint narrows the blocks it reads)."""
    return dataclasses.replace(doc, **changes)


__all__ += ["Section", "outline", "ready_readers", "replace", "title_from_name", "load_markdown", "load_rst", "load_plain",
            "load_present"]

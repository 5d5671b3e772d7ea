"""Loaders: a raw file becomes a Document of blocks, each block knowing its line in the file.

Every loader keeps the mapping back to the raw file (a line, or a page for
PDF) so the wiki can cite exactly where a sentence came from.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .naming import is_ignored_name as is_ignored_name  # re-exported: the watcher uses it
from .pages import FrontMatterError, parse_meta, split_front_matter

log = logging.getLogger("wikimem.sources")
TEXT_SUFFIXES = {".md", ".markdown", ".mdown", ".txt", ".text", ".rst", ".article", ".slide"}
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES


class SkipSource(Exception):
    """The file is not a source wikimem can read; the message says why in one line."""


@dataclass(frozen=True)
class Block:
    kind: str  # heading | para | code | item | table
    text: str
    line: int  # 1-based line in the raw file (page number for PDF)
    level: int = 0


@dataclass
class Document:
    path: str  # workspace-relative, e.g. raw/notes/a.md
    format: str
    title: str
    blocks: list[Block]
    meta: dict[str, Any] = field(default_factory=dict)
    date: str | None = None
    anchor: str = "L"  # "L" for line anchors (#L12), "page=" for PDF pages
    warnings: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


def read_text(path: Path, raw_bytes: bytes | None = None) -> tuple[str, list[str]]:
    """Decode a text file: UTF-8 (with BOM), else a clearly reported Latin-1 fallback."""
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


# --- inline Markdown clean-up -------------------------------------------------------------

# Sources are anyone's files: no pattern here may backtrack over a line from each of its
# starting points, or one pathological line (a long run of "[" or "([a](") costs its length
# squared. Classes stop at the characters that start the next attempt; runs that never need
# to give anything back are possessive.
#
# link text may hold one level of brackets: [`Null[T]`](/pkg/database/sql/#Null)
_TEXT = r"((?:[^\[\]]|\[[^\[\]]*+\])*+)"
_IMAGE = re.compile(r"!\[" + _TEXT + r"\]\((?:[^()]|\([^()]*\))*+\)")
# a target may hold balanced parentheses (wiki/Rust_(language))
_LINK = re.compile(r"\[" + _TEXT + r"\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))*+)>?(?:\s+\"[^\"\n]*+\")?\s*\)")
_REF_LINK = re.compile(r"\[([^\[\]]++)\]\[[^\[\]]*+\]")
_FOOTNOTE = re.compile(r"\[\^[^\[\]]++\]")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)  # whole-block tests only; drop_comments() for text
_SKIP_TAG = re.compile(r"^<(style|script|svg)\b", re.IGNORECASE)
_QUOTE_MARK = re.compile(r"^\s*(?:>\s?)+")
_TABLE_RULE = re.compile(r"\|?[\s:|-]+\|?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_REF_DEF = re.compile(r"^\[[^\]]+\]:\s*\S+")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_HEADING_ATTR = re.compile(r"(?<!\s)\s*\{#[^{}]*+\}\s*$")
_MDBOOK = re.compile(r"\{\{#[^}]*\}\}")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_SPACES = re.compile(r"[ \t]+")
_LONE_LT = re.compile(r"<(?=[^<>]*+(?:<|\Z))")
_GO_DOC_META = re.compile(r"\A\s*<!--(\{.*?\})-->", re.DOTALL)
_PEP_HEADER = re.compile(r"^([A-Z][A-Za-z-]+):\s+(.*)$")


def _keep_absolute(match: re.Match[str]) -> str:
    text, url = match.group(1), match.group(2)
    if re.match(r"^(https?|mailto):", url, re.IGNORECASE):
        return f"[{text}]({url})"
    return text


def drop_comments(text: str) -> str:
    """Text without its <!-- comments --> (an unclosed one and what follows it stay): one pass,
    where the pattern would scan to the end of the text from every unclosed opening."""
    if "<!--" not in text:
        return text
    pieces = []
    at = 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces.append(text[at:start])
        at = end + 3
    pieces.append(text[at:])
    return "".join(pieces)


def clean_inline(text: str) -> str:
    """Drop the source's own relative links (they would break in the wiki) and markup noise."""
    text = drop_comments(text)
    text = _MDBOOK.sub("", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(_keep_absolute, text)
    text = _REF_LINK.sub(lambda m: m.group(1), text)
    text = _FOOTNOTE.sub("", text)
    if "<" in text:
        text = _TAG.sub("", _BR.sub(" ", text))
    text = html.unescape(text) if "&" in text else text
    return _SPACES.sub(" ", text).strip()


# --- Markdown ------------------------------------------------------------------------------

_ATX = re.compile(r"^(#{1,6})\s+(.*)$")  # the title is group 2 without its closing #s, stripped where used
_FENCE = re.compile(r"^\s*(```+|~~~+)")
# list items, and definition-list bodies (": text", as the Go release notes write them)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)]|:)\s+")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:.])\1{2,}\s*$")


def parse_markdown(text: str, line_offset: int = 0, *, rst: bool = False) -> list[Block]:
    """Line-based block parser: headings, paragraphs, list items, tables, code.

    Not a full CommonMark parser: it needs only block boundaries and the line
    each block starts on, which full parsers do not all keep.
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    para: list[str] = []
    para_start = 0
    para_kind = "para"

    def flush() -> None:
        nonlocal para
        if para:
            joined = "\n".join(para).strip()
            if joined:
                blocks.append(Block(para_kind, joined, para_start + line_offset))
        para = []

    in_fence: str | None = None
    fence_lines: list[str] = []
    fence_start = 0
    in_comment = False
    in_skip_tag: str | None = None
    rst_literal = False
    i = 0
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        stripped = line.strip()
        if in_fence:
            if stripped.startswith(in_fence):
                blocks.append(Block("code", "\n".join(fence_lines), fence_start + line_offset))
                in_fence, fence_lines = None, []
            else:
                fence_lines.append(line)
            i += 1
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            i += 1
            continue
        if in_skip_tag:
            if f"</{in_skip_tag}" in line.lower():
                in_skip_tag = None
            i += 1
            continue
        if rst_literal:
            if stripped and not line[:1].isspace():
                rst_literal = False
            else:
                i += 1
                continue
        fence = _FENCE.match(line)
        if fence:
            flush()
            in_fence, fence_start = fence.group(1)[:3], lineno
            i += 1
            continue
        if stripped.startswith("<!--") and "-->" not in stripped:
            flush()
            in_comment = True
            i += 1
            continue
        tag = _SKIP_TAG.match(stripped) if stripped.startswith("<") else None
        if tag and f"</{tag.group(1).lower()}" not in stripped.lower():
            flush()
            in_skip_tag = tag.group(1).lower()
            i += 1
            continue
        if stripped.startswith(">") and not rst:
            # a blockquote: its text is prose like any other
            line = _QUOTE_MARK.sub("", line)
            stripped = line.strip()
        if (
            not stripped
            or _MDBOOK.fullmatch(stripped)
            or _HTML_COMMENT.fullmatch(stripped)
            or _REF_DEF.match(stripped)
        ):
            flush()
            i += 1
            continue
        if rst and stripped.startswith(".. "):
            flush()
            # a directive and its indented body
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
                i += 1
            continue
        atx = _ATX.match(line) if not rst else None
        if atx:
            flush()
            title = clean_inline(_HEADING_ATTR.sub("", atx.group(2).rstrip().rstrip("#").rstrip()))
            if title:
                blocks.append(Block("heading", title, lineno + line_offset, len(atx.group(1))))
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            not para
            and stripped
            and (_SETEXT.match(nxt) if not rst else _RST_UNDERLINE.match(nxt))
            and not _ITEM.match(line)
            and (not rst or len(nxt.strip()) >= len(stripped) - 1)
        ):
            level = 1 if nxt.strip()[0] in "=#" else 2
            blocks.append(Block("heading", clean_inline(stripped), lineno + line_offset, level))
            i += 2
            continue
        if rst and _RST_UNDERLINE.match(line) and not para:
            i += 1  # an overline
            continue
        if _ITEM.match(line):
            flush()
            para_kind, para_start, para = "item", lineno, [_ITEM.sub("", line)]
        elif stripped.startswith("|"):
            if para_kind != "table":
                flush()
                para_kind, para_start = "table", lineno
            if not _TABLE_RULE.fullmatch(stripped):
                para.append(stripped)
        elif line[:4] == "    " and not para and not rst:
            flush()
            code_start = lineno
            code: list[str] = []
            while i < len(lines) and (lines[i][:4] == "    " or not lines[i].strip()):
                code.append(lines[i])
                i += 1
            text = "\n".join(code).strip("\n")
            if _looks_like_prose(text):
                # indented prose: the body of a list or definition item after a blank line
                blocks.extend(parse_markdown(textwrap.dedent(text), code_start - 1 + line_offset))
            else:
                blocks.append(Block("code", text, code_start + line_offset))
            continue
        else:
            if para_kind == "table" or (para_kind == "item" and not line[:1].isspace()):
                flush()
            if not para:
                para_kind, para_start = "para", lineno
            para.append(line)
        if rst and stripped.endswith("::"):
            flush()
            rst_literal = True
        i += 1
    flush()
    if in_fence and fence_lines:
        blocks.append(Block("code", "\n".join(fence_lines), fence_start + line_offset))
    # clean inline markup of prose blocks once, here
    cleaned: list[Block] = []
    for b in blocks:
        if b.kind in ("code", "heading"):
            cleaned.append(b)
        elif text := clean_inline(b.text):
            cleaned.append(Block(b.kind, text, b.line, b.level))
    return cleaned


_PROSE_START = re.compile(r"^(?:<!--.*?-->\s*)*[\[`*_\"(]*[A-Z]")
_CODE_MARKS = re.compile(r"[{};]|:=|=>|->|\w\(|^[ \t]*(?:#|//|\$ )", re.MULTILINE)


def _looks_like_prose(text: str) -> bool:
    """An indented block that reads as sentences rather than code."""
    plain = drop_comments(text).strip()
    if not plain or not _PROSE_START.match(plain):
        return False
    words = plain.split()
    code_marks = len(_CODE_MARKS.findall(_INLINE_CODE.sub("", plain)))
    return len(words) >= 6 and code_marks <= len(words) // 25 and bool(re.search(r"[.:!?]\s*$", plain))


# --- dates ---------------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_TEXT_DATE = re.compile(
    r"\b(\d{1,2})\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?,?\s+((?:19|20)\d\d)\b"
    r"|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2}),?\s+((?:19|20)\d\d)\b"
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


def _meta_date(meta: dict[str, Any]) -> str | None:
    for key in ("date", "published", "created", "updated"):
        value = meta.get(key)
        if isinstance(value, dt.datetime):
            return value.date().isoformat()
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, str) and (found := find_date(value)):
            return found
    return None


def _first_heading(blocks: list[Block]) -> str | None:
    heads = [b for b in blocks if b.kind == "heading"]
    if not heads:
        return None
    top = min(b.level for b in heads)
    return next(b.text for b in heads if b.level == top)


def _title_from_name(path: str) -> str:
    stem = Path(path).stem
    return re.sub(r"[-_]+", " ", stem).strip() or stem


# --- loaders -------------------------------------------------------------------------------


def load_markdown(path: str, text: str, *, rst: bool = False) -> Document:
    warnings: list[str] = []
    meta: dict[str, Any] = {}
    fm, body, offset = split_front_matter(text)
    if fm is not None:
        try:
            meta = parse_meta(fm)
        except FrontMatterError as exc:
            warnings.append(f"{exc}; front matter ignored")
            meta = {}
    blocks = parse_markdown(body, offset, rst=rst)
    if rst and blocks and blocks[0].kind == "para" and not meta:
        # PEP-style RFC 822 header ("PEP: 8", "Title: ...", "Created: ...")
        lines = [ln for ln in blocks[0].text.split("\n") if not ln.startswith(" ")]
        header = [_PEP_HEADER.match(line) for line in lines]
        if header and all(header):
            meta = {m.group(1).lower(): m.group(2).strip() for m in header if m}
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    title = title or _first_heading(blocks) or _title_from_name(path)
    date = _meta_date(meta) or find_date("\n".join(b.text for b in blocks[:6]))
    fmt = "rst" if rst else "markdown"
    return Document(path, fmt, clean_inline(title), blocks, meta, date, warnings=warnings)


def load_plain(path: str, text: str) -> Document:
    blocks = []
    for block in parse_markdown(text):
        # plain text has no headings: a setext-looking underline is still a heading
        blocks.append(block)
    title = _first_heading(blocks)
    if not title:
        lines = [
            line.strip()
            for b in blocks[:4]
            if b.kind == "para" and not re.search(r"(?i)copyright|license", b.text)
            for line in b.text.split("\n")
            if line.strip() and not re.match(r"(?i)(copyright|\(c\)|all rights reserved|license)", line.strip())
        ]
        first_line = lines[0] if lines else ""
        title = first_line if 0 < len(first_line) <= 80 else _title_from_name(path)
    return Document(path, "text", title, blocks, {}, find_date(text[:2000]))


def load_present(path: str, text: str) -> Document:
    """Go present format (.article, .slide): title line, header block, `*` sections, `.code` directives."""
    lines = text.split("\n")
    blocks: list[Block] = []
    title = ""
    header_end = 0
    for i, line in enumerate(lines):
        if line.strip():
            title = line.strip()
            header_end = i
            break
    # header: lines after the title until the first `*` section or two blank lines
    i = header_end + 1
    header_lines = []
    while i < len(lines) and not lines[i].startswith("*"):
        header_lines.append(lines[i])
        i += 1
        if len(header_lines) > 20:
            break
    date = find_date("\n".join(header_lines))
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
    return Document(path, "present", title or _title_from_name(path), blocks, {}, date)


def load_html(path: str, text: str) -> Document:
    from bs4 import BeautifulSoup
    from markdownify import markdownify

    fm, body, offset = split_front_matter(text)
    meta: dict[str, Any] = {}
    warnings: list[str] = []
    if fm is not None:
        try:
            meta = parse_meta(fm)
        except FrontMatterError as exc:
            warnings.append(f"{exc}; front matter ignored")
    go_meta = _GO_DOC_META.match(body)
    if go_meta:
        import json

        try:
            meta.update({k.lower(): v for k, v in json.loads(go_meta.group(1)).items()})
        except ValueError:
            warnings.append("unreadable metadata comment ignored")
    # a "<" with another "<" before any ">" opens no tag; left as it is, the parser looks for the
    # end of each such tag to the end of the file (a line of "<a <a <a" costs its length squared)
    soup = BeautifulSoup(_LONE_LT.sub("&lt;", body) if "<" in body else body, "html.parser")
    for tag in soup(["script", "style", "nav", "noscript", "svg"]):
        tag.decompose()
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    markdown = markdownify(str(soup), heading_style="ATX", strip=["img"], bullets="-")
    converted = parse_markdown(markdown)
    blocks = _map_lines(converted, body, offset)
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    title = title or page_title or _first_heading(blocks) or _title_from_name(path)
    date = _meta_date(meta) or find_date("\n".join(b.text for b in blocks[:6]))
    return Document(path, "html", clean_inline(title), blocks, meta, date, warnings=warnings)


def _plain_words(text: str) -> str:
    text = re.sub(r"[`*_\[\]()#>|]", " ", html.unescape(_TAG.sub(" ", text)))
    return re.sub(r"\s+", " ", text).strip().lower()


def _map_lines(blocks: list[Block], raw: str, offset: int) -> list[Block]:
    """Point converted blocks back at the raw HTML line they came from (first match, in order)."""
    raw_lines = [_plain_words(line) for line in raw.split("\n")]
    cursor = 0
    mapped: list[Block] = []
    for block in blocks:
        probe = _plain_words(block.text)[:24].strip()
        found = None
        if probe:
            for j in range(cursor, len(raw_lines)):
                if probe[:12] in raw_lines[j] and (probe in raw_lines[j] or probe[:12] in raw_lines[j]):
                    found = j
                    break
        if found is not None:
            cursor = found
        mapped.append(Block(block.kind, block.text, (found if found is not None else cursor) + 1 + offset, block.level))
    return mapped


_PDF_NOISE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _pdf_pages(file: Path) -> tuple[list[str], str]:
    """Text per page and the title from metadata.

    pdfium (C++, via pypdfium2) is ~10x faster than pypdf; pypdf is the fallback
    for files pdfium refuses, so one odd PDF still gets its best chance.
    """
    try:
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(str(file))
        try:
            pages = []
            for index in range(len(document)):
                page = document[index]
                textpage = page.get_textpage()
                text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
                pages.append(_PDF_NOISE.sub("", text))
                textpage.close()
                page.close()
            title = str(document.get_metadata_dict().get("Title") or "")
        finally:
            document.close()
        return pages, title
    except Exception:  # noqa: BLE001 - any pdfium failure: try the pure-Python reader
        log.debug("pdfium could not read %s; trying pypdf", file, exc_info=True)
    import logging as _logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    _logging.getLogger("pypdf").setLevel(_logging.ERROR)
    try:
        reader = PdfReader(str(file))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = str((reader.metadata.title if reader.metadata else None) or "")
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise SkipSource(f"unreadable PDF ({exc})") from exc
    return pages, title


def load_pdf(path: str, file: Path) -> Document:
    pages, info_title = _pdf_pages(file)
    blocks: list[Block] = []
    for number, page_text in enumerate(pages, 1):
        paragraphs = re.split(r"\n\s*\n", page_text)
        if len(paragraphs) == 1:
            # many slide PDFs have no blank lines: one paragraph per page keeps sentences whole
            paragraphs = [page_text]
        for index, para in enumerate(paragraphs):
            para = re.sub(r"[ \t]+", " ", para).strip()
            if para:
                first, _, rest = para.partition("\n")
                # a page's first short line is its title (slides); later short lines are prose
                if index == 0 and len(first) < 80 and rest and not first.endswith((".", ",", ":")):
                    blocks.append(Block("heading", first.strip(), number, 2))
                    if rest.strip():
                        blocks.append(Block("para", rest.strip(), number))
                else:
                    blocks.append(Block("para", para, number))
    if not blocks:
        raise SkipSource("PDF has no extractable text (scanned images?)")
    title = str(info_title).strip() or next((b.text for b in blocks if b.kind == "heading"), "")
    return Document(path, "pdf", title or _title_from_name(path), blocks, {}, find_date(" ".join(pages[:1])[:2000]), anchor="page=")


def load_source(file: Path, rel_path: str, *, max_bytes: int) -> Document:
    """Load one raw file. Raises SkipSource with a one-line reason for anything it cannot use."""
    suffix = file.suffix.lower()
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
        return load_pdf(rel_path, file)
    text, warnings = read_text(file)
    if not text.strip():
        raise SkipSource("empty file (only white space)")
    if suffix in HTML_SUFFIXES:
        doc = load_html(rel_path, text)
    elif suffix in (".article", ".slide"):
        doc = load_present(rel_path, text)
    elif suffix == ".rst":
        doc = load_markdown(rel_path, text, rst=True)
    elif suffix in (".txt", ".text"):
        doc = load_plain(rel_path, text)
    else:
        doc = load_markdown(rel_path, text)
    doc.warnings[:0] = warnings
    if not any(b.kind != "code" for b in doc.blocks):
        raise SkipSource("no prose found to compile")
    return doc

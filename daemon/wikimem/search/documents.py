"""Files as search sees them: passages of wiki pages and raw sources (a heading and its text,
one per described object, with the line each starts on), and each changelog passage's release."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..patterns import lazy
from ..workspace import Workspace
from .analysis import KINDS, NEWEST_ERA

CHUNK_CHARS = 500  # passage size: 500 beat 700, 1000 and 1500 on the probes (bench/retrieval.py)


MAX_STORED_CHARS = 12_000


CONCEPT_INDEX_CHARS = 12_000  # text of a concept page that is indexed (see load_wiki_page)


# a part page's opening line as the offline backend writes it for a run of sections
# (source_part.md.j2: "Part of [Document](../page.md): the outline of the sections [A](..) to [B](..)")
_RUN_PART = lazy(r"^Part of \[(?P<doc>(?:[^\]\\\n]|\\.){1,300})\]\([^)\s]*\)[^\n]{0,300}?: the outline of the "
                 r"sections \[", re.M)


@dataclass(frozen=True)
class Chunk:
    heading: str
    text: str
    lines: tuple[tuple[int, int], ...]
    era: int | None = None  # in a changelog: how recent the passage's release is, 0 (oldest) to 10


@dataclass(frozen=True)
class Doc:
    path: str  # workspace-relative
    kind: str
    title: str
    aliases: str
    date: str | None
    anchor: str
    chunks: tuple[Chunk, ...]
    sources: tuple[str, ...] = ()
    current: str | None = None  # a fact page's current statement: raw/...#L<n>
    part_of: str | None = None  # a part page's source page: wiki/sources/...


def collection_of(doc: Doc) -> str:
    """The top folder of raw/ a file belongs to: a raw file's own ("raw/flask/x.rst" is in
    "flask"); a wiki page's, the one most of the raw files it draws on sit in; "" for none."""
    paths = [doc.path] if doc.path.startswith("raw/") else [s for s in doc.sources if s.startswith("raw/")]
    counts: dict[str, int] = {}
    for path in paths:
        inner = path.removeprefix("raw/")
        if "/" in inner:
            top = inner.split("/", 1)[0]
            counts[top] = counts.get(top, 0) + 1
    return min(counts, key=lambda top: (-counts[top], top)) if counts else ""


def chunk_blocks(blocks: Iterable[Any]) -> list[Chunk]:
    """Group blocks into passages: a new one at every heading or when one grows long."""
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []
    parts: list[str] = []
    lines: list[tuple[int, int]] = []
    size = 0

    def flush() -> None:
        nonlocal parts, lines, size
        if parts:
            chunks.append(Chunk(" / ".join(t for _, t in trail), "\n".join(parts)[:MAX_STORED_CHARS], tuple(lines)))
        parts, lines, size = [], [], 0

    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        if block.kind == "heading":
            flush()
            level = block.level or 1
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, text)]
            continue
        if size and size + len(text) > CHUNK_CHARS:
            flush()
        lines.append((size, block.line))
        parts.append(text)
        size += len(text) + 1
    flush()
    if not chunks and trail:
        chunks.append(Chunk(" / ".join(t for _, t in trail), "", ()))
    return chunks


_FENCE = lazy(r" {0,3}(`{3,}|~{3,})")
_ATX = lazy(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_ITEM = lazy(r"\s*(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)")
_SETEXT = lazy(r" {0,3}(=+|-+)[ \t]*$")
_CELL = lazy(r"(?<!\\)\|")
_TABLE_RULE = lazy(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def page_blocks(body: str, offset: int = 0) -> list[Any]:
    """A wiki page's blocks, read line by line: headings (ATX, and setext under one line),
    list items, table rows, fenced code and paragraphs, each with its line in the file.

    Pages are Markdown that wikimem (or a person in an editor) wrote: headings, paragraphs,
    lists, tables, fences. Reading them with the full CommonMark parser cost most of a 10k
    index build; this reader splits them at the same headings and keeps the same text (links
    to their words, through the loaders' inline cleaner) in linear time.
    """
    from ..sources.document import Block
    from ..sources.inline import clean_markdown

    blocks: list[Block] = []
    para: list[str] = []
    para_line = 0
    kind = "para"
    fence: str | None = None
    code: list[str] = []
    code_line = 0

    def flush() -> None:
        nonlocal para
        if para:
            text = clean_markdown("\n".join(para))
            if text:
                blocks.append(Block(kind, text, para_line))
            para = []

    for i, line in enumerate(body.split("\n"), start=offset + 1):
        if fence is not None:
            if line.lstrip(" ").startswith(fence):
                fence = None
                if code:
                    blocks.append(Block("code", "\n".join(code), code_line))
                continue
            code.append(line)
            continue
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if m := _FENCE.match(line):
            flush()
            fence, code, code_line = m.group(1)[0] * len(m.group(1)), [], i + 1
            continue
        if m := _ATX.match(line):
            flush()
            blocks.append(Block("heading", clean_markdown(m.group(2) or ""), i, len(m.group(1))))
            continue
        if len(para) == 1 and kind == "para" and (m := _SETEXT.match(line)):
            title, para = para[0], []
            blocks.append(Block("heading", clean_markdown(title), para_line, 1 if m.group(1)[0] == "=" else 2))
            continue
        if stripped.startswith("|"):
            flush()
            if not _TABLE_RULE.match(stripped):  # a row, its cells joined as the parser joins them
                cells = [" ".join(clean_markdown(c).split()) for c in _CELL.split(stripped.strip("|"))]
                if any(cells):
                    blocks.append(Block("table", " | ".join(cells), i))
            continue
        if m := _ITEM.match(line):
            flush()
            kind, para_line, para = "item", i, [m.group(1)]
            continue
        if not para:
            kind, para_line = "para", i
        para.append(stripped)
    flush()
    if fence is not None and code:
        blocks.append(Block("code", "\n".join(code), code_line))
    return [b for b in blocks if b.kind != "heading" or b.text]


def load_wiki_page(ws: Workspace, rel: str, text: str | None = None) -> Doc:
    """A wiki page's entries; `text`: its text as it will be written (read as a file is read)."""
    from ..pages import FrontMatterError, parse_meta, split_front_matter

    if text is None:
        text = (ws.wiki / rel).read_text(encoding="utf-8", errors="replace")
    elif "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # a text file's newlines, as read_text makes them
    fm, body, offset = split_front_matter(text)
    try:
        meta = parse_meta(fm) if fm is not None else {}
    except FrontMatterError:
        meta = {}  # still searchable by its text; lint reports the front matter
    folder = rel.split("/", 1)[0]
    by_folder = {"sources": "source", "concepts": "concept", "facts": "fact", "answers": "answer"}
    kind = str(meta.get("kind") or by_folder[folder])
    if kind not in KINDS:
        kind = by_folder[folder]
    title = str(meta.get("title") or Path(rel).stem)
    aliases = meta.get("aliases") or []
    alias_text = " ".join(str(a) for a in aliases) if isinstance(aliases, list) else str(aliases)
    sources = meta.get("sources") or []
    sources = [str(s) for s in sources] if isinstance(sources, list) else [str(sources)]
    date = meta.get("date")
    part_of = meta.get("part_of")
    if isinstance(part_of, str) and (run := _RUN_PART.search(body[:2000])):
        # a part holding a run of sections is titled for its first and last ("Configuration:
        # EXPLAIN_TEMPLATE_LOADING – PROVIDE_AUTOMATIC_OPTIONS"): a range's ends are not what it
        # is about, and weighed as a title they outranked pages about the question's words; it
        # is titled as its document, found by the sections its outline lists
        from ..pages import plain_text

        title = plain_text(run.group("doc"))
    if isinstance(part_of, str):
        # a part page is found by its sections' names; its key facts and defaults quote lines of
        # the raw file, which is indexed itself (they were a fifth of indexing a reference's
        # wiki): the page is read up to them
        cut = min((at for at in (body.find("\n## Key facts"), body.find("\n## Defaults")) if at >= 0), default=-1)
        if cut >= 0:
            body = body[:cut]
    blocks = page_blocks(body, offset)
    # the page's own H1 repeats the title; leave it out of the heading trail
    if blocks and blocks[0].kind == "heading" and blocks[0].text.strip() == title:
        blocks = blocks[1:]
    chunks = chunk_blocks(blocks)
    if kind == "concept":
        # a concept page quotes what every source says about it, newest first: on a large wiki
        # the quotes are most of the text to index (60% at 10k sources) and every one of them
        # is indexed again in its raw source. The page is found by its title and aliases and
        # its newest quotes; the rest stays a read away.
        kept: list[Chunk] = []
        size = 0
        for chunk in chunks:
            size += len(chunk.text)
            if size > CONCEPT_INDEX_CHARS and kept:
                break
            kept.append(chunk)
        chunks = kept
    if kind in ("concept", "fact"):
        # a "Sources" section is a row of file names: the path field already has their words
        chunks = [c for c in chunks if c.heading.rsplit(" / ", 1)[-1] != "Sources"]
    current = meta.get("current") if kind == "fact" else None
    return Doc("wiki/" + rel, kind, title, alias_text, str(date) if date else None, "L",
               tuple(chunks), tuple(sources), str(current) if isinstance(current, str) else None,
               "wiki/" + part_of if isinstance(part_of, str) and part_of.endswith(".md") else None)


@dataclass(frozen=True)
class _Heading:
    kind: str
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class _Block:
    kind: str
    text: str
    line: int
    level: int


@dataclass(frozen=True)
class _Section:
    line: int
    parent: int
    version: str | None


def load_raw_file(ws: Workspace, rel: str, max_bytes: int, outline: dict[str, Any] | None = None) -> Doc:
    """Raises SkipSource for files that are not readable sources.

    Text formats are indexed from their own lines, cut at the headings the loader found:
    loaders keep what a page needs and drop the rest (literal blocks, front matter, some
    tables), but search must find every figure the source holds, verbatim. `outline` is what
    the compile kept of the loaded file (sources.outline): with it, the file is not parsed again.
    """
    from ..sources import TEXT_SUFFIXES, SkipSource, load_source, read_text, source_suffix

    file = ws.root / rel
    if outline is not None and source_suffix(file) in TEXT_SUFFIXES:
        size = file.stat().st_size
        if size > max_bytes:
            raise SkipSource(f"too large ({size / 1e6:.1f} MB)")
        text, _ = read_text(file)
        title = outline.get("title") or Path(rel).stem
        headings = [_Heading("heading", int(h[0]), int(h[1]), str(h[2])) for h in outline.get("headings") or []]
        sections = [_Section(int(x[0]), int(x[1]), x[2]) for x in outline.get("sections") or []]
        chunks = raw_text_chunks(text, headings, title)
        return Doc(rel, "raw", title, "", outline.get("date"), str(outline.get("anchor") or "L"),
                   tuple(release_eras(chunks, sections)))
    if outline is not None and isinstance(outline.get("blocks"), list):
        size = file.stat().st_size
        if size > max_bytes:
            raise SkipSource(f"too large ({size / 1e6:.1f} MB)")
        title = outline.get("title") or Path(rel).stem
        kept = [_Block(str(b[0]), str(b[1]), int(b[2]), int(b[3])) for b in outline["blocks"]]
        if kept and kept[0].kind == "heading" and kept[0].text.strip() == title:
            kept = kept[1:]
        sections = [_Section(int(x[0]), int(x[1]), x[2]) for x in outline.get("sections") or []]
        return Doc(rel, "raw", title, "", outline.get("date"), str(outline.get("anchor") or "L"),
                   tuple(release_eras(chunk_blocks(kept), sections)))
    doc = load_source(file, rel, max_bytes=max_bytes)
    title = doc.title or Path(rel).stem
    if source_suffix(file) in TEXT_SUFFIXES:
        text, _ = read_text(file)
        chunks = raw_text_chunks(text, [b for b in doc.blocks if b.kind == "heading"], title)
    else:
        blocks = list(doc.blocks)
        if blocks and blocks[0].kind == "heading" and blocks[0].text.strip() == title:
            blocks = blocks[1:]
        chunks = chunk_blocks(blocks)
    return Doc(rel, "raw", title, "", doc.date, doc.anchor, tuple(release_eras(chunks, doc.sections)))


def release_eras(chunks: list[Chunk], sections: list[Any]) -> list[Chunk]:
    """Tell each passage of a changelog how recent its release is (0 oldest .. 10 newest), so a
    question about the current state prefers the newest entry that answers it; the newest
    release's own passages are NEWEST_ERA (ranked as 10), what "the latest release" asks for. A
    file with fewer than two releases is left as it is."""
    import bisect

    releases = [s for s in sections if getattr(s, "version", None)]
    if len(releases) < 2:
        return chunks
    order = sorted({_release_key(s.version) for s in releases})
    rank = {v: i / max(1, len(order) - 1) for i, v in enumerate(order)}
    newest = order[-1]
    # each section's release: its own, or the nearest enclosing section's
    era_of: list[int | None] = []
    for i, sec in enumerate(sections):
        if getattr(sec, "version", None):
            key = _release_key(sec.version)
            era_of.append(NEWEST_ERA if key == newest else round(10 * rank[key]))
        else:
            parent = sec.parent
            era_of.append(era_of[parent] if 0 <= parent < i else None)
    starts = [sec.line for sec in sections]  # in document order
    out = []
    for chunk in chunks:
        held = bisect.bisect_right(starts, chunk.lines[0][1]) - 1 if chunk.lines else -1
        era = era_of[held] if held >= 0 else None
        out.append(replace(chunk, era=era) if era is not None else chunk)
    return out


def _release_key(version: str) -> tuple[int, ...]:
    """Release order: 3.1.0 after 3.0.2; a pre-release (2.0rc1) before its release."""
    match = re.match(r"v?(\d+(?:\.\d+)*)(.*)$", version.strip())
    if not match:
        return (-1,)
    return (*(int(x) for x in match.group(1).split(".")), 0 if not match.group(2).strip(".-_ ") else -1)


_ADORNMENT = lazy(r"^\s*([=\-~^\"'`#*+<>_:.])\1{2,}\s*$")


# a reST (or Sphinx) description of one object: its passage is named after the object
_OBJECT = lazy(
    r"^\s*\.\. (?:[a-z]+:)?(?:data|function|class|method|attribute|exception|decorator|property"
    r"|module|option|cmdoption|envvar|confval|describe|object|setting|directive|role|program)"
    r"::\s*([^\s(]+)"
)


OBJECT_LEVEL = 9  # below any heading of the page


def raw_text_chunks(text: str, headings: list[Any], title: str) -> list[Chunk]:
    """Passages from a text file's lines: a new one at each heading line, at each described
    object (a reST `.. py:data:: NAME`, `.. option::`, ...: one passage per setting or function
    of a reference page) and at a paragraph break once a passage is long; every line is kept,
    with its line number."""
    from ..sources import clean_inline

    starts = {b.line: b for b in headings}
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []
    parts: list[str] = []
    lines_map: list[tuple[int, int]] = []
    size = 0

    def flush() -> None:
        nonlocal parts, lines_map, size
        body = "\n".join(parts).rstrip()  # no lstrip: offsets in lines_map count from the start
        if body.strip():
            chunks.append(Chunk(" / ".join(t for _, t in trail), body[:MAX_STORED_CHARS], tuple(lines_map)))
        parts, lines_map, size = [], [], 0

    for number, line in enumerate(text.split("\n"), 1):
        heading = starts.get(number)
        if heading is not None:
            flush()
            level = heading.level or 1
            label = heading.text.strip()
            trail = [(lv, t) for lv, t in trail if lv < level]
            if not (level == 1 and label == title):
                trail.append((level, label))
            continue
        if _ADORNMENT.match(line):  # reStructuredText heading underlines, Markdown rules
            continue
        if ".. " in line[:40] and "::" in line:
            described = _OBJECT.match(line)
            if described is not None:
                flush()
                trail = [(lv, t) for lv, t in trail if lv < OBJECT_LEVEL] + [(OBJECT_LEVEL, described.group(1))]
                continue  # the directive line itself: its name is the passage's heading
        if not line.strip():
            if size > CHUNK_CHARS:
                flush()
            elif parts:
                parts.append("")
                size += 1
            continue
        # link targets and markup noise would swamp the words ("pkg", "crypto" from every
        # /pkg/crypto/... link); the line keeps its words and its number
        line = clean_inline(line) if ("](" in line or "<" in line or "{{" in line or "[^" in line) else line
        lines_map.append((size, number))  # every line: a snippet cites the line it starts on
        parts.append(line)
        size += len(line) + 1
    flush()
    return chunks

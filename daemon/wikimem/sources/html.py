"""HTML: BeautifulSoup drops what is not content, markdownify turns the rest into Markdown, and
each block is pointed back at the raw line it came from."""

from __future__ import annotations

import html
import re
import sys
import warnings
from functools import lru_cache
from typing import Any

from ..lexicon import find_date, meta_date
from ..pages import FrontMatterError, parse_meta, split_front_matter
from ..patterns import lazy
from .document import Block, Document, SkipSource, title_from_name
from .inline import TAG, clean_inline
from .markdown import parse_markdown
from .sections import comment_meta, section_tree

# a "<" with another "<" before any ">" opens no tag; left as it is, the parser looks for the
# end of each such tag to the end of the file (a line of "<a <a <a" costs its length squared)
_LONE_LT = lazy(r"<(?=[^<>]*+(?:<|\Z))")
# a page template ("{% ... %}" tags: a site theme's partial, not a page of text): it opens
# with its tags (after any comment), or its lines are its block tags ("{% if ... %}") where no
# <pre> or <code> shows them as text
_TEMPLATE = lazy(r"\A\s*+(?:<!--(?:(?!-->).)*+-->\s*+)*+(?:\{%|\{#|\{\{)", re.DOTALL)  # possessive: linear
_BLOCK_TAG_LINE = lazy(r"^[ \t]*\{%-?[ \t]*(?:if|for|block|extends|include|import|macro|set|with)\b", re.MULTILINE)
_SHOWN_AS_TEXT = lazy(r"<(?:pre|code|xmp|textarea)\b", re.IGNORECASE)


def _is_template(body: str) -> bool:
    if _TEMPLATE.match(body):
        return True
    return "{%" in body and len(_BLOCK_TAG_LINE.findall(body)) >= 2 and not _SHOWN_AS_TEXT.search(body)


def load_html(path: str, text: str) -> Document:
    BeautifulSoup, Tag, MarkdownConverter = _soup()  # noqa: N806 - classes
    fm, body, offset = split_front_matter(text)
    if _is_template(body):
        raise SkipSource("a page template (its markup is template tags such as {% if %}), not a document")
    meta: dict[str, Any] = {}
    warnings: list[str] = []
    if fm is not None:
        try:
            meta = parse_meta(fm)
        except FrontMatterError as exc:
            warnings.append(f"{exc}; front matter ignored")
    meta.update(comment_meta(body, warnings))
    soup = BeautifulSoup(_LONE_LT.sub("&lt;", body) if "<" in body else body, "html.parser",
                         element_classes={Tag: _tag_class()})
    for tag in soup(["script", "style", "nav", "noscript", "svg", "template"]):
        tag.decompose()
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    description = ""
    for tag in soup.find_all("meta"):
        if str(tag.get("name", "")).lower() == "description":
            description = str(tag.get("content") or "")
    h1 = soup.find("h1")
    h1_text = h1.get_text(" ", strip=True) if h1 else ""
    # the soup itself, not its text: markdownify() would parse the page a second time
    markdown = MarkdownConverter(heading_style="ATX", strip=["img"], bullets="-").convert_soup(soup)
    blocks = _map_lines(parse_markdown(markdown), body, offset)
    blocks, sections = section_tree(blocks)
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    title = title or page_title or h1_text or next((b.text for b in blocks if b.kind == "heading"), None)
    named = not title
    title = title or title_from_name(path)
    date = meta_date(meta) or find_date("\n".join(b.text for b in blocks[:6]))
    subtitle = meta.get("subtitle") or meta.get("description") or description
    return Document(path, "html", clean_inline(title), blocks, meta, date, warnings=warnings, sections=sections,
                    description=str(subtitle) if subtitle else None, named=named)


@lru_cache(maxsize=1)
def _soup() -> tuple[Any, Any, Any]:
    """BeautifulSoup, its Tag and markdownify's converter, imported without soupsieve when bs4 is
    not imported yet: bs4 imports it for CSS selectors, which nothing here uses, and compiling its
    patterns was two thirds of importing bs4 (about 0.1 s in each worker that reads a page)."""

    blocked = "bs4" not in sys.modules and "soupsieve" not in sys.modules
    if blocked:
        sys.modules["soupsieve"] = None  # type: ignore[assignment]  # import soupsieve: ImportError
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # bs4 warns that CSS selectors cannot be used
            from bs4 import BeautifulSoup, Tag
    finally:
        if blocked:
            del sys.modules["soupsieve"]  # anyone else importing it gets it
    # markdownify (and BeautifulSoup, above) only for HTML sources
    from markdownify import MarkdownConverter

    return BeautifulSoup, Tag, MarkdownConverter


@lru_cache(maxsize=1)
def _tag_class() -> type:
    """bs4's Tag, finding a parent by its name alone with a walk up the tree: markdownify asks
    every element whether it is inside a <pre>, and bs4's own search for it (a filter object
    per call) was a third of converting a page."""
    Tag = _soup()[1]  # noqa: N806 - a class; bs4 as _soup imports it

    class NamedParents(Tag):  # type: ignore[misc,valid-type]
        def find_parent(self, name: Any = None, attrs: Any = None, **kwargs: Any) -> Any:
            if not isinstance(name, str) or attrs is not None or kwargs:
                return super().find_parent(name, attrs, **kwargs)
            parent = self.parent
            while parent is not None:
                if parent.name == name:
                    return parent
                parent = parent.parent
            return None

    return NamedParents


_MARKS = lazy(r"[`*_\[\]()#>|]")
_SPACE = lazy(r"\s+")


def _plain_words(text: str) -> str:
    """A line's words as _map_lines compares them (every raw line of the page is read so): its
    tags and Markdown's marks made spaces, its character references read, lowercase. The tag
    pattern is tried only on a line that holds a "<"."""
    text = html.unescape(TAG.sub(" ", text) if "<" in text else text)
    return _SPACE.sub(" ", _MARKS.sub(" ", text)).strip().lower()


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
                if probe[:12] in raw_lines[j]:
                    found = j
                    break
        if found is not None:
            cursor = found
        line = (found if found is not None else cursor) + 1 + offset
        mapped.append(Block(block.kind, block.text, line, block.level, subject=block.subject, version=block.version, rows=block.rows))
    return mapped

"""PDF: text per page (pdfium, with pypdf as the fallback); citations point at pages."""

from __future__ import annotations

import logging
import logging as _logging
import re
from pathlib import Path

from ..lexicon import find_date
from .document import Block, Document, SkipSource
from .sections import section_tree

log = logging.getLogger("wikimem.sources")
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

    # pypdf only when pdfium could not read the file
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


def load_pdf(path: str, file: Path, fallback_title: str) -> Document:
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
    blocks, sections = section_tree(blocks)
    return Document(path, "pdf", title or fallback_title, blocks, {}, find_date(" ".join(pages[:1])[:2000]),
                    anchor="page=", sections=sections, named=not title)

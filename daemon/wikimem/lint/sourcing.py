"""Rules about a page and its sources: stale pages and ungrounded quotes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from .context import Context, resolve_target
from .corpus import LINK_TARGET, SourceCache, cache, words
from .model import Finding
from .structure import content_pages, inbound_links

# - "sentence" ([file, line N](../../raw/path#LN))  -- also page=N for PDFs, and curly quotes
_QUOTE = re.compile(
    r"[\"“](?P<quote>[^\n]{8,}?)[\"”]\s*\(\[[^\]\n]*\]\((?P<target>[^)\s]+)\)\)"
)
_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.|\[\.\.\.\])\s*")


def stale(ctx: Context) -> Iterator[Finding]:
    sources = cache(ctx)
    # who depends on which raw file: concept and answer pages list them under `sources`
    dependents: dict[str, list[str]] = defaultdict(list)
    for page in content_pages(ctx):
        if page.page is not None and page.kind != "source":
            for src in page.page.sources:
                dependents[src].append(page.wpath)
    inbound, _indexed = inbound_links(ctx)
    described: set[str] = set()
    for page in content_pages(ctx):
        if page.kind != "source" or page.page is None or not page.page.sources:
            continue
        raw = page.page.sources[0]
        described.add(raw)
        recorded = str(page.meta.get("source_sha256") or "")
        # pages that depend on it: they list the raw file under `sources`, or link to its page
        linked = {"wiki/" + p for p in inbound.get(page.path, ())}
        deps = sorted(set(dependents.get(raw, [])) | linked)
        tail = f"; {len(deps)} page(s) depend on it" if deps else ""
        if raw not in ctx.raw_files:
            yield Finding.make(
                "stale", "error",
                f"{page.wpath} describes {raw}, which no longer exists{tail} (run wikimem compile to remove it)",
                paths=[page.wpath, raw, *deps], evidence={"page": page.wpath, "source": raw, "state": "deleted"},
            )
            continue
        if not recorded:
            continue  # the frontmatter rule reports a source page without a hash
        current = sources.sha(raw)
        if current is not None and current != recorded:
            yield Finding.make(
                "stale", "warning",
                f"{raw} changed since {page.wpath} was compiled{tail} (run wikimem compile)",
                paths=[page.wpath, raw, *deps],
                evidence={"page": page.wpath, "source": raw, "compiled": recorded, "current": current},
            )
    # a source gone together with its page, while pages that drew on it stay (a person kept them)
    gone: dict[str, list[str]] = defaultdict(list)
    for raw, pages in dependents.items():
        if raw.startswith("raw/") and raw not in ctx.raw_files and raw not in described:
            for wpath in pages:
                gone[wpath].append(raw)
    for wpath, raws in sorted(gone.items()):
        yield Finding.make(
            "stale", "warning",
            f"{wpath} draws on {', '.join(sorted(raws))}, which no longer exist(s): check what it says "
            "(run wikimem compile; a page a person edited is kept as it is)",
            paths=[wpath, *sorted(raws)], evidence={"page": wpath, "sources": sorted(raws), "state": "deleted"},
        )


def ungrounded_all(ctx: Context) -> Iterator[Finding]:
    yield from ungrounded(ctx)
    yield from ungrounded_figures(ctx)


def ungrounded(ctx: Context) -> Iterator[Finding]:
    sources = cache(ctx)
    raw_words: dict[str, str | None] = {}
    checked: dict[tuple[str, str], list[str]] = {}
    for page in content_pages(ctx):
        text = page.text
        if "](" not in text or "raw/" not in text:
            continue
        for m in _QUOTE.finditer(text, len(text) - len(page.body)):
            target = m.group("target")
            if "raw/" not in target:
                continue
            resolved, _fragment = resolve_target(page.path, target)
            if not resolved or not resolved.startswith("raw/") or resolved not in ctx.raw_files:
                continue  # a missing source is the stale and broken-link rules' business
            quote = m.group("quote")
            # a source page and the concept pages drawing on it quote the same sentences: check each once
            missing = checked.get((resolved, quote))
            if missing is None:
                missing = checked[(resolved, quote)] = _missing(ctx, sources, raw_words, resolved, quote)
            if not missing:
                continue
            line = page.line_of(m.start())
            yield Finding.make(
                "ungrounded", "error",
                f"{page.wpath} line {line} quotes {resolved}, but these words are not in it: "
                f"\"{_short(missing[0])}\"",
                paths=[page.wpath, resolved], lines=[line, 0],
                evidence={"page": page.wpath, "source": resolved, "quote": quote},
            )


def _missing(ctx: Context, sources: SourceCache, raw_words: dict[str, str | None], resolved: str, quote: str) -> list[str]:
    """The parts of a quote its source does not hold ([] when it holds them all, or cannot be read)."""
    doc = sources.get(resolved)
    if doc is None or doc.skipped:
        return []
    missing = [part for part in fragments(quote) if words(part) not in doc.words]
    if not missing:
        return []
    # the loader drops markup; a person may quote the file as written, so check the raw text too
    if resolved not in raw_words:
        try:
            with open(ctx.raw_files[resolved], encoding="utf-8", errors="replace") as handle:
                raw_text = handle.read()
            raw_words[resolved] = words(LINK_TARGET.sub("]", raw_text))
        except OSError:
            raw_words[resolved] = None
    raw_text_words = raw_words[resolved]
    if raw_text_words is not None and all(words(p) in raw_text_words for p in missing):
        return []
    return missing


# a citation in the page's own words: "... 30.5 years ([tardigrades.md, line 41](../../raw/tardigrades.md#L41))"
_CITATION = re.compile(r"\(\[[^\]\n]*\]\((?P<target>[^)\s]*raw/[^)\s]*)\)\)")
_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_CLAUSE_START = re.compile(r"(?:^|(?<=[.!?])\s+|\)\)\s*)(?=\S)")


def ungrounded_figures(ctx: Context) -> Iterator[Finding]:
    """Figures stated in a page's own words before a citation must be in the cited source.

    Only the clause right before the citation counts (from the previous sentence end or
    citation), without link text, code or quotes (quotes are checked whole, above).
    """
    sources = cache(ctx)
    for page in content_pages(ctx):
        text = page.prose
        if "raw/" not in text:
            continue
        body_start = len(text) - len(page.body)
        for m in _CITATION.finditer(text, body_start):
            line_start = text.rfind("\n", body_start, m.start()) + 1
            segment = text[line_start : m.start()]
            if segment.rstrip().endswith(("\"", "”")):
                continue  # a quote: checked by the quote rule
            starts = [c.start() for c in _CLAUSE_START.finditer(segment.rstrip())]
            clause = segment[starts[-1] :] if starts else segment
            clause = re.sub(r"\[([^\]]*)\]\([^)]*\)", " ", clause)  # link text names pages, not figures
            figures = [f for f in _FIGURE.findall(clause) if len(f.strip(".,")) >= 2 or "." in f]
            if not figures:
                continue
            resolved, _fragment = resolve_target(page.path, m.group("target"))
            if not resolved or resolved not in ctx.raw_files:
                continue
            doc = sources.get(resolved)
            if doc is None or doc.skipped:
                continue
            missing = [f for f in figures if words(f) not in doc.words]
            if missing:
                line = page.line_of(m.start())
                yield Finding.make(
                    "ungrounded", "error",
                    f"{page.wpath} line {line} cites {resolved} for {', '.join(missing)}, which the source does not contain",
                    paths=[page.wpath, resolved], lines=[line, 0],
                    evidence={"page": page.wpath, "source": resolved, "figures": missing, "clause": " ".join(clause.split())},
                )


def fragments(quote: str) -> list[str]:
    """The runs of words a quote claims, compared on words alone.

    Link targets go (the compile strips a source's relative links but keeps their
    words); an ellipsis splits the quote, and the word cut by it is dropped.
    """
    quote = LINK_TARGET.sub("]", quote)
    parts = _ELLIPSIS.split(quote)
    out = []
    for i, part in enumerate(parts):
        toks = part.split()
        if i < len(parts) - 1:
            toks = toks[:-1]
        if i > 0:
            toks = toks[1:]
        text = " ".join(toks)
        if len(words(text).split()) >= 2:
            out.append(text)
    return out


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

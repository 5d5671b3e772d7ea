"""Rules about a page and its sources: stale pages and ungrounded quotes."""

from __future__ import annotations

import contextlib
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ..links import LINK_TARGET
from . import digest
from .context import Context, WikiPage
from .corpus import SourceCache, cache, words
from .extract import QUOTE_MIN, page_figures, page_quotes, quotes  # noqa: F401 - re-exported
from .model import Finding
from .structure import content_pages, inbound_links

_ELLIPSIS = re.compile(r"(?<!\s)\s*(?:…|\.\.\.|\[\.\.\.\])\s*")  # a space run is tried once, from its start


def stale(ctx: Context) -> Iterator[Finding]:
    sources = cache(ctx)
    # the raw files concept and answer pages list under `sources`; who lists which is worked out
    # only when a finding names the pages that depend on a source
    listers = [page for page in content_pages(ctx) if page.page is not None and page.kind != "source"]
    listed: set[str] = set()
    for page in listers:
        listed.update(page.page.sources)  # type: ignore[union-attr]
    by_source: dict[str, list[str]] = {}

    def dependents() -> dict[str, list[str]]:
        if not by_source:
            for page in listers:
                for src in page.page.sources:  # type: ignore[union-attr]
                    by_source.setdefault(src, []).append(page.wpath)
        return by_source

    def depending(page: WikiPage, raw: str) -> tuple[list[str], str]:
        # pages that depend on it: they list the raw file under `sources`, or link to its page
        linked = {"wiki/" + p for p in inbound_links(ctx).get(page.path, ())}
        deps = sorted(set(dependents().get(raw, [])) | linked)
        return deps, f"; {len(deps)} page(s) depend on it" if deps else ""

    described: set[str] = set()
    for page in content_pages(ctx):
        if page.kind != "source" or page.page is None or not page.page.sources:
            continue
        raw = page.page.sources[0]
        described.add(raw)
        recorded = str(page.meta.get("source_sha256") or "")
        if raw not in ctx.raw_files:
            deps, tail = depending(page, raw)
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
            deps, tail = depending(page, raw)
            yield Finding.make(
                "stale", "warning",
                f"{raw} changed since {page.wpath} was compiled{tail} (run wikimem compile)",
                paths=[page.wpath, raw, *deps],
                evidence={"page": page.wpath, "source": raw, "compiled": recorded, "current": current},
            )
    # a source gone together with its page, while pages that drew on it stay (a person kept them)
    gone: dict[str, list[str]] = defaultdict(list)
    for raw in sorted(listed):
        if raw.startswith("raw/") and raw not in ctx.raw_files and raw not in described:
            for wpath in dependents()[raw]:
                gone[wpath].append(raw)
    for wpath, raws in sorted(gone.items()):
        yield Finding.make(
            "stale", "warning",
            f"{wpath} draws on {', '.join(sorted(raws))}, which no longer exist(s): check what it says "
            "(run wikimem compile; a page a person edited is kept as it is)",
            paths=[wpath, *sorted(raws)], evidence={"page": wpath, "sources": sorted(raws), "state": "deleted"},
        )


def ungrounded_all(ctx: Context) -> Iterator[Finding]:
    """Quotes and figures a page attributes to a raw file that the file does not hold.

    Whether a page's quotes are grounded depends on its digest and on the cited files: the
    answer is kept per page in the digest store with the hashes of the files it cites, and
    worked out again only when the page or one of those files changed.
    """

    sources = cache(ctx)
    digests = digest.store(ctx)
    raw_words: dict[str, tuple[str, ...] | None] = {}
    checked: dict[tuple[str, str], list[str]] = {}
    for page in content_pages(ctx):
        if not page.digest.cites:
            continue
        current = {raw: sources.sha(raw) if raw in ctx.raw_files else None for raw in page.digest.cites}
        # the stored answer: the cited files with their hashes, a blank line, the findings as JSON
        # (nothing when there are none, so a grounded page costs a string comparison)
        key = "\n".join(f"{raw}\t{sha}" for raw, sha in current.items())
        known = digests.grounding(page.path)
        result: dict[str, Any] | None = None
        if known is not None and known.partition("\n\n")[0] == key:
            stored = known.partition("\n\n")[2]
            result = {"quotes": [], "figures": []}
            if stored:
                with contextlib.suppress(ValueError):
                    result = json.loads(stored)
            if not isinstance(result, dict) or not isinstance(result.get("quotes"), list):
                result = None
        if result is None:
            quotes, figures = page.digest.quotes, page.digest.figures
            if quotes is None or figures is None:  # a digest from the cache keeps neither: read the page again
                fresh, _encoded, _sha = digest.digest_file(page.file, page.path)
                quotes, figures = fresh.quotes or (), fresh.figures or ()
            result = {"quotes": [], "figures": []}
            for raw, quote, line in quotes:
                if current.get(raw) is None:
                    continue  # a missing source is the stale and broken-link rules' business
                # a source page and the concept pages drawing on it quote the same sentences: check each once
                missing = checked.get((raw, quote))
                if missing is None:
                    missing = checked[(raw, quote)] = _missing(ctx, sources, raw_words, raw, quote)
                if missing:
                    result["quotes"].append([raw, line, quote, missing[0]])
            for raw, line, figs, clause in figures:
                if current.get(raw) is None:
                    continue
                doc = sources.get(raw)
                if doc is None or doc.skipped:
                    continue
                absent = [f for f in figs if words(f) not in doc.words]
                if absent:
                    result["figures"].append([raw, line, absent, clause])
            found = json.dumps(result, ensure_ascii=False, sort_keys=True) if result["quotes"] or result["figures"] else ""
            digests.set_grounding(page.path, f"{key}\n\n{found}")
        for raw, line, quote, missing_words in result["quotes"]:
            yield Finding.make(
                "ungrounded", "error",
                f"{page.wpath} line {line} quotes {raw}, but these words are not in it: \"{_short(missing_words)}\"",
                paths=[page.wpath, raw], lines=[line, 0],
                evidence={"page": page.wpath, "source": raw, "quote": quote},
            )
        for raw, line, absent, clause in result["figures"]:
            yield Finding.make(
                "ungrounded", "error",
                f"{page.wpath} line {line} cites {raw} for {', '.join(absent)}, which the source does not contain",
                paths=[page.wpath, raw], lines=[line, 0],
                evidence={"page": page.wpath, "source": raw, "figures": absent, "clause": clause},
            )


def _missing(ctx: Context, sources: SourceCache, raw_words: dict[str, tuple[str, ...] | None], resolved: str, quote: str) -> list[str]:
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
            # links dropped, as a reader sees them; and as written, where code holds what looks
            # like a link's target ("`N[Int intType](Int) Int`")
            raw_words[resolved] = (words(LINK_TARGET.sub("]", raw_text)), words(_links_dropped_outside_code(raw_text)))
        except OSError:
            raw_words[resolved] = None
    raw_text_words = raw_words[resolved]
    if raw_text_words is not None and all(any(words(p) in told for told in raw_text_words) for p in missing):
        return []
    return missing


_CODE = re.compile(r"(`+)[^`\n]+?\1")


def _links_dropped_outside_code(text: str) -> str:
    """A file's text with the targets of its links dropped, but not in code, where "](...)" is
    code's own ("`N[Int intType](Int) Int`")."""
    out: list[str] = []
    at = 0
    for m in _CODE.finditer(text):
        out.append(LINK_TARGET.sub("]", text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(LINK_TARGET.sub("]", text[at:]))
    return "".join(out)


# a link to a page of the wiki (relative, not into raw/): in a quote, the compile's
# resolution of a cross-reference (Sphinx's `:ref:` shows the title of what it names)
_WIKI_LINK = re.compile(r"(?<!\\)\[[^\[\]\n]*+\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|#)(?![^()\s]*raw/)[^()\s]*+\)")


def fragments(quote: str) -> list[str]:
    """The runs of words a quote claims, compared on words alone.

    Link targets go (the compile strips a source's relative links but keeps their
    words); an ellipsis splits the quote, and the word cut by it is dropped. A link to a page
    of the wiki splits it too, its text left out: a cross-reference shows the title of what it
    names (Sphinx's `:ref:`label``), which the quoted file does not hold.
    """
    if "](" in quote and _WIKI_LINK.search(quote):
        return [f for piece in _WIKI_LINK.split(quote) for f in fragments(piece)]
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

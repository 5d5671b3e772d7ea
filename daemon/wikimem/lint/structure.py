"""Structural rules: links, orphans, the index, front matter, duplicates, missing concepts, size caps."""

from __future__ import annotations

import itertools
import posixpath
import re
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator

from .. import index_page
from ..analysis import singular
from ..pages import PAGE_KINDS
from .context import SECTIONS, Context, WikiPage
from .model import Finding

# agent loaders (Claude Code, Codex) cut memory files at about these sizes
CAP_LINES = index_page.MAX_LINES
CAP_BYTES = index_page.MAX_BYTES
# a page bigger than this does not fit one file read of an agent (about 25k tokens)
PAGE_MAX_BYTES = 100_000


def content_pages(ctx: Context) -> Iterator[WikiPage]:
    """Pages a person or backend wrote, not the generated index/log/lint files."""
    for page in ctx.pages.values():
        if not page.is_generated:
            yield page


def broken_links(ctx: Context) -> Iterator[Finding]:
    page_sources = {row.page: path for path, row in ctx.state_sources.items() if getattr(row, "page", None)}
    # targets already found to exist: most of a wiki's links point at a few thousand pages and sources
    found: set[str] = set()
    for page in ctx.pages.values():
        if page.path in ("log.md", "lint.md"):
            continue  # log.md records history (links to pages since removed are true there); lint.md is ours
        for link in ctx.links(page):
            if link.resolved is None or link.resolved in found:
                continue
            if link.kind == "wiki":
                if link.resolved.startswith("wiki/?"):
                    yield Finding.make(
                        "broken-link", "error",
                        f"[[{link.target}]] matches no page (by file name or title)",
                        paths=[page.wpath], lines=[page.line_of(link.at)],
                        evidence={"page": page.wpath, "target": link.target, "kind": "wikilink"},
                    )
                continue
            target = link.resolved
            if target.startswith(".."):
                yield Finding.make(
                    "broken-link", "error", f"link to {link.target} points outside the workspace",
                    paths=[page.wpath], lines=[page.line_of(link.at)],
                    evidence={"page": page.wpath, "target": link.target, "kind": "outside"},
                )
                continue
            if ctx.exists(target):
                found.add(target)  # an md link's target never starts with "wiki/?", so wikilinks skip only real pages
                continue
            note = ""
            removed_source = False
            if target.startswith("wiki/sources/"):
                raw = page_sources.get(target[5:])
                if raw and raw in ctx.raw_files:
                    # the page is gone but its source is not: compile brings the page back, links intact
                    note = f" (its source {raw} is still there: run wikimem compile to restore the page)"
                else:
                    removed_source = True
                    note = " (a source page that was removed)"
            elif target.startswith("raw/") and page.section in SECTIONS:
                note = " (the source is gone: run wikimem compile to update the page)"
            yield Finding.make(
                "broken-link", "error",
                f"link to {link.target} ({target}) points at nothing{note}",
                paths=[page.wpath], lines=[page.line_of(link.at)],
                evidence={"page": page.wpath, "target": link.target, "kind": "md"},
                fixable=removed_source,
            )


def inbound_links(ctx: Context) -> tuple[dict[str, set[str]], set[str]]:
    """_inbound, computed once per run (three rules ask)."""
    cached = ctx._cache.get("inbound")
    if cached is None:
        cached = ctx._cache["inbound"] = _inbound(ctx)
    return cached  # type: ignore[no-any-return]


def _inbound(ctx: Context) -> tuple[dict[str, set[str]], set[str]]:
    """wiki path -> pages linking to it (generated pages excluded), and paths the index/catalogs link."""
    inbound: dict[str, set[str]] = defaultdict(set)
    indexed: set[str] = set()
    for page in ctx.pages.values():
        is_catalog = page.path == "index.md" or index_page.is_catalog(page.path)
        if page.path in ("log.md", "lint.md"):
            continue
        # each page's targets as a set first: a page links to the same few pages many times
        targets = {r[5:] for link in ctx.links(page) if (r := link.resolved) and r.startswith("wiki/")}
        if is_catalog:
            indexed |= targets
            continue
        targets.discard(page.path)
        for target in targets:
            inbound[target].add(page.path)
    return inbound, indexed


def orphans(ctx: Context) -> Iterator[Finding]:
    inbound, indexed = inbound_links(ctx)
    for page in content_pages(ctx):
        if page.section not in SECTIONS or inbound.get(page.path):
            continue
        where = "only the index links to it" if page.path in indexed else "nothing links to it"
        yield Finding.make(
            "orphan", "info", f"{page.wpath} has no links from other pages ({where})",
            paths=[page.wpath], lines=[0], evidence={"page": page.wpath},
        )


def missing_from_index(ctx: Context) -> Iterator[Finding]:
    inbound, indexed = inbound_links(ctx)
    if "index.md" not in ctx.pages:
        yield Finding.make(
            "missing-from-index", "error", "wiki/index.md is missing (agents read it first)",
            paths=["wiki/index.md"], evidence={"page": "wiki/index.md"}, fixable=True,
        )
        return
    for page in content_pages(ctx):
        if page.section in SECTIONS and page.path not in indexed:
            yield Finding.make(
                "missing-from-index", "warning", f"{page.wpath} is not listed in index.md or its catalogs",
                paths=[page.wpath], lines=[0], evidence={"page": page.wpath}, fixable=True,
            )


def front_matter(ctx: Context) -> Iterator[Finding]:
    for page in content_pages(ctx):
        where = [page.wpath]
        if page.error:
            yield Finding.make(
                "frontmatter", "error", f"{page.wpath}: {page.error}",
                paths=where, lines=[1], evidence={"page": page.wpath, "error": page.error},
            )
            continue
        if page.section not in SECTIONS:
            continue  # a person's own notes elsewhere in wiki/ need no wikimem front matter
        if not page.has_front_matter:
            yield Finding.make(
                "frontmatter", "warning", f"{page.wpath} has no front matter (title, kind, sources)",
                paths=where, lines=[1], evidence={"page": page.wpath, "error": "missing"},
            )
            continue
        meta = page.meta
        problems = []
        if not isinstance(meta.get("title"), str) or not str(meta.get("title")).strip():
            problems.append("no title")
        kind = meta.get("kind")
        if kind not in PAGE_KINDS:
            problems.append(f"kind {kind!r} is not one of {', '.join(PAGE_KINDS)}" if kind else "no kind")
        sources = meta.get("sources")
        if sources is not None and not (isinstance(sources, list) and all(isinstance(s, str) for s in sources)):
            problems.append("sources is not a list of paths")
        if kind == "source" and not meta.get("source_sha256"):
            problems.append("source page without source_sha256")
        if kind == "source" and not sources:
            problems.append("source page without sources")
        aliases = meta.get("aliases")
        if aliases is not None and not isinstance(aliases, list):
            problems.append("aliases is not a list")
        if problems:
            yield Finding.make(
                "frontmatter", "warning", f"{page.wpath}: " + "; ".join(problems),
                paths=where, lines=[1], evidence={"page": page.wpath, "problems": problems},
            )


_PUNCT = re.compile(r"[^\w\s+#]+|_")  # "+" and "#" stay: C, C++ and C# are three things
_LEADING = frozenset({"the", "a", "an"})


def title_key(text: str) -> str:
    """Near-identical titles share a key: case, punctuation, accents, plurals and a leading article."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii") or text
    words = _PUNCT.sub(" ", ascii_text.lower()).split()
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    return " ".join(singular(w) for w in words)


def duplicates(ctx: Context) -> Iterator[Finding]:
    yield from duplicate_titles(ctx)
    yield from duplicate_sources(ctx)


def duplicate_titles(ctx: Context) -> Iterator[Finding]:
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for page in content_pages(ctx):
        if page.page is None or page.section not in SECTIONS:
            continue
        names = [page.title]
        aliases = page.meta.get("aliases")
        if isinstance(aliases, list):
            names += [str(a) for a in aliases]
        for name in names:
            key = title_key(name)
            if key:
                groups[(page.kind, key)].add(page.path)
    seen: set[tuple[str, ...]] = set()
    for (kind, key), paths in sorted(groups.items()):
        if len(paths) < 2:
            continue
        members = tuple(sorted(paths))
        if members in seen:
            continue
        seen.add(members)
        # numbered items ("Go 1.21", "Go 1.22") never meet here: digits are part of the key
        titles = [ctx.pages[p].title for p in members]
        yield Finding.make(
            "duplicate", "warning",
            f"{len(members)} {kind or 'untyped'} pages for one thing ({', '.join(repr(t) for t in titles)}): merge them or add aliases",
            paths=["wiki/" + p for p in members], lines=[0] * len(members),
            evidence={"key": key, "pages": ["wiki/" + p for p in members]},
        )


_BOLD = re.compile(r"(?<![\w*])\*\*([A-Za-z][\w'’/+.-]*(?: [\w'’/+.-]+){0,3})\*\*(?![\w*])")


def missing_concepts(ctx: Context, min_pages: int = 3) -> Iterator[Finding]:
    """A term several pages want a page for: [[Name]] links to nothing, or **Name** set in bold
    (how terms are emphasized where they are defined) on several pages, with no page titled or
    aliased so."""
    wanted: dict[str, set[str]] = defaultdict(set)
    surface: dict[str, str] = {}
    known: set[str] = set()
    for page in ctx.pages.values():
        if page.page is None:
            continue
        known.add(title_key(page.title))
        aliases = page.meta.get("aliases")
        if isinstance(aliases, list):
            known.update(title_key(str(a)) for a in aliases)
    for page in content_pages(ctx):
        for link in ctx.links(page):
            if link.kind == "wiki" and link.resolved and link.resolved.startswith("wiki/?"):
                key = title_key(link.target)
                wanted[key].add(page.path)
                surface.setdefault(key, link.target)
        if "**" in page.body:
            for m in _BOLD.finditer(page.prose, len(page.text) - len(page.body)):
                key = title_key(m.group(1))
                # numbered terms are cross-references ("Chapter 17", "Listing 3-2"), not concepts
                if key and key not in known and len(key) > 2 and not any(ch.isdigit() for ch in key):
                    wanted[key].add(page.path)
                    surface.setdefault(key, m.group(1))
    for key, pages in sorted(wanted.items()):
        if len(pages) >= min_pages:
            yield Finding.make(
                "missing-concept", "info",
                f"{surface[key]!r} is wanted by {len(pages)} pages (a [[link]] or in bold) but has no page of its own",
                paths=["wiki/" + p for p in sorted(pages)][:20], evidence={"concept": key},
            )


def size_caps(ctx: Context) -> Iterator[Finding]:
    for name in ("index.md", "AGENTS.md"):
        page = ctx.pages.get(name)
        if page is None:
            continue
        lines = page.text.count("\n") + (0 if page.text.endswith("\n") or not page.text else 1)
        if lines > CAP_LINES or page.size > CAP_BYTES:
            yield Finding.make(
                "size", "error",
                f"wiki/{name} is {lines} lines / {page.size} bytes; agents load only the first "
                f"{CAP_LINES} lines / {CAP_BYTES // 1000} KB"
                + (" (run wikimem lint --fix to rebuild the index)" if name == "index.md" else ""),
                paths=[f"wiki/{name}"], lines=[CAP_LINES + 1 if lines > CAP_LINES else 0],
                evidence={"page": f"wiki/{name}", "over": "lines" if lines > CAP_LINES else "bytes"},
                fixable=name == "index.md",
            )
    for page in ctx.pages.values():
        if page.size > PAGE_MAX_BYTES:
            yield Finding.make(
                "size", "warning",
                f"{page.wpath} is {page.size // 1000} KB: too large for an agent to load in one read "
                f"(over {PAGE_MAX_BYTES // 1000} KB); split it",
                paths=[page.wpath], evidence={"page": page.wpath, "over": "page"},
            )


SHINGLE = 5  # words per passage compared
SKETCH = 32  # smallest passage hashes kept per source (a bottom-k MinHash sketch)
SAME_TEXT = 0.6  # estimated share of passages in common above which two sources are one document


def _sketch(words: str) -> tuple[int, ...]:
    data = words.encode()
    # words is " w1 w2 ... wn ": word i starts after space i, so a passage of SHINGLE words is one
    # slice of the bytes, hashed without building a string for each
    spaces = [m.start() for m in _SPACE.finditer(data)]
    n = len(spaces) - 1
    if n < SHINGLE * 4:
        return ()
    # crc32: fast, and stable across processes (hash() is salted), so findings do not flicker between runs
    crc = zlib.crc32
    hashes = {crc(data[spaces[i] + 1 : spaces[i + SHINGLE]]) for i in range(n - SHINGLE + 1)}
    return tuple(sorted(hashes)[:SKETCH])


_SPACE = re.compile(rb" ")


def duplicate_sources(ctx: Context) -> Iterator[Finding]:
    """Two raw files with the same text (a talk as PDF and as .txt): their pages say the same thing twice."""
    from .corpus import cache

    sources = cache(ctx)
    sketches: dict[str, tuple[int, ...]] = {}
    by_hash: dict[int, list[str]] = defaultdict(list)
    stems: dict[str, list[str]] = defaultdict(list)
    for path in ctx.raw_files:
        doc = sources.get(path)
        if doc is None or doc.skipped:
            continue
        stems[posixpath.splitext(path)[0]].append(path)
        sketch = doc.sketch if doc.sketch is not None else _sketch(doc.words)
        if sketch:
            sketches[path] = sketch
    # count first (in C), then index only the passages two to eight sources share
    counts = Counter(itertools.chain.from_iterable(sketches.values()))
    for path, sketch in sketches.items():
        for h in sketch:
            if 1 < counts[h] <= 8:
                by_hash[h].append(path)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for paths in by_hash.values():
        # copies share their rare passages; a passage in many sources is boilerplate (a licence, a
        # stock phrase) and counting its pairs would cost n² for nothing
        if 1 < len(paths) <= 8:
            for i, a in enumerate(paths):
                for b in paths[i + 1 :]:
                    shared[(a, b) if a < b else (b, a)] += 1
    pages = _source_pages(ctx)
    same_stem: set[tuple[str, str]] = set()
    for _stem, paths in sorted(stems.items()):
        # talk.pdf and talk.txt side by side: one document in two formats, whatever the extractor made of each
        if len(paths) > 1:
            paths = sorted(paths)
            same_stem.update((a, b) for i, a in enumerate(paths) for b in paths[i + 1 :])
            yield Finding.make(
                "duplicate", "warning",
                f"{', '.join(paths)} are one document in {len(paths)} formats: both are compiled into pages; "
                "keep one in raw/ (or accept this if both are wanted)",
                paths=[p for path in paths for p in pages.get(path, [])] + paths,
                evidence={"sources": paths, "same_name": True},
            )
    for (a, b), count in sorted(shared.items()):
        if (a, b) in same_stem:
            continue
        if count < SKETCH // 8:
            continue
        union = sorted(set(sketches[a]) | set(sketches[b]))[:SKETCH]
        both = set(sketches[a]) & set(sketches[b])
        similarity = sum(1 for h in union if h in both) / len(union)
        if similarity < SAME_TEXT:
            continue
        yield Finding.make(
            "duplicate", "warning",
            f"{a} and {b} hold the same text (about {similarity:.0%} of passages shared): "
            "keep one, or give one page the other's title as an alias",
            paths=[*pages.get(a, []), *pages.get(b, []), a, b],
            evidence={"sources": [a, b], "same_text": True},
        )


def _source_pages(ctx: Context) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for page in ctx.pages.values():
        if page.kind == "source" and page.page is not None:
            for src in page.page.sources[:1]:
                out[src].append(page.wpath)
    return out

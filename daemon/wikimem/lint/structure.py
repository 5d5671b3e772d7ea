"""Structural rules: links, orphans, the index, front matter, duplicates, missing concepts, size caps."""

from __future__ import annotations

import itertools
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from .. import index_page
from ..pages import part_of
from .context import SECTIONS, Context, WikiPage, resolve_wikilink
from .corpus import cache
from .extract import SKETCH, meta_problems, page_bold, text_sketch, title_key  # noqa: F401 - re-exported
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
    # each page's distinct targets come from its digest; only a page with a target that is
    # missing is read again, to report every link to it with its line
    found: set[str] = set()
    in_wiki: set[str] = set()  # wiki-relative paths found to exist
    for page in ctx.pages.values():
        if page.path in ("log.md", "lint.md"):
            continue  # log.md records history (links to pages since removed are true there); lint.md is ours
        digest = page.digest
        broken = False
        if not in_wiki.issuperset(digest.links_to):  # most pages link only pages already seen to exist
            for target in digest.links_to:
                if target in ctx.wiki_files or ctx.exists("wiki/" + target):
                    in_wiki.add(target)
                else:
                    broken = True
                    break
        for target in () if broken else digest.other_targets:
            if target in found:
                continue
            if not target.startswith("..") and ctx.exists(target):
                found.add(target)
                continue
            broken = True
            break
        if not broken and digest.wikinames:
            broken = any(resolve_wikilink(ctx, page.path, name) is None for name in digest.wikinames)
        if broken:
            yield from _broken_links_on(ctx, page, found)


def _broken_links_on(ctx: Context, page: WikiPage, found: set[str]) -> Iterator[Finding]:
    """Every link on a page to a missing target, with its line."""
    page_sources = ctx.run.page_sources
    if page_sources is None:
        page_sources = ctx.run.page_sources = {
            row.page: path for path, row in ctx.state_sources.items() if getattr(row, "page", None)
        }
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


def inbound_links(ctx: Context) -> dict[str, set[str]]:
    """wiki path -> the pages linking to it (index, catalogs and log excluded); built only when asked (stale
    findings name the pages that depend on a stale one), once per run."""
    cached = ctx.run.inbound
    if cached is None:
        cached = defaultdict(set)
        for page in ctx.pages.values():
            if page.path in ("index.md", "log.md", "lint.md") or index_page.is_catalog(page.path):
                continue
            for target in _links_to(ctx, page):
                cached[target].add(page.path)
        ctx.run.inbound = cached
    return cached  # type: ignore[no-any-return]


def linked_and_indexed(ctx: Context) -> tuple[set[str], set[str]]:
    """Pages some content page links to, and pages index.md or a catalog links to; once per run."""
    cached = ctx.run.linked
    if cached is None:
        linked: set[str] = set()
        indexed: set[str] = set()
        for page in ctx.pages.values():
            if page.path in ("log.md", "lint.md"):
                continue
            # set.update over each page's digest: the whole wiki's links in C, not one by one
            into = indexed if page.path == "index.md" or index_page.is_catalog(page.path) else linked
            into.update(_links_to(ctx, page))
        cached = ctx.run.linked = (linked, indexed)
    return cached  # type: ignore[no-any-return]


def _links_to(ctx: Context, page: WikiPage) -> tuple[str, ...] | list[str]:
    """Pages a page links to (never itself): its Markdown links, and [[wikilinks]] that resolve."""
    links_to = page.digest.links_to
    if not page.digest.wikinames:
        return links_to
    more = [r[5:] for name in page.digest.wikinames if (r := resolve_wikilink(ctx, page.path, name)) and r[5:] != page.path]
    return [*links_to, *more]


def orphans(ctx: Context) -> Iterator[Finding]:
    linked, indexed = linked_and_indexed(ctx)
    for page in content_pages(ctx):
        if page.section not in SECTIONS or page.path in linked:
            continue
        where = "only the index links to it" if page.path in indexed else "nothing links to it"
        yield Finding.make(
            "orphan", "info", f"{page.wpath} has no links from other pages ({where})",
            paths=[page.wpath], lines=[0], evidence={"page": page.wpath},
        )


def missing_from_index(ctx: Context) -> Iterator[Finding]:
    _linked, indexed = linked_and_indexed(ctx)
    if "index.md" not in ctx.pages:
        yield Finding.make(
            "missing-from-index", "error", "wiki/index.md is missing (agents read it first)",
            paths=["wiki/index.md"], evidence={"page": "wiki/index.md"}, fixable=True,
        )
        return
    for page in content_pages(ctx):
        # a part of a long source's page is listed by that page, not by the map
        if page.section in SECTIONS and page.path not in indexed and not part_of(page.meta):
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
        problems = page.digest.fm_problems  # meta_problems(page.meta), worked out with its digest
        if problems:
            yield Finding.make(
                "frontmatter", "warning", f"{page.wpath}: " + "; ".join(problems),
                paths=where, lines=[1], evidence={"page": page.wpath, "problems": list(problems)},
            )


def duplicates(ctx: Context) -> Iterator[Finding]:
    yield from duplicate_titles(ctx)
    yield from duplicate_sources(ctx)


def duplicate_titles(ctx: Context) -> Iterator[Finding]:
    groups: dict[tuple[str, str], set[str]] = defaultdict(set)
    for page in content_pages(ctx):
        # a source page stands for one raw file: two with one title are two files (a book's title
        # page and its table of contents); the same text in two files is duplicate_sources' finding
        if page.page is None or page.section not in SECTIONS or page.kind == "source":
            continue
        for key in page.digest.title_keys:  # its title's and aliases' keys, from its digest
            groups[(page.kind, key)].add(page.path)
    seen: set[tuple[str, ...]] = set()
    for (kind, key), paths in sorted(groups.items()):
        if len(paths) < 2:
            continue
        members = tuple(sorted(paths))
        if members in seen:
            continue
        seen.add(members)
        # numbered items ("Acme 1.21", "Acme 1.22") never meet here: digits are part of the key
        titles = [ctx.pages[p].title for p in members]
        yield Finding.make(
            "duplicate", "warning",
            f"{len(members)} {kind or 'untyped'} pages for one thing ({', '.join(repr(t) for t in titles)}): merge them or add aliases",
            paths=["wiki/" + p for p in members], lines=[0] * len(members),
            evidence={"key": key, "pages": ["wiki/" + p for p in members]},
        )


def missing_concepts(ctx: Context, min_pages: int = 3) -> Iterator[Finding]:
    """A term several pages want a page for: [[Name]] links to nothing, or **Name** set in bold
    (how terms are emphasized where they are defined) on several pages, with no page titled or
    aliased so."""
    wanted: dict[str, set[str]] = defaultdict(set)
    surface: dict[str, str] = {}
    known: set[str] = set()
    for page in ctx.pages.values():
        known.update(page.digest.title_keys)
    for page in content_pages(ctx):
        for name in page.digest.wikinames:
            if resolve_wikilink(ctx, page.path, name) is None:
                key = title_key(name)
                wanted[key].add(page.path)
                surface.setdefault(key, name)
        for key, term in page.digest.bold:
            if key not in known:
                wanted[key].add(page.path)
                surface.setdefault(key, term)
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
        lines = page.digest.lines
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
        # log.md is an append-only record, read by grep, never loaded whole by an agent
        if page.size > PAGE_MAX_BYTES and page.path != "log.md":
            yield Finding.make(
                "size", "warning",
                f"{page.wpath} is {page.size // 1000} KB: too large for an agent to load in one read "
                f"(over {PAGE_MAX_BYTES // 1000} KB); split it",
                paths=[page.wpath], evidence={"page": page.wpath, "over": "page"},
            )


SAME_TEXT = 0.6  # estimated share of passages in common above which two sources are one document


def duplicate_sources(ctx: Context) -> Iterator[Finding]:
    """Two raw files with the same text (a talk as PDF and as .txt): their pages say the same thing twice."""

    sources = cache(ctx)
    sketches: dict[str, tuple[int, ...]] = {}
    by_hash: dict[int, list[str]] = defaultdict(list)
    stems: dict[str, list[str]] = defaultdict(list)
    for path in ctx.raw_files:
        doc = sources.get(path)
        if doc is None or doc.skipped:
            continue
        stems[posixpath.splitext(path)[0]].append(path)
        sketch = doc.sketch if doc.sketch is not None else text_sketch(doc.words)
        if sketch:
            sketches[path] = sketch
    # count first (in C), then index only the passages two to eight sources share: most sources
    # share none, and a set intersection skips them without a Python step per passage
    counts = Counter(itertools.chain.from_iterable(sketches.values()))
    rare = {h for h, n in counts.items() if 1 < n <= 8}
    for path, sketch in sketches.items():
        for h in rare.intersection(sketch):
            by_hash[h].append(path)
    # copies share their rare passages (a passage in many sources is boilerplate, a licence or a
    # stock phrase, and counting its pairs would cost n² for nothing); each list is in path order,
    # so every pair comes out as (a, b) with a < b, counted in C
    shared: Counter[tuple[str, str]] = Counter()
    for paths in by_hash.values():
        shared.update(itertools.combinations(paths, 2))
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
    same: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for a, b in sorted(pair for pair, count in shared.items() if count >= SKETCH // 8):
        if (a, b) in same_stem or _releases_of_one_series(sources.get(a), sources.get(b)):
            continue
        set_a, set_b = set(sketches[a]), set(sketches[b])
        both = set_a & set_b
        # the estimate below counts, of the SKETCH smallest hashes of both, those in both: it cannot
        # exceed len(both) / min(SKETCH, union size), which rules out most pairs without sorting
        if len(both) < SAME_TEXT * min(SKETCH, len(set_a) + len(set_b) - len(both)):
            continue
        union = sorted(set_a | set_b)[:SKETCH]
        similarity = sum(1 for h in union if h in both) / len(union)
        if similarity < SAME_TEXT:
            continue
        same[a].append((b, similarity))
        same[b].append((a, similarity))
    # copies of one text are one finding, however many there are: N copies make N*(N-1)/2 pairs
    # and one group (the files any chain of same-text pairs joins)
    grouped: set[str] = set()
    for start in sorted(same):
        if start in grouped:
            continue
        group, todo, lowest = {start}, [start], 1.0
        while todo:
            for other, similarity in same[todo.pop()]:
                lowest = min(lowest, similarity)
                if other not in group:
                    group.add(other)
                    todo.append(other)
        grouped |= group
        members = sorted(group)
        named = " and ".join(members) if len(members) == 2 else f"{len(members)} files ({', '.join(members)})"
        yield Finding.make(
            "duplicate", "warning",
            f"{named} hold the same text (about {lowest:.0%} of passages shared or more): "
            "keep one, or give one page the other's title as an alias",
            paths=[*(p for m in members for p in pages.get(m, [])), *members],
            evidence={"sources": members, "same_text": True},
        )


def _releases_of_one_series(a: Any, b: Any) -> bool:
    """Notes of two releases of one product ("Widget 3.2.13" and "Widget 4.0.4"): maintained
    branches publish security releases the same day with the same text, by design."""
    va = getattr(a, "version", None)
    vb = getattr(b, "version", None)
    return bool(va and vb and va[0] == vb[0] and va[1] != vb[1])


def _source_pages(ctx: Context) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for page in ctx.pages.values():
        if page.kind == "source" and page.page is not None and not part_of(page.meta):
            for src in page.page.sources[:1]:
                out[src].append(page.wpath)
    return out

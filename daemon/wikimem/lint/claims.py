"""Superseded and contradicted facts, read from the raw sources with facts.py's extractor.

The extractor (shared with the compile's timelines and with search) finds statements of a
versioned value: minimums, supported ranges, dropped versions, defaults, "from A to B". Here
they are compared: a newer statement of the same fact in the same series (the same product's
releases; a changelog's sections each count as their own release) that gives another value
supersedes an older one; a plan that another release fulfilled, or two statements no date,
release or file time orders, that disagree, contradict. Each fact yields at most one
superseded finding (current value against the last different one), so a value that changed in
ten releases is one finding, not forty-five.

The wiki's own timelines (timelines.py, built here from the same claims) are the yardstick for
everything else: a note, a README or a person's page that states an older value of a fact a
product's timeline tracks is a stale note, and so is one that still uses a name the product's
release notes say was removed or renamed, and a reference page that the newest release
contradicts (stale_notes). Whose fact a sentence states comes from the sentence ("Acme supports
Python 3.8 and newer"), else from the note's title when it names the product, else from the
only product the wiki tracks that fact for.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..analysis import split_sentences
from ..facts import DIGIT as _DIGIT
from ..facts import Fact as Claim
from ..facts import (
    Statements,
    atomic_value,
    choice_key,
    compatible,
    dotted,
    extract,
    has_hint,
    is_choice,
    product_role,
    title_words,
)
from ..facts import label as fact_label
from ..lexicon import release_numbers, version_key
from ..products import Series, series_of
from ..raw_tree import ENTRY_NAMES
from ..sources import SkipSource, load_markdown, load_source
from ..timelines import Timeline, build, old_release, whose
from .context import Context
from .corpus import SourceText, cache
from .model import Finding

__all__ = ["Claim", "compatible", "contradicted", "extract", "stale_notes", "superseded"]


# --- ordering ---------------------------------------------------------------------------------


FILE_TIME_GAP_NS = 3600 * 10**9  # an hour


class Order:
    """Which of two sources is newer: the date it carries, else release order, else file time."""

    def __init__(self, docs: list[SourceText]):
        self.docs = {d.path: d for d in docs}
        # a release notes page without a date borrows the date of its dated sibling for the same
        # release (the announcement of "Acme 1.22" dates "Acme 1.22 Release Notes")
        dated: dict[tuple[str, tuple[int, ...]], str] = {}
        for d in docs:
            if d.date and d.version:
                dated.setdefault(d.version, d.date)
                dated[d.version] = min(dated[d.version], d.date)
        self.date = {d.path: d.date or (dated.get(d.version) if d.version else None) for d in docs}
        self.how: dict[tuple[str, str], str] = {}

    def compare(self, a: str, b: str) -> tuple[int, str]:
        """(-1 | 0 | 1, basis): a older, same, newer than b."""
        da, db = self.date.get(a), self.date.get(b)
        if da and db and da != db:
            return (-1 if da < db else 1), "date"
        va, vb = self.docs[a].version, self.docs[b].version
        if va and vb and va[0] == vb[0] and va[1] != vb[1]:
            return (-1 if va[1] < vb[1] else 1), "release order"
        if da and db:
            return 0, "same date"
        if not (da or db or va or vb):
            ma, mb = self.docs[a].mtime_ns, self.docs[b].mtime_ns
            # files copied or checked out together get times seconds apart that say nothing
            # about which was written later: only a clear gap orders them
            if abs(ma - mb) > FILE_TIME_GAP_NS:
                return (-1 if ma < mb else 1), "file time"
        return 0, "undated"

    def bucket(self, path: str) -> object:
        """Sources that compare as "same time" share a bucket (a superset; compare() decides)."""
        d = self.docs[path]
        if self.date.get(path):
            return ("date", self.date[path])
        if d.version:
            return ("version", d.version)
        return ("undated",)

    def label(self, path: str) -> str:
        d = self.docs[path]
        if self.date.get(path):
            return str(self.date[path])
        if d.version:
            return f"{d.version[0]} {'.'.join(map(str, d.version[1]))}"
        return "undated"


# --- rules -------------------------------------------------------------------------------------


@dataclass
class _Read:
    """What every claim rule reads, built once a run: the claims in their series (only the
    product's own in a documentation set's), the order of the sources, every claim as
    extracted, each source's series, and the timelines the compile writes from them."""

    claims: list[Claim]
    order: Order
    every: list[Claim]
    series: dict[str, Series]
    timelines: list[Timeline]
    kinds: dict[str, str]
    # the words of each product's front-page titles: "PyMdown Extensions" for the product
    # "pymdown", so a note naming it in full is about it
    full_names: dict[str, frozenset[str]] = field(default_factory=dict)


def _read(ctx: Context) -> _Read:
    found = ctx.run.claims
    if isinstance(found, _Read):
        return found
    sources = cache(ctx)
    docs = [d for p in sorted(ctx.raw_files) if (d := sources.get(p)) is not None and not d.skipped]
    profiles = {d.path: d.profile for d in docs}
    series = series_of(profiles)
    every = [c for d in docs for c in d.claims]
    # the same series and the same product's facts as the timelines (timelines.whose)
    claims = [c for c in whose(every, series) if c.key[0] not in ("supported", "removed")]
    kinds = {p: pr.kind for p, pr in profiles.items()}
    lines = build(every, series, kinds, {p: pr.named for p, pr in profiles.items()},
                  {p: pr.newest for p, pr in profiles.items()})
    full_names: dict[str, set[str]] = defaultdict(set)
    for d in docs:
        s = series.get(d.path)
        if s is not None and s.product and posixpath.basename(d.path).lower().startswith(ENTRY_NAMES):
            full_names[s.product].update(title_words(d.profile.title))
    result = _Read(claims, Order(docs), every, series, lines, kinds,
                   {k: frozenset(v) for k, v in full_names.items()})
    ctx.run.claims = result
    return result


def _claims(ctx: Context) -> tuple[list[Claim], Order]:
    read = _read(ctx)
    return read.claims, read.order


def _pages_for(ctx: Context, raw: str) -> list[str]:
    index = ctx.run.pages_by_source
    if index is None:
        index = defaultdict(list)
        for page in ctx.pages.values():
            if page.kind == "source":
                for s in page.page.sources if page.page else []:
                    index[s].append(page.wpath)
        ctx.run.pages_by_source = index
    return list(index.get(raw, []))


def _said(c: Claim) -> str:
    """A claim's value for a finding's evidence: its numbers, or a word value as written."""
    return " ".join(c.value_text.split()).rstrip(",;:") if is_choice(c) else dotted(c.value)


def _rkey(c: Claim) -> tuple[object, ...] | None:
    return c.release_key


def _key_label(key: tuple[str, str, str], sample: Claim) -> str:
    return fact_label(key, sample)


def _compare(order: Order, a: Claim, b: Claim) -> tuple[int, str]:
    """(-1 | 0 | 1, basis): a older, same, newer than b. Statements of one series that each
    name their release (a changelog's sections, a release's notes) are ordered by release;
    anything else by its source (order.compare)."""
    ka, kb = _rkey(a), _rkey(b)
    if a.series and a.series == b.series and ka and kb and ka != kb:
        return (-1 if ka < kb else 1), "release order"  # type: ignore[operator]
    return order.compare(a.source, b.source)


def _newest(group: list[Claim], order: Order) -> Claim:
    newest = group[0]
    for c in group[1:]:
        cmp, _ = _compare(order, c, newest)
        if cmp > 0 or (cmp == 0 and c.source == newest.source and _rkey(c) == _rkey(newest) and c.value > newest.value):
            newest = c
    return newest


def superseded(ctx: Context) -> Iterator[Finding]:
    claims, order = _claims(ctx)
    by_key: dict[tuple[str, str, str], list[Claim]] = defaultdict(list)
    by_series: dict[tuple[str, tuple[str, str, str]], list[Claim]] = defaultdict(list)
    for c in claims:
        # a "drop support" or "last version supporting" note ends a value; it states none
        if not c.plan and not c.change:
            by_key[c.key].append(c)
            by_series[(c.series, c.key)].append(c)
    yield from _stale_answers(ctx, by_key, order)
    for (_series, key), group in sorted(by_series.items()):
        if len({(c.source, _rkey(c)) for c in group}) < 2:
            continue
        newest = _newest(group, order)
        # the most recent older claim that gives another value
        previous: Claim | None = None
        others: dict[tuple[int, ...], str] = {}
        basis = ""
        for c in group:
            if (c.source == newest.source and _rkey(c) == _rkey(newest)) or compatible(c.value, newest.value):
                continue
            cmp, how = _compare(order, c, newest)
            if cmp >= 0:
                continue
            others.setdefault(c.value, _said(c))
            if previous is None or _compare(order, c, previous)[0] > 0:
                previous, basis = c, how
        if previous is None:
            continue
        label = _key_label(key, newest)
        older = [others[v] for v in sorted(others) if v != previous.value]
        message = (
            f"{label}: {previous.source} ({order.label(previous.source)}) says {previous.value_text}; "
            f"{newest.source} ({order.label(newest.source)}) says {newest.value_text}, which is current "
            f"(newer by {basis})"
            + (f"; older values too: {', '.join(older)}" if older else "")
        )
        yield Finding.make(
            "superseded", "warning", message,
            paths=[previous.source, newest.source, *_pages_for(ctx, previous.source)],
            lines=[previous.line, newest.line],
            evidence={
                "fact": label,
                "old": {"path": previous.source, "sentence": previous.sentence, "value": _said(previous)},
                "current": {"path": newest.source, "sentence": newest.sentence, "value": _said(newest)},
                "basis": basis,
            },
        )


_QUOTE_LINE = re.compile(r"^[ \t]*[-*][ \t]+[\"“].*$|^[ \t]*>.*$", re.MULTILINE)


def _stale_answers(ctx: Context, by_key: dict[tuple[str, str, str], list[Claim]], order: Order) -> Iterator[Finding]:
    """An answer page (filed by `query --save` or written by a person) that states a value the
    sources have since replaced. Quotes (`- "..."`, `> ...`) are the sources' words, not the
    page's claim, and are left out; so are plans and past tense, as in sources."""

    products = Counter(d.version[0] for d in order.docs.values() if d.version)
    product = products.most_common(1)[0][0] if products else None
    for page in ctx.pages.values():
        if page.kind != "answer" or page.page is None or page.is_generated:
            continue
        body = _QUOTE_LINE.sub("", page.body)
        if not _DIGIT.search(body) or not has_hint(body):
            continue
        doc = load_markdown(page.wpath, body)

        # an answer is about the sources' product ("Widget requires ...") without naming a release
        text = Statements(page.wpath, doc.title, (product, "") if product else None, product or "", None,
                          [(s.text, s.line, None, None) for s in split_sentences(doc) if s.kind != "heading"])
        written = str(page.meta.get("updated") or page.meta.get("date") or "")[:10]
        for claim in extract(text):
            group = by_key.get(claim.key)
            if claim.plan or not group:
                continue
            current = _newest(group, order)
            if compatible(claim.value, current.value):
                continue
            current_date = order.date.get(current.source)
            if written and current_date and written >= current_date:
                continue  # the page was written after the newest source: it may know better
            label = _key_label(claim.key, current)
            line = page.body_offset + claim.line
            yield Finding.make(
                "superseded", "warning",
                f"{label}: {page.wpath} says {claim.value_text}; {current.source} ({order.label(current.source)}) "
                f"says {current.value_text}, which is current",
                paths=[page.wpath, current.source], lines=[line, current.line],
                evidence={
                    "fact": label,
                    "old": {"path": page.wpath, "sentence": claim.sentence, "value": _said(claim)},
                    "current": {"path": current.source, "sentence": current.sentence, "value": _said(current)},
                    "basis": "answer page",
                },
            )


def _page(read: _Read, c: Claim) -> bool:
    """A statement of a product's reference pages, about no release in particular."""
    return c.release is None and read.kinds.get(c.source, "reference") == "reference"


def contradicted(ctx: Context) -> Iterator[Finding]:
    read = _read(ctx)
    claims, order = read.claims, read.order
    products = {s.name for s in read.series.values() if s.product}
    by_key: dict[tuple[str, tuple[str, str, str]], list[Claim]] = defaultdict(list)
    for c in claims:
        if not c.change:
            by_key[(c.series, c.key)].append(c)
    for (series_name, key), group in sorted(by_key.items()):
        actual = [c for c in group if not c.plan]
        label = _key_label(key, group[0])
        product_series = series_name in products
        # 1. a plan against the outcome: "1.19 will require X" but a later source says 1.20 did
        plans: dict[tuple[str, int, str], list[Claim]] = defaultdict(list)
        for c in group:
            if c.plan and c.release is not None:
                plans[(c.source, c.line, c.release)].append(c)
        reported: set[tuple[str, object]] = set()
        for (source, _line, planned), alternatives in sorted(plans.items()):
            subject_v = version_key(planned)
            # "will require FreeBSD 11.2+ or FreeBSD 12.0+": the plan holds if any alternative came true
            plan = alternatives[0]
            if (source, subject_v) in reported:
                continue
            if any(_rkey(c) == subject_v and compatible(c.value, p.value) for c in actual for p in alternatives):
                continue
            later = [c for c in actual if c.source != source and order.compare(c.source, source)[0] > 0]
            # the outcome: the same value arriving with another release, or the planned release with another value
            moved = [c for c in later if c.release is not None and _rkey(c) != subject_v
                     and any(compatible(c.value, p.value) for p in alternatives)]
            changed = [c for c in later if _rkey(c) == subject_v]
            outcome = _earliest(order, moved or changed)
            if outcome is None:
                continue
            reported.add((source, subject_v))
            subject = planned
            if moved:
                what = f"planned for release {subject}, but {outcome.source} says it came with {outcome.release}"
            else:
                what = f"planned {plan.value_text} for release {subject}, but {outcome.source} says {outcome.value_text}"
            yield Finding.make(
                "contradicted", "warning",
                f"{label}: {what} (plan in {plan.source}, {order.label(plan.source)})",
                paths=[plan.source, outcome.source, *_pages_for(ctx, plan.source)], lines=[plan.line, outcome.line],
                evidence={
                    "fact": label,
                    "plan": {"path": plan.source, "sentence": plan.sentence},
                    "outcome": {"path": outcome.source, "sentence": outcome.sentence},
                },
            )
        # 2. two sources of the same time (or no order at all) that disagree
        seen: set[tuple[str, str]] = set()
        buckets: dict[object, list[Claim]] = defaultdict(list)
        for c in actual:
            if is_choice(c):
                # "the default name is X" on two pages is two things' defaults as often as one
                # thing's said twice: a word default's subject is a phrase, not a name
                continue
            # only claims that no date, release or file time orders can contradict each other
            buckets[order.bucket(c.source)].append(c)
        for bucket in buckets.values():
            for i, a in enumerate(bucket):
                for b in bucket[i + 1 :]:
                    if a.source == b.source or compatible(a.value, b.value):
                        continue
                    pair = tuple(sorted((a.source, b.source)))
                    if pair in seen:
                        continue
                    cmp, how = order.compare(a.source, b.source)
                    if cmp != 0:
                        continue
                    if a.release is not None and b.release is not None and _rkey(a) != _rkey(b):
                        continue  # about different releases: both can be true
                    if product_series and not (_page(read, a) and _page(read, b)):
                        continue  # a release's statement is history beside the product's pages (the timeline decides)
                    seen.add(pair)  # type: ignore[arg-type]
                    yield Finding.make(
                        "contradicted", "warning",
                        f"{label}: {a.source} says {a.value_text}, {b.source} says {b.value_text}, and neither is newer ({how})",
                        paths=[a.source, b.source], lines=[a.line, b.line],
                        evidence={
                            "fact": label,
                            "a": {"path": a.source, "sentence": a.sentence},
                            "b": {"path": b.source, "sentence": b.sentence},
                        },
                    )


def _earliest(order: Order, claims: list[Claim]) -> Claim | None:
    best: Claim | None = None
    for c in claims:
        if best is None or order.compare(c.source, best.source)[0] < 0:
            best = c
    return best


# --- stale notes: a value the wiki's own timelines have moved past ------------------------------


def stale_notes(ctx: Context) -> Iterator[Finding]:
    """A source outside a product's documentation (a team's notes, a README, a person's page in
    wiki/) that states an older value of a fact the product's timeline tracks; and a reference
    page of the product that the newest release contradicts. A note stating the current value,
    a value about an old release ("Acme 1.4 supports Python 3.6"), or a value of a product the
    wiki has no timeline for is not one."""
    read = _read(ctx)
    tracked: dict[tuple[str, str, str], list[Timeline]] = defaultdict(list)
    for t in read.timelines:
        if t.product:
            tracked[(t.key[0], t.key[1], t.key[2])].append(t)
    yield from _disagreements(ctx, read)
    yield from _removed_in_notes(ctx, read)
    stated = _stated_defaults(read)
    if not tracked and not stated:
        return
    titles = {d.path: d.profile.title for p in ctx.raw_files if (d := cache(ctx).get(p)) is not None}
    products = {t.product for ts in tracked.values() for t in ts} | {c.series for cs in stated.values() for c in cs}
    seen: set[tuple[str, int, str]] = set()
    for c in read.every:
        s = read.series.get(c.source)
        if s is None or (s.product and s.product in products):
            continue  # a product's own documentation is its evidence, not a note about it
        yield from _stale(ctx, read, tracked, c, title_words(titles.get(c.source, "")), c.source, c.line, seen)
        yield from _stale_default(tracked, stated, c, c.source, c.line, seen)
    for page, claims in _person_pages(ctx):
        words = title_words(page.title)
        for c in claims:
            yield from _stale(ctx, read, tracked, c, words, page.wpath, page.body_offset + c.line, seen)
            yield from _stale_default(tracked, stated, c, page.wpath, page.body_offset + c.line, seen)


# a note that says a name went, or that it still uses it only in the past, is up to date
_GONE_ALREADY = re.compile(r"\b(?:no\s+longer|instead\s+of|replaced?d?|removed?|renamed?|deprecated|used\s+to|"
                           r"migrat\w+|moved\s+(?:off|away)|switch(?:ed)?\s+(?:from|off)|old)\b", re.I)
# ... or that it does not use it ("we never set `X`", "`X` is not needed"): a negation near the
# name, not one elsewhere in the sentence ("strings that are not valid fall back on `X`")
_NOT = re.compile(r"\b(?:not|never)\b|n't\b", re.I)


# a note that says a name is deprecated ("`X` is deprecated", "deprecated `X`"), not that it is not
_SAYS_DEPRECATED = re.compile(r"\bdeprecat\w*", re.I)
_NOT_DEPRECATED = re.compile(r"\b(?:no\s+longer|not|never|un-?)\s*deprecat|n't\s+deprecat", re.I)


def _plain(name: str) -> bool:
    """A name spelled as a word is (`schedule`, `Engine`): found in a note only as code or a call."""
    return name.isalpha() and (name.islower() or name[1:].islower())


def _negated_near(text: str, start: int, end: int) -> bool:
    """Whether a negation stands within four words before text[start:end] or three after it."""
    before = re.search(r"(?:\S+\s+){0,4}\S*$", text[:start])
    after = re.match(r"(?:\s*\S+){0,3}", text[end:])
    return bool(_NOT.search((before.group(0) if before else "") + " " + (after.group(0) if after else "")))


def _short_name(name: str) -> str | None:
    """The last part of a dotted name, where it is distinct enough to stand for it in a note
    (`Response.get_header` -> "get_header", written `resp.get_header(...)`), else None."""
    last = name.rsplit(".", 1)[-1]
    if last == name:
        return None
    return last if "_" in last or any(c.isupper() for c in last[1:]) or len(last) >= 8 else None


def _names_another(text: str, start: int, c: Claim) -> bool:
    """Whether the dotted name a note writes where a removed name's last part stands is another
    name the release's own words give ("`acme.run` is deprecated in favor of
    `acme.lowlevel.run`", a note using `acme.lowlevel.run`): the replacement, not the name gone."""
    m = re.search(r"[\w.]*$", text[:start])
    end = re.match(r"\.?[\w.]*\w", text[start:])
    whole = (m.group(0) if m else "") + (end.group(0) if end else "")
    if not whole or whole.lower() == c.value_text.lower():
        return False
    return re.search(rf"(?<![\w.]){re.escape(whole)}(?![\w])", c.sentence, re.I) is not None


def _removed_in_notes(ctx: Context, read: _Read) -> Iterator[Finding]:
    """A note (a source outside a product's documentation) that still uses a name the product's
    release notes say was removed or renamed (facts.removed_names): "Export `ACME_ENV=development`"
    after "The `ACME_ENV` environment variable ... are removed"; or deprecated, as an "info"
    finding (the name still works). A note that says the name went, or speaks of it in the past or
    in the negative, is not one."""
    gone: dict[str, Claim] = {}  # the name as a note writes it, lowercased -> the newest statement of its removal
    for c in read.every:
        s = read.series.get(c.source)
        if c.key[0] != "removed" or c.plan or s is None or not s.product:
            continue
        if _plain(c.value_text) and old_release(c, s.newest, s.newest_date):
            # a common word an old release removed (the timelines' old: majors or years behind
            # the newest; "the `install` command") is more often the word in a note than that name
            continue
        c = replace(c, series=s.product)
        for key in filter(None, (c.value_text.lower(), _short_name(c.value_text))):
            old = gone.get(key.lower())
            # the newest release's word on it; one release that says both, brought back
            if old is None or (c.release_key or ()) > (old.release_key or ()) \
                    or ((c.release_key or ()) == (old.release_key or ()) and c.change in ("restored", "undeprecated")):
                gone[key.lower()] = c
    # the newest says it came back: not gone; deprecated, a note that uses it is out of date too;
    # no longer deprecated, a note that says it is deprecated is
    gone = {k: c for k, c in gone.items() if c.change in ("removed", "deprecated", "undeprecated")}
    if not gone:
        return
    products = {c.series for c in gone.values()}
    docs = cache(ctx)
    # one scan of a document's words finds every name it may use (a dotted name by its last part)
    token = {k: k.rsplit("-", 1)[-1] if k.startswith("--") else k.rsplit(".", 1)[-1] for k in gone}
    scan = re.compile(r"(?<= )(?:" + "|".join(sorted(map(re.escape, set(token.values())), key=len, reverse=True))
                      + r")(?= )")
    for path in sorted(ctx.raw_files):
        d = docs.get(path)
        s = read.series.get(path)
        if d is None or d.skipped or s is None or (s.product and s.product in products):
            continue
        found = set(scan.findall(d.words))
        hits = [k for k in gone if token[k] in found]
        if not hits:
            continue
        try:
            doc = load_source(Path(ctx.raw_files[path]), path, max_bytes=int(ctx.settings.max_source_mb * 1_000_000))
        except (SkipSource, OSError, ValueError, RecursionError):
            continue
        # one finding a name: the first sentence that uses it, with the lines of every other one
        uses: dict[str, tuple[Claim, Any, list[int]]] = {}
        for sentence in split_sentences(doc):
            if sentence.kind == "heading":
                continue
            said_gone = _GONE_ALREADY.search(sentence.text) is not None
            said_deprecated = _SAYS_DEPRECATED.search(sentence.text) is not None \
                and not _NOT_DEPRECATED.search(sentence.text)
            for key in hits:
                c = gone[key]
                if (said_gone and c.change != "undeprecated") or (c.change == "undeprecated" and not said_deprecated):
                    continue
                short = key != c.value_text.lower()
                # a name as written, or qualified by its module ("aiohttp.BasicAuth"); a name that is a
                # plain word (a method `schedule()`) only as code or a call, not "to schedule the spiders",
                # and in its own case: code's names are case-sensitive (`Title` is not an HTML `<title>`)
                flags: re.RegexFlag | int = re.I
                if short:
                    pattern = rf"\.{re.escape(key)}\b"
                elif key.startswith("--"):
                    pattern = rf"(?<![\w-]){re.escape(key)}(?![\w-])"  # an option: `--root`, not `--root-dir`
                elif _plain(c.value_text):
                    name = re.escape(c.value_text)
                    pattern = rf"`[^`\n]*(?<![\w]){name}(?![\w])[^`\n]*`|(?<![\w]){name}\("
                    flags = 0
                else:
                    pattern = rf"(?<![\w]){re.escape(key)}(?![\w])"
                used = re.search(pattern, sentence.text, flags)
                if used is None or _negated_near(sentence.text, used.start(), used.end()):
                    continue
                if short and _names_another(sentence.text, used.start(), c):
                    continue
                if key in uses:
                    uses[key][2].append(sentence.line)
                else:
                    uses[key] = (c, sentence, [sentence.line])
        for c, sentence, lines in uses.values():
            when = f"{c.release}, {c.date}" if c.release and c.date else c.release or c.date or "a release"
            where = f"{path} (lines {', '.join(map(str, lines))})" if len(lines) > 1 else path
            said = f"{c.series} {c.change} {c.value_text} in {when} ({c.source}, line {c.line}): {where} still uses it"
            if c.change == "undeprecated":
                said = (f"{c.series} no longer deprecates {c.value_text}, since {when} ({c.source}, line {c.line}): "
                        f"{where} says it is deprecated")
            yield Finding.make(
                # a deprecated name still works: worth knowing, less pressing than a name that is gone
                "stale-note", "info" if c.change == "deprecated" else "warning",
                f"{said}; update the note, or accept this if it means something else",
                paths=[path, c.source], lines=[sentence.line, c.line],
                evidence={
                    "fact": f"{c.value_text} {c.change} ({c.series})",
                    "note": {"path": path, "sentence": sentence.text, "value": c.value_text, "lines": lines},
                    "current": {"path": c.source, "sentence": c.sentence, "value": c.change},
                },
            )


def _stated_defaults(read: _Read) -> dict[str, list[Claim]]:
    """The defaults a product's reference pages state of its settings ("Default: ``180``" under
    the setting), by setting: the yardstick for a note's default where no timeline tracks it.
    Where no reference states one, the newest release that says what the default is
    ("`seal_page` uses blake2 by default", said once, in 4.1) states it."""
    out: dict[str, list[Claim]] = defaultdict(list)
    released: dict[str, list[Claim]] = {}
    for c in read.every:
        # a release's change states the new default ("defaults to 500kB instead of unlimited")
        if c.key[0] != "choice" or c.key[2] or c.change not in ("", "from") or c.plan \
                or (c.change and not c.release_key):
            continue
        s = read.series.get(c.source)
        if s is None or not s.product:
            continue
        if not c.release and read.kinds.get(c.source) == "reference":
            out[c.key[1]].append(replace(c, series=s.product))
        elif c.release_key:
            newest = released.get(c.key[1])
            if newest is None or c.release_key > (newest[0].release_key or ()):
                released[c.key[1]] = [replace(c, series=s.product)]
            elif c.release_key == newest[0].release_key:
                newest.append(replace(c, series=s.product))
    for key, claims in released.items():
        if key not in out:
            out[key] = claims
    return out


_WAS = re.compile(r"\s+\(was [^()]*\)$")  # a change's new value, the old one beside it ("500kB (was unlimited)")


def _stated_value(r: Claim) -> str | None:
    """The default a reference or a release states, as one value: a reference's "Default:"
    shows its code without marks (`{'retry': True}`), and it is code all the same."""
    value = _WAS.sub("", r.value_text)
    return atomic_value(value) or (atomic_value(f"`{value}`") if not r.release and "`" not in value else None)


def _stale_default(tracked: dict[tuple[str, str, str], list[Timeline]], stated: dict[str, list[Claim]], c: Claim,
                   where: str, line: int, seen: set[tuple[str, int, str]]) -> Iterator[Finding]:
    """A note's "`X` is off by default" where the product's reference says X's default is True:
    only when the reference states one value, of one product, and both are a word, a number or
    a code span (a value said in a phrase is not weighed)."""
    if c.key[0] != "choice" or c.plan or c.change or (c.key[0], c.key[1], "") in tracked:
        return
    refs = stated.get(c.key[1], [])
    if not refs or len({r.series for r in refs}) != 1 or (where, line, c.key[1]) in seen:
        return
    values = {_stated_value(r) for r in refs}
    said = atomic_value(c.value_text)
    if len(values) != 1 or None in values or said is None:
        return
    (current,) = values
    if choice_key(said) == choice_key(str(current)):
        return
    ref = refs[0]
    now = _WAS.sub("", ref.value_text)
    seen.add((where, line, c.key[1]))
    label = f"Default of {c.key[1]} ({ref.series})"
    says = f"the notes of {ref.release} say" if ref.release else "the reference says"
    yield Finding.make(
        "stale-note", "warning",
        f"{label}: {where} says {_said(c)}; {says} {now}, from "
        f"{ref.source}: update the note to {now}, or accept this if it means something else",
        paths=[where, ref.source], lines=[line, ref.line],
        evidence={
            "fact": label,
            "note": {"path": where, "sentence": c.sentence, "value": _said(c)},
            "current": {"path": ref.source, "sentence": ref.sentence, "value": now},
        },
    )


def _whose_note(c: Claim, tracked: dict[tuple[str, str, str], list[Timeline]], title: tuple[str, ...],
                relation: str, full_names: Mapping[str, frozenset[str]] | None = None) -> Timeline | None:
    """The product timeline a note's statement is about: the product its sentence names (by its
    name, or by the words its front page titles it with: "PyMdown Extensions" for "pymdown"),
    else the one its title names, else the only product tracking that fact."""
    _, name, role = c.key
    scope = role.split(", ")[-1] if role else ""
    named = "" if not scope or scope.startswith("on ") else scope
    candidates = [t for t in tracked.get((relation, name, ""), [])]
    if named:
        words = named.split()

        def names(t: Timeline) -> bool:
            return t.product == named or (len(words) > 1 and words[0] == t.product
                                          and set(words) <= (full_names or {}).get(t.product, frozenset()))
        return next((t for t in candidates if names(t) and product_role(role, named) is not None), None)
    if role and product_role(role, "") is None and not scope.startswith("on "):
        return None
    by_title = [t for t in candidates if t.product in title]
    if len(by_title) == 1:
        return by_title[0]
    return candidates[0] if len(candidates) == 1 else None


def _stale(ctx: Context, read: _Read, tracked: dict[tuple[str, str, str], list[Timeline]], c: Claim,
           title: tuple[str, ...], where: str, line: int, seen: set[tuple[str, int, str]]) -> Iterator[Finding]:
    relation = c.key[0]
    if c.plan or c.change not in ("", "from"):
        return
    wanted = "min" if relation == "supported" else relation
    t = _whose_note(c, tracked, title, wanted, read.full_names)
    if t is None or (where, line, t.slug) in seen:
        return
    newest = read.series.get(t.current.source)
    top = release_numbers(newest.newest if newest else None)
    mine = release_numbers(c.release)
    if mine and top and mine[:2] < top[:2]:
        return  # about an older release ("Acme 1.4 supported Python 3.6"): history, not a stale note
    if wanted == "max":
        # an older newest version is stale; a newer one is the note's own hope
        stale = c.value < t.bound and not compatible(c.value, t.bound)
    elif wanted == "min":
        # an older minimum is stale; a higher one is the note's own choice, not the product's
        stale = (c.value <= t.bound or compatible(c.value, t.bound)) if t.above else \
            (c.value < t.bound and not compatible(c.value, t.bound))
    else:
        stale = not compatible(c.value, t.bound)
    if not stale:
        return
    seen.add((where, line, t.slug))
    label = t.title.rsplit(" (", 1)[0]
    current = t.current
    said = " ".join(c.value_text.split())
    when = f"{current.release}, {current.date}" if current.release and current.date else current.release or current.date or "current documentation"
    yield Finding.make(
        "stale-note", "warning",
        f"{label}: {where} says {said}; the wiki's timeline says {t.value} ({when}), from {current.source}: "
        f"update the note to {t.value}, or accept this if it means something else",
        paths=[where, current.source, f"wiki/{t.page}"], lines=[line, current.line, 0],
        evidence={
            "fact": label, "timeline": f"wiki/{t.page}",
            "note": {"path": where, "sentence": c.sentence, "value": _said(c)},
            "current": {"path": current.source, "sentence": current.sentence, "value": t.value},
        },
    )


def _disagreements(ctx: Context, read: _Read) -> Iterator[Finding]:
    """A reference page and the newest release of one product that state different values: the
    newer one is the timeline's current value, and the other is named to be fixed."""
    for t in read.timelines:
        other = t.disagrees
        if other is None or t.split:
            continue  # two pages of the current documentation: `contradicted` reports them
        current = t.current
        label = t.title.rsplit(" (", 1)[0]
        yield Finding.make(
            "stale-note", "warning",
            f"{label}: {other.source} says {' '.join(other.value_text.split())}; {current.source} "
            f"({current.release or 'current documentation'}) says {t.value}, which is current: "
            f"update {other.source}, or the timeline is wrong",
            paths=[other.source, current.source, f"wiki/{t.page}"], lines=[other.line, current.line, 0],
            evidence={
                "fact": label, "timeline": f"wiki/{t.page}",
                "note": {"path": other.source, "sentence": other.sentence, "value": _said(other)},
                "current": {"path": current.source, "sentence": current.sentence, "value": t.value},
            },
        )


_SKIP_KINDS = frozenset({"source", "concept", "fact", "answer"})


def _person_pages(ctx: Context) -> Iterator[tuple[Any, list[Claim]]]:
    """Pages in wiki/ a person wrote (no source, concept, timeline or answer page), with the
    claims their own sentences make (quotes are the sources' words, and are left out)."""

    for page in ctx.pages.values():
        if page.is_generated or page.kind in _SKIP_KINDS or page.path in ("lint.md", "log.md", "index.md", "AGENTS.md"):
            continue
        if page.path.startswith(("facts/", "sources/", "concepts/")):
            continue
        body = _QUOTE_LINE.sub("", page.body)
        if not _DIGIT.search(body) or not has_hint(body):
            continue
        doc = load_markdown(page.wpath, body)
        text = Statements(page.wpath, doc.title, None, "", None,
                          [(s.text, s.line, None, None, "", s.kind) for s in split_sentences(doc) if s.kind != "heading"])
        yield page, extract(text)

"""Timelines: a page per fact that changed, the current value first with its evidence, by code.

From every source's facts (facts.py) this groups the statements of one fact of one product
(products.py names the product of each documentation set; a statement counts for a product only
when it is the product's: its own documents say it, and no feature, plugin or other package is
what requires the value), orders them by release (the lexicon's version keys, then date), and
writes `wiki/facts/<slug>.md` for each fact whose value changed.

The claim at the top says how strong its evidence is:

- `Current: **VALUE**` when the product's current reference documentation (a page that is no
  release note, changelog, announcement or migration guide) states the value, or a dated
  release of the product's series states it and that release is less than two major versions,
  and less than five years, behind the newest release the documentation names;
- `Latest statement (RELEASE, DATE): **VALUE**` when the evidence is weaker: the newest
  statement is an old release's, or undated (an announcement). A changelog whose releases carry
  no date but that goes up to the newest release is a running record: what it said last, not
  two majors back, is current.

Where the reference pages and the newest release disagree, the newer wins (the reference pages
ship with the newest release; a release of that same line is as new, and its explicit record
wins the tie) and the page, like lint, names the statement that disagrees. "Drops X 3.0" is no
value: the current value is then the oldest version the documentation still states or lists
("3.1"), else the version after the dropped one where the documents show it exists (they name
it, or a later one of a series they number one by one: "3.6", "3.7", ... "3.12"; see
successor), else "above X 3.0". A list of every version supported ("3.10, 3.11, 3.12") states its
oldest as the minimum. The newest version supported ("Add support for Python 3.14") only grows:
its current value is the newest release's statement of it. Statements that disagree with
nothing to order them make no claim, and no page.

Why pages of their own rather than a section of concept pages: a fact's subject ("minimum
macOS version") is rarely a concept page, search must be able to rank the timeline first for
"what is the current ...", and index.md links them as a group. Concept pages of the subject and
the source pages that state a fact link their timeline.

Timeline pages are generated like index.md: rewritten from the sources on every compile that
changes anything, deterministic, and only written when their bytes change.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from . import __version__
from .analysis import split_sentences
from .facts import (
    Fact,
    Profile,
    at_least,
    compatible,
    dotted,
    is_choice,
    label,
    product_role,
    read_record,
    record,
)
from .lexicon import release_numbers, version_key, version_numbers
from .pages import Page, certify, escape_link_text, inert, relative_link, slugify, today
from .products import Series, series_of
from .sources import SkipSource, load_source
from .workspace import owned, read_owned, remove_empty_folders, remove_owned, write_changed

if TYPE_CHECKING:
    from .state import State
    from .workspace import Workspace

FOLDER = "facts"
MAX_ROWS = 40
OLD_MAJORS = 2  # a release this many major versions behind the newest is an old one: its statement is weak evidence
OLD_YEARS = 5  # ... and so is a release dated this many years before the newest, whatever its number


@dataclass
class Timeline:
    series: str
    key: tuple[str, str, str]
    title: str
    slug: str
    rows: list[Fact]  # outcomes, newest first
    plans: list[Fact]
    current: Fact  # the statement the claim cites
    replaced: Fact | None
    strong: bool = True  # "Current" (True) or "Latest statement" (False)
    value: str = ""  # the claim's value as shown ("Python 3.10", "above Python 3.9")
    bound: tuple[int, ...] = ()  # the claim's value as numbers (for "above X": X)
    above: bool = False  # the claim is "above `bound`" (a drop, and nothing the docs still state)
    product: str = ""  # the product whose fact it is ("" for a series of notes)
    disagrees: Fact | None = None  # a reference page (or release) that states another value
    after: tuple[int, ...] = ()  # the claim is the version after this one, which `current` drops
    split: bool = False  # the current documentation states two values (`current` the lower, `disagrees` the higher)

    @property
    def page(self) -> str:
        return f"{FOLDER}/{self.slug}.md"

    def accepts(self, value: tuple[int, ...]) -> bool:
        """Whether a minimum stated elsewhere agrees with this claim (lint's stale notes): the
        same value, or for "above X" any value above X."""
        if self.above:
            return value > self.bound and not compatible(value, self.bound)
        return compatible(value, self.bound)


def _order(f: Fact) -> tuple[Any, ...]:
    """Newest first: by the release the statement belongs to, then its date; a statement that
    names no release (a documentation page) sorts as the oldest here (see _decide)."""
    return (1 if f.release else 0, f.release_key or (0,), f.date or "", -f.line)


def _name(f: Fact) -> str:
    """The name a value is written with ("Python 3.8 and 3.9" -> "Python")."""
    words = re.sub(r"[><=≥~].*$", "", f.value_text).split()
    names = [w for w in words if not re.match(r"v?\d", w)]
    return " ".join(names[: max(1, len(f.key[1].split()))]) if names else ""


def _value_text(f: Fact) -> str:
    text = " ".join(f.value_text.split())
    if is_choice(f):
        return text  # a word, and what it replaced ("psycopg (was psycopg2)")
    if f.change == "drop":
        return f"drops {text}"
    if f.change == "last":
        return f"last release supporting {text}"
    if f.change == "from":
        return dotted(f.value) + " (was " + dotted(f.old) + ")"
    if f.newest:
        return f"{_name(f)} {dotted(f.value)}".strip()
    return text


def _major(release: str | None) -> int | None:
    numbers = release_numbers(release)
    return numbers[0] if numbers else None


def _recent(f: Fact, newest: str | None) -> bool:
    """Of the newest release's line (the same major and minor): as new as the reference pages."""
    a, b = release_numbers(f.release), release_numbers(newest)
    return bool(a and b) and a[:2] >= b[:2]  # type: ignore[index]


def old_release(f: Fact, newest: str | None, newest_date: str | None) -> bool:
    """A release OLD_MAJORS major versions behind the newest; where the major version is the
    year (calendar versions: "24.3.0" of 2024), OLD_MAJORS years behind by date; and any release
    dated OLD_YEARS years or more before the newest (a project whose majors come a decade apart:
    what its 1.5 said in 2014 is no evidence of what its 2.1 needs in 2026)."""
    mine, top = _major(f.release), _major(newest)
    if mine is None or top is None:
        return False
    if f.date and newest_date:
        if _years_behind(f.date, newest_date, OLD_YEARS):
            return True
        if top == int(newest_date[:4]) or top == int(newest_date[2:4]):
            return _years_behind(f.date, newest_date, OLD_MAJORS)
    return mine <= top - OLD_MAJORS


def _years_behind(date: str, newest_date: str, years: int) -> bool:
    """Whether `date` is `years` years or more before `newest_date` (ISO dates)."""
    gap = int(newest_date[:4]) - int(date[:4])
    return gap > years or (gap == years and newest_date[5:] >= date[5:])


def _strong(f: Fact, newest: str | None, kinds: Mapping[str, str], newest_date: str | None = None,
            running: Collection[str] = ()) -> bool:
    """A release's statement is evidence of the current value when it is not old, and dated, or
    of the newest release itself, or on a reference page ("Acme 9.0+ needs Python 3.10+" in a
    support table), or in a changelog that goes up to the newest release (`running`: it records
    every release, so what it says last of a fact still holds, dated or not). An undated
    statement of an older release elsewhere (an announcement) is weaker."""
    if f.release is None:
        return False
    old = old_release(f, newest, newest_date)
    newest_itself = newest is not None and version_key(f.release)[:2] == version_key(newest)[:2]
    return bool(f.date or newest_itself or kinds.get(f.source) == "reference" or f.source in running) and not old


@dataclass
class _Claim:
    cite: Fact
    strong: bool
    value: str
    bound: tuple[int, ...]
    above: bool = False
    disagrees: Fact | None = None
    after: tuple[int, ...] = ()  # the dropped version the claim's value follows (see successor)
    split: bool = False  # reference pages that disagree, and nothing newer to settle it (Timeline.split)


def successor(dropped: tuple[int, ...], named: Iterable[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The version after a dropped one ("3.9" -> "3.10"), when the documents show it exists: they
    name it, or they name a later version of the same series and the series is numbered one by
    one (two of its versions named are consecutive: "3.6" and "3.7"). None otherwise: a series
    that skips numbers (even releases only) or a next major version gives no successor to infer."""
    if not dropped:
        return None
    after = (*dropped[:-1], dropped[-1] + 1)
    same = sorted({v[-1] for v in named if len(v) == len(dropped) and v[:-1] == dropped[:-1]})
    if after[-1] in same:
        return after
    if any(x > after[-1] for x in same) and any(b - a == 1 for a, b in zip(same, same[1:], strict=False)):
        return after
    return None


def _agree(claim_value: tuple[int, ...], above: bool, f: Fact) -> bool:
    if above:
        return f.value > claim_value and not compatible(f.value, claim_value)
    return compatible(f.value, claim_value)


def _decide(key: tuple[str, str, str], outcomes: list[Fact], kinds: Mapping[str, str], newest: str | None,
            newest_date: str | None = None, named: Iterable[tuple[int, ...]] = (),
            running: Collection[str] = ()) -> _Claim | None:
    """The claim a timeline makes, or None when its evidence makes none (see the module's docstring)."""
    if key[0] == "max":
        # the newest version supported: the newest release's statement of it (its highest), since
        # it grows release by release; the highest value of all could be another numbering of
        # the name (a runtime's own versions before the language versions it implements)
        top = max(outcomes, key=lambda f: (f.release is not None, f.release_key or (), f.date or "", f.value))
        if old_release(top, newest, newest_date):
            return None  # the last said of it is majors behind the newest release, which added versions since
        # said by an earlier major series, it is the latest statement, not what holds now: the
        # releases since may have added versions in words the rules do not read
        strong = _strong(top, newest, kinds, newest_date, running) and (newest is None or _major(top.release) == _major(newest))
        if top.release is not None and not _recent(top, newest):
            # the current documentation names a newer version of the same numbering than an older
            # release's notes did ("requires Python 3.11, ..., or 3.14" on the install page, 3.13
            # the last a release's notes said): the pages are as new as the newest release
            newer = [f for f in outcomes if f.release is None and kinds.get(f.source, "reference") == "reference"
                     and f.change in ("", "from") and f.value[:1] == top.value[:1] and f.value > top.value
                     and not compatible(f.value, top.value)]
            if newer:
                page = max(newer, key=lambda f: f.value)
                return _Claim(page, True, _value_text(page), page.value)
        return _Claim(top, strong, _value_text(top), top.value)
    states = ("", "from")
    refs = sorted((f for f in outcomes if f.release is None and kinds.get(f.source, "reference") == "reference"
                   and f.change in states), key=lambda f: (f.source, f.line))
    releases = [f for f in outcomes if f.release is not None]
    # a "last release supporting X" ends support only once a newer release exists
    releases = [f for f in releases if f.change != "last" or (newest is not None and _later(newest, f))]
    loose = [f for f in outcomes if f.release is None and f not in refs and f.change in states]
    reference = refs[0] if refs and all(compatible(r.value, refs[0].value) for r in refs) else None
    if refs and reference is None and not releases:
        return _split(key, refs)  # reference pages that disagree, and no release to say which is current
    newest_statement = None
    if releases:
        top = releases[0]
        # of the newest release's statements, its own notes' first (a page naming that release
        # says it in passing), and a value stated before a drop noted
        same = sorted((f for f in releases if f.release_key == top.release_key),
                      key=lambda f: kinds.get(f.source, "reference") != "release")
        newest_statement = next((f for f in same if f.change in states), same[0])
        said = [f for f in same if f.change in states]
        if reference is not None and any(not compatible(f.value, newest_statement.value) for f in said):
            # the newest release's notes state two values (an overview's "3.10 to 3.14" and its
            # list "3.11 ... 3.15"): the one the reference pages state is the one that holds
            newest_statement = next((f for f in said if compatible(f.value, reference.value)), newest_statement)
        elif key[0] == "min" and not refs and any(not compatible(f.value, newest_statement.value) for f in said):
            # two minimums in the newest release's notes and no reference page: both are
            # requirements, and only the higher meets both ("4.3.0+" in an overview, "updated to
            # 4.3.1" in its list of dependencies)
            newest_statement = max(said, key=lambda f: f.value)
    if refs and reference is None and newest_statement is not None and newest_statement.change in states:
        # reference pages that disagree among themselves ("3.10+" on one, "3.12 or newer" on
        # another): the newest release settles it only where it is recent and states one of
        # their values; an older release's word is history both pages have moved past
        agreeing = [r for r in refs if compatible(r.value, newest_statement.value)]
        if not (agreeing and _recent(newest_statement, newest)):
            return _split(key, refs)
        reference = agreeing[0]
    if newest_statement is None:
        if reference is not None:
            return _Claim(reference, True, _value_text(reference), reference.value)
        if loose and all(compatible(f.value, loose[0].value) for f in loose):
            return _Claim(loose[0], False, _value_text(loose[0]), loose[0].value)
        return None
    n = newest_statement
    if n.change in ("drop", "last"):
        # a release that drops two versions in two items drops up to the higher one
        n = max((f for f in same if f.change in ("drop", "last")), key=lambda f: f.value)
        # "drops X 3.0": the oldest version the documentation still states, else "above 3.0"
        still = [f for f in [*refs, *releases] if f.change in states and f.value > n.value
                 and not compatible(f.value, n.value) and (f.release is None or not _later(n.release or "", f))]
        stated = min(still, key=lambda f: f.value) if still else None
        if stated is not None and stated.release is None:
            return _Claim(stated, True, _value_text(stated), stated.value)
        if stated is not None:
            claim = _Claim(stated, _strong(stated, newest, kinds, newest_date, running), _value_text(stated), stated.value)
        elif (after := successor(n.value, named)) is not None:
            claim = _Claim(n, _strong(n, newest, kinds, newest_date, running), f"{_name(n)} {dotted(after)}".strip(), after,
                           after=n.value)
        else:
            name = _name(n)
            claim = _Claim(n, _strong(n, newest, kinds, newest_date, running), f"above {name} {dotted(n.value)}".replace("  ", " "), n.value, True)
    else:
        claim = _Claim(n, _strong(n, newest, kinds, newest_date, running), _value_text(n), n.value)
    if key[0] != "min":
        if reference is not None and not compatible(reference.value, claim.bound):
            if _recent(claim.cite, newest) and not (reference.date and claim.cite.date and reference.date > claim.cite.date):
                claim.disagrees = reference
                return claim
            return _Claim(reference, True, _value_text(reference), reference.value)
        return _Claim(reference, True, _value_text(reference), reference.value) if reference is not None else claim
    if reference is None:
        return claim
    if _agree(claim.bound, claim.above, reference) or compatible(reference.value, claim.bound):
        if claim.strong and not claim.above and claim.cite.change in states:
            return claim  # the newest release states the value the reference pages state: its words
        if claim.strong and not claim.above and len(reference.value) < len(claim.bound):
            # the pages say less than the newest release ("requires Python 3"; it dropped 3.10,
            # so 3.11): the release's value is within the pages' and says which
            return claim
        return _Claim(reference, True, _value_text(reference), reference.value)
    # they disagree: the newest release's line is as new as the reference pages, and its dated
    # record wins (unless the page is dated later); an older release's statement is history the
    # reference pages have moved past
    page_later = bool(reference.date and claim.cite.date and reference.date > claim.cite.date)
    if _recent(claim.cite, newest) and claim.cite.release is not None and not page_later:
        claim.disagrees = reference
        return claim
    return _Claim(reference, True, _value_text(reference), reference.value)


def _split(key: tuple[str, str, str], refs: list[Fact]) -> _Claim | None:
    """The claim of reference pages that disagree with nothing newer to settle it: for a minimum,
    both values, the lower first (a note below both is stale whichever page is right); for any
    other fact, none."""
    values = {r.value for r in refs}
    if key[0] != "min" or len(values) != 2:
        return None
    low, high = min(refs, key=lambda f: f.value), max(refs, key=lambda f: f.value)
    shown = f"{_name(low)} {dotted(low.value)} or {_name(high)} {dotted(high.value)}".replace("  ", " ").strip()
    return _Claim(low, False, shown, low.value, disagrees=high, split=True)


def _later(release: str, f: Fact) -> bool:
    """Whether `release` is newer than the release `f` belongs to."""
    return f.release is not None and version_key(release) > version_key(f.release)


def whose(facts: Iterable[Fact], series: Mapping[str, Series]) -> Iterable[Fact]:
    """The facts in their series, each keyed for its product: a fact that is not the product's
    (a feature's need, a plugin's requirement of the product, another package's support) is left
    out of a documentation set's timelines."""
    for f in facts:
        s = series.get(f.source)
        if s is None:
            continue
        relation, name, role = f.key
        if f.release and not f.date and (dated := s.date_of(f.release)):
            f = replace(f, date=dated)  # release notes an announcement of the same release dates
        if s.product:
            kept = product_role(role, s.product)
            if kept is None or (name == s.product and not kept):
                continue  # a feature's or another's requirement; the product's own version is a plugin's need
                # (its own use of itself, "Acme 2 needs Acme 1.20 for bootstrap", is a fact of its own)
            role = kept
        elif s.name and role == s.name:
            role = ""
        yield replace(f, series=s.name, key=(relation, name, role))


# a support the release adds ("now supports", "added support for"), not one it kept ("still
# supports") or ends ("the last version to support")
_NOW_SUPPORTS = re.compile(r"\b(?:now\s+(?:officially\s+|fully\s+)?supports?|add(?:s|ed)?\s+(?:official\s+|full\s+)?"
                           r"support)\b", re.IGNORECASE)


def build(facts: Iterable[Fact], series: Mapping[str, Series] | None = None,
          kinds: Mapping[str, str] | None = None,
          named: Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]] | None = None,
          newest: Mapping[str, str | None] | None = None) -> list[Timeline]:
    """The timelines of these facts. `series` (products.series_of) says whose each source's facts
    are, `kinds` which sources are reference pages (Profile.kind), `named` the versions each
    source names of each versioned name (Profile.named), `newest` the newest release each
    source names (Profile.newest: a changelog that names its series' newest is a running record);
    without them every fact keeps the series it carries, every source counts as a reference
    page, none names a version and none is a running record."""

    facts = list(facts)
    if series is None:
        series = {f.source: Series(f.series, "") for f in facts}
    kinds = kinds or {}
    now = today()
    groups: dict[tuple[str, tuple[str, str, str]], list[Fact]] = defaultdict(list)
    for f in whose(facts, series):
        if f.key[0] == "supported" and not f.key[2] and f.release and not f.plan and _NOW_SUPPORTS.search(f.sentence):
            # the product's own release saying it now supports a version ("Acme now supports
            # Python 3.11", in 0.21.0's notes): the newest it supports, added then
            f = replace(f, key=("max", f.key[1], ""))
        elif f.key[0] in ("supported", "removed"):
            continue  # a version said to be supported, no bound, or a name removed: lint's, not a timeline's
        if f.date and f.date > now and not f.plan:
            f = replace(f, plan=True)  # a release dated in the future is not out: what it says is a plan
        groups[(f.series, f.key)].append(f)
    # a setting named as code and in words ("`language_level=3` is now the default", "the default
    # language level was changed to 3str"): one timeline, under its name as code
    as_code = {(name, key[0], key[1].replace("_", " "), key[2]): key for name, key in groups
               if key[0] == "choice" and "_" in key[1]}
    for name, key in list(groups):
        code = as_code.get((name, *key)) if key[0] == "choice" and "_" not in key[1] else None
        if code is not None:
            groups[(name, code)].extend(replace(f, key=code) for f in groups.pop((name, key)))
    newest_of = {s.name: s.newest for s in series.values()}
    # the changelogs that go up to their series' newest release
    running = {source for source, top in (newest or {}).items()
               if top and kinds.get(source) == "release" and (s := series.get(source)) is not None and s.newest
               and version_key(top) == version_key(s.newest)}
    newest_date_of = {s.name: s.newest_date for s in series.values()}
    product_of = {s.name: s.product for s in series.values()}
    versions_of: dict[tuple[str, str], set[tuple[int, ...]]] = defaultdict(set)  # (series, name): versions named
    for source, names in (named or {}).items():
        s = series.get(source)
        if s is not None:
            for entity, versions in names:
                versions_of[(s.name, entity)].update(version_numbers(v) for v in versions)
    out: list[Timeline] = []
    used: set[str] = set()
    for (name, key), group in sorted(groups.items()):
        unique = list({(f.source, f.line, f.value, f.change): f for f in group}.values())  # one statement once
        outcomes = sorted((f for f in unique if not f.plan), key=_order, reverse=True)
        plans = sorted((f for f in unique if f.plan), key=_order, reverse=True)
        # a plan is shown as its sentence: one sentence once, even when it states two values
        plans = list({(f.source, f.line): f for f in plans}.values())
        if not outcomes:
            continue
        values = {f.value for f in outcomes}
        if len(values) < 2 and not any(f.change for f in outcomes):
            continue
        claim = _decide(key, outcomes, kinds, newest_of.get(name), newest_date_of.get(name),
                        versions_of.get((name, key[1]), ()), running)
        if claim is None:
            continue
        current = claim.cite
        # what the current value replaced: the newest value of an earlier release (or, for a
        # documentation page, of any release) that differs from it
        replaced = next((f for f in outcomes if f is not current and f is not claim.disagrees and f.change != "last"
                         and not compatible(f.value, claim.bound)
                         and not ((claim.above or claim.after) and f.change == "drop"
                                  and compatible(f.value, claim.after or claim.bound))
                         and (current.release is None or (f.release is not None and f.release_key < current.release_key))),  # type: ignore[operator]
                        None)
        said = label(key, current, outcomes)
        # a capital for a phrase ("Minimum macOS version"), not inside a name spelled with one ("jQuery")
        shown = said[:1].upper() + said[1:] if said[:1].islower() and not any(
            c.isupper() for c in said.split(" ", 1)[0]) else said
        title = f"{shown} ({name or 'all sources'})"
        slug = slugify(f"{name} {said}")
        while slug in used:
            slug += "-2"
        used.add(slug)
        out.append(Timeline(name, key, title, slug, outcomes[:MAX_ROWS], plans[:10], current, replaced, claim.strong,
                            claim.value, claim.bound, claim.above, product_of.get(name, ""), claim.disagrees,
                            claim.after, claim.split))
    return out


# --- rendering ------------------------------------------------------------------------------


def _where(f: Fact) -> str:
    return f"{f.source.rsplit('/', 1)[-1]}, line {f.line}"


def _cite(page: str, f: Fact) -> str:
    return f"{relative_link(page, '../' + f.source)}#L{f.line}"


def _when(f: Fact, inside: bool = False) -> str:
    """The release a fact belongs to: "3.1.0 (2024-11-13)"; `inside` parentheses already,
    "3.1.0, 2024-11-13"."""
    if f.release:
        if not f.date:
            return f.release
        return f"{f.release}, {f.date}" if inside else f"{f.release} ({f.date})"
    return f.date or "current documentation"


def claim_line(t: Timeline) -> str:
    """The claim as the page's first line says it, without its quote: "Current: **3.10**" or
    "Latest statement (2.5.0, 2013-12-12): **py>=1.4.19**"."""
    if t.split:
        return f"Current: **{inert(t.value)}**, the current documentation disagrees"
    if t.strong:
        return f"Current: **{inert(t.value)}**"
    return f"Latest statement ({t.current.release or 'no release'}, {t.current.date or 'undated'}): **{inert(t.value)}**"


def summary(t: Timeline) -> str:
    """One line for index.md and search: "currently 3.10 (5.2, 2025-04-02)" or "latest statement ..."."""
    if t.split:
        return f"currently {t.value}: the current documentation disagrees"
    if t.strong:
        return f"currently {t.value} ({_when(t.current, inside=True)})"
    return f"latest statement {t.value} ({t.current.release or 'no release'}, {t.current.date or 'undated'})"


def render(t: Timeline, pages_of: dict[str, str]) -> str:
    """The timeline page; `pages_of` maps raw paths to their source pages (for links)."""
    page = t.page

    def quote(f: Fact) -> str:
        return f'"{inert(" ".join(f.sentence.split()))}" ([{escape_link_text(_where(f))}]({_cite(page, f)}))'

    lines = [f"# {escape_link_text(t.title)}", ""]
    if t.strong:
        now = f"{claim_line(t)}, {_when(t.current)}"
    else:
        now = claim_line(t)
    if t.current.newest:
        now += f" (the oldest listed, up to {dotted(t.current.newest)})"
    if t.after:
        now += f", the version after {inert(_name(t.current))} {dotted(t.after)}, which it drops".replace("  ", " ")
    now += f": {quote(t.current)}."
    if t.replaced is not None:
        if t.replaced.change == "drop":
            now += f" It replaced {inert(' '.join(t.replaced.value_text.split()))}, dropped in {_when(t.replaced)}."
        else:
            now += f" It replaced {inert(_value_text(t.replaced))} ({_when(t.replaced, inside=True)})."
    lines.append(now)
    if t.disagrees is not None:
        lines += ["", f"Stated otherwise ({_when(t.disagrees, inside=True)}): **{inert(_value_text(t.disagrees))}**, "
                      f"{quote(t.disagrees)}."]
    lines += ["", "## Every statement, newest first", "", "| value | release | statement |", "|---|---|---|"]
    for f in t.rows:
        lines.append(f"| {inert(_value_text(f)).replace('|', '/')} | {_when(f)} | {quote(f).replace('|', '/')} |")
    if t.plans:
        lines += ["", "## Plans", ""]
        lines += [f"- for {_when(f)}: {quote(f)}" for f in t.plans]
    sources = sorted({f.source for f in [*t.rows, *t.plans]})
    linked = [f"[{escape_link_text(s.rsplit('/', 1)[-1])}]({relative_link(page, pages_of[s])})" for s in sources
              if s in pages_of]
    if linked:
        lines += ["", "## Sources", "", " · ".join(linked)]
    meta = {"title": t.title, "kind": "fact", "sources": sources, "aliases": [],
            "description": summary(t),
            # where the current value is stated: search puts that passage next to this page
            "current": f"{t.current.source}#L{t.current.line}" if t.current.line else t.current.source}
    # written by code, not a backend: certified as wikimem's all the same (pages.certify), so a
    # copy pulled from a teammate merges as wikimem's own pages do
    return certify(Page(page, meta, "\n".join(lines) + "\n").dumps(), f"wikimem:{__version__}")


# --- the facts of every source, and the pages -------------------------------------------------------


def facts_of(ws: Workspace, state: State, sources: dict[str, tuple[str, str]]) -> tuple[list[Fact], dict[str, Profile]]:
    """Every current source's facts and profile ({raw path: (sha256, collection)}), from state.db's
    cache; a source never seen, or cached in another format, is read once (the offline backend
    fills the cache as it analyses)."""

    facts: list[Fact] = []
    profiles: dict[str, Profile] = {}
    known = state.facts_with(sha for sha, _ in sources.values())
    for path, (sha, _collection) in sorted(sources.items()):
        cached = read_record(path, known.get(sha))
        if cached is None:
            try:
                doc = load_source(ws.root / path, path, max_bytes=50_000_000)
                data = record(doc, split_sentences(doc))
            except (SkipSource, OSError, RecursionError, ValueError):
                data = {"v": -1}
            state.put_facts(sha, data)
            cached = read_record(path, data) or (Profile(), [])
        profiles[path] = cached[0]
        facts.extend(cached[1])
    return facts, profiles


def of_sources(facts: list[Fact], profiles: Mapping[str, Profile]) -> list[Timeline]:
    """The timelines of sources whose facts and profiles are known (the compile's, lint's)."""
    return build(facts, series_of(profiles), {p: pr.kind for p, pr in profiles.items()},
                 {p: pr.named for p, pr in profiles.items()}, {p: pr.newest for p, pr in profiles.items()})


def current(ws: Workspace, state: State, sources: dict[str, tuple[str, str]]) -> list[Timeline]:
    """The timelines of these sources, built once per compile (per State): the backend links
    them from pages, the compiler writes them (at 10k sources each build took 0.2 s)."""
    key = sorted(sources.items())
    memo = state.memo.get("timelines")
    if memo is not None and memo[0] == key:
        return memo[1]
    facts, profiles = facts_of(ws, state, sources)
    lines = of_sources(facts, profiles)
    state.memo["timelines"] = (key, lines)
    return lines


def write(ws: Workspace, state: State, sources: dict[str, tuple[str, str]], pages_of: dict[str, str]) -> list[tuple[str, str]]:
    """Write wiki/facts/ from the sources' facts; remove timelines no longer there. Returns changes.
    Written without a fsync each (22 waits on the disk in a first compile of the Sphinx trees):
    the compile's one sync makes them durable with its pages, before state.db records them."""

    timelines = current(ws, state, sources)
    folder = ws.wiki / FOLDER
    owned(ws.wiki, folder, folder=True)  # a link there would take these writes and deletes elsewhere
    wanted: dict[str, str] = {t.page: render(t, pages_of) for t in timelines}
    changes = write_changed(ws.wiki, wanted, durable=False)
    if folder.is_dir():
        for file in sorted(folder.glob("*.md")):
            rel = f"{FOLDER}/{file.name}"
            if rel in wanted or file.name.startswith("index") or file.is_symlink():
                continue
            # only a timeline goes: a person's own note in facts/ is theirs
            try:
                head = read_owned(ws.wiki, file, limit=4096)
            except OSError:
                continue
            if _is_timeline(head) and remove_owned(ws.wiki, file):
                changes.append((rel, "removed"))
                remove_empty_folders(ws.wiki, file, ws.layout)
    return changes


def _is_timeline(head: bytes) -> bool:
    """Whether a file in facts/ opens as the timelines wikimem writes do (front matter with
    `kind: fact`), by its first bytes."""
    if not head.startswith(b"---\n"):
        return False
    end = head.find(b"\n---\n")
    return b"\nkind: fact\n" in head[: end + 1 if end >= 0 else len(head)]


def links_by_source(timelines: list[Timeline]) -> dict[str, list[Timeline]]:
    """The timelines each raw source states a fact of (its page links them)."""
    out: dict[str, list[Timeline]] = defaultdict(list)
    for t in timelines:
        for source in sorted({f.source for f in [*t.rows, *t.plans]}):
            out[source].append(t)
    return out


def subject_words(t: Timeline) -> set[str]:
    return set(re.findall(r"[a-z0-9][\w.+-]*", t.key[1].lower()))


__all__ = ["FOLDER", "Timeline", "at_least", "build", "claim_line", "facts_of", "links_by_source", "of_sources",
           "render", "summary", "whose", "write"]

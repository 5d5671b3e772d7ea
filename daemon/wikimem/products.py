"""The product a documentation set documents: whose timeline a statement is evidence for.

A statement of a minimum version is evidence for a product's timeline only when it comes from
the product's own documentation: its reference pages, its release notes, its changelog. raw/
may hold one documentation set laid out in folders (ref/, topics/, releases/ and an index at the
top), several (raw/acme/ and raw/gizmo/), loose notes, or a folder of unrelated READMEs. Here
each raw path gets its series, the key its facts are grouped under:

- a documentation set is a top folder of raw/ (the loose files directly in raw/ are one too);
  the product it documents is the name its documents give their releases most often ("Acme
  2.0 release notes", a changelog's "acme 6.1.0 (2020-09-26)"), else what its front page's
  opening says it is ("*Acme* is a ...": a title may be a slogan), else the name its front
  page's title gives (index, README, contents: "Welcome to Acme's documentation!") that the
  set's other titles use most; the words a set uses for its own parts ("documentation", "guide",
  "reference") are never a product's name (lexicon.DOC_WORDS);
- folders of one documentation set are one series: raw/'s front page speaks for the folders
  below it that name no product of their own (ref/ and howto/ of the set at the top) and have
  a front page, or whose documents its table of contents lists (a Sphinx index's toctree:
  `guide/commands`, in a folder with no index), and folders that name the same product share
  its series;
- a changelog directly in raw/ that names no product is the changelog of the documentation
  set beside it (the only one, or one at least twice as large as any other); one in a folder
  without a front page (about/changelog.md) is the product's that raw/'s front page names;
- a document whose title names a release of a product is that product's ("Gizmo 1.0 release
  notes" in a folder of Acme's), and so is a changelog whose title names one product beside the
  words for its kind, in a folder that names none ("Acme history" and "Acmebuild history" in
  history/ are two products' changelogs, not one series "history");
- anything else keeps the series raw_tree.fact_series gives by folder alone: a folder with a
  front page is one series, a folder of documents without one is each document alone, the
  loose files of raw/ share one, a small folder of notes is its own.

The series of a documentation set is its product's name; its newest release is the newest any
of its documents names, which is what "current" is measured against (timelines.py).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .facts import Profile, title_words
from .lexicon import DOC_WORDS, product_key, title_release, version_key
from .pages import today
from .raw_tree import ENTRY_NAMES, fact_series, top_folder


@dataclass(frozen=True)
class Series:
    name: str  # the key facts are grouped by ("acme"; "" for raw/'s loose files; "a/changes" for a document alone)
    product: str  # the product it documents; "" when none is known
    newest: str | None = None  # the newest release its documents name
    newest_date: str | None = None
    dates: Mapping[str, str] = field(default_factory=dict)  # a release's date, by its key (any document may date it)

    def date_of(self, release: str | None) -> str | None:
        return self.dates.get(str(version_key(release)[1:2])) if release and self.dates else None


def _entry(path: str) -> bool:
    return posixpath.basename(path).lower().startswith(ENTRY_NAMES)


def _depth(path: str) -> int:
    return path.count("/")


def _product(paths: list[str], profiles: Mapping[str, Profile]) -> tuple[str, bool]:
    """The product one folder's documents document, or "" (see the module's docstring), and
    whether its documents name releases of it."""
    names: Counter[str] = Counter()
    for p in paths:
        for name, count in profiles[p].names:
            names[name] += count
    entries = [p for p in paths if _entry(p)]
    top = min((_depth(p) for p in entries), default=0)
    # the front pages nearest the top (an index, a README, a contents page): their title words
    candidates = tuple(dict.fromkeys(w for p in sorted(entries) if _depth(p) == top for w in profiles[p].words))
    if names:
        # the front page's name where its documents give releases that name too, else the name they give most
        pool = {n: c for n, c in names.items() if n in candidates} or names
        return min(pool.items(), key=lambda kv: (-kv[1], kv[0]))[0], True
    # a front page that opens by saying what it documents ("Acme is a ...") names it there,
    # whatever its title (a slogan's words are no name)
    subjects = Counter(profiles[p].subject for p in entries if _depth(p) == top and profiles[p].subject)
    if subjects:
        return min(subjects.items(), key=lambda kv: (-kv[1], kv[0]))[0], False
    if not candidates:
        return "", False
    used: Counter[str] = Counter()
    for p in paths:
        used.update(w for w in profiles[p].words if w in candidates)
    return max(candidates, key=lambda w: (used[w], -candidates.index(w))), False


def _only_a_changelog(profile: Profile) -> bool:
    """A document of releases titled only as one ("Changelog", "Release Notes"): it names no
    product, nor anything else it might be (a team's "Database migrations runbook" that quotes
    versions is theirs)."""
    # title_words leaves out the words for a document's kind: a changelog's title has no other
    return profile.kind == "release" and not profile.names and bool(profile.title.strip()) \
        and not title_words(profile.title)


def _titled_product(profile: Profile) -> str:
    """The product a release document's title names beside the words for its kind ("Acmebuild
    history", "Acme changelog"), or ""."""
    if profile.kind != "release":
        return ""
    words = [w for w in title_words(profile.title) if w not in DOC_WORDS]
    if len(words) != 1 or re.fullmatch(r"v?\d+(?:\.\d+)*\w*", words[0]):
        return ""  # "v84.2.1", a changelog titled by its newest release, names a release, not a product
    return product_key(words[0])


def series_of(profiles: Mapping[str, Profile]) -> dict[str, Series]:
    """The series of every raw path (every key of `profiles`)."""
    paths = sorted(profiles)
    by_folder = fact_series(paths)
    groups: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        groups[top_folder(p)].append(p)
    found = {folder: _product(members, profiles) for folder, members in groups.items()}
    product = {folder: name for folder, (name, _) in found.items()}
    if product.get("") and not found[""][1]:
        # raw/'s front page names its product by its title's words; where no other title of raw/
        # uses the word (a README whose only heading, under its badges, is "Code of Conduct"), its
        # opening does not say it, and a folder's front page names what other titles share
        # ("Building Packages with Quill" beside "Quill quickstart"), it is that folder's product
        used = Counter(w for p in paths for w in profiles[p].words)
        said = {profiles[p].subject for p in groups[""] if _entry(p)}
        if product[""] not in said and used[product[""]] < 2 \
                and any(folder and name and used[name] >= 2 for folder, name in product.items()):
            product[""] = ""
    has_entry = {folder: any(_entry(p) for p in members) for folder, members in groups.items()}
    # raw/'s own front page speaks for the folders below it with a front page of their own that
    # name no releases of their own ("API Details" of Acme's docs is Acme's), and for those
    # without one whose documents its table of contents lists (a Sphinx index's toctree:
    # `guide/commands`): the product's documentation, not a team's notes beside it
    if product.get("") and has_entry.get(""):
        listed = {folder for p in groups[""] if _entry(p) for folder in profiles[p].contents}
        for folder in groups:
            if folder and (has_entry[folder] or folder in listed) and not found[folder][1]:
                product[folder] = product[""]
    # a changelog directly in raw/ that names no product belongs to the documentation set beside
    # it: the only one, or one at least twice the size of any other (raw/ of one product's docs,
    # with a folder of man pages); with two of a size it is no one's
    sizes: Counter[str] = Counter()
    for f, members in groups.items():
        if f and product[f]:
            sizes[product[f]] += len(members)
    ranked = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))
    beside = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] >= 2 * ranked[1][1]) else ""
    # raw/'s front page names the product of a changelog that sits in a folder without one
    home = product[""] if product.get("") and has_entry.get("") else ""
    out: dict[str, str] = {}
    named_by_title: set[str] = set()
    for folder, members in groups.items():
        for p in members:
            own = title_release(profiles[p].title)
            named = product_key(own[0]) if own else ""
            if named and named != product[folder] and any(n == named for n, _ in profiles[p].names):
                out[p] = named  # a release of another product, by its title
            elif product[folder]:
                out[p] = product[folder]
            elif titled := _titled_product(profiles[p]):
                out[p] = titled  # "Acmebuild history" beside "Acme history": each changelog its product's
                named_by_title.add(titled)
            elif not folder and beside and ((profiles[p].kind == "release" and not profiles[p].names) or _entry(p)):
                out[p] = beside  # and raw/'s front page, when it names no product of its own (a README)
            elif folder and home and not has_entry[folder] and _only_a_changelog(profiles[p]):
                out[p] = home  # a changelog in a folder with no front page (about/) is raw/'s front page's
            elif folder and not by_folder[p]:
                out[p] = folder  # a small folder of notes is a series of its own, not raw/'s loose files'
            else:
                out[p] = by_folder[p]
    products = {product[f] for f in groups if product[f]} | named_by_title \
        | {out[p] for p in paths if any(n == out[p] for n, _ in profiles[p].names)}

    now = today()
    newest: dict[str, tuple[str, str | None]] = {}
    dates: dict[str, dict[str, str]] = defaultdict(dict)
    for p in paths:
        profile = profiles[p]
        if profile.newest_date and profile.newest_date > now:
            # a release dated in the future is not out yet: the newest of the others counts
            out_dated = [(v, d) for v, d in profile.dated if d <= now]
            profile = replace(profile, newest=max(out_dated, key=lambda r: (version_key(r[0]), r[1]))[0] if out_dated else None,
                              newest_date=max(out_dated, key=lambda r: (version_key(r[0]), r[1]))[1] if out_dated else None)
        for release, date in profile.dated:
            known = dates[out[p]].setdefault(str(version_key(release)[1:2]), date)
            if date < known:
                dates[out[p]][str(version_key(release)[1:2])] = date  # the earliest: the day it came out
        if profile.newest is None:
            continue
        current = newest.get(out[p])
        if current is None or (version_key(profile.newest), profile.newest_date or "") > (version_key(current[0]), current[1] or ""):
            newest[out[p]] = (profile.newest, profile.newest_date)
    result: dict[str, Series] = {}
    for p in paths:
        top_release, top_date = newest.get(out[p], (None, None))
        result[p] = Series(out[p], out[p] if out[p] in products else "", top_release, top_date, dates.get(out[p], {}))
    return result

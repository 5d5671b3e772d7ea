"""Which concepts get a page: the things the documents define or are about, chosen per collection.

Evidence comes from the analyses (analysis.py): a source is ABOUT a thing its title names and
its text keeps discussing, DEFINES a term (glossary, definition list, API description, "X is
a ..."), has a section HEADED for it, or marks it as an API name in CODE. A candidate needs
evidence that it names a thing, and more than one source of its collection must mention it.

Selection runs per collection (a top folder of raw/), so a large collection (years of release
notes) cannot crowd a small one's concepts out (a book's chapters); a thing two collections both choose gets one page
that gathers both. Spellings of one thing merge: plurals, case, `HashMap` and "hash map",
`Box<T>` and "box", and a word that mostly occurs inside a chosen phrase.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from ..analysis import ABOUT, CODE, DEFINED, HEADED, NAMED_THINGS
from ..lexicon import run_together, stem, title_key
from ..pages import slugify
from ..raw_tree import collection_in
from ..raw_tree import collections as collections_of
from .offline_store import STRONG, term_weight


@dataclass
class Concept:
    key: str
    title: str
    aliases: list[str]
    slug: str
    keys: tuple[str, ...] = ()  # every phrase key that names it ("hash map", "hashmap")
    collections: tuple[str, ...] = ()  # the collections that chose it

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = (self.key,)

    @property
    def page(self) -> str:
        return f"concepts/{self.slug}.md"

    @property
    def own_keys(self) -> tuple[str, ...]:
        """Its keys, its own first, but a word of its name merged into it ("pointer" in "smart
        pointer", a broader thing): what a sentence that defines the concept itself defines."""
        words = self.key.split() if " " in self.key else ()
        return (self.key, *(k for k in self.keys if k != self.key and k not in words))


class TermStats(Protocol):
    """What concept selection reads: counts per collection, from memory or from state.db."""

    def collections(self) -> dict[str, int]: ...  # collection -> sources counted in it
    def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]: ...
    def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]: ...
    def union(self, collection: str, keys: Iterable[str]) -> tuple[int, int, int, int]: ...
    def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]: ...
    def said(self, collection: str, keys: Iterable[str]) -> dict[str, int]: ...
    def surfaces(self, collection: str, keys: Iterable[str]) -> dict[str, Counter[str]]: ...


class MemoryStats:
    """TermStats counted from analyses in memory: the reference the state.db tables must equal."""

    def __init__(self, analyses: dict[str, dict[str, Any]]):
        found = collections_of(analyses)
        collection_of = collection_in({c for c in found.values() if c})
        collection = {path: collection_of(path) for path in analyses}
        self.docs: Counter[str] = Counter()
        self.df: dict[str, Counter[str]] = defaultdict(Counter)
        self.strength: dict[str, Counter[str]] = defaultdict(Counter)
        self.strong_docs: dict[str, Counter[str]] = defaultdict(Counter)
        self.signal_docs: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_surface: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        self.analyses: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for path, data in analyses.items():
            c = collection[path]
            self.docs[c] += 1
            self.analyses[c].append(data)
            self.df[c].update(data["terms"].keys())
            for key, (level, surface) in data["signals"].items():
                self.strength[c][key] += level
                self.signal_docs[c][key] += 1
                if level >= STRONG:
                    self.strong_docs[c][key] += 1
                self.by_surface[c][key][surface] += level

    def collections(self) -> dict[str, int]:
        return dict(self.docs)

    def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
        df, strength = self.df[collection], self.strength[collection]
        signal, strong = self.signal_docs[collection], self.strong_docs[collection]
        rows = [(term_weight(df[k], s, k, signal[k], strong[k]), k) for k, s in strength.items() if df[k] >= 2]
        rows.sort(key=lambda r: (-r[0], r[1]))
        return [(k, df[k], strength[k], self.signal_docs[collection][k], self.strong_docs[collection][k])
                for _, k in rows[:limit]]

    def union(self, collection: str, keys: Iterable[str]) -> tuple[int, int, int, int]:
        wanted = set(keys)
        df = strength = signal = strong = 0
        for data in self.analyses[collection]:
            if not wanted & data["terms"].keys():
                continue
            level = max((data["signals"][k][0] for k in wanted if k in data["signals"]), default=0)
            df += 1
            strength += level
            signal += level > 0
            strong += level >= STRONG
        return df, strength, signal, strong

    def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
        df, strength = self.df[collection], self.strength[collection]
        signal, strong = self.signal_docs[collection], self.strong_docs[collection]
        return sorted((k, d, strength[k], signal[k], strong[k]) for k, d in df.items() if run_together(k) in squashed)

    def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]:
        df, signal = self.df[collection], self.signal_docs[collection]
        return sorted((k, d) for k, d in df.items() if d >= 2 and signal[k] >= 1 and k.count(" ") == 1
                      and (k.split(" ")[0] in words or k.split(" ")[1] in words))

    def said(self, collection: str, keys: Iterable[str]) -> dict[str, int]:
        wanted = set(keys)
        out: Counter[str] = Counter()
        for data in self.analyses[collection]:
            for k in wanted & data["terms"].keys():
                out[k] += data["terms"][k]
        return dict(out)

    def surfaces(self, collection: str, keys: Iterable[str]) -> dict[str, Counter[str]]:
        table = self.by_surface[collection]
        return {k: table[k] for k in keys if k in table}


def budget(n: int) -> int:
    """How many concepts a collection of n sources may have at most: what the documents
    support decides below that (most collections choose fewer). A small set of documents still
    names a good many things, each page of a reference several: up to 60 sources, one
    concept a source and 16 more; then no fewer than that, and two thirds of the sources as the
    collection grows; past 400 sources, an eighth of each source more."""
    if n <= 60:
        return 16 + n
    return max(76, 8 + (2 * n) // 3) if n <= 400 else 274 + (n - 400) // 8


def eligible(n: int, df: int, strength: int, signal_docs: int, strong_docs: int) -> bool:
    """Does a candidate name a thing worth a page? Some source must be about it or define it
    (or several must head a section for it, or mark it as an API name, or one heads a section
    for it and two more return to it); and a phrase that nearly every source mentions needs
    more than one source about it."""
    if df < 2:
        return False
    named = strong_docs >= 1 or (signal_docs >= 2 and strength >= 2 * 3) or (signal_docs >= 3 and strength >= 3 * CODE)
    # a topic the documentation is organised around: a section of one source is named for it
    # (a signal above a code mark: what the others give adds at most CODE each) and at least
    # two other sources say it
    named = named or (df >= 3 and strength - CODE * (signal_docs - 1) >= HEADED)
    if n < 10:
        named = named or signal_docs >= 1  # a handful of notes: a heading or a marked term is enough
    if not named:
        return False
    if n >= 8 and df > 0.7 * n and strong_docs < 2:
        return False
    return True


ChooseIn = Callable[["TermStats", str, int], list[Concept]]


def choose_concepts(stats: TermStats, per_collection: ChooseIn | None = None) -> dict[str, Concept]:
    """The concepts of every collection, merged into one page per thing across collections.
    `per_collection(stats, collection, n)` gives one collection's own: choose_in by default,
    a function of that collection's counts alone."""
    chosen: dict[str, Concept] = {}
    spelled: dict[str, str] = {}  # _spelling(key) -> the key chosen first
    for collection, n in sorted(stats.collections().items()):
        for concept in (per_collection or choose_in)(stats, collection, n):
            existing = chosen.get(spelled.get(_spelling(concept.key), concept.key))
            if existing is None:
                chosen[concept.key] = concept
                spelled[_spelling(concept.key)] = concept.key
                continue
            # one page per thing: the same key chosen by two collections is one concept
            existing.keys = tuple(sorted(set(existing.keys) | set(concept.keys)))
            existing.collections = tuple(sorted({*existing.collections, collection}))
            merged = {a.lower(): a for a in [*existing.aliases, *concept.aliases, concept.title]
                      if a.lower() != existing.title.lower()}
            existing.aliases = sorted(merged.values(), key=lambda a: (a.lower(), a))[:8]
    # an alias is no other page's title, in any case or number: a page "Configuration File" with a
    # lone "configuration" merged in would also be called "Configurations", another page's title
    # but for its number: two pages for one name
    titled = {title_key(c.title): c.key for c in chosen.values()}
    for concept in chosen.values():
        concept.aliases = [a for a in concept.aliases if titled.get(title_key(a), concept.key) == concept.key]
    # slugs: unique, and never a catalog's name
    used: set[str] = set()
    for key in sorted(chosen):
        concept = chosen[key]
        slug = slugify(key.replace("::", " ").replace("/", " ").replace(".", " "))
        if slug == "index" or slug.startswith("index-"):
            slug = "concept-" + slug
        while slug in used:
            slug += "-2"
        used.add(slug)
        concept.slug = slug
    return chosen


def _spelling(key: str) -> str:
    """What names one thing across collections: a key without spaces, hyphens and underscores,
    and without a macro's "!" (a macro `panic!` and a function panic name one thing, as lint
    would have them)."""
    return run_together(key).rstrip("!") or run_together(key)


def choose_in(stats: TermStats, collection: str, n: int) -> list[Concept]:
    limit = budget(n)
    # a kind of thing all technical writing names ("function", "option") is a concept where a
    # source is about it or defines it ("Functions", "Options"), not for a section of that name;
    # and, a few words at most, it takes no other candidate's place (RefCell, interior mutability)
    things, spelled_also, joined = _as_things(stats, collection, stats.candidates(collection, limit * 4))
    ranked = [r for r in things if eligible(n, *r[1:]) and (r[4] >= 1 or r[0] not in NAMED_THINGS)]
    # weight ties between unrelated candidates are broken by key, so the choice is stable
    rows = []
    others = 0
    for row in ranked:
        if row[0] not in NAMED_THINGS:
            if others == limit:
                break
            others += 1
        rows.append(row)
        rows.extend(spelled_also.get(row[0], ()))  # its other spellings: one thing, one place
    df: dict[str, int] = {r[0]: r[1] for r in rows}
    strong: dict[str, int] = {r[0]: r[4] for r in rows}
    merged: dict[str, list[str]] = defaultdict(list)
    for key, *_ in rows:
        merged[run_together(key)].append(key)
    # the other spellings of a chosen key said in two sources or more
    for key, docs in sorted((k, d) for k, d, *_ in stats.spellings(collection, set(merged)) if d >= 2):
        squashed = run_together(key)
        df.setdefault(key, docs)
        if squashed in merged and key not in merged[squashed] and docs >= 2:
            merged[squashed].append(key)
    # a word that mostly appears inside one chosen phrase is that phrase ("canary" in "canary release")
    phrases_with: dict[str, list[str]] = defaultdict(list)
    for squashed, group in merged.items():
        for word in {w for k in group if " " in k for w in k.split()}:
            phrases_with[word].append(squashed)
    for squashed, group in sorted(merged.items()):
        if len(group) != 1 or " " in group[0] or squashed not in merged:
            continue
        word = group[0]
        hosts = [merged[s2] for s2 in phrases_with.get(word, []) if s2 != squashed]
        if len(hosts) == 1 and max(df[k] for k in hosts[0]) >= 0.6 * df[word] and strong.get(word, 0) <= 1:
            hosts[0].append(word)
            merged[squashed] = []
    # one word in its forms: "deploy", "deploying", "deployment"; "template", "templating"; and a
    # word that is another's stem though its own is shorter ("filter", whose stem is "filt", and
    # "filtering")
    by_stem: dict[str, list[str]] = defaultdict(list)
    for squashed, group in sorted(merged.items()):
        if len(group) == 1 and " " not in group[0] and group[0].isalpha():
            by_stem[stem(group[0])].append(squashed)
    for base in sorted(by_stem):
        host = next((w for w in by_stem[base] if w != base and w in by_stem), None)
        if host is not None:
            by_stem[host].extend(by_stem.pop(base))
    for family in by_stem.values():
        if len(family) > 1:
            host = max(family, key=lambda sq: (strong.get(merged[sq][0], 0), df.get(merged[sq][0], 0), sq))
            for sq in family:
                if sq != host:
                    merged[host].extend(merged[sq])
                    merged[sq] = []
    # short forms people write for a word the collection also chose ("config", "app"), alone
    # or in a phrase ("env var" is "environment variable")
    for short, full in ABBREVIATIONS.items():
        a, b = merged.get(short), merged.get(full)
        if a and b:
            b.extend(a)
            merged[short] = []
    for squashed, group in sorted(merged.items()):
        phrase = next((k for k in group if " " in k), None)
        if phrase is None:
            continue
        spelled = run_together(" ".join(ABBREVIATIONS.get(w, w) for w in phrase.split()))
        if spelled != squashed and merged.get(spelled):
            merged[spelled].extend(group)
            merged[squashed] = []
    # a name qualified by its module ("pkg.ShaftLock") is the short name the guides write
    # (`ShaftLock`) where _as_things weighed them as one thing: one thing, one page
    for key, thing in sorted(joined.items()):
        squashed = run_together(key)
        if merged.get(squashed) == [key] and merged.get(thing):
            merged[thing].append(key)
            merged[squashed] = []
    _named_by_phrase(stats, collection, merged)
    groups = sorted((g for g in merged.values() if g), key=lambda g: min(g))
    surfaces = stats.surfaces(collection, [k for g in groups for k in g])
    out: list[Concept] = []
    for group in groups:
        # the name: one word where the group has its spelling as one ("rollback" over "roll
        # back", "hashmap" over "hash map") and the text names it so, else the phrase a lone
        # word was merged into (a code name that is only mentioned, `RequestContext` beside
        # "request context", has no spelling of its own to title a page: "Requestcontext")
        as_one = {k for k in group if " " not in k and any(" " in g and run_together(g) == run_together(k) for g in group)}
        one_word = [k for k in group if k in as_one and k in surfaces]
        # ... and a phrase spelled out over its short form ("environment variable", "env var")
        # ... and a name over its qualified form ("ShaftLock", not "pkg.ShaftLock")
        key = one_word[0] if one_word else max(sorted(group), key=lambda k: (
            " " in k, " " in k and not any(w in ABBREVIATIONS for w in k.split()),
            not any(k.endswith("." + other) for other in group), df.get(k, 0)))
        own = surfaces.get(key) or Counter({key: 1})
        forms: Counter[str] = Counter()
        for k in group:
            if k in surfaces:
                forms.update(surfaces[k])
            elif k == key or k not in as_one:
                forms[k] += 1  # no spelling recorded: the key is its own ("deploying")
            # else a phrase's words run together that no text spells so ("requestcontext")
        best = max(sorted(own), key=lambda f: own[f])
        prose = [f for f in sorted(own) if not f.startswith("`")]
        if best.startswith("`") and best.strip("`").islower() and prose:
            # `session` names the same thing as "Sessions"; a page is titled in words where it can be
            candidate = max(prose, key=lambda f: own[f])
            if own[candidate] * 3 >= own[best]:
                best = candidate
        capitals = [f for f in sorted(own) if f != best and f.isupper() and f.lower() == best.lower()]
        if best.islower() and capitals and title_of(best) not in own:
            # "XML" over "xml", never "Xml": a page is not titled with a spelling no text uses
            # when the text writes the word in capitals (its lowercase form is how commands and
            # config sections spell it: `coverage xml`, "[xml]")
            best = capitals[0]
        title = title_of(best)
        aliases = sorted({title_of(f) for f in forms if title_of(f).lower() != title.lower()},
                         key=lambda a: (a.lower(), a))[:8]
        out.append(Concept(key, title, aliases, "", keys=tuple(sorted(group)), collections=(collection,)))
    return out


Row = tuple[str, int, int, int, int]  # (key, df, strength, signal_docs, strong_docs)
UNION_READ = 400  # the most sources a thing's spellings are in, together, whose union is read source by source


def _as_things(stats: TermStats, collection: str,
               candidates: list[Row]) -> tuple[list[Row], dict[str, list[Row]], dict[str, str]]:
    """The candidates as things: the evidence for one thing spelled several ways ("shaft lock",
    `shaft_lock`, `ShaftLock`, and `pkg.ShaftLock` where a reference qualifies it) counted
    together, each spelling weak alone. A thing's row is its best spelling's key with the counts
    of the sources that say it any way; the other spellings said in two sources or more come
    beside it (`also`). A name qualified by its
    module joins its short form only where the texts write the short form as code spelled as it
    is (`ShaftLock`: a capital or an underscore in it, so `os.path` is no "path"), and only where
    no other qualified candidate ends the same way (`in_thread.run_one`, `on_loop.run_one`)."""
    thing_of = {r[0]: run_together(r[0]) for r in candidates}
    lasts: dict[str, str] = {}  # a qualified candidate -> its last part as the texts write it
    dotted = [r[0] for r in candidates if "." in r[0].strip(".") and " " not in r[0]]
    forms = stats.surfaces(collection, dotted) if dotted else {}
    for key in dotted:
        if key not in forms:
            continue
        written = max(sorted(forms[key]), key=lambda f: forms[key][f]).strip("`").removesuffix("()")
        last = written.rsplit(".", 1)[-1]
        if re.fullmatch(r"\w+", last) and (last != last.lower() or "_" in last.strip("_")):
            lasts[key] = last
    ends = Counter(run_together(last.lower()) for last in lasts.values())
    lasts = {k: v for k, v in lasts.items() if ends[run_together(v.lower())] == 1}
    spellings: dict[str, dict[str, Row]] = defaultdict(dict)
    for row in stats.spellings(collection, {thing_of[r[0]] for r in candidates} | {
            run_together(v.lower()) for v in lasts.values()}):
        spellings[run_together(row[0])].setdefault(row[0], row)
    if lasts:
        shorts = sorted({k for v in lasts.values() for k in spellings.get(run_together(v.lower()), {})})
        written_as = stats.surfaces(collection, shorts) if shorts else {}
        for key, last in lasts.items():
            short = run_together(last.lower())
            if any(f.strip("`").removesuffix("()") == last for k in spellings.get(short, {})
                   for f in written_as.get(k, ()) if f.startswith("`")):
                thing_of[key] = short
    for row in candidates:
        spellings[thing_of[row[0]]][row[0]] = row
    singles: list[Row] = []
    grouped: list[tuple[float, Row]] = []
    also: dict[str, list[Row]] = {}
    seen: set[str] = set()
    for row in candidates:
        thing = thing_of[row[0]]
        if thing in seen:
            continue
        seen.add(thing)
        group = list(spellings[thing].values())
        if len(group) == 1:
            singles.append(row)
            continue
        # the thing's name: its best spelling not qualified by a module; its counts, those of
        # the sources that say it any way (one source writing two spellings counts once)
        plain = [r for r in group if r[0] not in lasts] or group
        best = max(plain, key=lambda r: (term_weight(r[1], r[2], r[0], r[3], r[4]), r[0]))
        if sum(r[1] for r in group) <= UNION_READ:
            combined = (best[0], *stats.union(collection, [r[0] for r in group]))
        else:  # said in hundreds of sources: their union is not read, the most of any spelling stands for it
            df = max(r[1] for r in group)
            signal = min(sum(r[3] for r in group), df)
            combined = (best[0], df, sum(r[2] for r in group), signal, min(sum(r[4] for r in group), signal))
        grouped.append((term_weight(combined[1], combined[2], combined[0], combined[3], combined[4]), combined))
        also[best[0]] = [r for r in group if r[0] != best[0] and r[1] >= 2]
    # the candidates keep their order; a thing of several spellings goes before the first
    # candidate weaker than all its spellings together
    grouped.sort(key=lambda t: (-t[0], t[1][0]))
    out: list[Row] = []
    at = 0
    for row in singles:
        weight = term_weight(row[1], row[2], row[0], row[3], row[4])
        while at < len(grouped) and grouped[at][0] > weight:
            out.append(grouped[at][1])
            at += 1
        out.append(row)
    out.extend(r for _, r in grouped[at:])
    # the qualified names that joined their short form, and the thing they joined
    joined = {key: thing for key, thing in thing_of.items() if key in lasts and thing != run_together(key)}
    return out, also, joined


ABBREVIATIONS = {
    "app": "application", "config": "configuration", "db": "database", "env": "environment", "dir": "directory",
    "repo": "repository", "spec": "specification", "param": "parameter", "arg": "argument", "auth": "authentication",
    "impl": "implementation", "pkg": "package", "lib": "library", "info": "information", "doc": "documentation",
    "msg": "message", "req": "request", "res": "response", "tmpl": "template", "func": "function",
    "var": "variable", "cmd": "command", "prod": "production", "dict": "dictionary", "attr": "attribute",
    "ctx": "context", "conn": "connection", "obj": "object",
}


_ESCAPED = re.compile(r"\\([<>\[\]\\`*_])")
_ONE_SPAN = re.compile(r"``?[^`]+``?")
_PATH_NAME = re.compile(r"[a-z0-9_.-]+(?:/[a-z0-9_.-]+)+")


PHRASE_SHARE = 0.5  # the share of a word's mentions one phrase of it must hold to name its page


def _named_by_phrase(stats: TermStats, collection: str, merged: dict[str, list[str]]) -> None:
    """A page chosen for a lone word that the texts mostly say inside one phrase is named by
    that phrase: "ledger" said 50 times, 35 of them in "ledger entry" (a phrase that a section
    heads or a source marks, in two sources or more), is the page "Ledger entries", with
    "Ledger" its alias. A word written mostly as code (`Ledger`, a class) keeps its name; a
    phrase another page has, or that two words want, names neither."""
    lone = {group[0]: squashed for squashed, group in merged.items()
            if len(group) == 1 and group[0].isalpha() and group[0].islower()}
    if not lone:
        return
    written = stats.surfaces(collection, lone)
    lone = {w: sq for w, sq in lone.items()
            if (forms := written.get(w)) and not max(sorted(forms), key=lambda f: forms[f]).startswith("`")}
    taken = {run_together(k) for group in merged.values() for k in group}
    found = [p for p, _ in stats.phrases(collection, set(lone)) if run_together(p) not in taken
             and len(set(p.split(" "))) == 2] if lone else []
    if not found:
        return
    said = stats.said(collection, [*lone, *found])
    best: dict[str, tuple[str, int]] = {}
    for phrase in found:
        n = said.get(phrase, 0)
        for word in set(phrase.split(" ")) & lone.keys():
            if n >= PHRASE_SHARE * said.get(word, 0) > 0 and n > best.get(word, ("", 0))[1]:
                best[word] = (phrase, n)
    wanted = Counter(phrase for phrase, _ in best.values())
    for word, (phrase, _) in sorted(best.items()):
        if wanted[phrase] == 1:
            merged[lone[word]].append(phrase)


_SHOWN_TARGET = re.compile(r"(?<=\S)\s+<[^<>\s`]+>(?=`+$)")


def title_of(surface: str) -> str:
    """Prose phrases get a capital ("Rollback"); code keeps its spelling (`i32`, `println!`)."""
    # the escape a sentence's inert text gave a "<" ("Box\\<T>") is not part of the name: the
    # pages escape it again where Markdown needs it
    surface = _ESCAPED.sub(r"\1", surface.strip())
    if _ONE_SPAN.fullmatch(surface):
        # a cross-reference left in code with its target (`Loop <acme.Loop>`): the text it shows
        surface = _SHOWN_TARGET.sub("", surface)
        return surface.strip("`").rstrip(":,") or surface.strip("`")  # `template:` names `template`
    if surface.startswith("`"):
        return surface  # code, then words ("`typer` command"): as the source writes it
    surface = surface.strip("*_")
    first = surface.split(" ", 1)[0]
    if not surface[:1].islower() or any(c.isupper() for c in first[1:]):
        return surface  # a name spelled with its capitals inside: "eBay", "macOS", "iPhone"
    if _PATH_NAME.fullmatch(first):
        return surface  # a path names a package or a file as it is spelled: "archive/tar", not "Archive/tar"
    return surface[:1].upper() + surface[1:]


@lru_cache(maxsize=4096)  # a few levels times the counts seen: ranking 10k members asks it 10k times
def relevance(level: int, mentions: int) -> float:
    """How much a source says about a concept: being about it or defining it counts most."""
    bonus = {ABOUT: 8.0, DEFINED: 4.0}.get(level, float(level))
    return bonus + math.log(1 + mentions)

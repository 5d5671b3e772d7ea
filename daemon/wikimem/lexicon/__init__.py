"""The lexicon: the one place that knows words, names, versions and dates.

Every part of wikimem that asks a question about language asks it here: the compile's analysis
and concept choice, lint, search, the facts extractor, the timelines and index.md.

- **Stop words**: one list (`STOPWORDS`), with the named sub-lists a use really needs
  (`QUERY_STOP` for questions, `INDEX_STOP` for the search index, `ARTICLES`).
- **The key of a name** (`word_key`, `title_key`, `run_together`): acronyms are decided on the
  word as written, before case folding ("HTTPS" is no plural of "HTTP"; "APIs" is of "API"), a
  name with capitals inside keeps its identity ("macOS", "reStructuredText"), a possessive is
  not part of the key, and other words are folded to their singular.
- **Singulars** (`singular`): a list derived from simplemma's English dictionary first
  (`english.txt`, see contrib/lexicon/make_english.py), then rules by ending for the words it
  does not know.
- **Versions** (`parse_version`, `version_key`, `release_numbers`, `title_release`):
  `packaging.version` (PEP 440) with a fallback for the forms release notes also use ("3.2.x",
  "go1.21", "2.0.0-beta.2"); one order everywhere.
- **Dates** (`find_date`, `meta_date`, `release_date`, `unreleased`): a calendar date as
  YYYY-MM-DD; a release's date is never one to come.

This module is the ground floor: it imports nothing of wikimem's, and nothing heavy at import
time (`packaging` and the word list load on first use), so a cold `wikimem search` does not pay
for what it does not ask.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from functools import cache, lru_cache
from pathlib import Path
from typing import Any


@cache
def _re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled on first use: a cold `wikimem search` asks for a stop list, not a date."""
    return re.compile(pattern, flags)


# --- stop words --------------------------------------------------------------------------------

STOPWORDS = frozenset(
    """a about above after again against all almost also although always am among an and another any
    anyone anything are aren't around as at be because been before being below between both but by can
    cannot could couldn't did didn't do does doesn't doing don't down during each either else enough
    etc even ever every few for from further get gets getting got had hadn't has hasn't have haven't
    having he her here hers herself him himself his how however i if in into is isn't it it's its itself
    just least less let lets like likely made make makes making many may me might more most much must my
    myself need needs neither never no nor not now of off often on once one only onto or other others
    otherwise our ours ourselves out over own per perhaps put quite rather really said same see seen
    several shall she should shouldn't since so some something sometimes still such than that that's
    the their theirs them themselves then there there's these they they're thing things this those
    though through thus to too toward towards under until up upon us use used uses using very via was
    wasn't way ways we we'll we're we've well were weren't what what's when where whether which while
    who whom whose why will with within without won't would wouldn't yet you you'll you're you've your
    yours yourself yourselves i'm i've i'll let's across along alongside already amid amongst behind
    beneath beside besides beyond despite except inside instead outside throughout underneath unlike
    versus whereas whenever wherever""".split()
)
"""Words that say nothing alone: never a concept, never the first or last word of a phrase key."""

ARTICLES = frozenset({"the", "a", "an"})
"""A leading article is not part of a title's key ("The Request Context" is "request context")."""

_ASKING = frozenset("tell explain describe show give find please vs".split())

QUERY_STOP = frozenset(
    """a an and are as at be been but by can could did do does doing for from had has have how
    i if in into is it its me my of on or our should so than that the their them then there these
    they this those to was we were what when where which who whom whose why will with would you your
    about also any each just more most only other some such very via used use using""".split()
) | _ASKING
"""Dropped from a search question: the stop words a question is asked with (question words,
fillers) and the verbs of asking ("tell", "explain"); not the words that change what it asks
("not", "before", "after", "without"), which STOPWORDS also holds."""

INDEX_STOP = frozenset(
    """a an and are as at be by can for from have if in is it may not of on or that the this to us we
    when will with yet you your tbd""".split()
)
"""Not indexed as terms in the search index: its words are too common to tell passages apart
(whoosh's own default list, kept as the index format has it; "tbd" stands for a missing value)."""

DOC_WORDS = frozenset(
    """about api apis appendix change changelog changes contents doc docs documentation faq getting glossary guide
    guides handbook history home how-to howto index install installation intro introduction manual news note
    notes overview page pages project quickstart readme reference release releases started table tutorial
    tutorials unreleased user users welcome
    warning warnings caution attention danger important notice hint hints tip tips""".split()
)
"""The words a documentation set's titles use for its own parts ("Django documentation", "API
Reference", "Welcome to Alembic's documentation!"), and for a notice a page opens on (a README
whose first heading is "Warning"): never the name of what the set documents."""


# --- the key of a name ---------------------------------------------------------------------------

_DATA = Path(__file__).with_name("english.txt")
_PLURALS: dict[str, str] | None = None
_E_NOUNS: frozenset[str] = frozenset()

# plurals of the classical pattern the word list keeps beside the -s plurals (criteria, fungi, formulae)
CLASSICAL_PLURAL = re.compile(r"[a-z]{3,}(?:a|i|ae)")

# where simplemma's dictionary reads a technical word other than technical writing means it; each
# is a row of tests/test_lexicon.py
OVERRIDES = {
    "axes": "axis",  # in technical writing the plural of axis, not of axe
    "kudos": "kudos",  # one word (Greek -os), not the plural of "kudo"
    "media": "media",  # "media type", "removable media": a mass noun, not the plural of medium
    "lens": "lens",
    "https": "https",  # the secure scheme's name (a URL's "https"), not the plural of "http"
}

# the last part of a closed compound that ends in a clipped plural names one collection, not
# many of something: "coreutils" is one package, "memstats" one set of counters
_CLIPPED_COLLECTIVES = ("utils", "stats", "args", "params", "libs", "deps", "docs")


def _load() -> dict[str, str]:
    """The derived word list, read on the first question about a singular (a few milliseconds)."""
    global _PLURALS, _E_NOUNS
    if _PLURALS is None:
        lines = _DATA.read_text(encoding="utf-8").split("\n")
        _E_NOUNS = frozenset(line[1:] for line in lines if line[:1] == "=")
        pairs = [line.split(" ") for line in lines if line and line[0] not in "#="]
        _PLURALS = {form: lemma for form, lemma in pairs} | OVERRIDES
    return _PLURALS


def read_word_list() -> None:
    """Read the word list now: a process about to fork workers that will all ask for singulars
    reads it once for them (each would read it again)."""
    _load()


def by_ending(word: str, plurals: dict[str, str] | None = None, e_nouns: frozenset[str] | None = None) -> str:
    """The singular the English endings give a lowercase word the word list does not hold.

    -ies is -y; -izes is the -s of a verb in -ize; a word in -ics names a field or a manner
    ("semantics", "generics"), one thing; a sibilant takes -es (boxes, hashes, mutexes); -ss, -us, -is are singular
    endings; an unknown word in -os is a singular too (English's -o nouns, photo and video, are
    in the list; what it lacks is mostly Greek -os words and names); an unknown word in -es
    after another letter is a plural only when its last part is a known -e word ("goroutines":
    "routine"), since the list holds English's -e nouns and what it lacks is mostly a Greek or
    Latin singular in -es or a name; a closed compound ending in a clipped plural names one
    collection; any other -s is a plural.
    `e_nouns` None (while the list is derived) takes every -es word for a plural."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("izes", "yzes")):
        return word[:-1]  # a verb in -ize ("normalizes"), not a plural in -zes
    if word.endswith("ics"):
        return word  # a field or a manner: "semantics", "generics", "ergonomics" are one thing
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if not word.endswith("s") or word.endswith(("ss", "us", "is", "os")):
        return word
    if word.endswith(_CLIPPED_COLLECTIVES) and not any(word == c for c in _CLIPPED_COLLECTIVES):
        return word
    if word.endswith("es") and e_nouns is not None:
        stem = word[:-1]
        if not any(stem[at:] in e_nouns for at in range(0, len(stem) - 2)):
            return word
    return word[:-1]


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """The singular of a lowercase word: "caches" -> "cache", "libraries" -> "library",
    "criteria" -> "criterion", "status" -> "status"; a word of three letters or fewer, or with
    anything but letters, is its own."""
    if len(word) <= 3 or not word.isalpha():
        return word
    plurals = _PLURALS if _PLURALS is not None else _load()
    known = plurals.get(word)
    if known is not None:
        return known
    if word[-1] != "s":
        return word
    return by_ending(word, plurals, _E_NOUNS)


def _inner_capital(word: str) -> bool:
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


_ACRONYM_PLURAL = re.compile(r"[A-Z][A-Z0-9]+s")


@lru_cache(maxsize=131072)
def word_key(word: str) -> str:
    """The key of one word as written: lowercase and singular, decided on the written form.

    An acronym is a name, decided before case folding: "HTTPS" and "TLS" keep their last S,
    "APIs" and "URLs" are plurals of "API" and "URL". A word with a capital inside is a name
    and keeps its identity ("macOS", "iOS", "NumPy", "reStructuredText"). A possessive is
    not part of the key ("Python's" is "python"). A stop word stays as it is."""
    if "’" in word:
        word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    low = word.lower()
    if low in STOPWORDS or len(word) <= 1:
        return low
    if word.isupper():
        # a word set in capitals: an acronym when short, else a word in a heading set in
        # capitals ("OPTIONS"); acronyms of six letters and more are rare
        return low if len(word) <= 5 else singular(low)
    if _ACRONYM_PLURAL.fullmatch(word):
        return low[:-1]
    if _inner_capital(word):
        return low
    return singular(low)


def run_together(key: str) -> str:
    """A key spelled without spaces, hyphens and underscores: "sphinx quickstart",
    "sphinx-quickstart" and "sphinx_quickstart" name one thing, as "roll back" and "rollback" do."""
    return key.replace(" ", "").replace("-", "").replace("_", "")


_TITLE_PUNCT = r"[^\w\s+#']+|_"  # "+" and "#" stay: C, C++ and C# are three things


# a name written as code, its parts joined by dots or underscores (`pkg.lexers`, `max_length`)
_CODE_NAME = r"[A-Za-z]\w*(?:[._][A-Za-z0-9]\w*)+"


def title_key(text: str) -> str:
    """Near-identical titles share a key: case, punctuation, accents, plurals, possessives and a
    leading article aside ("The APIs" and "API", "Caches" and "cache"). The words of a name
    written as code keep their number: `pkg.lexer` and `pkg.lexers` are two modules."""

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii") or text
    ascii_text = ascii_text.replace("’", "'")
    words: list[tuple[str, bool]] = []  # (word, whether a part of a name written as code)
    at = 0
    for m in _re(_CODE_NAME).finditer(ascii_text) if "." in ascii_text or "_" in ascii_text else ():
        words += [(w, False) for w in _re(_TITLE_PUNCT).sub(" ", ascii_text[at:m.start()]).split()]
        words += [(w.lower(), True) for w in re.split(r"[._]+", m.group(0)) if w]
        at = m.end()
    words += [(w, False) for w in _re(_TITLE_PUNCT).sub(" ", ascii_text[at:]).split()]
    while len(words) > 1 and not words[0][1] and words[0][0].lower() in ARTICLES:
        words = words[1:]
    return " ".join(k for w, code in words if (k := w if code else word_key(w.strip("'’")) if w.strip("'’") else ""))


# the other spellings of a product's name, and its name with the major version run in ("py" is
# not one of Python's: it is a library of its own, and a pin of it is no Python version); and the
# metadata fields a Python package states the Python it needs in ("requires-python >= 3.8")
_PRODUCT_NAMES = {"os x": "macos", "mac os x": "macos", "osx": "macos", "apple os x": "macos", "mac os": "macos",
                  "jinja2": "jinja", "python3": "python", "cpython": "python",
                  "requires-python": "python", "requires_python": "python", "python_requires": "python",
                  "python-requires": "python"}


def product_key(name: str) -> str:
    """The key of a product's name in a statement of its version ("macOS 10.15", "OS X 10.10"):
    lowercase, its other spellings made one; never folded to a singular ("Windows" is a name)."""
    key = name.lower()
    return _PRODUCT_NAMES.get(key, key)


_STEM_SUFFIXES = ("ments", "ment", "ings", "ing", "ions", "ion", "ers", "er", "es", "ed", "s", "e")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem, only to tell forms of one word apart from other words: "deploying" and
    "deployment" -> "deploy"; a stem shorter than four letters is the word itself."""
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            base = word[: -len(suffix)]
            # a doubled consonant before the suffix is one ("debugging" -> "debug", "logging" -> "log")
            return base[:-1] if base[-1] == base[-2] and base[-1] not in "aeiouls" else base
    return word


# --- versions --------------------------------------------------------------------------------

# a version as release notes write it: 3.1.0, 0.16, 1.2.0rc1, 2.0.0-beta.2, 3.2.x, v2
VERSION = r"v?(\d+(?:\.\d+)+(?:\.x)?(?:[-.]?(?:a|b|c|rc|alpha|beta|dev|post|pre|final)\.?\d*)*|\d+(?=\s*$|\s*[(\[:\u2013\u2014]|\s+-))"
_LEADING_NAME = r"^[A-Za-z]+(?=\d)"  # "go1.21": a name run into its number
_WILDCARD = r"(?:\.[xX*])+$"  # "3.2.x": every release of 3.2
_NUMBERS = r"v?(\d+(?:\.\d+)*)"


@lru_cache(maxsize=16384)
def parse_version(text: str | None) -> Any:
    """A version as `packaging.version.Version`, or None when the text holds no version.

    PEP 440 first ("2.0rc1", "v1", "2024.1rc1", "2.0.0-beta.2", "1.0.post1"); then the forms
    release notes add: a series with a wildcard ("3.2.x" is 3.2), a name run into its number
    ("go1.21" is 1.21), and a number with a suffix PEP 440 does not know ("2.0-foo" is 2.0)."""
    if not text:
        return None
    # packaging loads on the first version parsed: a cold `wikimem search` parses none
    from packaging.version import InvalidVersion, Version

    text = text.strip()
    try:
        return Version(text)
    except InvalidVersion:
        pass
    bare = _re(_WILDCARD).sub("", _re(_LEADING_NAME).sub("", text))
    if bare != text:
        try:
            return Version(bare)
        except InvalidVersion:
            pass
    match = _re(_NUMBERS).match(bare)
    return Version(match.group(1)) if match else None


def version_key(text: str | None) -> tuple[Any, ...]:
    """The order of releases: "1.10" after "1.9", "2.0.dev1" < "2.0a1" < "2.0b2" < "2.0rc1" <
    "2.0" < "2.0.post1"; a text that holds no version sorts below every version (never a false
    "newest"), and texts that parse alike keep their own order by the text."""
    version = parse_version(text)
    if version is None:
        return (0, text or "")
    return (1, version, text or "")


def release_numbers(text: str | None) -> tuple[int, ...] | None:
    """The release numbers of a version: (3, 1, 0) from "3.1.0", "v3.1.0", "3.1.0rc1", "3.1.x"
    is (3, 1); None when the text holds no version."""
    version = parse_version(text)
    if version is None:
        return None
    numbers = version.release
    if version.epoch:
        return tuple(numbers)
    return tuple(numbers)


def release_series(text: str | None) -> str | None:
    """The series a release belongs to, its first two numbers: "5.2" for "5.2.19", "5.2" and
    "5.2rc1"; "3" for "3"; None when the text holds no version. Release notes are grouped by it."""
    numbers = release_numbers(text)
    if not numbers:
        return None
    return ".".join(str(n) for n in numbers[:2])


@lru_cache(maxsize=4096)  # (a document's profile sorts the versions it names by them, each asked many times)
def version_numbers(text: str) -> tuple[int, ...]:
    """The numbers of a version as a statement writes it ("3.9", "10.15", "65,535"):
    (3, 9), (10, 15), (65535,). Only the digits count, so it never fails."""
    return tuple(int(x) for x in text.replace(",", "").split(".") if x.isdigit())


# a release a title names: a name, then a dotted version ("Acme 1.21 Release Notes", "Acme 2.0.1"),
# or a whole number the title calls a release ("Python 3 release")
_TITLE_RELEASE = r"\b([A-Za-z][\w+.-]*?)\s+v?(\d+(?:\.\d+)+)\b"
# a name joined to its release by a hyphen, as a package's files are named ("acme-2.5.0: fixes")
_TITLE_RELEASE_JOINED = r"^\W*([A-Za-z][\w+.]*[A-Za-z])-v?(\d+(?:\.\d+)+)\b"
_TITLE_RELEASE_WORD = r"(?i)\b([A-Za-z][\w+.-]*)\s+(?:version\s+)?v?(\d+)\s+(?:release|is\s+released)"


@lru_cache(maxsize=16384)
def title_release(title: str) -> tuple[str, str] | None:
    """(name, version) of the release a document's title names: ("acme", "1.21") from "Acme 1.21
    Release Notes"; a title's first 300 characters are read (a longer "title" is a line of
    text). A number that is no version ("Chapter 3", "Step 2") names no release."""
    head = title[:300]
    match = _re(_TITLE_RELEASE).search(head) or _re(_TITLE_RELEASE_WORD).search(head) \
        or _re(_TITLE_RELEASE_JOINED).search(head)
    if not match:
        return None
    return match.group(1).lower().rstrip(".-"), match.group(2)


_FIRST_NUMBER = r"\d+(?:\.\d+)*"


def first_number(text: str) -> str | None:
    """The first number in a text, dots and all ("Acme 1.25 Release Notes" -> "1.25")."""
    match = _re(_FIRST_NUMBER).search(text)
    return match.group(0) if match else None


# --- dates -------------------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
# "2026/11/19": the year first, with slashes (with dots it is as likely a calendar version, "2026.1.3")
_YEAR_FIRST_DATE = re.compile(r"\b((?:19|20)\d\d)/(\d{1,2})/(\d{1,2})\b")
_TEXT_DATE = (
    r"\b(\d{1,2})\.?\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?,?\s+((?:19|20)\d\d)\b"
    r"|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b"
)
# a release that has no date yet: "(unreleased)", "TBD", "to be released", "in development"
_UNRELEASED = r"(?i)\b(?:unreleased|not\s+(?:yet\s+)?released|to\s+be\s+released|tbd|tba|in\s+development)\b"


def find_date(text: str) -> str | None:
    """The first calendar date in a short text, as YYYY-MM-DD: "2020-09-26", "2020/09/26",
    "September 26, 2020", "26 Sep 2020"; None when there is none, or none that is a real day."""
    iso = ISO_DATE.search(text)
    m = _re(_TEXT_DATE).search(text)
    candidates: list[tuple[int, str]] = []
    if iso:
        candidates.append((iso.start(), f"{iso.group(1)}-{iso.group(2)}-{iso.group(3)}"))
    elif "/" in text:
        year_first = _YEAR_FIRST_DATE.search(text)
        if year_first:
            year, month, day = year_first.groups()
            candidates.append((year_first.start(), f"{year}-{int(month):02d}-{int(day):02d}"))
    if m:
        if m.group(1):
            day, month, year = m.group(1), m.group(2), m.group(3)
        else:
            month, day, year = m.group(4), m.group(5), m.group(6)
        candidates.append((m.start(), f"{year}-{_MONTHS[month[:3].lower()]:02d}-{int(day):02d}"))
    for _, value in sorted(candidates):
        try:
            dt.date.fromisoformat(value)
            return value
        except ValueError:
            continue
    return None


def today() -> str:
    """Today's date, YYYY-MM-DD (UTC); SOURCE_DATE_EPOCH pins it for reproducible builds."""

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), dt.UTC).date().isoformat()
    return dt.datetime.now(dt.UTC).date().isoformat()


def release_date(text: str, now: str | None = None) -> str | None:
    """The date a release heading or its first line gives (find_date), or None when that date
    is after `now` (YYYY-MM-DD, default today()): a release is dated when it happened, and a
    date to come is a plan, not a release date."""
    found = find_date(text)
    if found is None:
        return None
    return found if found <= (now or today()) else None


def unreleased(text: str) -> bool:
    """Whether a text says a release has no date yet ("1.4.2 (unreleased)", "Release TBD")."""
    return _re(_UNRELEASED).search(text) is not None


def meta_date(meta: dict[str, Any]) -> str | None:
    """The date front matter gives (date, published, released, created, updated), as YYYY-MM-DD."""
    for key in ("date", "published", "released", "created", "updated"):
        value = meta.get(key)
        if isinstance(value, dt.datetime):
            return value.date().isoformat()
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, str) and (found := find_date(value)):
            return found
    return None


__all__ = [
    "ARTICLES", "CLASSICAL_PLURAL", "DOC_WORDS", "INDEX_STOP", "ISO_DATE", "OVERRIDES", "QUERY_STOP", "STOPWORDS", "VERSION",
    "by_ending", "find_date", "read_word_list", "release_date", "today", "first_number", "meta_date", "parse_version", "product_key",
    "release_numbers", "release_series", "run_together",
    "singular", "stem", "title_key", "title_release", "unreleased", "version_key", "version_numbers", "word_key",
]

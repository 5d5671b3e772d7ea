"""The lexicon's hard cases, one row each: the key of a word, singulars, versions, dates, stop lists.

Where a row exists because a collection showed the case (a product's name, a heading), the
collection is named here, never in the code: the code names the rule.

The English word list is derived from simplemma's dictionary (contrib/lexicon/make_english.py).
Where the dictionary is wrong for technical writing, or does not know a word, a rule covers it;
the rows below say which:

- the dictionary is wrong: "axes" -> axe (technical writing means axis), "kudos" -> kudo, "media"
  -> medium (a mass noun in "media type"): lexicon.OVERRIDES; and the derivation keeps the
  ending rule where the dictionary's lemma is no word of its own;
- the dictionary does not know the word: acronyms ("HTTPS", "APIs": decided on the written form
  before any dictionary), names with inner capitals ("macOS"), Greek -es singulars and names
  ("Kubernetes": an unknown -es word is a plural only when its last part is a known -e word,
  "goroutines"), unknown -os words ("macOS" in lowercase), closed compounds ending in a clipped
  plural ("docutils", "coreutils"), and technical plurals it lacks ("iterators", "enums").
"""

from __future__ import annotations

import pytest

from wikimem import lexicon
from wikimem.lexicon import (
    find_date,
    parse_version,
    release_numbers,
    singular,
    title_key,
    title_release,
    unreleased,
    version_key,
    word_key,
)

# --- the key of a word, as written --------------------------------------------------------------

WORD_KEYS = [
    # acronyms and their plurals: decided before case folding
    ("HTTPS", "https"),  # its last S is its own, not the plural of HTTP
    ("HTTP", "http"),
    ("TLS", "tls"),
    ("CSS", "css"),
    ("DNS", "dns"),
    ("JSON", "json"),
    ("APIs", "api"),
    ("URLs", "url"),
    ("IDs", "id"),
    ("CPUs", "cpu"),
    ("PRs", "pr"),
    ("SDKs", "sdk"),
    ("API", "api"),
    ("OPTIONS", "option"),  # a word set in capitals in a heading, not an acronym
    ("https", "https"),  # the scheme's name in a URL
    # names with capitals inside keep their identity
    ("macOS", "macos"),
    ("iOS", "ios"),
    ("NumPy", "numpy"),
    ("PostgreSQL", "postgresql"),
    ("reStructuredText", "restructuredtext"),
    ("JavaScript", "javascript"),
    ("GitHub", "github"),
    ("HashMap", "hashmap"),
    ("iPhone", "iphone"),
    # names in lowercase or with a capital first
    ("docutils", "docutils"),  # a closed compound ending in the clipped plural "utils"
    ("Docutils", "docutils"),
    ("coreutils", "coreutils"),
    ("binutils", "binutils"),
    ("memstats", "memstats"),
    ("kwargs", "kwargs"),
    ("Kubernetes", "kubernetes"),  # Greek -es, unknown to the dictionary: no plural
    ("kubernetes", "kubernetes"),
    ("macos", "macos"),  # an unknown -os word is no plural
    ("illumos", "illumos"),
    ("Solaris", "solaris"),
    ("redis", "redis"),
    # possessives are not part of a key
    ("Python's", "python"),
    ("Python’s", "python"),
    ("user's", "user"),
    ("Contributor's", "contributor"),
    ("it's", "it"),
    # technical plurals
    ("Caches", "cache"),
    ("caches", "cache"),
    ("Aliases", "alias"),
    ("aliases", "alias"),
    ("indices", "index"),
    ("indexes", "index"),
    ("statuses", "status"),
    ("status", "status"),
    ("matrices", "matrix"),
    ("analyses", "analysis"),
    ("analysis", "analysis"),
    ("schemas", "schema"),
    ("schemata", "schema"),
    ("lemmas", "lemma"),
    ("lemmata", "lemma"),
    ("class", "class"),
    ("classes", "class"),
    ("process", "process"),
    ("processes", "process"),
    ("subprocesses", "subprocess"),
    ("bus", "bus"),
    ("buses", "bus"),
    ("alias", "alias"),
    ("series", "series"),
    ("species", "species"),
    ("data", "data"),
    ("criteria", "criterion"),
    ("phenomena", "phenomenon"),
    ("vertices", "vertex"),
    ("hashes", "hash"),
    ("mutexes", "mutex"),
    ("boxes", "box"),
    ("libraries", "library"),
    ("dependencies", "dependency"),
    ("cookies", "cookie"),  # not "cooky"
    ("movies", "movie"),
    ("goroutines", "goroutine"),  # unknown, but its last part "routines" is a known -e word
    ("coroutines", "coroutine"),
    ("datetimes", "datetime"),
    ("middlewares", "middleware"),
    ("iterators", "iterator"),  # unknown to the dictionary: the -s rule
    ("enums", "enum"),
    ("structs", "struct"),
    ("tuples", "tuple"),
    ("lifetimes", "lifetime"),
    ("namespaces", "namespace"),
    ("bytes", "byte"),
    ("closures", "closure"),
    ("traits", "trait"),
    ("macros", "macro"),
    ("photos", "photo"),
    ("maps", "map"),  # a four-letter plural is folded as any other ("Hash Maps", "hash map")
    ("keys", "key"),
    ("arms", "arm"),
    ("news", "news"),
    ("lens", "lens"),
    ("bias", "bias"),
    ("gas", "gas"),
    ("chaos", "chaos"),
    ("semantics", "semantics"),  # a field or a manner is one thing
    ("generics", "generic"),  # the dictionary's reading
    ("metrics", "metric"),
    ("normalizes", "normalize"),
    ("axes", "axis"),  # the dictionary says "axe"
    ("kudos", "kudos"),  # the dictionary says "kudo"
    ("media", "media"),  # the dictionary says "medium"
    # stop words stay as they are
    ("this", "this"),
    ("uses", "uses"),
    ("The", "the"),
]


@pytest.mark.parametrize(("word", "key"), WORD_KEYS)
def test_the_key_of_a_word(word: str, key: str) -> None:
    assert word_key(word) == key


# what the rules get wrong, kept visible: unknown names whose last s the -s rule takes for a plural
KNOWN_MISSES = [
    ("Emacs", "emacs"),
    ("pygments", "pygments"),
    ("xmlns", "xmlns"),
    ("setuptools", "setuptools"),
    ("todos", "todo"),  # an unknown -os plural of an -o word the dictionary lacks
    ("goos", "goos"),  # an identifier in lowercase (`CC_FOR_*goos*`) the dictionary reads as the plural of "goo"
]


@pytest.mark.parametrize(("word", "key"), KNOWN_MISSES)
@pytest.mark.xfail(strict=True, reason="a name the word list does not know, or knows as another word, that ends like a plural")
def test_known_misses_of_the_rules(word: str, key: str) -> None:
    assert word_key(word) == key


@pytest.mark.parametrize(("word", "lemma"), [
    ("caches", "cache"), ("libraries", "library"), ("criteria", "criterion"), ("fungi", "fungus"),
    ("formulae", "formula"), ("children", "children"), ("abc", "abc"), ("f64s", "f64s"),
    # -xes is the plural of -x, though the dictionary knows a rarer -xe ("idée fixe"): a changelog's "Fixes"
    ("fixes", "fix"), ("prefixes", "prefix"), ("mixes", "mix"), ("axes", "axis"),
])
def test_singular_of_a_lowercase_word(word: str, lemma: str) -> None:
    assert singular(word) == lemma


def test_a_version_written_with_its_v_is_one_number_and_no_term() -> None:
    """'Workspaces arrived in v1.16.0' made a concept page "V1" (the tokens "v1", "16", "0")."""
    from wikimem.analysis import is_content, tokens

    assert tokens("Workspaces arrived in v1.16.0 with V8.") == ["workspace", "arrived", "in", "v1.16.0", "with", "v8"]
    assert not is_content("v1.16.0") and is_content("v8")


@pytest.mark.parametrize(("title", "key"), [
    ("The APIs", "api"),
    ("HTTPS", "https"),
    ("HTTP", "http"),
    ("Caches", "cache"),
    ("The Request Context", "request context"),
    ("Contributor's Guide", "contributor guide"),
    ("C++", "c++"),
    ("C#", "c#"),
    ("Café Menus", "cafe menu"),
    ("Hash Maps", "hash map"),
    ("macOS Versions", "macos version"),
    ("a", "a"),
    # a name written as code keeps its number: two modules of an unseen set were "one thing"
    ("pygments.lexers", "pygments lexers"),
    ("pygments.lexer", "pygments lexer"),
    ("The `max_lengths` option", "max lengths option"),
])
def test_the_key_of_a_title(title: str, key: str) -> None:
    assert title_key(title) == key


@pytest.mark.parametrize("surface", ["HTTPS", "APIs", "URLs", "Caches", "Aliases", "Kubernetes", "Hash Maps",
                                     "Cookies", "Statuses", "Indices", "macOS", "Docutils"])
def test_the_compile_and_lint_key_a_name_alike(surface: str) -> None:
    """The compile's concept key (analysis.name_key) and lint's title key agree: they disagreed
    on "HTTPS" (http / https), "APIs" (apis / api), "Caches" (cach / cache)."""
    from wikimem.analysis import name_key

    assert name_key(surface) == title_key(surface)


@pytest.mark.parametrize(("name", "key"), [
    ("Windows", "windows"),  # a product's name is never folded to a singular
    ("macOS", "macos"), ("OS X", "macos"), ("Mac OS X", "macos"), ("Python3", "python"), ("CPython", "python"),
    ("PostgreSQL", "postgresql"),
    # `py` is a library of its own (pytest's old dependency), not a short name of Python: a pin
    # "py>=1.4.19" is no Python version
    ("py", "py"),
])
def test_the_key_of_a_products_name(name: str, key: str) -> None:
    assert lexicon.product_key(name) == key


@pytest.mark.parametrize(("word", "is_doc_word"), [
    ("documentation", True), ("reference", True), ("welcome", True), ("unreleased", True),  # a set's parts
    ("django", False), ("alembic", False), ("pip", False),  # what a set documents may be an English word too
])
def test_the_words_a_documentation_set_names_its_parts_with(word: str, is_doc_word: bool) -> None:
    """A front page "Welcome to Acme's documentation!" names the product Acme: its other words
    are DOC_WORDS (products.py)."""
    assert (word in lexicon.DOC_WORDS) is is_doc_word


def test_spellings_run_together_are_one_key() -> None:
    assert lexicon.run_together("sphinx quickstart") == lexicon.run_together("sphinx-quickstart") \
        == lexicon.run_together("sphinx_quickstart") == "sphinxquickstart"


# --- versions ----------------------------------------------------------------------------------

ORDERED = ["1.9", "1.10", "2.0.dev1", "2.0a1", "2.0b2", "2.0rc1", "2.0", "2.0.post1", "2.1", "10.0"]


@pytest.mark.parametrize(("older", "newer"), list(zip(ORDERED, ORDERED[1:], strict=False)) + [
    ("3.2.x", "3.3"),
    ("v1", "v2"),
    ("2024.1rc1", "2024.1"),
    ("go1.21", "go1.22"),
    ("go1.9", "go1.10"),
    ("2.0.0-beta.2", "2.0.0"),
    ("2.0.0-beta.1", "2.0.0-beta.2"),
    ("0.16", "0.17"),
    ("0.9.9", "1.0"),
    ("1.0", "1.0.1"),
    ("3.1.0", "3.1.1"),
    ("not a version", "0.1"),  # a text that holds no version sorts below every version
    ("", "0"),
])
def test_version_order(older: str, newer: str) -> None:
    assert version_key(older) < version_key(newer)


@pytest.mark.parametrize(("text", "numbers"), [
    ("3.1.0", (3, 1, 0)),
    ("v3.1", (3, 1)),
    ("3.2.x", (3, 2)),
    ("2.0rc1", (2, 0)),
    ("2.0.post1", (2, 0)),
    ("2024.1rc1", (2024, 1)),
    ("go1.21", (1, 21)),
    ("v1", (1,)),
    ("1.4.2 (unreleased)", (1, 4, 2)),
    ("2.0-foo", (2, 0)),
    ("unreleased", None),
    ("", None),
    (None, None),
])
def test_release_numbers(text: str | None, numbers: tuple[int, ...] | None) -> None:
    assert release_numbers(text) == numbers


@pytest.mark.parametrize(("a", "b"), [("3.2.x", "3.2"), ("v1", "1"), ("go1.21", "1.21"), ("2.0.0-beta.2", "2.0.0b2")])
def test_versions_that_parse_alike(a: str, b: str) -> None:
    assert parse_version(a) == parse_version(b)


@pytest.mark.parametrize(("title", "release"), [
    ("Go 1.21 Release Notes", ("go", "1.21")),
    ("Go 1.21 is released!", ("go", "1.21")),
    ("Flask 2.0.1", ("flask", "2.0.1")),
    ("Docutils 0.17 Release Notes", ("docutils", "0.17")),
    ("Node.js 18.0 released", ("node.js", "18.0")),
    ("Python 3 release", ("python", "3")),
    ("Chapter 3: Ownership", None),  # a number that is no version names no release
    ("Step 2", None),
    ("Release Notes", None),
    # a name joined to its release by a hyphen, as a package's files are named (pytest's announcements)
    ("pytest-2.5.0: now down to ZERO open bugs!", ("pytest", "2.5.0")),
    ("utf-8 everywhere", None),  # no dotted number: no release
    ("x86-64 builds", None),
])
def test_the_release_a_title_names(title: str, release: tuple[str, str] | None) -> None:
    assert title_release(title) == release


def test_index_md_orders_releases_as_the_pages_do() -> None:
    """index.md listed 2.0rc1, b2, a1, .post1 and .dev1 in input order before 2.0, while concept
    pages ordered them right: both ask lexicon.version_key."""
    from wikimem.backends import offline_pages
    from wikimem.index_page import Entry, order_entries

    versions = ["2.0rc1", "2.0b2", "2.0a1", "2.0.post1", "2.0.dev1", "2.0", "1.9", "1.10"]
    entries = [Entry(f"sources/r{i}.md", f"Release {v}", "", "source", f"raw/r{i}.md", version=v)
               for i, v in enumerate(versions)]
    ordered, series, _ = order_entries(entries, {})
    assert series
    assert [e.version for e in ordered] == ["2.0.post1", "2.0", "2.0rc1", "2.0b2", "2.0a1", "2.0.dev1", "1.10", "1.9"]
    assert offline_pages.version_key is version_key


def test_search_orders_a_series_by_the_lexicons_version() -> None:
    from wikimem.search.index import version_of

    assert version_of("Acme 1.10 Release Notes") > version_of("Acme 1.9 Release Notes")
    assert version_of("Notes") < version_of("Acme 0.1")


# --- dates -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "date"), [
    ("2020-09-26", "2020-09-26"),
    ("Released 2020-09-26.", "2020-09-26"),
    ("September 26, 2020", "2020-09-26"),
    ("Sep 26, 2020", "2020-09-26"),
    ("Sept. 26, 2020", "2020-09-26"),
    ("26 Sep 2020", "2020-09-26"),
    ("26 September 2020", "2020-09-26"),
    ("26. September 2020", "2020-09-26"),
    ("September 26th, 2020", "2020-09-26"),
    ("Version 3.1.0 (2024-11-13)", "2024-11-13"),
    ("Release 0.16 (2020-01-12)", "2020-01-12"),
    ("2020-02-30", None),  # no such day
    ("February 30, 2020", None),
    ("unreleased", None),
    ("TBD", None),
    ("1.4.2", None),
    ("in 2020", None),
    ("Changes in Version 4.20.1 (2026/11/19)", "2026-11-19"),  # the year first, with slashes
    ("(2020/2/3)", "2020-02-03"),
    ("2020/13/01", None),
    ("version 2026.1.3", None),  # a calendar version, not a date
    ("2024.05.01", None),
])
def test_find_date(text: str, date: str | None) -> None:
    assert find_date(text) == date


@pytest.mark.parametrize(("text", "expected"), [
    ("1.4.2 (unreleased)", True),
    ("Unreleased", True),
    ("Release date: TBD", True),
    ("To be released", True),
    ("Not yet released", True),
    ("Released 2020-09-26", False),
    ("Version 2.0", False),
])
def test_unreleased(text: str, expected: bool) -> None:
    assert unreleased(text) is expected


@pytest.mark.parametrize(("text", "now", "date"), [
    ("(2020-09-26)", "2026-12-03", "2020-09-26"),
    ("(2018-10-15 - not published due to a release automation bug)", "2026-12-03", "2018-10-15"),
    ("November 16, 2026", "2026-12-03", "2026-11-16"),
    ("2026-12-03", "2026-12-03", "2026-12-03"),  # released today
    ("2026-12-04", "2026-12-03", None),  # a date to come is a plan, not a release date
    ("January 1, 2099", "2026-12-03", None),
    ("(unreleased)", "2026-12-03", None),
    ("(YANKED)", "2026-12-03", None),
])
def test_a_release_date_is_never_one_to_come(text: str, now: str, date: str | None) -> None:
    assert lexicon.release_date(text, now) == date


def test_today_is_pinned_by_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1798761600")
    assert lexicon.today() == "2027-01-01"
    assert lexicon.release_date("Released 2027-01-02") is None and lexicon.release_date("2026-12-31") == "2026-12-31"


def test_meta_date() -> None:
    import datetime as dt

    assert lexicon.meta_date({"date": dt.date(2020, 9, 26)}) == "2020-09-26"
    assert lexicon.meta_date({"published": "September 26, 2020"}) == "2020-09-26"
    assert lexicon.meta_date({"title": "x"}) is None


# --- stop lists ----------------------------------------------------------------------------------

def test_the_named_stop_lists_are_defined_from_one_place() -> None:
    """The question stop list is stop words plus the verbs of asking; the index keeps whoosh's
    list (its format); no module but the lexicon defines one."""
    import subprocess
    from pathlib import Path

    assert lexicon.QUERY_STOP - lexicon._ASKING <= lexicon.STOPWORDS
    assert lexicon.INDEX_STOP - {"tbd"} <= lexicon.STOPWORDS
    assert lexicon.ARTICLES <= lexicon.STOPWORDS
    root = Path(__file__).parent.parent
    found = subprocess.run(["git", "grep", "-l", "-E", r"^(STOPWORDS|QUERY_STOP|STOP_WORDS|INDEX_STOP) = ", "--",
                            "daemon"], cwd=root, capture_output=True, text=True, check=False).stdout.split()
    assert found in ([], ["daemon/wikimem/lexicon/__init__.py"])


@pytest.mark.parametrize("word", ["whether", "which", "although", "the", "of", "because", "through", "yourselves",
                                  "isn't", "let's", "behind", "despite", "whereas", "instead"])
def test_function_words_are_stop_words(word: str) -> None:
    """"Whether debug mode is enabled" defined a term "whether debug mode" while "whether" was
    left out of the list; a page titled "Using Behind a Reverse Proxy" made a concept "Behind"."""
    from wikimem.analysis import name_key

    assert word in lexicon.STOPWORDS
    assert name_key("Whether debug mode") is None
    assert name_key(f"{word.title()} the gateway") is None


def test_the_search_index_stops_the_lexicons_words() -> None:
    from whoosh.analysis import StopFilter

    from wikimem.search.analysis import analyzer

    stops = next(f.stops for f in analyzer().items if isinstance(f, StopFilter))
    assert stops == lexicon.INDEX_STOP


def test_the_lexicon_imports_nothing_of_wikimems() -> None:
    import ast
    from pathlib import Path

    tree = ast.parse(Path(lexicon.__file__).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith(("wikimem", "."))]
    assert "packaging" not in [m.split(".")[0] for m in imported if not m.startswith("packaging.version")]


WORD_CASES = [
    "Workspaces arrived in v1.16.0 with V8.",
    "Edit conf.py, then run node.js and coverage.py on src/lib.rs.",
    "crypto/tls and net/http speak TCP/IP at 1.2.3; see path/to/file.txt here",
    "a/b.py c.d/e x_y.md/z 3.14/2 it’s v2.0. foo.Bar baz.qux a.b.c.d",
    "The end. Next sentence, no file and no path: just words 42 and 7.5",
    "`code/x` then y.js and `pkg.json.dumps` or `a b` and tail/end",
    "V1.2 v1 and.py .py x.PY x.toolong",
]


@pytest.mark.parametrize("text", WORD_CASES)
def test_a_texts_words_are_read_by_the_pattern_without_the_alternatives_it_cannot_hold(text: str) -> None:
    """tokens() reads a text without a file name's or a path's mark by _WORD less that
    alternative: the same words as _WORD finds, in the text and in every part of it."""
    from wikimem import analysis

    for part in {text, *text.split("`"), text[: len(text) // 2], text[len(text) // 2:]}:
        assert analysis._words_in(text)(part) == analysis._WORD.findall(part)
        assert analysis._words_in(part)(part) == analysis._WORD.findall(part)


HOW_TO_AND_DEFINES_CASES = [
    "The correct way to get the value is to set `x`.",
    "To turn it off, pass `check=False`.",
    "If you pass `order=True`, it also creates methods.",
    "Use `0` to close connections at the end of each request.",
    "Set `DEBUG` when you develop.",
    "You can configure it using the `--config` flag.",
    "It can be disabled by setting `enabled = false`.",
    "You can use `--jobs` to explicitly parallelize.",
    "`pytest.raises` lets you assert an exception.",
    "If you want to, use `git` instead.",
    "YOU CAN USE `A` TO RUN IT.",
    "Ｙou and ſet `x` for the İnstance.",
    "The house is big, the mouse is small: nothing to use here.",
    "A *widget* is a small thing that renders.",
    "Foo\tis a library.",
    "The `x` (a value), refers\u00a0to how it works.",
    "ORM stands for object relational mapping.",
    "Kubernetes  means   a helmsman.",
    "Thisis not a definition and neither isthat.",
]


@pytest.mark.parametrize("text", HOW_TO_AND_DEFINES_CASES)
def test_patterns_searched_only_where_their_words_are_answer_as_the_whole_pattern(text: str) -> None:
    """_how_to searches each group of _HOW_TO's alternatives only where a word of the group is,
    and defined_term asks _DEFINES only where its verb stands between spaces: the same answers."""
    from wikimem import analysis

    assert analysis._how_to(text, text.lower()) == (analysis._HOW_TO.search(text) is not None)
    if analysis._DEFINES.match(text):
        assert analysis._DEFINES_VERB.pattern.search(text)
    assert analysis.defined_term(text) == analysis._defined_term(text, analysis._called(text))


PATTERN_CASES = [
    *WORD_CASES,
    *HOW_TO_AND_DEFINES_CASES,
    "It is ignored. The value e.g. 5 ms is used, i.e. the default. Dr. Acme wrote it! Then v2.0 came.",
    "Use **Quill** (see Fig. 3) or _Toolkit_. “Quoted.” (Aside.) [Link.] `code.` Next ...",
    "WSGI and JSON over TLS, not .TLS or X-ABC; PEP 484 and RFC-7230 and ABCDEFGHIJ.",
    "We'll see; you should use our let’s; lets us go. Awe, your ours, _we and éwe.",
    "Muſt it? İt has no effect, ONLY works on Linux, and is SILENTLY IGNORED within 48 hours.",
    "3.5x faster at 10 ms, 1,000 bytes; v1.2, a1 and x.5 and 2KiB.",
    "Let's start. Now the first part. The latter IS a thing; These are not.",
    "The `--sql` option, the *field_transformer* hook, the TERM signal, the `TERM` Signals and the SIGHUP flags.",
    "Option `--tab-width`; a config key *x*; the ſetting `y`; `make()` returns {} and x := f(); a -> b; a == b;",
    "It ends on a semicolon;  \n",
    "Released in January and June, on Mondays; the numbered days of Octobers; MAY or may.",
    "Previously, it was used to work; PRIOR TO this, in the past, until now: formerly earlier.",
    "conf.py, coverage.py and a.b but not .py or A.B or x._y; don't, it’s, o'clock', x'1",
    "Resource Acquisition Is Initialization (RAII), a name (Acme) and ( XYZ) or (HTTPs).",
    "",
]


@pytest.mark.parametrize("text", PATTERN_CASES)
def test_patterns_that_open_on_a_character_match_as_their_look_behind_forms(text: str) -> None:
    """_SENTENCE_END, _ACRONYM and _NUMBER open on their first character and look behind it; the
    lowercase NARRATION opens on its words' first letters: the same matches as the patterns that
    look behind first, and CaseBlind answers as the case-blind pattern."""
    import re

    from wikimem import analysis, words

    def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
        return [(m.end(1) if m.groups() else m.start(), m.end()) for m in pattern.finditer(text)]

    looks_first = re.compile(r"(?<=[.!?])([\"'”’)\]*_]*)\s+(?=[\"'“‘(\[*_]*(?:[A-Z0-9]|`))")
    assert spans(analysis._SENTENCE_END, text) == spans(looks_first, text)
    acronym = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9]{2,7}(?![\w.-])")
    assert spans(analysis._ACRONYM, text) == spans(acronym, text)
    number = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:\s*(?:%|ms|s|seconds?|minutes?|hours?|days?|[KMGT]i?B|bytes?|bits?|x))?\b")
    assert spans(analysis._NUMBER, text) == spans(number, text)
    low = text.lower()
    assert (words._NARRATION_LOW.search(low) is None) == (re.compile(words.NARRATION.pattern.lower()).search(low) is None)
    for blind in (analysis._LIMITATION, analysis._POLICY, analysis._INSTEAD, analysis._CHATTY, analysis._REFERS_BACK,
                  analysis._DEFAULT, analysis._COUNTED_LIST, analysis._DEFINES_VERB, analysis._WAS,
                  analysis._NAMED_KIND_MARKED, *(part for _, part in analysis._HOW_TO_PARTS)):
        assert blind.search(text, low) == (blind.pattern.search(text) is not None)
        assert blind.match(text, low) == (blind.pattern.match(text) is not None)
    # the patterns that open on their mark or their capital, the tests before a pattern
    assert (analysis._FILE_MARK.search(text) is None) == (re.search(r"[A-Za-z0-9_]\.[a-z]", text) is None)
    assert (words._CODE_LIKE.search(text) is None) == (re.search(r"[{};]\s*$|[{}]|:=|\w\(\)|==|&&|\|\||->", text) is None)
    assert analysis._named_kind(text, low) == (analysis._NAMED_KIND.search(text) is not None)
    assert analysis._may_name_kind(text) or analysis._NAMED_KIND.search(text) is None
    assert analysis._MONTH_NAME.search(text) is not None or not analysis._MONTHS.search(text)
    assert analysis._was(text) == (analysis._WAS.pattern.search(text) is not None)
    assert analysis._ACRONYM_OPENS.search(text) is not None or analysis._ACRONYM_NEAR.search(text) is None
    assert analysis._WORD_LETTERS.findall(text) == re.findall(r"[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)?", text)
    for head in {text[: n] for n in range(len(text) + 1)}:
        if head.endswith((".", "!", "?")):
            at = max(0, len(head) - analysis._ABBREV_CHARS)
            assert (analysis._ABBREV.search(head, at) is None) == (analysis._ABBREV.search(head) is None)


def test_a_case_blind_pattern_keeps_its_groups_names():
    """CaseBlind lowercases a pattern's letters, not its groups' names (`(?P<Name>`, `(?P=Name)`),
    which a lowercased pattern would not compile with or would name otherwise."""
    import re

    from wikimem.words import CaseBlind

    pattern = re.compile(r"\b(?P<Word>Acme|Quill)\s+(?P=Word)\b", re.IGNORECASE)
    blind = CaseBlind(pattern)
    assert blind.lowercase.groupindex == {"Word": 1}
    for text in ("acme ACME", "Quill quill", "Acme Quill", "ACME  Acme!", "Ĳ acme acme"):
        assert blind.search(text, text.lower()) == (pattern.search(text) is not None)

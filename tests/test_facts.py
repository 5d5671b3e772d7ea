"""Facts over time: one extractor, timelines with the current value first, lint by series."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import corpus, write
from linkcheck import broken_links
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.facts import Statements, choice_value, extract
from wikimem.init import init_workspace
from wikimem.pages import loads_page
from wikimem.workspace import Workspace


def facts_of(text: str, release: str | None = None, title: str = "Notes") -> list:
    return extract(Statements("raw/x.md", title, None, "", None, [(text, 1, release, None)]))


@pytest.mark.parametrize(("sentence", "entity", "value", "change"), [
    ("Flask supports Python 3.9 and newer.", "python", (3, 9), ""),
    ("X supports Python 3.10, 3.11, 3.12, 3.13, and 3.14.", "python", (3, 10), ""),
    ("Docutils 0.16.x supports Python 2.7 and Python >= 3.5 natively.", "python", (2, 7), ""),
    ("Docutils 0.10 is compatible with Python versions from 2.4 to 3.2.", "python", (2, 4), ""),
    ("Drop support for Python 3.8.", "python", (3, 8), "drop"),
    # CPython is Python's, as the Requests history says it: one timeline, not two
    ("Requests has officially dropped support for CPython 3.7.", "python", (3, 7), "drop"),
    ("Python 2.6 and 3.3 are no longer supported.", "python", (3, 3), "drop"),
    # a list with a serial comma (click's CHANGES.md): 3.9 was left out, the drop read as 3.8
    ("Drop support for Python 3.7, 3.8, and 3.9. #2588", "python", (3, 9), "drop"),
    ("Python 2.6, 3.3, or 3.4 are no longer supported.", "python", (3, 4), "drop"),
    ("0.15.x is the last version supporting Python 2.6, 3.3, and 3.4.", "python", (3, 4), "last"),
    # Sphinx's changelog: the version before "support", or the support dropped at the end
    ("#14153: Drop Python 3.11 support.", "python", (3, 11), "drop"),
    ("#12555: Drop Docutils 0.20 support.", "docutils", (0, 20), "drop"),
    # the name said again before each version dropped (Sphinx 9.0's own docs, whose facts no rule was written for)
    ("#12555: Drop Docutils 0.18.1 and Docutils 0.19 support.", "docutils", (0, 19), "drop"),
    ("Python 3.8 and Python 3.9 are no longer supported.", "python", (3, 9), "drop"),
    ("Drop support for Python 3.7, Python 3.8 and Python 3.9.", "python", (3, 9), "drop"),
    ("Support for Python 3.8 has been dropped.", "python", (3, 8), "drop"),
    # what the dropped version is called before its name
    ("Removed support for end-of-life Python 3.9.", "python", (3, 9), "drop"),
    ("Removed support for the end-of-life Python 3.7. (#3143)", "python", (3, 7), "drop"),
    ("Drop support for EOL Python 3.4 (Pull #1774)", "python", (3, 4), "drop"),
    # what changed is named nearest the verb, not at the sentence's start
    ("Safari 5.1+ support is dropped because jQuery version is updated from 1.11.0 to 3.1.0",
     "jquery", (3, 1, 0), "from"),
    ("0.15.x is the last version supporting Python 2.6.", "python", (2, 6), "last"),
    # Go's notes say the last release another way
    ("Go 1.18 is the last release that is supported on FreeBSD 11.x, which has already reached end-of-life.",
     "freebsd", (11,), "last"),
    ("Require Werkzeug >= 3.0.0.", "werkzeug", (3, 0, 0), ""),
    ("The minimum supported version of PostgreSQL is increased from 13 to 14.", "postgresql", (14,), "from"),
    ("The unicode package has been upgraded from Unicode 15 to Unicode 17.", "unicode", (17,), "from"),
    # what changed is a measure said far from the verb (Go 1.23's "Profiles" timeline)
    ("The maximum stack depth for `alloc`, `mutex` and `goroutine` profiles has been raised from 32 to 128 frames.",
     "maximum stack depth", (128,), "from"),
    ("Go 1.21 requires macOS 10.15 Catalina or later.", "macos", (10, 15), ""),
    ("Gizmo no longer supports running with Python 3.8 (#4452)", "python", (3, 8), "drop"),
    # a range said with "through" (coverage.py's front page), the minimum said in an apposition
    ("It is supported on Python 3.9 through 3.14 rc2, including free-threading.", "python", (3, 9), ""),
    ("Ideally, use Python 3.9 (the lowest version the tool supports).", "python", (3, 9), ""),
    ("The tool no longer supports Node 16.", "node", (16,), "drop"),
    # the verb before the minimum it raised
    ("Increased minimum yarl version to 1.25.1 -- by :user:`bdraco`.", "yarl", (1, 25, 1), ""),
    ("Bump the minimum required version of Toolkit to 3.0.", "toolkit", (3, 0), ""),
    # the minimum said of a name without the word "version"
    ("The minimum supported Python is 3.9 (3.8+ for 1.0.x and older)", "python", (3, 9), ""),
    ("The minimum supported CMake is 3.15", "cmake", (3, 15), ""),
    # a dependency's minimum said as the dependency, raised "or later" (celery's 5.7 notes)
    ("The minimum Billiard dependency is updated to ``4.3.1``.", "billiard", (4, 3, 1), ""),
    ("Update the ``billiard`` dependency to 4.3.1 or later (#10802)", "billiard", (4, 3, 1), ""),
    ("Bump the kombu requirement to 5.3.0+.", "kombu", (5, 3, 0), ""),
    # the name said before, with the version the change fixed compatibility with (apscheduler's history)
    ("Fixed compatibility with SQLAlchemy 2.0 and bumped minimum supported version to 1.4", "sqlalchemy", (1, 4), ""),
    # the newest said the same way
    ("The latest supported Python version is 3.14.", "python", (3, 14), ""),
    # the versions dropped said as those below one: that one is the oldest supported
    ("Support: Dropped support for Python versions <3.9.", "python", (3, 9), ""),
    ("Remove support for, and imports related to, all Python versions less than 3.6 - including Python 2.",
     "python", (3, 6), ""),
    ("Drop support for Python versions older than 3.10.", "python", (3, 10), ""),
    ("NEW: Drop Python 3.10 and require Python >= 3.11.5 as possessive quantifiers are broken on lower versions.",
     "python", (3, 11, 5), ""),
])
def test_one_extractor_reads_the_ways_release_notes_say_it(sentence, entity, value, change) -> None:
    found = [f for f in facts_of(sentence) if f.key[1] == entity]
    assert found, sentence
    assert (found[0].value, found[0].change) == (value, change)


@pytest.mark.parametrize(("sentence", "release", "expected"), [
    # a release's item that adds a version in one clause and drops one in the other: both are the
    # release's own (the version added is no release named in the sentence, and no scope)
    ("Officially support Python 3.15 and drop support for Python 3.10", "3.11.0",
     {("max", "python", "", (3, 15), ""), ("min", "python", "", (3, 10), "drop")}),
    # a list goes on past "and" only with the same name again: PyPy's version is not Python's
    ("Officially support Python 3.14 and PyPy 3.11 and drop support for Python 3.9 and PyPy 3.9.", "3.10.0",
     {("max", "python", "", (3, 14), ""), ("min", "python", "", (3, 9), "drop")}),
    ("Acme 2.0 requires Python 3.9 and drops support for Python 3.8.", "2.0",
     {("min", "python", "acme", (3, 9), ""), ("min", "python", "acme", (3, 8), "drop")}),
    # a release's item that only drops a versioned name
    ("Drop Python 3.8 in #1281", "1.1.0", {("min", "python", "", (3, 8), "drop")}),
    ("Support: Removed Python 3.7.", "0.11.0", {("min", "python", "", (3, 7), "drop")}),
    # a version added to those supported, said as an addition
    ("Drop Python 3.8, and add Python 3.14 as a supported version (#2987, #3012)", "2.20.0",
     {("max", "python", "", (3, 14), ""), ("min", "python", "", (3, 8), "drop")}),
    ("NEW: Drop Python 3.6 support and formally add Python 3.10 support.", "9.0",
     {("max", "python", "", (3, 10), ""), ("min", "python", "", (3, 6), "drop")}),
    # the name before the verb is the one required again, not who requires it
    ("NEW: Drop Python 3.10 and require Python >= 3.11.5 as possessive quantifiers are broken on lower versions.",
     "13.0", {("min", "python", "", (3, 11, 5), "")}),
])
def test_two_clauses_of_one_sentence_are_read_each_with_its_own_verb(sentence, release, expected) -> None:
    found = {(f.key[0], f.key[1], f.key[2], f.value, f.change) for f in facts_of(sentence, release=release)
             if f.key[1] == "python"}
    assert found == expected, sentence
    assert {f.release for f in facts_of(sentence, release=release) if f.key[1] == "python"} == {release}


def test_a_chain_of_changes_states_the_last() -> None:
    # one sentence, two changes in turn (Sphinx's math extension): the timeline said 3
    (fact,) = facts_of("The default version of MathJax changed from version 2 to version 3 in Sphinx 4.0, "
                       "and from version 3 to version 4 in Sphinx 9.0.")
    assert (fact.key, fact.value, fact.old) == (("default", "mathjax", ""), (4,), (3,))
    # two changes of different things are no chain: the first is the sentence's
    (fact,) = facts_of("The default timeout changed from 10 to 20 seconds, and the retries from 3 to 5.")
    assert (fact.value, fact.old) == ((20,), (10,))


def test_a_default_said_after_its_value() -> None:
    # "Use MathJax v4 by default" (Sphinx 9.0's changelog): the timeline kept 4.0's "3"
    (fact,) = facts_of("#14022: Use MathJax v4 by default in the sphinx.ext.mathjax extension.")
    assert (fact.key, fact.value) == (("default", "mathjax", ""), (4,))
    (fact,) = facts_of("Acme now uses SQLite 3.45 by default.")
    assert (fact.key, fact.value) == (("default", "sqlite", ""), (3, 45))
    # what is done by default with a version is no default version
    assert facts_of("We test Python 3.12 by default.") == []


def test_what_is_not_a_current_fact() -> None:
    assert facts_of("Previously, the tool required Python 3.6 or later.") == []  # the past
    assert all(f.plan for f in facts_of("Go 1.19 will require macOS 10.13 or later.", title="Go 1.18 Release Notes"))
    assert facts_of("This release does not require Python 3.6 or later.") == []  # a negation
    assert facts_of("v2-beta of the widget requires nothing new.") == []  # no value
    assert facts_of("The minimum supported version is 3.2.") == []  # of nothing named ("supported" is no name)
    assert facts_of("The minimum value is 3.5 seconds.") == []
    assert facts_of("Remove Python 3.8 from CI", release="1.1.0") == []  # what else went, not its support
    # a team's note: who supports it stands between the name and the verb; "is" names nothing
    assert [(f.key, f.value) for f in facts_of("The newest Python scikit-build-core officially supports is 3.13, so "
                                               "the 3.14 job is allowed to fail.")] == [
        (("max", "python", "scikit-build-core"), (3, 13))]
    assert facts_of("Drop Python 2 compat code", release="1.1.0") == []
    assert facts_of("Add Python 3.10 support for the match statement.", release="9.0") == []  # a feature of it
    assert facts_of("Add Python 2.6 support to ``contrib.securetransport`` (Pull #1359)", release="1.22") == []  # a part's
    # support added for a new version (Starlette's notes) says nothing of the oldest one supported:
    # it is the newest one supported
    assert [(f.key, f.value) for f in facts_of("Officially support Python 3.12 [#2214].")] == [(("max", "python", ""), (3, 12))]
    assert [(f.key, f.value) for f in facts_of("Add support for Python 3.13.")] == [(("max", "python", ""), (3, 13))]
    # ... where a bound does: and an adverb is nobody's role ("(officially)" made a second timeline)
    (fact,) = facts_of("Requests officially supports Python 3.10+.")
    assert (fact.key, fact.value) == (("min", "python", "requests"), (3, 10))
    assert [f.value for f in facts_of("This library supports Python 3.9 and higher.")] == [(3, 9)]
    # the release a changelog section names is the fact's own release
    (fact,) = facts_of("Drop support for Python 3.8.", release="3.1.0")
    assert fact.release == "3.1.0"


@pytest.mark.parametrize("sentence", [
    # a number that labels a part of the document is no version of a thing it needs
    "We can have as many arms as we need: In Listing 6-3, our `match` has four arms.",
    "We need to add to the code in Listing 9-3 to take different actions depending on the value it returns.",
    "The build needs Example 2 from the tutorial and Appendix 3 for its settings.",
])
def test_a_numbered_part_of_the_document_is_no_version(sentence) -> None:
    assert facts_of(sentence) == []


def test_a_list_of_raised_minimums_gives_each_its_new_minimum(tmp_path: Path) -> None:
    """"Minimum versions increased for these dependencies:" then "Twisted: 18.9.0 → 21.7.0": a
    changelog said the minimum twice this way after an old "requires Twisted >= 13.1", and the
    timeline called the old line current."""
    from wikimem.analysis import analyze
    from wikimem.facts import read_record, record
    from wikimem.sources import load_source

    text = ("Release notes\n=============\n\nQuill 2.12.0 (2024-11-18)\n-------------------------\n\n"
            "-   Minimum versions increased for these dependencies:\n\n    -   Twisted_: 18.9.0 → 21.7.0\n\n"
            "    -   lxml_: 4.4.1 -> 4.6.0\n\n-   Fixed a bug in 3 places.\n\n"
            "Quill 1.3.0 (2016-12-21)\n------------------------\n\n- Quill now requires Twisted >= 13.1.\n\n"
            ".. _Twisted: https://twisted.org/\n.. _lxml: https://lxml.de/\n")
    (tmp_path / "news.rst").write_text(text)
    doc = load_source(tmp_path / "news.rst", "raw/news.rst", max_bytes=10**6)
    _, found = read_record("raw/news.rst", record(doc, analyze(doc).sentences))
    raised = {(f.key, f.value, f.old, f.release) for f in found if f.change == "from"}
    assert raised == {(("min", "twisted", ""), (21, 7, 0), (18, 9, 0), "2.12.0"),
                      (("min", "lxml", ""), (4, 6, 0), (4, 4, 1), "2.12.0")}
    assert not any(f.line and "Fixed a bug" in f.sentence for f in found)
    # each is quoted as the file has it: the second with the item between left out
    sentences = {f.key[1]: f.sentence for f in found if f.change == "from"}
    assert sentences == {"twisted": "Minimum versions increased for these dependencies: Twisted: 18.9.0 → 21.7.0",
                         "lxml": "Minimum versions increased for these dependencies: … lxml: 4.4.1 -> 4.6.0"}


def test_a_changelog_that_names_one_product_in_its_drops_drops_bare_versions_of_it_too() -> None:
    entries = [("Drop support for 3.9", 3, "1.16.0", "2026-01-10"), ("Drop support for Python 3.8", 9, "1.14.0", "2025-01-01")]
    from wikimem.facts import Profile

    release = Profile("Quill history", "release")
    doc = Statements("raw/history/quill.md", "Quill history", None, "quill", None, entries, profile=release)
    drops = sorted((f.value, f.release) for f in extract(doc) if f.key == ("min", "python", ""))
    assert drops == [((3, 8), "1.14.0"), ((3, 9), "1.16.0")]
    # without a named drop beside it, a bare version is nobody's
    alone = Statements("raw/history/quill.md", "Quill history", None, "quill", None, entries[:1], profile=release)
    assert [f for f in extract(alone) if f.key[0] == "min"] == []


def test_a_requirement_any_of_a_closed_list_meets_names_the_newest_supported() -> None:
    said = {(f.key[0], f.value) for f in facts_of("NetworkX requires Python 3.11, 3.12, 3.13, or 3.14.")}
    assert said == {("min", (3, 11)), ("max", (3, 14))}
    # open at its end, or two versions only: the oldest alone
    assert {f.key[0] for f in facts_of("Requires Python 3.9, 3.10 or 3.11 or later.")} == {"min"}
    assert {f.key[0] for f in facts_of("Acme requires Python 3.11 or 3.12.")} == {"min"}


def test_a_settings_default_stated_under_its_description_whatever_its_name(ws: Workspace) -> None:
    """`.. confval:: language` with ":default: 'en'": a setting named by one plain word has its
    default read as the reference states it, current where an old release (5.0, four majors
    behind the newest) changed it."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite builds documentation.\n")
    write(ws, "kite/configuration.rst", "Configuration\n=============\n\n.. confval:: language\n   :type: str\n"
                                        "   :default: ``'en'``\n\n   The language the documents are written in.\n")
    write(ws, "kite/changes/5.0.rst", "Kite 5.0\n========\n\nRelease 5.0.0 (released May 30, 2022)\n"
                                      "=====================================\n\n"
                                      "* Change the default language to ``'en'`` if no language is set.\n")
    write(ws, "kite/changes/9.0.rst", "Kite 9.0\n========\n\nRelease 9.0.0 (released Nov 20, 2025)\n"
                                      "=====================================\n\n* Faster builds.\n")
    line = _compiled_claims(ws)["Default language (kite)"]
    assert line.startswith("Current: **'en'**") or line.startswith("Current: **en**"), line


def test_a_default_said_in_a_settings_description_is_that_settings() -> None:
    """Under `.. confval:: html_theme`, "The default theme is now 'alabaster'" is html_theme's
    default, one timeline with its ":default:"; under another setting's it stays "theme"."""
    def keys(setting: str) -> list[tuple[str, str, str]]:
        statements = Statements("raw/conf.rst", "Configuration", None, "", None,
                                [("Changed in version 1.3: The default theme is now 'alabaster'.", 9, "1.3", None,
                                  setting, "para", setting)])
        return [f.key for f in extract(statements)]

    assert keys("html_theme") == [("choice", "html_theme", "")]
    assert keys("html_title") == [("choice", "theme", "")]


def test_a_relative_clause_is_said_of_the_name_before_it() -> None:
    """A team's note: "Our theme is Furo 2024.8.6, which needs Python 3.8 or newer" is Furo's
    need, not the product's, nor the note's."""
    (fact,) = facts_of("Our theme is Furo 2024.8.6, which needs Python 3.8 or newer.", None, "Team notes")
    assert (fact.key, fact.value) == (("min", "python", "furo"), (3, 8))
    (fact,) = facts_of("Our app is on Django, which requires Python 3.10 or newer.", None, "Team notes")
    assert fact.key == ("min", "python", "django")


def test_it_in_a_later_clause_is_what_the_sentence_opened_on() -> None:
    """A release note (cffi's 1.14.2): "This flag is not added if you run the compilation with
    CPython 3.4, as it only works with CPython >= 3.5" made CPython 3.5 the product's minimum:
    "it" is the flag. A sentence that opens on the product, or on "This release", keeps it."""
    (fact,) = facts_of("This flag is not added if you run the compilation with CPython 3.4, as it only "
                       "works with CPython >= 3.5, but by now this version is quite old.", "1.14.2", "Acme")
    assert fact.key == ("min", "python", "flag")
    (fact,) = facts_of("This release is tested on many systems, as it only works with CPython >= 3.5.", "1.14.2", "Acme")
    assert fact.key == ("min", "python", "")
    (fact,) = facts_of("Acme is fast, and it only works with CPython >= 3.5.", "1.14.2", "Acme")
    assert fact.key == ("min", "python", "")


def test_a_dependency_set_to_a_version_without_or_later_may_be_a_pin() -> None:
    assert not facts_of("Update the kombu dependency to 5.3.0.", "5.7.0")


@pytest.mark.parametrize("sentence", [
    # "supported" is no name: the minimum of what is not said
    "Bumped minimum supported version to 1.4",
    # a release of something before the verb is not what the minimum is of
    "Acme 2.0 now bumped the minimum supported version to 1.4",
])
def test_a_raised_minimum_that_names_nothing_states_nothing(sentence) -> None:
    assert not facts_of(sentence, "3.10.0")


@pytest.mark.parametrize(("heading", "expected"), [
    ("Billiard", [(("min", "billiard", ""), (4, 3, 0))]),
    ("``billiard``", [(("min", "billiard", ""), (4, 3, 0))]),
    # a heading that says the section's kind names nothing the minimum is of
    ("Dependencies", []),
    ("Requirements", []),
    ("Upgrading Billiard", []),
])
def test_a_minimum_without_a_name_is_of_the_thing_its_section_is_named_after(heading, expected) -> None:
    statements = Statements("raw/whatsnew.rst", "What's new", None, "", None,
                            [("Minimum required version is now 4.3.0+.", 9, "5.7.0", None, heading, "para")])
    assert [(f.key, f.value) for f in extract(statements)] == expected


@pytest.mark.parametrize(("sentence", "subject", "value", "change"), [
    # pip's NEWS, structlog's and pytest's changelogs, SQLAlchemy's migration notes, Django's release notes
    ("Switch the default upgrade strategy to be 'only-if-needed' (#4500)", "upgrade strategy", "only-if-needed", "from"),
    ("The default renderer now is `structlog.dev.ConsoleRenderer` if you don't configure *structlog*.",
     "renderer", "structlog.dev.ConsoleRenderer", "from"),
    ("The default value for `junit_family` has changed to `xunit2`.", "junit_family", "xunit2", "from"),
    ("The default DBAPI driver for the PostgreSQL dialect has been changed from `psycopg2` to `psycopg`.",
     "dbapi driver for postgresql dialect", "psycopg (was psycopg2)", "from"),
    ("Default *width* is now `None` for full terminal width.", "width", "None", "from"),
    # "if nothing is configured" says what a default is
    ("The default dialect is now `oracledb` when no dialect is named in the URL.", "dialect", "oracledb", "from"),
    ("The Python standard library's `zoneinfo` is now the default timezone implementation in Django.",
     "timezone implementation", "zoneinfo", "from"),
    # a state, as a note or a reference page says it
    ("Remember that our default upgrade strategy is eager: it upgrades everything.", "upgrade strategy", "eager", ""),
    ("The default renderer is `KeyValueRenderer`, so plain lines appear.", "renderer", "KeyValueRenderer", ""),
    # what a setting named in code defaults to, changed in a release or as it is
    ("`Request.max_form_memory_size` defaults to 500kB instead of unlimited.", "max_form_memory_size",
     "500kB (was unlimited)", "from"),
    ("`X_FRAME_OPTIONS` now defaults to `'DENY'`.", "x_frame_options", "DENY", "from"),
    ("`generate_password_hash` uses scrypt by default.", "generate_password_hash", "scrypt", ""),
    ("`max_form_memory_size` is unlimited by default, so we set it to 2 MB.", "max_form_memory_size", "unlimited", ""),
    ("Passwords are hashed with `generate_password_hash`, which defaults to PBKDF2.", "generate_password_hash", "PBKDF2", ""),
    # what kind of setting it is between its name and its change
    ("You use `invoke.context.MockContext`; its `repeat` init kwarg changed its default value from `False` to `True`.",
     "repeat", "True (was False)", "from"),
])
def test_a_default_that_is_a_word(sentence, subject, value, change) -> None:
    (fact,) = [f for f in facts_of(sentence, release="2.0") if f.key[0] == "choice"]
    assert (fact.key[1], fact.value_text, fact.change) == (subject, value, change)


@pytest.mark.parametrize("sentence", [
    "When using `pyproject.toml` metadata, the default value of `include_package_data` is changed to `True`.",
    "This differs from `setup.cfg` (where `include_package_data` is `False` by default), for compatibility.",
    "When `ca_certs` is given, `cert_reqs` defaults to `'CERT_REQUIRED'`.",
])
def test_the_default_of_one_case_is_not_the_default(sentence) -> None:
    """A default stated under a condition ("When using X, ...", "(where ...)") is that case's:
    the same setting has another default otherwise."""
    assert [f for f in facts_of(sentence, release="2.0") if f.key[0] == "choice"] == []


@pytest.mark.parametrize(("sentence", "subject", "value"), [
    ("If omitted, the default timeout is `30s`.", "timeout", "30s"),
    ("When no `cert_reqs` is given, `cert_reqs` defaults to `'CERT_NONE'`.", "cert_reqs", "CERT_NONE"),
])
def test_a_default_under_a_condition_of_absence_is_the_default(sentence, subject, value) -> None:
    (fact,) = [f for f in facts_of(sentence) if f.key[0] == "choice"]
    assert (fact.key[1], fact.value_text) == (subject, value)


def test_what_is_no_word_default() -> None:
    # a bare word the sentence goes on after is no value; nor a stop word, a negation or the past
    for sentence in ("The default renderer is fine for development.", "The default is used when nothing is set.",
                     "The default renderer is not `KeyValueRenderer`.",
                     "Previously the default renderer was `KeyValueRenderer`.",
                     "The default value is `None`.",  # says not of what
                     # a case after the value narrows the default to it
                     'Set the default encoding to "UTF-8" when loading `.env` files.',
                     # the code span is what the subject belongs to, not the subject
                     "The `originalname` attribute of `_pytest.python.Function` now defaults to `name`.",
                     # the default is the object of a preposition: what improved is the compatibility
                     "Compatibility between mypy's default behavior and the `--local-partial-types` flag is now improved."):
        assert [f for f in facts_of(sentence, release="2.0") if f.key[0] == "choice"] == [], sentence
    # what another package changed is its own ("`asgiref` version 3.3.0 changed the default ...")
    (fact,) = facts_of("Warning: `asgiref` version 3.3.0 changed the default value of the `thread_sensitive` "
                       "parameter to `True`.", release="3.1")
    assert fact.key == ("choice", "thread_sensitive parameter", "asgiref")
    # a reference page saying what an option changes describes the option, not a release
    doc = Statements("raw/ref.md", "django-admin", None, "", None,
                     [("This changes the default IP address from `127.0.0.1` to `::1`.", 1, None, None)])
    assert extract(doc) == []
    # a word value never agrees with a version, and the same word written two ways agrees with itself
    a, b = facts_of("The default renderer is now `acme.dev.ConsoleRenderer()`.", release="2.0")[0], \
        facts_of("The default renderer is `ConsoleRenderer`.", release="2.0")[0]
    assert a.value == b.value and a.value[0] == -1
    assert choice_value("only-if-needed") == choice_value("`only_if_needed`") == choice_value("only if needed")
    assert choice_value("eager") != choice_value("only-if-needed")


def _workspace(tmp_path: Path, folders: dict[str, str]) -> Workspace:
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    for name, folder in folders.items():
        shutil.copytree(folder, ws.raw / name)
    return ws


def _current(ws: Workspace) -> dict[str, str]:
    """{timeline title: the current line} of every timeline page that states a current value
    (the others state only the latest statement)."""
    out = {}
    for page in sorted((ws.wiki / "facts").glob("*.md")):
        if page.name.startswith("index"):
            continue
        text = page.read_text()
        current = re.search(r"^Current: (.*)$", text, re.MULTILINE)
        assert current or re.search(r"^Latest statement \(", text, re.MULTILINE), page.name
        if current:
            out[loads_page("x", text).title] = current.group(1)
    return out


@pytest.mark.corpus
@pytest.mark.slow
def test_every_fact_that_changed_on_the_go_release_notes(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"go": str(corpus("versions"))})
    compile_workspace(ws, load_settings(ws.root, environ={}))
    current = _current(ws)
    # read from the documents: the current value of each, and where it is stated
    expected = {
        "Minimum macOS version (go)": ("macOS 13 Ventura", "go1.27.md"),
        "Minimum Windows version (go)": ("Windows 10", "go1.21.md"),
        "Minimum Linux kernel version (go)": ("Linux kernel version 3.2", "go1.24.md"),
        "Minimum Go version (bootstrap) (go)": ("Go 1.24.6", "go1.26.md"),
        "Default TLS version (server) (go)": ("TLS 1.2", "go1.22.md"),
        "Unicode (go)": ("17 (was 15)", "go1.27.md"),
    }
    for title, (value, where) in expected.items():
        assert title in current, (title, sorted(current))
        assert f"**{value}**" in current[title] and where in current[title], (title, current[title])
    # the OpenBSD minimum was last stated by Go 1.11, eight years before Go 1.27: the latest statement
    openbsd = _claims(ws)["Minimum OpenBSD version (go)"]
    assert openbsd.startswith("Latest statement (1.11, 2018-08-24): **OpenBSD 6.2**"), openbsd
    assert broken_links(ws.wiki) == []


@pytest.mark.corpus
@pytest.mark.slow
def test_every_fact_that_changed_in_the_sphinx_changelogs(tmp_path: Path) -> None:
    raw = corpus("sphinx")
    ws = _workspace(tmp_path, {"flask": str(raw / "flask"), "docutils": str(raw / "docutils")})
    compile_workspace(ws, load_settings(ws.root, environ={}))
    current = _current(ws)
    expected = {
        # Flask: the installation page is the documentation of the release it ships with
        "Minimum Python version (flask)": ("Python 3.9 and newer", "installation.rst"),
        "Minimum Werkzeug version (flask)": ("Werkzeug >= 3.1", "CHANGES.rst, line 43"),
        "Minimum ItsDangerous version (flask)": ("ItsDangerous >= 2.2", "CHANGES.rst, line 43"),
        "Minimum Blinker version (flask)": ("Blinker >= 1.9", "CHANGES.rst, line 43"),
        "Minimum click version (flask)": ("click>=8.1.3", "CHANGES.rst, line 152"),
        # Docutils 0.16: "supports Python 2.7 and Python 3.5+" (HISTORY) / ">= 3.5" (RELEASE-NOTES)
        "Minimum Python version (docutils)": ("Python 2.7 and Python 3.5+", "0.16"),
    }
    for title, (value, where) in expected.items():
        assert title in current, (title, sorted(current))
        assert f"**{value}**" in current[title] and where in current[title], (title, current[title])
    flask = (ws.wiki / "facts" / "flask-minimum-python-version.md").read_text()
    assert "It replaced Python 3.8, dropped in 3.1.0 (2024-11-13)" in flask
    # the timeline is linked from the source pages that state it and from index.md
    assert "(../facts/flask-minimum-python-version.md)" in (ws.wiki / "sources" / "flask-installation.md").read_text()
    assert "facts/flask-minimum-python-version.md" in (ws.wiki / "index.md").read_text()
    assert broken_links(ws.wiki) == []
    # a plan is one sentence, listed once even when it states two values
    for page in (ws.wiki / "facts").glob("*.md"):
        plans = page.read_text().partition("## Plans")[2].partition("\n## ")[0]
        items = [line for line in plans.splitlines() if line.startswith("- ")]
        assert len(items) == len(set(items)), (page.name, items)


def test_releases_of_one_series_are_not_duplicates_and_never_supersede_across_series(ws: Workspace) -> None:
    from wikimem.lint import run_lint

    shared = ("This security release fixes a flaw in the session handling, and the widget now requires "
              "OpenSSL 3.0 or later on every platform the widget supports. ") * 12
    write(ws, "widget/3.2.13.md", f"# Widget 3.2.13 release notes\n\n{shared}\n")
    write(ws, "widget/4.0.4.md", f"# Widget 4.0.4 release notes\n\n{shared}\n")
    write(ws, "gadget/notes.md", "# Gadget 1.0 release notes\n\nGadget 1.0 requires OpenSSL 1.1 or later.\n")
    settings = load_settings(ws.root, environ={})
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, ["duplicate", "superseded"], write=False)
    assert [f for f in report.findings if f.rule == "duplicate"] == []
    # Gadget's OpenSSL is Gadget's: a value from another series never supersedes Widget's
    assert [f for f in report.findings if f.rule == "superseded"] == []


def test_a_folder_of_unrelated_readmes_never_compares_their_facts(ws: Workspace) -> None:
    """READMEs of many packages in one folder (no index or README speaks for it): each package's
    supported Python is its own; a folder with an index is one product's documentation."""
    from wikimem.lint import run_lint

    for name, text in (("six", "Six supports Python 2.7 and 3.3+."),
                       ("h11", "Currently it supports Python 3 (testing on 3.8-3.12) and PyPy 3."),
                       ("idna", "This library supports Python 3.9 and higher."),
                       ("pydantic", "## 2.14.0 (2026-10-08)\n\nThis release drops support for Python 3.9."),
                       ("attrs", "Attrs is a package that brings back the joy of writing classes.")):
        write(ws, f"packages/{name}.md", f"# {name}\n\n{text}\n")
    write(ws, "product/index.md", "# Product\n\nThe product's documentation.\n")
    write(ws, "product/install.md", "# Installation\n\nProduct supports Python 3.10 and newer.\n")
    write(ws, "product/changes.md", "# Changes\n\n## Version 2.0\n\nReleased 2025-01-01\n\n"
                                    "- Drop support for Python 3.9.\n\n## Version 1.0\n\nReleased 2024-01-01\n\n"
                                    "- Drop support for Python 3.7.\n")
    for name in ("guide", "faq"):
        write(ws, f"product/{name}.md", f"# {name.title()}\n\nHow the product's {name} reads.\n")
    settings = load_settings(ws.root, environ={})
    compile_workspace(ws, settings)
    report = run_lint(ws, settings, ["superseded", "contradicted"], write=False)
    assert not [f for f in report.findings if any(p.startswith("raw/packages/") for p in f.paths)]
    timelines = sorted(p.name for p in (ws.wiki / "facts").glob("*.md") if p.name != "index.md")
    assert not [t for t in timelines if t.startswith("packages-")]  # no timeline mixes the packages
    # the product's install page and its changelog speak of one product: one timeline
    product = [t for t in timelines if t.startswith("product-")]
    assert product == ["product-minimum-python-version.md"]
    text = (ws.wiki / "facts" / product[0]).read_text(encoding="utf-8")
    assert "install.md" in text and "changes.md" in text


def test_odd_changelogs_never_crash_nor_give_a_false_current(ws: Workspace) -> None:
    write(ws, "tool/CHANGES.md", (
        "# Changelog\n\n"
        "## 1.0 (2020-01-01)\n\n- Requires Python 3.6 or later.\n\n"
        "## 2.0 (2022-01-01)\n\n- Requires Python 3.8 or later.\n\n"  # written oldest first
        "## v2-beta\n\n- Requires Python 3.9 or later.\n\n"  # a version that does not parse
        "## 3.0 (2099-01-01)\n\n- Requires Python 3.10 or later.\n\n"  # a date in the future is still its release
        "## 3.0 (2024-01-01)\n\n- Requires Python 3.11 or later.\n\n"  # the same version twice, disagreeing
        "```\nRequires Python 2.7 or later.\n```\n\n"  # in a code block: not a statement
        "> Previously, the tool required Python 2.6 or later.\n"))  # a quoted older note
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.failed == []
    page = (ws.wiki / "facts").glob("*python*.md")
    text = next(page).read_text()
    current = re.search(r"^Current: (.*)$", text, re.MULTILINE).group(1)
    assert "3.0" in current and "Python 3.1" in current  # release 3.0's statement, not 2.0's or the beta's
    assert "2.7" not in text and "2.6" not in text
    assert broken_links(ws.wiki) == []


def test_documents_alone_are_their_own_series_even_when_two_share_a_file_name() -> None:
    from wikimem.raw_tree import fact_series

    loose = [f"raw/a/d{i}.md" for i in range(5)] + ["raw/a/changes.md"]
    other = [f"raw/b/e{i}.md" for i in range(5)] + ["raw/b/changes.md"]
    product = [f"raw/f/g{i}.md" for i in range(5)] + ["raw/f/README.md"]
    series = fact_series([*loose, *other, *product, "raw/top.md", "raw/notes.md"])
    assert series["raw/a/d0.md"] == "d0" and series["raw/a/changes.md"] == "a/changes"
    assert series["raw/b/changes.md"] == "b/changes"
    assert {series[p] for p in product} == {"f"}  # a README speaks for its folder: one product
    assert series["raw/top.md"] == series["raw/notes.md"] == ""  # files in raw/ share one series


def test_a_fact_is_named_as_its_sentence_spells_the_thing() -> None:
    """A timeline of Sphinx's "jQuery version is updated from 1.11.0 to 3.1.0" was titled
    "Jquery": the name is spelled as the sentence spells it."""
    from wikimem.facts import label

    (fact,) = [f for f in facts_of("The jQuery version is updated from 1.11.0 to 3.1.0.", "1.5") if f.key[1] == "jquery"]
    assert label(fact.key, fact) == "jQuery"
    (fact,) = [f for f in facts_of("Go 1.21 requires macOS 10.15 Catalina or later.") if f.key[1] == "macos"]
    assert label(fact.key, fact) == "minimum macOS version (go)"  # the role: whose requirement


# --- facts you can trust: whose fact, which product, how strong the evidence --------------------
# The fixtures are written here, for the rule each test holds; none is copied from a project.

QUILL_DOCS = {
    "index.md": "# Welcome to Quill's documentation!\n\nQuill builds static sites. Read the install page first.\n",
    "ref/index.md": "# API reference\n\nEvery setting and command of the toolkit.\n",
    "ref/settings.md": "# Settings\n\nThe `output` setting names the folder pages go to.\n",
    "ref/commands.md": "# Commands\n\nThe `build` command writes the site.\n",
    "ref/plugins.md": ("# Plugins\n\n| name | summary | requires |\n|---|---|---|\n"
                       "| quill-feeds | Atom feeds | quill>=4.0 |\n| quill-maps | Site maps | Python>=3.12 |\n"),
    "ref/search.md": ("# Search\n\nThis option requires Python>=3.13 or an extra package.\n\n"
                      "Full-text search requires SQLite 3.44 or later.\n\n"
                      "Fixed warnings when using attrs>=19.2 with the search index.\n"),
    "faq/index.md": "# FAQ\n\nQuestions people ask about the toolkit.\n",
    "faq/install.md": "# Installing\n\nQuill supports Python 3.10 and newer.\n",
    "faq/themes.md": "# Themes\n\nA theme is a folder of templates.\n",
    "faq/speed.md": "# Speed\n\nA site of 1000 pages builds in about 4 seconds.\n",
    "faq/hosting.md": "# Hosting\n\nAny static host serves the output folder.\n",
    "releases/index.md": "# Release notes\n\nOne page per release.\n",
    "releases/4.1.md": ("# Quill 4.1 release notes\n\n*March 1, 2025*\n\nSupport for Python 3.9 is dropped.\n\n"
                        "Also means we depend on py>=1.4.19 now.\n"),
    "releases/4.0.md": "# Quill 4.0 release notes\n\n*March 1, 2024*\n\nQuill 4.0 supports Python 3.9 and newer.\n",
    "releases/3.0.md": ("# Quill 3.0 release notes\n\n*March 1, 2023*\n\nQuill 3.0 requires Python 3.8 or later.\n\n"
                        "Also means we depend on py>=1.3 now.\n"),
    "releases/2.0.md": "# Quill 2.0 release notes\n\n*March 1, 2022*\n\nQuill 2.0 requires SQLite 3.30 or later.\n",
}


def _quill(ws: Workspace, extra: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict[str, str]:
    for rel, text in {**QUILL_DOCS, **(extra or {})}.items():
        if rel not in drop:
            write(ws, rel, text)
    compile_workspace(ws, load_settings(ws.root, environ={}))
    return _claims(ws)


def _compiled_claims(ws: Workspace) -> dict[str, str]:
    """Compile the workspace (nothing may fail) and give its timelines' claim lines (_claims)."""
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.failed == []
    return _claims(ws)


def _claims(ws: Workspace) -> dict[str, str]:
    """{timeline title: its claim line} for every timeline page (Current or Latest statement)."""
    out = {}
    for page in sorted((ws.wiki / "facts").glob("*.md")) if (ws.wiki / "facts").is_dir() else []:
        if page.name.startswith("index"):
            continue
        text = page.read_text(encoding="utf-8")
        claim = re.search(r"^(?:Current|Latest statement).*$", text, re.MULTILINE)
        assert claim, page.name
        out[loads_page("x", text).title] = claim.group(0)
    return out


def test_a_documentation_sets_timelines_are_its_products_not_its_folders(ws: Workspace) -> None:
    """The front page names the product; ref/, faq/ and releases/ are its parts: one timeline
    "(quill)", none named "(ref)" or "(faq)" or "(all sources)"."""
    claims = _quill(ws)
    assert "Minimum Python version (quill)" in claims, sorted(claims)
    assert not [t for t in claims if re.search(r"\((?:ref|faq|releases|all sources)\)$", t)], sorted(claims)


def test_only_the_products_own_statements_make_its_timeline(ws: Workspace) -> None:
    """A plugin's requirement of the product (a table row), a feature's requirement ("this
    option requires", "full-text search requires"), a condition ("when using attrs>=19.2") and
    another library ("py" is not Python) make no timeline of the product's."""
    claims = _quill(ws)
    assert not [t for t in claims if re.search(r"quill version|attrs|sqlite", t, re.I)], sorted(claims)
    python = claims["Minimum Python version (quill)"]
    assert "3.13" not in python and "3.12" not in python and "1.4" not in python
    py = [t for t in claims if t.startswith("Minimum py version")]
    # the release pin of the `py` library is its own fact, never Python's
    assert all("py>=" in claims[t] for t in py)


def test_a_drop_reads_as_the_oldest_version_still_stated(ws: Workspace) -> None:
    """"Support for Python 3.9 is dropped" in 4.1 and the install page's "3.10 and newer":
    current 3.10, from the reference page; without that page, "above Python 3.9"."""
    claims = _quill(ws)
    assert claims["Minimum Python version (quill)"].startswith("Current: **Python 3.10 and newer**")


def test_a_drop_with_nothing_stated_after_it_is_above_the_dropped_version(ws: Workspace) -> None:
    claims = _quill(ws, drop=("faq/install.md",))
    line = claims["Minimum Python version (quill)"]
    assert line.startswith("Current: **above Python 3.9**"), line
    assert "drops" not in line.split(":", 2)[1]


def test_a_drop_reads_as_the_next_version_when_the_documents_number_the_series_one_by_one(ws: Workspace) -> None:
    """Nothing states the minimum after 4.1 drops Python 3.9, but the documents name 3.8 and 3.9
    (consecutive) and 3.12: the series goes one by one past 3.9, so the minimum is 3.10, and the
    page says it is the version after the one dropped."""
    matrix = {"ref/matrix.md": "# Test matrix\n\nThe test suite runs on Python 3.12 in CI.\n"}
    claims = _quill(ws, matrix, drop=("faq/install.md",))
    line = claims["Minimum Python version (quill)"]
    assert line.startswith("Current: **Python 3.10**, 4.1"), line
    text = (ws.wiki / "facts" / "quill-minimum-python-version.md").read_text(encoding="utf-8")
    assert "the version after Python 3.9, which it drops" in text
    assert "description: currently Python 3.10 (4.1" in text


def test_a_release_dropping_two_versions_in_two_items_drops_up_to_the_higher(ws: Workspace) -> None:
    notes = ("# Quill 4.1 release notes\n\n*March 1, 2025*\n\n- Drop support for Python 3.8.\n"
             "- Drop support for Python 3.9.\n\nThe test suite runs on Python 3.12 in CI.\n")
    claims = _quill(ws, {"releases/4.1.md": notes}, drop=("faq/install.md",))
    assert claims["Minimum Python version (quill)"].startswith("Current: **Python 3.10**"), claims


def test_a_series_that_skips_numbers_gives_no_next_version() -> None:
    """Even releases only (16, 18, 20), a next major version (4.2 then 5.0): what comes after a
    dropped version cannot be told, and the claim stays "above" it."""
    from wikimem.timelines import successor

    assert successor((3, 9), [(3, 6), (3, 7), (3, 15)]) == (3, 10)  # one by one, and past 3.10
    assert successor((3, 10), [(3, 11)]) == (3, 11)  # named
    assert successor((16,), [(14,), (16,), (18,), (20,)]) is None
    assert successor((4, 2), [(4, 0), (4, 1), (5, 0)]) is None
    assert successor((3, 9), [(3, 6), (3, 7)]) is None  # nothing named past the drop
    assert successor((3, 9), [(3, 9, 1), (3, 10, 2)]) is None  # patch releases are another series


def test_the_names_a_release_removed_renamed_or_restored() -> None:
    from wikimem.facts import removed_names

    assert removed_names("Remove `isoformat`, `to_iso_time` and `to_iso_datetime` from `acme.utils` (#2766).") == [
        ("to_iso_time", "removed"), ("to_iso_datetime", "removed")]  # a plain word is too common to follow
    assert removed_names("The `ACME_ENV` environment variable, `ENV` config key, and `app.env` property are removed.") \
        == [("ACME_ENV", "removed"), ("app.env", "removed")]
    assert removed_names("*Backwards-incompatible*: Rename ``pass_many`` parameter to ``pass_all`` (#1369).".replace(
        "``", "`")) == [("pass_many", "removed")]
    assert removed_names("Remove `on_event()` decorator from `Acme` and `Router`.") == [("on_event", "removed")]
    assert removed_names("Restore previously removed `Response.getheader()`.") == [("Response.getheader", "restored")]
    # a signature, what a name belongs to, a plan: nothing named is gone; a deprecation is one
    assert removed_names("Remove deprecated `render(name, context)` signature from `Templates`.") == []
    assert removed_names("Remove `Schema`'s `context_vars` attribute.") == [("context_vars", "removed")]
    assert removed_names("`old_hook` is deprecated and will be removed in 3.0.") == [("old_hook", "deprecated")]
    assert removed_names("Deprecated `BasicAuth` and the `auth` / `proxy_auth` parameters.") == [
        ("BasicAuth", "deprecated"), ("proxy_auth", "deprecated")]
    assert removed_names("`old_hook` will be removed in 3.0.") == []
    assert removed_names("`old_hook` is no longer deprecated.") == [("old_hook", "undeprecated")]
    # a deprecation taken back, said either way; what it was (", which were ...") names nothing
    assert removed_names("Undeprecate ``acme_dot`` now that dot is maintained again (#7204).") == [
        ("acme_dot", "undeprecated")]
    assert removed_names("`.LoopTestCase` and `.HTTPTestCase`, which were deprecated in Acme 6.2, are no longer "
                         "deprecated.") == [("LoopTestCase", "undeprecated"), ("HTTPTestCase", "undeprecated")]
    assert removed_names("The *cmp* argument to `acme.s()` has been **undeprecated**") == []
    assert removed_names("The `schedule()` method is deprecated, use `crawl()` instead.") == [("schedule", "deprecated")]
    # what is deprecated is not the names the sentence mentions: "except `X`", "strings in options like `X`"
    assert removed_names("Everything in `fixers`, except `ProxyFix`, is deprecated.") == []
    assert removed_names("Using strings for attribute names in loader options like `selectinload` is deprecated.") == []
    assert removed_names("Drop support for Python 3.7.") == []
    # what is deprecated ends before what replaces it or where it lives; a form of a name is no name
    assert removed_names("Deprecate `json_module` option in favor of `render_module`.") == [("json_module", "deprecated")]
    assert removed_names("Deprecated `ssl_version`, `ssl_ctx` and `ssl_opts` in favor of `ssl_minimum_version`.") == [
        ("ssl_version", "deprecated"), ("ssl_ctx", "deprecated"), ("ssl_opts", "deprecated")]
    assert removed_names("Deprecated the `strict_mode` parameter of `Pool.connection_from_url()`.") == [
        ("strict_mode", "deprecated")]
    assert removed_names("Deprecated `project.license` as a TOML table in `pyproject.toml`.") == []
    # ... nor one use of a name, or what it returns
    assert removed_names("Deprecate ``walk_path`` in case of all_pairs to change return value in v3.3.") == []
    assert removed_names("Deprecate walk_path functions to have consistent return values in v3.3 (#6567)") == []
    # Sphinx's note: "Deprecated since version 3.1:", then what it says is deprecated, if it says
    assert removed_names("Deprecated since version 3.14: The `proxy_auth` parameter is deprecated and will be removed "
                         "in 4.0.") == [("proxy_auth", "deprecated")]
    assert removed_names("Deprecated since version 3.14: Use `encode_basic_auth()` with `headers`.") == []

    # an item tagged with the part it is about, a kind of name after where it is used
    assert removed_names("[watchmedo] Removed the `--trace` CLI argument from the `watchmedo log` command.") == [
        ("--trace", "removed")]
    # a dependency that went: the package, however plain its name, when written as code
    assert removed_names("Removed the dependency on ``six``".replace("``", "`")) == [("six", "removed")]
    assert removed_names("Dropped the runtime dependency on `setuptools` and `pkg_resources`.") == [
        ("setuptools", "removed"), ("pkg_resources", "removed")]
    assert removed_names("Removed the dependency on six.") == []
    # what went is not the name: a restriction on it, a use of it, or a name the reason mentions
    # names without marks where nothing is marked, a plain word said to be a name, a string's name,
    # a name "dropped", a title that is the name and the word
    assert removed_names("Removed easy_setup and pkg_index modules.") == [("easy_setup", "removed")]
    assert removed_names("Removed support for the --dry-run parameter to setup.py.") == [("--dry-run", "removed")]
    assert removed_names("Removed the setup.py file.") == []
    assert removed_names("The `ordered` class Meta option is removed.") == [("ordered", "removed")]
    assert removed_names("Remove `Schema`'s `context` attribute.") == [("context", "removed")]
    assert removed_names('Remove `"acme.plugins"` entry-points.') == [("acme.plugins", "removed")]
    assert removed_names("The `gevent` worker class has been dropped.") == [("gevent", "removed")]
    assert removed_names("Python 3.7 support has been dropped.") == []
    assert removed_names("`acme.util.etree` deprecated") == [("acme.util.etree", "deprecated")]
    assert removed_names("The `send_chunk` adjustment now defaults to `1` and is deprecated pending removal in a "
                         "future release.") == [("send_chunk", "deprecated")]
    # "..., which has been removed": the last thing named went, not the others
    assert removed_names("The `Page` and `Site` classes no longer share a base `Renderable` class, which has been "
                         "removed.") == [("Renderable", "removed")]
    # a rename says what kind of name went, and where it was, in code too
    assert removed_names("Renamed the `timeout` argument in `acme.run_task()` to `deadline`.") == [("timeout", "removed")]
    assert removed_names("Renamed the `timeout` argument in `acme.run_task()` to `deadline` (and deprecated the old "
                         "parameter name)") == [("timeout", "deprecated")]
    assert removed_names("Remove `max_parts` restriction from form parsing.") == []
    assert removed_names("Remove usage of `warnings.catch_warnings`.") == []
    assert removed_names("Removed top-level imports to prevent errors when setting `ACME_REACTOR`.") == []


def test_a_drop_scoped_to_a_part_of_the_product_is_not_its_minimum() -> None:
    assert facts_of("Remove TLS 1.3 support in SecureTransport due to the vendor removing support.", "1.25") == []
    assert facts_of("Drop support for Python 3.7 on Windows.", "2.0") == []
    assert [(f.key, f.value, f.change) for f in facts_of("Drop support for Python 3.8.", "2.0")] == [
        (("min", "python", ""), (3, 8), "drop")]


def test_a_release_adding_a_version_states_the_newest_supported() -> None:
    for sentence in ("Support Python 3.15 [#3508].", "Support for Python 3.15.", "Add official Python 3.15 support.",
                     "Python 3.15 support.", "Python 3.15 is now supported. Wheels come later.",
                     "Add syntactic support for Python 3.15 (#5048)", "Test against Python 3.15.",
                     "Added explicit support for Python 3.15.", "#14524: Add official Python 3.15 support.",
                     "[#14524](https://example.org/14524): Add official Python 3.15 support.",
                     "Python 3.15 support. [#813](https://example.org/813)",
                     "Added support for Python 3.15 free-threading builds explicitly."):
        assert [(f.key, f.value) for f in facts_of(sentence, "2.0")] == [(("max", "python", ""), (3, 15))], sentence
    # a drop or a deprecation, an open end, and a feature of a version are not
    for sentence in ("Support for Python 3.8 has been dropped.", "Python 3.7 support is deprecated.",
                     "Add `partitioned` to `delete_cookie()` on Python 3.14 and later.",
                     "Added support for the `zstd` module that is new in Python 3.14.",
                     "Added support for the Python 3.10 `match/case` syntax.",
                     "Python 2.6 support was broken by a test import."):
        assert not [f for f in facts_of(sentence, "2.0") if f.key[0] == "max"], sentence


def test_a_support_table_states_the_oldest_version_it_lists(ws: Workspace) -> None:
    table = ("# Geo libraries\n\n| Program | Description | Required | Supported Versions |\n|---|---|---|---|\n"
             "| GEOS | Geometry engine | Yes | 3.13, 3.12, 3.11, 3.10, 3.9, 3.8 |\n"
             "| PROJ | Projections | Yes | 9.x, 8.x, 7.x |\n")
    notes = "# Quill 4.1 release notes\n\n*March 1, 2025*\n\nSupport for GEOS 3.7 is removed.\n"
    claims = _quill(ws, {"ref/geo.md": table, "releases/4.1.md": notes})
    assert claims["Minimum GEOS version (quill)"].startswith("Current: **GEOS 3.8**"), claims
    text = (ws.wiki / "facts" / "quill-minimum-geos-version.md").read_text(encoding="utf-8")
    assert "up to 3.13" in text and "It replaced GEOS 3.7, dropped in 4.1" in text


def test_a_list_of_supported_versions_states_its_oldest(ws: Workspace) -> None:
    notes = ("# Quill 4.1 release notes\n\n*March 1, 2025*\n\n"
             "Quill 4.1 supports Python 3.10, 3.11, 3.12, 3.13, and 3.14.\n")
    claims = _quill(ws, {"releases/4.1.md": notes}, drop=("faq/install.md",))
    line = claims["Minimum Python version (quill)"]
    assert line.startswith("Current: **Python 3.10**"), line
    assert "3.14" in line  # the newest it lists, said after the value


def test_an_old_or_undated_statement_is_only_the_latest_statement(ws: Workspace) -> None:
    """Quill 4.1 is the newest release; SQLite's minimum was last stated in 2.0 (two majors
    back): the page says "Latest statement (2.0, 2022-03-01)", and so do search and query."""
    from wikimem.query import answer
    from wikimem.search import search_passages

    old = "# Quill 1.0 release notes\n\n*March 1, 2021*\n\nQuill 1.0 requires SQLite 3.20 or later.\n"
    claims = _quill(ws, {"releases/1.0.md": old}, drop=("ref/search.md",))
    assert claims["Minimum SQLite version (quill)"].startswith("Latest statement (2.0, 2022-03-01): **SQLite 3.30**")
    found = search_passages(ws, "what is the current minimum SQLite version", limit=3)
    assert found[0].hit.kind == "fact" and found[0].hit.snippet.startswith("Latest statement (2.0, 2022-03-01)")
    said = answer(ws, load_settings(ws.root, environ={}), "what is the current minimum SQLite version").text
    assert "Latest statement (2.0, 2022-03-01)" in said and "Current: **SQLite" not in said


def test_a_statement_years_older_than_the_newest_release_is_only_the_latest_statement(ws: Workspace) -> None:
    """A project whose majors come a decade apart: 1.5 (2014) said "requires WebOb 1.3 or newer",
    and 2.1 (2026) says nothing of it. One major behind, but twelve years: the latest statement."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite serves web apps.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "kite/CHANGES.rst", "Changes\n=======\n\n2.1 (2026-03-01)\n----------------\n\n- Fix a crash.\n\n"
                                  "1.5 (2014-04-08)\n----------------\n\n- Kite now requires WebOb 1.3 or newer.\n\n"
                                  "1.0 (2011-01-30)\n----------------\n\n- Kite now requires WebOb 1.0 or newer.\n")
    claims = _compiled_claims(ws)
    assert claims["Minimum WebOb version (kite)"].startswith("Latest statement (1.5, 2014-04-08)"), claims


def test_an_undated_changelog_that_goes_up_to_the_newest_release_states_the_current_value(ws: Workspace) -> None:
    """A changelog with no dates that records every release to the newest (5.1.0): what it said
    last of the minimum (5.0.0) still holds. An undated release page of its own, which the
    newest release does not follow, stays the latest statement."""
    write(ws, "kite/NEWS.rst", "v5.1.0\n======\n\n- Fix a crash.\n\nv5.0.0\n======\n\n- Require Python 3.10 or later.\n\n"
                               "v4.0.0\n======\n\n- Require Python 3.9 or later.\n")
    write(ws, "kite/index.rst", "Kite\n====\n\nKite builds wheels.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "gizmo/index.rst", "Gizmo\n=====\n\nGizmo builds sites.\n")
    write(ws, "gizmo/news/5.0.rst", "Gizmo 5.0 release notes\n=======================\n\n- Require Python 3.10 or later.\n")
    write(ws, "gizmo/news/4.0.rst", "Gizmo 4.0 release notes\n=======================\n\n- Require Python 3.9 or later.\n")
    write(ws, "gizmo/news/5.1.rst", "Gizmo 5.1 release notes\n=======================\n\n- Fix a crash.\n")
    claims = _compiled_claims(ws)
    assert claims["Minimum Python version (kite)"].startswith("Current: **Python 3.10**"), claims
    assert claims["Minimum Python version (gizmo)"].startswith("Latest statement (5.0"), claims


def test_the_reference_page_and_the_newest_release_disagree(ws: Workspace) -> None:
    """The newest release (4.1, dated) raises the minimum the install page still gives: 4.1's
    value is current, the page names the other statement, and lint reports both sentences."""
    from wikimem.lint import run_lint

    notes = ("# Quill 4.1 release notes\n\n*March 1, 2025*\n\n"
             "The minimum supported version of PostgreSQL is increased from 13 to 14.\n")
    install = "# Installing\n\nQuill supports Python 3.10 and newer.\n\nQuill supports PostgreSQL 13 and higher.\n"
    claims = _quill(ws, {"releases/4.1.md": notes, "faq/install.md": install})
    assert claims["Minimum PostgreSQL version (quill)"].startswith("Current: **14 (was 13)**"), claims
    page = (ws.wiki / "facts" / "quill-minimum-postgresql-version.md").read_text(encoding="utf-8")
    assert "Stated otherwise" in page and "PostgreSQL 13 and higher" in page
    report = run_lint(ws, load_settings(ws.root, environ={}), ["stale-note"], write=False)
    (found,) = [f for f in report.findings if "PostgreSQL" in f.message]
    assert found.evidence["note"]["sentence"] == "Quill supports PostgreSQL 13 and higher."
    assert found.evidence["current"]["path"] == "raw/releases/4.1.md"


def test_reference_pages_that_disagree_and_an_old_release_make_no_current_value(ws: Workspace) -> None:
    """The install page says 3.10 and newer, the requirements page 3.12 or newer, and the last
    release to state a minimum is a major behind (3.0: Python 3.8): neither page is shown to be
    current and 3.8 is history both have moved past, so the timeline states both values and
    that the documentation disagrees; lint reports the two pages, and a note below both."""
    from wikimem.lint import run_lint

    newest = "# Quill 4.1 release notes\n\n*March 1, 2025*\n\nBuilds are faster.\n"
    claims = _quill(ws, {"faq/requirements.md": "# Requirements\n\nQuill requires Python 3.12 or newer.\n",
                         "releases/4.1.md": newest}, drop=("releases/4.0.md",))
    line = claims["Minimum Python version (quill)"]
    assert line.startswith("Current: **Python 3.10 or Python 3.12**, the current documentation disagrees"), line
    page = (ws.wiki / "facts" / "quill-minimum-python-version.md").read_text(encoding="utf-8")
    assert "Stated otherwise (current documentation): **Python 3.12**" in page and "It replaced Python 3.12" not in page
    write(ws, "notes/ops.md", "# Ops notes\n\nQuill supports Python 3.9 and newer, so the old box stays.\n\n"
                              "Quill supports Python 3.10 and newer.\n")
    compile_workspace(ws, load_settings(ws.root, environ={}))
    report = run_lint(ws, load_settings(ws.root, environ={}), write=False)
    assert [f for f in report.findings if f.rule == "contradicted" and "Python" in f.message], report.findings
    stale = [f for f in report.findings if f.rule == "stale-note" and "Python" in f.message]
    assert [f.evidence["note"]["sentence"] for f in stale] == ["Quill supports Python 3.9 and newer, so the old box stays."]


def test_bad_changelogs_and_tables_give_no_false_current_and_no_crash(ws: Workspace) -> None:
    """No dates, a date in the future, one version twice, versions that do not parse, a table of
    a thousand plugin rows, a note about a product the wiki has no timeline of."""
    from wikimem.lint import run_lint

    write(ws, "nodates/CHANGES.md", "# Changes\n\n## 2.0\n\n- Requires Python 3.9 or later.\n\n"
                                    "## 1.0\n\n- Requires Python 3.7 or later.\n")
    write(ws, "odd/CHANGES.md", (
        "# Changelog\n\n"
        "## 2024.1rc1 (2024-01-05)\n\n- Requires Python 3.9 or later.\n\n"
        "## 2024.1 (2024-02-01)\n\n- Requires Python 3.10 or later.\n\n"
        "## 3.2.x (2023-06-01)\n\n- Requires Python 3.8 or later.\n\n"
        "## v1 (2020-01-01)\n\n- Requires Python 3.6 or later.\n\n"
        "## 2099.1 (2099-01-01)\n\n- Requires Python 3.14 or later.\n\n"
        "## 2024.1 (2024-02-01)\n\n- Requires Python 3.11 or later.\n"))
    rows = "".join(f"| quill-plugin-{n} | does thing {n} | Jan 0{n % 9 + 1}, 2026 | quill>=4.{n % 7}; Python>=3.{n % 5 + 8} |\n"
                   for n in range(1000))
    write(ws, "quill/plugins.md", "# Plugin list\n\n| name | summary | last release | requires |\n|---|---|---|---|\n" + rows)
    for rel in ("index.md", "install.md", "themes.md", "hosting.md"):
        write(ws, f"quill/{rel}", f"# Quill {rel[:-3]}\n\nQuill builds static sites.\n")
    write(ws, "notes.md", "# Our notes\n\n- Redis 7.2 is what we run; Redis requires 6.2 or later for streams.\n")
    claims = _compiled_claims(ws)
    # no dates: the newest release's statement, but only as the latest statement
    nodates = [line for title, line in claims.items() if title.endswith("(nodates/changes)")]
    assert nodates == [] or all(line.startswith(("Latest statement (2.0", "Current: **Python 3.9")) for line in nodates)
    # the release dated in the future is no evidence of the current value; 2024.1 is newer than its rc
    (odd,) = [line for title, line in claims.items() if "(odd" in title]
    assert "3.14" not in odd.split(":", 2)[1] and ("Python 3.1" in odd and "2024.1" in odd), odd
    # a thousand plugin rows: each is the plugin's requirement, no fact of Quill's
    assert not [t for t in claims if t.endswith("(quill)")], sorted(claims)
    findings = run_lint(ws, load_settings(ws.root, environ={}), ["stale-note", "contradicted"], write=False).findings
    assert not [f for f in findings if "raw/notes.md" in f.paths or "plugins.md" in " ".join(f.paths)]


def test_a_page_of_notes_titled_by_its_release_alone_is_that_releases(ws: Workspace) -> None:
    """One page per release, titled "13.0.0" and "12.0.0" alone, each dropping a Python under a
    heading "Python 3.10": the drop is 13.0.0's (not a release "3.10"), and the minimum is the
    version after it."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite reads images.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite on Python 3.11 or 3.12.\n")
    for new, old in (("13.0.0", "3.10"), ("12.0.0", "3.9")):
        write(ws, f"kite/releasenotes/{new}.rst",
              f"{new}\n------\n\nBackwards incompatible changes\n==============================\n\n"
              f"Python {old}\n^^^^^^^^^^\n\nKite has dropped support for Python {old},\n"
              "which reached end-of-life.\n\nOther changes\n=============\n\nFaster reads.\n")
    claims = _compiled_claims(ws)
    line = claims["Minimum Python version (kite)"]
    assert line.startswith("Current: **Python 3.11**, 13.0.0"), line


def test_a_front_page_that_gives_its_short_name_names_the_product(ws: Workspace) -> None:
    """A front page titled with the long name ("Advanced Python Toolkit"), whose opening gives the
    short one in brackets: the timelines are the short name's, not "advanced"'s."""
    write(ws, "README.rst", ".. image:: https://example.org/badge.svg\n\n"
                            "Advanced Python Toolkit (APToolkit) is a Python library that runs tasks later.\n")
    write(ws, "docs/index.rst", "Advanced Python Toolkit\n=======================\n\n.. include:: ../README.rst\n")
    write(ws, "docs/guide.rst", "User guide\n==========\n\nRun it.\n")
    write(ws, "docs/extending.rst", "Extending APToolkit\n===================\n\nWrite plugins.\n")
    write(ws, "docs/history.rst", "Version history\n===============\n\n**3.11.0**\n\n- Dropped support for Python 3.6 and 3.7\n\n"
                                  "**3.10.0**\n\n- Dropped support for Python versions older than 3.6\n")
    claims = _compiled_claims(ws)
    assert any(t.startswith("Minimum Python version (aptoolkit)") for t in claims), sorted(claims)


def test_the_install_page_names_a_newer_supported_version_than_an_older_release_did(ws: Workspace) -> None:
    """The 3.4 notes (dated) say "Supports Python 3.10, 3.11, 3.12, and 3.13"; the newest
    release, 3.6, says nothing of Python; the install page requires "3.11, 3.12, 3.13, or 3.14":
    the newest supported is the page's 3.14. Where the newest release's own notes name a newer
    one than the page, the notes hold."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite draws graphs.\n")
    write(ws, "kite/install.rst", "Install\n=======\n\nKite requires Python 3.11, 3.12, 3.13, or 3.14.\n")
    write(ws, "kite/release/release_3.4.rst", "Kite 3.4\n========\n\nRelease date: 10 October 2024\n\n"
                                              "Supports Python 3.10, 3.11, 3.12, and 3.13.\n")
    write(ws, "kite/release/release_3.6.rst", "Kite 3.6\n========\n\nFaster layouts.\n")
    line = _compiled_claims(ws)["Newest Python version supported (kite)"]
    assert line.startswith("Current: **Python 3.14**"), line
    write(ws, "kite/release/release_3.6.rst", "Kite 3.6\n========\n\nRelease date: 1 December 2025\n\n"
                                              "Supports Python 3.11, 3.12, 3.13, 3.14, and 3.15.\n")
    line = _compiled_claims(ws)["Newest Python version supported (kite)"]
    assert line.startswith("Current: **Python 3.15**"), line


def test_the_products_own_release_saying_it_now_supports_a_version_adds_the_newest(ws: Workspace) -> None:
    """Trio's history says "Trio now supports Python 3.10." (0.19.0), "Trio now supports Python
    3.11." (0.21.0) and "Support Python 3.15, as of beta 4." (0.34.0): the first two named the
    product, and were read as a support a note might compare with, not as the newest supported;
    one statement made no timeline. A release that says it "still" supports a version, or is the
    last to support one (Babel's "the last version of Babel to support Python 3.7"), adds none."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite runs tasks.\n")
    write(ws, "kite/guide.rst", "Guide\n=====\n\nRun Kite.\n")
    write(ws, "kite/history.rst", "Release history\n===============\n\n"
          "kite 0.34.0 (2026-08-10)\n------------------------\n\n- Support Python 3.15, as of beta 4.\n"
          "- Kite still supports Python 3.8 on old hosts.\n"
          "- This version, Kite 0.34, is the last version of Kite to support Python 3.9.\n\n"
          "kite 0.21.0 (2022-06-07)\n------------------------\n\n- Kite now supports Python 3.11.\n\n"
          "kite 0.19.0 (2021-06-15)\n------------------------\n\n- Kite now supports Python 3.10.\n")
    claims = _compiled_claims(ws)
    line = claims["Newest Python version supported (kite)"]
    assert line.startswith("Current: **Python 3.15**") and "It replaced Python 3.11 (0.21.0" in line, line
    page = (ws.wiki / "facts" / "kite-newest-python-version-supported.md").read_text()
    assert "| Python 3.10 | 0.19.0" in page and "3.8" not in page and "3.9" not in page


def test_a_setting_named_as_code_and_in_words_is_one_timeline(ws: Workspace) -> None:
    """3.0 "changed the default language level to `3str`" (in words), 3.1 says "`language_level=3`
    is now the default" (the setting as code, with its value): one timeline, current 3."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite compiles modules.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "kite/CHANGES.rst", "Kite Changelog\n==============\n\n3.1.0 (2025-05-08)\n==================\n\n"
                                  "* ``language_level=3`` is now the default.\n\n3.0.0 (2023-07-17)\n==================\n\n"
                                  "* The default language level was changed to ``3str``, i.e. Python 3 semantics.\n")
    claims = _compiled_claims(ws)
    (title,) = [t for t in claims if "language" in t.lower()]
    assert claims[title].startswith("Current: **3**, 3.1.0") and "It replaced 3str" in claims[title], claims


def test_a_version_named_after_a_verb_shows_the_version_after_a_drop(ws: Workspace) -> None:
    """7.0 "Support Docutils 0.20", 7.4 "Drop Docutils 0.18.1 and Docutils 0.19 support": the
    minimum is 0.20, the version the notes name after the one dropped (not "above 0.19")."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite builds documentation.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "kite/changes/7.4.rst", "Kite 7.4\n========\n\nRelease 7.4.0 (released Jul 15, 2024)\n"
                                      "=====================================\n\n* Drop Docutils 0.18.1 and Docutils 0.19 support.\n")
    write(ws, "kite/changes/7.0.rst", "Kite 7.0\n========\n\nRelease 7.0.0 (released Apr 29, 2023)\n"
                                      "=====================================\n\n* Support Docutils 0.20.\n")
    line = _compiled_claims(ws)["Minimum Docutils version (kite)"]
    assert "**Docutils 0.20**" in line, line


def test_two_minimums_in_the_newest_release_and_no_reference_page_the_higher_holds(ws: Workspace) -> None:
    """The newest release's notes give a dependency's minimum twice, "4.3.0+" under its heading
    and "updated to 4.3.1" in a list, and no reference page states it: only 4.3.1 meets both."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite runs tasks.\n")
    write(ws, "kite/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "kite/whatsnew-5.7.rst", "What's new in Kite 5.7\n======================\n\n"
                                       "Billiard\n--------\n\nMinimum required version is now 4.3.0+.\n\n"
                                       "Dependencies\n------------\n\n"
                                       "* The minimum Billiard dependency is updated to ``4.3.1``.\n")
    write(ws, "kite/whatsnew-5.6.rst", "What's new in Kite 5.6\n======================\n\n"
                                       "Billiard\n--------\n\nMinimum required version is now 4.2.4.\n")
    claims = _compiled_claims(ws)
    line = next(line for title, line in claims.items() if title.startswith("Minimum Billiard version"))
    assert "4.3.1" in line.split("**")[1] and "4.3.0" not in line.split("**")[1], line


def test_a_list_a_support_sentence_introduces_states_the_oldest_version(ws: Workspace) -> None:
    """A reference page's "The current version of Kite works on:" followed by a list of
    interpreter versions states the minimum: the oldest listed, not "above" what a release
    note dropped."""
    write(ws, "kite/install.md", "# Installation\n\n## Compatibility\n\nThe current version of Kite works on:\n\n"
                                 "- Windows, Linux and macOS.\n- CPython 3.10, 3.11, 3.12 and latest PyPy3.\n")
    write(ws, "kite/index.md", "# Kite\n\nKite flies.\n")
    write(ws, "kite/NEWS.md", "# Changelog\n\n## 4.0 (2025-05-01)\n\n- Drop support for Python 3.9.\n\n"
                              "## 3.0 (2024-05-01)\n\n- Drop support for Python 3.8.\n")
    (line,) = [line for title, line in _compiled_claims(ws).items() if "python" in title.lower()]
    assert line.startswith("Current:") and "3.10" in line.split("**")[1], line


def test_a_list_of_one_version_an_item_is_read_as_one_list(ws: Workspace) -> None:
    """ "The supported Python versions are:" then "- CPython 3.11" ... "- CPython 3.15": the oldest
    listed is the minimum, the newest the newest supported. The newest release's overview says
    "3.10 to 3.14" too; the README beside the docs ("runs on: - Python (3.11+)") says which holds."""
    write(ws, "README.rst", "Donations\n=========\n\nGive.\n\nWhat do I need?\n===============\n\n"
                            "Kite version 5.7.x runs on:\n\n- Python (3.11+)\n- PyPy3.11+ (v8+)\n")
    write(ws, "docs/index.rst", "Kite\n====\n\nKite runs tasks.\n")
    write(ws, "docs/guide.rst", "Kite guide\n==========\n\nRun Kite.\n")
    write(ws, "docs/history/whatsnew-5.7.rst", "What's new in Kite 5.7\n======================\n\n"
                                               "This version is officially supported on CPython 3.10, 3.11, 3.12, 3.13 "
                                               "and 3.14.\n\nSupported Python Versions\n-------------------------\n\n"
                                               "The supported Python versions are:\n\n- CPython 3.11\n- CPython 3.12\n"
                                               "- CPython 3.13\n- CPython 3.14\n- CPython 3.15\n- PyPy3.11 (``pypy3``)\n")
    write(ws, "docs/history/whatsnew-5.6.rst", "What's new in Kite 5.6\n======================\n\n"
                                               "This version is officially supported on CPython 3.9, 3.10, 3.11, 3.12 "
                                               "and 3.13.\n")
    claims = _compiled_claims(ws)
    assert claims["Minimum Python version (kite)"].startswith("Current: **CPython 3.11**"), claims
    assert claims["Newest Python version supported (kite)"].startswith("Current: **CPython 3.15**"), claims


def test_the_newest_releases_minimum_refines_a_pages_coarser_one(ws: Workspace) -> None:
    """The front page says "requires Python 3"; the newest release dropped 3.9 and 3.10, and an
    earlier one names 3.11: the current minimum is 3.11, which the page's "3" allows."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite is a web server.\n\n**Prerequisites**: Kite requires Python 3.\n")
    write(ws, "kite/guide.rst", "Guide\n=====\n\nRun Kite behind a proxy.\n")
    write(ws, "kite/releases/v2.0.0.rst", "What's new in Kite 2.0.0\n========================\n\n"
                                          "Oct 21, 2026\n------------\n\n"
                                          "- Python 3.9 and 3.10 are no longer supported; 3.11 is the minimum.\n"
                                          "- Kite now supports Python 3.14.\n")
    write(ws, "kite/releases/v1.0.0.rst", "What's new in Kite 1.0.0\n========================\n\n"
                                          "May 1, 2025\n-----------\n\n- The minimum supported Python version is 3.9.\n"
                                          "- Python 3.11 and 3.12 are now supported.\n")
    (line,) = [line for title, line in _compiled_claims(ws).items() if title.startswith("Minimum Python")]
    assert line.startswith("Current: **Python 3.11**"), line


def test_a_front_page_titled_by_a_slogan_names_its_product_in_its_opening(ws: Workspace) -> None:
    """A README whose title is a slogan ("The Fearless Widget Builder") says what it documents
    in its opening sentence ("*Gizmo* is the fearless ..."): the set's timelines are Gizmo's, and
    its changelog's "Gizmo no longer supports ..." is the product's own drop."""
    write(ws, "README.md", "# The Fearless Widget Builder\n\n> Any widget you like.\n\n"
                           "_Gizmo_ is the fearless widget builder. It requires Python 3.9+ to run.\n")
    write(ws, "docs/getting_started.md", "# Getting started\n\nInstall it with pip. It requires Python 3.9+ to run.\n")
    write(ws, "docs/usage.md", "# Usage and configuration\n\nRun the builder on a folder of widget code.\n")
    write(ws, "CHANGES.md", "# Change Log\n\n## 25.1.0\n\n### Stable style\n\n- Fix a crash.\n\n"
                            "## 24.10.0\n\n### Highlights\n\n- Gizmo no longer supports running with Python 3.8 (#4452)\n\n"
                            "## 22.1.0\n\n- Remove Python 2 support (#2740)\n")
    (title,) = [title for title in _compiled_claims(ws) if "python" in title.lower()]
    assert title == "Minimum Python version (gizmo)", title
    page = next((ws.wiki / "facts").glob("*python*.md")).read_text(encoding="utf-8")
    assert "It replaced Python 3.8, dropped in 24.10.0" in page, page


def test_changes_not_released_yet_state_plans_not_the_current_value(ws: Workspace) -> None:
    """Keep a Changelog's "[Unreleased]" and a release dated in the future are not out: what
    they say is a plan, and the newest release that is out states the current value."""
    write(ws, "kite/CHANGELOG.md", (
        "# Changelog\n\n"
        "## [Unreleased]\n\n### Changed\n\n- Requires Python 3.13 or later.\n\n"
        "## [2.0.0] - 2024-05-01\n\n### Changed\n\n- Requires Python 3.10 or later.\n\n"
        "## [1.0.0] - 2022-03-01\n\n### Added\n\n- Requires Python 3.8 or later.\n"))
    (line,) = [line for title, line in _compiled_claims(ws).items() if "python" in title.lower()]
    assert "3.10" in line.split("**")[1] and "3.13" not in line.split("**")[1], line


@pytest.mark.parametrize(("sentence", "facts"), [
    # a versioned name dropped is its support dropped; "anymore" says it too
    ("Python 3.7 has been dropped.", [(("min", "python", ""), (3, 7), "drop")]),
    ("Python 3.6 is not supported anymore.", [(("min", "python", ""), (3, 6), "drop")]),
    ("Python 3.3 and 2.6 aren't supported anymore.", [(("min", "python", ""), (3, 3), "drop")]),
    # two names dropped in one breath: each its own
    ("Support for Toolkit 3.1 and Geolib 1.6 has been dropped.",
     [(("min", "toolkit", ""), (3, 1), "drop"), (("min", "geolib", ""), (1, 6), "drop")]),
    # "to drop" is an intention, not an outcome
    ("We are taking longer than others to drop Python 2.7 support.", []),
    # the minimum said as "the minimum ... is now", or after the value; the EOL version is no minimum
    ("The minimum Python version is now 3.10, as Python 3.9 is EOL.", [(("min", "python", ""), (3, 10), "")]),
    ("Toolkit 2.0.0 is now the minimum required version.", [(("min", "toolkit", ""), (2, 0, 0), "")]),
    ("The oldest PostgreSQL version the framework supports is 13.", [(("min", "postgresql", ""), (13,), "")]),
    # who needs it is the product said before the verb, or after the value
    ("Acme 9 works on Python 3.10 and newer.", [(("min", "python", "acme"), (3, 10), "")]),
    ("pluggy 1.5 or newer is all acme needs.", [(("min", "pluggy", "acme"), (1, 5), "")]),
    ("toolkit 3.1.8+ or toolkit2 2.8.4+ is required.",
     [(("min", "toolkit", "on notes"), (3, 1, 8), ""), (("min", "toolkit2", "on notes"), (2, 8, 4), "")]),
    ("Toolkit version 1.4 or greater is required for use with Acme 1.15.0.", [(("min", "toolkit", "on notes"), (1, 4), "")]),
    # a bound is a requirement only where the sentence requires it; a condition is none
    ("Fixed warnings when using attrs>=19.2.", []),
    ("Added post-mortem debugging on Python>=3.12.", []),
    ("Note that when targeting acme >= 9.0, it's nicer to use strict mode.", []),
    ("Also means we depend on py>=1.4.19 now.", [(("min", "py", ""), (1, 4, 19), "")]),
    # a feature's requirement, and a requirement set apart in parentheses, are theirs
    ("This option requires Python>=3.9 or an extra package.", [(("min", "python", "option"), (3, 9), "")]),
    ("Make the page wait for the header (requires Selenium > 2.13).", [(("min", "selenium", "wait header"), (2, 13), "")]),
])
def test_more_ways_a_statement_is_read_and_whose_it_is(sentence: str, facts: list) -> None:
    assert [(f.key, f.value, f.change) for f in facts_of(sentence)] == facts


@pytest.mark.parametrize(("sentence", "low", "high"), [
    ("SQLAlchemy 1.4.x to 2.1.x is now supported in Acme 5.7.", (1, 4), (2, 1)),
    ("Acme now supports SQLAlchemy 1.4 to 2.1.", (1, 4), (2, 1)),
    ("Acme supports Python 3.9 through 3.14, including free-threading.", (3, 9), (3, 14)),
])
def test_a_closed_range_supported_states_the_oldest_and_the_newest(sentence, low, high) -> None:
    """ "X 1.4 to 2.1 is supported", "supports X 1.4 to 2.1": the range's ends are the minimum and
    the newest supported; "are not supported" states neither."""
    facts = {f.key[0]: f.value for f in facts_of(sentence, release="5.7") if f.key[0] in ("min", "max")}
    assert facts == {"min": low, "max": high}, facts
    assert facts_of("SQLAlchemy 1.4 to 2.1 are not supported.", release="5.7") == []


def test_a_release_states_the_version_it_bundles() -> None:
    """ "Upgrade to CLDR 45" in a release's notes: the version of what the release bundles, a
    timeline of its own ("CLDR version"); a reference page's "uses" says nothing of a release."""
    from wikimem.facts import Profile, label

    def read(text: str, kind: str) -> list:
        return extract(Statements("raw/x.md", "Changes", None, "", None, [(text, 1, "2.0", None)], [], Profile(kind=kind)))

    (fact,) = read("Core: Upgrade to CLDR 45 by a contributor.", "release")
    assert (fact.key, fact.value) == (("value", "cldr", ""), (45,)) and label(fact.key, fact) == "CLDR version"
    # an item's area label: the core is the product itself; another area keeps its own
    (fact,) = read("Core: Use CLDR 47 by a contributor in 1210", "release")
    assert (fact.key, fact.value) == (("value", "cldr", ""), (47,))
    (fact,) = read("Docs: Use Sphinx 7 for the manual", "release")
    assert fact.key == ("value", "sphinx", "docs")
    (fact,) = read("The jQuery library is upgraded to jQuery 3.7.1.", "release")
    assert fact.key == ("value", "jquery", "")
    # a vendored dependency, named in lower case or as code, in each way a changelog says it
    for text in ("Updated vendored packaging version to 26.3, which adds support for abi3t.",
                 "Updated vendored packaging to version 26.3.",
                 "Updated vendored `packaging` version from 24.2 to 26.3 -- by a contributor",
                 "Bump vendored version of `packaging` to 26.3"):
        (fact,) = read(text, "release")
        assert (fact.key, fact.value) == (("value", "packaging", ""), (26, 3)), text
    assert read("Updated the packaging docs to version 2 of the guide.", "release") == []
    assert read("The examples use Django 4.2 throughout.", "reference") == []


def test_a_requirement_in_an_api_members_description_is_the_members() -> None:
    """ "Requires Toolkit 3.12." under `.. method:: Shape.make_valid()` is that method's need; in a
    package's section of release notes ("crypto/tls") it still speaks for the product."""
    from wikimem.facts import Profile

    def read(subject: str, kind: str = "reference") -> list:
        return [f.key for f in extract(Statements("raw/x.md", "Shapes API", None, "", None,
                                                  [("Requires Toolkit 3.12.", 1, None, None, "", "para", subject)],
                                                  [], Profile(kind=kind)))]

    assert read("Shape.make_valid()") == [("min", "toolkit", "shape.make_valid")]
    # a method described inside its class's description, named alone, is code all the same
    assert read("register_window_hook") == [("min", "toolkit", "register_window_hook")]
    assert read("ShapeReader") == [("min", "toolkit", "shapereader")]
    assert read("Ownership") == [("min", "toolkit", "aside")]
    assert read("crypto/tls", "release") == [("min", "toolkit", "")]
    # alone in a reference page, "Requires Toolkit 3.12." is the need of what the text describes
    assert read("") == [("min", "toolkit", "aside")]


def test_the_product_a_documentation_set_documents() -> None:
    """The names its releases carry, else its front page's; raw/'s front page speaks for the
    folders below it; a changelog at the top joins the one large set beside it; a small folder
    of notes is its own, never the product's evidence."""
    from wikimem.facts import Profile, title_words
    from wikimem.products import series_of

    def page(title: str, kind: str = "reference", names: tuple = ()) -> Profile:
        return Profile(title, kind, names, title_words(title))

    one = {
        "raw/index.md": page("Welcome to Quill's documentation!"),
        **{f"raw/ref/{n}.md": page(t) for n, t in (("index", "API reference"), ("a", "Settings"), ("b", "Commands"),
                                                    ("c", "Themes"), ("d", "Hosting"))},
        "raw/releases/4.1.md": page("Quill 4.1 release notes", "release", (("quill", 1),)),
        "raw/notes/runbook.md": page("Our runbook (Quill)"),
    }
    series = series_of(one)
    assert {series[p].name for p in one if not p.startswith("raw/notes/")} == {"quill"}
    assert series["raw/ref/a.md"].product == "quill"
    assert series["raw/notes/runbook.md"].name == "notes" and not series["raw/notes/runbook.md"].product
    beside = {
        **{f"raw/html/{n}.md": page(t) for n, t in (("index", "Quill"), ("a", "Quill install"), ("b", "Quill build"),
                                                     ("c", "Quill serve"), ("d", "Quill themes"), ("e", "Hosting"))},
        **{f"raw/man/{n}.rst": page(t) for n, t in (("index", "Man"), ("a", "quill-build"), ("b", "quill-serve"))},
        "raw/NEWS.rst": page("26.3 (2026-11-02)", "release"),
        "raw/todo.md": page("Things to do"),
    }
    series = series_of(beside)
    assert series["raw/html/a.md"].name == "quill" and series["raw/NEWS.rst"].name == "quill"
    assert series["raw/todo.md"].name == ""  # a loose note at the top is no changelog: no one's
    # a small folder of two products' changelogs, each titled for its product: two series
    histories = {
        "raw/index.md": page("Quill"),
        "raw/history/quill.md": page("Quill history", "release"),
        "raw/history/quillbuild.md": page("Quillbuild history", "release"),
    }
    series = series_of(histories)
    assert series["raw/history/quill.md"].name == "quill" and series["raw/history/quillbuild.md"].name == "quillbuild"
    assert series["raw/history/quillbuild.md"].product == "quillbuild"
    # a README whose only heading no other title uses ("Code of Conduct", under its badges): the
    # front page a level down names what the set's titles share
    badges = {
        "raw/README.rst": page("Code of Conduct"),
        "raw/docs/index.rst": page("Building and Shipping Packages with Quill"),
        **{f"raw/docs/{n}.rst": page(t) for n, t in (("a", "Quill quickstart"), ("b", "Configuring Quill"),
                                                      ("c", "Quill and data files"), ("d", "Packages"))},
        "raw/NEWS.rst": page("v84.2.1", "release"),
    }
    series = series_of(badges)
    assert series["raw/docs/a.rst"].product == "quill" and series["raw/NEWS.rst"].product == "quill"
    # ... and that README, naming nothing of its own, is the set's front page; a changelog titled
    # "Change history" names no product "change"
    assert series["raw/README.rst"].product == "quill"
    history = {**badges, "raw/NEWS.rst": page("Change history", "release")}
    assert series_of(history)["raw/NEWS.rst"].product == "quill"
    # a README that opens on a notice ("Warning": the project is in maintenance) names no
    # product "warning" (an unseen set's timelines were all "(warning)")
    notice = {**badges, "raw/README.rst": page("Warning"), "raw/docs/warning.rst": page("Warning")}
    assert series_of(notice)["raw/NEWS.rst"].product == "quill"
    assert series_of(notice)["raw/README.rst"].product == "quill"
    # a changelog in a folder without a front page (a site's about/) is the product's that raw/'s
    # front page names; a note beside it stays no one's
    about = {
        "raw/index.md": page("Quill"),
        "raw/usage.md": page("Usage notes"),
        "raw/about/changelog.md": page("Changelog", "release"),
        "raw/about/contributing.md": page("Contributing"),
        # a team's runbook that quotes versions reads as releases: it is no changelog of the product
        "raw/notes/runbook.md": page("Database migrations runbook (orders service)", "release"),
    }
    series = series_of(about)
    assert series["raw/about/changelog.md"].name == "quill" and series["raw/about/changelog.md"].product == "quill"
    assert series["raw/about/contributing.md"].name != "quill" and series["raw/notes/runbook.md"].name != "quill"


def test_a_default_under_a_settings_heading_joins_its_timeline_under_the_settings_name(ws: Workspace) -> None:
    """A settings reference heads each setting with its name and states "Default:" under it,
    without the name: the timeline it makes with the release notes is titled by the name as they
    write it (`PAGE_MODE`, not "page_mode"). A default written as a quoted name inside code marks
    is that name, so the same default spelled as its module path and as its last part is one
    value, and makes no timeline."""
    write(ws, "kite/index.rst", "Kite\n====\n\nKite builds sites.\n")
    write(ws, "kite/settings.rst", "Settings\n========\n\n``PAGE_MODE``\n-------------\n\nDefault: ``'fast'``\n\n"
                                   "How pages are built.\n\n``DEFAULT_FIELD``\n-----------------\n\n"
                                   "Default: ``'``:class:`kite.fields.AutoField`\\ ``'``\n\nThe field a page gets.\n")
    write(ws, "kite/releases/4.0.rst", "Kite 4.0 release notes\n======================\n\n*Released 2025-04-02*\n\n"
                                       "* The default value for ``PAGE_MODE`` is ``slow``.\n"
                                       "* The default value for ``DEFAULT_FIELD`` is ``AutoField``.\n")
    claims = _compiled_claims(ws)
    assert "Default PAGE_MODE (kite)" in claims, claims
    assert not [t for t in claims if "field" in t.lower()], claims


def test_a_page_of_one_releases_notes_says_what_that_release_removed(tmp_path: Path) -> None:
    """Sphinx projects keep a page for each release ("What's new in Kite 6.3"), its sections named
    for kinds of change, not for releases: the names such a page says went, or came back, were not
    read at all, so a note still using them was never found."""
    from wikimem.lint.corpus import compute

    page = tmp_path / "v6.3.0.rst"
    page.write_text("What's new in Kite 6.3.0\n========================\n\nMar 11, 2025\n------------\n\n"
                    "Deprecation notices\n~~~~~~~~~~~~~~~~~~~\n\n"
                    "- ``LoopTestCase``, which was deprecated in Kite 6.2, is no longer deprecated.\n"
                    "- The ``old_loop_factory`` argument has been removed.\n", encoding="utf-8")
    claims = compute("docs/releases/v6.3.0.rst", str(page), "x", 0, 10**8).claims
    assert [(c.value_text, c.change, c.release) for c in claims if c.key[0] == "removed"] == [
        ("LoopTestCase", "undeprecated", "6.3.0"), ("old_loop_factory", "removed", "6.3.0")]


def test_an_aside_between_a_subject_and_its_verb_leaves_the_subject_its_own(tmp_path: Path) -> None:
    """Waitress's index compares it with another server: "The CherryPy WSGI server, for example,
    targets Python 2 and Python 3". The aside between subject and verb hid the subject, and the
    sentence read as the product's own minimum ("Stated otherwise: Python 2 and Python 3" on its
    timeline)."""
    from wikimem.lint.corpus import compute

    page = tmp_path / "index.md"
    page.write_text("# Acme\n\nThe Gizmo web server, for example, targets Python 2 and Python 3.\n\n"
                    "The Gizmo web server targets Python 2 and Python 3.\n", encoding="utf-8")
    roles = [c.key[2] for c in compute("docs/index.md", str(page), "x", 0, 10**8).claims if c.key[:2] == ("min", "python")]
    assert len(roles) == 2 and roles[0] == roles[1] and "server" in roles[0], roles


def test_a_pre_release_of_a_runtime_is_of_its_release_line() -> None:
    """ "Add preliminary support for Python 3.15b1" supports 3.15 (a new set's newest Python was
    3.13, the pre-release unread); "The minimum supported version of Python 3.15 is now 3.15b2"
    is the oldest build of that line that works, not the product's minimum Python (its timeline
    said 'Python 3.15' where the minimum was 3.10)."""
    (fact,) = facts_of("Add preliminary support for Python 3.15b1. This has not been tested.", release="3.5.1")
    assert (fact.key, fact.value) == (("max", "python", ""), (3, 15))
    (fact,) = facts_of("Add support for Python 3.14rc2.", release="3.5.0")
    assert (fact.key, fact.value) == (("max", "python", ""), (3, 14))
    assert facts_of("The minimum supported version of Python 3.15 is now 3.15b2.", release="3.5.2") == []
    assert facts_of("The minimum supported version of Python 3.15 is now 3.15.1.", release="3.5.2") == []
    (fact,) = facts_of("The minimum supported version of Python is now 3.10.", release="3.3.0")
    assert (fact.key, fact.value) == (("min", "python", ""), (3, 10))
    assert facts_of("Add support for Python 3b1.", release="3.5.1") == []


def test_a_requirement_of_the_products_own_old_releases_is_of_those_releases() -> None:
    """A front page's history, "acme-2.1.11 was the last version of acme to support Python 2.5,
    and acme ≥ 2.2.0 requires Python ≥ 2.6", is of release 2.2.0: a new set's timeline took it
    for what the current documentation says, over a release's "Require Python 3.9"."""
    def read(text: str) -> list:
        return [(f.key, f.value, f.release) for f in extract(Statements(
            "raw/README.md", "Acme: bindings for the Toolkit", ("acme", None), "acme", None,
            [(text, 1, None, None, "", "para", "")], [], Profile(kind="reference")))]

    from wikimem.facts import Profile

    assert read("acme-2.1.11 was the last version of acme to support Python 2.5, and acme ≥ 2.2.0 requires "
                "Python ≥ 2.6.") == [(("min", "python", ""), (2, 6), "2.2.0")]
    assert read("acme-2.2.0 requires Python 2.6 or newer.") == [(("min", "python", ""), (2, 6), "2.2.0")]
    assert read("acme>=2.2 requires Python>=2.6.") == [(("min", "python", ""), (2, 6), "2.2")]
    assert read("acme requires Python 3.9 or newer.") == [(("min", "python", ""), (3, 9), None)]
    # a name before the verb that is the one required again is not the product's release
    assert {f.release for f in facts_of("NEW: Drop Python 3.10 and require Python >= 3.11.5.", release="13.0")} \
        == {"13.0"}


def test_a_bundled_librarys_version_said_of_it() -> None:
    """ "Bundled libtoolkit is updated to 4.3.5" is the version a release bundles, as "Bump
    bundled libtoolkit to 4.3.4" is: a new set's timeline stopped at the older release."""
    from wikimem.facts import Profile

    def read(text: str) -> list:
        return [(f.key, f.value) for f in extract(Statements("raw/changelog.md", "Changelog", None, "", None,
                                                             [(text, 1, "26.0.0", None, "", "item", "")], [],
                                                             Profile(kind="release")))]

    assert read("Bundled libtoolkit is updated to 4.3.5, which changes its license from LGPL to MPL.") \
        == [(("value", "libtoolkit", ""), (4, 3, 5))]
    assert read("The bundled Toolkit version has been bumped from 1.2 to 4.3.5.") == [(("value", "toolkit", ""), (4, 3, 5))]
    assert read("Bump bundled libtoolkit to 4.3.4") == [(("value", "libtoolkit", ""), (4, 3, 4))]
    assert read("Bundled libtoolkit is updated to support 4.3.5 APIs.") == []
    # an unseen changelog's updates, each read as none: the bundled one to a version, and a
    # release's "Update X from A to B" without the word "bundled"
    assert read("Update the bundled libtoolkit to 1.51 from 1.44.2.") == [(("value", "libtoolkit", ""), (1, 51))]
    assert read("Update the embedded libtoolkit from 4.31 to 4.33.") == [(("value", "libtoolkit", ""), (4, 33))]
    assert read("Update lib-toolkit from 1.33.1 to 1.34.5.") == [(("value", "lib-toolkit", ""), (1, 34, 5))]
    assert read("Updated the minimum from 3.8 to 3.9.") == []
    # an item of the project's own CI names what the CI runs, not what the product bundles
    assert read("Travis CI: Upgrade PyPy from 6.0.0 to 7.1.1 #3783") == []


def test_the_python_a_package_declares_in_its_metadata() -> None:
    """ "Specify `requires-python >= 3.8`" raises the minimum Python: the metadata field is where
    a package states it (an unseen changelog's only statement of its minimum)."""
    (fact,) = facts_of("Specify `requires-python >= 3.8`. Technically we still work on 3.7, but 3.8 is the "
                       "minimum we run on CI.", release="4.3.0")
    assert (fact.key, fact.value) == (("min", "python", ""), (3, 8))
    (fact,) = facts_of("Require python_requires >= 3.9 in the package metadata.", release="2.0")
    assert (fact.key, fact.value) == (("min", "python", ""), (3, 9))


def test_a_default_changed_to_a_value_after_another_to() -> None:
    """An unseen changelog: "changes the default value of the `directConnection` URI option and
    keyword argument to `Client` to `False` instead of `None`" made a timeline whose current
    value was `Client`: the first "to" is the subject's, the value the last one."""
    from wikimem.facts import choice_key

    (fact,) = facts_of("Warning: Acme 4.0 changes the default value of the `directConnection` URI option and keyword "
                       "argument to `Client` to `False` instead of `None`, allowing discovery.", release="4.0")
    assert fact.key[0] == "choice" and choice_key(fact.value_text) == "false"
    (fact,) = facts_of("Changed the default renderer from `a` to `b` to speed things up.", release="2.0")
    assert fact.value_text == "b"


def test_drops_and_additions_written_in_haste() -> None:
    """An unseen changelog's items: "Drop support Python 3.8" read as Python 3.8 supported,
    "Drop support of Python 3.7" and "Add support of Python 3.12 https://..." as nothing, and
    "Drop 3.9 support" after them as nothing; its docs' "Currently supporting CPython 3.10+."
    was unread too."""
    from wikimem.facts import Profile

    def read(*items: str) -> set:
        statements = [(text, n, version, None, "", "item", "") for n, (text, version) in enumerate(items, 1)]
        return {(f.key, f.value, f.change) for f in extract(Statements("raw/NEWS", "Changes", None, "", None, statements,
                                                                        [], Profile(kind="release")))}

    assert read(("Drop support Python 3.8 (#1021)", "0.37.0")) == {(("min", "python", ""), (3, 8), "drop")}
    assert read(("Drop support of Python 3.7 (#967)", "0.36.0")) == {(("min", "python", ""), (3, 7), "drop")}
    assert read(("Add support of Python 3.12 https://example.org/pull/817", "0.34.0")) \
        == {(("max", "python", ""), (3, 12), "")}
    assert (("min", "python", ""), (3, 9), "drop") in read(("Drop 3.9 support (#1085)", "0.40.0"),
                                                          ("Drop support Python 3.8 (#1021)", "0.37.0"))
    (fact,) = facts_of("Acme is no longer officially supported on Python 3.3 which was EOL'ed on 2017-09-29.",
                       release="1.8.0", title="Changes")
    assert (fact.key[:2], fact.value, fact.change) == (("min", "python"), (3, 3), "drop")
    (fact,) = facts_of("Currently supporting CPython 3.10+.")
    assert (fact.key, fact.value) == (("min", "python", ""), (3, 10))
    assert facts_of("Supporting Python 3.8 was hard.") == []


def test_a_from_to_names_what_changed_after_a_sentence_it_runs_into() -> None:
    """An unseen set's "what's new" pages: "The bundled version of libtoolkit has been updated
    from 1.24 to 1.34" made a timeline "Bundled libtoolkit" beside "Libtoolkit version"; "... have
    been updated. lib-ares has been updated from 1.13.0 to 1.14.0" (a sentence starting in
    lowercase, left joined to the one before) one titled "Acme updated. lib-ares"; and "Linux CI
    has been updated from Ubuntu 12.04 to Ubuntu 14.04" one of the project's CI."""
    keys = {f.key[1]: f.value_text for f in facts_of(
        "The bundled version of libtoolkit has been updated from 1.24 to 1.34, and lib-ares has been updated "
        "from 1.14 to 1.15.", release="1.5")}
    assert set(keys) == {"libtoolkit", "lib-ares"}
    (fact,) = facts_of("One of the libraries bundled with Acme have been updated. lib-ares has been updated from "
                       "1.13.0 to 1.14.0 (release notes).", release="1.3")
    assert fact.key[1] == "lib-ares" and fact.value_text == "lib-ares has been updated from 1.13.0 to 1.14.0"
    assert facts_of("Linux CI has been updated from Ubuntu 12.04 to Ubuntu 14.04.", release="1.2") == []


@pytest.mark.parametrize("sentence", [
    "Requires glibc 2.17 or newer; pluggy 1.5 or newer is all it needs, and npm 9.1+ too.",
    "It needs the openssl 3.0.2 library, at least zlib 1.2.11 and acme 2.0 and later.",
    "Support for Python 3.9 is dropped; Toolkit >= 3.0 is required; Quill v2.1rc1 works on Linux.",
    "UPGRADED to acme 2.0, Ships With quill 1.0; tested against Python 3.12; asks for 2 GB.",
    "Nothing here: 12 apples.",
])
def test_the_tests_before_the_patterns_answer_as_the_patterns(sentence: str) -> None:
    """has_hint's words grouped by their first character match where HINT does; LOWER_AFTER_TRIGGER
    and LOWER_OR_LATER are asked only where one of their words is, which each match holds."""
    from wikimem import facts

    low = sentence.lower()
    for text in (low, sentence, low.upper()):
        assert (facts._HINT_LOW.search(text.lower()) is None) == (facts.HINT.search(text) is None)
    for pattern, words in ((facts.LOWER_AFTER_TRIGGER, facts._LOWER_AFTER_WORDS),
                           (facts.LOWER_OR_LATER, facts._LOWER_OR_LATER_WORDS)):
        for m in pattern.finditer(sentence):  # (LOWER_OR_LATER's word is in what it looks ahead at)
            assert any(word in sentence[m.start():] for word in words), m.group(0)
    assert [m.span() for m in facts._versioned(sentence)] == [m.span() for m in facts.VERSIONED.finditer(sentence)]

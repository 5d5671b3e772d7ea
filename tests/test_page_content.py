"""What the offline pages say: the facts a reader asks for, concept articles that lead with the
rules a section states, compact settings and tables, and index lines that describe."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import write
from wikimem.analysis import analyze
from wikimem.compiler import compile_workspace
from wikimem.sources import load_source
from wikimem.workspace import Workspace

OWNERSHIP = """# What Is Ownership?

*Ownership* is a set of rules that govern how a program manages memory. None of the
features of ownership will slow down your program while it runs.

To illustrate the rules of ownership, we need a data type that is more complex than the
ones we covered before.

## Ownership Rules

First, let's take a look at the ownership rules. Keep these rules in mind:

- Each value has an *owner*.
- There can only be one owner at a time.
- When the owner goes out of scope, the value will be dropped.

## Memory

When a variable goes out of scope, the runtime calls a special function for us. In C++,
this pattern is sometimes called *Resource Acquisition Is Initialization (RAII)*.
"""

BORROWING = """# References and Borrowing

Ownership is moved out when a value is passed, and nothing is copied. A reference lets
you use a value without taking ownership of it; ownership stays with the owner.
"""

SERVER = """# A Single-Threaded Server

The server listens on a port of the local machine and answers one request at a time.

In the address, the part before the colon is the IP address of your computer, and `7878`
is the port. We'll now write the
loop that accepts connections and prints a message for each of them, and we'll look at
what the browser sends in the next section. Then we'll read the request line by line and
print it, so that we can see what the browser asks for. After that we'll write a
response back. Finally we'll send a page of HTML that says hello to the browser. Each
step is a small change to the code we have, so you can follow it in your editor. We'll
run the server after every change and load the page in a browser to see what happens.
Let's get started with the listener. Let's see what the browser sends. Let's write the
response. Let's send the page. Let's look at the next step. Let's run it again. Let's
refactor the code. Let's handle errors. Let's make it faster. Let's look at threads.
Let's make a pool. Let's finish. Let's clean up. Let's stop here. Let's go on. Let's see.
Let's run. Let's check. Let's review the whole program once more before we go on.

In previous releases the listener backlog was limited to a maximum of `65535`. On new
kernels the maximum is now `4294967295`.
"""

CONFIG = """Settings
========

Each setting has its own section.

tab_width
---------

Number of spaces for hard tab expansion.

Default: 8.  Options: ``--tab-width``.

raw_enabled
-----------

Enable the "raw" directive.

Default: enabled (True).  Options: ``--raw-enabled, --no-raw``.
"""

OPERATORS = """# Operators

Table B-1 lists the operators.

| Operator | Example | Explanation | Overloadable? |
|----------|---------|-------------|---------------|
| `%` | `expr % expr` | Arithmetic remainder | `Rem` |
| `%=` | `var %= expr` | Arithmetic remainder and assignment | `RemAssign` |
| `\\|\\|` | `expr \\|\\| expr` | Short-circuiting logical OR | |
"""


class NoPhrases:
    """A concept-choice stub's phrase counts (TermStats.phrases, .said): no phrase holds a word."""

    def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]:
        return []

    def said(self, collection: str, keys) -> dict[str, int]:
        return {}


class Spelled(NoPhrases):
    """A concept-choice stub: each collection's candidates (key, df, strength, signalling
    documents, strong documents), 12 sources each, and how its texts spell each key."""

    def __init__(self, rows: dict[str, list[tuple[str, int, int, int, int]]], spelled: dict[str, dict[str, str]]):
        self.rows, self.spelled = rows, spelled

    def collections(self) -> dict[str, int]:
        return {name: 12 for name in self.rows}

    def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
        return self.rows[collection][:limit]

    def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
        return []

    def surfaces(self, collection: str, keys: Any) -> Any:
        from collections import Counter

        own = self.spelled[collection]
        return {k: Counter({own[k]: 3}) for k in keys if k in own}


def analysed(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return analyze(load_source(path, f"raw/{name}", max_bytes=1_000_000))


def fact_texts(analysis) -> list[str]:
    return [analysis.sentences[i].text for i in analysis.facts]


# prose around the sentences a test asks about: a document long enough to keep only its answers
FILLER = "".join(f"The runner reads part {n} of the project file at start-up and keeps it.\n" for n in range(30))


def assert_facts_start_with(facts: list[str], starts: tuple[str, ...]) -> None:
    for start in starts:
        assert any(f.startswith(start) for f in facts), (start, facts)


def test_the_rules_a_list_states_and_a_spelled_out_acronym_are_key_facts(tmp_path: Path) -> None:
    facts = fact_texts(analysed(tmp_path, "own.md", OWNERSHIP))
    assert "There can only be one owner at a time." in facts
    assert "When the owner goes out of scope, the value will be dropped." in facts
    assert any("Resource Acquisition Is Initialization (RAII)" in f for f in facts)


def test_a_figure_in_code_and_what_is_now_come_with_a_long_documents_facts(tmp_path: Path) -> None:
    facts = fact_texts(analysed(tmp_path, "server.md", SERVER))
    assert any("`7878` is the port" in f for f in facts)
    assert any("limited to a maximum of `65535`" in f for f in facts)
    assert "On new kernels the maximum is now `4294967295`." in facts  # what is now, with what was
    assert not any(f.startswith("Let's") for f in facts)


HOW_TO = """# Comparison

By default, two records are equal if they have the same type and all their fields are equal.
For that, the library writes the equality methods for you.

Additionally, if you pass `order=True`, the library also creates the ordering methods `__lt__` and `__gt__`.

For equality, the library compares the types of both records first, then each field in turn.
It then compares the tuples those fields make, which is why their order matters here.
Fields are compared in the order they are declared on the class, one after the other.
The comparison stops at the first field that differs, so later fields are never looked at.
Records of unrelated types never compare equal, whatever their fields hold at the time.
The result of a comparison never depends on the identity of the records compared.
Common examples of such fields are lists of other records and nested structures.
The methods are written once, when the class is created, and cost nothing afterwards.
Subclasses inherit them as they inherit any other method of their base class.
Nothing in the generated code looks at attributes that are not fields of the record.

## Hashing

The methods that are written depend on the arguments given to the decorator.
The *correct way* to get hashing by identity is to set `@record(eq=False)`.
The lifetime of a cached record, as an integer of seconds. Use `0` to drop cached records at the end of each request.
A record that can be changed after it is made should not be hashed by its fields.
"""


def test_a_sentence_that_says_how_to_do_something_with_code_is_a_key_fact(tmp_path: Path) -> None:
    # an answer to "how do I ..." or "what does this argument do": a condition on what you pass,
    # the way to do something, each naming the code that does it
    facts = fact_texts(analysed(tmp_path, "comparison.md", HOW_TO))
    assert any(f.startswith("Additionally, if you pass `order=True`") for f in facts), facts
    assert any("is to set `@record(eq=False)`" in f for f in facts), facts
    assert any(f.startswith("Use `0` to drop cached records") for f in facts), facts


def test_what_a_name_may_be_how_to_name_a_thing_and_what_an_abbreviation_stands_for_are_key_facts(
        tmp_path: Path) -> None:
    text = ("# Fixtures\n\nFixtures are functions the runner calls before a test. They run once per test by default.\n\n"
            "## Scope\n\nA fixture can live longer than one test. Possible values for `scope` are: `function`, "
            "`class`, `module` or `session`.\n\nLonger scopes save time when setting up is slow for many tests.\n\n"
            "## Fragments\n\nEach file should be named like `<ISSUE>.<TYPE>.rst`, where the type says what changed.\n\n"
            "## Terms\n\nDBAPI is shorthand for the phrase Python Database API Specification.\n\n"
            + "".join(f"The runner reads setting number {n} of the project at start-up time here.\n" for n in range(30)))
    facts = fact_texts(analysed(tmp_path, "fixtures.md", text))
    assert any(f.startswith("Possible values for `scope` are") for f in facts), facts
    assert any(f.startswith("Each file should be named like") for f in facts), facts
    assert any(f.startswith("DBAPI is shorthand for") for f in facts), facts


def test_a_recommended_way_a_limit_an_order_a_migration_step_and_a_counted_list_are_key_facts(
        tmp_path: Path) -> None:
    # what coverage.py's docs answered only in raw/ (its held-out questions): sentences with no
    # figure, code or name in them that still state what a reader asks
    text = ("# Running\n\nThe tool runs your tests and measures them as they run.\n\n"
            "The tool works in three phases:\n\n- Execution: it runs your code.\n- Analysis: it reads your code.\n"
            "- Reporting: it writes what it found.\n\n"
            "The simplest way is to use the patch setting in your configuration file.\n\n"
            "The handler is only registered on Linux and Mac. On Windows, this setting has no effect.\n\n"
            "Without its own file, the tool looks for settings in other files, in this order: setup.cfg, tox.ini.\n\n"
            "Patterns such as tests/x will need to be changed to tests/y in the new release.\n\n"
            "The old formatter is still shipped. Use the new renderer instead.\n\n"
            "Our release months are January, April, July, October.\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "running.md", text))
    assert_facts_start_with(facts, ("The tool works in three phases:", "The simplest way is to use", "The handler is only registered",
                                    "On Windows, this setting has no effect.", "Without its own file", "Patterns such as",
                                    "Use the new renderer instead.", "Our release months are"))
    # a list whose items name their fields answers by its items, not by the sentence counting them
    codes = ("# Exit codes\n\nRunning the tool can result in three different exit codes:\n\n"
             "- Exit code 0: all passed\n- Exit code 1: some failed\n- Exit code 2: interrupted\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "codes.md", codes))
    assert not any(f.startswith("Running the tool") for f in facts) and any(f.startswith("Exit code 2") for f in facts)


def test_two_options_that_do_not_go_together_are_a_key_fact(tmp_path: Path) -> None:
    # an unseen CLI reference: "`--report` cannot be combined with `--metadata`" and "You cannot
    # combine `--env-dir` with `--no-isolation`" were on no page (a limit said without "not")
    text = ("# Command line\n\nThe tool builds packages.\n\n" + FILLER + "\n\n## Options\n\n"
            "The report lists each file. `--report` cannot be combined with `--metadata`.\n\n"
            "You cannot combine `--env-dir` with `--no-isolation`.\n\n"
            "The `--quiet` and `--verbose` flags are mutually exclusive.\n")
    facts = fact_texts(analysed(tmp_path, "cli.md", text))
    assert_facts_start_with(facts, ("`--report` cannot be combined", "You cannot combine", "The `--quiet` and"))


def test_a_projects_policy_in_its_own_voice_is_a_key_fact_and_its_tutorial_voice_is_not(tmp_path: Path) -> None:
    # versioning and deprecation pages speak as "we": how long deprecated things keep working, in
    # which releases they go, what each number of a version means; a tutorial's "we will" is chatter
    text = ("# Versioning\n\nThe gadget follows a release policy. Releases come out when they are ready.\n\n"
            "## Version numbers\n\nThe **first number** of the version is the year.\n\n"
            "- *A* is the major version.\n- *B* is the release number, bumped for new features.\n\n"
            "## Deprecation policy\n\nWe aim to maintain support for deprecated gadget features for at least 1 year.\n\n"
            "We will only start the removal of deprecated functionality in major releases, and keep it around "
            "for at least two minor releases.\n\n"
            "## Reporting a vulnerability\n\nOnce you've submitted an issue via email, you should receive an "
            "acknowledgment within 48 hours, and you may receive further follow-up emails.\n\n"
            "## Tutorial\n\nWe will now write a second gadget and run it.\n\n"
            "We will add a few more lines to the gadget over the next three steps.\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "versioning.md", text))
    assert_facts_start_with(facts, ("The **first number** of the version is the year.", "*A* is the major version.",
                                    "We aim to maintain support", "We will only start the removal",
                                    "Once you've submitted an issue"))  # a time it promises
    assert not any(f.startswith(("We will now write", "We will add")) for f in facts), facts


def test_an_answer_a_short_default_what_is_used_when_omitted_and_what_does_not_work_are_key_facts(
        tmp_path: Path) -> None:
    # what held-out sets answered only in raw/: an FAQ's answer after "This is not a bug", an
    # option's two-word default, a fallback, where a feature does not work, a release policy
    text = ("# Questions\n\n## Calling a command from Python\n\nI called my command and it exited.\n\n"
            "### Answer\n\nThis is not a bug. The decorator replaced the function with a command object.\n\n"
            "## Options\n\n#### `-l`, `--line-length`\n\nHow many characters per line to allow. The default is 88.\n\n"
            "#### `--tag`\n\nThe image to run. If `:tag` is omitted, the `latest` tag will be used.\n\n"
            "## Limits\n\nThe interactive debugger does not work in forking environments, such as a server that "
            "starts several processes.\n\nDeprecated features will only be removed in major releases.\n\n"
            "Line wrapping can be escaped on a per-paragraph basis by adding a line with only `\\b`.\n\n"
            "## Is the tool stable?\n\nYes, it is used by many large projects every day.\n\n"
            "## The root directory\n\nHere's a summary of what the runner uses the root directory for:\n\n"
            "- Each test is given a unique id which is rooted at the root directory.\n"
            "- Plugins store their state under it between runs.\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "faq.md", text))
    assert_facts_start_with(facts, ("The decorator replaced the function", "Yes, it is used by many", "The default is 88.",
                                    "If `:tag` is omitted", "The interactive debugger does not work", "Deprecated features will only",
                                    "Line wrapping can be escaped", "Each test is given a unique id", "Plugins store their state"))
    assert not any(f.startswith("This is not a bug") for f in facts)


def test_an_order_of_two_steps_what_a_function_returns_a_way_to_do_it_and_what_is_unsupported_are_key_facts(
        tmp_path: Path) -> None:
    text = ("# Widgets\n\nWidgets are small classes that the library writes for you.\n\n## Hooks\n\nConverters are run *before* validators, so validators see the final value.\n\n"
            "`widget.inspect(cls)` returns the class-wide parameters that were used to build the class.\n\n"
            "If your taste differs, you can use the *alias* argument to `widget.field()` to explicitly set the name.\n\n"
            "## Hashing\n\n- If you want to make objects hashable by value: use `@define(frozen=True)`.\n"
            "- Leave the rest to the library, which knows its other parameters.\n\n"
            "## Type checkers\n\n- Auto-aliasing of private attributes is not supported.\n"
            "- Checkers read the stub files the package ships with it.\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "widgets.md", text))
    assert_facts_start_with(facts, ("Converters are run *before* validators", "`widget.inspect(cls)` returns",
                                    "If your taste differs, you can use", "If you want to make objects hashable",
                                    "Auto-aliasing of private attributes is not supported"))


def test_what_a_recent_release_changed_and_what_any_release_broke_are_key_facts(tmp_path: Path) -> None:
    # a changelog of list items with no figure in them: the newest releases keep each change
    # they state; an older release keeps what it broke before what it fixed
    releases = []
    for n in range(20, 0, -1):
        releases += [f"## [3.{n}.0](https://example.org/{n}) - 2026-01-{n:02d}", ""]
        if n == 5:
            releases += ["### Backwards-incompatible Changes", "",
                         "- When using `@frozen`, validators are now run when an instance is copied.",
                         "  Meaning: copies are checked like new instances.", ""]
        releases += ["### Changes", ""]
        releases += [f"- Fix a crash in widget parser path {n}{k} when the input has a trailing comment." for k in range(5)]
        releases += [""]
        if n == 19:
            releases += ["- `widget.validators.provides()` has been removed.",
                         "- `widget.evolve()` doesn't accept the *inst* argument as a keyword argument anymore.", ""]
    facts = fact_texts(analysed(tmp_path, "CHANGELOG.md", "\n".join(["# Changelog", "", *releases])))
    assert_facts_start_with(facts, ("`widget.validators.provides()` has been removed", "`widget.evolve()` doesn't accept",
                                    "When using `@frozen`, validators are now run"))


def test_what_a_recent_release_changed_in_how_the_product_is_built_and_shipped_is_a_key_fact(tmp_path: Path) -> None:
    # an unseen changelog's recent releases: "Move all package metadata into `pyproject.toml`",
    # "Strip `PYTHONPATH` ...", "Build and upload free-threaded wheels" were on no page, among fixes
    releases = []
    for n in range(9, 0, -1):
        releases += [f"## 8.{n} (2026-0{n}-01)", ""]
        releases += [f"- Fix a crash in widget parser path {n}{k} when the input has a trailing comment." for k in range(5)]
        if n == 4:
            releases += ["- Move all supported package metadata into `pyproject.toml`.",
                         "- Strip `PYTHONPATH` from the environment during isolated builds.",
                         "- Build and upload free-threaded (`cp314t`) wheels for all platforms."]
        releases += [""]
    facts = fact_texts(analysed(tmp_path, "CHANGES.md", "\n".join(["# Changelog", "", *releases])))
    assert_facts_start_with(facts, ("Move all supported package metadata", "Strip `PYTHONPATH`",
                                    "Build and upload free-threaded"))


def test_every_item_of_the_newest_release_and_an_older_releases_replacements_are_key_facts(tmp_path: Path) -> None:
    # the newest release's "Fixed" list says what it changed in items without a change verb;
    # a release years back replaced one named thing with another, which a reader still meets
    releases = []
    for n in range(16, 0, -1):
        releases += [f"## [2.{n}.0] - 2026-01-{n:02d}", "", "### Fixed", ""]
        if n == 16:
            releases += ["* Support automatic links with URL schemes other than HTTP, such as `<ssh://example.org>` (#1244).",
                         "* Strip complete HTML tags with quoted `>` characters from generated heading IDs."]
        if n == 2:
            releases += ["* The `tables` extension now uses a `style` attribute instead of an `align` attribute."]
        if n == 14:  # a recent release, not the newest: its change statements are kept, "Switch" one of them
            releases += ["* Switch static site generator for documentation from MkDocs to Zensical (#1627)."]
        releases += [f"* Fix a crash in widget parser path {n}{k} when the input has a trailing comment." for k in range(3)]
        releases += [""]
    facts = fact_texts(analysed(tmp_path, "changelog.md", "\n".join(["# Changelog", "", *releases])))
    assert_facts_start_with(facts, ("Support automatic links with URL schemes other than HTTP",
                                    "Strip complete HTML tags with quoted", "The `tables` extension now uses a `style`",
                                    "Switch static site generator for documentation from MkDocs to Zensical"))


def test_what_the_author_flags_is_a_key_fact(tmp_path: Path) -> None:
    # a warning, and a note that puts its point in bold; a note that only remarks is not
    text = ("# Extensions\n\n" + FILLER + "\n\n"
            "!!! info \"Note\"\n\n    All of the included extensions are in __maintenance mode__. We will fix bugs.\n\n"
            + FILLER + "\n\n!!! warning\n\n    Enabling symlinks in the static folder can expose files outside of it.\n\n"
            + FILLER + "\n\n!!! note\n\n    The examples on this page were written long ago by the first maintainers.\n\n" + FILLER + "\n")
    facts = fact_texts(analysed(tmp_path, "extensions.md", text))
    assert "Note: All of the included extensions are in **maintenance mode**." in facts, facts
    assert "Warning: Enabling symlinks in the static folder can expose files outside of it." in facts, facts
    assert not [f for f in facts if "written long ago" in f], facts


@pytest.mark.parametrize("mark", ["**Potentially breaking**", "_Possibly breaking_", "**Behavior change**"])
def test_a_change_marked_as_possibly_breaking_is_kept_as_a_breaking_one(tmp_path: Path, mark: str) -> None:
    """An unseen changelog marks items "**Potentially breaking**:" in releases past the ten
    newest: they are kept as a release's breaking changes are, before what it fixed."""
    releases = []
    for minor in range(12, -1, -1):
        releases += [f"## 4.{minor}.0 (2026-01-{minor + 1:02d})", ""]
        releases += [f"- Fix a crash in the widget parser path {minor}{k} with a trailing comment." for k in range(4)]
        if minor == 1:
            releases += [f"- {mark}: The converters raise `HookNotFound` on hook creation, instead of on hook use."]
        releases += [""]
    facts = fact_texts(analysed(tmp_path, "HISTORY.md", "\n".join(["# History", "", *releases])))
    assert any("The converters raise `HookNotFound` on hook creation" in f for f in facts), facts


def test_the_release_that_opened_the_newest_major_series_keeps_what_it_broke(tmp_path: Path) -> None:
    # 4.0.0 is older than the ten newest releases, yet what it broke is what 4.x still is; its
    # items marked "Backwards-incompatible" inline are breaking changes as a section of them is
    releases = []
    for minor, patches in ((4, 3), (3, 3), (2, 3), (1, 3), (0, 2)):
        for patch in range(patches, -1, -1):
            releases += [f"4.{minor}.{patch} (2026-{minor + 1:02d}-{patch + 1:02d})", "-" * 18, ""]
            releases += [f"- Fix a crash in the widget parser path {minor}{patch}{k} with a trailing comment." for k in range(3)]
            releases += [""]
    releases[-1:-1] = [f"- *Backwards-incompatible*: Rename ``old_hook_{k}`` parameter to ``new_hook_{k}`` in the "
                       f"processing methods (#{k})." for k in range(4)]
    releases += ["3.9.0 (2025-01-01)", "-" * 18, "", "- *Backwards-incompatible*: Rename ``ancient`` parameter to "
                 "``older`` in the processing methods (#9).", "- Fix a crash in the widget parser.", ""]
    text = "Changelog\n=========\n\n" + "\n".join(releases)
    facts = fact_texts(analysed(tmp_path, "CHANGELOG.rst", text))
    for k in range(4):
        assert any(f.startswith(f"*Backwards-incompatible*: Rename `old_hook_{k}`") for f in facts), (k, facts)
    from wikimem.analysis import _older_releases

    sections = load_source(tmp_path / "CHANGELOG.rst", "raw/CHANGELOG.rst", max_bytes=1_000_000).sections
    older = {sections[j].version for j in _older_releases(sections)}
    assert "4.0.0" not in older and {"4.0.1", "4.0.2", "3.9.0"} <= older, older


def test_an_older_release_keeps_what_it_removed_before_what_it_fixed(tmp_path: Path) -> None:
    # an old release's nested list of removals under "Remove previously deprecated code": a
    # reader still asks whether a setting it removed is read; its fixes say more words
    releases = []
    for minor in range(14, -1, -1):
        releases += [f"Version 2.{minor}.0", "-" * 13, "", f"Released 2024-{minor % 12 + 1:02d}-01", ""]
        releases += [f"-   Fix `widget_{minor}_{k}` so it can be used instead of the older helper when loading." for k in range(3)]
        if minor == 2:
            releases += ["-   Remove previously deprecated code.", ""]
            releases += [f"    -   The ``OLD_SETTING_{k}`` config key and ``app.old_{k}`` property are removed." for k in range(4)]
        releases += [""]
    facts = fact_texts(analysed(tmp_path, "CHANGES.rst", "Changes\n=======\n\n" + "\n".join(releases)))
    for k in range(4):
        assert any(f.startswith(f"The `OLD_SETTING_{k}` config key") for f in facts), (k, facts)


def test_a_release_keeps_every_thing_it_removed(tmp_path: Path) -> None:
    """A first major release's "Removed" list of a dozen items, each "Remove X from Y. Use Z
    instead." (Starlette's 1.0.0rc1): its section's share kept nine of its sentences, and the
    page had no word of `on_event()`'s removal, which is what a reader asks. Each removal is kept."""
    releases = []
    for minor in range(3, 0, -1):
        releases += [f"## 1.{minor}.0 (2026-0{minor}-01)", ""]
        releases += [f"* Fix `widget_{minor}_{k}` so it can be used when loading files." for k in range(3)]
        releases += [""]
    releases += ["## 1.0.0 (2025-12-01)", "", "The first stable release.", "", "#### Removed", ""]
    for k in range(12):
        releases += [f"* Remove `old_hook_{k}()` from `App` and `Router`.",
                     "  Use the `lifespan` parameter instead [#31](https://example.org/31)."]
    releases += ["", "#### Fixed", ""] + [f"* Fix a crash in the parser path {k}." for k in range(6)] + [""]
    facts = fact_texts(analysed(tmp_path, "release-notes.md", "# Release notes\n\n" + "\n".join(releases)))
    for k in range(12):
        assert any(f.startswith(f"Remove `old_hook_{k}()`") for f in facts), (k, facts)


def test_a_removal_after_an_items_tag_is_a_removal(tmp_path: Path) -> None:
    """An unseen changelog tags its items ("[env] Drop PyPy support (#1035)", "[fix] Remove
    monotonic from requirements (#1018)"): its older releases' removals were on no page."""
    releases = []
    for minor in range(14, 0, -1):
        releases += [f"0.{minor}.0", "=" * len(f"0.{minor}.0"), ""]
        releases += [f"* [fix] Fix `widget_{minor}_{k}` so it can be used when loading files (#{minor}{k})."
                     for k in range(4)]
        if minor == 2:
            releases += ["* [env] Drop PyPy support (#1035 #1037)", "* [fix] Remove monotonic from requirements (#1018)"]
        releases += [""]
    facts = fact_texts(analysed(tmp_path, "NEWS.rst", "Changes\n=======\n\n" + "\n".join(releases)))
    assert any(f.startswith("[env] Drop PyPy support") for f in facts), facts
    assert any(f.startswith("[fix] Remove monotonic") for f in facts), facts


def crowded(title: str, section: str, answers: str, commands: int = 4) -> str:
    """A long page whose few kept sentences go to what says most: forty plain sentences, a
    handful that name a command and a number (answers of their own), and `answers` among them."""
    filler = [f"The worker reads the files of module {w} and restarts the server when they change."
              for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")] * 4
    coded = [f"The `serve` command starts {n} copies of the server on a large machine." for n in (2, 3, 4, 6, 8, 9)]
    return (f"# {title}\n\n## {section}\n\n" + "\n\n".join(filler[:20]) + "\n\n" + "\n\n".join(coded[:commands]) +
            f"\n\n{answers}\n\n## More\n\n" + "\n\n".join(filler[20:]) + "\n")


def test_a_figure_named_before_its_number_is_a_key_fact(tmp_path: Path) -> None:
    # the port a service takes is one of the page's answers, though no unit follows its number
    text = crowded("Development server", "Address already in use",
                   "Some systems automatically start a service that uses port 5000.")
    facts = fact_texts(analysed(tmp_path, "server.md", text))
    assert any(f.startswith("Some systems automatically start a service that uses port 5000") for f in facts), facts


def test_a_signatures_defaults_and_what_a_named_thing_lets_you_do_are_key_facts(tmp_path: Path) -> None:
    text = crowded("Requests", "Forms", "Signature: `request.form(max_files=1000, max_fields=1000)`\n\n"
                   "For more control you can use a `Timeout` instance which lets you specify separate connect and "
                   "read timeouts.", commands=6)
    facts = fact_texts(analysed(tmp_path, "requests.md", text))
    assert any(f.startswith("Signature: `request.form(max_files=1000") for f in facts), facts
    assert any(f.startswith("For more control you can use a `Timeout` instance") for f in facts), facts


def test_an_instruction_to_use_something_instead_comes_with_what_it_replaces(tmp_path: Path) -> None:
    releases = ["# Release notes", "", "## 2.0.0 (2026-03-01)", "", "### Removed", ""]
    releases += [f"* Remove `old_hook_{k}()` from `App`.\n  Use the `hooks_{k}` parameter instead." for k in range(14)]
    releases += ["", "## 1.0.0 (2025-03-01)", "", "* Add `App`.", ""]
    facts = fact_texts(analysed(tmp_path, "release-notes.md", "\n".join(releases)))
    kept = [k for k in range(14) if f"Use the `hooks_{k}` parameter instead." in facts]
    assert kept, facts
    for k in kept:
        assert f"Remove `old_hook_{k}()` from `App`." in facts, (k, facts)


def test_the_pre_releases_of_the_newest_major_version_are_not_older_releases(tmp_path: Path) -> None:
    releases = []
    for minor in range(12, -1, -1):
        releases += [f"## 1.{minor}.0 (2026-01-{minor + 1:02d})", "", f"* Fix widget {minor}.", ""]
    releases += ["## 1.0.0rc1 (2025-12-01)", "", "### Removed", "", "* Remove `old_hook()` from `App`.", "",
                 "## 0.9.0 (2025-06-01)", "", "* Fix widget.", ""]
    (tmp_path / "notes.md").write_text("# Release notes\n\n" + "\n".join(releases), encoding="utf-8")
    from wikimem.analysis import _older_releases

    sections = load_source(tmp_path / "notes.md", "raw/notes.md", max_bytes=1_000_000).sections
    older = {sections[j].version for j in _older_releases(sections)}
    assert "1.0.0" not in older and "1.0.0rc1" not in older and {"1.1.0", "0.9.0"} <= older, older


def test_how_to_set_a_value_use_a_name_or_what_named_parameters_mean_are_key_facts(tmp_path: Path) -> None:
    text = ("# Quickstart\n\nThe gadget turns objects into data and back.\n\n## Collections\n\n"
            "Set `many=True` when dealing with iterable collections of objects.\n\n"
            "## Read-only fields\n\nIn the context of a web API, the `dump_only` and `load_only` parameters are "
            "conceptually equivalent to read-only and write-only fields.\n\n## Nesting\n\n"
            "You can replace nested data with a single value using the `Pluck` field.\n\n" + FILLER)
    facts = fact_texts(analysed(tmp_path, "quickstart.md", text))
    assert_facts_start_with(facts, ("Set `many=True` when", "In the context of a web API, the `dump_only`",
                                    "You can replace nested data"))


def test_a_table_of_contents_is_not_a_lead(tmp_path: Path) -> None:
    summary = analysed(tmp_path, "SUMMARY.md", "# The Rust Programming Language\n\n"
                                                "[The Rust Programming Language](title.md)\n[Foreword](foreword.md)\n"
                                                "[Introduction](intro.md)\n\n- [Getting Started](start.md)\n"
                                                "- [Installation](install.md)\n")
    assert summary.lead == []


def test_a_first_paragraph_far_into_the_document_gives_way_to_what_opens_it(tmp_path: Path) -> None:
    # a README of badges, a feature list and code, whose first paragraph is a request near its end
    code = "".join(f"    session.get(url_{n})\n" for n in range(60))
    readme = analysed(tmp_path, "README.rst", "Async http client/server framework\n"
                                              "==================================\n\n"
                                              "Key Features\n============\n\n"
                                              "- Supports both client and server side of HTTP protocol.\n"
                                              "- Provides Web-server with middleware and pluggable routing.\n\n"
                                              "Getting started\n===============\n\n.. code-block:: python\n\n" + code +
                                              "\nPowered by\n==========\n\n"
                                              "Feel free to make a Pull Request for adding your link to these pages!\n")
    assert [readme.sentences[i].text for i in readme.lead] == ["Supports both client and server side of HTTP protocol."]
    # a command's page whose opening is a note, its first paragraph a troubleshooting section
    page = analysed(tmp_path, "freeze.rst", "freeze\n======\n\nDescription\n===========\n\n.. note::\n"
                                            "   By default, ``freeze`` omits bootstrap packaging tools so the output "
                                            "focuses on your project's dependencies.\n\n"
                                            "Examples\n========\n\n.. code-block:: shell\n\n" + code +
                                            "\nFixing errors\n=============\n\n"
                                            "The purpose of this section is to provide practical suggestions to users "
                                            "seeing a permission error.\n")
    assert [page.sentences[i].text for i in page.lead] == [
        "Note: By default, `freeze` omits bootstrap packaging tools so the output focuses on your project's dependencies."]
    # near the opening, the first paragraph is the lead as before
    near = analysed(tmp_path, "near.md", "# Tool\n\n- Reads the project file at start-up.\n\n"
                                         "The tool formats the files of a project in place, one at a time.\n")
    assert [near.sentences[i].text for i in near.lead] == [
        "The tool formats the files of a project in place, one at a time."]


def test_ownership_leads_with_its_definition_and_its_rules(ws: Workspace, settings) -> None:
    write(ws, "book/ch04-01-ownership.md", OWNERSHIP)
    write(ws, "book/ch04-02-borrowing.md", BORROWING)
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts/ownership.md").read_text()
    body = page.split("\n# Ownership\n", 1)[1]
    assert body.lstrip().startswith("*Ownership* is a set of rules")
    points = body.split("## Key points", 1)[1].split("\n## ", 1)[0]
    for rule in ("Each value has an *owner*.", "There can only be one owner at a time.",
                 "When the owner goes out of scope, the value will be dropped."):
        assert rule in points
    assert "To illustrate" not in points  # filler is not a key point


def test_a_glossary_entry_leads_over_a_section_that_only_holds_the_name(ws: Workspace, settings) -> None:
    write(ws, "notes/checklist.md", "# Deploy checklist\n\nWe ship with a *canary release*: a new build first "
          "takes 5% of traffic for 30 minutes.\n\n## During the canary\n\nThe canary is healthy when the "
          "error rate stays below 0.5%.\n\nWatch the canary release closely, and the canary dashboards.\n")
    write(ws, "notes/glossary.md", "# Glossary\n\nShort definitions of our words.\n\n## Canary release\n\n"
          "A canary release sends a small share of traffic to a new build before the rest.\n\n"
          "## Rollback\n\nA rollback returns the service to the previous build.\n")
    write(ws, "notes/incident.md", "# Incident\n\nThe canary release caught the fault; the canary "
          "was rolled back.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts/canary-release.md").read_text()
    body = page.split("\n# Canary release\n", 1)[1]
    assert body.lstrip().split("\n")[0 if not body.lstrip().startswith("Also called") else 2].startswith(
        "A canary release sends a small share of traffic")


def test_a_settings_default_is_on_its_outline_line_and_tables_are_kept(ws: Workspace, settings) -> None:
    write(ws, "config.txt", CONFIG)
    write(ws, "operators.md", OPERATORS)
    compile_workspace(ws, settings)
    config = (ws.wiki / "sources/config.md").read_text()
    assert "[tab_width](../../raw/config.txt#L11) = 8" in config
    assert "[raw_enabled](../../raw/config.txt#L18) = enabled (True)" in config
    assert "## Defaults" not in config  # listed once, on the outline
    # a generated reference sets the label in bold ("**Default:** `2`"); a value shown in the
    # block below the label ("**Default:**" alone) is not read as the label's own emphasis
    write(ws, "settings.md", "# Settings\n\n### `keepalive`\n\n**Command line:** `--keep-alive INT`\n\n"
                             "**Default:** `2`\n\nSeconds to wait on a Keep-Alive connection.\n\n"
                             "### `timeout`\n\n**Default**: `30`\n\nWorkers silent longer are killed.\n\n"
                             "### `control_socket`\n\n**Default:**\n\n    $HOME/.acme/acme.ctl\n")
    compile_workspace(ws, settings)
    reference = (ws.wiki / "sources/settings.md").read_text()
    assert "[keepalive](../../raw/settings.md#L7) = `2`" in reference, reference
    assert "[timeout](../../raw/settings.md#L13) = `30`" in reference
    assert "[control_socket](../../raw/settings.md#L17)\n" in reference
    assert '"**Default:**"' not in reference  # the label alone says nothing
    # a section named in words is named for no setting: its default is a fact, not its value
    write(ws, "options.md", "# Options\n\n## Values from Environment Variables\n\n"
                            "The `envvar` parameter defaults to `None` when no prefix is set.\n")
    compile_workspace(ws, settings)
    options = (ws.wiki / "sources/options.md").read_text()
    assert "Variables](../../raw/options.md#L3)\n" in options and " = `None`" not in options
    operators = (ws.wiki / "sources/operators.md").read_text()
    assert "## Tables" in operators
    assert "| `%=` | `var %= expr` | Arithmetic remainder and assignment | `RemAssign` |" in operators
    assert "`\\|\\|`" in operators  # a pipe in code does not split a cell
    assert "[line 5](../../raw/operators.md#L5)" in operators


def test_a_books_group_line_is_its_introduction_not_its_table_of_contents(ws: Workspace, settings) -> None:
    write(ws, "SUMMARY.md", "# The Rust Book\n\n[The Rust Book](title.md)\n[Introduction](intro.md)\n\n"
                            "- [Ownership](own.md)\n- [Borrowing](borrow.md)\n")
    write(ws, "intro.md", "# Introduction\n\nWelcome to *The Rust Book*, an introductory book about Rust. It is long.\n")
    write(ws, "own.md", OWNERSHIP)
    write(ws, "borrow.md", BORROWING)
    compile_workspace(ws, settings)
    index = (ws.wiki / "index.md").read_text()
    assert "Welcome to The Rust Book, an introductory book about Rust." in index
    assert "The Rust Book Introduction" not in index


def test_an_api_name_defined_in_code_is_a_fact_an_examples_variable_is_not(tmp_path: Path) -> None:
    facts = fact_texts(analysed(tmp_path, "db.md", "# Database\n\nThe database is opened once for each request.\n\n"
                                                     "`g` is a special object that is unique for each request.\n\n"
                                                     "The variable named `second` will get the value `2` from index "
                                                     "`[1]` in the array.\n"))
    assert "`g` is a special object that is unique for each request." in facts
    assert not any("named `second`" in f for f in facts)


def test_a_title_that_is_one_hyphenated_name_is_not_split_into_concepts(tmp_path: Path) -> None:
    """A package's README titled "cached-property" is about cached-property: "property" and
    "cached" are fragments of its name, as "py" is of "markdown-it-py"."""
    source = tmp_path / "cached-property.md"
    source.write_text("# cached-property\n\nA decorator for caching properties in classes. A cached property "
                      "is computed once. The property is then stored; every property read after that is "
                      "free, and a property can be reset by deleting it.\n", encoding="utf-8")
    signals = analyze(load_source(source, "raw/cached-property.md", max_bytes=1_000_000)).signals
    assert "cached property" in signals
    assert "property" not in signals and "cached" not in signals


def test_a_sections_facts_share_one_item_and_the_source_line_is_not_repeated(ws: Workspace, settings) -> None:
    """A source page spends its bytes on answers: the facts of one section in a row name the
    section once, and the format (in the front matter) is not said again in the body."""
    write(ws, "book/ownership.md", OWNERSHIP)
    write(ws, "book/borrowing.md", BORROWING)
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources/book-ownership.md").read_text()
    facts = page.split("## Key facts\n", 1)[1].split("\n## ", 1)[0]
    assert facts.count("*Ownership Rules*") == 1
    rules = facts.split("- *Ownership Rules*:\n", 1)[1].splitlines()[:3]
    for line, rule in zip(rules, ("Each value has an *owner*.", "There can only be one owner at a time.",
                                  "When the owner goes out of scope, the value will be dropped."), strict=True):
        assert line.startswith(f'  - "{rule}" ([line ')
    assert "\nformat: markdown\n" in page
    assert "Source: [raw/book/ownership.md](../../raw/book/ownership.md)\n" in page


def test_a_name_joined_by_of_is_one_key_not_its_last_word() -> None:
    """README sections headed "Code of Conduct" made a concept "Conduct": "of" joins a name
    ("code of conduct", "separation of concerns"); other function words still end a phrase."""
    from wikimem.analysis import name_key, phrase_keys, tokens

    assert name_key("Code of Conduct") == "code of conduct"
    assert name_key("Separation of Concerns") == "separation of concern"
    assert "code of conduct" in phrase_keys(tokens("Read our code of conduct first."))
    assert name_key("Code and Conduct") is None
    assert not any(" the " in key for key in phrase_keys(tokens("Read the code the conduct.")))


def test_a_plural_in_ies_folds_to_its_own_singular() -> None:
    """"cookies" folded to "cooky", a key apart from "cookie" (an HTTP client's docs got a page
    concepts/cooky.md; Flask's Cookie page missed every "cookies"), and "series" to "sery"."""
    from wikimem.analysis import tokens

    assert tokens("Cookies and a cookie") == ["cookie", "and", "a", "cookie"]
    assert tokens("A series of libraries, two species, the movies") == \
        ["a", "series", "of", "library", "two", "species", "the", "movie"]


def test_a_short_plural_is_folded_like_any_other() -> None:
    """The Rust book's "Hash Maps" chapter counted "hash maps" apart from every "hash map": a
    four-letter plural is folded as any plural is (the lexicon's word list knows "news")."""
    from wikimem.analysis import _surface, phrase_keys, tokens

    assert tokens("Hash maps hold API keys; the maps and the news") == \
        ["hash", "map", "hold", "api", "key", "the", "map", "and", "the", "news"]
    assert "hash map" in phrase_keys(tokens("Storing Keys with Associated Values in Hash Maps"))
    assert _surface("Storing Keys in Hash Maps", "hash map") == "Hash Maps"


def test_a_name_ending_in_utils_is_no_plural() -> None:
    """Docutils' concept page was concepts/docutil.md: "docutils" folded as a plural."""
    from wikimem.analysis import tokens

    assert tokens("Docutils and coreutils, two tools") == ["docutils", "and", "coreutils", "two", "tool"]


def test_a_titles_spelling_of_a_key_leaves_its_possessive_out() -> None:
    """"Contributor's Guide" titled a concept page "Contributor's"."""
    from wikimem.analysis import _surface

    assert _surface("Contributor's Guide", "contributor") == "Contributor"
    assert _surface("Rust’s Ownership Rules", "rust") == "Rust"
    assert _surface("Lifetimes and `Box<T>`", "lifetime") == "Lifetimes"
    assert _surface("Lifetimes and `Box<T>`", "box") == "`Box<T>`"


def test_a_sentence_keeps_the_marks_that_close_it(tmp_path: Path) -> None:
    """The emphasis, quote or bracket a sentence ends inside closes with it: a bold lead-in
    quoted alone was "**Failures are retried, then left alone." with its emphasis left open."""
    from wikimem.analysis import split_sentences

    source = tmp_path / "notes.md"
    source.write_text("# Notes\n\n- **Failures are retried, then left alone.** A batch that fails is retried later.\n\n"
                      "Dijkstra said that “testing shows the presence of bugs.” That is why we test.\n",
                      encoding="utf-8")
    texts = [s.text for s in split_sentences(load_source(source, "raw/notes.md", max_bytes=1_000_000))]
    assert "**Failures are retried, then left alone.**" in texts
    assert "A batch that fails is retried later." in texts
    assert "Dijkstra said that “testing shows the presence of bugs.”" in texts


def test_a_link_or_an_address_alone_is_no_key_point(ws: Workspace, settings) -> None:
    """README boilerplate ("[Learn more.](https://...)", "Background: https://...") said nothing
    about the concept it was quoted under."""
    for name in ("alpha", "beta", "gamma"):
        write(ws, f"{name}.md", f"# {name.title()}\n\n## Tidelift subscription\n\nThe Tidelift subscription covers "
                                f"the {name} package for enterprise users.\n\n"
                                "[Learn more.](https://tidelift.com/subscription?utm_campaign=tidelift-subscription)\n\n"
                                "Tidelift subscription: https://tidelift.com/x\n\n"
                                "- The Tidelift subscription adds support. *(Optional, with the tidelift extra)*\n")
    compile_workspace(ws, settings)
    page = next((ws.wiki / "concepts").glob("tidelift*.md")).read_text()
    assert "covers the" in page
    assert "Learn more" not in page and "Tidelift subscription: https" not in page
    assert "(Optional" not in page  # an aside in parentheses that is no sentence


def test_a_pointer_elsewhere_is_no_lead_no_key_point_and_no_key_fact(ws: Workspace, settings) -> None:
    """"For more, see Publishing bug fixes." led the 187 corpus's API page: a sentence that only
    sends the reader elsewhere says nothing about the concept it is quoted under."""
    pointers = ["For more, see Publishing bug fixes and Publishing non-breaking changes.",
                "For details about the changes in Widget 1.12, see the Widget 1.12 release notes.",
                "Please refer to the release notes for the complete list of changes.",
                "More details can be found in the gadget reference."]
    for n, name in enumerate(("alpha", "beta", "gamma")):
        write(ws, f"{name}.md", f"# {name.title()} gadgets\n\n{pointers[n]} The gadget registry keeps "
                                f"every {name} gadget the build declares.\n\n## Limits\n\n{pointers[3]} "
                                f"A gadget registry holds at most {100 + n} gadgets of one kind.\n")
    compile_workspace(ws, settings)
    pages = [p.read_text() for p in (ws.wiki / "concepts").glob("*.md") if p.name != "index.md"]
    assert pages
    for page in pages:
        lead = page.split("\n# ", 1)[1].split("\n\n", 2)[1]
        assert "keeps every" in lead or "holds at most" in lead
        assert not any(pointer in page for pointer in pointers)
    source = (ws.wiki / "sources" / "alpha.md").read_text()
    facts = source.split("## Key facts", 1)[1]
    assert "holds at most 100 gadgets" in facts and pointers[3] not in facts


def test_a_title_word_the_text_hardly_says_is_not_what_the_source_is_about(tmp_path: Path) -> None:
    """"Putting It All Together: Futures, Tasks, and Threads" made "Together" a concept of the
    Rust book: the title's other words are what its text talks about."""
    from wikimem.analysis import ABOUT

    text = ("# Putting It All Together: Widgets, Gadgets, and Sprockets\n\n"
            + " ".join(f"A widget {n} turns a gadget, and the gadget drives a sprocket of the widget."
                       for n in range(12))
            + " The parts work well together. Used together, they are quiet.\n")
    source = tmp_path / "together.md"
    source.write_text(text, encoding="utf-8")
    signals = analyze(load_source(source, "raw/together.md", max_bytes=1_000_000)).signals
    assert signals["widget"][0] == ABOUT and signals["gadget"][0] == ABOUT
    assert signals.get("together", [0])[0] < ABOUT


def test_a_title_phrase_the_text_keeps_saying_is_what_the_source_is_about(tmp_path: Path) -> None:
    """"The Request Context" was about "request" and "context", each said three times as often as
    "request context" (mostly of other things), so Flask's request context had no page of its
    own. A phrase the text keeps saying is what its title names; one it says once is not."""
    from wikimem.analysis import ABOUT

    prose = " ".join(f"The request {n} reaches the view, and the context of the app holds a config. "
                     f"A context manager closes the request stream {n}." for n in range(10))
    phrase = " ".join(f"The request context is pushed at step {n}." for n in range(7))
    source = tmp_path / "reqcontext.md"
    source.write_text(f"# The Request Context\n\n{prose} {phrase}\n", encoding="utf-8")
    signals = analyze(load_source(source, "raw/reqcontext.md", max_bytes=1_000_000)).signals
    assert signals["request context"][0] == ABOUT
    assert signals["context"][0] < ABOUT and signals["request"][0] < ABOUT

    once = tmp_path / "blueprints.md"
    once.write_text("# Widget Blueprints\n\n" + " ".join(f"A blueprint {n} registers views." for n in range(12))
                    + " One widget blueprint is shown.\n", encoding="utf-8")
    signals = analyze(load_source(once, "raw/blueprints.md", max_bytes=1_000_000)).signals
    assert signals["blueprint"][0] == ABOUT and signals.get("widget blueprint", [0])[0] < ABOUT


def test_a_concept_is_titled_as_the_text_spells_it(ws: Workspace, settings) -> None:
    """A code name only mentioned (`RequestContext`) merged with the phrase the text writes
    ("request context") titled Flask's page "Requestcontext": the key run together, a spelling no
    text has. The page is titled, and aliased, as the sources write it."""
    for n, name in enumerate(("lifecycle", "testing", "shell")):
        write(ws, f"{name}.md", f"# {name.title()}\n\n## The Request Context\n\n"
                                f"The request context is pushed before the view {n} runs. A `RequestContext` "
                                f"is made for each request. When the request context is popped, the session "
                                f"goes. The request context holds the request {n}.\n")
    compile_workspace(ws, settings)
    pages = {p.name: p.read_text() for p in (ws.wiki / "concepts").glob("*.md")}
    titled = [text for text in pages.values() if "\n# Request" in text and "ontext" in text.split("\n# ", 1)[1][:20]]
    assert titled, sorted(pages)
    assert "Requestcontext" not in "".join(pages.values())
    assert "request-context.md" in pages


def test_a_word_the_text_writes_in_capitals_is_no_capitalised_lowercase_spelling(ws: Workspace, settings) -> None:
    """coverage.py's docs name the `xml` command and the "[xml]" config section in lowercase and
    write XML in their prose: the page was titled "Xml", a spelling no text has."""
    for name in ("report", "config", "changes"):
        write(ws, f"{name}.md", f"# {name.title()}\n\n## xml\n\nThe `xml` command writes a report for tools. "
                                f"The xml settings are read from the config file, section {name}.\n")
    write(ws, "xml.md", "# XML reporting\n\nThe XML report is what continuous integration tools read. "
                        "XML is written to one file.\n")
    compile_workspace(ws, settings)
    pages = {p.name: p.read_text() for p in (ws.wiki / "concepts").glob("*.md")}
    assert "xml.md" in pages, sorted(pages)
    assert "title: XML\n" in pages["xml.md"] and "Xml" not in pages["xml.md"]


def test_a_name_with_its_extension_is_one_word() -> None:
    """coverage.py's docs made a concept page "Py" (26 links) from its own name split at the dot."""
    from wikimem.analysis import tokens

    assert tokens("Coverage.py reads conf.py and node.js files.") == ["coverage.py", "read", "conf.py", "and", "node.js", "file"]
    # a dotted path of names, an abbreviation and a sentence's end are not one
    assert tokens("Call os.path.join, e.g. here. The end.") == ["call", "os", "path", "join", "e", "g", "here", "the", "end"]


def test_a_kind_of_thing_a_source_is_about_is_named(tmp_path: Path) -> None:
    """"Options", "Functions", "Error Handling": technical writing names options and functions
    all the time, so those words were never a concept, and Click's options, the Rust book's
    functions and modules and Flask's errors had no page. A source whose title names one is
    about it; a title where it describes the next word is not ("Class-based Views"), and a
    section or a mention names nothing."""
    from wikimem.analysis import ABOUT

    def signals(title: str, body: str) -> dict:
        source = tmp_path / "doc.md"
        source.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
        return analyze(load_source(source, "raw/doc.md", max_bytes=1_000_000)).signals

    prose = " ".join(f"An option {n} changes how the command behaves, and a class holds it." for n in range(8))
    assert signals("Options", prose)["option"][0] == ABOUT
    assert signals("Basic Commands, Groups, Context", prose)["command"][0] == ABOUT
    assert "class" not in signals("Class-based Views", prose + " A view is a class.")
    assert "option" not in signals("Widgets", f"{prose}\n\n## Options\n\n{prose}")


def test_what_kind_of_page_a_title_says_it_is_is_no_subject(tmp_path: Path) -> None:
    """Click's "Upgrade Guides" made "Guide" a concept, Jinja's "Tricks" "Trick": a page's genre
    is not what it is about."""
    for title, word in (("Upgrade Guides", "guide"), ("Tricks", "trick"), ("Tips and Recipes", "recipe")):
        source = tmp_path / "doc.md"
        source.write_text(f"# {title}\n\n" + " ".join(f"This {word} {n} shows a widget." for n in range(8)) + "\n",
                          encoding="utf-8")
        assert word not in analyze(load_source(source, "raw/doc.md", max_bytes=1_000_000)).signals


def test_a_kind_of_thing_is_a_concept_where_a_source_is_about_it(ws: Workspace, settings) -> None:
    """A chapter titled "Functions" makes the concept; sources that only mention functions, or
    head a section with them, do not."""
    write(ws, "book/functions.md", "# Functions\n\nFunctions are everywhere in this code. A function "
                                   "takes parameters and returns a value. Each function has a name.\n")
    for n, name in enumerate(("structs", "enums", "traits")):
        write(ws, f"book/{name}.md", f"# {name.title()}\n\nA {name[:-1]} groups data. A function can take "
                                    f"a {name[:-1]} {n}. Functions may return one too.\n\n## Functions\n\n"
                                    f"Each function here uses a {name[:-1]}.\n")
        write(ws, f"notes/{name}.md", f"# {name.title()} notes\n\nA {name[:-1]} note {n}. A function "
                                      f"returns it. Functions call functions.\n\n## Functions\n\nMore "
                                      f"functions, each function small.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts" / "function.md").read_text()
    assert "title: Functions" in page and "Main source: [Functions](../sources/book-functions.md)" in page
    # a chapter that only uses functions does not link the page: every chapter would
    assert "concepts/function.md" not in (ws.wiki / "sources" / "book-structs.md").read_text()
    assert "concepts/function.md" in (ws.wiki / "sources" / "book-functions.md").read_text()
    (ws.raw / "book" / "functions.md").unlink()
    compile_workspace(ws, settings)
    assert not (ws.wiki / "concepts" / "function.md").exists()


def test_a_kind_of_thing_takes_no_other_concepts_place() -> None:
    """The Rust book chose Functions, Types, Modules... and lost RefCell and interior mutability
    at the end of its budget: the kinds of things (a few words) come on top of it."""
    from collections import Counter

    from wikimem.backends.offline_concepts import budget, choose_in

    n = 12
    limit = budget(n)
    names = [f"gadget{a}{b}" for a in "bcdfghjk" for b in "lmnpqrtv"][: limit + 3]  # no plural among them

    class Stats(NoPhrases):
        def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
            rows = [("function", 7, 5, 1, 1), ("type", 6, 5, 1, 1)]  # the strongest, about them
            return (rows + [(k, 4, 10, 2, 1) for k in names])[:limit]

        def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
            return []

        def surfaces(self, collection: str, keys) -> dict[str, Counter[str]]:
            return {}

    chosen = {c.key for c in choose_in(Stats(), "docs", n)}
    assert {"function", "type"} <= chosen
    assert chosen - {"function", "type"} == set(names[:limit])


def test_a_lead_does_not_introduce_what_the_page_does_not_show(ws: Workspace, settings) -> None:
    """"A *trait bound* ...; it looks like this:" led the Rust book's Trait bound page, the code it
    introduces nowhere on the page; "Images are a common use for substitution references:" and a
    piece of a sentence, "(PNG or SVG) like e.g. Wikipedia.", led others."""
    write(ws, "a.md", "# Gadget bounds\n\nA *gadget bound* is a limit on what a widget accepts, and it looks "
                      "like this:\n\n```\nfn f<T: Gadget>(t: T)\n```\n\nThe gadget bound is checked early.\n")
    write(ws, "b.md", "# Widgets\n\nA gadget bound keeps widgets apart. Every gadget bound is checked.\n")
    write(ws, "c.md", "# Sprockets\n\nSprockets need no gadget bound. A gadget bound is rare here.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts" / "gadget-bound.md").read_text()
    lead = next(block for block in page.split("\n# ", 1)[1].split("\n\n")[1:] if not block.startswith("Also called"))
    assert lead.startswith("A *gadget bound* is a limit on what a widget accepts …"), lead
    assert "looks like this" not in page

    from wikimem.analysis import Sentence
    from wikimem.backends.offline_pages import _defines_plainly, _lead_penalty

    assert _lead_penalty("Images are a common use for substitution references:") < _lead_penalty(
        "Images are pictures a document shows.")
    assert not _defines_plainly(Sentence("(PNG or SVG) like e.g. Wikipedia.", 3, "para", 0, "images", None))
    assert _defines_plainly(Sentence("reStructuredText is a plaintext markup syntax.", 3, "para", 0, None, None))


def test_one_name_is_one_page_across_collections() -> None:
    """The 187 corpus had concepts/panic.md (Go's panic) and concepts/panic-2.md (the Rust book's
    `panic!`), which lint then reported as two pages for one thing; and the Sphinx trees'
    "Configuration File" was also called "Configuration", the title of another page."""
    from wikimem.backends.offline_concepts import choose_concepts

    rows = {"go": [("panic", 6, 10, 2, 1), ("goroutine", 5, 10, 2, 1)],
            "rust": [("panic!", 6, 10, 2, 1), ("configuration file", 6, 10, 2, 1), ("configuration", 4, 3, 1, 0),
                     ("ownership", 5, 10, 2, 1)],
            "web": [("configuration", 6, 10, 2, 1), ("blueprint", 5, 10, 2, 1)]}
    spellings = {"panic": "Panic", "panic!": "`panic!`", "configuration file": "Configuration file",
                 "configuration": "Configuration"}

    concepts = choose_concepts(Spelled(rows, {name: spellings for name in rows}))
    panic = [c for c in concepts.values() if "panic" in c.keys or "panic!" in c.keys]
    assert len(panic) == 1 and {"panic", "panic!"} <= set(panic[0].keys)
    titles = {c.title.lower() for c in concepts.values()}
    for concept in concepts.values():
        assert not any(a.lower() in titles - {concept.title.lower()} for a in concept.aliases), concept


def test_an_alias_is_no_other_pages_title_in_another_number() -> None:
    """The 187 corpus's "HashMap<K, V>" was also called "Maps" (the lone word "map" merged in),
    beside a page "Map": lint reported two pages for one thing. An alias that is another page's
    title but for its case, number or punctuation goes, as one that is that title does."""
    from wikimem.backends.offline_concepts import choose_concepts
    from wikimem.lexicon import title_key

    rows = {"book": [("hash map", 6, 10, 2, 1), ("map", 4, 3, 1, 0), ("ownership", 5, 10, 2, 1)],
            "notes": [("map", 6, 10, 2, 1), ("goroutine", 5, 10, 2, 1)]}
    concepts = choose_concepts(Spelled(rows, {"book": {"hash map": "HashMap", "map": "Maps"}, "notes": {"map": "Map"}}))
    hashmap = next(c for c in concepts.values() if "hash map" in c.keys)
    assert "map" in hashmap.keys and "Map" in {c.title for c in concepts.values()}, concepts
    assert "Maps" not in hashmap.aliases, hashmap
    titles = {title_key(c.title): c.key for c in concepts.values()}
    for concept in concepts.values():
        assert all(titles.get(title_key(a), concept.key) == concept.key for a in concept.aliases), concept


def test_a_word_and_its_forms_are_one_page_though_the_words_stem_is_shorter() -> None:
    """An unseen set had concepts/filter.md and concepts/filtering.md: "filtering" stems to
    "filter", while "filter" itself stems to "filt", so the two were never seen as one word's
    forms ("deploy" and "deploying" always were); "film" is a word of its own."""
    from collections import Counter

    from wikimem.backends.offline_concepts import choose_concepts

    rows = [("filtering", 5, 5, 1, 1), ("filter", 5, 4, 1, 1), ("deploy", 4, 4, 1, 1), ("deploying", 3, 4, 1, 1),
            ("film", 4, 4, 1, 1), ("template", 6, 5, 1, 1)]

    class Stats(NoPhrases):
        def collections(self) -> dict[str, int]:
            return {"docs": 12}

        def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
            return rows[:limit]

        def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
            return []

        def surfaces(self, collection: str, keys) -> dict[str, Counter[str]]:
            return {k: Counter({k.capitalize(): 3}) for k in keys}

    groups = sorted(tuple(sorted(c.keys)) for c in choose_concepts(Stats()).values())
    assert groups == [("deploy", "deploying"), ("film",), ("filter", "filtering"), ("template",)]


def test_an_acronyms_last_s_is_no_plural() -> None:
    """lint reported httpx's HTTP and HTTPS pages as two pages for one thing."""
    from wikimem.lint.extract import title_key

    assert title_key("HTTPS") != title_key("HTTP")
    assert title_key("APIs") == title_key("API") and title_key("Smart pointers") == title_key("smart pointer")


def test_a_concepts_own_name_says_what_defines_it() -> None:
    """"pointer", merged into Smart Pointers, is a broader thing: a source's definition of a
    pointer does not lead the Smart Pointers page."""
    from wikimem.backends.offline_concepts import Concept

    concept = Concept("smart pointer", "Smart Pointers", ["Pointer"], "smart-pointer",
                      keys=("pointer", "smart pointer", "smart pointers"))
    assert concept.own_keys == ("smart pointer", "smart pointers")
    assert Concept("hash map", "Hash maps", [], "hash-map", keys=("hash map", "hashmap")).own_keys == ("hash map", "hashmap")
    assert Concept("ownership", "Ownership", [], "ownership").own_keys == ("ownership",)


def test_the_runs_of_list_items_are_found_in_one_pass() -> None:
    from wikimem.analysis import Sentence, _item_runs

    kinds = ["para", "item", "item", "para", "item", "heading", "item", "item", "item"]
    runs = _item_runs([Sentence(f"s{i}", i, kind) for i, kind in enumerate(kinds)])
    assert runs == {1: (1, 2), 2: (1, 2), 4: (4, 4), 6: (6, 8), 7: (6, 8), 8: (6, 8)}


def test_a_concepts_changes_over_time_reach_its_newest_release(ws: Workspace, settings) -> None:
    """Ten old release notes that say much about the gizmo, the newest that says one thing: the
    concept page's changes over time still give the newest release's statement first."""
    for minor in range(10):
        write(ws, f"notes/widget-1.{minor}.md", (
            f"---\ntitle: Widget 1.{minor} Release Notes\ndate: 2015-0{1 + minor % 9}-1{minor % 9}\n---\n\n"
            f"# Widget 1.{minor} Release Notes\n\n## Gizmo\n\n"
            f"The gizmo gained knob number {minor} in this release. The gizmo is faster. "
            f"The gizmo manual lists knob {minor}.\n"))
    write(ws, "notes/widget-2.0.md", (
        "---\ntitle: Widget 2.0 Release Notes\ndate: 2025-06-01\n---\n\n# Widget 2.0 Release Notes\n\n"
        "## Ports\n\nThe gizmo now charges over USB-C instead of its barrel plug.\n"))
    for n, thing in enumerate(("sprocket", "flange", "gasket", "lever", "valve", "spring", "bearing",
                               "piston", "rotor", "nozzle", "hinge", "clamp")):
        write(ws, f"notes/parts-{n}.md", f"# The {thing}\n\nThe {thing} holds the frame. A {thing} wears out "
                                         f"after a year of daily use, and the shop replaces it for free.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts/gizmo.md").read_text()
    changes = page.split("## Changes over time", 1)[1]
    first = changes.strip().split("\n", 1)[0]
    assert first.startswith("- **2.0**") and "USB-C" in first, first


def test_a_describing_word_that_only_modifies_is_not_what_a_title_is_about(tmp_path: Path) -> None:
    """Sphinx's "Markup to shorten external links" made a concept "External", "Global
    substitutions" one "Global": a describing word before the noun it modifies is not what the
    title is about; the phrase and its noun are. A noun before a noun ("LaTeX customization")
    and a word before a generic one ("Configuration Handling") still are."""
    def signals(title: str, body: str) -> dict:
        source = tmp_path / "page.rst"
        source.write_text(f"{title}\n{'=' * len(title)}\n\n{body}\n", encoding="utf-8")
        return analyze(load_source(source, "raw/page.rst", max_bytes=1_000_000)).signals

    found = signals("Markup to shorten external links", "Define external links once. The external link "
                    "roles shorten every external link to a site. Links are checked.")
    assert "external link" in found and "external" not in found
    found = signals("Global substitutions", "Global substitutions are defined once. A substitution is "
                    "global when it is in the configuration. Global names are shared.")
    assert "global substitution" in found and "global" not in found
    found = signals("LaTeX customization", "LaTeX output is customized by settings. The LaTeX builder "
                    "writes LaTeX files; customization is optional.")
    assert "latex" in found


def test_a_sphinx_index_pair_is_one_term(tmp_path: Path) -> None:
    """`.. index:: pair: automatic; documentation` indexes "automatic documentation" under both
    of its words: the pair is the term (Sphinx's own docs made a concept "Automatic" of it). A
    main entry's "!" and an argument running over several lines are read as Sphinx reads them."""
    source = tmp_path / "autodoc.rst"
    source.write_text("Autodoc\n=======\n\n.. index:: pair: automatic; documentation\n"
                      "           single: docstring\n"
                      ".. index:: ! pair: global; substitutions\n\n"
                      "Autodoc pulls in documentation from docstrings.\n", encoding="utf-8")
    keywords = [term for term, _line in load_source(source, "raw/autodoc.rst", max_bytes=1_000_000).keywords]
    assert keywords == ["automatic documentation", "docstring", "global substitutions"]


def test_a_concept_named_in_code_then_words_keeps_its_spelling() -> None:
    """A concept named "`typer` command" was titled "Typer` command": only a name wholly in
    code loses its backquotes."""
    from wikimem.backends.offline_concepts import title_of

    assert title_of("`typer` command") == "`typer` command"
    from wikimem.analysis import _surface

    assert _surface("`typer` command", "typer command") == "`typer` command"
    assert _surface("Use the `typer` command", "typer command") == "`typer` command"
    assert title_of("`Box<T>`") == "Box<T>"
    assert title_of("`template:`") == "template"  # a code name introducing what follows
    # a cross-reference left in code with its target: an unseen changelog's "`Converter
    # <cattrs.Converter>` now uses ..." titled a page "Converter \\<cattrs.Converter>"
    assert title_of("`Loop <acme.Loop>`") == "Loop" and title_of("`Vec<u8>`") == "Vec<u8>"
    # a name with capitals inside keeps its spelling (mdBook's guide titled a page "MdBook")
    assert title_of("mdBook") == "mdBook" and title_of("macOS versions") == "macOS versions"
    assert title_of("rollback") == "Rollback" and title_of("error handling") == "Error handling"
    assert title_of("hash maps") == "Hash maps"
    # a path is a package's or a file's name: no text writes "Html/template"
    assert title_of("html/template") == "html/template" and title_of("archive/tar package") == "archive/tar package"


NAMES = ("north", "south", "east", "west", "upper", "lower", "inner", "outer", "front", "back", "left", "right")
LONG_GUIDE = "\n\n".join([
    "# Gearbox guide",
    "Gearbox moves widgets between the stations of a plant.",
    "## Installing",
    "Gearbox will work with Widgetlib as of version **2.0.0**.",
    *[f"The installer copies the {n} part of the plant layout into the working folder." for n in NAMES],
    "## Caching",
    "Cached layouts expire after 1 hour.",
    *[f"The cache keeps the {n} layout beside the others until the plant is restarted." for n in NAMES],
    "## Colours",
    "Set `GEARBOX_NO_COLOR` to print the plant map without colours.",
    *[f"The plant map shows the {n} station in the colour of its line." for n in NAMES],
    "## MAX_STATIONS",
    "The number of stations the plant map draws before it folds the rest.",
    *[f"Each {n} station is drawn as a box with its name." for n in NAMES],
])


def test_a_long_documents_page_keeps_each_sentence_that_states_a_version_a_unit_a_name(tmp_path: Path) -> None:
    """The sentences people ask about are key facts however little else they say and however
    long the document (a front page's version requirement, an expiry, an environment variable,
    what a setting a section is named for is)."""
    facts = fact_texts(analysed(tmp_path, "guide.md", LONG_GUIDE))
    assert "Gearbox will work with Widgetlib as of version **2.0.0**." in facts
    assert "Cached layouts expire after 1 hour." in facts
    assert "Set `GEARBOX_NO_COLOR` to print the plant map without colours." in facts
    assert "The number of stations the plant map draws before it folds the rest." in facts
    # not every sentence: the narration around them stays in the document
    assert not any(f.startswith(("The installer copies", "The cache keeps", "Each ")) for f in facts)


FIELDS = """Model fields
============

Each field class has its own section.

``SlugField``
-------------

A slug is a short label for something, containing only letters and numbers.

If ``max_length`` is not specified, a default length of 50 is used.

``URLField``
------------

A field for a URL, validated by ``URLValidator``.

If you don't specify ``max_length``, a default of 200 is used.

``EmailField``
--------------

A field that checks that the value is a valid email address.

The ``max_length`` argument defaults to 254 for this field.
"""

FORMS = """Form fields
===========

Form fields validate what a form receives.

``CharField``
-------------

A text field; ``max_length`` and ``min_length`` bound its length when they are given.

``max_length``
--------------

The most characters a value may have; ``max_length`` is checked by ``MaxLengthValidator``.
"""


def test_a_key_point_says_of_which_field_it_speaks(ws: Workspace, settings) -> None:
    """"a default length of 50" says nothing of max_length unless the page says of which field."""
    write(ws, "ref/models.rst", FIELDS)
    write(ws, "ref/forms.rst", FORMS)
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts" / "max-length.md").read_text()
    points = page.split("## Key points", 1)[1].split("\n## ", 1)[0]
    assert '*`SlugField`*: "If `max_length` is not specified, a default length of 50 is used."' in points, points
    assert '*`URLField`*: "If you don\'t specify `max_length`, a default of 200 is used."' in points, points


def test_a_name_used_for_another_thing_in_another_collection_says_nothing_on_its_page(ws: Workspace, settings) -> None:
    """A "broker" in a message queue's docs and a "broker" in an insurance office's notes are two
    things: one page speaks of one of them, and the other is only listed."""
    for n, topic in enumerate(("routing", "queues", "workers")):
        write(ws, f"queue/{topic}.md", f"# {topic.title()}\n\nThe broker stores each message of the {topic} until a "
                                       f"worker takes it from the queue.\n\nA broker is a server that keeps message "
                                       f"queues for the {topic} and hands messages to consumers.\n\nThe broker "
                                       f"acknowledges message {n} once the worker finished the task.\n")
    for topic in ("claims", "policies"):
        write(ws, f"office/{topic}.md", f"# {topic.title()}\n\nThe broker signs each insurance policy for the "
                                        f"customer of the {topic} desk.\n\nA broker is a licensed agent who sells "
                                        f"insurance contracts to households and firms.\n\nThe broker earns a "
                                        f"commission on every premium the household pays.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts" / "broker.md").read_text()
    said = page.split("## Related", 1)[0].split("## Also mentioned in", 1)[0]
    quoted = re.findall(r"\(\.\./\.\./raw/(\w+)/", said)
    assert quoted and len(set(quoted)) == 1, said


def test_a_sentence_that_names_a_longer_concept_is_not_about_the_shorter_one() -> None:
    from wikimem.backends.offline_pages import _without

    assert " server " not in _without(" the development server is multithreaded ", [" development server "])
    assert " server " in _without(" the server and the development server ", [" development server "])


def test_a_name_in_code_with_its_kind_is_a_name_the_document_introduces(tmp_path: Path) -> None:
    text = "\n\n".join(["# Checking migrations", *[f"The {n} part of a migration is compared with the database."
                                                    for n in NAMES],
                        "To automate this, Gearbox provides the `gearbox check` command.",
                        "Gearbox makes this easy via the `--sql` option passed to any `upgrade` command.",
                        "You do this by passing a *layout_transformer* hook to `plant()`.",
                        "Shutdown should be accomplished using the TERM signal.",
                        "The default port is 5555, but you can change this using the port argument:",
                        "    gearbox serve --port 8080",
                        "We then call `foo` with two values."])
    facts = fact_texts(analysed(tmp_path, "check.md", text))
    assert "To automate this, Gearbox provides the `gearbox check` command." in facts
    assert "Gearbox makes this easy via the `--sql` option passed to any `upgrade` command." in facts
    assert "You do this by passing a *layout_transformer* hook to `plant()`." in facts
    assert "Shutdown should be accomplished using the TERM signal." in facts
    # an answer that introduces code the page does not show still says its figure
    assert "The default port is 5555, but you can change this using the port argument:" in facts
    assert "We then call `foo` with two values." not in facts


def test_a_pages_date_cites_the_line_that_states_it(ws: Workspace, settings) -> None:
    write(ws, "releases/2.1.txt", "Gearbox 2.1 release notes\n=========================\n\n*November 3, 2026*\n\n"
                                  "Gearbox 2.1 fixes two crashes in the scheduler.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "releases-2-1.md").read_text()
    assert "· [2026-11-03](../../raw/releases/2.1.txt#L4)" in page, page


def test_a_quote_over_two_lines_cites_both(ws: Workspace, settings) -> None:
    write(ws, "setup.md", "# Setup\n\nGearbox moves widgets between the stations of a plant.\n\n"
                          "Gearbox reads its settings from a module. Do this by using an environment\n"
                          "variable, `GEARBOX_SETTINGS_MODULE`.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "setup.md").read_text()
    assert "`GEARBOX_SETTINGS_MODULE`.\" ([line 5](../../raw/setup.md#L5-L6))" in page, page


def test_a_fact_shows_the_short_command_it_introduces(ws: Workspace, settings) -> None:
    """"These can be listed using the `list_templates` command::" says how only with its command:
    a console session's commands (not its output), or code as short, come with the fact, cited."""
    write(ws, "tutorial.rst", "Tutorial\n========\n\nThe gearbox keeps its migrations in one folder.\n\n"
                              "Gearbox includes other environment templates. These can be listed out using the "
                              "``list_templates`` command::\n\n    $ gearbox list_templates\n    Available templates:\n\n"
                              "    generic - Generic configuration.\n    async - With an async driver.\n\n"
                              "Looking inside the file::\n\n    def upgrade():\n        pass\n        pass\n\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "tutorial.md").read_text()
    assert '"These can be listed out using the `list_templates` command:" `$ gearbox list_templates` ' \
           '([line 6](../../raw/tutorial.rst#L6-L8))' in page, page
    assert "Available templates" not in page and "def upgrade" not in page
    # ... as a `.. code-block::` directive introduces it, its options and blank lines between
    write(ws, "build.rst", "Build\n=====\n\nThe build turns sources into documents.\n\nRunning it\n----------\n\n"
                           "A build is started with the ``gearbox-build`` program:\n\n.. code-block:: console\n"
                           "   :caption: a first build\n\n   $ gearbox-build -M html sourcedir outputdir\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "build.md").read_text()
    assert '"A build is started with the `gearbox-build` program:" `$ gearbox-build -M html sourcedir outputdir`' in page
    # ... and as tabs show it, one a format: the first tab's code, not its title ("gearbox.ini")
    write(ws, "imports.rst", "Imports\n=======\n\nThe gearbox checks every import it finds.\n\n"
                             "You can silence the errors of one library by adding the following section to "
                             "your config file:\n\n.. tab:: gearbox.ini\n\n    .. code-block:: ini\n\n"
                             "        [gearbox-foobar.*]\n        ignore_missing = True\n\n"
                             ".. tab:: pyproject.toml\n\n    .. code-block:: toml\n\n"
                             "        [[tool.gearbox.overrides]]\n        module = [\"foobar.*\"]\n        ignore_missing = true\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "imports.md").read_text()
    assert '"You can silence the errors of one library by adding the following section to your config file:" ' \
           '`[gearbox-foobar.*]` `ignore_missing = True`' in page, page


def test_every_term_of_a_long_reference_keeps_its_own_answers(tmp_path: Path) -> None:
    # forty settings under one heading: each keeps what it is and its own figures, not only the
    # few that win the section's share; a term with much to say keeps more, past its own share
    entries = []
    for n in range(40):
        entries += [f".. confval:: GEARBOX_SETTING_{n}", "",
                    f"   The number of widgets the gearbox moves in phase {n}.", "",
                    f"   Each phase must finish within {n + 2} seconds or the scheduler stops it.", "",
                    f"   It is set with the ``GEARBOX_ENV_{n}`` environment variable.", ""]
    text = "Settings\n========\n\nThe gearbox reads these settings at start-up.\n\nAll settings\n------------\n\n" \
        + "\n".join(entries)
    facts = fact_texts(analysed(tmp_path, "settings.rst", text))
    for n in range(40):
        assert any(f.startswith(f"Each phase must finish within {n + 2} seconds") for f in facts), (n, facts)
        assert any(f.startswith(f"The number of widgets the gearbox moves in phase {n}.") for f in facts), n


def test_a_sentence_may_start_with_a_code_span(tmp_path: Path) -> None:
    # "... end with `# fmt: on`. `# fmt: skip` can be mixed ...": two sentences, the second
    # opening on a code span; read as one they passed the length a fact may have
    text = ("# Basics\n\nThe formatter rewrites whole files.\n\n## Ignoring code\n\n"
            "The formatter will not reformat lines that contain `# fmt: skip` or blocks that start with "
            "`# fmt: off` and end with `# fmt: on`. `# fmt: skip` can be mixed with other pragmas and comments "
            "either with multiple comments or with a semicolon between them, and the formatter keeps all of "
            "them in place on the same line as they were written, in the order they were written, whatever "
            "the line's length, since the pragmas of other tools must stay where those tools look for them.\n\n"
            + FILLER)
    analysis = analysed(tmp_path, "basics.md", text)
    texts = [s.text for s in analysis.sentences]
    assert any(t.endswith("end with `# fmt: on`.") for t in texts), texts
    assert any(t.startswith("`# fmt: skip` can be mixed") for t in texts), texts


def test_code_a_sentence_says_holds_the_defaults_comes_with_it_whole(ws: Workspace, settings) -> None:
    """"Using the defaults is equivalent to:" then the configuration: the defaults are in the code,
    so the fact shows it (up to DEFAULTS_CODE_LINES lines); other long code stays in raw/."""
    write(ws, "start.md", "# Getting started\n\nThe gearbox logs to standard output out of the box.\n\n"
                          "Using the defaults, as above, is equivalent to:\n\n```python\ngearbox.configure(\n"
                          "    processors=[gearbox.add_level, gearbox.Renderer()],\n    wrapper_class=gearbox.Filtering(0),\n"
                          "    cache_on_first_use=False,\n)\n```\n\nA custom setup looks like this:\n\n```python\n"
                          "gearbox.configure(\n    processors=[],\n    wrapper_class=None,\n    cache_on_first_use=True,\n)\n```\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources" / "start.md").read_text()
    assert '"Using the defaults, as above, is equivalent to:" `gearbox.configure(` ' in page, page
    assert "`wrapper_class=gearbox.Filtering(0),`" in page and "(../../raw/start.md#L5-L12)" in page, page
    assert "cache_on_first_use=True" not in page


def test_what_each_described_option_does_is_a_key_fact_under_its_name(ws: Workspace, settings) -> None:
    """A reference page of options and settings keeps, for each one, the sentence that says what
    it does, ahead of its version notes, and names it where the sentence does not (Sphinx's
    own `sphinx-build` and configuration pages kept the version notes, and "The documented
    project's name." under its section's title)."""
    options = "".join(
        f".. option:: -{letter}, --{name}\n\n   {does}\n\n"
        f"   .. versionchanged:: 7.3\n      Add ``--{name}`` long option.\n\n"
        f"   .. versionchanged:: 8.{n}\n      The ``--{name}`` option takes a value.\n\n"
        for n, (letter, name, does) in enumerate([
            ("a", "write-all", "Write every output file, not only those of changed sources."),
            ("j", "jobs", "Distribute the build over *N* processes in parallel."),
            ("q", "quiet", "Print nothing on standard output, only warnings and errors."),
            ("c", "conf-dir", "Read the configuration file from the given directory."),
            ("t", "tag", "Define the tag for only directives."),
            ("n", "nitpicky", "Warn about every reference whose target is missing."),
            ("W", "fail-on-warning", "Exit with status 1 when a warning was printed."),
        ]))
    write(ws, "build.rst", "Build\n=====\n\nThe build command turns sources into documents.\n\nOptions\n-------\n\n" + options +
          "Project information\n-------------------\n\n.. confval:: project\n   :type: ``str``\n\n"
          "   The documented project's name.\n\n.. confval:: author\n   :type: ``str``\n\n"
          "   The name of the ``author`` of the documents.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources/build.md").read_text()
    facts = page.split("## Key facts\n", 1)[1].split("\n## ", 1)[0]
    assert '- `-j`' in facts and '"Distribute the build over *N* processes in parallel."' in facts
    assert '- `-a`' in facts and '"Write every output file, not only those of changed sources."' in facts
    assert "`-a,`" not in page  # an option's first form, without the comma that lists the next
    assert '- `project`: "The documented project\'s name."' in facts  # a possessive is no name
    assert '`author`: "' not in facts  # a sentence that names its term needs no label


def test_a_glossary_leads_with_the_terms_it_defines(ws: Workspace, settings) -> None:
    """A glossary that opens on its first entry: its lead (and its catalog line) said "A class
    (inheriting from Builder) that takes parsed documents ...", which alone names nothing."""
    write(ws, "glossary.rst", (
        "Glossary\n========\n\n.. glossary::\n\n"
        "   builder\n      A class that takes parsed documents and performs an action on them.\n\n"
        "   directive\n      A markup element that marks a block of content with special meaning.\n\n"
        "   environment\n      A structure where information about all documents is saved.\n\n"
        "   role\n      An inline markup element that marks a piece of text.\n"))
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources/glossary.md").read_text()
    assert "# Glossary\n\nDefines 4 terms: builder, directive, environment, role.\n" in page
    facts = page.split("## Key facts\n", 1)[1].split("\n## ", 1)[0]
    assert '- `builder`: "A class that takes parsed documents and performs an action on them."' in facts


def test_what_each_term_is_is_kept_however_many_answers_its_section_has(ws: Workspace, settings) -> None:
    """What each described attribute is takes no room from its section's answers, and when its
    first line cannot be read alone ("Only for retries"), its next sentence says what it is
    (celery's `Task.max_retries` lost "The maximum number of attempted retries" this way)."""
    described = [("max_retries", "The maximum number of attempted retries before giving up."),
                 ("rate_limit", "The number of tasks that may run in a given time frame."),
                 ("time_limit", "The hard time limit for this task, after which it is killed."),
                 ("soft_time_limit", "The soft time limit for this task, which it may catch."),
                 ("priority", "The priority this task is sent with to its queue."),
                 ("expires", "The time after which the task is not to be run any more."),
                 ("serializer", "The name of the serializer this task's messages use."),
                 ("compression", "The name of the compression its messages use on the wire."),
                 ("acks_late", "Whether the message is acknowledged after the task ran.")]
    attributes = "".join(
        f".. attribute:: Task.{name}\n\n   Only for workers\n\n   {what}\n   It must be at least {n} seconds.\n"
        f"   It requires at least {n} MB of memory.\n\n" for n, (name, what) in enumerate(described, start=3))
    write(ws, "tasks.rst", "Tasks\n=====\n\nA task is a function the worker runs.\n\nOptions\n-------\n\n" + attributes)
    compile_workspace(ws, settings)
    page = (ws.wiki / "sources/tasks.md").read_text()
    for _, what in described:
        assert f'"{what}"' in page, what


def test_an_options_default_said_in_its_description_is_its_default(tmp_path: Path) -> None:
    # a command-line reference states defaults in prose: "The default option is `normal`",
    # "Specifying `--jobs 0` (default) disables ..."
    text = ("Command line\n============\n\nThe tool's flags.\n\n"
            ".. option:: --follow {normal,skip}\n\n   Adjusts how imports are followed. The default option is ``normal``: "
            "every module is read.\n\n"
            ".. option:: --jobs N\n\n   Checks in N worker processes. Specifying ``--jobs 0`` (default) disables "
            "parallel checking.\n\n"
            ".. option:: --color\n\n   Colours the output, which is useful in a terminal that shows colours.\n")
    rows = {row[0]: row[1] for row in analysed(tmp_path, "cli.rst", text).defaults}
    assert rows == {"--follow": "`normal`", "--jobs": "`0`"}, rows


def test_a_default_in_a_parameter_list_is_the_default_of_the_item_it_describes(tmp_path: Path) -> None:
    # a Markdown parameter list under a section named for a class: each item opens on the
    # parameter's name, and its "Defaults to ..." sentence is that parameter's default, told
    # apart from another class's parameter of the same name; a sentence that names its subject
    # just before "defaults to" is that subject's
    text = ("# Middleware\n\nWhat the app wraps requests in.\n\n## RetryMiddleware\n\nRetries failed requests.\n\n"
            "* `max_age` - How long an answer is cached, in seconds. Defaults to `600`.\n"
            "* `attempts` - How often to try. Defaults to `3`.\n\n"
            "## CacheMiddleware\n\nCaches answers.\n\n"
            "* `max_age` - Cache expiry time in seconds. Defaults to 2 weeks.\n\n"
            "## Errors\n\nThe `ErrorMiddleware` implementation defaults to plain-text responses.\n\n"
            "## Timeout\n\nA request that takes too long fails. Defaults to 5 seconds.\n")
    rows = [(row[0], row[1]) for row in analysed(tmp_path, "middleware.md", text).defaults]
    assert rows == [("`max_age` (RetryMiddleware)", "`600`"), ("`attempts` (RetryMiddleware)", "`3`"),
                    ("`max_age` (CacheMiddleware)", "2 weeks"), ("`ErrorMiddleware`", "plain-text responses"),
                    ("Timeout", "5 seconds")], rows


def test_a_default_in_an_item_that_opens_on_what_a_setting_does_is_that_settings(tmp_path: Path) -> None:
    # "`tasks.dedupe` controls deduping and defaults to `True`": the item opens on the setting's
    # name and what it does, its default in the same sentence or a later one of the item
    text = ("Configuration\n=============\n\nDefault configuration values\n----------------------------\n\n"
            "- The ``tasks`` config tree holds settings relating to task execution.\n\n"
            "    - ``tasks.dedupe`` controls deduping and defaults to ``True``.\n"
            "    - ``sudo.prompt`` holds the sudo password prompt text, which is supplied to ``sudo -p``.\n"
            "      Default: ``[sudo] password:``.\n")
    rows = [(row[0], row[1]) for row in analysed(tmp_path, "configuration.rst", text).defaults]
    assert rows == [("`tasks.dedupe`", "`True`"), ("`sudo.prompt`", "`[sudo] password:`")], rows


def test_what_an_older_release_renamed_is_kept_with_what_it_replaced() -> None:
    from wikimem.analysis import _replaces

    # a rename says what replaced a name, as "instead of" does: an older release keeps it
    assert _replaces("Coq renamed to Rocq (#2883, #2908)")
    assert _replaces("`Group.resultcallback` is renamed to `result_callback`.")
    assert _replaces("Rename `VerifiedHTTPSConnection` to `HTTPSConnection` (Pull #1805)")
    # the kind of thing between its name and the verb (an unseen changelog's older release)
    assert _replaces("Pool database `close_all()` method renamed to `close_idle()` to better reflect the behavior.")
    assert _replaces("The `timeout` option has been renamed to `connect_timeout`.")
    assert _replaces("Replace `docid` implicit primary key on legacy `Index` (v4) with `rowid`, which is equivalent.")
    assert not _replaces("Replace the cable with a shorter one.")
    assert not _replaces("The option was renamed to make it clearer.")
    assert not _replaces("Uploaded files are renamed to their hash.")


def test_a_table_with_a_default_column_states_each_rows_default(tmp_path: Path) -> None:
    # an extension's options table: each row's option with its cell under "Default", told apart
    # by the page it is on; a table without such a column, and a row named in words, state none
    text = ("# Keys\n\nStyles keyboard keys.\n\n## Options\n\n"
            "Option       | Type   | Default        | Description\n"
            "------------ | ------ | -------------- | -----------\n"
            "`separator`  | string | `#!py3 '+'`    | Define a separator.\n"
            "`strict`     | bool   | `#!py3 False`  | Use strict HTML5 output.\n"
            "`key_map`    | dict   | -              | Add keys to the key-map index.\n\n"
            "## Keys\n\nName | Display | Aliases\n--- | --- | ---\n`ctrl` | Ctrl | `control`\n\n"
            "## Modes\n\nMode | Default\n--- | ---\nNormal text | on\n")
    rows = [(row[0], row[1]) for row in analysed(tmp_path, "keys.md", text).defaults]
    assert rows == [("`separator` (Keys)", "`'+'`"), ("`strict` (Keys)", "`False`")], rows


def test_a_version_in_a_releases_topic_heading_is_no_release_of_its_own(tmp_path: Path) -> None:
    # "### Python 3.15 Support" and "### PEP 747" inside "## Tool 2.4" are topics of 2.4; counted
    # as releases they pushed real releases out of the newest ten, whose changes a page keeps
    from wikimem.analysis import _older_releases, _releases

    lines = ["# Tool Release Notes", ""]
    for minor in range(12, 0, -1):
        lines += [f"## Tool 2.{minor}", "", f"Tool 2.{minor} brings speed-ups to the checker.", "",
                  f"### Python 3.{minor + 3} Support", "", f"Tool now supports Python 3.{minor + 3}.", "",
                  f"### PEP {700 + minor}: New forms", "", "Tool understands the new forms.", ""]
        if minor % 4 == 0:
            lines += [f"### Tool 2.{minor}.1", "", "Fixed a crash in the checker.", ""]
    path = tmp_path / "CHANGELOG.md"
    path.write_text("\n".join(lines))
    sections = load_source(path, "raw/CHANGELOG.md", max_bytes=1_000_000).sections
    assert not [s.title for s in sections if s.version and s.title.startswith(("Python", "PEP"))]
    titles = sorted(sections[j].title for j in _releases(sections))
    assert titles == sorted([f"Tool 2.{m}" for m in range(1, 13)] + ["Tool 2.12.1", "Tool 2.8.1", "Tool 2.4.1"])
    # the ten newest: 2.12.1, 2.12 ... 2.4.1 and 2.4 are older than them
    assert {sections[j].title for j in _older_releases(sections)} >= {"Tool 2.1", "Tool 2.2"}
    assert "Tool 2.9" not in {sections[j].title for j in _older_releases(sections)}


def test_releases_under_a_years_heading_stay_releases(tmp_path: Path) -> None:
    path = tmp_path / "CHANGES.md"
    path.write_text("# Changelog\n\n## 2024\n\n### 1.2.0 (2024-05-01)\n\n- Fixed a thing.\n\n"
                    "### 1.1.0 (2024-02-01)\n\n- Fixed another.\n\n## 2023\n\n### 1.0.5 (2023-05-01)\n\n- First.\n")
    sections = load_source(path, "raw/CHANGES.md", max_bytes=1_000_000).sections
    assert {s.title: s.version for s in sections if s.version}.get("1.2.0 (2024-05-01)") == "1.2.0"
    assert {s.title: s.version for s in sections if s.version}.get("1.1.0 (2024-02-01)") == "1.1.0"


def test_a_release_heading_that_says_changes_in_version(tmp_path: Path) -> None:
    """ "Changes in Version 4.20.1 (2026/11/19)": an unseen changelog's 146 releases were read
    as no release at all (its timelines saw none of them), and its dates, the year first with
    slashes, as none."""
    path = tmp_path / "changelog.rst"
    path.write_text("Changelog\n=========\n\nChanges in Version 4.2.1 (2026/11/19)\n"
                    "-------------------------------------\n\n- Fix a thing.\n\n"
                    "Changes in Version 4.2.0\n------------------------\n\n- Requires Toolkit 2.6 or later.\n")
    sections = load_source(path, "raw/changelog.rst", max_bytes=1_000_000).sections
    assert [(s.version, s.date) for s in sections if s.version] == [("4.2.1", "2026-11-19"), ("4.2.0", None)]


def test_a_releases_ci_chores_give_way_to_what_changed_for_users(tmp_path: Path) -> None:
    """A release's maintenance list: bumps of CI actions and "CI:" items are the project's own
    machinery; the removal of an entry point and an undeprecation are what a user asks about."""
    chores = "".join(f"- Bump actions/tool-{n} from {n}.0 to {n}.1 (#70{n:02d}).\n"
                     f"- CI: Update org/upload-nightly-action from 0.{n} to 0.{n + 1} (#71{n:02d}).\n" for n in range(12))
    text = ("Acme 3.3\n========\n\nRelease date: 6 April 2024\n\nMaintenance\n-----------\n\n" + chores
            + "- Remove ``acme.plugins`` and ``acme.plugin_info`` entry-points (#7192).\n"
            + "- Undeprecate ``nx_pydot`` now that pydot is maintained again (#7204).\n"
            + "- Drop Python 3.9 support (#7028).\n")
    analysis = analysed(tmp_path, "release_3.3.rst", text)
    shown = [analysis.sentences[i].text for i in analysis.facts]
    assert any("entry-points" in s for s in shown) and any("Undeprecate" in s for s in shown), shown
    assert not [s for s in shown if "actions/" in s or s.startswith("CI:")], shown


def test_a_small_reference_gets_a_page_for_each_thing_it_defines(ws: Workspace, settings) -> None:
    """Twelve pages of an API reference define twenty-four classes, each named again in the next
    page's text: a reader looks each one up. A budget of two thirds of the sources (and eight)
    gave at most sixteen of them a page; a small collection may have a concept a source and sixteen more."""
    names = [f"Gear{a}{b}" for a in "BCDFGH" for b in "KLMNP"][:24]
    for i in range(12):
        mine, nxt = names[2 * i:2 * i + 2], names[(2 * i + 2) % 24:(2 * i + 2) % 24 + 2]
        sections = "\n\n".join(
            f"## `{name}`\n\nThe `{name}` class turns a shaft at its own speed and stops when asked. "
            f"Make one `{name}` for each shaft." for name in mine)
        also = " ".join(f"See `{name}` for the next shaft." for name in nxt)
        write(ws, f"ref{i:02d}.md", f"# Shaft reference {i}\n\nPart {i} of the shaft reference. {also}\n\n{sections}\n")
    compile_workspace(ws, settings)
    pages = {p.stem.lower() for p in (ws.wiki / "concepts").glob("*.md")}
    assert len([n for n in names if n.lower() in pages]) == len(names), sorted(pages)


def lead_lines(page: str, title: str) -> list[str]:
    """A concept page's lines after its title, its "Also called" line left out: the lead first."""
    body = page.split(f"\n# {title}\n", 1)[1]
    return [line for line in body.strip().splitlines() if line and not line.startswith("Also called")]


SETTINGS_REFERENCE = """Settings
========

The crawler reads these settings.

.. setting:: MAX_RETRIES

MAX_RETRIES
-----------

Default: ``3`` (:ref:`fallback <defaults>`: ``1``)

How many times a failed fetch is tried again.

Use :setting:`MAX_RETRIES` to give flaky servers a second chance.

.. setting:: PASSWORD

PASSWORD
--------

Default: ``''``

The secret sent to a server that asks for one.

.. setting:: STORE

STORE
-----

Default: ``{}``

Where fetched pages are kept.

STORE options
~~~~~~~~~~~~~

TIMEOUT_SECONDS
^^^^^^^^^^^^^^^

Default: ``5``

How long the store waits for a write.

.. setting:: TIMEOUT_SECONDS

TIMEOUT_SECONDS
---------------

Default: ``30``

How long a fetch may take before it is given up.

.. _defaults:

Defaults
--------

A setting left out takes its fallback value.
"""


def test_a_settings_entry_leads_its_concept_page_with_what_it_is_and_its_default(ws: Workspace, settings) -> None:
    """A reference whose headings are the settings' names, unmarked ("DOWNLOAD_DELAY" over
    "Default: ``1`` (fallback: ``0``)" and "Minimum seconds to wait ...", Scrapy's settings),
    gave the setting's concept page a lead from whatever sentence named it ("Use DOWNLOAD_DELAY
    to throttle ...") and no default at all, though the question a reader brings is its value.
    The entry's description leads and its default follows; the outer of two entries of one name
    is the setting's own (a TIME_ZONE option inside DATABASES, and the TIME_ZONE setting); a
    concept that is a word ("Password") is no setting's entry spelled otherwise."""
    write(ws, "docs/settings.rst", SETTINGS_REFERENCE)
    write(ws, "docs/guide.rst", "Guide\n=====\n\nA crawl that hits a flaky server retries it: raise "
          "``MAX_RETRIES`` for such servers. Set ``TIMEOUT_SECONDS`` lower for fast sites.\n\n"
          "Passwords\n---------\n\nA password is never written to the log. Each password is kept "
          "in the keyring, and the password of a site is asked for once.\n")
    write(ws, "docs/faq.rst", "FAQ\n===\n\nWhy does a fetch run twice? Because ``MAX_RETRIES`` is "
          "more than zero. A slow site fails when it takes longer than ``TIMEOUT_SECONDS``. A "
          "password is asked for once.\n")
    write(ws, "docs/tuning.rst", "Tuning\n======\n\nLower ``MAX_RETRIES`` and ``TIMEOUT_SECONDS`` "
          "for a quick crawl. A password prompt pauses the crawl.\n")
    compile_workspace(ws, settings)
    retries = (ws.wiki / "concepts/max-retries.md").read_text()
    lead = lead_lines(retries, "MAX_RETRIES")
    assert lead[0].startswith("How many times a failed fetch is tried again. ([settings.rst, line 13]")
    assert lead[1].startswith("Default: `3` (") and ": `1`) ([settings.rst, line 11](" in lead[1]
    assert retries.count("Default: `3`") == 1  # not a key point as well
    timeout = (ws.wiki / "concepts/timeout-seconds.md").read_text()
    assert "How long a fetch may take before it is given up." in timeout
    assert "Default: `30`" in timeout and "Default: `5`" not in timeout
    password = (ws.wiki / "concepts/password.md").read_text()
    assert "The secret sent to a server" not in password and "Default: `''`" not in password


def test_a_name_qualified_by_its_module_and_the_name_alone_are_one_page(ws: Workspace, settings) -> None:
    """An API reference lists `pkg.CancelScope` where the guides write `CancelScope` (AnyIO's
    docs): two pages, "anyio.CancelScope" and "CancelScope", for one class. The qualified name
    is the short one's alias. A lowercase short name (`pkg.skip` beside a `skip` marker) may be
    another thing, and keeps its page."""
    write(ws, "docs/api.rst", "API reference\n=============\n\n.. class:: gearbox.ShaftLock(limit)\n\n"
          "   Holds a shaft still.\n\n.. function:: gearbox.skip(reason)\n\n   Skips a turn at once.\n\n"
          "See :class:`gearbox.ShaftLock` and :func:`gearbox.skip` for the details.\n")
    for name in ("guide", "howto", "faq"):
        write(ws, f"docs/{name}.rst", f"{name.title()}\n{'=' * len(name)}\n\nA ``ShaftLock`` holds a shaft "
              f"still while it is serviced. Take a ``ShaftLock`` before opening the case, and mark a "
              f"slow turn with the ``skip`` marker; ``skip`` turns are counted. The reference has "
              f":class:`gearbox.ShaftLock` and :func:`gearbox.skip`.\n")
    write(ws, "docs/markers.rst", "Markers\n=======\n\n``skip``\n--------\n\nMarks a turn as slow; a "
          "``skip`` turn is counted apart.\n\n``hold``\n--------\n\nKeeps a turn back.\n")
    compile_workspace(ws, settings)
    pages = {p.stem: p.read_text() for p in (ws.wiki / "concepts").glob("*.md")}
    assert "shaftlock" in pages and "gearbox-shaftlock" not in pages, sorted(pages)
    assert "gearbox.ShaftLock" in pages["shaftlock"].split("\n# ", 1)[1].split("\n\n")[1]  # "Also called"
    assert "gearbox-skip" in pages and "skip" in pages, sorted(pages)


def test_a_version_note_is_no_lead(ws: Workspace, settings) -> None:
    """ "*New in version 1.12:* In ABI mode, you can also pass `pack=n`" led cffi's page *ABI
    mode*: when something came says nothing of what it is. A plain statement leads instead."""
    write(ws, "docs/modes.rst", "Modes\n=====\n\nThe builder has modes.\n\nTurbo mode\n----------\n\n"
          "*New in version 1.2:* In turbo mode, you can also pass ``pack=n`` to the builder.\n\n"
          "In turbo mode, the builder skips the checks that the safe mode runs.\n")
    for name in ("guide", "faq", "howto", "tuning", "nightly", "release"):
        write(ws, f"docs/{name}.rst", f"{name.title()}\n{'=' * len(name)}\n\nUse turbo mode for a quick "
              f"build. Turbo mode is fast, and turbo mode is what the nightly job uses.\n")
    compile_workspace(ws, settings)
    lead = lead_lines((ws.wiki / "concepts/turbo-mode.md").read_text(), "Turbo mode")[0]
    assert not lead.startswith("*New in version"), lead


def test_what_an_old_release_changed_is_no_lead(ws: Workspace, settings) -> None:
    """ "`Validator` is replaced by `Draft3Validator` with a slightly different interface", an item
    of a twelve-year-old release, led an unseen set's page *Validator* as if it said what a
    validator is: a release's statement is history, shown under the page's changes over time."""
    write(ws, "CHANGES.md", "# Changes\n\n## 4.0.0 (2026-01-01)\n\n- Faster builds.\n\n## 0.4.0 (2012-01-01)\n\n"
          "- `Gadget` is replaced by `Widget` with a slightly different interface.\n")
    for name in ("guide", "faq", "howto", "tuning", "nightly"):
        write(ws, f"docs/{name}.md", f"# {name.title()}\n\nEach `Gadget` checks one record against its rules. "
              f"Make a `Gadget` for each kind of record you keep.\n")
    compile_workspace(ws, settings)
    page = (ws.wiki / "concepts/gadget.md").read_text()
    head, _, changes = page.partition("## Changes over time")
    assert "replaced by" not in head, head  # no claim of what it is, rather than history as one
    assert "**0.4.0** (2012-01-01): \"`Gadget` is replaced by `Widget`" in changes, changes


def test_a_lead_is_weighed_on_its_words_not_on_its_links_targets(ws: Workspace, settings) -> None:
    """An entry's first statement, "Adds appropriate [CORS headers](https://.../en-US/docs/...)
    to outgoing responses ...", was no lead: the "us" of the URL's "en-US" read as narration
    ("let us"). A link's target is not the sentence's words."""
    write(ws, "docs/middleware.md", "# Middleware\n\nWhat wraps the app.\n\n## ShaftMiddleware\n\n"
          "Adds [shaft headers](https://example.org/en-US/docs/Shaft) to outgoing responses from the app.\n\n"
          "```python\nfrom gearbox.middleware import ShaftMiddleware\n```\n\nWhen using ShaftMiddleware with "
          "your app, headers are sent even on errors.\n")
    for name in ("guide", "faq", "howto", "tuning", "deploy", "release"):
        write(ws, f"docs/{name}.md", f"# {name.title()}\n\nAdd `ShaftMiddleware` to the app, and "
              f"`ShaftMiddleware` sends the headers.\n")
    compile_workspace(ws, settings)
    lead = lead_lines((ws.wiki / "concepts/shaftmiddleware.md").read_text(), "ShaftMiddleware")[0]
    assert lead.startswith("Adds [shaft headers](https://example.org/en-US/docs/Shaft) to outgoing"), lead


def test_a_thing_spelled_several_ways_is_weighed_once_with_all_its_evidence() -> None:
    """Trio's docs name `trio.CancelScope` in an API entry, and "cancel scope", `cancel_scope` and
    `CancelScope` in prose: each spelling alone ranked below the budget, and a concept every
    page of the reference turns on had no page. A thing's spellings are weighed together; a
    qualified name joins its short form only where the short form is written as code so spelled,
    and not where two qualified names end alike (`to_thread.run_sync`, `from_thread.run_sync`)."""
    from collections import Counter

    from wikimem.backends.offline_concepts import budget, choose_in

    n = 12
    limit = budget(n)
    fillers = [(f"gadget{a}{b}", 4, 6, 2, 1) for a in "bcdfghjk" for b in "lmnpqrtv"][: limit + 4]
    weak = [("pkg.shaftlock", 3, 4, 1, 1), ("pkg.to_thread.run_sync", 3, 4, 1, 1),
            ("pkg.from_thread.run_sync", 3, 4, 1, 1), ("os.path", 3, 4, 1, 1)]
    spelled = {"shaftlock": [("shaft lock", 3, 3, 1, 0), ("shaftlock", 2, 2, 1, 0), ("shaft_lock", 1, 2, 1, 0)],
               "runsync": [("run_sync", 3, 3, 1, 0)], "path": [("path", 4, 3, 1, 0)]}
    written = {"pkg.shaftlock": "`pkg.ShaftLock`", "shaftlock": "`ShaftLock`", "shaft lock": "cancel scopes",
               "pkg.to_thread.run_sync": "`pkg.to_thread.run_sync()`", "run_sync": "`run_sync()`",
               "pkg.from_thread.run_sync": "`pkg.from_thread.run_sync()`", "os.path": "`os.path`", "path": "`path`"}

    class Stats(NoPhrases):
        def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
            return (fillers + weak)[:limit]

        def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
            return [r for thing, rows in spelled.items() if thing in squashed for r in rows]

        def union(self, collection: str, keys) -> tuple[int, int, int, int]:
            # five sources say the lock one way or another, three name it, the reference defines it
            if "pkg.shaftlock" in set(keys):
                return 5, 9, 3, 1
            rows = [r for r in weak + [r for rows in spelled.values() for r in rows] if r[0] in set(keys)]
            return max(r[1] for r in rows), sum(r[2] for r in rows), max(r[3] for r in rows), max(r[4] for r in rows)

        def surfaces(self, collection: str, keys) -> dict[str, Counter[str]]:
            return {k: Counter({written[k]: 3}) for k in keys if k in written}

    concepts = choose_in(Stats(), "docs", n)
    lock = [c for c in concepts if "shaftlock" in c.keys]
    assert len(lock) == 1 and {"pkg.shaftlock", "shaft lock"} <= set(lock[0].keys), [c.keys for c in concepts]
    assert not [c for c in concepts if "run_sync" in c.keys or "path" in c.keys]


def test_an_entry_led_by_its_fields_is_described_by_its_first_statement(ws: Workspace, settings) -> None:
    """A generated settings reference opens each entry with fields ("**Command line:**
    `--keep-alive INT`", then "**Default:** `2`", Gunicorn's): the first field stopped the search
    for the description, and the page led with a changelog line. A default said of something
    else in an entry ("When `detail` is not provided, it defaults to ...") is no line of its own."""
    write(ws, "docs/settings.md", "# Settings\n\nThe server reads these.\n\n### `keep_alive`\n\n"
          "**Command line:** `--keep-alive INT`\n\n**Default:** `2`\n\n"
          "The number of seconds to wait for requests on a Keep-Alive connection.\n\n"
          "## GearError\n\nThe `GearError` class is the base of the errors a gear raises.\n\n"
          "When `detail` is not provided, it defaults to the standard phrase for the code.\n\n"
          "```python\nfrom gearbox import GearError\n```\n")
    for name in ("guide", "faq", "howto", "tuning", "deploy", "release"):
        write(ws, f"docs/{name}.md", f"# {name.title()}\n\nRaise `keep_alive` behind a proxy, and catch "
              f"`GearError` when `keep_alive` is too low.\n")
    compile_workspace(ws, settings)
    lead = lead_lines((ws.wiki / "concepts/keep-alive.md").read_text(), "keep_alive")
    assert lead[0].startswith("The number of seconds to wait for requests on a Keep-Alive connection."), lead
    assert lead[1].startswith("Default: `2` ([settings.md, line 9]"), lead
    error = (ws.wiki / "concepts/gearerror.md").read_text()
    assert "\nDefault: " not in error


def test_a_word_said_mostly_in_one_phrase_names_its_page_by_the_phrase() -> None:
    """Alembic's docs gave a page to "naming", said 52 times, 37 of them in "naming convention"
    (a phrase its sections head): the page was "Naming", a word no reader looks up, and the
    concept "naming conventions" had no page. A page chosen for a lone word is named by the
    phrase that holds most of its mentions, the word its alias; not a word written mostly as
    code (`Vault`, a class), not by a phrase that holds less than half, and not by a phrase two
    words want."""
    from collections import Counter

    from wikimem.backends.offline_concepts import choose_in

    rows = [("ledger", 6, 8, 2, 1), ("vault", 5, 8, 2, 1), ("quota", 5, 8, 2, 1), ("sweep", 4, 8, 2, 1),
            ("tally", 4, 8, 2, 1)]
    phrases = [("ledger entry", 4), ("general ledger", 2), ("vault key", 3), ("quota limit", 2),
               ("sweep tally", 3)]
    said = {"ledger": 50, "ledger entry": 35, "general ledger": 6, "vault": 20, "vault key": 15, "quota": 30,
            "quota limit": 12, "sweep": 10, "tally": 10, "sweep tally": 8}
    written = {"ledger": "ledgers", "ledger entry": "ledger entries", "vault": "`Vault`", "quota": "quotas",
               "sweep": "sweeps", "tally": "tallies"}

    class Stats:
        def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
            return rows[:limit]

        def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
            return []

        def union(self, collection: str, keys) -> tuple[int, int, int, int]:
            return next(r for r in rows if r[0] in set(keys))[1:]

        def phrases(self, collection: str, words: set[str]) -> list[tuple[str, int]]:
            return [(p, df) for p, df in phrases if set(p.split()) & words]

        def said(self, collection: str, keys) -> dict[str, int]:
            return {k: said[k] for k in keys if k in said}

        def surfaces(self, collection: str, keys) -> dict[str, Counter[str]]:
            return {k: Counter({written[k]: 3}) for k in keys if k in written}

    concepts = {c.title: c for c in choose_in(Stats(), "docs", 12)}
    assert set(concepts) == {"Ledger entries", "Vault", "Quotas", "Sweeps", "Tallies"}, list(concepts)
    ledger = concepts["Ledger entries"]
    assert ledger.aliases == ["Ledgers"] and set(ledger.keys) == {"ledger", "ledger entry"}


def test_two_qualified_names_that_end_alike_keep_their_pages_beside_the_short_name() -> None:
    """`pkg.to_thread.run_sync` and `pkg.from_thread.run_sync` are two functions; the guides'
    `run_sync` is neither for sure. The choice weighs them apart (two qualified names end alike),
    and the pages follow that choice: three pages, not one page for all three."""
    from collections import Counter

    from wikimem.backends.offline_concepts import choose_in

    rows = [("run_sync", 6, 9, 3, 1), ("pkg.to_thread.run_sync", 4, 8, 2, 1),
            ("pkg.from_thread.run_sync", 4, 8, 2, 1), ("pkg.ShaftLock".lower(), 4, 8, 2, 1), ("shaftlock", 4, 6, 2, 1)]
    written = {"run_sync": "`run_sync`", "pkg.to_thread.run_sync": "`pkg.to_thread.run_sync`",
               "pkg.from_thread.run_sync": "`pkg.from_thread.run_sync`", "pkg.shaftlock": "`pkg.ShaftLock`",
               "shaftlock": "`ShaftLock`"}

    class Stats(NoPhrases):
        def candidates(self, collection: str, limit: int) -> list[tuple[str, int, int, int, int]]:
            return rows[:limit]

        def spellings(self, collection: str, squashed: set[str]) -> list[tuple[str, int, int, int, int]]:
            return [r for r in rows if r[0].replace("_", "") in squashed]

        def union(self, collection: str, keys) -> tuple[int, int, int, int]:
            chosen = [r for r in rows if r[0] in set(keys)]
            return max(r[1] for r in chosen), sum(r[2] for r in chosen), max(r[3] for r in chosen), 1

        def surfaces(self, collection: str, keys) -> dict[str, Counter[str]]:
            return {k: Counter({written[k]: 3}) for k in keys if k in written}

    pages = sorted(sorted(c.keys) for c in choose_in(Stats(), "docs", 12))
    assert pages == [["pkg.from_thread.run_sync"], ["pkg.shaftlock", "shaftlock"], ["pkg.to_thread.run_sync"],
                     ["run_sync"]], pages


def test_a_kept_concept_page_gives_the_page_with_any_related_section_and_is_not_kept_when_it_cannot_be() -> None:
    from wikimem.backends.offline_concepts import Concept
    from wikimem.backends.offline_pages import RELATED_MARK, KeptPage

    def concept(key: str) -> Concept:
        return Concept(key, key.title(), [], key.replace(" ", "-"), (key,))

    body = f"# Alpha engine\n\nThe alpha engine turns the shaft.\n\n{RELATED_MARK}## Also mentioned in\n\n[Beta](beta.md)\n"
    kept = KeptPage("concepts/alpha-engine.md", {"title": "Alpha engine", "kind": "concept", "mentioned_in": 3}, body)
    text = kept.dumps()
    assert text is not None
    again = KeptPage.loads(kept.path, text)
    assert again == kept
    page = again.page([concept("widget"), concept("spare part")])
    assert "## Related\n\n[Widget](widget.md) · [Spare Part](spare-part.md)\n\n## Also mentioned in" in page.body
    assert RELATED_MARK not in page.dumps()
    assert "## Related" not in again.page([]).body
    # the mark twice (a source's text held it), or a value JSON does not hold: nothing is kept
    assert KeptPage(kept.path, kept.meta, body + RELATED_MARK).dumps() is None
    assert KeptPage(kept.path, {**kept.meta, "when": object()}, body).dumps() is None

"""Reading sources as their authors wrote them: formats by content, reST through docutils with
Sphinx's markup, Markdown through markdown-it-py, titles, changelog versions, ignore rules."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import corpus, write
from wikimem.cli import main
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.raw_tree import scan
from wikimem.sources import SkipSource, load_source, sniff_format
from wikimem.sources.sections import release_of
from wikimem.workspace import Workspace

ROLE_DEBRIS = re.compile(r":[A-Za-z][\w:+-]*:`")
DIRECTIVE_DEBRIS = re.compile(r"(?m)^\s*\.\. [A-Za-z][\w:-]*::")


def load(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_source(path, f"raw/{name}", max_bytes=10**7)


def prose(doc) -> str:
    return "\n".join(b.text for b in doc.blocks if b.kind != "code")


# --- knowing the format ------------------------------------------------------------------


def test_a_txt_file_is_read_as_what_it_holds() -> None:
    rest = "Settings\n========\n\n.. note:: Read this.\n\nThe :setting:`DEBUG` flag.\n"
    markdown = "# Settings\n\nSee [the docs](https://example.org).\n\n```\ncode\n```\n"
    plain = "Shopping list\n\nEggs, milk and bread for the week.\n"
    assert sniff_format(rest, ".txt") == "rst"
    assert sniff_format(markdown, ".txt") == "markdown"
    assert sniff_format(plain, ".txt") == "text"
    assert sniff_format(rest, ".md") == "markdown" and sniff_format(markdown, ".rst") == "rst"


def test_web_addresses_are_no_evidence_of_markdown() -> None:
    # a reST note whose links are bare addresses; the Markdown link pattern once was shadowed
    # by another, which counted every address as a Markdown link, and read this as Markdown
    rest = ("Mirrors\n=======\n\nDownloads\n---------\n\n"
            + "".join(f"* https://mirror{n}.example.org/pub/\n" for n in range(6))
            + "\nSee `the archive`_ too.\n\n.. _the archive: https://example.org/archive/\n")
    assert sniff_format(rest, ".txt") == "rst"
    # plain text that mentions addresses stays plain text
    plain = "Contacts\n\nWrite to https://example.org/a or https://example.org/b for help.\n"
    assert sniff_format(plain, ".txt") == "text"
    # a Markdown link is still evidence: two of them and a heading
    assert sniff_format("# Links\n\nSee [a](https://a.example) and [b](https://b.example).\n", ".txt") == "markdown"


def test_underlines_are_counted_as_reading_them_line_by_line_would() -> None:
    # an adornment on the first line has nothing above it; one under a longer line or under
    # another adornment underlines nothing; "=" and "-" underline Markdown too; a title with an
    # overline of the same mark is reST's alone (docutils' section structure)
    assert sniff_format("=====\nTitle\n=====\n", ".txt") == "rst"
    assert sniff_format("A long title\n+++\n\nAnother one\n^^^\n", ".txt") == "text"
    assert sniff_format("Title\n~~~~~\n\nPart\n^^^^\n", ".txt") == "rst"
    assert sniff_format("Title\n=====\n\nPart\n----\n", ".txt") == "rst"
    assert sniff_format("Title\n=====\n\ntext\n", ".txt") == "text"


# --- reStructuredText ----------------------------------------------------------------------

SPHINX_PAGE = """\
.. _config:

=======================
 Configuration Handling
=======================

:Author: Ann Writer
:Date: 2021-04-13

Applications need configuration. The :attr:`~flask.Flask.config` attribute of the
:class:`~flask.Flask` object holds it; see :ref:`the tutorial <tutorial>` and
:doc:`/patterns/appfactories`. Call :func:`flask.json.dumps` or :meth:`Flask.run`.
Unknown roles keep their text: :frobnicate:`frobbed text`.

Builtin Values
--------------

.. py:data:: DEBUG

    Whether debug mode is enabled.

    Default: ``False``

    .. versionchanged:: 2.3
        Not read from the environment any more.

.. versionadded:: 3.1
   The ``SECRET_KEY_FALLBACKS`` setting.

.. code-block:: python

    app.config["DEBUG"] = True

.. toctree::
   :maxdepth: 2

   installation
   Quickstart <quickstart>

.. mysterious-directive:: its argument

   Its body is prose that must survive.

Tables
------

=====  =========
Name   Default
=====  =========
TZ     UTC
=====  =========

Deep
~~~~

Text in a deep section.
"""


def test_rest_through_docutils_with_sphinx_markup(tmp_path: Path) -> None:
    doc = load(tmp_path, "docs/config.txt", SPHINX_PAGE)
    assert doc.format == "rst"
    assert doc.title == "Configuration Handling"
    assert doc.date == "2021-04-13" and doc.meta["author"] == "Ann Writer"
    text = prose(doc)
    assert "The `config` attribute of the\n`Flask` object" in text
    assert "see the tutorial and\nappfactories" in text
    assert "`flask.json.dumps()`" in text and "`Flask.run()`" in text
    assert "frobbed text" in text
    assert not ROLE_DEBRIS.search(text) and not DIRECTIVE_DEBRIS.search(text) and ":setting:" not in text
    # a Python data description is a term, and what defines it carries its name
    term = next(b for b in doc.blocks if b.kind == "term")
    assert (term.text, term.subject) == ("DEBUG", "DEBUG")
    default = next(b for b in doc.blocks if b.text == "Default: `False`")
    assert default.subject == "DEBUG"
    changed = next(b for b in doc.blocks if b.version == "2.3")
    assert changed.text.startswith("Changed in version 2.3: Not read from the environment")
    added = next(b for b in doc.blocks if b.version == "3.1")
    assert added.text == "New in version 3.1: The `SECRET_KEY_FALLBACKS` setting."
    code = [b.text for b in doc.blocks if b.kind == "code"]
    assert 'app.config["DEBUG"] = True' in code
    assert [(e.target, e.title) for e in doc.toc] == [
        ("raw/docs/installation", None), ("raw/docs/quickstart", "Quickstart")]
    assert "Its body is prose that must survive." in text
    rows = [b for b in doc.blocks if b.kind == "table"]
    assert [r.text for r in rows] == ["Name | Default", "TZ | UTC"]
    headings = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert headings == [("Configuration Handling", 1), ("Builtin Values", 2), ("Tables", 2), ("Deep", 3)]
    lines = SPHINX_PAGE.split("\n")
    for block in doc.blocks:
        # every block points at a line that holds the start of its text
        if block.kind in ("heading", "para", "term") and not block.version:
            first = block.text.split("\n")[0].replace("`", "")[:12]
            assert first.split()[0] in lines[block.line - 1].replace("`", ""), (block, lines[block.line - 1])


def test_rest_include_never_reads_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET CONTENT\n")
    doc = load(tmp_path, "raw-like/page.rst", "Title\n=====\n\n.. include:: ../secret.txt\n\n"
               ".. literalinclude:: /etc/passwd\n\n.. raw:: html\n\n   <script>alert(1)</script>\n\nBody text here.\n")
    text = "\n".join(b.text for b in doc.blocks)
    assert "TOP SECRET" not in text and "root:" not in text and "<script>" not in text
    assert "Includes `../secret.txt`." in text and "Body text here." in text


@pytest.mark.parametrize("text", [
    "Title\n=====\n\nUnbalanced\n=======\nmore text\n---\n\n+---+---+\n| a | b\n+---+\n",
    "Title\n=====\n\n.. unknown-thing::\n   :opt: 1\n\n   body\n\n:unknown:`role` and `unclosed\n",
    "Title\n=====\n\n* list\n  * badly\n indented\n\n.. [1] a footnote\n\n|undefined| substitution.\n",
    "x" * 30 + "\n" + "=" * 10 + "\n\nUnderline too short.\n",
])
def test_broken_rest_compiles_with_a_note_never_a_crash(ws: Workspace, text: str) -> None:
    write(ws, "broken.rst", text)
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.compiled == ["raw/broken.rst"] and report.failed == []
    page = (ws.wiki / "sources/broken.md").read_text()
    assert page.count("> Note:") <= 1


def test_docutils_directives_take_the_options_sphinx_adds(tmp_path: Path) -> None:
    """Sphinx adds options to docutils' own directives (`.. note::` with `:collapsible:`): the
    directive is read as Sphinx reads it, not turned into an error with its text lost."""
    doc = load(tmp_path, "guide.rst", "Guide\n=====\n\n.. note::\n   :collapsible:\n\n   Keep the widget dry.\n\n"
                                      ".. image:: widget.png\n   :alt: A widget\n   :name: fig-widget\n\nText after.\n")
    assert "Note: Keep the widget dry." in prose(doc) and not doc.warnings
    # an option docutils checks is still checked
    bad = load(tmp_path, "bad.rst", "Bad\n===\n\n.. image:: widget.png\n   :width: wide\n\nText after.\n")
    assert "Text after." in prose(bad) and bad.warnings


def test_a_projects_extensionless_text_files_are_read(ws: Workspace) -> None:
    """README, NEWS, CHANGES, INSTALL without an extension are text, read by their content; a
    skip recorded by an older reader is tried again when the reader changes."""
    from wikimem.state import SourceRow, State
    from wikimem.workspace import file_sha256

    write(ws, "widget/README", "Widget\n======\n\nThe widget turns the gears of the mill, and it needs oil every "
                               "week to keep turning.\n\n.. note:: Keep it dry.\n\nInstall\n-------\n\nRun ``make install``.\n")
    write(ws, "widget/NEWS", "Noteworthy changes in release 1.2 (2024-01-01)\n\n* Gears turn faster now.\n")
    write(ws, "widget/configure", "#!/bin/sh\necho configuring the widget build\n")
    settings = load_settings(ws.root, environ={})
    report = compile_workspace(ws, settings)
    assert sorted(report.compiled) == ["raw/widget/NEWS", "raw/widget/README"]
    assert report.skipped == [("raw/widget/configure", "unsupported file type (no extension)")]
    page = (ws.wiki / "sources/widget-readme.md").read_text()
    assert "title: Widget" in page and "format: rst" in page and "it needs oil every week" in page
    # a skip an older reader recorded for the same content: tried again once the reader changed
    state = State(ws.state_db)
    try:
        sha = file_sha256(ws.raw / "widget/NEWS")
        state.put_source(SourceRow("raw/widget/NEWS", sha, 0, 0, None, "skipped", "unsupported file type", 0, ()))
        state.set_meta("backend.version", "offline:0.0")
        state.db.commit()
    finally:
        state.close()
    again = compile_workspace(ws, settings)
    assert "raw/widget/NEWS" in again.compiled


def test_a_plain_text_title_s_underline_is_no_text(tmp_path: Path) -> None:
    doc = load(tmp_path, "notes.txt", "Widget\n======\n\nThe widget turns gears. It needs oil every week.\n")
    assert doc.format == "text" and doc.title == "Widget"
    assert [(b.kind, b.text, b.line) for b in doc.blocks] == [
        ("heading", "Widget", 1), ("para", "The widget turns gears. It needs oil every week.", 4)]


def test_changelog_sections_carry_their_version_and_date(tmp_path: Path) -> None:
    flask_style = load(tmp_path, "CHANGES.rst", (
        "Version 3.1.1\n-------------\n\nReleased 2025-05-13\n\n-   Fix signing key selection.\n\n"
        "Version 3.1.0\n-------------\n\nReleased 2024-11-13\n\n-   Drop support for Python 3.8.\n"))
    assert [(s.title, s.version, s.date) for s in flask_style.sections] == [
        ("Version 3.1.1", "3.1.1", "2025-05-13"), ("Version 3.1.0", "3.1.0", "2024-11-13")]
    drop = next(b for b in flask_style.blocks if "Python 3.8" in b.text)
    assert flask_style.sections[drop.section].version == "3.1.0"
    assert flask_style.title == "Changes"
    docutils_style = load(tmp_path, "HISTORY.txt", (
        "==================\n Docutils History\n==================\n\n"
        "Release 0.17 (2021-04-03)\n=========================\n\n* Support Arabic.\n\n"
        "Release 0.16 (2020-01-12)\n=========================\n\n* Python 2.7 and 3.5+.\n"))
    assert docutils_style.title == "Docutils History"
    assert [(s.version, s.date) for s in docutils_style.sections if s.version] == [
        ("0.17", "2021-04-03"), ("0.16", "2020-01-12")]
    keep_a_changelog = load(tmp_path, "CHANGELOG.md", (
        "# Changelog\n\n## [Unreleased]\n\n- Work.\n\n## [1.2.0] - 2024-01-01\n\n- Added X.\n\n"
        "## [1.1.0] - 2023-06-30\n\n- Added Y.\n\n## v2-beta\n\n- odd\n\n## 2024.10rc1\n\n- odder\n"))
    versions = [(s.version, s.date) for s in keep_a_changelog.sections if s.version]
    assert ("1.2.0", "2024-01-01") in versions and ("1.1.0", "2023-06-30") in versions
    # a heading that only mentions a number among other words is not a release
    notes = load(tmp_path, "notes.md", "# Notes\n\n## Python 3 support for the new parser\n\nText.\n")
    assert all(s.version is None for s in notes.sections)


def test_a_changelog_written_as_one_list_of_release_items_has_a_section_per_release(tmp_path: Path) -> None:
    # the releases extension: one list, newest first; an item naming a release opens it, the
    # items after it are its changes, each led by its kind and issue number
    one_list = load(tmp_path, "changelog.rst", (
        "=========\nChangelog\n=========\n\n"
        "- :release:`3.0.3 <2026-04-07>`\n"
        "- :support:`- backported` Reverted the `@task <invoke.tasks.task>` return value type hint change.\n"
        "- :release:`3.0.0 <2026-04-05>`\n"
        "- :support:`-` Dropped support for Python versions <3.9.\n"
        "- :bug:`742 major` Define a custom ``__repr__`` for `~invoke.runners.Promise`.\n"
        "- :release:`2.2.1`\n- :feature:`779` Runners include subprocess PIDs.\n"))
    assert [(s.title, s.version, s.date) for s in one_list.sections] == [
        ("Changelog", None, None), ("3.0.3 (2026-04-07)", "3.0.3", "2026-04-07"),
        ("3.0.0 (2026-04-05)", "3.0.0", "2026-04-05"), ("2.2.1", "2.2.1", None)]
    items = [(one_list.sections[b.section].version, b.text) for b in one_list.blocks if b.kind == "item"]
    assert items == [
        ("3.0.3", "Support (backported): Reverted the `@task` return value type hint change."),
        ("3.0.0", "Support: Dropped support for Python versions <3.9."),
        ("3.0.0", "Bug #742 (major): Define a custom `__repr__` for `Promise`."),
        ("2.2.1", "Feature #779: Runners include subprocess PIDs.")]


@pytest.mark.parametrize("name, text", [
    ("versionhistory.rst", "Version history\n===============\n\n.. towncrier release notes start\n\n"
                           "**4.16.0**\n\n*New features*\n\n- Added ``call_async()``.\n\n*Bug fixes*\n\n"
                           "- Fixed ``aclose()`` hanging.\n\n**4.15.0** (2025-08-01)\n\n- Dropped support for Python 3.9\n\n"
                           "**1.0.0rc2**\n\n- First release candidate.\n"),
    ("HISTORY.md", "# Version history\n\n**4.16.0**\n\n*New features*\n\n- Added `call_async()`.\n\n"
                   "*Bug fixes*\n\n- Fixed `aclose()` hanging.\n\n**4.15.0** (2025-08-01)\n\n"
                   "- Dropped support for Python 3.9\n\n**1.0.0rc2**\n\n- First release candidate.\n"),
])
def test_a_changelog_that_sets_its_releases_in_bold_has_a_section_per_release(tmp_path: Path, name: str,
                                                                               text: str) -> None:
    # no heading per release: a paragraph that is only a bold version stands for one, and the
    # short emphasized lines above a release's lists for its kinds of change
    doc = load(tmp_path, name, text)
    assert [(s.title, s.level, s.version, s.date) for s in doc.sections] == [
        ("Version history", 1, None, None), ("4.16.0", 2, "4.16.0", None), ("New features", 3, None, None),
        ("Bug fixes", 3, None, None), ("4.15.0 (2025-08-01)", 2, "4.15.0", "2025-08-01"),
        ("1.0.0rc2", 2, "1.0.0rc2", None)]
    items = [(release_of(doc.sections, b.section).version, b.text) for b in doc.blocks if b.kind == "item"]
    assert items[-2:] == [("4.15.0", "Dropped support for Python 3.9"), ("1.0.0rc2", "First release candidate.")]


def test_a_bold_version_alone_or_a_bold_product_version_is_no_release(tmp_path: Path) -> None:
    # one bold version is emphasis; "**Python 3.12**" names another product's release
    one = load(tmp_path, "notes.rst", "Notes\n=====\n\n**2.0**\n\nThe new API.\n")
    other = load(tmp_path, "matrix.md", "# Matrix\n\n**Python 3.12**\n\n- works\n\n**Python 3.13**\n\n- works\n")
    assert [s.title for s in one.sections] == ["Notes"] and [s.title for s in other.sections] == ["Matrix"]


def test_a_headings_attribute_list_is_no_part_of_its_title(tmp_path: Path) -> None:
    # Python-Markdown's attr_list: `{: #id }`, an escaped id, classes, key=value pairs
    doc = load(tmp_path, "notes.md", "# 6.0 Migration Notes {: #\\6.0}\n\nText.\n\n"
                                     "## Phases of processing {: #stages }\n\nText.\n\n"
                                     "## Tables {.wide data-x='1'}\n\nText.\n\n## The {name} placeholder\n\nText.\n")
    assert doc.title == "6.0 Migration Notes"
    assert [s.title for s in doc.sections] == ["6.0 Migration Notes", "Phases of processing", "Tables",
                                               "The {name} placeholder"]


def test_a_code_span_that_names_its_language_shows_its_code(tmp_path: Path) -> None:
    # InlineHilite's `#!lang code`: the marker picks the colours, it is no part of the code
    doc = load(tmp_path, "keys.md", "# Keys\n\nOption | Type | Default\n--- | --- | ---\n"
                                    "`separator` | string | `#!py3 '+'`\n\n"
                                    "Set `#!python strict=True` to fail, or `#!` alone.\n")
    text = "\n".join(b.text for b in doc.blocks)
    assert "`'+'`" in text and "`strict=True`" in text and "#!py3" not in text and "`#!`" in text


def test_an_icon_shortcode_and_a_paragraphs_attribute_list_are_no_text(tmp_path: Path) -> None:
    doc = load(tmp_path, "extension.md", "# Snippets\n\n[:octicons-file-code-24: Source][src]{: .source-link }\n\n"
                                         "Follow us on [:material-github: GitHub](https://github.com/acme) and "
                                         "press *:material-play:* to run **now**.\n\n[src]: https://example.com/src\n")
    texts = [b.text for b in doc.blocks if b.kind == "para"]
    assert "Source" in texts[0] and ":octicons" not in texts[0] and "{:" not in texts[0], texts
    assert ":material" not in texts[1] and "GitHub" in texts[1] and "**now**" in texts[1] and " ** " not in texts[1], texts


def test_a_block_placed_in_a_section_keeps_every_other_field() -> None:
    from dataclasses import fields, replace

    from wikimem.sources.document import Block

    # a value for every field that no default holds, so a field Block.in_section forgot shows
    block = Block(**{f.name: (7 if f.type == "int" else f"<{f.name}>") for f in fields(Block)})
    assert block.in_section(3) == replace(block, section=3)


def test_a_changelog_of_release_headings_is_named_for_its_file_not_its_newest_release(tmp_path: Path) -> None:
    """click's CHANGES.md has no H1: "## Version 8.5.0" titles one release, not the document."""
    click_style = load(tmp_path, "CHANGES.md", (
        "## Version 8.5.0\n\nUnreleased\n\n- Add shell completion for PowerShell.\n\n"
        "## Version 8.4.2\n\nReleased 2025-05-01\n\n- Fix a crash.\n"))
    assert click_style.title == "Changes" and click_style.version is None
    assert [s.version for s in click_style.sections] == ["8.5.0", "8.4.2"]
    # one release heading is a document about that release
    one = load(tmp_path, "notes/go1.21.md", "## Go 1.21\n\nGo 1.21 adds min and max builtins.\n")
    assert one.title == "Go 1.21"


def test_myst_roles_read_as_sphinx_shows_them(tmp_path: Path) -> None:
    doc = load(tmp_path, "changes.md", (
        "# Changes\n\n- {class}`Argument` accepts a `help` parameter. {issue}`2983` {pr}`3473`\n"
        "- See {ref}`the guide <guide-label>`, {py:func}`click.echo` and {doc}`/api/index`.\n"
        "- A literal `{x}` stays, and {unknown}`thing` is its text.\n"))
    items = [b.text for b in doc.blocks if b.kind == "item"]
    assert items == ["`Argument` accepts a `help` parameter. #2983 #3473",
                     "See the guide, `click.echo()` and api.",
                     "A literal `{x}` stays, and thing is its text."]


def test_a_myst_glossary_reads_as_restructuredtexts_does(tmp_path: Path) -> None:
    # a term on its own line, its definition indented under it: reST's `.. glossary::` gave
    # terms; MyST's (in a colon fence or a backtick fence) ran each term into its definition
    rest = load(tmp_path, "g.rst", ("Glossary\n========\n\n.. glossary::\n\n   slotted classes\n"
                                    "      A class without a dict.\n\n      They use less memory.\n\n"
                                    "   field\n      An attribute.\n"))
    colon = load(tmp_path, "g.md", ("# Glossary\n\n:::{glossary}\n:sorted:\nslotted classes\n  A class without a dict.\n\n"
                                    "  They use less memory.\n\n    :::{note}\n    Pickle them with care.\n    :::\n\n"
                                    "field\n  An attribute.\n:::\n\nAfter the glossary.\n"))
    fenced = load(tmp_path, "h.md", ("# Glossary\n\n```{glossary}\nslotted classes\n  A class without a dict.\n\n"
                                     "  They use less memory.\n\nfield\n  An attribute.\n```\n"))
    expected = [("term", "slotted classes", "slotted classes"), ("para", "A class without a dict.", "slotted classes"),
                ("para", "They use less memory.", "slotted classes"), ("term", "field", "field"),
                ("para", "An attribute.", "field")]
    for doc in (rest, fenced):
        assert [(b.kind, b.text, b.subject) for b in doc.blocks[1:]] == expected
    got = [(b.kind, b.text, b.subject) for b in colon.blocks[1:]]
    assert got[:3] == expected[:3] and got[4:] == [*expected[3:], ("para", "After the glossary.", None)]
    assert got[3] == ("para", "Note: Pickle them with care.", "slotted classes")  # a note inside a definition
    # no line moves: each block cites the line it is on
    assert [b.line for b in colon.blocks[1:]] == [5, 6, 8, 11, 14, 15, 18]


def test_a_glossary_entry_may_have_several_names(tmp_path: Path) -> None:
    # Sphinx's glossary lets several term lines share one definition (SQLAlchemy's "DBAPI" and
    # "pep-249"): docutils alone read them as one paragraph of names, and no term at all
    doc = load(tmp_path, "glossary.rst", (
        "Glossary\n========\n\n.. glossary::\n    :sorted:\n\n    DBAPI\n    pep-249\n"
        "        DBAPI is shorthand for the phrase \"Python Database API\n        Specification\".\n\n"
        "        It is widely used.\n\n    builder\n       A class that builds.\n"))
    assert [(b.kind, b.text, b.subject, b.line) for b in doc.blocks[1:]] == [
        ("term", "DBAPI", "DBAPI", 7), ("term", "pep-249", "pep-249", 7),
        ("para", 'DBAPI is shorthand for the phrase "Python Database API\nSpecification".', "DBAPI", 9),
        ("para", "It is widely used.", "DBAPI", 12), ("term", "builder", "builder", 14),
        ("para", "A class that builds.", "builder", 15)]


def test_pep_and_rfc_roles_read_as_sphinx_titles_them(tmp_path: Path) -> None:
    # Sphinx shows "PEP 517" for {pep}`517` (MyST) and :pep:`517` (reST), an anchor kept
    myst = load(tmp_path, "build.md", "# Build\n\nUse {pep}`517`'s hook, {rfc}`2616` and {pep}`the PEP <660>`.\n")
    assert [b.text for b in myst.blocks][1] == "Use PEP 517's hook, RFC 2616 and the PEP."
    rest = load(tmp_path, "style.rst", "Style\n=====\n\nSee :pep:`8#id5` and :rfc:`7231#section-6`.\n")
    assert [b.text for b in rest.blocks][1] == "See PEP 8#id5 and RFC 7231#section-6."


def test_a_changelog_page_leads_with_its_span_and_reads_no_release_as_a_setting(ws: Workspace) -> None:
    write(ws, "CHANGES.rst", (
        "Changes\n=======\n\n"
        "Version 3.1.0\n-------------\n\nReleased 2024-11-13, codename Limoncello-like long line\n\n"
        "-   ``PROVIDE_AUTOMATIC_OPTIONS`` defaults to ``True`` for all views now.\n\n"
        "Version 3.0.0\n-------------\n\nReleased 2023-09-30\n\n-   Drop support for Python 3.7.\n"))
    write(ws, "RELEASE-NOTES.txt", (
        "=====================\n Gadget Release Notes\n=====================\n\n"
        "This document summarizes the major changes in recent releases of Gadget.\n\n"
        "Release 2.0 (2021-04-03)\n========================\n\n* Gadgets spin twice as fast now.\n\n"
        "Release 1.0 (2020-01-12)\n========================\n\n* The first gadget ships to everyone.\n"))
    compile_workspace(ws, load_settings(ws.root, environ={}))
    page = (ws.wiki / "sources/changes.md").read_text()
    lead = page.split("# Changes\n\n", 1)[1].split("\n", 1)[0]
    assert lead == "Release notes of 2 versions, newest first: 3.1.0 (2024-11-13) back to 3.0.0 (2023-09-30)."
    assert "## Defaults" not in page and "](../../raw/CHANGES.rst#L4)\n" in page  # the outline links the heading, no " = ..."
    notes = (ws.wiki / "sources/release-notes.md").read_text()
    assert "This document summarizes the major changes in recent releases of Gadget." in notes  # its own lead
    index = (ws.wiki / "sources/index.md").read_text() if (ws.wiki / "sources/index.md").exists() else \
        (ws.wiki / "index.md").read_text()
    assert "Release notes of 2 versions" in index


# --- Markdown ------------------------------------------------------------------------------


def test_mkdocs_admonitions_and_tabs_are_text_not_code(tmp_path: Path) -> None:
    """MkDocs Material indents what an admonition or a tab holds by four spaces, which CommonMark
    reads as code: read as their text, labelled, on their own lines."""
    doc = load(tmp_path, "guide.md", (
        "# Guide\n\nIntro.\n\n"
        '!!! tip "Use the CLI"\n    You can run `typer main.py run` without installing it.\n\n    A second paragraph.\n\n'
        '=== "Python 3.10+"\n\n    ```python\n    def main(name: str):\n        print(name)\n    ```\n\n'
        "??? note\n    Hidden details.\n\n    !!! warning\n        Do not shake the widget.\n\n"
        "```text\n!!! note\n    inside a fence\n```\n\nAfter.\n"))
    got = [(b.line, b.kind, b.text) for b in doc.blocks]
    assert (6, "para", "Use the CLI: You can run `typer main.py run` without installing it.") in got
    assert (8, "para", "A second paragraph.") in got
    assert (13, "code", "def main(name: str):\n    print(name)") in got
    assert (18, "para", "Note: Hidden details.") in got
    assert (21, "para", "Warning: Do not shake the widget.") in got
    assert (24, "code", "!!! note\n    inside a fence") in got and got[-1] == (28, "para", "After.")
    # pymdownx blocks (Typer's docs): `/// tip | Title` ... `///`, their content not indented
    blocks = load(tmp_path, "typer.md", (
        "# Typer\n\n/// tip\n\nYou can still generate docs.\n\n///\n\n//// tab | Linux, macOS\n\n"
        "```console\n$ source .venv/bin/activate\n```\n\n////\n\n/// note | Technical Details\n\n"
        "Typer uses Click internally.\n\n///\n"))
    got = [(b.line, b.kind, b.text) for b in blocks.blocks]
    assert got == [(1, "heading", "Typer"), (5, "para", "Tip: You can still generate docs."),
                   (12, "code", "$ source .venv/bin/activate"), (19, "para", "Technical Details: Typer uses Click internally.")]



def test_markdown_inside_an_html_element_marked_so_is_read_as_markdown(tmp_path: Path) -> None:
    """Python-Markdown's md_in_html (`<figure markdown>`, `<div markdown="1">`): CommonMark reads
    the element as one HTML block, and an unseen blog's figure became the sentence
    "![Installation example](install-demo.gif){ loading=lazy role="img" }", quoted on a concept
    page. Its content is read as Markdown, on its own lines; an element not marked so, and one in
    a code fence, are read as before."""
    doc = load(tmp_path, "post.md", (
        "# Release 1.8\n\nHere is what you see the first time:\n\n"
        "<figure markdown>\n  ![Installation example](install-demo.gif){ loading=lazy }\n</figure>\n\n"
        '<div class="grid" markdown="1">\n\n- **Fast** builds with `hatch build`.\n- Signed installers.\n\n</div>\n\n'
        "<div>\n  ![Left as it was](x.png) in a plain element.\n</div>\n\n"
        "```html\n<figure markdown>\n  ![Code](y.gif)\n</figure>\n```\n"))
    got = [(b.line, b.kind, b.text) for b in doc.blocks]
    assert (6, "para", "Installation example") in got, got
    assert not any("install-demo" in text or "loading=lazy" in text for _, _, text in got), got
    assert [(line, text) for line, kind, text in got if kind == "item"] == \
        [(11, "**Fast** builds with `hatch build`."), (12, "Signed installers.")], got
    assert (16, "para", "![Left as it was](x.png) in a plain element.") in got, got
    assert (21, "code", "<figure markdown>\n  ![Code](y.gif)\n</figure>") in got, got
    # an element inside another is read as Markdown too; one never closed is left as written
    from wikimem.sources.markdown import unfold_markdown_in_html

    nested = "<div markdown>\n<div markdown>\n  - **a** item\n</div>\n</div>\n"
    assert unfold_markdown_in_html(nested) == "\n\n- **a** item\n\n\n"
    unclosed = "\n".join(["<div markdown>", "  ![x](y.png)"] * 3)
    assert unfold_markdown_in_html(unclosed) == unclosed


def test_myst_colon_fences_and_version_notes_read_as_their_text(tmp_path: Path) -> None:
    """MyST's `:::{warning}` ... `:::` holds text, as its backtick form does; a version note says
    its version where it starts ("Changed in version 21.3: ..."), as reST's directive reads."""
    doc = load(tmp_path, "console.md", (
        "# Console\n\nIntro.\n\n:::{warning}\nFor pretty exceptions to work, `format_exc_info()` must be absent.\n:::\n\n"
        ":::{versionchanged} 2.1\nThe widget is no longer copied first.\n:::\n\n"
        "```{versionadded} 21.3\nBuilds run in place.\n```\n"))
    got = [(b.line, b.kind, b.text) for b in doc.blocks]
    assert (6, "para", "Warning: For pretty exceptions to work, `format_exc_info()` must be absent.") in got
    assert (10, "para", "Changed in version 2.1: The widget is no longer copied first.") in got
    assert (13, "para", "Added in version 21.3:\nBuilds run in place.") in got
    assert not any(b.text in ("2.1", "21.3") or ":::" in b.text for b in doc.blocks)


MARKDOWN = """\
---
title: Hash maps in depth
description: How the map stores keys.
---

# Storing Keys with Associated Values in Hash Maps {#hash-maps}

By default, `HashMap` uses a hashing function called _SipHash_ that can provide
resistance to denial-of-service attacks[^siphash]<!-- ignore -->.

## Using `Box<T>` to Point to Data on the Heap

| Operator | Trait |
|---|---|
| `%=` | `RemAssign` |
| `+` | `Add` |

{{#include ../listings/ch08/main.rs:here}}

<!-- a comment -->

[crypto/tls](/pkg/crypto/tls/)

:   By default, the minimum version offered by `crypto/tls` servers is now TLS 1.2.

```{note}
A MyST note is prose.
```

```rust
fn main() {}
```

[^siphash]: https://en.wikipedia.org/wiki/SipHash
"""


def test_markdown_through_markdown_it_with_line_maps(tmp_path: Path) -> None:
    doc = load(tmp_path, "maps.md", MARKDOWN)
    assert doc.format == "markdown" and doc.title == "Hash maps in depth"
    assert doc.description == "How the map stores keys."
    lines = MARKDOWN.split("\n")
    heads = [(b.text, b.level, b.line) for b in doc.blocks if b.kind == "heading"]
    assert heads[0] == ("Storing Keys with Associated Values in Hash Maps", 1, 6)
    assert heads[1][0] == "Using `Box<T>` to Point to Data on the Heap"
    rows = [b for b in doc.blocks if b.kind == "table"]
    assert [r.text for r in rows] == ["Operator | Trait", "`%=` | `RemAssign`", "`+` | `Add`"]
    assert all(r.text.split(" | ")[0].strip("`") in lines[r.line - 1] for r in rows)
    text = prose(doc)
    assert "{{#include" not in text and "a comment" not in text and "[^siphash]" not in text
    default = next(b for b in doc.blocks if "minimum version" in b.text)
    assert default.subject == "crypto/tls"
    assert "A MyST note is prose." in text
    assert any(b.kind == "code" and b.text == "fn main() {}" for b in doc.blocks)
    sip = next(b for b in doc.blocks if "SipHash" in b.text)
    assert lines[sip.line - 1].startswith("By default, `HashMap`")


def test_mdbook_summary_is_the_reading_order(tmp_path: Path) -> None:
    doc = load(tmp_path, "book/SUMMARY.md", "# Summary\n\n[Intro](intro.md)\n\n- [Start](ch01.md)\n"
                                             "  - [Install](ch01-01.md)\n- [Next](ch02.md)\n")
    # the prefix chapter comes first, as mdBook reads it
    assert [e.target for e in doc.toc] == ["raw/book/intro.md", "raw/book/ch01.md", "raw/book/ch01-01.md", "raw/book/ch02.md"]


def test_a_page_template_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """A theme's partial (MkDocs' docs/overrides/partials/nav.html) became a page with an empty
    title; a rendered page never opens with template tags."""
    with pytest.raises(SkipSource, match="template"):
        load(tmp_path, "overrides/partials/nav.html",
             '{% import "partials/nav-item.html" as item with context %}\n<nav class="{{ class }}">\n'
             '<label>{{ config.site_name }}</label>\n{% for nav_item in nav %}{{ item.render(nav_item) }}'
             '{% endfor %}\n</nav>\n')
    with pytest.raises(SkipSource, match="template"):
        load(tmp_path, "base.html", "\n{# the layout #}\n<html><body>{% block body %}{% endblock %}</body></html>\n")
    # one that opens with a comment and markup, its lines its block tags (Starlette's toc-item.html)
    with pytest.raises(SkipSource, match="template"):
        load(tmp_path, "toc-item.html", '<!-- Copied from an issue -->\n<li class="md-nav__item"></li>\n'
             '<a href="{{ toc_item.url }}">{{ toc_item.title }}</a>\n{% if toc_item.children %}\n<ul>\n'
             '{% for toc_item in toc_item.children %}\n{% include "partials/toc-item.html" %}\n{% endfor %}\n'
             '</ul>\n{% endif %}\n')
    # a page that shows template tags in its text is a document
    doc = load(tmp_path, "jinja.html", "<html><body><h1>Loops</h1><p>Write a loop as:</p>"
                                       "<pre>{% for user in users %}{{ user }}{% endfor %}</pre></body></html>")
    assert doc.title == "Loops"


def test_titles_are_the_documents_own(tmp_path: Path) -> None:
    assert load(tmp_path, "a.md", "## What Is Ownership?\n\nText.\n\n## Rules\n\nMore.\n").title == "What Is Ownership?"
    assert load(tmp_path, "b.md", "Intro text first.\n\n# Real Title\n\n## Part\n\nx\n").title == "Real Title"
    assert load(tmp_path, "c.html", "<html><head><title>Page title</title></head><body><h1>H</h1><p>Text here.</p></body></html>").title == "Page title"
    # an HTML page without a title or a heading is named for its file, as every other format
    assert load(tmp_path, "docs/release-plan.html", "<html><body><p>Text here, and more of it.</p></body></html>").title == "Release plan"
    assert load(tmp_path, "d.txt", "Copyright 2016 Someone. All rights reserved.\n\nMy Talk!\nA. Speaker\n\nBody text.\n").title == "My Talk!"
    # a first line that is half a sentence is no title (PyYAML's README)
    prose = "YAML is a data serialization format designed for human readability\nand interaction with scripting.\n\nMore.\n"
    assert load(tmp_path, "pyyaml.txt", prose).title == "Pyyaml"
    # a Sphinx directive that shows nothing before the title (Jinja's nativetypes.rst): no title was found
    native = (".. module:: jinja2.nativetypes\n\n.. _nativetypes:\n\nNative Python Types\n===================\n\n"
              "The default environment renders templates to strings.\n\nExamples\n--------\n\nSome.\n")
    assert load(tmp_path, "nativetypes.rst", native).title == "Native Python Types"
    api = ".. currentmodule:: flask\n\nAPI\n===\n\n.. module:: flask\n    :noindex:\n\nThis part covers the interfaces.\n"
    assert load(tmp_path, "api.rst", api).title == "API"


def test_a_readmes_badges_are_no_text(tmp_path: Path) -> None:
    readme = ("==========\njsonschema\n==========\n\n|PyPI| |CI|\n\n"
              ".. |PyPI| image:: https://img.shields.io/pypi/v/jsonschema.svg\n   :alt: PyPI version\n\n"
              ".. |CI| image:: https://ci/badge.svg\n   :alt: Build status\n   :target: https://ci\n\n"
              ".. |name| replace:: JSON Schema\n\n``jsonschema`` implements |name| for Python.\n")
    doc = load(tmp_path, "jsonschema.rst", readme)
    assert [b.text for b in doc.blocks] == ["jsonschema", "`jsonschema` implements JSON Schema for Python."]
    assert load(tmp_path, "CHANGES.rst", "Version 1.0\n-----------\n\nText.\n\nVersion 0.9\n-----------\n\nText.\n").title == "Changes"
    # a README's centred HTML heading is its title, not the first Markdown section after it
    readme = load(tmp_path, "e.md", '<h1 align="center">HTTPX2</h1>\n\n<p align="center"><em>A next-generation '
                                    'HTTP client.</em></p>\n\n## Features\n\nIt speaks HTTP/1.1 and HTTP/2 to servers.\n')
    assert readme.title == "HTTPX2"
    assert [b.text for b in readme.blocks if b.kind == "heading"] == ["HTTPX2", "Features"]
    # headings that are sections are no title: a README opening with its text, then several
    # H1 sections; a logo, a tagline and "## Sponsors"; it is named for its file (or folder)
    soup = "Beautiful Soup is a library for pulling data out of HTML.\n\n# Quick start\n\nx\n\n# Links\n\ny\n"
    assert load(tmp_path, "beautifulsoup4.md", soup).title == "Beautifulsoup4"
    attrs = ('<p align="center"><img src="logo.svg" alt="attrs"></p>\n\n*attrs* is the package that brings back '
             "the joy of writing classes.\n\n## Sponsors\n\nThank you.\n")
    assert load(tmp_path, "attrs/README.md", attrs).title == "Attrs"
    badges = ("[![Build](https://ci/badge.svg)](https://ci) [![PyPI](https://pypi/badge.svg)](https://pypi)\n\n"
              "**Docs**: [https://x.dev](https://x.dev)\n\n## Widgets\n\nWidgets are small.\n")
    assert load(tmp_path, "w.md", badges).title == "Widgets"  # only a banner before it
    # go.dev's documents open with their metadata in a comment, Markdown as HTML
    go = '<!--{\n  "Title": "Module release and versioning workflow"\n}-->\n\nWhen you develop modules, ...\n\n## Steps\n'
    assert load(tmp_path, "go.md", go).title == "Module release and versioning workflow"


# --- ignore rules and the one walk -----------------------------------------------------------


def test_the_union_of_a_layers_patterns_matches_where_one_of_them_does() -> None:
    # _Rules tests one regex per layer before its patterns: it must match wherever one does
    from wikimem import ignore
    from wikimem.raw_tree import DEFAULT_RULES

    user = ["/docs/drafts/", "!keep.md", "build/*.html", "**/tmp/**", "*.bak", "notes/[0-9]*.txt", "a?c"]
    paths = ["gen/009/note-00123.md", "a/b/c.png", "x/_build/y.md", "_build/", "Makefile", "sub/Makefile/",
             "docs/requirements-dev.txt", "x.lock", "lib/site-packages/", "docs/drafts/", "docs/drafts/a.md",
             "keep.md", "build/a.html", "build/x/a.html", "q/tmp/r/s.md", "old.bak", "notes/1.txt", "abc",
             "node_modules/", "deep/er/node_modules/", "README.rst", "x.md", "docs/_static/logo.svg"]
    for lines in (DEFAULT_RULES.split("\n"), user):
        spec = ignore.parse(lines)
        union = spec.any_of()
        assert union is not None
        for path in paths:
            each = any(r.match(path) for p in spec.patterns for r in (p.as_file, p.as_folder) if r is not None)
            assert bool(union.match(path)) == each, (lines[:2], path)


def test_ignore_rules_defaults_and_wikimemignore(ws: Workspace) -> None:
    write(ws, "docs/index.rst", "Home\n====\n\nWelcome to the docs.\n")
    write(ws, "docs/_static/logo.png", b"\x89PNG\r\n")
    write(ws, "docs/_templates/layout.html", "<html>{% block body %}{% endblock %}</html>")
    write(ws, "docs/Makefile", "html:\n\tsphinx-build . _build\n")
    write(ws, "docs/requirements.txt", "sphinx\npyenchant\n")
    write(ws, "docs/drafts/wip.md", "# WIP\n\nNot ready.\n")
    write(ws, "docs/drafts/keep.md", "# Keep\n\nReady.\n")
    write(ws, "docs/diagram.svg", "<svg/>")
    write(ws, ".wikimemignore", "docs/drafts/\n")
    write(ws, "docs/.wikimemignore", "!diagram.svg\n")
    found = scan(ws)
    assert [f.path for f in found.files] == ["raw/docs/diagram.svg", "raw/docs/index.rst"]
    assert found.ignored["raw/.wikimemignore: docs/drafts/"] == 1
    assert found.ignored["default: _templates/"] == 1 and found.ignored["default: Makefile"] == 1
    result = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--json"])
    data = json.loads(result.stdout)
    assert data["ignored"]["count"] == 5  # a folder counts once
    assert data["ignored"]["by_rule"]["default: requirements*.txt"] == 1
    assert {s["path"] for s in data["skipped"]} == {"raw/docs/diagram.svg"}  # brought back, but not a document type
    again = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--json"])
    assert json.loads(again.stdout)["skipped"] == []  # nothing listed again on the next run
    status = CliRunner().invoke(main, ["status", "--root", str(ws.root), "--json"])
    assert json.loads(status.stdout)["raw"]["ignored"]["count"] == 5


def test_links_are_read_only_when_every_name_is_inside_raw(ws: Workspace, tmp_path: Path) -> None:
    write(ws, "a.md", "# A\n\nFirst note.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nPrivate text that must stay out.\n")
    os.link(outside, ws.raw / "hard-out.md")
    os.link(ws.raw / "a.md", ws.raw / "hard-in.md")
    os.symlink("loop-b", ws.raw / "loop-a")
    os.symlink("loop-a", ws.raw / "loop-b")
    os.symlink(ws.raw, ws.raw / "self-dir")
    found = scan(ws)
    assert [f.path for f in found.files] == ["raw/a.md", "raw/hard-in.md"]
    reasons = dict(found.refused)
    assert "hard link to a file outside raw/" in reasons["raw/hard-out.md"]
    assert "symlink" in reasons["raw/self-dir"]
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.failed == []
    assert "Private text" not in "".join(p.read_text() for p in ws.wiki.rglob("*.md"))
    from wikimem.lint import run_lint

    lint = run_lint(ws, load_settings(ws.root, environ={}))
    assert lint.failed_rules == []


# --- the shared corpora -------------------------------------------------------------------------


def _docutils_title_and_sections(text: str) -> tuple[str | None, int]:
    """What docutils itself says a document's title is, and how many sections it has."""
    import io

    from docutils import nodes
    from docutils.core import publish_doctree

    tree = publish_doctree(text, settings_overrides={
        "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
        "raw_enabled": False, "doctitle_xform": True})
    title = tree.get("title")
    sections = len(list(tree.findall(nodes.section)))
    return (str(title) if title else None), sections + (1 if title else 0)


@pytest.mark.corpus
@pytest.mark.slow
def test_sphinx_corpus_read_faithfully(tmp_path: Path) -> None:
    raw = corpus("sphinx")
    ws = Workspace.at(tmp_path / "ws")
    from wikimem.init import init_workspace

    init_workspace(ws)
    import shutil

    shutil.rmtree(ws.raw)
    shutil.copytree(raw, ws.raw)
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert report.failed == []
    compiled = set(report.compiled)
    # defaults keep images, Makefiles and templates out, and never list them as skipped
    assert not any(p.endswith((".png", ".svg", "Makefile", "make.bat")) for p in compiled)
    assert not any(p.endswith((".png", ".svg", "Makefile")) for p, _ in report.skipped)
    assert report.ignored["count"] >= 30
    from wikimem.pages import loads_page

    wrong_titles, debris, outline_short = [], [], []
    for path in sorted(compiled):
        file = ws.root / path
        text = file.read_text(encoding="utf-8")
        page_rel = next(p for p in (ws.wiki / "sources").glob("*.md")
                        if f"- {path}\n" in p.read_text(encoding="utf-8"))
        page = loads_page("x", page_rel.read_text(encoding="utf-8"))
        if page.meta.get("format") != "rst":
            continue
        expected, sections = _docutils_title_and_sections(text)
        # code spans stay in titles ("Using `async` and `await`"), as in Markdown headings
        if expected and page.title.replace("`", "") != expected:
            wrong_titles.append((path, page.title, expected))
        body = re.sub(r"(?s)```.*?```", "", page.body)
        body = re.sub(r"``[^`]*``|`[^`\n]*`", "", body)  # code spans may show markup on purpose
        if ROLE_DEBRIS.search(body) or DIRECTIVE_DEBRIS.search(body):
            debris.append(path)
        outline = page.body.split("## Outline", 1)[1].split("\n## ", 1)[0] if "## Outline" in page.body else ""
        if path.endswith(("config.txt", "config.rst")):
            links = len(re.findall(r"\]\(\.\./\.\./raw/[^)]*#L\d+\)", outline))
            # a long outline goes on in the page's parts (sources/<page stem>/*.md), one folder down
            for part_file in sorted((page_rel.parent / page_rel.stem).glob("*.md")):
                part = loads_page("x", part_file.read_text(encoding="utf-8"))
                if part.meta.get("part_of"):
                    rest = part.body.split("## Outline", 1)[1]
                    links += len(re.findall(r"\]\(\.\./\.\./\.\./raw/[^)]*#L\d+\)", rest))
            if links < sections:
                outline_short.append((path, links, sections))
    assert wrong_titles == []
    assert debris == []
    assert outline_short == []


def test_mdbook_prefix_chapters_come_first_in_the_reading_order(tmp_path):
    from wikimem.sources import load_source

    summary = tmp_path / "SUMMARY.md"
    summary.write_text("# Summary\n\n[Title page](title-page.md)\n[Foreword](foreword.md)\n\n"
                       "- [Getting Started](ch01.md)\n  - [Installation](ch01-01.md)\n\n"
                       "See [the website](https://example.org) and [the appendix](appendix.md) for more.\n",
                       encoding="utf-8")
    doc = load_source(summary, "raw/SUMMARY.md", max_bytes=1_000_000)
    # a paragraph of nothing but links is a part of the table of contents; prose with links is not
    assert [e.target for e in doc.toc] == ["raw/title-page.md", "raw/foreword.md", "raw/ch01.md", "raw/ch01-01.md"]


@pytest.mark.parametrize("name,text", [
    ("roles.rst", "Setting\n=======\n\nWhen set, it turns off loading through :doc:`entry point packaging\n"
                  "metadata <guides/plugins>`. Only plugins named with ``-p\nname`` are loaded.\n"
                  "Nothing else is.\n"),
    ("roles.md", "# Setting\n\nWhen set, it turns off loading through {doc}`entry point packaging\n"
                 "metadata <guides/plugins>`. Only plugins named with `-p\nname` are loaded.\n"
                 "Nothing else is.\n"),
])
def test_a_sentence_after_markup_written_over_two_lines_is_cited_at_its_own_line(
        tmp_path: Path, name: str, text: str) -> None:
    """A role's title or a code span written over two lines is shown on one: the sentences after
    it were cited a line early ('Only plugins ...' at the line above it)."""
    from wikimem.analysis import analyze

    lines = text.split("\n")
    sentences = analyze(load(tmp_path, name, text)).sentences
    for start in ("When set", "Only plugins", "Nothing else"):
        sentence = next(s for s in sentences if s.text.startswith(start))
        assert start.split()[0] in lines[sentence.line - 1]
    only = next(s for s in sentences if s.text.startswith("Only plugins"))
    assert only.text == "Only plugins named with `-p name` are loaded."  # the code span stays one


def test_a_sentence_does_not_end_inside_a_code_span(tmp_path: Path) -> None:
    """'SQLite does not support the `SELECT ... FOR UPDATE` syntax.' was cut after 'SELECT ...'."""
    from wikimem.analysis import analyze

    doc = load(tmp_path, "db.rst", "Databases\n=========\n\nSQLite does not support the ``SELECT ... FOR UPDATE``\n"
                                   "syntax. Calling it will have no effect. Use ``a.b``. Done.\n")
    assert [s.text for s in analyze(doc).sentences if s.kind == "para"] == [
        "SQLite does not support the `SELECT ... FOR UPDATE` syntax.", "Calling it will have no effect.",
        "Use `a.b`.", "Done."]


SETEXT_CASES = [
    "Title\n=====\n\ntext\n",
    "Title\n-----\nmore\n",
    "one line\ntwo lines\n===\n",
    "a paragraph\n- a list item that ends it\n- another\n---\n",
    "a paragraph\n> a quote\n---\n",
    "> quoted title\n> ---\n\n> quoted\n---\n",
    "- item title\n  ---\n- item\n---\n",
    "text\n    ---\n",
    "text\n   ===\n",
    "text\n= =\n",
    "text\n--- a\n",
    "text\n```\ncode\n```\n---\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "term\n: its definition\n---\n",
    "text[^1]\n\n[^1]: a note\n    ---\n",
    "  indented\n  ---\n\n\tTabbed\n\t===\n",
    "para\n<div>\n---\n</div>\n",
    "para\n# heading\n---\n",
    "lazy\n> quote\nlazy line\n===\n",
    "a paragraph\nheader | cells\n---|---\n1 | 2\n",
    "a paragraph\n| a | b |\n|:-:|--|\n",
    "a paragraph\n2. not a list that ends it\n1. a list that does\n",
    "a paragraph\n* star item\n+ plus item\n",
    "a paragraph\n***\n___\n",
    "a paragraph\n~~~\ncode\n~~~\n",
    "a paragraph\n<!-- comment -->\n<p>html</p>\n",
    "a paragraph\n[^note]: a footnote\n[label]: /a/link\n",
    "a term\n: its definition\n  more\n~ another\n",
    "- item\n  lazy text\ncontinued\n  # heading in item\n",
    "> quote\ncontinued lazily\n> > nested\nlazy again\n",
    "para with trailing spaces  \nnext line\\\nlast\n",
    "    code block\nparagraph\n    indented continuation\n",
    "para\n:not a definition\n:: nor this\n",
    "para\n１２. full-width digits\n",
]


@pytest.mark.parametrize("text", SETEXT_CASES)
def test_the_setext_heading_and_paragraph_rules_asked_first_parse_as_markdown_its_own(text: str) -> None:
    """sources.markdown asks whether a paragraph has a line that could underline it before
    markdown-it's setext heading rule walks its lines, and whether a line could end a paragraph
    before asking the rules that end one: the tokens are markdown-it's own."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    from wikimem.sources.markdown import _parser

    plain = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    plain.use(deflist_plugin).use(footnote_plugin)
    plain.disable("inline")

    def shown(md: MarkdownIt) -> list[tuple]:
        return [(t.type, t.tag, t.nesting, t.map, t.content, t.markup, t.info, t.level, t.hidden)
                for t in md.parse(text, {})]

    assert shown(_parser()) == shown(plain)


INLINE_CASES = [
    "a well-known key: value, x = 1 + 2 and 50% of $5 @user {curly} #hash > quote",
    "[a-link: with = signs](https://example.com/a-b?c=d#e) and [nested [brackets]-x](/y)",
    "![an image-name](img.png) ![not an image] !- bang",
    "a *star-emphasis*: **strong-one** and _under_score_ and snake_case_name and 2*3*4",
    "a ~~struck-through~~ word, ~single~ tilde, and -- dashes --- here",
    "code `a-b: c` and ``double `tick` span`` and ` unclosed-tick",
    "an autolink <https://a-b.example/c:d> and <mail@example.com> and <span class=x-y>html</span> and a < b > c",
    "entities &amp; &#45; &#x2D; &copy- & not-one; &nbsp:",
    "a footnote[^note-1] and an inline one^[with-text: here] and a caret ^ alone",
    "escapes \\- \\* \\[ \\: \\{ and a backslash at the end\\",
    "hard break with spaces  \nnext-line\\\nlast: line\nsoft - break",
    "[label-with\n- a line]: /ref and [label-with\n- a line]",
    "a [link *with-emphasis* inside](u) and [`code-label`](v) and [x]: not a ref",
    "unclosed [bracket-and: colon, and ] closed ] and [[double]-x]",
    "**bold:**text and *a*-b and a-*b* and _a_-b and a-_b_ and __x__: y",
    "{#anchor-id} ::: colons ::: === equals === +++ plus +++",
    "<!-- a-comment: x --> <?pi-x?> <![CDATA[x-y]]> </close-tag>",
    "emoji-like :smile: and time 10:30-11:45, ratio 3:2, arrow -> and <- and => here",
]


@pytest.mark.parametrize("text", INLINE_CASES)
def test_the_text_rule_stopping_only_where_our_inline_rules_open_gives_markdown_its_tokens(text: str) -> None:
    """sources.markdown's text rule runs on over a hyphen, a colon, an `=` and the other
    characters markdown-it stops at for rules it does not enable: the tokens are markdown-it's
    own, as with its full list of stops."""
    from markdown_it.parser_inline import _default_terminator_re

    from wikimem.sources.markdown import _parser

    md = _parser()

    def shown(tokens: list) -> list[tuple]:
        return [(t.type, t.tag, t.nesting, t.content, t.markup, t.info, t.level, t.hidden,
                 sorted((t.attrs or {}).items()), shown(t.children or [])) for t in tokens]

    def parsed() -> list[tuple]:
        env: dict = {}
        tokens = md.parse(text, env)
        for token in tokens:
            if token.type == "inline":
                token.children = []
                md.inline.parse(token.content, md, env, token.children)
        return shown(tokens)

    ours = md.inline.terminator_re
    assert ours.pattern != _default_terminator_re().pattern  # the shorter list is in use
    mine = parsed()
    md.inline.terminator_re = _default_terminator_re()
    try:
        theirs = parsed()
    finally:
        md.inline.terminator_re = ours
    assert mine == theirs


def test_the_text_rules_stops_are_markdown_its_own_for_an_inline_rule_not_known() -> None:
    from wikimem.sources.markdown import _inline_stops

    assert _inline_stops(["text", "newline", "link"]) == frozenset("\n[]")
    assert _inline_stops(["text", "linkify", "link"]) is None  # linkify opens at any ':' of a scheme

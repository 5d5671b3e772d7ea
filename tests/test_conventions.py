"""The conventions of real documentation sets, one fixture each, written from the docutils and
Sphinx specifications (and Keep a Changelog, towncrier, the changelog extension): titles and
metadata, labels and cross-references across files, identifiers where text is shortened,
tables, duplicates, one count of sources, and the release structure of changelogs. Bad input
(labels defined twice, missing labels, include cycles, huge or ragged tables, a field list with
nothing after it) reads to a page with a note, never to a crash."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import write
from linkcheck import broken_links
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.pages import loads_page
from wikimem.sources import load_source, sniff_format
from wikimem.workspace import Workspace


def load(tmp_path: Path, name: str, text: str, *, xrefs: bool = False):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_source(path, f"raw/{name}", max_bytes=10**7, xrefs=xrefs)


def compile_(ws: Workspace):
    return compile_workspace(ws, load_settings(ws.root, environ={}))


def assert_same_as_a_full_compile(ws: Workspace) -> None:
    """The wiki an incremental compile left is the one a full compile of the same raw/ writes."""
    def pages() -> dict[str, str]:
        return {p.relative_to(ws.wiki).as_posix(): p.read_text() for p in ws.wiki.rglob("*.md") if p.name != "log.md"}

    incremental = pages()
    for folder in ("sources", "concepts"):
        shutil.rmtree(ws.wiki / folder)
    shutil.rmtree(ws.state_dir)
    compile_(ws)
    assert incremental == pages()


def page(ws: Workspace, raw: str):
    """The source page of raw/<raw>, found by its front matter."""
    for file in (ws.wiki / "sources").rglob("*.md"):
        loaded = loads_page(file.name, file.read_text(encoding="utf-8"))
        if loaded.meta.get("sources") == [f"raw/{raw}"] and not loaded.meta.get("part_of"):
            return file, loaded
    raise AssertionError(f"no page for raw/{raw}")


# --- titles and metadata (docutils: sections, docinfo; Sphinx: file-wide metadata) ------------


@pytest.mark.parametrize("fields", [":orphan:", ":tocdepth: 3", ":nosearch:", ":orphan:\n:tocdepth: 2",
                                    ":Author: A. Writer\n:Date: 2024-05-01"])
def test_a_field_list_before_the_title_is_the_files_metadata(tmp_path: Path, fields: str) -> None:
    text = f"{fields}\n\n.. _guide:\n\nUser Guide\n==========\n\nThe guide explains the widget.\n"
    doc = load(tmp_path, "guide.rst", text)
    assert doc.title == "User Guide"
    assert [b.text for b in doc.blocks] == ["User Guide", "The guide explains the widget."]
    first = fields.split("\n")[0].strip(":").split(":")[0].lower()
    assert first in doc.meta


def test_the_first_section_titles_a_document_whatever_comes_before_it(tmp_path: Path) -> None:
    # Sphinx's title is the first section's, after a sidebar, an introduction or a banner
    sidebar = (".. _features:\n\n.. sidebar:: Events\n\n   - A sprint in July\n\n"
               "Widgets: small parts for big machines\n=====================================\n\nText.\n")
    assert load(tmp_path, "index.rst", sidebar).title == "Widgets: small parts for big machines"
    intro = "An introduction in a paragraph.\n\nExample Below\n=============\n\nText.\n\nMore\n====\n\nx\n"
    assert load(tmp_path, "readme.rst", intro).title == "Example Below"
    # two top-level sections, the first of which is not a release: the first titles the page
    several = "widget-2.6: fixes and a feature\n===============================\n\nText.\n\nChanges 2.6\n===========\n\nx\n"
    assert load(tmp_path, "release-2.6.rst", several).title == "widget-2.6: fixes and a feature"


def test_a_titles_dashes_are_the_dashes_sphinx_shows(tmp_path: Path) -> None:
    # Sphinx's smart quotes make `---` an em dash and `--` an en dash in text, not in code
    module = "``acme.web`` --- Handlers and ``Application`` classes\n" + "=" * 55 + "\n\nText.\n"
    assert load(tmp_path, "web.rst", module).title == "`acme.web` \u2014 Handlers and `Application` classes"
    assert load(tmp_path, "locks.rst", "``acme.locks`` -- Primitives\n" + "=" * 29 + "\n\nText.\n").title \
        == "`acme.locks` \u2013 Primitives"
    # between words too (networkx's "DiGraph---Directed graphs with self loops"), and in a range
    assert load(tmp_path, "dg.rst", "DiGraph---Directed graphs\n" + "=" * 25 + "\n\nText.\n").title \
        == "DiGraph\u2014Directed graphs"
    assert load(tmp_path, "pp.rst", "Pages 3--5\n" + "=" * 10 + "\n\nText.\n").title == "Pages 3\u20135"
    # an option written in a title keeps its dashes, in code or not
    option = "The ``--root`` option and --verbose\n" + "=" * 35 + "\n\nText.\n"
    assert load(tmp_path, "opt.rst", option).title == "The `--root` option and --verbose"


def test_a_reference_written_as_one_long_definition_list_has_a_section_per_entry(tmp_path: Path, monkeypatch) -> None:
    # forty keywords under one title: each entry a section one level under the title, its term
    # kept, its description under it; with headings of its own, or a short list, nothing changes
    entries = "".join(f"``key_{n}``\n    What key {n} does. The default value is ``{n}``.\n\n" for n in range(40))
    doc = load(tmp_path, "keywords.rst", "Keywords\n========\n\nThe keywords it accepts.\n\n" + entries)
    headings = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert headings[0] == ("Keywords", 1) and headings[1:] == [(f"`key_{n}`", 2) for n in range(40)]
    described = next(b for b in doc.blocks if b.text.startswith("What key 7 does"))
    assert doc.sections[described.section].title == "`key_7`"
    assert sum(b.kind == "term" for b in doc.blocks) == 40
    sectioned = load(tmp_path, "other.rst", "Keywords\n========\n\nMore\n----\n\n" + entries)
    assert [b.text for b in sectioned.blocks if b.kind == "heading"] == ["Keywords", "More"]
    short = load(tmp_path, "short.rst", "Keywords\n========\n\n" + entries.split("``key_11``")[0])
    assert [b.text for b in short.blocks if b.kind == "heading"] == ["Keywords"]
    # the analysis reads each entry once, as the term it is: no heading sentence beside it
    from wikimem.analysis import analyze, split_sentences

    said = [(s.kind, s.text) for s in split_sentences(doc) if s.text == "`key_7`"]
    assert said == [("term", "`key_7`")]
    # and its evidence of concepts is the list's, as before the entries were sections
    import wikimem.sources

    monkeypatch.setattr(wikimem.sources, "term_sections", lambda blocks: blocks)
    plain = load(tmp_path, "plain.rst", "Keywords\n========\n\nThe keywords it accepts.\n\n" + entries)
    assert len(plain.sections) == 1 and analyze(doc).signals == analyze(plain).signals


def test_sections_in_a_modules_description_are_sections(tmp_path: Path) -> None:
    # autodoc reads a module's description with titles (nested_parse_with_titles): a hand-written
    # module reference keeps its headings, each at its own line, its text under it
    text = ("``acme.web`` --- Handlers\n=========================\n\n.. automodule:: acme.web\n\n"
            "   Request handlers\n   ----------------\n\n   Text one.\n\n"
            "   Application settings\n   --------------------\n\n   * ``debug``: a setting.\n\n"
            "   .. autoclass:: Application\n\n      Unexpected\n      ----------\n\n      Text.\n")
    doc = load(tmp_path, "web.rst", text)
    headings = [(b.text, b.line) for b in doc.blocks if b.kind == "heading"]
    assert headings[1:] == [("Request handlers", 6), ("Application settings", 11)], headings
    item = next(b for b in doc.blocks if b.kind == "item")
    assert item.line == 14 and [b.text for b in doc.blocks if b.kind == "heading" and b.line < item.line][-1] == \
        "Application settings"
    # a class's description is read as before: a title there is no section (nor in Sphinx)
    assert not any(b.text == "Unexpected" and b.kind == "heading" for b in doc.blocks)


@pytest.mark.parametrize("mark", ["=", "#", "*", "-", "~", "+"])
def test_an_overlined_title_is_a_title_in_any_punctuation_and_any_file(tmp_path: Path, mark: str) -> None:
    title = "Widget 1.2.1 release notes"
    text = f"{mark * 26}\n{title}\n{mark * 26}\n\nWidget 1.2.1 fixes two small bugs in the\ncache.\n"
    for name in ("notes.rst", "notes.txt", "NOTES"):
        doc = load(tmp_path, name, text)
        assert doc.title == title, (name, doc.title)
        assert doc.format == "rst"
        assert not any(set(b.text) <= {mark} for b in doc.blocks)


def test_a_txt_file_that_is_rest_by_its_structure_is_read_as_rest_however_it_starts() -> None:
    title = "Widgets\n=======\n\nA widget is a small part.\n"
    assert sniff_format(".. _widgets:\n\n" + title, ".txt") == "rst"
    assert sniff_format(".. This file is generated.\n\n" + title, ".txt") == "rst"
    assert sniff_format(":orphan:\n\n" + title, ".txt") == "rst"
    # plain text stays plain text, Markdown stays Markdown
    assert sniff_format("Widgets\n\nA widget is a small part.\n", ".txt") == "text"
    assert sniff_format("# Widgets\n\nSee [the list](list.md) and [more](more.md).\n", ".txt") == "markdown"


def test_a_plain_text_file_never_takes_an_overline_for_its_title(tmp_path: Path) -> None:
    from wikimem.sources import load_plain

    doc = load_plain("raw/CHANGES", "=====\nMOVED\n=====\n\nPlease see the changelog page.\n")
    assert doc.title == "MOVED"


def test_only_shows_what_the_html_output_shows(tmp_path: Path) -> None:
    text = ("Plugins\n=======\n\n.. only:: not latex\n\n   The HTML list of plugins.\n\n"
            ".. only:: latex\n\n   The PDF list of plugins.\n\n.. only:: html and not epub\n\n   Shown too.\n")
    assert [b.text for b in load(tmp_path, "plugins.rst", text).blocks] == \
        ["Plugins", "The HTML list of plugins.", "Shown too."]


def test_a_document_with_no_title_is_named_for_its_file(tmp_path: Path) -> None:
    doc = load(tmp_path, "docs/moved.rst", ":orphan:\n\nThis page has moved to the new guide.\n")
    assert doc.title == "Moved"
    assert [b.text for b in doc.blocks] == ["This page has moved to the new guide."]


def test_a_module_page_without_a_heading_is_titled_for_the_object_it_documents(tmp_path: Path) -> None:
    # mkdocstrings renders an API page from one directive; the page has no heading of its own
    doc = load(tmp_path, "reference/api_page.md", "::: acme.text_tools\n    options:\n      show_root_heading: true\n")
    assert doc.title == "acme.text_tools"
    # a page named for a dotted module is named as the code is written, not as words
    assert load(tmp_path, "reference/acme.text_tools.rst", ":orphan:\n\nThe text helpers.\n").title == "acme.text_tools"
    assert load(tmp_path, "docs/getting_started.md", "Some words to begin with.\n").title == "Getting started"


SERVER_REFERENCE = """\
Server
======

.. function:: serve(app, *, host=None, port=None, \\
                    shutdown_timeout=60.0, \\
                    backlog=128)

   Serve an application until it is interrupted.

   :param app: the application to serve.

   :param int backlog: the number of unaccepted connections that the
                       system will allow before refusing new
                       connections (``128`` by default).

   :param float keepalive_timeout: a delay before a TCP connection is
                                   closed after a request. The delay
                                   allows for reuse of a TCP connection.

      .. versionadded:: 3.8

   :param bool append_version: a flag for adding the file version.

      By default it has the value given to the constructor (``False`` by default).

   :raises ValueError: if the port is taken.

   :returns: nothing.
"""


def test_a_signature_over_several_lines_info_fields_and_a_hanging_field_read_as_sphinx_shows_them(tmp_path: Path) -> None:
    doc = load(tmp_path, "server.rst", SERVER_REFERENCE)
    blocks = [(b.kind, " ".join(b.text.split())) for b in doc.blocks]
    # a line ended by a backslash goes on on the next: one signature, one term, shown with its defaults
    assert [t for k, t in blocks if k == "term"] == ["serve"]
    assert ("para", "Signature: `serve(app, *, host=None, port=None, shutdown_timeout=60.0, backlog=128)`.") in blocks
    items = [t for k, t in blocks if k == "item"]
    assert items[0] == "`app`: the application to serve."
    assert items[1].startswith("`backlog` (int): the number of unaccepted connections")
    # a field whose first line docutils reads as a term (its other lines indented deeper than the
    # note that follows) is one paragraph, as written
    assert items[2].startswith("`keepalive_timeout` (float): a delay before a TCP connection is closed after a request.")
    assert items[3] == "`append_version` (bool): a flag for adding the file version."
    assert items[4:] == ["Raises `ValueError`: if the port is taken.", "Returns: nothing."]
    from wikimem.analysis import analyze

    rows = {row[0]: row[1] for row in analyze(doc).defaults}
    assert rows.get("`backlog` (serve)") == "`128`", rows
    # "(`False` by default)" in a paragraph after a parameter's item says not whose default it is
    assert "serve" not in rows and not [r for r in rows if "append_version" in r], rows
    # a signature is a key fact however long it is: its keyword defaults are what a reader asks of it
    many = ", \\\n                 ".join(f"option_number_{k}=None" for k in range(30))
    long_doc = load(tmp_path, "long.rst", f"Long\n====\n\n.. function:: run(app, *, {many})\n\n   Run the app.\n")
    analysis = analyze(long_doc)
    facts = [analysis.sentences[i].text for i in analysis.facts]
    assert [f for f in facts if f.startswith("Signature: `run(app, *, option_number_0=None,") and len(f) > 400], facts


def test_a_commands_help_output_in_a_code_block_is_read_as_its_options(tmp_path: Path) -> None:
    text = ("# Command line\n\nRun the converter from a shell.\n\n```\nUsage: convert [options] [INPUTFILE]\n\nOptions:\n"
            "  --version             show program's version number and exit\n"
            "  -f OUTPUT_FILE, --file=OUTPUT_FILE\n                        Write output to OUTPUT_FILE. Defaults to STDOUT.\n"
            "  -c CONFIG_FILE, --configs=CONFIG_FILE\n                        Read configurations from CONFIG_FILE.\n"
            "                        It must be JSON.\n  -q, --quiet           Suppress all warnings.\n```\n\n"
            "A shell session that is no listing:\n\n```\n$ convert -q in.txt\n$ convert --file=out.html in.txt\n```\n")
    doc = load(tmp_path, "cli.md", text)
    items = [(b.line, b.subject, b.text) for b in doc.blocks if b.kind == "item"]
    assert items == [
        (9, "--version", "`--version`: show program's version number and exit"),
        (10, "--file", "`-f OUTPUT_FILE`, `--file=OUTPUT_FILE`: Write output to OUTPUT_FILE. Defaults to STDOUT."),
        (12, "--configs", "`-c CONFIG_FILE`, `--configs=CONFIG_FILE`: Read configurations from CONFIG_FILE. It must be JSON."),
        (15, "--quiet", "`-q`, `--quiet`: Suppress all warnings."),
    ], items
    assert [b.kind for b in doc.blocks].count("code") == 2  # the listing stays as written, too


# --- roles: what Sphinx shows for a target --------------------------------------------------


def test_a_role_targets_scope_marker_is_not_shown(tmp_path: Path) -> None:
    text = ("API\n===\n\nUse :class:`_orm.Session` with :paramref:`_orm.mapped_column.default`, "
            ":meth:`~_orm.Session.execute`, :class:`.NullType` and :meth:`__init__`.\n")
    para = load(tmp_path, "api.rst", text).blocks[1].text
    assert para == ("Use `Session` with `mapped_column.default`, `execute()`, `NullType` and "
                    "`__init__()`.")


# --- labels and documents across the set ------------------------------------------------------

GUIDE = """\
:orphan:

.. _start:

Widget Documentation
====================

Read :ref:`install-guide` first, then :doc:`guide/usage` and :ref:`the options <widget-options>`.

.. toctree::

   guide/usage
"""

USAGE = """\
Using widgets
=============

.. _install-guide:

Installing the widget library
-----------------------------

You install the widget library with pip, as the :doc:`/index` says.

.. _widget-options:

Options
-------

The widget takes options; :ref:`nowhere` is not a label.
"""


def test_a_ref_shows_the_title_of_the_section_it_names_and_links_its_page(ws: Workspace) -> None:
    write(ws, "docs/index.rst", GUIDE)
    write(ws, "docs/guide/usage.rst", USAGE)
    compile_(ws)
    _, index = page(ws, "docs/index.rst")
    usage_file, usage = page(ws, "docs/guide/usage.rst")
    link = usage_file.name
    assert (f"Read [Installing the widget library]({link}) first, then [Using widgets]({link}) and "
            f"[the options]({link}).") in index.body
    # `:doc:` with a leading "/" is from the top of the tree; a missing label is its name, with a note
    index_file, _ = page(ws, "docs/index.rst")
    assert f"as the [Widget Documentation](../{index_file.relative_to(ws.wiki).as_posix()}) says" in usage.body \
        or f"as the [Widget Documentation]({index_file.name}) says" in usage.body
    assert "`nowhere`" in usage.body and "Note: cross-references to what raw/ does not hold" in usage.body
    assert not re.search(r"install-guide|widget-options|[\uf8f0-\uf8f5]", index.body + usage.body)


def test_a_ref_shown_elsewhere_follows_a_change_of_the_section_it_names(ws: Workspace) -> None:
    write(ws, "docs/index.rst", GUIDE)
    write(ws, "docs/guide/usage.rst", USAGE)
    compile_(ws)
    write(ws, "docs/guide/usage.rst", USAGE.replace("Installing the widget library\n-----------------------------",
                                                    "Setting up\n----------"))
    report = compile_(ws)
    assert report.compiled == ["raw/docs/guide/usage.rst"]
    _, index = page(ws, "docs/index.rst")
    assert "Read [Setting up](" in index.body and "Installing" not in index.body
    assert_same_as_a_full_compile(ws)


def test_a_document_that_includes_a_file_before_any_title_shows_that_files_title(ws: Workspace) -> None:
    """`docs/changelog.rst` holding only `.. include:: ../CHANGES.rst` is the changelog, shown by
    Sphinx under CHANGES.rst's title: its page takes that title and links the file's page, and so
    does a document that includes the file before its own sections. An include after a title of
    its own, or of a part from a marker on, leaves the title alone. When the included file's
    title changes, an incremental compile retitles the page, as a full compile would."""
    write(ws, "CHANGES.rst", "Widget Changelog\n================\n\nVersion 2.0\n-----------\n\n- Faster.\n")
    write(ws, "docs/changelog.rst", ".. include:: ../CHANGES.rst\n")
    write(ws, "docs/history.rst", ".. _history:\n\n.. include:: ../CHANGES.rst\n\nVersion 1.0\n-----------\n\n- Slower.\n")
    write(ws, "docs/license.rst", "License\n=======\n\nThe terms.\n\n.. include:: ../CHANGES.rst\n")
    write(ws, "docs/part.rst", ".. include:: ../CHANGES.rst\n   :start-after: Version 2.0\n")
    write(ws, "docs/index.rst", "Widgets\n=======\n\n.. toctree::\n\n   changelog\n   license\n")
    # two files that include each other before any title: each keeps the name of its file
    write(ws, "loop/one.rst", ".. include:: two.rst\n")
    write(ws, "loop/two.rst", ".. include:: one.rst\n")
    compile_(ws)
    assert (page(ws, "loop/one.rst")[1].title, page(ws, "loop/two.rst")[1].title) == ("One", "Two")
    changes_file, _ = page(ws, "CHANGES.rst")
    _, changelog = page(ws, "docs/changelog.rst")
    assert changelog.title == "Widget Changelog"
    assert f"Includes [Widget Changelog]({changes_file.name})." in changelog.body
    assert page(ws, "docs/history.rst")[1].title == "Widget Changelog"
    assert page(ws, "docs/license.rst")[1].title == "License"
    assert page(ws, "docs/part.rst")[1].title == "Part"
    assert "[Widget Changelog (docs/changelog.rst)]" in (ws.wiki / "index.md").read_text(encoding="utf-8")

    write(ws, "CHANGES.rst", "Release history\n===============\n\nVersion 2.0\n-----------\n\n- Faster.\n")
    report = compile_(ws)
    assert report.compiled == ["raw/CHANGES.rst"]
    _, changelog = page(ws, "docs/changelog.rst")
    assert changelog.title == "Release history" and "Includes [Release history](" in changelog.body
    assert "[Release history](" in page(ws, "docs/index.rst")[1].body  # the table of contents lists it so
    assert_same_as_a_full_compile(ws)

    # the included file gone: the page is named for its own file again
    (ws.raw / "CHANGES.rst").unlink()
    compile_(ws)
    _, changelog = page(ws, "docs/changelog.rst")
    assert changelog.title == "Changelog" and "Includes `../CHANGES.rst`." in changelog.body


def test_a_substitution_defined_in_an_included_file_shows_its_text(ws: Workspace) -> None:
    """`|project_name|` defined in `global.rst.inc` (a file of definitions the pages include)
    shows "Widget", as Sphinx shows it; one defined nowhere in raw/ (conf.py's `|release|`) is
    its name, with no note; an edit of the definition reaches the pages on an incremental
    compile, as a full compile would."""
    write(ws, "docs/global.rst.inc", ".. |project_name| replace:: Widget\n.. |author| replace:: Ann Example\n")
    write(ws, "docs/intro.rst", ".. include:: global.rst.inc\n\nIntroduction\n============\n\n"
                                "|project_name| watches folders; this is release |release|.\n")
    compile_(ws)
    _, intro = page(ws, "docs/intro.rst")
    assert "Widget watches folders; this is release release." in intro.body, intro.body
    assert "> Note:" not in intro.body and "project_name" not in intro.body
    write(ws, "docs/global.rst.inc", ".. |project_name| replace:: Gadget\n.. |author| replace:: Ann Example\n")
    compile_(ws)
    assert "Gadget watches folders" in page(ws, "docs/intro.rst")[1].body
    assert_same_as_a_full_compile(ws)
    # an include file that holds no reST is no source
    write(ws, "docs/consts.inc", "#define WIDGET_MAX 10\n#define WIDGET_MIN 1\n")
    report = compile_(ws)
    assert [p for p, _ in report.skipped] == ["raw/docs/consts.inc"]


def test_a_myst_include_before_any_heading_shows_the_included_files_title(ws: Workspace) -> None:
    write(ws, "CHANGES.md", "# Widget changes\n\n## 2.0\n\n- Faster.\n")
    write(ws, "docs/changes.md", "```{include} ../CHANGES.md\n:end-before: Unreleased\n```\n")
    write(ws, "docs/license.md", "# License\n\n```{include} ../CHANGES.md\n```\n")
    compile_(ws)
    changes_file, _ = page(ws, "CHANGES.md")
    _, changes = page(ws, "docs/changes.md")
    assert changes.title == "Widget changes" and f"Includes [Widget changes]({changes_file.name})." in changes.body
    assert page(ws, "docs/license.md")[1].title == "License"


def test_a_ref_links_the_part_page_that_holds_its_section(ws: Workspace) -> None:
    sections = "".join(f".. _topic-{n}:\n\nTopic number {n} of the reference\n{'-' * 34}\n\n"
                       + "".join(f"Item {n}.{m}\n{'~' * (7 + len(str(n)) + len(str(m)))}\n\nText {m}.\n\n"
                                 for m in range(12))
                       for n in range(12))
    write(ws, "ref.rst", "Reference\n=========\n\n" + sections)
    write(ws, "howto.rst", "How to\n======\n\nThe seventh topic is described at :ref:`topic-7`, which lists "
                           "its twelve items in order.\n")
    compile_(ws)
    ref_file, _ = page(ws, "ref.rst")
    parts = sorted((ref_file.parent / ref_file.stem).glob("*.md"))
    assert parts, "the reference is split into parts"
    holding = [p for p in parts if "Topic number 7 of the reference" in p.read_text() or
               any("Item 7.0" in line for line in p.read_text().splitlines())]
    _, howto = page(ws, "howto.rst")
    target = re.search(r"\[Topic number 7 of the reference\]\(([^)]+)\)", howto.body)
    assert target is not None
    assert target.group(1) in {f"{ref_file.stem}/{p.name}" for p in holding} | {ref_file.name}
    assert target.group(1) != ref_file.name or not holding


def test_a_ref_in_a_key_fact_on_a_part_page_links_from_the_part(ws: Workspace) -> None:
    # key facts move to the part page of their section; a reference they make links the page it
    # names relative to the part, not to the source page the part belongs to
    sections = "".join(f"Setting group {n}\n{'-' * (14 + len(str(n)))}\n\n"
                       + "".join(f"option_{n}_{m}\n{'~' * (8 + len(str(n)) + len(str(m)))}\n\n"
                                 f"Changed in version 2.{m}: the ``option_{n}_{m}`` setting requires Python 3.{m} "
                                 f"or newer, as :doc:`tuning` and `the guide <https://example.org/guide>`_ explain.\n\n"
                                 for m in range(15))
                       for n in range(8))
    write(ws, "ref.rst", "Settings reference\n==================\n\n" + sections)
    write(ws, "tuning.rst", "Tuning\n======\n\nTuning the widget server starts with its timeouts.\n")
    compile_(ws)
    ref_file, _ = page(ws, "ref.rst")
    parts = sorted((ref_file.parent / ref_file.stem).glob("*.md"))
    assert parts, "the reference is split into parts"
    assert any("[Tuning](" in p.read_text() for p in parts), "a part quotes a fact that names the other page"
    assert any("https://example.org/guide)" in p.read_text() for p in parts), "a web address stays as written"
    assert broken_links(ws.wiki) == []


def test_a_described_settings_default_option_is_its_default(ws: Workspace) -> None:
    # Sphinx's confval (and the extensions' like it) give a setting's default as an option of the
    # directive, not in its text: the page's defaults table states it, cited at the option's line
    write(ws, "ref.rst", "Configuration\n=============\n\nOptions\n-------\n\n"
                         ".. confval:: report_family\n    :type: ``str``\n    :default: ``\"v2\"``\n\n"
                         "    Configures the format of the generated report.\n\n"
                         ".. confval:: max_warnings\n    :default: ``-1``\n\n"
                         "    Sets the number of warnings allowed before the run fails.\n")
    compile_(ws)
    _, ref = page(ws, "ref.rst")
    assert re.search(r'\| report_family \| `"v2"` \| \[9\]\(', ref.body), ref.body
    assert re.search(r"\| max_warnings \| `-1` \| \[14\]\(", ref.body), ref.body


def test_a_markdown_headings_emphasis_is_no_part_of_its_title(tmp_path: Path) -> None:
    # "# The _Gizmo_ code style" is titled "The Gizmo code style", as the HTML page shows it; a
    # dunder name stays a name, and the text keeps its emphasis
    doc = load(tmp_path, "style.md", "# The _Gizmo_ code style\n\nText about **it** and `__init__`.\n\n"
                                     "## Using __init__.py and **strong** words\n\nMore.\n")
    assert doc.title == "The Gizmo code style"
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["The Gizmo code style", "Using __init__.py and strong words"]
    assert "Text about **it** and `__init__`." in [b.text for b in doc.blocks]


def test_a_label_defined_twice_links_one_and_the_page_says_so(ws: Workspace) -> None:
    write(ws, "a.rst", ".. _setup:\n\nSetup in A\n==========\n\nText of A.\n")
    write(ws, "b.rst", ".. _setup:\n\nSetup in B\n==========\n\nText of B.\n")
    write(ws, "c.rst", "Guide\n=====\n\nThe first step is described in :ref:`setup` for every reader.\n")
    report = compile_(ws)
    assert report.failed == []
    _, c = page(ws, "c.rst")
    assert "[Setup in A](a.md)" in c.body
    assert "label `setup` (raw/a.rst line 3, raw/b.rst line 3) is defined more than once" in c.body


# --- identifiers where text is shortened ------------------------------------------------------


@pytest.mark.parametrize("written", ["`tmp_path` is a `pathlib.Path` object", "Put __init__.py files in tmp_path",
                                     "Add it to INSTALLED_APPS first", "`orm.mapped_column()` declares a column",
                                     "a*b and snake_case_name stay"])
def test_identifiers_stay_as_written_when_emphasis_goes(written: str) -> None:
    from wikimem.pages import unemphasized

    assert unemphasized(written) == written
    assert unemphasized(f"**Note**: {written}, *really*.") == f"Note: {written}, really."


def test_a_cut_never_leaves_a_code_span_open() -> None:
    from wikimem.pages import shorten

    text = "The fixture `tmp_path_factory.mktemp()` returns a unique temporary directory for each call"
    for limit in range(10, len(text)):
        cut = shorten(text, limit)
        assert cut.count("`") % 2 == 0, cut


def test_catalog_lines_keep_identifiers(ws: Workspace) -> None:
    write(ws, "fixtures.rst", "Temporary directories\n=====================\n\n"
                              "The ``tmp_path`` fixture gives each test its own ``__init__.py``-free directory, and "
                              "the ``INSTALLED_APPS`` setting is not read by it at all, whatever *you* put there.\n")
    compile_(ws)
    index = (ws.wiki / "index.md").read_text() + "".join(p.read_text() for p in ws.wiki.rglob("index*.md"))
    line = next(ln for ln in index.splitlines() if "Temporary directories" in ln)
    assert "`tmp_path`" in line and "tmppath" not in line and "*you*" not in line


def test_a_markdown_dunder_name_is_a_name(tmp_path: Path) -> None:
    doc = load(tmp_path, "a.md", "# Packages\n\nPut __init__.py files in every package, and define __all__ there.\n")
    assert doc.blocks[1].text == "Put __init__.py files in every package, and define __all__ there."


# --- tables ------------------------------------------------------------------------------------


def _plugins(rows: int) -> str:
    body = "".join(f"   * - widget-plugin-{n}\n     - *status*: stable; the plugin requires widget>=1.{n} and "
                   f"Python 3.{n % 12} or newer, and it must be installed with its own configuration file, "
                   f"which defaults to widget-plugin-{n}.toml in the project folder\n" for n in range(rows))
    return ("Plugin List\n===========\n\nThis list is generated.\n\n.. list-table::\n   :header-rows: 1\n\n"
            "   * - name\n     - summary\n" + body)


def test_a_long_tables_rows_are_data(tmp_path: Path) -> None:
    from wikimem.analysis import analyze
    from wikimem.sources.document import LONG_TABLE

    doc = load(tmp_path, "plugins.rst", _plugins(LONG_TABLE + 10))
    rows = [b for b in doc.blocks if b.kind == "table"]
    assert len(rows) == LONG_TABLE + 11 and all(b.rows == LONG_TABLE + 11 and b.data for b in rows)
    analysis = analyze(doc)
    assert {s.kind for s in analysis.sentences if "widget-plugin" in s.text} == {"data"}
    assert not any("widget-plugin" in analysis.sentences[i].text for i in analysis.facts)
    assert not any(k.startswith("widget-plugin") or k == "status" for k in analysis.signals)
    short = load(tmp_path, "few.rst", _plugins(3))
    assert all(not b.data and b.rows == 4 for b in short.blocks if b.kind == "table")


def test_a_long_table_gives_no_concept_fact_or_key_point(ws: Workspace) -> None:
    write(ws, "plugins.rst", _plugins(80))
    write(ws, "guide.rst", "Guide\n=====\n\nA *status* is what a plugin reports. Plugins extend the widget.\n")
    compile_(ws)
    for file in (ws.wiki / "concepts").glob("*.md"):
        # not cited, not even a member: the rows say nothing about a concept
        assert "plugins.rst" not in file.read_text(), file.name
    _, plugins = page(ws, "plugins.rst")
    facts = plugins.body.split("## Key facts", 1)[1].split("\n## ", 1)[0] if "## Key facts" in plugins.body else ""
    assert "widget-plugin" not in facts
    assert "| widget-plugin-0 |" in plugins.body  # the table itself is still on its page


def test_a_settings_table_keeps_its_defaults(ws: Workspace) -> None:
    rows = "".join(f"   * - ``option_{n}``\n     - Default: ``{n}``\n" for n in range(60))
    write(ws, "settings.rst", "Settings\n========\n\n.. list-table::\n\n" + rows)
    compile_(ws)
    _, settings_page = page(ws, "settings.rst")
    assert "## Defaults" in settings_page.body or "Default: `7`" in settings_page.body


# --- duplicates and counts -----------------------------------------------------------------------


def test_identical_files_in_several_folders_are_titled_by_their_own_folder(ws: Workspace) -> None:
    text = "See the changelog README for the build system.\n\nDo not remove this file: the folder must exist.\n"
    for n in (11, 12, 13, 14):
        write(ws, f"changelog/unreleased_{n}/README.txt", text)
    compile_(ws)
    titles = sorted(page(ws, f"changelog/unreleased_{n}/README.txt")[1].title for n in (11, 12, 13, 14))
    assert titles == ["Unreleased 11", "Unreleased 12", "Unreleased 13", "Unreleased 14"]


def test_status_and_lint_count_the_sources_compile_compiles(ws: Workspace) -> None:
    from wikimem.lint import run_lint
    from wikimem.service import raw_summary

    write(ws, "a.md", "# A\n\nA widget is a small part.\n")
    write(ws, "empty.txt", "   \n")
    write(ws, "code.md", "```\nx = 1\n```\n")
    report = compile_(ws)
    compiled = len(report.compiled) + report.unchanged
    assert compiled == 1 and len(report.skipped) == 2
    assert raw_summary(ws)["sources"] == compiled and raw_summary(ws)["skipped"] == 2
    assert run_lint(ws, load_settings(ws.root, environ={})).sources == compiled


# --- release structure -----------------------------------------------------------------------------


def sections(doc) -> list[tuple[str | None, str | None, bool]]:
    return [(s.version, s.date, s.unreleased) for s in doc.sections if s.version or s.unreleased]


def test_headings_with_the_product_name_and_date(tmp_path: Path) -> None:
    text = ("Changelog\n=========\n\nwidget 6.1.0 (2020-09-26)\n=========================\n\n- A fix.\n\n"
            "widget 3.9.0 (2018-10-15 - not published due to a release automation bug)\n"
            "===========================================================================\n\n- B.\n\n"
            "widget 3.8.0 (YANKED)\n=====================\n\n- C.\n")
    doc = load(tmp_path, "changelog.rst", text)
    assert sections(doc) == [("6.1.0", "2020-09-26", False), ("3.9.0", "2018-10-15", False), ("3.8.0", None, False)]


def test_keep_a_changelog(tmp_path: Path) -> None:
    text = ("# Changelog\n\n## [Unreleased]\n\n### Removed\n\n- Python 3.8.\n\n## [1.2.0] - 2024-05-01\n\n"
            "### Added\n\n- Widgets.\n\n## [1.1.0] - 2999-01-01\n\n- A date to come is no release date.\n\n"
            "[1.2.0]: https://example.org/compare/v1.1.0...v1.2.0\n")
    doc = load(tmp_path, "CHANGELOG.md", text)
    assert sections(doc) == [(None, None, True), ("1.2.0", "2024-05-01", False), ("1.1.0", None, False)]
    from wikimem.sources.sections import release_of

    removed = next(b for b in doc.blocks if b.text == "Python 3.8.")
    release = release_of(doc.sections, removed.section)
    assert release is not None and release.unreleased and release.version is None


def test_a_github_release_page(tmp_path: Path) -> None:
    text = ("# Releases\n\n## [v2.1.0](https://github.com/o/widget/releases/tag/v2.1.0)\n\n"
            "Released this May 1, 2024\n\n### What's Changed\n\n- Faster.\n\n"
            "## [v2.0.0](https://github.com/o/widget/releases/tag/v2.0.0) - 2024-03-02\n\n- Breaking.\n")
    doc = load(tmp_path, "releases.md", text)
    assert sections(doc) == [("2.1.0", "2024-05-01", False), ("2.0.0", "2024-03-02", False)]


def test_towncrier_fragments_are_unreleased_changes(tmp_path: Path) -> None:
    doc = load(tmp_path, "changelog/1234.bugfix.rst", "Fixed a crash when the cache is empty.\n")
    assert doc.title == "Unreleased bug fix 1234"
    assert sections(doc) == [(None, None, True)]
    assert load(tmp_path, "changelog/+tidy.misc.md", "Tidied the docs.\n").title == "Unreleased change tidy"
    # towncrier's output: "name X.Y.Z (date)" releases with their sections
    out = load(tmp_path, "CHANGES.rst", "widget 1.1.0 (2024-02-03)\n=========================\n\nBug fixes\n"
                                        "---------\n\n- Fixed.\n\nwidget 1.0.0 (2023-12-01)\n"
                                        "=========================\n\n- First.\n")
    assert sections(out) == [("1.1.0", "2024-02-03", False), ("1.0.0", "2023-12-01", False)]


def test_changelog_directives_give_releases_and_changes(tmp_path: Path) -> None:
    text = ("=============\n2.0 Changelog\n=============\n\n.. changelog::\n    :version: 2.0.59\n"
            "    :include_notes_from: unreleased_20\n\n.. changelog::\n    :version: 2.0.58\n"
            "    :released: November 16, 2026\n\n    .. change::\n        :tags: bug, orm\n        :tickets: 10936\n\n"
            "        Fixed issue where deleting the parent object emitted UPDATE twice.\n\n"
            ".. changelog::\n    :version: 2.0.57\n    :released: 2999-11-03\n\n    .. change::\n"
            "        :tags: usecase, sql\n\n        Added a feature.\n")
    doc = load(tmp_path, "changelog_20.rst", text)
    assert doc.title == "2.0 Changelog"
    assert sections(doc) == [("2.0.59", None, True), ("2.0.58", "2026-11-16", False), ("2.0.57", None, False)]
    # a dated release is cited at the line that dates it (what "when was it released" asks for)
    assert [s.line for s in doc.sections if s.version] == [5, 11, 21]
    change = next(b for b in doc.blocks if "Fixed issue" in b.text)
    assert change.kind == "item" and change.text.startswith("Fixed issue")  # the tags are no part of it
    assert doc.sections[change.section].version == "2.0.58"
    fragment = load(tmp_path, "unreleased_20/10936.rst",
                    ".. change::\n    :tags: bug, orm\n    :tickets: 10936\n\n    Fixed a bug in the ORM.\n")
    assert fragment.title == "Unreleased change 10936" and sections(fragment) == [(None, None, True)]


def test_a_directive_option_written_twice_keeps_its_last_value_and_the_directive_its_text(tmp_path: Path) -> None:
    """docutils refuses a directive whose option repeats ('duplicate option "released"'): a
    changelog whose release tool wrote `:released:` again lost those releases' notes."""
    text = ("Changes\n=======\n\n.. changelog::\n    :version: 2.1.0\n    :released: September 24, 2026\n\n"
            "    .. change::\n        :tags: bug\n\n        Fixed the final thing.\n\n"
            ".. changelog::\n    :version: 2.1.0rc1\n    :released: September 24, 2026\n    :released: August 31, 2026\n\n"
            "    .. change::\n        :tags: bug\n\n        The minimum supported driver version is now 2.0.1.\n")
    doc = load(tmp_path, "changelog_21.rst", text)
    assert sections(doc) == [("2.1.0", "2026-09-24", False), ("2.1.0rc1", "2026-08-31", False)]
    change = next(b for b in doc.blocks if "driver version" in b.text)
    assert doc.sections[change.section].version == "2.1.0rc1"
    assert not any("duplicate" in w for w in doc.warnings)


def test_two_releases_with_one_version_and_versions_that_do_not_parse(ws: Workspace) -> None:
    text = "".join(f"Version {v}\n{'-' * (8 + len(v))}\n\nReleased 2020-01-0{n + 1}\n\n- Change {n}.\n\n"
                   for n, v in enumerate(["3.2.x", "2024.1rc1", "v1", "2.0", "2.0"]))
    write(ws, "CHANGES.rst", "Changes\n=======\n\n" + text)
    report = compile_(ws)
    assert report.failed == []
    from wikimem.lexicon import version_key

    doc = load_source(ws.raw / "CHANGES.rst", "raw/CHANGES.rst", max_bytes=10**6)
    versions = [s.version for s in doc.sections if s.version]
    assert versions == ["3.2.x", "2024.1rc1", "1", "2.0", "2.0"]
    assert sorted(versions, key=version_key) == ["1", "2.0", "2.0", "3.2.x", "2024.1rc1"]


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_input_reads_to_a_page_with_a_note(ws: Workspace) -> None:
    write(ws, "a.rst", "A\n=\n\n.. include:: b.rst\n\nA includes B, which includes A.\n")
    write(ws, "b.rst", "B\n=\n\n.. include:: a.rst\n\nB includes A, which includes B.\n")
    write(ws, "missing.rst", "Missing\n=======\n\nSee :ref:`no-such-label` and :doc:`no/such/doc` for more.\n")
    ragged = "+-----+-----+\n| a   | b |\n+-----+-----+\n| c | d     |\n+-----+-----+\n"
    write(ws, "ragged.rst", "Ragged\n======\n\nA table follows.\n\n" + ragged + "\nText after it.\n")
    big = "".join(f"   * - row {n}\n     - value {n}\n" for n in range(10_000))
    write(ws, "big.rst", "Big\n===\n\n.. list-table::\n\n" + big)
    write(ws, "fields.rst", ":orphan:\n:tocdepth: 2\n\nThe page has moved; nothing else is here.\n")
    report = compile_(ws)
    assert report.failed == [] and report.skipped == []
    _, missing = page(ws, "missing.rst")
    assert "no such label" in missing.body and "`no-such-label`" in missing.body and "> Note:" in missing.body
    _, ragged_page = page(ws, "ragged.rst")
    assert "Malformed table" in ragged_page.body  # the note says what was wrong
    raw_ragged = (ws.raw / "ragged.rst").read_text()
    assert "Text after it." in raw_ragged
    _, big_page = page(ws, "big.rst")
    assert "| row 0 | value 0 |" in big_page.body and "more in the source" in big_page.body
    assert page(ws, "fields.rst")[1].title == "Fields"
    for name in ("a.rst", "b.rst"):
        assert page(ws, name)[1].title == name[0].upper()


def test_a_ragged_table_loses_no_text(tmp_path: Path) -> None:
    ragged = "+-----+-----+\n| a   | b |\n+-----+-----+\n| c | d     |\n+-----+-----+\n"
    doc = load(tmp_path, "ragged.rst", "Ragged\n======\n\nBefore.\n\n" + ragged + "\nAfter.\n")
    code = [b for b in doc.blocks if b.kind == "code"]
    assert code and code[0].text.strip() == ragged.strip() and code[0].line == 6
    assert doc.warnings and "Malformed table" in doc.warnings[0]


def test_labels_and_references_are_read(tmp_path: Path) -> None:
    from wikimem.sources import xref

    doc = load(tmp_path, "a.rst", ".. _top:\n\nTitle\n=====\n\nSee :ref:`Other <x>` and :ref:`y`.\n\n"
                                  ".. _fig-one:\n\n.. figure:: one.png\n\n   The first figure.\n\n"
                                  ".. _para:\n\nA paragraph named.\n", xrefs=True)
    assert doc.labels == [("top", 3, "Title"), ("fig-one", 12, "The first figure."), ("para", 16, None)]
    text = doc.blocks[1].text
    assert xref.references(text) == [("ref", "x"), ("ref", "y")]
    assert xref.plain(text) == "See Other and y."
    # every other reader gets the plain text
    assert load(tmp_path, "a.rst", (tmp_path / "a.rst").read_text()).blocks[1].text == "See Other and y."


def test_the_analysis_keeps_labels_and_references(tmp_path: Path) -> None:
    from wikimem.analysis import analyze

    doc = load(tmp_path, "a.rst", "Title\n=====\n\n.. _sec:\n\nSection\n-------\n\n"
                                  "The widget needs Python 3.10, as :ref:`sec` and :doc:`other` say.\n", xrefs=True)
    analysis = analyze(doc)
    assert analysis.labels == [["sec", 6, "Section"]]
    assert analysis.xrefs == [["ref", "sec"], ["doc", "other"]]
    # facts are quoted as the text reads alone
    assert all("\uf8f0" not in json.dumps(c) for c in analysis.claims)


def test_myst_targets_and_roles_resolve_as_rest_ones_do(ws: Workspace) -> None:
    write(ws, "docs/how.md", "# How it works\n\n(how-frozen)=\n## Immutability\n\nFrozen classes cannot be changed.\n")
    write(ws, "docs/index.md", "# Widgets\n\nEvery widget is frozen by default, as {ref}`how-frozen` explains, and "
                               "{doc}`the overview <how>` says why; {ref}`nowhere` is no label.\n")
    compile_(ws)
    _, index = page(ws, "docs/index.md")
    how_file, _ = page(ws, "docs/how.md")
    assert f"as [Immutability]({how_file.name}) explains, and [the overview]({how_file.name}) says why" in index.body
    assert "(how-frozen)=" not in page(ws, "docs/how.md")[1].body


def test_interpreted_text_without_a_role(ws: Workspace) -> None:
    # Sphinx sets find what `text` names with their default role (`any`: a label or a page);
    # a name in code is code; anything else is docutils' title reference, read as its text
    write(ws, "names.rst", "On the names\n============\n\nThe package has two top-level names.\n")
    write(ws, "api.rst", "API\n===\n\nDecorate a class with `attrs.define`; if the many names confuse you, read "
                         "`names` first, then `The Zen of Python` and `nowhere`.\n")
    compile_(ws)
    _, api = page(ws, "api.rst")
    assert ("Decorate a class with `attrs.define`; if the many names confuse you, read [On the names](names.md) "
            "first, then The Zen of Python and nowhere.") in api.body


def test_interpreted_text_with_an_explicit_title_shows_the_title(tmp_path: Path) -> None:
    # `title <target>` with the default role (marshmallow's "Custom `class Meta
    # <marshmallow.Schema.Meta>` options"): Sphinx shows the title, in code when it names code
    from wikimem.sources import load_source

    (tmp_path / "options.rst").write_text(
        "Custom `class Meta <marshmallow.Schema.Meta>` options\n"
        "=====================================================\n\n"
        "Set `the unknown option <Schema.Meta.unknown>` or read `the guide <quickstart>`.\n", encoding="utf-8")
    doc = load_source(tmp_path / "options.rst", "options.rst", max_bytes=10**6)
    assert doc.title == "Custom `class Meta` options"  # a title keeps its code spans, as others do
    assert doc.blocks[1].text == "Set `the unknown option` or read the guide."


def test_a_c_functions_term_is_its_name_not_its_return_type(tmp_path: Path) -> None:
    """`.. c:function:: AcmeObject* Acme_GetParent(AcmeObject* g)` defines Acme_GetParent: an
    unseen C API reference had four functions under one term "AcmeObject*", their return type."""
    text = ("C API\n=====\n\n.. c:type:: AcmeObject\n\n   The C name of the Python object.\n\n"
            ".. c:function:: AcmeObject* Acme_GetParent(AcmeObject* g)\n\n   Returns the parent of *g*.\n\n"
            ".. c:function:: PyObject *Acme_Switch(AcmeObject* g, PyObject* args)\n\n   Switches to *g*.\n\n"
            ".. c:function:: void Acme_Import(void)\n\n   Imports the module.\n\n"
            ".. cpp:function:: const acme::Widget& acme::make_widget(int size)\n\n   Makes a widget.\n\n"
            ".. c:macro:: ACME_STARTED(g)\n\n   True once *g* started.\n")
    doc = load(tmp_path, "c_api.rst", text)
    assert [b.text for b in doc.blocks if b.kind == "term"] == [
        "AcmeObject", "Acme_GetParent", "Acme_Switch", "Acme_Import", "acme::make_widget", "ACME_STARTED"]

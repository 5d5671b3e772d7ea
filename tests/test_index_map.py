"""index.md as a map: groups that follow raw/'s folders and the documents' own series, in their
natural order, with descriptions that describe; within the caps at any size and shape."""

from __future__ import annotations

import re

import pytest

from conftest import write
from linkcheck import broken_links
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.index_page import (
    CATALOG_BYTES,
    MAX_BYTES,
    MAX_LINES,
    SOFT_BYTES,
    Entry,
    build,
    describe,
    is_catalog,
)
from wikimem.pages import Page
from wikimem.workspace import Workspace


def compile_(ws: Workspace):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}))


def _reachable(pages: dict[str, str]) -> set[str]:
    seen, todo = set(), ["index.md"]
    while todo:
        page = todo.pop()
        seen.add(page)
        folder = page.rsplit("/", 1)[0] + "/" if "/" in page else ""
        for link in re.findall(r"\]\(([^)#]+)\)", pages[page]):
            target = folder + link
            while re.search(r"[^/]+/\.\./", target):
                target = re.sub(r"[^/]+/\.\./", "", target, count=1)
            if target in pages and target not in seen:
                todo.append(target)
    return seen


def _check(pages: dict[str, str], entries: list[Entry]) -> None:
    for path, text in pages.items():
        assert is_catalog(path), path
        assert len(text.splitlines()) <= MAX_LINES and len(text.encode()) <= MAX_BYTES, path
    assert _reachable(pages) == set(pages)
    # every page is listed once in the catalogs (index.md's highlights come on top of that)
    catalogs = [t for p, t in pages.items() if p != "index.md"] or [pages["index.md"]]
    for entry in entries[:: max(1, len(entries) // 60)]:
        name = entry.path.rsplit("/", 1)[-1]
        listed = sum(len(re.findall(r"\]\((?:\.\./)*(?:sources/)?" + re.escape(name) + r"\)", t)) for t in catalogs)
        assert listed == 1, (entry.path, listed)


@pytest.mark.parametrize("shape", ["one folder", "a folder per file", "deep nesting", "same names"])
def test_the_map_stays_within_caps_whatever_the_shape_of_raw(shape: str) -> None:
    n = 3000
    entries = []
    for i in range(n):
        if shape == "one folder":
            raw = f"raw/notes/n{i:05d}.md"
        elif shape == "a folder per file":
            raw = f"raw/docs/f{i:05d}/page.md"
        elif shape == "deep nesting":
            raw = "raw/" + "/".join(f"level{d}" for d in range(20)) + f"/n{i:05d}.md"
        else:
            raw = f"raw/{'a' if i % 2 else 'b'}/releases/notes-{i}.md"
        version = f"1.{i}" if shape == "same names" else ""
        entries.append(Entry(f"sources/s{i:05d}.md", f"Release {version}" if version else f"Note {i}",
                             "A one-line description of the page, about as long as the ones compile writes.",
                             "source", raw, 1, version))
    pages = build({"sources": entries}, extra_links=[])
    _check(pages, entries)


def test_hostile_titles_and_versions_keep_the_map_valid() -> None:
    entries = [
        Entry("sources/a.md", "x" * 500, "d", "source", "raw/s/a.md", 1, "v2-beta"),
        Entry("sources/b.md", "Title with **markup** and <b>html</b>\nand a newline", "d", "source", "raw/s/b.md", 1,
              "2024.10rc1"),
        Entry("sources/c.md", "[link](javascript:alert(1))", "<script>x</script>", "source", "raw/s/c.md", 1, "1.0"),
        Entry("sources/d.md", "Plain", "d", "source", "raw/s/d.md", 1, "2.0"),
    ]
    pages = build({"sources": entries}, extra_links=[])
    _check(pages, entries)
    index = pages["index.md"]
    assert "<b>" not in index.replace("\\<b>", "") and "javascript:" not in index.replace("javascript:alert(1))", "")
    lines = [line for line in index.splitlines() if "sources/" in line]
    assert all("\n" not in line for line in lines)
    # releases newest first; a version that does not parse never outranks one that does
    order = [re.search(r"sources/(\w)\.md", line).group(1) for line in lines if re.search(r"sources/\w\.md", line)]
    assert order.index("d") < order.index("c")


def test_groups_follow_folders_series_and_reading_order(ws: Workspace) -> None:
    write(ws, "book/SUMMARY.md", "# Summary\n\n- [Start](ch02.md)\n- [Middle](ch10.md)\n- [End](ch01.md)\n")
    for name, title in (("ch01.md", "End"), ("ch02.md", "Start"), ("ch10.md", "Middle")):
        write(ws, f"book/{name}", f"# {title}\n\nThe {title.lower()} chapter says something about widgets and gears.\n")
    for minor in (1, 9, 10, 2):
        write(ws, f"notes/go1.{minor}.md", f"---\ntitle: Go 1.{minor} Release Notes\n---\n\n"
                                          f"Go 1.{minor} arrives with faster widgets and better gears.\n")
    compile_(ws)
    index = (ws.wiki / "index.md").read_text()
    assert "## book" in index and "## notes" in index
    book = index.split("## book", 1)[1].split("##", 1)[0]
    assert book.index("[Start]") < book.index("[Middle]") < book.index("[End]")  # SUMMARY.md order, not the alphabet
    notes = index.split("## notes", 1)[1].split("##", 1)[0]
    versions = re.findall(r"Go (1\.\d+) Release Notes", notes)
    assert versions == ["1.10", "1.9", "1.2", "1.1"]  # newest first, by version, not by name
    assert "newest first" in notes and "reading order" in book
    assert broken_links(ws.wiki) == []


def test_the_reading_order_comes_from_what_the_compile_read_of_the_table_of_contents(ws: Workspace, monkeypatch) -> None:
    """index.md orders a book by its SUMMARY.md without parsing it a second time: the compile
    kept its table of contents with the rest of its outline (sources.outline)."""
    from wikimem.index_page import reading_order
    from wikimem.state import State

    write(ws, "book/SUMMARY.md", "# Summary\n\n- [Start](ch02.md)\n- [Middle](ch10.md)\n- [End](ch01.md)\n")
    for name, title in (("ch01.md", "End"), ("ch02.md", "Start"), ("ch10.md", "Middle")):
        write(ws, f"book/{name}", f"# {title}\n\nThe {title.lower()} chapter says something about widgets.\n")
    compile_(ws)
    entries = [Entry(f"sources/book-{n}", n, "", kind="source", raw=f"raw/book/{n}.md")
               for n in ("SUMMARY", "ch01", "ch02", "ch10")]

    def no_parsing(*args, **kwargs):
        raise AssertionError("a table of contents the compile read was parsed again")

    monkeypatch.setattr("wikimem.sources.load_source", no_parsing)
    monkeypatch.setattr("wikimem.index_page.load_source", no_parsing)
    state = State(ws.state_db)
    try:
        state.set_meta("index.toc", {})  # no cached table: only the outline can answer
        order = reading_order(ws, state, entries)
    finally:
        state.close()
    assert sorted(order, key=order.__getitem__) == ["raw/book/SUMMARY.md", "raw/book/ch02.md",
                                                    "raw/book/ch10.md", "raw/book/ch01.md"]


def test_a_group_is_described_by_the_page_that_speaks_for_it_or_says_it_has_none() -> None:
    from wikimem.index_page import Group, _about

    def entry(raw: str, title: str, description: str) -> Entry:
        return Entry(f"sources/{raw.replace('/', '-')}", title, description, kind="source", raw=f"raw/{raw}")

    # a folder of unrelated READMEs: no one document's lead may describe the others
    readmes = Group("readmes", "readmes", "sources/readmes", [
        entry("readmes/alpha.md", "Alpha", "Alpha parses CSV files quickly."),
        entry("readmes/beta.md", "Beta", "Beta is a tiny HTTP client.")])
    assert _about(readmes) == "No index or README: its documents, by title."
    # an old Sphinx tree: contents.rst is its master document
    guide = Group("guide", "guide", "sources/guide", [
        entry("guide/setup.rst", "Setup", "How to set the widgets up."),
        entry("guide/contents.rst", "Guide", "The guide explains how widgets and gears fit together.")])
    assert _about(guide) == "The guide explains how widgets and gears fit together."
    # a reading order without such a name begins at its root
    book = Group("book", "book", "sources/book", [
        entry("book/start.md", "A Book on Gears", "A book on gears and widgets."),
        entry("book/ch1.md", "Chapter 1", "Gears first.")], ordered=True)
    assert _about(book) == "A book on gears and widgets."
    # parts that are releases: the span they cover
    notes = Group("notes", "notes", "sources/notes", children=[
        Group("notes/rel", "rel", "sources/notes/rel", [
            Entry("sources/n-2.md", "Gears 2.10", "Faster.", kind="source", raw="raw/notes/rel/2.10.md", version="2.10"),
            Entry("sources/n-1.md", "Gears 2.9", "Slower.", kind="source", raw="raw/notes/rel/2.9.md", version="2.9")],
            series=True)])
    assert _about(notes) == "Releases from 2.9 to 2.10, newest first in each part."
    # an mdBook: SUMMARY.md is only the table of contents; the README beside it says what the
    # book is about, and a README further down (a part's) does not speak for the whole
    mdbook = Group("guide", "guide", "sources/guide", [
        entry("guide/src/SUMMARY.md", "Summary", ""),
        entry("guide/src/cli/README.md", "Command-line tool", "The command-line tool builds and serves books."),
        entry("guide/src/README.md", "Introduction", "mdBook is a tool to create books with Markdown."),
        entry("guide/src/format/summary.md", "SUMMARY.md", "The summary file lists the chapters.")])
    assert _about(mdbook) == "Introduction: mdBook is a tool to create books with Markdown."
    # a hub page with no lead of its own: a page that names it as it is spelled introduces it;
    # a document's own label that says its words ("`ModelForm` API reference.") does not, nor
    # does one document's lead speak for the others: the hub's first documents, by title
    hub = Group("ref", "ref", "sources/ref", [
        entry("ref/index.rst", "API Reference", ""),
        entry("ref/applications.rst", "Applications", "Gears contains a registry of installed applications."),
        entry("ref/forms.rst", "Form API", "`ModelForm` API reference."),
        entry("ref/auth.rst", "Auth", "This document provides API reference material for the auth system."),
        entry("ref/urls.rst", "URLs", "How URLs are resolved.")], ordered=True)
    assert _about(hub) == "API Reference: Applications, Form API, Auth, …"
    book = Group("book", "book", "sources/book", [
        entry("book/SUMMARY.md", "The Gears Book", ""),
        entry("book/title.md", "Title page", "By the gears team."),
        entry("book/intro.md", "Introduction", "Welcome to The Gears Book, an introduction to gears and widgets.")],
        ordered=True)
    assert _about(book) == "Welcome to The Gears Book, an introduction to gears and widgets."


@pytest.mark.slow
def test_a_large_wiki_gets_a_map_and_group_catalogs(ws: Workspace) -> None:
    for folder in ("guide", "reference"):
        for i in range(60):
            write(ws, f"{folder}/part-{i:02d}.md", f"# {folder.title()} part {i}\n\nThis {folder} part covers topic {i} "
                                                   f"of the widget system, with {i} examples of gears.\n")
    compile_(ws)
    index = (ws.wiki / "index.md").read_text()
    # the map stays small, its header included: an agent reads it whole on the way to every answer
    assert len(index.encode()) <= SOFT_BYTES + 100
    assert "[Catalog](sources/guide/index.md)" in index
    # the guide's 60 pages do not fit one catalog: its catalog lists numbered parts in its order,
    # which list every page once, each file within CATALOG_BYTES
    folder = ws.wiki / "sources" / "guide"
    catalog = (folder / "index.md").read_text()
    assert "(index-1.md)" in catalog and "Guide part 0" in catalog
    parts = sorted(folder.glob("index-*.md"))
    assert sum(p.read_text().count("\n- [") for p in parts) == 60
    assert all(len(p.read_bytes()) <= CATALOG_BYTES for p in [folder / "index.md", *parts])
    assert broken_links(ws.wiki) == []
    # the catalogs of a folder that goes away go too, folders and all
    for i in range(60):
        (ws.raw / "reference" / f"part-{i:02d}.md").unlink()
    compile_(ws)
    assert not (ws.wiki / "sources" / "reference").exists()
    assert broken_links(ws.wiki) == []


def test_a_compile_reads_only_the_pages_that_changed_for_the_index(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikimem import index_page

    for n in range(12):
        write(ws, f"notes/note-{n:02d}.md", f"# Note {n}\n\nNote {n} is about widgets and gadget number {n}.\n")
    compile_(ws)
    read: list[str] = []
    real = index_page.entry_from_text
    monkeypatch.setattr(index_page, "entry_from_text", lambda rel, text: read.append(rel) or real(rel, text))
    write(ws, "notes/note-03.md", "# Note 3\n\nNote 3 is about widgets, and now about sprockets too.\n")
    report = compile_(ws)
    # the index's entries of unchanged pages come from state.db's catalog, keyed by their stat
    assert read and set(read) <= {"sources/notes-note-03.md", *report.updated, *report.created}, read


def test_index_md_as_a_whole_stays_within_its_soft_size_header_included() -> None:
    """SOFT_BYTES is what index.md aims at, not its body alone: every path to an answer reads it."""
    entries = [Entry(f"sources/chapter-{i:03d}.md", f"Chapter {i} of the book", f"What chapter {i} says.",
                     "source", f"raw/book/ch{i:03d}.md", 1) for i in range(300)]
    index = build({"sources": entries}, extra_links=[])["index.md"]
    assert SOFT_BYTES - 300 <= len(index.encode()) <= SOFT_BYTES + 100
    assert index.count("](sources/chapter-") >= 30  # still a map, not a pointer


def test_a_description_is_whole_sentences_not_half_of_the_next_one() -> None:
    lead = ("Save it as hello.py or something similar and run it. Make sure to not call your application "
            "flask.py because this would conflict with Flask itself.")
    assert describe(Page("sources/q.md", {"title": "Quickstart"}, lead + "\n")) == \
        "Save it as hello.py or something similar and run it."
    long_one = "The application context keeps track of the application-level data during a request, CLI command, or other activity."
    assert describe(Page("sources/a.md", {"title": "Context"}, long_one + "\n")).endswith("CLI command,…")


def _listing(pages: dict[str, str]) -> dict[str, str]:
    """{page name: the catalog that lists it}: each page is listed in exactly one catalog."""
    out: dict[str, str] = {}
    for path, text in pages.items():
        if path == "index.md":
            continue
        for name in re.findall(r"\]\((?:\.\./)*((?:sources|concepts)/[^)]+?|[^)/]+\.md)\)", text):
            base = name.rsplit("/", 1)[-1]
            if not is_catalog(base):
                out[base] = path
    return out


def test_no_catalog_passes_its_size_and_a_large_group_splits_along_its_own_folders() -> None:
    """A tree of a thousand files: every catalog within CATALOG_BYTES, so index.md and the one
    catalog that lists a page stay under 10 KB; a folder's pages are listed in its own catalog."""
    entries = []
    folders = ["ref/contrib/gis", "ref/contrib/admin", "ref/models", "ref/forms", "ref", "topics/db",
               "topics/http", "topics", "howto/deployment/asgi", "howto/deployment", "howto", "intro"]
    for i in range(1000):
        folder = folders[i % len(folders)]
        entries.append(Entry(f"sources/{folder.replace('/', '-')}-page-{i:04d}.md", f"Page {i} of {folder}",
                             "A one-line description of the page, about as long as the ones compile writes.",
                             "source", f"raw/{folder}/page-{i:04d}.txt", 1))
    pages = build({"sources": entries}, extra_links=[])
    _check(pages, entries)
    assert len(pages["index.md"].encode()) <= SOFT_BYTES + 100
    for path, text in pages.items():
        assert path == "index.md" or len(text.encode()) <= CATALOG_BYTES, (path, len(text.encode()))
    listed = _listing(pages)
    for entry in entries:
        catalog = listed[entry.path.rsplit("/", 1)[-1]]
        assert len(pages["index.md"].encode()) + len(pages[catalog].encode()) < 10_000
        # the pages of a folder with enough of them are listed in that folder's own catalog (or its parts)
        folder = entry.raw.removeprefix("raw/").rsplit("/", 1)[0]
        assert catalog.startswith(f"sources/{folder}/"), (entry.raw, catalog)


def test_a_long_release_series_is_cut_into_parts_where_its_series_change() -> None:
    entries = []
    for minor in range(12):
        for patch in range(12):
            version = f"4.{minor}.{patch}" if patch else f"4.{minor}"
            entries.append(Entry(f"sources/release-4-{minor}-{patch}.md", f"Release {version}",
                                 f"Release {version} fixes several bugs, two of them in the widget cache.",
                                 "source", f"raw/releases/{version}.txt", 1, version))
    pages = build({"sources": entries}, extra_links=[])
    _check(pages, entries)
    parts = {p: t for p, t in pages.items() if re.search(r"releases/index-\d+\.md$", p)}
    assert len(parts) > 1
    series_in: dict[str, set[str]] = {}
    for path, text in parts.items():
        assert len(text.encode()) <= CATALOG_BYTES
        for series in re.findall(r"\[Release (4\.\d+)", text):
            series_in.setdefault(series, set()).add(path)
    # a series of twelve releases fits in a part: it is never cut in two
    assert series_in and all(len(paths) == 1 for paths in series_in.values()), series_in
    first = pages["sources/releases/index.md"]
    assert first.index("4.11") < first.index("4.0")  # newest first


def test_pages_that_share_a_title_are_told_apart_in_the_map_by_their_folders(ws: Workspace) -> None:
    # two documents titled "The basics" in different folders: the map's lines say which is which
    # (by the nearest folders that differ), and each page keeps the title its document gives
    write(ws, "docs/usage/basics.md", "# The basics\n\nRun the tool on a folder to format every file in it.\n")
    write(ws, "docs/contributing/basics.md", "# The basics\n\nClone the repository and run the tests before a change.\n")
    write(ws, "docs/a/guide/start.md", "# Start\n\nStart here when you use the tool for the first time.\n")
    write(ws, "docs/b/guide/start.md", "# Start\n\nStart here when you write a plugin for the tool.\n")
    write(ws, "docs/index.md", "# Docs\n\nThe tool's documentation, for users and contributors.\n")
    compile_(ws)
    listed = "\n".join(p.read_text(encoding="utf-8") for p in ws.wiki.rglob("index.md"))
    assert "[The basics (usage)]" in listed and "[The basics (contributing)]" in listed, listed
    assert "[Start (a/guide)]" in listed and "[Start (b/guide)]" in listed, listed
    assert "[The basics]" not in listed and "[Start]" not in listed
    titles = sorted(p.read_text(encoding="utf-8").split("\ntitle: ", 1)[1].split("\n", 1)[0]
                    for p in (ws.wiki / "sources").glob("*.md") if p.name != "index.md")
    assert titles.count("The basics") == 2 and titles.count("Start") == 2, titles


def test_every_setting_with_a_default_is_listed_with_it_in_a_catalog(ws: Workspace) -> None:
    # a settings reference split into part pages: a question about one setting's default is
    # answered from the settings catalog, cited at the line that states it, without walking
    # index.md -> hub -> reference page -> part
    lines = ["# Widget settings", "", "Widget reads its settings from `widget.toml` at start-up.", ""]
    for g in range(3):
        lines += [f"## Group {g}", "", f"The settings of group {g}.", ""]
        for n in range(25):
            lines += [f"### WIDGET_G{g}_SETTING_{n}", "", f"Default: `{g * 100 + n}`", "",
                      f"Controls behaviour {n} of group {g}, which the widget applies on every request it serves.", ""]
    write(ws, "settings.md", "\n".join(lines))
    write(ws, "CHANGELOG.md", "# Changelog\n\n## 2.0 (2026-01-02)\n\n### WIDGET_NEW_SETTING\n\nDefault: `9999`\n\n"
                              "Added a setting that applies on every request.\n\n## 1.0 (2025-01-02)\n\n- First release.\n")
    compile_(ws)
    index = (ws.wiki / "index.md").read_text(encoding="utf-8")
    assert "](facts/defaults/index.md)" in index and "Settings and their defaults (75 settings)" in index
    catalogs = {p.relative_to(ws.wiki).as_posix(): p.read_text(encoding="utf-8")
                for p in (ws.wiki / "facts" / "defaults").glob("index*.md")}
    listed = "".join(catalogs.values())
    raw = (ws.root / "raw" / "settings.md").read_text(encoding="utf-8").split("\n")
    for g in range(3):
        for n in range(25):
            m = re.search(rf"^- \[WIDGET_G{g}_SETTING_{n}\]\(([^)]+)\) = `{g * 100 + n}` "
                          rf"\(\[settings\.md, line (\d+)\]\(\.\./\.\./\.\./raw/settings\.md#L\2\)\)$", listed, re.M)
            assert m, (g, n)
            assert raw[int(m.group(2)) - 1] == f"Default: `{g * 100 + n}`"
            assert (ws.wiki / "facts" / "defaults" / m.group(1)).resolve().is_file()
    assert "9999" not in listed  # what a release changed is the timeline's, not the reference's
    assert all(len(text.encode("utf-8")) <= CATALOG_BYTES for text in catalogs.values())
    pages = {p.relative_to(ws.wiki).as_posix(): p.read_text(encoding="utf-8") for p in ws.wiki.rglob("*.md")}
    assert set(catalogs) <= _reachable(pages)
    assert not broken_links(ws.wiki)
    # the reference gone, its catalog goes with it
    (ws.root / "raw" / "settings.md").unlink()
    compile_(ws)
    assert not (ws.wiki / "facts" / "defaults").exists()
    assert "facts/defaults" not in (ws.wiki / "index.md").read_text(encoding="utf-8")


def test_a_groups_changelog_is_among_the_pages_index_md_names_first() -> None:
    # a documentation set read in its table of contents' order puts its changelog last; index.md
    # names it right after the entry page, since what is new is what a reader asks first
    from wikimem.index_page import _highlights, plan

    docs = ["index.rst", *(f"chapter{n:02d}.rst" for n in range(1, 40)), "CHANGES.rst"]
    entries = [Entry(f"sources/{d.split('.')[0].lower()}.md", "Changes" if d == "CHANGES.rst" else f"Chapter {d}",
                     "", kind="source", raw=f"raw/{d}") for d in docs]
    order = {f"raw/{d}": n for n, d in enumerate(docs)}
    (group,) = plan({"sources": entries}, order)
    picked = _highlights(group)
    assert [e.raw for e in picked[:2]] == ["raw/index.rst", "raw/CHANGES.rst"]
    assert sorted(e.raw for e in picked) == sorted(order)  # nothing left out, nothing twice


def test_a_group_of_release_notes_links_its_newest_release_whatever_room_is_left() -> None:
    # many folders whose heads fill index.md, and a folder of release notes read in its toctree's
    # order (not as a series): its head still names the newest release, the highest version
    entries = []
    for f in range(14):
        for i in range(30):
            entries.append(Entry(f"sources/area{f}-page-{i:02d}.md", f"Page {i} of area {f}",
                                 "A one-line description of the page, about as long as the ones compile writes.",
                                 "source", f"raw/area{f}/page-{i:02d}.txt", 1))
    versions = ["5.2.19", "5.2.2", "5.2.10", "5.1", "4.2.30", "5.2"]
    for v in versions:
        entries.append(Entry(f"sources/releases-{v.replace('.', '-')}.md", f"Gadget {v} release notes",
                             f"Gadget {v} fixes bugs.", "source", f"raw/releases/{v}.txt", 1, v))
    entries.append(Entry("sources/releases-index.md", "Release notes", "Every release.", "source",
                         "raw/releases/index.txt", 1))
    order = {e.raw: n for n, e in enumerate(entries)}
    pages = build({"sources": entries}, extra_links=[], order=order)
    _check(pages, entries)
    index = pages["index.md"]
    head = index.split("## releases", 1)[1].split("\n## ", 1)[0]
    assert "newest release: [Gadget 5.2.19 release notes](sources/releases-5-2-19.md)" in head, head
    assert index.count("(sources/releases-5-2-19.md)") == 1
    # a folder with a version or two among other pages names none
    assert "newest release" not in index.split("## area3", 1)[1].split("\n## ", 1)[0]


def test_the_changelog_index_md_names_first_is_the_one_with_releases() -> None:
    # a documentation set's changes.rst that only includes the real CHANGES.rst comes first in the
    # reading order; index.md names the one whose page links its newest release
    from wikimem.index_page import _highlights, plan

    docs = ["index.rst", "changes.rst", *(f"chapter{n:02d}.rst" for n in range(1, 30)), "CHANGES.rst"]
    entries = [Entry(f"sources/{d.split('.')[0].lower()}-{n}.md", "Changes" if d.lower() == "changes.rst" else f"Chapter {d}",
                     "", kind="source", raw=f"raw/{d}",
                     newest=("Version 3.1.3", f"sources/changes-{n}/version-3-1-3.md") if d == "CHANGES.rst" else ("", ""))
               for n, d in enumerate(docs)]
    order = {f"raw/{d}": n for n, d in enumerate(docs)}
    (group,) = plan({"sources": entries}, order)
    picked = _highlights(group)
    assert [e.raw for e in picked[:2]] == ["raw/index.rst", "raw/CHANGES.rst"]


def test_a_catalog_counts_one_page_in_the_singular() -> None:
    """'Concepts of raw/ — 1 page', not '1 pages': each catalog line and title says its count
    as a reader would."""
    concepts = [Entry(f"concepts/c{i}.md", f"Concept {i}", "A concept of the guide.", "concept",
                      "raw/guide/a.md", 2, collections=("guide",)) for i in range(300)]
    concepts.append(Entry("concepts/lone.md", "Lone", "A concept of the files at the top.", "concept",
                          "raw/README.md", 2, collections=("",)))
    pages = build({"sources": [], "concepts": concepts}, extra_links=[])
    text = "\n".join(pages.values())
    assert "[Concepts of raw/](raw/index.md) — 1 page\n" in text
    assert "[Concepts of guide](guide/index.md) — 300 pages\n" in text
    assert "# Concepts of raw/: 1 page\n" in pages["concepts/raw/index.md"]
    assert not re.search(r"\b1 (pages|entries|settings)\b", text)

"""Hub pages that link: a document's own map (a reST toctree, a MyST toctree, an mdBook
SUMMARY.md, a list of links to other files of the set) becomes links to the wiki pages of what
it names, in the author's order, each with its lead; a hub page is never a dead end."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import snapshot, write
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.workspace import Workspace

REFERENCE = """API Reference
=============

Core
----

.. toctree::
   :maxdepth: 1

   settings
   signals

Contributed
-----------

.. toctree::
   :caption: Contributed packages

   contrib/index
"""


def compile_(ws: Workspace):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}))


def contents(page: str) -> str:
    return page.split("## Contents", 1)[1].split("\n## ", 1)[0]


def reference(ws: Workspace) -> None:
    write(ws, "ref/index.rst", REFERENCE)
    write(ws, "ref/settings.rst", "Settings\n========\n\nHere is a list of the settings the gearbox reads at start-up.\n")
    write(ws, "ref/signals.rst", "Signals\n=======\n\nA list of the signals the gearbox sends while it runs.\n")
    write(ws, "ref/contrib/index.rst", "Contributed packages\n====================\n\nPackages that ship with the "
                                       "gearbox but are not part of its core.\n")


def test_a_toctree_lists_its_documents_as_links_in_order_with_their_leads(ws: Workspace) -> None:
    reference(ws)
    compile_(ws)
    page = (ws.wiki / "sources" / "ref-index.md").read_text(encoding="utf-8")
    listed = contents(page)
    # in the author's order, under the section (or the toctree's caption) that lists them
    assert listed.index("[Settings](ref-settings.md)") < listed.index("[Signals](ref-signals.md)") \
        < listed.index("[Contributed packages](ref-contrib-index.md)")
    assert re.search(r"- \*Core\*:\n  - \[Settings\]\(ref-settings\.md\) — Here is a list of the settings", listed)
    assert "- *Contributed packages*:" in listed
    assert "— A list of the signals the gearbox sends while it runs." in listed
    # every link leads to a page that exists
    for target in re.findall(r"\]\(([^)]+\.md)\)", listed):
        assert (ws.wiki / "sources" / target).is_file(), target


def test_a_summary_and_a_list_of_links_to_other_files_are_maps_too(ws: Workspace) -> None:
    write(ws, "book/SUMMARY.md", "# Summary\n\n- [Start here](start.md)\n- [Going on](going-on.md)\n")
    write(ws, "book/start.md", "# Start here\n\nThe first chapter sets up the workshop and its tools.\n")
    write(ws, "book/going-on.md", "# Going on\n\nThe second chapter builds the first widget.\n")
    write(ws, "guide/README.md", "# Guide\n\nWhat the guide holds:\n\n- [Installing](install.md) gets you going.\n"
                                 "- [Upgrading](upgrade.md) explains what changes between releases.\n"
                                 "- See also [the website](https://example.org/) for news.\n")
    write(ws, "guide/install.md", "# Installing\n\nInstall the gearbox with the installer of your system.\n")
    write(ws, "guide/upgrade.md", "# Upgrading\n\nRead the release notes of every release you skip.\n")
    compile_(ws)
    summary = contents((ws.wiki / "sources" / "book-summary.md").read_text(encoding="utf-8"))
    assert summary.index("[Start here](book-start.md)") < summary.index("[Going on](book-going-on.md)")
    readme = contents((ws.wiki / "sources" / "guide-readme.md").read_text(encoding="utf-8"))
    assert "[Installing](guide-install.md) — Install the gearbox" in readme
    assert "[Upgrading](guide-upgrade.md)" in readme and "example.org" not in readme


def test_a_hub_lists_again_what_changed_in_the_documents_it_names(ws: Workspace, tmp_path: Path) -> None:
    """An incremental compile gives the hub page a full compile gives: a listed document's new
    lead, a new document its toctree named before it existed, one that went."""
    reference(ws)
    compile_(ws)
    write(ws, "ref/settings.rst", "Settings\n========\n\nEvery setting of the gearbox, with its default value.\n")
    write(ws, "ref/contrib/index.rst", "Contributed packages\n====================\n\nExtra packages.\n")
    (ws.raw / "ref" / "signals.rst").unlink()
    compile_(ws)
    page = contents((ws.wiki / "sources" / "ref-index.md").read_text(encoding="utf-8"))
    assert "Every setting of the gearbox, with its default value." in page
    assert "signals" not in page.lower()
    write(ws, "ref/signals.rst", "Signals\n=======\n\nThe signals the gearbox sends again, each with its arguments.\n")
    compile_(ws)
    page = contents((ws.wiki / "sources" / "ref-index.md").read_text(encoding="utf-8"))
    assert "[Signals](ref-signals.md) — The signals the gearbox sends again, each with its arguments." in page
    fresh = Workspace(tmp_path / "full")
    init_workspace(fresh)
    for file in ws.raw.rglob("*.rst"):
        target = fresh.raw / file.relative_to(ws.raw)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes())
    compile_(fresh)
    mine = {k: v for k, v in snapshot(ws.wiki).items() if k.startswith("sources/")}
    full = {k: v for k, v in snapshot(fresh.wiki).items() if k.startswith("sources/")}
    assert mine == full


def test_a_long_hub_is_split_along_its_own_sections(ws: Workspace) -> None:
    """A release index of forty series: each series' releases on a part page of its own size."""
    lines = ["Release notes", "=============", ""]
    for minor in range(40):
        lines += [f"1.{minor} release", "-" * 12, "", ".. toctree::", ""]
        for patch in range(5):
            name = f"1.{minor}.{patch}"
            lines.append(f"   {name}")
            write(ws, f"releases/{name}.rst", f"Gearbox {name} release notes\n{'=' * 30}\n\n"
                                              f"Gearbox {name} fixes {patch + 1} bugs in the scheduler and the cache.\n")
        lines.append("")
    write(ws, "releases/index.rst", "\n".join(lines))
    compile_(ws)
    page = (ws.wiki / "sources" / "releases-index.md").read_text(encoding="utf-8")
    parts = sorted((ws.wiki / "sources" / "releases-index").glob("*.md"))
    assert parts and len(page.encode()) < 8_000
    listed = [link for p in parts for link in re.findall(r"\]\(\.\./(releases-1-[\d-]+\.md)\)", p.read_text())]
    assert len(listed) == 200 and len(set(listed)) == 200
    for part in parts:
        assert len(part.read_bytes()) < 8_000
        assert f"(releases-index/{part.name})" in page


def test_a_hub_whose_contents_sit_under_its_title_keeps_them_on_its_page(ws: Workspace) -> None:
    """A root document whose toctrees all sit under its title's heading (the usual Sphinx
    index.rst): split, its one part would hold the whole contents a step away from the page,
    which would link nothing else; the page lists them itself."""
    lines = ["Welcome to the gearbox documentation!", "=" * 38, "", "The gearbox turns jobs into schedules.", "",
             "Contents", "--------", ""]
    for group in range(4):
        lines += [".. toctree::", f"   :caption: Group {group}", ""]
        for n in range(10):
            lines.append(f"   chapter{group}{n}")
            write(ws, f"docs/chapter{group}{n}.rst", f"Chapter {group}.{n} of the gearbox\n{'=' * 30}\n\n"
                                                     f"This chapter explains how the gearbox handles workload {group}{n} "
                                                     "when the scheduler runs short of workers.\n")
        lines.append("")
    lines += ["Indices and tables", "==================", "", "* :ref:`genindex`", ""]
    write(ws, "docs/index.rst", "\n".join(lines))
    compile_(ws)
    page = (ws.wiki / "sources" / "docs-index.md").read_text(encoding="utf-8")
    assert not (ws.wiki / "sources" / "docs-index").exists()
    listed = contents(page)
    assert len(re.findall(r"\]\((docs-chapter\d+\.md)\)", listed)) == 40
    assert "- *Group 3*:" in listed

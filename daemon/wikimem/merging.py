"""Pages two clones both wrote, merged without a person: git's merge drivers for the files
wikimem writes, and what the next compile does with the pages they merged.

git runs a driver (`python -m wikimem.merging page %O %A %B %L %P`, defined in each clone's
.git/config by gitrepo.configure_merge and named for wiki/'s pages in wiki/.gitattributes) for
every page both sides changed. Where both sides hold wikimem's own text (each certifies itself,
pages.page_owner), the driver keeps ours and leaves a note of the other side's version in
.wikimem/merges/; the next compile renders the page again from the merged raw/ (the offline
backend: the bytes a one-machine compile of the same raw/ gives) or, with a backend that
cannot render a page again from its sources alone (a model's), asks it to merge the two
versions (`merger`). A page a person edited on either side is merged as git merges text,
conflict markers included, and stays theirs.

Kept light (pages and the standard library): git starts one process per page it merges.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .backends.page_merge import merge_versions
from .errors import UnsafePath
from .gitrepo import merge_log_main
from .ownership import PageWrite, persons_page, tracked, write_pages
from .pages import FrontMatterError, certify, guard_page, loads_page, page_owner, stamp
from .state import RENDER_PENDING
from .workspace import atomic_write, read_owned, remove_owned

if TYPE_CHECKING:
    from .config import Settings
    from .state import State
    from .workspace import Workspace

FOLDER = "merges"  # in .wikimem/


@dataclass(frozen=True)
class Merged:
    """A page the driver merged by keeping ours: the other side's version (and the common one)."""

    page: str  # wiki-relative
    base: str  # "" when both sides created the page
    theirs: str


def _state_dir(top: Path, path: str) -> tuple[Path, str] | None:
    """(.wikimem/, the page's wiki-relative path) of the workspace holding repository path `path`,
    the one whose wiki/ the path runs through, or None when none does."""
    parts = Path(path).parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] != "wiki":
            continue
        root = top.joinpath(*parts[:i])
        if (root / ".wikimem").is_dir() or (root / "raw").is_dir():
            return root / ".wikimem", "/".join(parts[i + 1:])
    if top.name == "wiki" and ((top.parent / ".wikimem").is_dir() or (top.parent / "raw").is_dir()):
        return top.parent / ".wikimem", "/".join(parts)  # wiki/ is the repository
    return None


def _note_file(state_dir: Path, page: str) -> Path:
    return state_dir / FOLDER / (hashlib.sha1(page.encode("utf-8", "surrogateescape")).hexdigest() + ".json")


def remember(state_dir: Path, page: str, base: str, theirs: str) -> None:
    """Leave a note for the next compile: `page` was merged by keeping ours over `theirs`."""
    target = _note_file(state_dir, page)
    data = json.dumps({"page": page, "base": base, "theirs": theirs}, ensure_ascii=False)
    atomic_write(target, data.encode("utf-8", "surrogateescape"), durable=False, base=state_dir)


def pending(ws: Workspace) -> list[Merged]:
    """The notes the driver left since the last compile, by page."""
    folder = ws.state_dir / FOLDER
    found: dict[str, Merged] = {}
    if not folder.is_dir():
        return []
    for file in sorted(folder.glob("*.json")):
        try:
            item = json.loads(file.read_text(encoding="utf-8", errors="surrogateescape"))
            note = Merged(str(item["page"]), str(item.get("base") or ""), str(item["theirs"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a note cut short: the page is rendered again all the same (it is ours)
        found[note.page] = note
    return [found[p] for p in sorted(found)]


def clear(ws: Workspace) -> None:
    """The compile that took the notes into account has committed."""
    folder = ws.state_dir / FOLDER
    if folder.is_dir():
        for file in folder.iterdir():
            with contextlib.suppress(OSError, UnsafePath):
                remove_owned(ws.state_dir, file)


# --- the drivers git runs ---------------------------------------------------------------------


def merge_page(base: Path, ours: Path, theirs: Path, marker_size: str, path: str, top: Path) -> int:
    """git's merge driver for a page: writes the result to `ours`; returns the number of
    conflicts (0: merged). Both sides wikimem's: ours, and a note for the next compile.
    Otherwise git's own merge of text (`git merge-file`), conflicts and all."""
    ours_data, theirs_data = ours.read_bytes(), theirs.read_bytes()
    if page_owner(ours_data).wikimems and page_owner(theirs_data).wikimems:
        mine, other = _source_of(ours_data), _source_of(theirs_data)
        if mine is not None and other is not None and mine != other:
            # two sources' pages under one name (a.pdf and a.txt both want sources/a.md): the
            # name goes to the source a compile of the whole raw/ gives it, the first in path
            # order; the other source's page is written again under its own name
            # (adopt._adopt), as a compile on one machine would name it
            if other < mine:
                ours.write_bytes(theirs_data)
            return 0
        found = _state_dir(top, path)
        if found is not None:
            state_dir, page = found
            with contextlib.suppress(OSError):
                remember(state_dir, page, base.read_text(encoding="utf-8", errors="surrogateescape"),
                         theirs_data.decode("utf-8", "surrogateescape"))
        return 0
    proc = subprocess.run(
        ["git", "merge-file", f"--marker-size={marker_size or 7}", "-L", "ours", "-L", "base", "-L", "theirs",
         str(ours), str(base), str(theirs)], capture_output=True, check=False)
    return 1 if proc.returncode != 0 else 0


def _source_of(data: bytes) -> str | None:
    """The raw file a source page (or a part of one) stands for, or None for any other page."""
    try:
        page = loads_page("x.md", data.decode("utf-8", "surrogateescape"))
    except FrontMatterError:
        return None
    return page.sources[0] if page.kind == "source" and page.sources else None


def main(argv: list[str]) -> int:
    """`python -m wikimem.merging page BASE OURS THEIRS MARKER PATH` or `... log BASE OURS THEIRS`."""
    if len(argv) == 6 and argv[0] == "page":
        return merge_page(Path(argv[1]), Path(argv[2]), Path(argv[3]), argv[4], argv[5], Path.cwd())
    if len(argv) == 4 and argv[0] == "log":
        return merge_log_main(["merge-log", *argv[1:]])
    print("usage: python -m wikimem.merging page BASE OURS THEIRS MARKER PATH | log BASE OURS THEIRS",
          file=sys.stderr)
    return 2


# --- what the next compile does ---------------------------------------------------------------

# A backend that renders a page again from raw/ alone (the offline backend) needs nothing more.
# A model's backend edits pages source by source and would lose the other side's additions, so
# it merges the two versions itself: name -> (settings, page, base, ours, theirs) -> the page
Merger = Callable[["Workspace", "Settings", str, str, str, str], "str | None"]


def settle(ws: Workspace, settings: Settings, state: State, backend: str, writer: str) -> list[str]:
    """Take the driver's notes into account before a compile plans (compiler._prepare): the
    pages it merged are rendered again by this compile (state.RENDER_PENDING, and the backend's
    own records of them forgotten), and with a backend that merges versions (`merger`) each such
    page still wikimem's is merged with the other side's version first, through the write
    journal. Returns the pages noted. The notes are cleared once the compile has committed."""

    notes = pending(ws)
    if not notes:
        return []
    known = state.pages()
    merge = merger(backend)
    writes: list[PageWrite] = []
    for note in notes:
        file = ws.wiki / note.page
        try:
            ours = read_owned(ws.wiki, file)
        except (OSError, UnsafePath):
            continue  # gone since (a person's deletion, a later pull): nothing to merge
        if merge is None or not note.page.startswith(("sources/", "concepts/")) \
                or persons_page(ours, known.get(note.page)):
            # rendered again by the backend; timelines are written by code on every compile and
            # an answer is asked again, not merged; a person's page since is theirs
            continue
        ours_text = ours.decode("utf-8", "surrogateescape")
        text = merge(ws, settings, note.page, note.base, ours_text, note.theirs)
        if text is None:
            continue
        # what a backend wrote: guarded and certified as the compile's pages are (PageWriter)
        data = stamp(certify(guard_page(text), writer), ours_text).encode("utf-8", "surrogateescape")
        kind, owner = (tracked(note.page, data) or ("page", None, ""))[:2]
        writes.append(PageWrite(note.page, data, kind, owner))
    if writes:
        write_pages(ws, writes, writer="sync", state=state)
    pages = [n.page for n in notes]
    rendered = {row.page for row in state.sources().values() if row.page}
    # a part of a long source's page is rendered with the source's page
    owners = {rel: owner for rel, (_sha, kind, owner) in known.items() if kind == "part"}
    page_of = {path: row.page for path, row in state.sources().items() if row.page}
    forget = {page_of.get(owners[p] or "", p) if p in owners else p for p in pages}
    with state.transaction():
        state.forget_renders(sorted(forget | (rendered & set(pages))))
        state.set_meta(RENDER_PENDING, True)
    return pages


def merger(backend: str) -> Merger | None:
    """The function that merges two versions of a page for this backend, or None."""
    if backend == "anthropic":
        return merge_versions
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

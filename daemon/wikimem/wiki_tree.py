"""wiki/ walked one way, with one rule for which of its files are pages: index.md's catalogs,
search and lint all list pages through here (raw/ has its own one walk, raw_tree).

A page is a regular file named *.md, not hidden (no part of its path starts with "."), not
editor noise (`~draft.md`), with a name in valid UTF-8, and not a symlink: a link is an alias
of a page (or a way out of the workspace), never a page of its own. Folders are read once
each; symlinked folders are never followed. Lint still sees the other files (images, links),
to resolve the links pages make.

Kept free of heavy imports: a cold `wikimem search` walks wiki/ through here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .naming import is_ignored_name, printable, undecodable

if TYPE_CHECKING:
    from .raw_tree import Trace


def walk(top: str, prefix: str = "", bad_names: list[str] | None = None,
         trace: Trace | None = None) -> Iterator[tuple[os.DirEntry[str], str]]:
    """(entry, path) of every file under top, the path joined to prefix with "/": folders named
    .* are left out and symlinked folders not followed; a name in invalid UTF-8 (it cannot go
    into a page, the index or JSON) is skipped, its printable path added to bad_names.

    With `trace` (search's freshness check, see raw_tree.Trace), each folder is signed before
    it is listed, and an entry that cannot be read makes the walk unsure. `top` itself is not
    followed either when it is a link (a teammate's `wiki/facts -> ~/Documents` would list a
    person's files as pages, in index.md and in search)."""
    if os.path.islink(top):
        return
    stack = [(top, prefix)]
    while stack:
        folder, at = stack.pop()
        if trace is not None:
            trace.sign(folder)  # before the listing: a name added after it changes the signature
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except FileNotFoundError:
            continue
        except OSError:
            if trace is not None:
                trace.unsure = True
            continue
        for entry in entries:
            rel = f"{at}/{entry.name}" if at else entry.name
            if undecodable(entry.name):
                if bad_names is not None:
                    bad_names.append(printable(rel))
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                if trace is not None:
                    trace.unsure = True
                continue
            if is_dir:
                if not entry.name.startswith("."):
                    stack.append((entry.path, rel))
                continue
            yield entry, rel


def is_page_name(name: str) -> bool:
    """Whether a file's name is a page's: *.md, not hidden, not editor noise (`~draft.md`)."""
    return name.endswith(".md") and not is_ignored_name(name)


def is_page(entry: os.DirEntry[str]) -> bool:
    """Whether a file walk() found is a page (see the module's rule)."""
    if not is_page_name(entry.name):
        return False
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def pages(top: str, prefix: str = "", trace: Trace | None = None) -> Iterator[tuple[os.DirEntry[str], str]]:
    """(entry, path) of every page under top."""
    return ((entry, rel) for entry, rel in walk(top, prefix, trace=trace) if is_page(entry))

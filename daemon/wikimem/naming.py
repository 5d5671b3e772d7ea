"""Which file names are noise and which are catalogs: shared by the loader, the index and search.

Kept free of heavy imports (no YAML, no Jinja) so a cold `wikimem search` can use it.
"""

from __future__ import annotations

import re

# files in raw/ that are never sources: editor swap and backup files, partial downloads
IGNORED_NAMES = frozenset({".DS_Store", "Thumbs.db"})
IGNORED_PREFIXES = (".", "~", ".#")
IGNORED_SUFFIXES = ("~", ".swp", ".swx", ".part", ".crdownload", ".tmp", ".download")
# index.md and its catalogs: sources/index.md, sources/index-3.md, sources/index-2-1.md
CATALOG_NAME = re.compile(r"(^|/)index(-\d+)*\.md$")


def is_ignored_name(name: str) -> bool:
    """Editor and download noise that never becomes a source."""
    return name in IGNORED_NAMES or name.startswith(IGNORED_PREFIXES) or name.endswith(IGNORED_SUFFIXES)


def is_catalog(path: str) -> bool:
    """index.md or one of the catalogs it splits into (written by code, never a page)."""
    return bool(CATALOG_NAME.search(path))


def undecodable(name: str) -> bool:
    """A file name that is not valid UTF-8 (Python keeps its bytes as surrogates): it cannot be
    written into a page, log.md, JSON or SQLite, so it is refused with a note, never a crash."""
    if name.isascii():
        return False  # most names, and the check runs on every file of every walk
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def printable(path: str) -> str:
    """A path as text that can be shown and stored: undecodable bytes become \\xNN."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")

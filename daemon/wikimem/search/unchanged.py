"""Whether wiki/ and raw/ are still as the index has them, without walking them again.

The freshness check before a search walks both trees (listing each folder, applying the ignore
rules) and compares every file's size and mtime with the manifest. When a walk finds them
matching, `sign` keeps its trace beside the index: each folder's signature and each ignore
file's, taken before the walk read them. `since_signed` then decides without a walk, with one
stat per folder and one per file (a third of the walk's time at 10k sources, and no ignore
rules to load), when all of these hold:

- every folder the walk listed has the same signature (inode, mtime, ctime): no name in it was
  added, removed or renamed, so the same names are there, each still what it was (a file
  cannot become a folder or a link without its name being replaced);
- every ignore file has the same signature, and so the same rules;
- every file of the manifest is a regular file with one link, of the same size, mtime and
  ctime, as the walk would compare it (a racily clean file is recorded with times of -1 and
  never matches: index._smudge_racy);
- the walk itself found nothing decided by more than its name and the rules (a symbolic link,
  a hard link, an unreadable entry: see raw_tree.Trace); and the trace was made by this
  version of the rules, for this manifest.

Then the walk would list the same files, and find them as the manifest has them. Anything else,
and the caller walks. A timestamp has a granularity (a clock tick, or a second or two on some
file systems): a folder changed less than RECENT_NS before the walk could change again without
its signature changing, so a trace holding one is not kept.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..raw_tree import Trace
    from ..workspace import Workspace

SIGNS_NAME = "walk.signs"  # in the index folder
_FORMAT = 2
RECENT_NS = 2_000_000_000


def rules_digest(*more: Any) -> str:
    """The rules a walk applies (and `more` of the caller's), as a digest: a trace made under
    other rules is not used."""
    from .. import __version__, naming, raw_tree

    rules = (_FORMAT, __version__, raw_tree.DEFAULT_RULES, raw_tree.IGNORE_FILE, sorted(naming.IGNORED_NAMES),
             naming.IGNORED_PREFIXES, naming.IGNORED_SUFFIXES, naming.CATALOG_NAME.pattern, more)
    return hashlib.sha256(repr(rules).encode("utf-8")).hexdigest()


def sign(ws: Workspace, folder: Any, manifest: Any, trace: Trace, started_ns: int, rules: str) -> bool:
    """Keep the trace of a walk, begun at `started_ns`, that found the files of the manifest
    stamped `manifest`; False when it cannot vouch for them (see the module's conditions)."""
    if trace.unsure:
        return False
    cutoff = started_ns - RECENT_NS
    if any(sig is not None and max(sig[1], sig[2]) >= cutoff for _, sig in trace.signatures):
        return False
    from ..workspace import atomic_write

    root = str(ws.root) + os.sep
    if not all(path.startswith(root) for path, _ in trace.signatures):
        return False
    # relative to the workspace: a copy of it elsewhere has other inodes, so its check walks
    signatures = [(path[len(root):], sig) for path, sig in trace.signatures]
    payload = marshal.dumps((_FORMAT, rules, tuple(manifest), signatures))
    atomic_write(folder / SIGNS_NAME, payload, durable=False)  # derived: a torn copy fails to decode
    return True


def since_signed(ws: Workspace, folder: Any, manifest: Any, files: dict[str, Any], rules: str) -> bool:
    """True when wiki/ and raw/ are as the walk kept by `sign` found them, and every file of the
    manifest stamped `manifest` (its files part: `files`) is as it lists it. False: walk."""
    from ..raw_tree import signature

    try:
        with open(folder / SIGNS_NAME, "rb") as handle:
            fmt, made_rules, made_for, signatures = marshal.load(handle)
        if (fmt, made_rules, tuple(made_for)) != (_FORMAT, rules, tuple(manifest)):
            return False
        root = str(ws.root) + os.sep
        for path, sig in signatures:
            if signature(root + path) != (tuple(sig) if sig is not None else None):
                return False
        lstat, is_file = os.lstat, stat.S_ISREG
        for path, (size, mtime, ctime) in files.items():
            st = lstat(root + path)
            if st.st_mtime_ns != mtime or st.st_ctime_ns != ctime or st.st_size != size or st.st_nlink != 1 \
                    or not is_file(st.st_mode):
                return False
    except (OSError, EOFError, ValueError, TypeError):
        return False
    return True

"""The one walk of raw/: which files are sources, which are ignored, and which are refused.

Compile, search, lint and the agents' tools all see raw/ through `scan`, so they agree on
which files exist. Rules, in order:

- Ignore rules: `.wikimemignore` files (gitignore syntax) at the root of raw/ and in any
  folder below it, over wikimem's defaults (build output, theme and template folders,
  dependency folders, images, lock and requirements files). A line `!pattern` brings back
  what a default ignores. Ignored files are counted, not listed as skipped.
- Editor and download noise (`.#x`, `x~`, `.swp`, `.part`) and dot folders are never sources.
- A file is read only when every name it has is inside raw/: a symbolic link is followed
  when it resolves to a file inside raw/, and a file with several hard links is read only
  when all of them are inside raw/ (otherwise its text could come from anywhere on the disk,
  which a symlink would make visible and a hard link would not). Symlinked folders are not
  followed (a loop would never end). Anything else is refused with a one-line reason.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ignore
from .ignore import Spec
from .naming import is_ignored_name, printable, undecodable

if TYPE_CHECKING:
    from .workspace import Workspace

IGNORE_FILE = ".wikimemignore"
MAX_IGNORE_BYTES = 1_000_000  # an ignore file larger than this (or not a regular file) is not read
# wikimem's defaults, in gitignore syntax: what documentation trees hold that is not a document
DEFAULT_RULES = """
_build/
_static/
_templates/
_theme/
_themes/
node_modules/
__pycache__/
.venv/
venv/
site-packages/
*.lock
package-lock.json
requirements*.txt
constraints*.txt
Makefile
make.bat
*.png
*.jpg
*.jpeg
*.gif
*.svg
*.ico
*.webp
*.bmp
*.tif
*.tiff
*.woff
*.woff2
*.ttf
*.eot
*.css
*.js
*.map
*.pyc
"""


@dataclass(frozen=True)
class RawFile:
    path: str  # workspace-relative: raw/...
    location: str  # the file, as a string (a Path per file costs time at 10k files)
    size: int
    mtime_ns: int
    ctime_ns: int = 0  # changes with every write, and cannot be set back (`touch -r` sets mtime only)

    @property
    def file(self) -> Path:
        return Path(self.location)


@dataclass
class RawScan:
    files: list[RawFile] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, one-line reason)
    ignored: Counter[str] = field(default_factory=Counter)  # rule -> files it kept out
    started_ns: int = 0  # the wall clock when the walk began: every file's times were read after it

    def ignored_summary(self) -> dict[str, Any]:
        return {"count": sum(self.ignored.values()), "by_rule": dict(sorted(self.ignored.items()))}


Signature = tuple[int, int, int]  # (inode, mtime_ns, ctime_ns)


@dataclass
class Trace:
    """What decided a walk's files besides the files themselves, for a later check that none of
    it changed (search.unchanged): each folder's signature and each ignore file's, taken before
    the walk read them, and whether some file was found or refused for more than its name and
    its rules (a symbolic link, a hard link, an unreadable entry), which no signature covers."""

    signatures: list[tuple[str, Signature | None]] = field(default_factory=list)  # (path, None: absent)
    unsure: bool = False

    def sign(self, path: str) -> None:
        try:
            self.signatures.append((path, signature(path)))
        except OSError:
            self.unsure = True


def signature(path: str) -> Signature | None:
    """(inode, mtime, ctime) of a folder or file, None if there is none. A folder's changes when
    a name in it is added, removed or renamed; ctime changes with it and cannot be set back."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns


class _Rules:
    """The ignore rules in force in one folder: the defaults, then each .wikimemignore from
    raw/ down to it (a deeper file's patterns apply to paths below its own folder, and the
    last rule that matches decides, as in git). Patterns are matched in linear time (ignore.py)."""

    def __init__(self, layers: tuple[tuple[str, str, Spec], ...]):
        self.layers = layers  # (folder relative to raw/ with trailing "/" or "", label, spec)
        # one regex per layer that any of its patterns would match: most files match none, and
        # then one search decides instead of one per pattern (a third of a 10k-file scan)
        self.any_of = tuple(spec.any_of() for _, _, spec in layers)

    def below(self, folder_abs: str, folder_rel: str, problems: list[tuple[str, str]] | None = None) -> _Rules:
        """The rules in force in a subfolder, with its own ignore file's; what is wrong with
        that file (it cannot be used, or some pattern of it is left out) goes to `problems`."""
        label = f"raw/{folder_rel}{IGNORE_FILE}"
        spec, said = _spec_of(os.path.join(folder_abs, IGNORE_FILE), label)
        if problems is not None:
            problems.extend((label, line) for line in said)
        if spec is None or not spec.patterns:
            return self
        return _Rules((*self.layers, (folder_rel, label, spec)))

    def match(self, rel: str, is_dir: bool) -> str | None:
        """The rule that ignores `rel` (relative to raw/), or None."""
        verdict: str | None = None
        for (base, label, spec), any_of in zip(self.layers, self.any_of, strict=True):
            if not rel.startswith(base):
                continue
            inner = rel[len(base):] + ("/" if is_dir else "")
            if any_of is None or not any_of.match(inner):
                continue  # no pattern of this layer matches: it neither ignores nor includes
            include, index = spec.check(inner)
            if include is True and index is not None:
                verdict = f"{label}: {spec.patterns[index].pattern}"
            elif include is False:
                verdict = None
        return verdict


@lru_cache(maxsize=1)
def _default_spec() -> Spec:
    return ignore.parse(DEFAULT_RULES.split("\n"), where="default rules")


def _spec_of(path: str, label: str) -> tuple[Spec | None, list[str]]:
    """The patterns of one ignore file, and what is wrong with it (lines to show). It is read
    only when it is a regular file (not a link, a FIFO, a device) of at most
    MAX_IGNORE_BYTES: the walk goes on with the rules above it otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, ["a symbolic link; its rules are not used (make it a file of its own)"]
        return None, [f"cannot be read ({exc.strerror}); its rules are not used"]
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, ["not a regular file (a FIFO, a device or a socket); its rules are not used"]
        if st.st_size > MAX_IGNORE_BYTES:
            return None, [f"{st.st_size // 1000} KB, more than an ignore file may be "
                          f"({MAX_IGNORE_BYTES // 1000} KB); its rules are not used"]
        data = os.read(fd, MAX_IGNORE_BYTES + 1)
    except OSError as exc:
        return None, [f"cannot be read ({exc.strerror}); its rules are not used"]
    finally:
        os.close(fd)
    spec = ignore.parse(data.decode("utf-8", "replace").split("\n"), where=label)
    return spec, [line.removeprefix(label).lstrip(": ") for line in spec.problems]


def default_rules() -> _Rules:
    return _Rules((("", "default", _default_spec()),))


def scan(ws: Workspace, trace: Trace | None = None) -> RawScan:
    """Every source under raw/, the files refused (with a reason) and the ignored ones (counted).
    With `trace`, also what decided them (see Trace)."""
    result = RawScan(started_ns=time.time_ns())
    if trace is not None:
        trace.sign(str(ws.raw))
    if not ws.raw.is_dir():
        return result
    raw_root = os.path.realpath(ws.raw)
    if trace is not None:
        trace.sign(os.path.join(ws.raw, IGNORE_FILE))
    problems: list[tuple[str, str]] = []
    rules = default_rules().below(str(ws.raw), "", problems)
    stack: list[tuple[str, str, _Rules]] = [(str(ws.raw), "", rules)]
    linked: dict[tuple[int, int], list[tuple[RawFile, int]]] = {}  # (dev, ino) -> names, st_nlink
    while stack:
        folder, rel_folder, rules = stack.pop()
        if trace is not None and rel_folder:
            trace.sign(folder)  # before the listing: a name added after it changes the signature
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            result.refused.append((f"raw/{rel_folder}".rstrip("/"), f"cannot read folder ({exc.strerror})"))
            continue
        subfolders = []
        for entry in entries:
            name = entry.name
            if name == IGNORE_FILE or is_ignored_name(name):
                continue
            rel = f"{rel_folder}{name}"
            shown = f"raw/{rel}"
            if undecodable(name):
                result.refused.append((printable(shown), "file name is not valid UTF-8; rename it"))
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
            except OSError:
                continue
            try:
                points_to_dir = is_link and entry.is_dir()
            except OSError:  # a symlink loop: refused below, when it cannot be resolved to a file
                points_to_dir = False
            rule = rules.match(rel, is_dir or points_to_dir)
            if rule is not None:
                result.ignored[rule] += 1
                continue
            if is_dir:
                subfolders.append((entry.path, rel + "/"))
                continue
            if is_link and trace is not None:
                trace.unsure = True  # what it finds is decided by its target, not its name
            if is_link:
                target = os.path.realpath(entry.path)
                if not target.startswith(raw_root + os.sep):
                    result.refused.append((shown, "symlink to a file outside raw/; not followed"))
                    continue
                if os.path.isdir(target):
                    result.refused.append((shown, "symlinked folder; not followed"))
                    continue
            try:
                st = entry.stat()
            except OSError as exc:
                result.refused.append((shown, f"cannot read ({exc.strerror})"))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            found = RawFile(shown, entry.path, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if st.st_nlink > 1 and not is_link:
                linked.setdefault((st.st_dev, st.st_ino), []).append((found, st.st_nlink))
                continue
            result.files.append(found)
        for path, rel in reversed(subfolders):
            if trace is not None:
                trace.sign(os.path.join(path, IGNORE_FILE))  # before below() reads it
            stack.append((path, rel, rules.below(path, rel, problems)))
    if trace is not None and (linked or result.refused):
        trace.unsure = True  # hard links and refusals depend on more than names
    # an ignore file that cannot be used, or a pattern of it left out: said as that file's
    # refusal (one line each), and the walk went on with the rules above it
    result.refused += problems
    for names in linked.values():
        inside, nlink = len(names), names[0][1]
        for found, _ in names:
            if inside >= nlink:
                result.files.append(found)
            else:
                result.refused.append((found.path, f"hard link to a file outside raw/ ({nlink} names, "
                                                   f"{inside} inside raw/); not read"))
    result.files.sort(key=lambda f: f.path)
    result.refused.sort()
    return result


MIN_COLLECTION = 5  # sources a top folder of raw/ needs to be a collection of its own


def top_folder(path: str) -> str:
    """The top folder of raw/ a raw path is in ("raw/flask/x.rst" -> "flask"; "raw/x.md" -> "")."""
    inner = path.removeprefix("raw/")
    return inner.split("/", 1)[0] if "/" in inner else ""


def collections(paths: Iterable[str]) -> dict[str, str]:
    """The collection of each raw path. A top folder of raw/ with at least MIN_COLLECTION
    sources is a collection; files directly in raw/ and smaller folders share the collection "".

    Concepts are chosen per collection, so one collection of documents (years of release notes)
    never crowds out another's (a book); a folder of two notes is too small to choose
    concepts alone, and chooses them with the other small ones. (Where there is one collection,
    collection_in chooses the concepts of the files directly in raw/ with it.)"""
    paths = list(paths)
    counts: dict[str, int] = {}
    for path in paths:
        folder = top_folder(path)
        counts[folder] = counts.get(folder, 0) + 1
    return {p: f if f and counts[f] >= MIN_COLLECTION else "" for p in paths for f in (top_folder(p),)}


# a file that speaks for its folder as a whole (index.md, README.rst, SUMMARY.md, contents.rst)
ENTRY_NAMES = ("index.", "readme.", "summary.", "contents.")


def fact_series(paths: Iterable[str]) -> dict[str, str]:
    """The product line each raw path's facts belong to when its title names no product.

    A collection with a page that speaks for it (an index, a README, a book's SUMMARY.md) is one
    product's documentation: acme/ holds Acme's changelog and its installation page, and what
    they say of the minimum Python version is one timeline. A collection without one is a folder
    of documents each on its own (the READMEs of many packages): each is its own series, so one
    package's "supports Python 3.9" is never taken to replace another's. Files directly in raw/
    (and folders too small to be collections) share one series, as a team's notes do."""
    paths = list(paths)
    found = collections(paths)
    spoken = {found[p] for p in paths if found[p] and posixpath.basename(p).lower().startswith(ENTRY_NAMES)}
    stem_of = {p: _stem(p) for p in paths if found[p] and found[p] not in spoken}
    stems = Counter(stem_of.values())
    # a document alone is named by its file (pydantic.md: "pydantic"), by its path where two
    # such files share a name (two folders' changes.md are two documents)
    out = {p: found[p] for p in paths}
    out.update({p: stem if stems[stem] == 1 else posixpath.splitext(p.removeprefix("raw/"))[0].lower()
                for p, stem in stem_of.items()})
    return out


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0].lower()


def collection_in(folders: Iterable[str]) -> Callable[[str], str]:
    """The collection a path's concepts are chosen in, for a known set of collection folders (a
    path that left raw/ still has one). Beside one collection, a file directly in raw/ belongs to
    it: a package's documents are docs/ and, at the top, its README and changelog, which name the
    same things (a name the changelog and one guide say is said by two sources, not one in each
    of two collections). Beside several, it is in none of them ("")."""
    known = set(folders)
    sole = next(iter(known)) if len(known) == 1 else ""

    def collection_of(path: str) -> str:
        folder = top_folder(path)
        return folder if folder in known else sole if not folder else ""

    return collection_of


def is_ignored(ws: Workspace, rel_path: str) -> bool:
    """Whether a raw path (raw/...) is kept out by the ignore rules (for the watcher: an event
    on an ignored file starts no compile)."""
    inner = rel_path.removeprefix("raw/")
    parts = inner.split("/")
    rules = default_rules().below(str(ws.raw), "")
    folder_abs, folder_rel = str(ws.raw), ""
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if rules.match(folder_rel + part, not last) is not None:
            return True
        if not last:
            folder_abs = os.path.join(folder_abs, part)
            folder_rel += part + "/"
            rules = rules.below(folder_abs, folder_rel)
    return False

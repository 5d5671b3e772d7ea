"""Git plumbing for wikimem's history: the repository a workspace lives in, commits of a
handful of paths through a temporary index (write-tree, commit-tree, update-ref: the user's own
index and hooks are never touched), and the merge drivers for log.md and index.md.

`python -m wikimem.history merge-log BASE OURS THEIRS` (the driver git runs) is served by
history.py, which calls `merge_log_main` here."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError, WikimemError
from .workspace import Workspace, atomic_write

if TYPE_CHECKING:
    from .config import Settings

log = logging.getLogger("wikimem.history")

TRAILER = "Wikimem-Operation"


UNDOES = "Wikimem-Undoes"


# pages written by code on every operation: never reverted by undo (index.md is regenerated,
# log.md is append-only and keeps the original entry next to the undo entry)
GENERATED = ("index.md", "log.md")


FALLBACK_IDENT = {
    "GIT_AUTHOR_NAME": "wikimem", "GIT_AUTHOR_EMAIL": "wikimem@localhost",
    "GIT_COMMITTER_NAME": "wikimem", "GIT_COMMITTER_EMAIL": "wikimem@localhost",
}


warned: set[str] = set()


class GitError(WikimemError):
    """A git command failed; the message carries git's own first line."""


def _warn_once(key: str, message: str) -> None:
    if key not in warned:
        warned.add(key)
        log.warning(message)


@dataclass(frozen=True)
class Repo:
    """The git work tree holding a workspace's wiki/."""

    top: Path
    wiki: str  # wiki/ as a path from the top of the repository ("" when wiki/ is the repository)
    git_dir: Path | None = None  # .git (or a linked worktree's folder in it)

    def path(self, rel: str) -> str:
        """Repository path of a wiki-relative path."""
        return f"{self.wiki}/{rel}" if self.wiki else rel

    def rel(self, path: str) -> str | None:
        """Wiki-relative path of a repository path, or None when it is outside wiki/."""
        if not self.wiki:
            return path
        prefix = self.wiki + "/"
        return path[len(prefix):] if path.startswith(prefix) else None

    @property
    def pathspec(self) -> str:
        return self.wiki or "."

    def git(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return _run(self.top, args, stdin=stdin, env=env, check=check)

    def out(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        return self.git(*args, stdin=stdin, env=env).stdout.decode("utf-8", "surrogateescape").strip()


def _run(cwd: Path, args: Sequence[str], *, stdin: bytes | None = None,
         env: Mapping[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    inherited = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}  # e.g. run from a hook
    full_env = {**inherited, "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C", **(env or {})}
    # never let git open an editor or a pager, or ask for credentials, from inside a compile
    full_env.update({"GIT_EDITOR": "true", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    proc = subprocess.run(
        ["git", "-c", "core.quotePath=false", *args], cwd=cwd, input=stdin, env=full_env,
        capture_output=True, check=False,
    )
    if check and proc.returncode != 0:
        first = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[0]
        raise GitError(f"git {args[0]} failed: {first}")
    return proc


def _mode(settings: Settings) -> str:
    mode = str(settings.git).strip().lower()
    if mode in ("false", "off", "no", "0"):
        return "false"
    if mode in ("true", "on", "yes", "1"):
        return "true"
    if mode != "auto":
        _warn_once(f"mode:{mode}", f"setting git = {settings.git!r} is not auto, true or false; using auto")
    return "auto"


def repository(ws: Workspace, settings: Settings) -> Repo | None:
    """The repository that records this workspace's operations, or None when history is off.

    auto: on when wiki/ is inside a git work tree. true: also when it is not, by running
    `git init` at the workspace root (raw/ and .wikimem/ are never staged by wikimem; the
    user decides whether to commit raw/). false: off.
    """
    mode = _mode(settings)
    if mode == "false":
        return None
    if shutil.which("git") is None:
        # only worth a word when the user wants history: they asked for it, or the wiki is
        # visibly in a repository
        if mode == "true" or any((p / ".git").exists() for p in (ws.wiki, *ws.wiki.parents)):
            _warn_once("no-git", "git is not installed: wiki changes are not committed "
                                 "(install git, or set git = false in wikimem.toml)")
        return None
    start = ws.wiki if ws.wiki.is_dir() else ws.root
    proc = _run(start, ["rev-parse", "--show-toplevel", "--absolute-git-dir"], check=False)
    if proc.returncode != 0:
        if b"dubious ownership" in proc.stderr:
            # a repository owned by another user: git refuses it; never init another inside it
            _warn_once("dubious", f"git refuses the repository holding {ws.wiki} (owned by another "
                                  "user; see git config safe.directory); wiki changes are not committed")
            return None
        if mode != "true":
            return None
        _run(ws.root, ["init", "-q"])
        log.warning("git = true: created a git repository at %s for the wiki's history", ws.root)
        proc = _run(start, ["rev-parse", "--show-toplevel", "--absolute-git-dir"])
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    top = Path(lines[0]).resolve()
    git_dir = Path(lines[1]) if len(lines) > 1 else None
    try:
        wiki = ws.wiki.resolve().relative_to(top).as_posix()
    except ValueError:
        _warn_once(f"outside:{ws.wiki}", f"{ws.wiki} is not inside the repository at {top}; "
                                         "wiki changes are not committed")
        return None
    return Repo(top, "" if wiki == "." else wiki, git_dir)


def require_repository(ws: Workspace, settings: Settings) -> Repo:
    if _mode(settings) == "false":
        raise UsageError("history is off (git = false); set git = \"auto\" or \"true\" in wikimem.toml")
    if shutil.which("git") is None:
        raise WikimemError("git is not installed; install git to use history and undo")
    repo = repository(ws, settings)
    if repo is None:
        raise WikimemError(
            f"{ws.root} is not in a git repository, so there is no history; run `git init` there "
            "or set git = true in wikimem.toml"
        )
    return repo


IN_PROGRESS = {"MERGE_HEAD": "merge", "CHERRY_PICK_HEAD": "cherry-pick", "REVERT_HEAD": "revert",
               "rebase-merge": "rebase", "rebase-apply": "rebase or am", "BISECT_LOG": "bisect"}


def operation_in_progress(repo: Repo) -> str | None:
    """The git operation the user is in the middle of (a merge, a rebase, ...), if any."""
    git_dir = repo.git_dir or Path(repo.out("rev-parse", "--absolute-git-dir"))
    for name, what in IN_PROGRESS.items():
        if (git_dir / name).exists():
            return what
    return None


def head_commit(repo: Repo) -> str | None:
    proc = repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def nul_list(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def blobs_at(repo: Repo, rev: str | None, paths: Iterable[str]) -> dict[str, bytes | None]:
    """Contents of repository paths at a commit (None where absent), in one git process."""
    paths = list(paths)
    if rev is None or not paths:
        return {p: None for p in paths}
    stdin = "".join(f"{rev}:{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    data = repo.git("cat-file", "--batch", stdin=stdin).stdout
    out: dict[str, bytes | None] = {}
    pos = 0
    for p in paths:
        end = data.index(b"\n", pos)
        header = data[pos:end].split(b" ")
        pos = end + 1
        if header[-1] == b"missing" or len(header) != 3:
            out[p] = None
            continue
        size = int(header[2])
        out[p] = data[pos:pos + size] if header[1] == b"blob" else None  # a folder is no page
        pos += size + 1
    return out


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


ATTRIBUTES = """# written by wikimem: how git merges the files wikimem writes when two clones both ran it.
# Pages: where both sides hold wikimem's own text (each page's wikimem: line matches it), keep
# ours; the next compile renders the page again from the merged raw/. A page a person edited on
# either side is merged as git merges text, conflicts included.
# log.md is append-only: keep our entries as they are and append the other side's new ones.
# index.md, its catalogs and lint.md are regenerated by the next compile or lint: keep ours.
# The drivers are set in each clone's .git/config by wikimem; without them git merges as usual.
sources/** merge=wikimem-page
concepts/** merge=wikimem-page
facts/** merge=wikimem-page
answers/** merge=wikimem-page
log.md merge=wikimem-log
index.md merge=wikimem-index
index-[0-9]*.md merge=wikimem-index
lint.md merge=wikimem-index
"""


# what earlier versions of wikimem wrote: brought up to date, as never a person's
EARLIER_ATTRIBUTES = (
    """# written by wikimem: how git merges the files wikimem generates when two clones both ran it.
# log.md is append-only: keep our entries as they are and append the other side's new ones.
# index.md and its catalogs are regenerated by the next compile after a merge: keep ours.
# The drivers are set in each clone's .git/config by wikimem; without them git merges as usual.
log.md merge=wikimem-log
index.md merge=wikimem-index
index-*.md merge=wikimem-index
""",
)


ATTRIBUTES_MARK = "# written by wikimem"


_configured: set[Path] = set()


def prepare(ws: Workspace, repo: Repo) -> list[str]:
    """Make a workspace safe to share through git; returns the wiki paths it created or updated.

    .wikimem/ (machine state) must never be committed: a fresh clone has no .wikimem/.gitignore
    (it ignores itself), so it is written again here. wiki/.gitattributes names the merge
    drivers for the pages, log.md and index.md, which `configure_merge` defines in this clone.
    A .gitattributes a person wrote or changed is theirs: it is left as it is, and wikimem says
    once which lines its merges need (attributes_needed).
    """
    changed: list[str] = []
    ignore_state(ws)
    configure_merge(repo)
    attributes = ws.wiki / ".gitattributes"
    if ws.wiki.is_dir():
        old = read_or_none(attributes)
        if old is None or old.decode("utf-8", "replace") in EARLIER_ATTRIBUTES:
            atomic_write(attributes, ATTRIBUTES)
            changed.append(".gitattributes")
        elif old != ATTRIBUTES.encode("utf-8"):
            missing = attributes_needed(old.decode("utf-8", "replace"))
            if missing:
                _warn_once(f"attributes:{attributes}", (
                    f"wiki/.gitattributes was changed by a person, so wikimem leaves it as it is; for "
                    f"pulls that merge wikimem's pages without a person it needs these lines: {'; '.join(missing)}"))
    return changed


def attributes_needed(text: str) -> list[str]:
    """The lines of ATTRIBUTES a .gitattributes lacks: for each of wikimem's patterns, the one
    that sets its merge driver (a later line of the file for the same pattern wins, as in git)."""
    said: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        for attr in fields[1:]:
            if attr.startswith("merge=") or attr in ("-merge", "!merge", "merge", "binary"):
                said[fields[0]] = attr
    out = []
    for line in ATTRIBUTES.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#") and said.get(fields[0]) != fields[1]:
            out.append(line)
    return out


def configure_merge(repo: Repo) -> None:
    """Define this clone's merge drivers named in wiki/.gitattributes (once per process)."""
    if repo.top in _configured:
        return
    _configured.add(repo.top)
    python = shlex.quote(sys.executable)
    drivers = {
        "wikimem-log": ("wikimem: keep log.md entries from both sides", f"{python} -m wikimem.merging log %O %A %B"),
        "wikimem-index": ("wikimem: keep ours; the next compile regenerates it", "true"),
        "wikimem-page": ("wikimem: a page both clones rendered: keep ours, the next compile renders it again",
                         f"{python} -m wikimem.merging page %O %A %B %L %P"),
    }
    try:
        listed = repo.git("config", "--get-regexp", r"^merge\.wikimem-", check=False).stdout.decode("utf-8", "replace")
        have = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
        for name, (title, driver) in drivers.items():
            if have.get(f"merge.{name}.driver") != driver:
                repo.git("config", f"merge.{name}.name", title)
                repo.git("config", f"merge.{name}.driver", driver)
    except GitError as exc:
        # a read-only .git/config costs only the friendlier merges, never the commits
        _warn_once("merge-config", f"could not set wikimem's merge drivers in .git/config ({exc}); "
                                   "log.md may conflict when two clones both compiled")


def entry_chunks(text: str) -> tuple[str, list[str]]:
    """(header, entries) of a log.md text; each entry from its `## [` line, without trailing blanks."""
    parts = re.split(r"(?m)^(?=## \[)", text)
    header, chunks = parts[0], parts[1:]
    return header, [c.rstrip("\n") for c in chunks if c.strip()]


def merge_log(base: str, ours: str, theirs: str) -> str:
    """log.md merged: ours exactly as it is, then the entries only the other side added, in order."""
    if not ours.strip():
        return theirs
    _, our_entries = entry_chunks(ours)
    _, base_entries = entry_chunks(base)
    known = set(our_entries) | set(base_entries)
    extra = [c for c in entry_chunks(theirs)[1] if c not in known]
    return ours.rstrip("\n") + "\n" + "".join(f"\n{c}\n" for c in extra)


def ignore_state(ws: Workspace) -> None:
    ignore = ws.state_dir / ".gitignore"
    if ws.state_dir.is_dir() and not ignore.exists():
        atomic_write(ignore, "*\n")


def commit_paths(repo: Repo, paths: Iterable[str], message: str, trailers: Mapping[str, str],
                 ws: Workspace | None = None) -> str | None:
    """Commit exactly these wiki-relative paths (as they are on disk) on top of HEAD.

    Uses a temporary index seeded from HEAD, so the user's index and their staged or
    unstaged work elsewhere stay as they were. Returns the new commit, or None when the
    paths already match HEAD.
    """
    # only paths inside wiki/: anything that climbs out (or is absolute) is never staged
    inside = {posixpath.normpath(p) for p in paths if p and not p.startswith("/")}
    wanted = sorted(repo.path(p) for p in inside if p != "." and not p.startswith("../") and p != "..")
    if not wanted:
        return None
    # paths the repository ignores and does not track are the user's choice not to version them
    ignored = set(nul_list(repo.git("check-ignore", "-z", "--stdin", stdin=_z(wanted), check=False,
                                          env={"GIT_LITERAL_PATHSPECS": "0"}).stdout))
    if ignored:
        tracked = set(nul_list(repo.git("ls-files", "-z", "--", *sorted(ignored)).stdout))
        wanted = [p for p in wanted if p not in ignored or p in tracked]
        if not wanted:
            _warn_once(f"ignored:{repo.top}", "the wiki's pages are ignored by git (.gitignore), "
                                              "so wikimem does not commit them")
            return None
    busy = operation_in_progress(repo)
    if busy:
        # committing under a half-done merge or rebase would tangle our commit into theirs
        raise GitError(f"a git {busy} is in progress, so the pages are written but not committed; "
                       f"git status lists them, to commit with your {busy}")
    text = message.rstrip() + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    for _attempt in range(3):
        head = head_commit(repo)
        with tempfile.TemporaryDirectory(prefix="wikimem-git-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            repo.git("read-tree", *([head] if head else ["--empty"]), env=env)
            repo.git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_z(wanted), env=env)
            tree = repo.out("write-tree", env=env)
        if head and tree == repo.out("rev-parse", f"{head}^{{tree}}"):
            return None
        commit = _commit_tree(repo, tree, head, text)
        # entries the user staged on these paths (their own edit) are left staged as they were
        if head:
            staged = set(nul_list(repo.git("diff-index", "--cached", "--name-only", "-z", head, "--", *wanted).stdout))
        else:
            staged = set(nul_list(repo.git("ls-files", "-z", "--", *wanted).stdout))
        # compare-and-swap: if someone committed meanwhile, build again on their commit
        swap = repo.git("update-ref", "-m", f"wikimem: {trailers.get(TRAILER, 'commit')}", "HEAD",
                        commit, head or "0" * 40, check=False)
        if swap.returncode != 0:
            continue
        _refresh_index(repo, [p for p in wanted if p not in staged])
        if ws is not None and head is not None:
            mark_synced(ws, head, commit)
        return commit
    raise GitError("HEAD kept moving while committing; the pages are written but not committed")


def _commit_tree(repo: Repo, tree: str, head: str | None, text: str) -> str:
    # commit-tree does not read commit.gpgSign, so a daemon never stalls on a passphrase prompt;
    # wikimem's commits are unsigned
    parents = ["-p", head] if head else []
    made = repo.git("commit-tree", tree, *parents, "-F", "-", stdin=text.encode("utf-8"), check=False)
    error = made.stderr.decode("utf-8", "replace")
    if made.returncode != 0 and ("identity" in error or "who you are" in error or "email" in error):
        # no user.name/user.email configured anywhere: commit as "wikimem" rather than fail
        made = repo.git("commit-tree", tree, *parents, "-F", "-", stdin=text.encode("utf-8"),
                        env=FALLBACK_IDENT, check=False)
        error = made.stderr.decode("utf-8", "replace")
    if made.returncode != 0:
        first = (error.strip().splitlines() or ["(no message)"])[0]
        raise GitError(f"git commit-tree failed: {first}")
    return made.stdout.decode().strip()


def _refresh_index(repo: Repo, paths: list[str]) -> None:
    """Point the user's index at the new commit for our paths, so `git status` shows them clean."""
    if not paths:
        return
    for _ in range(20):
        proc = repo.git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_z(paths), check=False)
        if proc.returncode == 0:
            return
        if b"index.lock" not in proc.stderr:
            break
        time.sleep(0.1)  # the user's own git command holds the index for a moment
    _warn_once("index", "committed, but could not refresh the git index; `git status` may list "
                        "wiki pages as changed until `git reset -q -- wiki`")


def _z(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def blob_id(data: bytes, hex_length: int) -> str:
    """git's object id for a file's bytes (SHA-1, or SHA-256 in a sha256 repository)."""
    algorithm = hashlib.sha256 if hex_length == 64 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def merge_log_main(argv: list[str]) -> int:
    """git's merge driver for log.md: `python -m wikimem.history merge-log %O %A %B` (writes %A)."""
    if len(argv) != 4 or argv[0] != "merge-log":
        print("usage: python -m wikimem.history merge-log BASE OURS THEIRS", file=sys.stderr)
        return 2
    base, ours, theirs = (Path(p) for p in argv[1:])
    read = lambda p: p.read_text(encoding="utf-8", errors="surrogateescape")  # noqa: E731
    merged = merge_log(read(base), read(ours), read(theirs))
    ours.write_text(merged, encoding="utf-8", errors="surrogateescape")
    return 0


SYNCED_FILE = "git-synced"


def synced_commit(ws: Workspace) -> str | None:
    """The commit state.db was last reconciled with (kept beside it, in .wikimem/)."""
    data = read_or_none(ws.state_dir / SYNCED_FILE)
    return data.decode("ascii", "replace").strip() or None if data else None


def mark_synced(ws: Workspace, parent: str | None, commit: str) -> None:
    """Record that state.db matches `commit`. After our own commit (parent given) only when
    state matched its parent: otherwise changes from before it still await a sync."""
    if parent is not None and synced_commit(ws) != parent:
        return
    with contextlib.suppress(OSError):
        atomic_write(ws.state_dir / SYNCED_FILE, commit + "\n")

"""History: every operation that changes wiki/ becomes one git commit, and can be undone.

The wiki is just a git repository of Markdown files. When the workspace is inside a git
work tree (or `git = true`), each operation (a compile batch, a lint fix, a filed answer)
is committed as exactly the files it changed, with a message that mirrors its log.md
entry and a `Wikimem-Operation:` trailer. `undo` reverts one such commit as a new commit.

We drive the git command line through plumbing (a temporary index, write-tree,
commit-tree, update-ref) instead of `git add` + `git commit`, because that is the only
way to commit a handful of paths while leaving the user's own index untouched: whatever
they have staged elsewhere stays staged, nothing outside wiki/ is ever staged, and no
pre-commit hook of theirs runs on (or rewrites) our generated pages.

state.db is derived from the pages, so a wiki pulled from a teammate is reconciled by
`sync` at the start of the next compile: pages whose latest commit is a wikimem operation
are adopted as wikimem's own (not mistaken for human edits) and their sources are marked
up to date, so nothing already compiled is compiled again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import index_page, log_page
from .errors import UsageError, WikimemError
from .pages import FrontMatterError, content_hash, loads_page
from .workspace import Workspace, atomic_write, file_sha256, writer_lock

if TYPE_CHECKING:
    from .config import Settings
    from .state import State

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
_warned: set[str] = set()
PAST = {"ingest": "ingested", "remove": "removed", "rename": "renamed", "skip": "skipped", "fail": "failed"}


class GitError(WikimemError):
    """A git command failed; the message carries git's own first line."""


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message)


# --- the repository -------------------------------------------------------------------------


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


def _in_progress(repo: Repo) -> str | None:
    """The git operation the user is in the middle of (a merge, a rebase, ...), if any."""
    git_dir = repo.git_dir or Path(repo.out("rev-parse", "--absolute-git-dir"))
    for name, what in IN_PROGRESS.items():
        if (git_dir / name).exists():
            return what
    return None


def _head(repo: Repo) -> str | None:
    proc = repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def _nul_list(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def _blobs(repo: Repo, rev: str | None, paths: Iterable[str]) -> dict[str, bytes | None]:
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


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


# --- committing an operation ----------------------------------------------------------------


def compose_message(operation: str, entries: Sequence[log_page.LogEntry]) -> str:
    """Subject and body mirroring the log.md entries (without their timestamps)."""
    details = [e for e in entries if e.operation != operation]
    main = next((e for e in entries if e.operation == operation), None)
    if len(details) == 1:
        subject = f"{details[0].operation} {details[0].subject}"
    elif details:
        counts = Counter(e.operation for e in details)
        subject = ", ".join(f"{n} {PAST.get(op, op)}" for op, n in sorted(counts.items()))
        if main:
            subject += f" (of {main.subject})"
    elif main:
        subject = main.subject
    else:
        subject = "wiki changed"
    subject = " ".join(f"wikimem {operation}: {subject}".split())
    if len(subject) > 100:
        subject = subject[:99] + "…"
    body = "\n\n".join(
        "\n".join([f"{e.operation} | {' '.join(e.subject.split())}", *e.lines]) for e in entries
    )
    return subject + ("\n\n" + body if body else "")


def finish(
    ws: Workspace,
    settings: Settings,
    *,
    operation: str,
    entries: Sequence[log_page.LogEntry] | Callable[[list[tuple[str, str]]], Sequence[log_page.LogEntry]],
    paths: Iterable[str | os.PathLike[str]],
    index: bool = True,
    state: Any = None,
) -> list[tuple[str, str]]:
    """The end of every operation that writes wiki/, in one place: regenerate index.md (by
    code, never a model), append the operation's entries to log.md, and commit what it wrote
    (in a git work tree), in that order. `entries` may be a function of the index files
    written ([(path, "created" | "updated")]: an entry that lists them); `index=False` when the
    caller regenerated it already. Nothing is logged or committed when there is nothing to say.
    Returns the index files written, as write_index gives them."""
    changes = index_page.write_index(ws, state) if index else []
    logged = list(entries(changes) if callable(entries) else entries)
    written = [*paths, *(p for p, _ in changes)]
    if logged:
        log_page.append(ws.wiki / "log.md", logged)
        written.append("log.md")
    if logged or written:
        record(ws, settings, operation=operation, entries=logged, paths=written)
    return changes


def record(
    ws: Workspace,
    settings: Settings,
    *,
    operation: str,
    paths: Iterable[str | os.PathLike[str]],
    entries: Sequence[log_page.LogEntry] = (),
    message: str | None = None,
) -> str | None:
    """Commit the `paths` an operation changed; returns the commit, or None.

    Paths are wiki-relative ("sources/x.md", "log.md"); "wiki/sources/x.md" and absolute
    paths inside wiki/ are accepted too. The one call every operation that writes wiki/
    makes after appending its log.md entry (compile does; lint --fix and query --save must
    too), with the entries it appended so the message mirrors them. Never raises: a failure
    to commit is logged as a warning and the operation's own result stands.
    """
    try:
        repo = repository(ws, settings)
        if repo is None:
            return None
        changed = [*(_wiki_rel(ws, p) for p in paths), *prepare(ws, repo)]
        return commit_paths(repo, changed, message or compose_message(operation, entries),
                            {TRAILER: operation}, ws)
    except Exception as exc:  # noqa: BLE001 - history must never break the operation it records
        log.warning("could not commit the %s to git: %s", operation, exc)
        log.debug("git commit failed", exc_info=True)
        return None


def _wiki_rel(ws: Workspace, path: str | os.PathLike[str]) -> str:
    """A wiki-relative path from the forms operations hold: relative to wiki/, to the
    workspace ("wiki/..."), or absolute. Anything outside wiki/ comes back unusable ("")."""
    text = os.fspath(path)
    if os.path.isabs(text):
        try:
            return Path(text).resolve().relative_to(ws.wiki.resolve()).as_posix()
        except ValueError:
            return ""
    return text.replace("\\", "/").removeprefix("./").removeprefix("wiki/")


ATTRIBUTES = """# written by wikimem: how git merges the files wikimem generates when two clones both ran it.
# log.md is append-only: keep our entries as they are and append the other side's new ones.
# index.md and its catalogs are regenerated by the next compile after a merge: keep ours.
# The drivers are set in each clone's .git/config by wikimem; without them git merges as usual.
log.md merge=wikimem-log
index.md merge=wikimem-index
index-*.md merge=wikimem-index
"""
ATTRIBUTES_MARK = "# written by wikimem"
_configured: set[Path] = set()


def prepare(ws: Workspace, repo: Repo) -> list[str]:
    """Make a workspace safe to share through git; returns the wiki paths it created or updated.

    .wikimem/ (machine state) must never be committed: a fresh clone has no .wikimem/.gitignore
    (it ignores itself), so it is written again here. wiki/.gitattributes names the merge
    drivers for log.md and index.md, which `configure_merge` defines in this clone.
    """
    changed: list[str] = []
    ignore_state(ws)
    configure_merge(repo)
    attributes = ws.wiki / ".gitattributes"
    if ws.wiki.is_dir():
        old = _read(attributes)
        # ours from an older wikimem is brought up to date; a file the user wrote is theirs
        if old is None or (old.decode("utf-8", "replace").startswith(ATTRIBUTES_MARK)
                           and old != ATTRIBUTES.encode("utf-8")):
            atomic_write(attributes, ATTRIBUTES)
            changed.append(".gitattributes")
    return changed


def configure_merge(repo: Repo) -> None:
    """Define this clone's merge drivers named in wiki/.gitattributes (once per process)."""
    if repo.top in _configured:
        return
    _configured.add(repo.top)
    driver = f'"{sys.executable}" -m wikimem.history merge-log %O %A %B'
    try:
        if repo.git("config", "--get", "merge.wikimem-log.driver", check=False).stdout.decode().strip() != driver:
            repo.git("config", "merge.wikimem-log.name", "wikimem: keep log.md entries from both sides")
            repo.git("config", "merge.wikimem-log.driver", driver)
            repo.git("config", "merge.wikimem-index.name", "wikimem: keep ours; the next compile regenerates it")
            repo.git("config", "merge.wikimem-index.driver", "true")
    except GitError as exc:
        # a read-only .git/config costs only the friendlier merges, never the commits
        _warn_once("merge-config", f"could not set wikimem's merge drivers in .git/config ({exc}); "
                                   "log.md may conflict when two clones both compiled")


def _entry_chunks(text: str) -> tuple[str, list[str]]:
    """(header, entries) of a log.md text; each entry from its `## [` line, without trailing blanks."""
    parts = re.split(r"(?m)^(?=## \[)", text)
    header, chunks = parts[0], parts[1:]
    return header, [c.rstrip("\n") for c in chunks if c.strip()]


def merge_log(base: str, ours: str, theirs: str) -> str:
    """log.md merged: ours exactly as it is, then the entries only the other side added, in order."""
    if not ours.strip():
        return theirs
    _, our_entries = _entry_chunks(ours)
    _, base_entries = _entry_chunks(base)
    known = set(our_entries) | set(base_entries)
    extra = [c for c in _entry_chunks(theirs)[1] if c not in known]
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
    ignored = set(_nul_list(repo.git("check-ignore", "-z", "--stdin", stdin=_z(wanted), check=False,
                                          env={"GIT_LITERAL_PATHSPECS": "0"}).stdout))
    if ignored:
        tracked = set(_nul_list(repo.git("ls-files", "-z", "--", *sorted(ignored)).stdout))
        wanted = [p for p in wanted if p not in ignored or p in tracked]
        if not wanted:
            _warn_once(f"ignored:{repo.top}", "the wiki's pages are ignored by git (.gitignore), "
                                              "so wikimem does not commit them")
            return None
    busy = _in_progress(repo)
    if busy:
        # committing under a half-done merge or rebase would tangle our commit into theirs
        raise GitError(f"a git {busy} is in progress, so the pages are written but not committed; "
                       f"git status lists them, to commit with your {busy}")
    text = message.rstrip() + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    for _attempt in range(3):
        head = _head(repo)
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
            staged = set(_nul_list(repo.git("diff-index", "--cached", "--name-only", "-z", head, "--", *wanted).stdout))
        else:
            staged = set(_nul_list(repo.git("ls-files", "-z", "--", *wanted).stdout))
        # compare-and-swap: if someone committed meanwhile, build again on their commit
        swap = repo.git("update-ref", "-m", f"wikimem: {trailers.get(TRAILER, 'commit')}", "HEAD",
                        commit, head or "0" * 40, check=False)
        if swap.returncode != 0:
            continue
        _refresh_index(repo, [p for p in wanted if p not in staged])
        if ws is not None and head is not None:
            _mark_synced(ws, head, commit)
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


# --- reading history ------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    commit: str
    short: str
    operation: str
    subject: str
    date: str  # ISO 8601, author date
    author: str
    files: tuple[str, ...]  # wiki-relative
    undoes: str | None = None  # the commit an undo reverted
    undone_by: str | None = None  # the undo commit that reverted this one (None when in effect)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["files"] = list(self.files)
        return data


_FORMAT = (f"%x1d%H%x1f%h%x1f%aI%x1f%an%x1f%s%x1f%(trailers:key={TRAILER},valueonly,separator=%x2C)"
           f"%x1f%(trailers:key={UNDOES},valueonly,separator=%x2C)%x1e")


def _log(repo: Repo, rev: str, *extra: str, operations_only: bool = True,
         paths: Sequence[str] | None = None) -> list[Operation]:
    args = ["log", f"--format={_FORMAT}", "--name-only", "-z", "--no-renames", *extra]
    if operations_only:
        args.append(f"--grep=^{TRAILER}: ")
    proc = repo.git(*args, rev, "--", *(paths or [repo.pathspec]), check=False)
    if proc.returncode != 0:
        return []
    ops: list[Operation] = []
    for chunk in proc.stdout.split(b"\x1d")[1:]:
        header, _, names = chunk.partition(b"\x1e")
        fields = header.decode("utf-8", "replace").split("\x1f")
        if len(fields) < 7:
            continue
        commit, short, date, author, subject, op, undoes = fields[:7]
        files = tuple(r for r in (repo.rel(n.strip("\n")) for n in _nul_list(names) if n.strip("\n")) if r)
        op = op.strip()
        # the subject without the "wikimem compile: " prefix the operation column already says
        subject = subject.removeprefix(f"wikimem {op}: ") if op else subject
        ops.append(Operation(commit, short, op, subject, date, author, files, undoes.strip() or None))
    return ops


def _mark_undone(ops: list[Operation]) -> list[Operation]:
    """Fill undone_by, oldest first: undoing an undo (a redo) puts its target back in effect."""
    by_commit = {op.commit: op for op in ops}
    undone: dict[str, str] = {}
    for op in reversed(ops):
        if not op.undoes:
            continue
        target = by_commit.get(op.undoes)
        if target is not None and target.undoes:
            undone.pop(target.undoes, None)
        undone[op.undoes] = op.commit
    return [Operation(**{**asdict(op), "files": op.files, "undone_by": undone.get(op.commit)}) for op in ops]


HELD_REASON = "held by wikimem undo; compiled again when the file changes"


def held_sources(ws: Workspace) -> list[str]:
    """Sources an undo holds back: the compiler leaves them alone until their file changes."""
    if not ws.state_db.exists():
        return []
    from .state import State

    state = State(ws.state_db)
    try:
        return sorted(p for p, row in state.sources().items() if row.status == "skipped" and row.reason == HELD_REASON)
    finally:
        state.close()


def operations(ws: Workspace, settings: Settings, limit: int | None = 20) -> list[Operation]:
    """The recent operations recorded in git, newest first."""
    repo = require_repository(ws, settings)
    if _head(repo) is None:
        return []
    return _mark_undone(_log(repo, "HEAD", *([f"-n{limit}"] if limit else [])))


# --- undo -----------------------------------------------------------------------------------


@dataclass
class UndoResult:
    undone: Operation
    commit: str | None = None
    restored: list[str] = field(default_factory=list)  # pages put back as they were before
    removed: list[str] = field(default_factory=list)  # pages the operation had created
    held: list[str] = field(default_factory=list)  # sources not compiled again until they change
    index: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "undone": self.undone.to_json(), "commit": self.commit, "restored": self.restored,
            "removed": self.removed, "held": self.held, "index": self.index, "dry_run": self.dry_run,
        }


def _pick(repo: Repo, ops: list[Operation], target: str | None) -> Operation:
    if not ops:
        raise WikimemError("no wikimem operations in this repository's history yet; nothing to undo")
    if target is None:
        for op in ops:
            if not op.undoes and not op.undone_by:
                return op
        raise WikimemError("every operation in the history is already undone; nothing to undo")
    kinds = {op.operation for op in ops}
    if target in kinds:
        for op in ops:
            if op.operation == target and not op.undone_by:
                return op
        raise WikimemError(f"every {target} operation is already undone; see: wikimem history")
    proc = repo.git("rev-parse", "-q", "--verify", f"{target}^{{commit}}", check=False)
    commit = proc.stdout.decode().strip() if proc.returncode == 0 else ""
    if not commit:
        raise UsageError(
            f"no operation or commit named {target!r}; give a commit from `wikimem history` "
            f"or one of: {', '.join(sorted(kinds))}"
        )
    for op in ops:
        if op.commit == commit:
            if op.undone_by:
                raise WikimemError(
                    f"{op.short} ({op.operation}) is already undone by {op.undone_by[:7]}; "
                    f"to redo it: wikimem undo {op.undone_by[:7]}"
                )
            return op
    raise UsageError(f"{target} is not a wikimem operation; see: wikimem history")


def _conflict(repo: Repo, op: Operation, path: str, disk: bytes | None, head_blob: bytes | None) -> tuple[str, str]:
    """Why a page no longer matches what the operation wrote (who changed it since), and what to do."""
    shown = f"wiki/{repo.rel(path)}"
    if disk != head_blob:
        return f"{shown} has uncommitted edits", "commit or discard them first"
    later = _log(repo, f"{op.commit}..HEAD", "-n1", operations_only=False, paths=[path])
    if later and later[0].operation:
        return (f"{shown} was changed again by {later[0].short} ({later[0].operation})",
                f"undo that first: wikimem undo {later[0].short}")
    if later:
        return (f"{shown} was edited by a person in {later[0].short} ({later[0].subject!r})",
                f"to revert anyway and merge by hand: git revert {op.short}")
    return f"{shown} was changed since", f"to revert anyway and merge by hand: git revert {op.short}"


def undo(
    ws: Workspace, settings: Settings, target: str | None = None, *, wait: float = 0.0, dry_run: bool = False
) -> UndoResult:
    """Revert one operation's commit as a new commit, and bring state.db in line with the pages.

    Refuses (changing nothing) when a page the operation wrote has been changed since, by a
    person or by a later operation, rather than lose that change.
    """
    repo = require_repository(ws, settings)
    busy = _in_progress(repo)
    if busy:
        raise WikimemError(f"a git {busy} is in progress; finish or abort it, then undo")
    with writer_lock(ws, wait=wait, holder="wikimem undo"):
        ops = operations(ws, settings, limit=None)
        op = _pick(repo, ops, target)
        parent_proc = repo.git("rev-parse", "-q", "--verify", f"{op.commit}^", check=False)
        parent = parent_proc.stdout.decode().strip() if parent_proc.returncode == 0 else None
        # .gitattributes came with the first commit and serves every later one: it stays
        pages = [f for f in op.files
                 if f not in (*GENERATED, ".gitattributes") and not index_page.is_catalog(f)]
        if not pages:
            raise WikimemError(f"{op.short} ({op.operation}) changed only index.md and log.md; nothing to undo")
        full = [repo.path(p) for p in pages]
        after = _blobs(repo, op.commit, full)
        before = _blobs(repo, parent, full)
        current = _blobs(repo, "HEAD", full)
        disk = {p: _read(ws.wiki / (repo.rel(p) or p)) for p in full}
        staged = set(_nul_list(repo.git("diff-index", "--cached", "--name-only", "-z", "HEAD", "--", *full).stdout))
        problems = [_conflict(repo, op, p, disk[p], current[p]) for p in full if disk[p] != after[p]]
        problems += [(f"wiki/{repo.rel(p)} has staged changes", "commit or unstage them first") for p in sorted(staged)]
        if problems:
            more = f" (and {len(problems) - 1} more pages)" if len(problems) > 1 else ""
            what, hint = problems[0]
            raise WikimemError(f"cannot undo {op.short} ({op.operation}): {what}{more}; nothing was changed; {hint}")
        result = UndoResult(undone=op, dry_run=dry_run)
        for p in full:
            rel = repo.rel(p) or p
            (result.restored if before[p] is not None else result.removed).append(rel)
        held = _held_sources(ws, pages, {repo.rel(p) or p: v for p, v in before.items()},
                             {repo.rel(p) or p: v for p, v in after.items()})
        result.held = sorted(r for r, keep in held.items() if keep is not None)
        if dry_run:
            return result
        for p in full:
            target_file = ws.wiki / (repo.rel(p) or p)
            content = before[p]
            if content is None:
                with contextlib.suppress(FileNotFoundError):
                    target_file.unlink()
            else:
                atomic_write(target_file, content)
        _restore_state(ws, pages, {repo.rel(p) or p: v for p, v in before.items()}, held)
        index_changes = index_page.write_index(ws)
        result.index = [p for p, _ in index_changes]
        lines = log_page.list_lines("restored", result.restored)
        lines += log_page.list_lines("removed", result.removed)
        lines += log_page.list_lines("held (compiled again when they change)", result.held)
        lines += log_page.list_lines("index", result.index)
        lines.append(f"- reverted: {op.short} ({op.date})")
        entry = log_page.LogEntry("undo", f"{op.operation} {op.short}: {op.subject}", lines)
        log_page.append(ws.wiki / "log.md", [entry])
        result.commit = commit_paths(
            repo, [*pages, *result.index, "log.md"], compose_message("undo", [entry]),
            {TRAILER: "undo", UNDOES: op.commit}, ws,
        )
        return result


def _page_meta(rel: str, data: bytes | None) -> tuple[str, list[str], str]:
    """(kind, sources, source_sha256) of a page version; blanks when absent or unreadable."""
    if data is None:
        return "", [], ""
    try:
        page = loads_page(rel, data.decode("utf-8", "replace"))
    except FrontMatterError:
        return "", [], ""
    return page.kind, page.sources, str(page.meta.get("source_sha256") or "")


def _held_sources(
    ws: Workspace, pages: list[str], before: Mapping[str, bytes | None], after: Mapping[str, bytes | None]
) -> dict[str, str | None]:
    """raw path -> its current sha when it must be held (not compiled again until it changes),
    None when its page now matches it (or it is gone from raw/)."""
    held: dict[str, str | None] = {}
    for rel in pages:
        kind_a, sources_a, _ = _page_meta(rel, after.get(rel))
        kind_b, sources_b, sha_b = _page_meta(rel, before.get(rel))
        for raw in {*(sources_a if kind_a == "source" else []), *(sources_b if kind_b == "source" else [])}:
            file = _raw_file(ws, raw)
            if file is None:
                continue
            if not file.is_file():
                held[raw] = None
                continue
            current = file_sha256(file)
            matches = kind_b == "source" and sources_b[:1] == [raw] and sha_b == current
            held[raw] = None if matches else current
    return held


def _raw_file(ws: Workspace, raw: str | None) -> Path | None:
    """The file a page's `sources:` entry names, when it is a path under raw/ (front matter is
    text anyone can edit, so nothing outside raw/ is ever read or recorded)."""
    if not raw or not raw.startswith("raw/") or ".." in raw.split("/") or "\x00" in raw:
        return None
    return ws.root / raw


def _restore_state(
    ws: Workspace, pages: list[str], before: Mapping[str, bytes | None], held: Mapping[str, str | None]
) -> None:
    """Bring state.db in line with the reverted pages.

    Page rows take the restored bytes (so they are wikimem's, not a person's edit). A source
    whose page now matches its raw file is compiled; one whose page was taken away or no
    longer matches is held as `skipped` at its current hash, so neither the next compile
    nor the daemon's rescan redoes the undone work until the file changes.
    """
    from .state import SourceRow, State

    state = State(ws.state_db)
    try:
        with state.transaction():
            source_page: dict[str, str] = {}
            for rel in pages:
                data = before.get(rel)
                if data is None:
                    state.delete_page(rel)
                    continue
                kind, sources, _ = _page_meta(rel, data)
                if kind not in ("source", "concept"):
                    continue  # answers, lint.md: not pages the compiler tracks in state
                owner = sources[0] if kind == "source" and sources else None
                state.put_page(rel, content_hash(data), kind, owner)
                if owner:
                    source_page[owner] = rel
            for raw, sha in sorted(held.items()):
                file = _raw_file(ws, raw)
                if file is None:
                    continue
                if not file.is_file():
                    state.delete_source(raw)
                    continue
                st = file.stat()
                page = source_page.get(raw)
                if sha is None:
                    # concepts unknown (the page is an older render): re-rendered when next compiled
                    state.put_source(SourceRow(raw, file_sha256(file), st.st_size, st.st_mtime_ns, page,
                                               "compiled", None, 0, ()))
                else:
                    state.put_source(SourceRow(raw, sha, st.st_size, st.st_mtime_ns, page, "skipped",
                                               HELD_REASON, 0, ()))
    finally:
        state.close()


# --- a wiki pulled from a teammate ----------------------------------------------------------


def sync(ws: Workspace, settings: Settings, state: State) -> int:
    """Bring state.db in line with pages git changed underneath (a pull, merge, reset, revert).

    Called by the compiler before it plans. Without this, a pulled concept page would look
    like a human edit (its hash differs from what this machine last wrote) and a pulled
    source page would be compiled again. A page is adopted as wikimem's when its file matches
    HEAD and either the latest commit that touched it is a wikimem operation or its content
    is exactly what some wikimem operation wrote (a `git revert` or `git reset` back to it).
    Anything a person wrote, committed or not, stays a person's edit. Returns how many pages
    were adopted. Never raises.
    """
    try:
        repo = repository(ws, settings)
        if repo is None:
            return 0
        ignore_state(ws)
        configure_merge(repo)
        head = _head(repo)
        last = _synced(ws)
        if head is None or head == last:
            return 0
        known_last = last is not None and repo.git("cat-file", "-e", f"{last}^{{commit}}", check=False).returncode == 0
        if known_last and last is not None:
            # both directions: a pull moves forward, a reset moves back
            names = repo.git("diff", "--name-only", "-z", "--no-renames", last, head, "--", repo.pathspec).stdout
        else:
            names = repo.git("ls-tree", "-r", "-z", "--name-only", head, "--", repo.pathspec).stdout
        candidates = [rel for rel in (repo.rel(n) for n in _nul_list(names)) if rel and _is_page(rel)]
        adopted = _adopt(ws, repo, state, head, candidates)
        _mark_synced(ws, None, head)
        # a merge may have combined two versions of index.md; a fast-forward (or our own
        # commits) cannot, and regenerating reads every page, so only after merges
        merges = repo.out("rev-list", "--merges", "--count", f"{last}..{head}" if known_last else head)
        if merges != "0":
            _reindex(ws, settings)
        return adopted
    except Exception as exc:  # noqa: BLE001 - reconciling is an optimisation; compile goes on without it
        log.warning("could not reconcile state with git history: %s", exc)
        log.debug("sync failed", exc_info=True)
        return 0


SYNCED_FILE = "git-synced"


def _synced(ws: Workspace) -> str | None:
    """The commit state.db was last reconciled with (kept beside it, in .wikimem/)."""
    data = _read(ws.state_dir / SYNCED_FILE)
    return data.decode("ascii", "replace").strip() or None if data else None


def _mark_synced(ws: Workspace, parent: str | None, commit: str) -> None:
    """Record that state.db matches `commit`. After our own commit (parent given) only when
    state matched its parent: otherwise changes from before it still await a sync."""
    if parent is not None and _synced(ws) != parent:
        return
    with contextlib.suppress(OSError):
        atomic_write(ws.state_dir / SYNCED_FILE, commit + "\n")


def _is_page(rel: str) -> bool:
    return rel.endswith(".md") and rel not in (*GENERATED, "AGENTS.md") and not index_page.is_catalog(rel)


def _reindex(ws: Workspace, settings: Settings) -> None:
    """After a merge, regenerate index.md (the merge kept one side's) and commit that on its
    own, since the compile that follows may have nothing to do."""
    changes = index_page.write_index(ws)
    if not changes:
        return
    paths = [p for p, _ in changes]
    entry = log_page.LogEntry("sync", "index.md regenerated after a git merge", log_page.list_lines("index", paths))
    finish(ws, settings, operation="sync", entries=[entry], paths=paths, index=False)


def _blob_id(data: bytes, hex_length: int) -> str:
    """git's object id for a file's bytes (SHA-1, or SHA-256 in a sha256 repository)."""
    algorithm = hashlib.sha256 if hex_length == 64 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def _path_history(repo: Repo, head: str, paths: list[str]) -> dict[str, tuple[bool, set[str]]]:
    """For each repository path: is the latest non-merge commit that touched it a wikimem
    operation, and which blobs did wikimem operations write there. One git process."""
    out: dict[str, tuple[bool, set[str]]] = {}
    proc = repo.git("log", f"--format=%x1d%H%x1f%(trailers:key={TRAILER},valueonly,separator=%x2C)%x1e",
                    "--raw", "--no-abbrev", "-z", "--no-renames", head, "--", *paths)
    for chunk in proc.stdout.split(b"\x1d")[1:]:
        header, _, raw = chunk.partition(b"\x1e")
        is_op = bool(header.partition(b"\x1f")[2].strip())
        tokens = raw.lstrip(b"\0\n").split(b"\0")
        for meta, name in zip(tokens[0::2], tokens[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            path = name.decode("utf-8", "surrogateescape")
            blob = meta.split(b" ")[3].decode()
            _latest, blobs = out.setdefault(path, (is_op, set()))
            if is_op and set(blob) != {"0"}:
                blobs.add(blob)
    return out


def _adopt(ws: Workspace, repo: Repo, state: State, head: str, candidates: list[str]) -> int:
    from .state import SourceRow

    pages = state.pages()
    rows = state.sources()
    # most candidates are this machine's own commits, already in state: skip those cheaply
    on_disk = {rel: _read(ws.wiki / rel) for rel in candidates}
    candidates = [
        rel for rel in candidates
        if (on_disk[rel] is None and rel in pages)
        or (on_disk[rel] is not None and (rel not in pages or pages[rel][0] != content_hash(on_disk[rel] or b"")))
    ]
    if not candidates:
        return 0
    full = [repo.path(rel) for rel in candidates]
    listed = repo.git("ls-tree", "-z", head, "--", *full).stdout
    at_head = {}
    for entry in _nul_list(listed):
        meta, _, path = entry.partition("\t")
        at_head[path] = meta.split(" ")[2]
    written = _path_history(repo, head, full)
    adopted = 0
    changed_pages: set[str] = set()
    with state.transaction():
        for rel in candidates:
            disk = on_disk[rel]
            disk_id = _blob_id(disk, len(head)) if disk is not None else None
            if disk_id != at_head.get(repo.path(rel)):
                continue  # not what HEAD holds: an uncommitted change, whoever made it owns it
            touched = repo.path(rel) in written
            latest_is_op, op_blobs = written.get(repo.path(rel), (False, set()))
            known = pages.get(rel)
            if disk is None:
                assert known is not None
                # deleted by a wikimem operation, or never part of this line of history (a
                # reset or checkout back to before it); a person's deletion is left to the compiler
                if touched and not latest_is_op:
                    continue
                owner = known[2] if known[1] == "source" else None
                row = rows.get(owner) if owner else None
                raw_file = _raw_file(ws, owner)
                state.delete_page(rel)
                adopted += 1
                if owner and row and row.page == rel and raw_file is not None:
                    if raw_file.is_file():
                        st = raw_file.stat()
                        state.put_source(SourceRow(owner, file_sha256(raw_file), st.st_size, st.st_mtime_ns, None,
                                                   "skipped", HELD_REASON, 0, ()))
                    else:
                        state.delete_source(owner)
                continue
            if not latest_is_op and disk_id not in op_blobs:
                continue  # a person's words: the compiler keeps them and proposes its own beside them
            kind, sources, sha = _page_meta(rel, disk)
            if kind not in ("source", "concept"):
                continue  # answers, lint.md and the like are not the compiler's pages to track
            owner = sources[0] if kind == "source" and sources else None
            state.put_page(rel, content_hash(disk), kind, owner)
            adopted += 1
            changed_pages.add(rel)
            file = _raw_file(ws, owner)
            if owner and file is not None and sha:
                if file.is_file() and file_sha256(file) == sha:
                    st = file.stat()
                    # concepts unknown: the page may link others than this machine last rendered,
                    # so the offline backend renders it again when it next compiles
                    state.put_source(SourceRow(owner, sha, st.st_size, st.st_mtime_ns, rel, "compiled",
                                               None, 0, ()))
        # the offline backend skips a page whose inputs match what it last rendered; a page git
        # put back to an older version no longer is that render, so forget it and let the next
        # compile render it again (identical bytes are not rewritten, so a page pulled as-is
        # costs nothing)
        if changed_pages:
            state.forget_renders(changed_pages)
    return adopted


def _merge_log_main(argv: list[str]) -> int:
    """git's merge driver for log.md: `python -m wikimem.history merge-log %O %A %B` (writes %A)."""
    if len(argv) != 4 or argv[0] != "merge-log":
        print("usage: python -m wikimem.history merge-log BASE OURS THEIRS", file=sys.stderr)
        return 2
    base, ours, theirs = (Path(p) for p in argv[1:])
    read = lambda p: p.read_text(encoding="utf-8", errors="surrogateescape")  # noqa: E731
    merged = merge_log(read(base), read(ours), read(theirs))
    ours.write_text(merged, encoding="utf-8", errors="surrogateescape")
    return 0


if __name__ == "__main__":
    sys.exit(_merge_log_main(sys.argv[1:]))

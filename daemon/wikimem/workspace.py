"""The workspace on disk: its layout, safe paths inside it, atomic writes and the writer lock."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .errors import PathEscape, UnsafePath, WorkspaceBusy

STATE_DIR = ".wikimem"


@dataclass(frozen=True)
class Workspace:
    """A folder holding raw/, wiki/ and .wikimem/."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Workspace:
        return cls(Path(root).expanduser().resolve())

    # the folders' paths are made once: a compile asks for wiki/ thousands of times (every page
    # it writes or checks), and each Path made anew is a few microseconds
    @functools.cached_property
    def raw(self) -> Path:
        return self.root / "raw"

    @functools.cached_property
    def wiki(self) -> Path:
        return self.root / "wiki"

    @functools.cached_property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @functools.cached_property
    def layout(self) -> tuple[Path, ...]:
        """The folders of wiki/ that `wikimem init` makes: they stay when empty."""
        return (self.wiki / "sources", self.wiki / "concepts", self.wiki / "answers")

    @functools.cached_property
    def state_db(self) -> Path:
        return self.state_dir / "state.db"

    def rel(self, path: Path) -> str:
        """Workspace-relative POSIX path, as written in pages and JSON.

        Lexical, not resolved: raw/ may be a symlink to a folder elsewhere.
        """
        if not path.is_absolute():
            return path.as_posix()
        try:
            return Path(os.path.normpath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def is_initialized(self) -> bool:
        return self.raw.is_dir() and self.wiki.is_dir()


def confine(base: Path, relative: str) -> Path:
    """Resolve `relative` inside `base`, refusing anything that lands outside it.

    Refuses absolute paths, `..` that climbs out, and symlinks whose target is
    outside `base`. Returns the resolved path (which need not exist).
    """
    _written_relative(base, relative)
    # os.path.realpath on strings: the same answer as Path.resolve, at a fraction of the cost
    base_resolved = os.path.realpath(base)
    resolved = os.path.realpath(os.path.join(base_resolved, relative))
    if resolved != base_resolved and not resolved.startswith(base_resolved + os.sep):
        raise PathEscape(f"{relative!r} points outside {base.name}/")
    return Path(resolved)


def confine_lexically(base: Path, relative: str) -> None:
    """confine's checks of the path as written: refuses an empty path, an absolute one and one
    whose `..` climb out of `base`. A link on the way is left to `owned`, which refuses every
    link where confine refuses only one that leads out: a writer that checks with `owned` asks
    this rather than confine, and does not resolve each page's path (a first compile writes
    hundreds of pages, and resolving a path looks at every folder from the root)."""
    _written_relative(base, relative)
    normal = os.path.normpath(relative)
    if normal == os.pardir or normal.startswith(os.pardir + os.sep):
        raise PathEscape(f"{relative!r} points outside {base.name}/")


def _written_relative(base: Path, relative: str) -> None:
    if not relative or "\x00" in relative:
        raise PathEscape(f"invalid path {relative!r}")
    candidate = Path(relative)
    if candidate.is_absolute() or relative.startswith(("/", "\\")):
        raise PathEscape(f"{relative!r} is absolute; give a path relative to {base.name}/")


CLOCK_TICK_NS = 20_000_000  # the coarsest tick file times are taken at on a fine-grained file system


def timestamp_granularity(ns: int) -> int:
    """How coarse the file system that wrote a timestamp keeps times, judged from the timestamp:
    two seconds (FAT) or one (ext3, HFS+, many network shares) when it is a whole number of them,
    else the clock tick the kernel stamps files with (a few milliseconds)."""
    if ns % 2_000_000_000 == 0:
        return 2_000_000_000
    if ns % 1_000_000_000 == 0:
        return 1_000_000_000
    return CLOCK_TICK_NS


def racy(mtime_ns: int, ctime_ns: int, seen_ns: int) -> bool:
    """Whether a file whose times were read at `seen_ns` (wall clock) was changed so shortly
    before that an edit after could leave its size and times as they were: its last change is
    within one timestamp granularity of the look. Such a file ("racily clean", as git calls it)
    is judged by its content, never by its times."""
    last = max(mtime_ns, ctime_ns)
    return seen_ns < last + timestamp_granularity(last)


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks (sources can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --- files wikimem owns ----------------------------------------------------------------------
#
# wiki/ (pages, index.md, catalogs, facts/, log.md, AGENTS.md, lint.md) and .wikimem/ are
# wikimem's to write, delete and serve. A symbolic link there (committed by a teammate, a
# `wiki/facts -> ~/Documents`) would lead a write or a delete anywhere on the disk, and a FIFO or
# a device would block or flood a reader: every write, delete and served read of such a path is
# checked by `owned` first, and a link or a special file is refused with one line.


def _shown(base: Path, path: Path) -> str:
    try:
        return path.relative_to(base.parent).as_posix()
    except ValueError:
        return str(path)


def owned(base: Path, path: Path, *, folder: bool = False) -> Path:
    """`path`, a file (a folder with folder=True) under `base` (wiki/ or .wikimem/), checked as
    wikimem may write, delete or serve it: `base` and every folder between them a real folder,
    never a symbolic link, and `path` absent or a regular file. Raises UnsafePath, one line
    naming what is in the way. Folders that do not exist yet are fine: they are made real."""
    # on strings, a Path made only for what is returned or said: a compile checks every page
    # it reads and writes, and a Path per folder on the way took longer than looking at it
    normal = os.path.normpath(path)
    top = os.fspath(base)
    if normal == top:
        parts: list[str] = []
    elif normal.startswith(top if top.endswith(os.sep) else top + os.sep):
        parts = normal[len(top):].lstrip(os.sep).split(os.sep)
    else:
        raise UnsafePath(f"{Path(normal)} is not inside {base}")
    if os.pardir in parts:
        raise UnsafePath(f"{_shown(base, Path(normal))} leads out of {base.name}/")
    current = top
    for depth in range(len(parts) + 1):
        if depth:
            current = os.path.join(current, parts[depth - 1])
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return Path(normal)
        except NotADirectoryError:
            raise UnsafePath(f"{_shown(base, Path(current).parent)} is not a folder") from None
        last = depth == len(parts)
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            raise UnsafePath(f"{_shown(base, Path(current))} is a symbolic link; wikimem writes, deletes and serves "
                             f"only real files and folders in {base.name}/ (replace the link with a folder or a file)")
        if last and not folder:
            if stat.S_ISDIR(mode):
                raise UnsafePath(f"{_shown(base, Path(current))} is a folder, not a file")
            if not stat.S_ISREG(mode):
                raise UnsafePath(f"{_shown(base, Path(current))} is not a regular file (a FIFO, a device or a socket); "
                                 "wikimem neither reads nor writes it")
        elif not stat.S_ISDIR(mode):
            raise UnsafePath(f"{_shown(base, Path(current))} is not a folder")
    return Path(normal)


def open_owned(base: Path, path: Path, *, single_link: bool = False) -> BinaryIO:
    """`path` (checked by `owned`) opened for reading, refused when it is anything but a regular
    file by the time it is open (never following a link, never blocking on a FIFO swapped in).
    single_link: also refused when the file has other hard links (an agent is served only files
    that cannot be another name of a file outside the workspace)."""
    owned(base, path)
    return open_checked(path, _shown(base, path), single_link=single_link)


def open_checked(path: Path, shown: str, *, single_link: bool = False) -> BinaryIO:
    """A regular file opened for reading without following a link at its name or blocking on a
    FIFO; UnsafePath for anything else (see open_owned)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{shown} is a symbolic link; not read") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{shown} is not a regular file (a FIFO, a device or a socket); not read")
        if single_link and st.st_nlink > 1:
            raise UnsafePath(f"{shown} has {st.st_nlink} hard links, and another may be outside the workspace; "
                             "not served (make it a file of its own: cp it aside and back)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_owned(base: Path, path: Path, *, limit: int | None = None, single_link: bool = False) -> bytes:
    """The bytes of a file wikimem owns (checked by `open_owned`), at most `limit` of them."""
    with open_owned(base, path, single_link=single_link) as handle:
        return handle.read() if limit is None else handle.read(limit)


def remove_owned(base: Path, path: Path) -> bool:
    """Delete a file wikimem owns (checked by `owned`: never through a link, never a link's
    target); False when it was not there."""
    owned(base, path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def remove_empty_folders(base: Path, path: Path, keep: Collection[Path] = ()) -> None:
    """After wikimem removed the file `path`: the folders it leaves empty go too (a source's
    part pages' folder, a catalog's, facts/ without a timeline), up to `base` but never `base`
    nor a folder in `keep`, so that the tree is the one a compile from nothing makes."""
    folder = path.parent
    while folder != base and folder not in keep and base in folder.parents:
        try:
            os.rmdir(folder)  # only an empty folder, never through a link
        except OSError:
            return
        folder = folder.parent


def append_owned(base: Path, path: Path, data: bytes, *, header: bytes = b"") -> None:
    """Append `data` whole to a file wikimem owns (log.md), made with `header` when missing or
    empty: opened without following a link, refused unless a regular file, written until every
    byte is down (a short write is carried on, never left cut) and synced."""
    owned(base, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(f"{_shown(base, path)} is a symbolic link; nothing appended to it") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{_shown(base, path)} is not a regular file; nothing appended to it")
        os.set_blocking(fd, True)
        payload = (header if st.st_size == 0 else b"") + data
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, f"could not append to {_shown(base, path)}")
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True, base: Path | None = None) -> None:
    """Write via a temp file in the same folder and rename, so a crash leaves old or new, never half.

    `base` (wiki/, .wikimem/): the file is one wikimem owns there, checked by `owned` (no link on
    the way, no special file at the name); without it the folder and the name are checked alone.

    durable=False skips the per-file fsync: a batch writer (the compile) writes many
    pages and calls os.sync() once at the end. A killed process still leaves old or
    new (rename is atomic); only a power cut in between could lose the batch's pages,
    which the next compile rewrites since state.db is committed after the sync.
    """
    owned(base if base is not None else path.parent, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=".wikimem-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_changed(root: Path, files: Mapping[str, str], *, durable: bool = True) -> list[tuple[str, str]]:
    """Write each file (a path under root -> its text) whose bytes differ from what is there,
    in path order; returns (path, "created" | "updated") for each one written. Code-owned
    files (index.md and its catalogs, the fact timelines) are regenerated this way, so a
    compile that changes nothing in them writes nothing. durable=False: as atomic_write's, for
    a caller that syncs once after (the compile). Each is a file wikimem owns under root
    (`owned`): a link on the way raises UnsafePath before anything is read or written."""
    changes: list[tuple[str, str]] = []
    for rel, text in sorted(files.items()):
        target = root / rel
        data = text.encode("utf-8")
        owned(root, target)
        if target.exists():
            if read_owned(root, target) == data:
                continue
            changes.append((rel, "updated"))
        else:
            changes.append((rel, "created"))
        atomic_write(target, data, durable=durable, base=root)
    return changes


def create_new(folder: Path, names: Iterable[str], data: bytes) -> Path:
    """Write `data` under the first of `names` that does not exist in `folder`; never replaces.

    The file is written whole under a temp name and then hard-linked to its name: link(2)
    fails when the name exists, so two writers at the same moment never take the same name
    (a check then a replace lets both through) and no reader sees half a file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".wikimem-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        for name in names:
            target = folder / name
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue
            return target
        raise FileExistsError(f"every name offered is taken in {folder}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@dataclass(frozen=True)
class Window:
    """Some lines of a file, read without reading the rest of it."""

    data: bytes  # the lines, joined by b"\\n"; a line longer than the byte budget is cut
    start: int  # the number of the first line (from 1)
    count: int  # how many lines `data` holds
    more: bool  # lines follow the window
    clipped: bool  # a line was cut at the byte budget


def read_window(source: Path | BinaryIO, start: int, count: int, max_bytes: int) -> Window:
    """Lines start .. start+count-1 of a file, at most max_bytes of them, in constant memory.

    A reader of a 2 GB file (MCP read, the memory tool's view) holds the window, never the
    file: lines before it are skipped a megabyte at a time, one enormous line is cut. `source`:
    a path, or a file opened (checked) by the caller, read from where it stands.
    """
    chunk = 1 << 20
    start = max(1, start)
    with (open(source, "rb") if isinstance(source, Path) else contextlib.nullcontext(source)) as handle:
        number = 1
        while number < start:
            piece = handle.readline(chunk)
            if not piece:
                return Window(b"", start, 0, False, False)
            if piece.endswith(b"\n"):
                number += 1
        lines: list[bytes] = []
        size = 0
        clipped = False
        while len(lines) < max(1, count) and size < max_bytes:
            piece = handle.readline(max(1, max_bytes - size))
            if not piece:
                break
            if not piece.endswith(b"\n"):
                rest = handle.readline(chunk)
                clipped = clipped or bool(rest)
                while rest and not rest.endswith(b"\n"):
                    rest = handle.readline(chunk)
            line = piece.rstrip(b"\n").rstrip(b"\r")
            lines.append(line)
            size += len(line) + 1
        more = bool(handle.read(1))
    return Window(b"\n".join(lines), start, len(lines), more, clipped)


def remove_stale_temp_files(folder: Path) -> int:
    """Delete temp files a killed writer left behind; returns how many."""
    count = 0
    if not folder.is_dir():
        return 0
    for tmp in folder.rglob(".wikimem-*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            count += 1
    return count


# roots whose lock this thread holds with reentrant=True (the daemon, for its whole life)
_held = threading.local()


def ensure_state_dir(ws: Workspace) -> Path:
    """`.wikimem/`, made when missing (a fresh clone has none) with the `.gitignore` that
    `wikimem init` writes there: machine state never goes into a commit by `git add -A`."""
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    ignore = ws.state_dir / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):
            atomic_write(ignore, "*\n")
    return ws.state_dir


# --- locks -----------------------------------------------------------------------------------
#
# One helper holds every lock wikimem takes (the writer's `.wikimem/lock`, the search index's
# `search.lock`): an OS lock (flock) the kernel drops when its holder dies. A flock belongs to
# the open file, which a forked process shares: a pool worker or a helper forked while the lock
# is held would hold it too, and a worker left behind by a killed compile would lock the
# workspace for good. So a forked child lets go of every lock its parent holds (at fork, below),
# and a lock whose named holder is dead is taken over: its file is moved aside (whatever still
# holds the old file keeps a lock on nothing anyone asks for) and a new one is taken.

_locks_held: dict[int, str] = {}  # fd -> lock file, in this process
_locks_mutex = threading.Lock()
_forked_by = [0]  # the pid of the process that forked last (the parent, in the child)
_tied = [False]  # this process was forked by a lock holder (or by one forked so): its children are tied too


def _before_fork() -> None:
    _forked_by[0] = os.getpid()
    if _locks_held or _tied[0]:
        # lifetime loads only in a process that forks holding a lock (the MCP server never does)
        from .lifetime import prepare

        prepare()


def _let_go_in_child() -> None:
    """In a child forked while its parent holds a lock (a compile's workers, the daemon's batch,
    the search index's writers): every lock file the parent holds is replaced by /dev/null under
    the same descriptor (closing it would let a later open reuse the number under the parent's
    file objects), so the child holds none of the parent's locks; and the child dies with its
    parent (lifetime.die_with), so none is left writing after a kill -9. So do the children it
    forks in turn (a daemon's batch forks its workers), each with its own parent."""
    if not (_locks_held or _tied[0]):
        return
    # (see _before_fork)
    from .lifetime import die_with

    die_with(_forked_by[0])
    _tied[0] = True
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        for fd in list(_locks_held):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    finally:
        os.close(null)
    _locks_held.clear()


os.register_at_fork(before=_before_fork, after_in_child=_let_go_in_child)


def _identity() -> str:
    """This machine and process namespace, written beside a holder's pid: a pid is only known
    to be dead where it was alive (a workspace on a shared disk, a container)."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = "-"
    return f"{os.uname().nodename} {namespace}"


def lock_holder(path: Path) -> str:
    """Who holds (or last held) the lock file: its first line ("wikimem compile (pid 12)"), or ""."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline(4096).strip()
    except OSError:
        return ""


def _dead_holder(path: Path) -> int | None:
    """The pid the lock file names when that process is dead here (and so cannot hold the lock
    itself: what holds it is something it left behind), else None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first, where = handle.readline(4096), handle.readline(4096).strip()
    except OSError:
        return None
    marker = first.rfind("(pid ")
    if marker < 0 or where != _identity():
        return None
    try:
        pid = int(first[marker + 5:].split(")", 1)[0])
    except ValueError:
        return None
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return pid
    except OSError:
        return None  # alive, someone else's
    return None


def _take_over(path: Path, handle: BinaryIO, pid: int) -> None:
    """Move aside the lock file `handle` has open, if it is still the one at `path` (another
    waiter may have taken it over first), so that the next open makes a new one."""
    guard_path = path.with_name(path.name + ".takeover")
    with open(guard_path, "ab") as guard:
        fcntl.flock(guard.fileno(), fcntl.LOCK_EX)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            return
        if current.st_ino != os.fstat(handle.fileno()).st_ino or _dead_holder(path) != pid:
            return
        os.replace(path, path.with_name(f"{path.name}.stale-{pid}"))


def _clear_stale(path: Path) -> None:
    """Remove the files of locks taken over once nothing holds them any more."""
    for stale in path.parent.glob(path.name + ".stale-*"):
        try:
            with open(stale, "ab") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                stale.unlink()
        except OSError:
            continue


@contextlib.contextmanager
def file_lock(path: Path, *, wait: float, holder: str, poll: float = 0.1) -> Iterator[bool]:
    """Hold an exclusive OS lock on `path` (made when missing); yields True once held, False when
    `wait` seconds passed with another process holding it. The holder's name and pid are
    written in the file while it is held (for `lock_holder` and the messages of those who wait);
    a lock whose named holder is dead is taken over."""
    owned(path.parent, path)
    deadline = time.monotonic() + wait
    while True:
        handle = open(path, "a+b")  # noqa: SIM115 - held for the life of the context
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                handle.close()
                raise
            dead = _dead_holder(path)
            if dead is not None:
                _take_over(path, handle, dead)
                handle.close()
                continue
            handle.close()
            if time.monotonic() >= deadline:
                yield False
                return
            time.sleep(poll)
            continue
        try:
            same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # taken over meanwhile: this file is not the lock any more
            handle.close()
            continue
        break
    fd = handle.fileno()
    with _locks_mutex:
        _locks_held[fd] = str(path)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{holder} (pid {os.getpid()})\n{_identity()}\n".encode())
        handle.flush()
        _clear_stale(path)
        yield True
    finally:
        with _locks_mutex:
            _locks_held.pop(fd, None)
        with contextlib.suppress(OSError):  # only the holder clears its name
            handle.seek(0)
            handle.truncate()
        handle.close()


@contextlib.contextmanager
def writer_lock(
    ws: Workspace, *, wait: float = 0.0, holder: str = "compile", reentrant: bool = False
) -> Iterator[None]:
    """Hold `.wikimem/lock` (file_lock: released by the kernel if the process dies, let go of
    in forked children, taken over from a dead holder).

    With wait=0 a busy workspace raises WorkspaceBusy at once, naming the holder.
    reentrant=True (the daemon): nested writer_lock calls from the same thread, such as
    compile_workspace and lint run by the daemon's worker, pass through instead of
    colliding with the lock their own process holds. Plain callers keep the strict lock.
    """
    held: set[Path] = _held.__dict__.setdefault("roots", set())
    if ws.root in held:
        yield
        return
    ensure_state_dir(ws)
    lock_path = ws.state_dir / "lock"
    with file_lock(lock_path, wait=wait, holder=holder) as acquired:
        if not acquired:
            who = lock_holder(lock_path) or "another wikimem process"
            raise WorkspaceBusy(
                f"{who} is writing this workspace; wait for it, use --wait SECONDS, "
                "or let the daemon compile (it picks up raw/ changes itself)"
            )
        if reentrant:
            held.add(ws.root)
        try:
            yield
        finally:
            held.discard(ws.root)

"""The workspace on disk: its layout, safe paths inside it, atomic writes and the writer lock."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import PathEscape, WorkspaceBusy

STATE_DIR = ".wikimem"


@dataclass(frozen=True)
class Workspace:
    """A folder holding raw/, wiki/ and .wikimem/."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Workspace:
        return cls(Path(root).expanduser().resolve())

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def wiki(self) -> Path:
        return self.root / "wiki"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
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
    if not relative or "\x00" in relative:
        raise PathEscape(f"invalid path {relative!r}")
    candidate = Path(relative)
    if candidate.is_absolute() or relative.startswith(("/", "\\")):
        raise PathEscape(f"{relative!r} is absolute; give a path relative to {base.name}/")
    # os.path.realpath on strings: the same answer as Path.resolve, at a fraction of the cost
    base_resolved = os.path.realpath(base)
    resolved = os.path.realpath(os.path.join(base_resolved, relative))
    if resolved != base_resolved and not resolved.startswith(base_resolved + os.sep):
        raise PathEscape(f"{relative!r} points outside {base.name}/")
    return Path(resolved)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks (sources can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder and rename, so a crash leaves old or new, never half.

    durable=False skips the per-file fsync: a batch writer (the compile) writes many
    pages and calls os.sync() once at the end. A killed process still leaves old or
    new (rename is atomic); only a power cut in between could lose the batch's pages,
    which the next compile rewrites since state.db is committed after the sync.
    """
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
    a caller that syncs once after (the compile)."""
    changes: list[tuple[str, str]] = []
    for rel, text in sorted(files.items()):
        target = root / rel
        data = text.encode("utf-8")
        if target.exists():
            if target.read_bytes() == data:
                continue
            changes.append((rel, "updated"))
        else:
            changes.append((rel, "created"))
        atomic_write(target, data, durable=durable)
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


def read_window(path: Path, start: int, count: int, max_bytes: int) -> Window:
    """Lines start .. start+count-1 of a file, at most max_bytes of them, in constant memory.

    A reader of a 2 GB file (MCP read, the memory tool's view) holds the window, never the
    file: lines before it are skipped a megabyte at a time, one enormous line is cut.
    """
    chunk = 1 << 20
    start = max(1, start)
    with open(path, "rb") as handle:
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


@contextlib.contextmanager
def writer_lock(
    ws: Workspace, *, wait: float = 0.0, holder: str = "compile", reentrant: bool = False
) -> Iterator[None]:
    """Hold `.wikimem/lock` (an OS lock, released by the kernel if the process dies).

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
    handle = open(lock_path, "a+")  # noqa: SIM115 - held for the life of the context
    deadline = time.monotonic() + wait
    acquired = False
    try:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                acquired = True
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    who = handle.read().strip() or "another wikimem process"
                    raise WorkspaceBusy(
                        f"{who} is writing this workspace; wait for it, use --wait SECONDS, "
                        "or let the daemon compile (it picks up raw/ changes itself)"
                    ) from None
                time.sleep(0.1)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{holder} (pid {os.getpid()})")
        handle.flush()
        if reentrant:
            held.add(ws.root)
        try:
            yield
        finally:
            held.discard(ws.root)
    finally:
        if acquired:  # only the holder clears its name; a refused waiter leaves it for others
            with contextlib.suppress(OSError):
                handle.seek(0)
                handle.truncate()
        handle.close()

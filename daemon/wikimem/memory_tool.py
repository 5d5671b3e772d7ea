"""The wiki as Claude's memory tool, for Claude API users (`anthropic` SDK's BetaAbstractMemoryTool).

`MemoryTool` is what both of wikimem's memory tools share: `/memories` paths, the numbered
view the model reads, and one call that answers bad input as a tool error instead of raising.
`WikiMemoryTool` (below) serves agents; `backends.memory.StagedMemoryTool` is the one the
anthropic backend compiles with (wiki pages editable behind guards, every write staged).

For agents, `/memories` is the wiki (read-only), `/memories/raw/` the raw sources the pages cite
(read-only), and `/memories/inbox/` is `raw/inbox/`: the one place the model may
create, edit, rename or delete files. What lands there is a source like any other,
which wikimem compiles into pages; the model never edits the wiki itself.

    from anthropic import Anthropic
    from wikimem.memory_tool import WikiMemoryTool

    tool = WikiMemoryTool("~/notes")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-5-5", max_tokens=2048, tools=[tool],
        messages=[{"role": "user", "content": "What does the wiki say about the minimum macOS version?"}],
    )
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, BinaryIO

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from .errors import PathEscape, UnsafePath
from .naming import undecodable
from .pages import one_line
from .raw_tree import scan
from .workspace import Workspace, atomic_write, confine, open_checked, open_owned, read_window

ROOT = "/memories"
INBOX = "inbox"
RAW = "raw"
MAX_FILE_BYTES = 1_000_000
VIEW_MAX_LINES = 2_000  # a view shows at most this many lines ...
VIEW_MAX_BYTES = 200_000  # ... and this many bytes, numbers included; it says how to go on
LINE_WIDTH = 6

log = logging.getLogger("wikimem.memory")


def numbered_line(number: int, line: str) -> str:
    """One line of a view as the memory tool shows it: its number, right-aligned, a tab, the line."""
    return f"{str(number).rjust(LINE_WIDTH)}\t{line}"


def numbered(lines: list[str], start: int) -> str:
    return "\n".join(numbered_line(i + start, line) for i, line in enumerate(lines))


def content_header(shown: str) -> str:
    return f"Here's the content of {shown} with line numbers:\n"


class MemoryTool(BetaAbstractMemoryTool):
    """The memory tool (`memory_20250818`) over a wikimem workspace. Command parsing and
    dispatch come from the SDK's BetaAbstractMemoryTool; subclasses supply the storage and the
    guards. `notes` are said to the model after the result of the command that caused them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.notes: list[str] = []

    def show(self, rel: str) -> str:
        """A wiki-relative path as the model names it."""
        return f"{ROOT}/{rel}" if rel else ROOT

    def run(self, tool_input: object) -> tuple[str, bool]:
        """Run one tool call; returns (text for the model, is_error). Never raises for bad input
        (a subclass may raise its own signals, such as backends.memory.Contended)."""
        self.notes = []
        try:
            result = self.call(tool_input)
        except ToolError as exc:
            text = str(exc.content) if isinstance(exc.content, str) else str(exc)
            return self._noted(text), True
        except (NotImplementedError, AttributeError, TypeError, ValueError, KeyError) as exc:
            # malformed input (no `command`, a missing field): the SDK's dispatch raises these
            log.debug("bad memory command %r", tool_input, exc_info=True)
            return f"Error: invalid memory command ({type(exc).__name__}: {exc})", True
        return self._noted(result if isinstance(result, str) else str(result)), False

    def _noted(self, text: str) -> str:
        return "\n\n".join([text, *self.notes]) if self.notes else text


class WikiMemoryTool(MemoryTool):
    """Serve a wikimem workspace as the memory tool's /memories directory, to agents: the wiki
    and raw/ read-only, raw/inbox/ writable."""

    def __init__(self, root: str | os.PathLike[str] | Workspace, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ws = root if isinstance(root, Workspace) else Workspace.at(root)
        if not self.ws.wiki.is_dir():
            raise ValueError(f"{self.ws.root} is not a wikimem workspace (no wiki/); run: wikimem init {self.ws.root}")

    # --- paths ---------------------------------------------------------------------------

    def _resolve(self, path: str, *, write: bool = False) -> tuple[Path, str]:
        """A /memories path -> (file on disk, area); refuses escapes and writes outside the inbox."""
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"Path must start with {ROOT}, got: {path}")
        rel = path[len(ROOT):].strip("/")
        head, _, rest = rel.partition("/")
        if head == INBOX:
            base, area = self.ws.raw / INBOX, INBOX
        elif head == RAW:
            base, area = self.ws.raw, RAW
        else:
            base, area, rest = self.ws.wiki, "wiki", rel
        if write and area != INBOX:
            raise ToolError(
                f"{path} is read-only: the wiki is compiled by wikimem. Write new notes under {ROOT}/{INBOX}/ "
                "and they become sources for the wiki."
            )
        if write and any(part.startswith(".") for part in rest.split("/") if part):
            # a dotfile is never a note, and some configure wikimem (.wikimemignore decides
            # which files are sources): an agent told so by a document must not write one
            raise ToolError(f"{path}: names starting with '.' are not notes (dotfiles such as .wikimemignore "
                            f"configure wikimem); name the note without the dot")
        if area == INBOX:
            if write:
                base.mkdir(parents=True, exist_ok=True)
            confine(self.ws.raw, INBOX)  # raw/inbox itself must not lead out of the workspace
        try:
            target = confine(base, rest) if rest else base.resolve()
        except PathEscape as exc:
            raise ToolError(f"Path {path} would escape {ROOT}: {exc}") from None
        return target, area

    # --- commands ------------------------------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        target, area = self._resolve(command.path)
        if target.is_dir() or (area == INBOX and not target.exists() and command.path.rstrip("/").endswith(INBOX)):
            return self._listing(command.path.rstrip("/") or ROOT, target)
        if not os.path.lexists(target):
            raise ToolError(f"The path {command.path} does not exist. Please provide a valid path.")
        start, last = 1, -1
        if command.view_range and len(command.view_range) == 2:
            start, last = max(1, command.view_range[0]), command.view_range[1]
        count = VIEW_MAX_LINES if last == -1 else min(VIEW_MAX_LINES, max(1, last - start + 1))
        try:
            with self._open(command.path, target, area) as handle:
                # every view is a window of at most VIEW_MAX_LINES lines and VIEW_MAX_BYTES bytes
                # (a file of blank lines once came back ten times its size, numbered)
                window = read_window(handle, start, count, VIEW_MAX_BYTES)
        except OSError as exc:
            raise ToolError(f"Cannot read {command.path}: {exc.strerror}") from None
        lines = window.data.decode("utf-8", "replace").split("\n") if window.count else []
        shown: list[str] = []
        size = 0
        for i, line in enumerate(lines, start):
            row = numbered_line(i, line)
            size += len(row.encode("utf-8")) + 1
            if shown and size > VIEW_MAX_BYTES:
                break
            shown.append(row)
        more = (len(shown) < len(lines) or window.more or window.clipped) and (last == -1 or start + len(shown) <= last)
        note = ""
        if more:
            after = start + len(shown)
            note = f"\n[the file goes on; view it with view_range [{after}, {after + VIEW_MAX_LINES - 1}]]"
        return content_header(command.path) + "\n".join(shown) + note

    def _open(self, path: str, target: Path, area: str) -> BinaryIO:
        """The file opened for viewing: in the wiki by its own name only (no link on the way),
        anywhere a regular file with one link (one with others may be a name of a file outside
        the workspace), never a FIFO or a device."""
        try:
            if area == "wiki":
                rel = path[len(ROOT):].strip("/")
                return open_owned(self.ws.wiki, self.ws.wiki / rel, single_link=True)
            return open_checked(target, path, single_link=True)
        except UnsafePath as exc:
            raise ToolError(str(exc)) from None

    def _listing(self, shown: str, folder: Path) -> str:
        rows: list[str] = [shown + "/"]
        raw = self.ws.raw.resolve()
        if folder.resolve() == raw or raw in folder.resolve().parents:
            # raw/ as compile sees it: raw_tree's one walk (ignore rules, links inside raw/ only)

            base = folder.resolve().relative_to(raw).as_posix()
            prefix = "" if base == "." else base + "/"
            entries: set[str] = set()
            for found in scan(self.ws).files:
                inner = found.path.removeprefix("raw/")
                if not inner.startswith(prefix):
                    continue
                parts = inner[len(prefix):].split("/")
                for depth in range(min(len(parts), 2)):
                    entries.add("/".join(parts[: depth + 1]) + ("/" if depth + 1 < len(parts) else ""))
            rows += [f"{shown}/{one_line(e)}" for e in sorted(entries)]
        else:
            def walk(path: Path, prefix: str, depth: int) -> None:
                if depth > 2:
                    return
                try:
                    items = sorted(path.iterdir(), key=lambda p: p.name)
                except OSError:
                    return
                for item in items:
                    if item.name.startswith(".") or undecodable(item.name) or item.is_symlink():
                        continue  # links are never followed here (a loop would never end)
                    is_dir = item.is_dir()
                    # one entry per line, whatever the name holds (a line break would forge entries)
                    rows.append(f"{prefix}{one_line(item.name)}{'/' if is_dir else ''}")
                    if is_dir:
                        walk(item, f"{prefix}{item.name}/", depth + 1)

            walk(folder, shown + "/", 1)
        if shown == ROOT:
            rows += [f"{ROOT}/{RAW}/  (the raw sources pages cite; read-only)",
                     f"{ROOT}/{INBOX}/  (write new notes here; they become sources)"]
        note = "" if shown.startswith(f"{ROOT}/{INBOX}") else " (read-only)"
        return f"Files and directories up to 2 levels deep in {shown}{note}:\n" + "\n".join(rows)

    def _check_size(self, text: str) -> None:
        if len(text.encode("utf-8")) > MAX_FILE_BYTES:
            raise ToolError(f"Too large: notes are limited to {MAX_FILE_BYTES} bytes")

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        target, _ = self._resolve(command.path, write=True)
        if target.is_dir():
            raise ToolError(f"{command.path} is a directory")
        self._check_size(command.file_text)
        existed = target.exists()
        atomic_write(target, command.file_text)
        return f"File {'overwritten' if existed else 'created'} successfully at: {command.path}"

    def _read_inbox(self, path: str) -> tuple[Path, str]:
        target, _ = self._resolve(path, write=True)
        if not target.is_file():
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return target, target.read_text(encoding="utf-8", errors="replace")

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        target, text = self._read_inbox(command.path)
        count = text.count(command.old_str)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str did not appear verbatim in {command.path}.")
        if count > 1:
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str in {command.path}.")
        new = text.replace(command.old_str, command.new_str, 1)
        self._check_size(new)
        atomic_write(target, new)
        return "The memory file has been edited."

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        target, text = self._read_inbox(command.path)
        lines = text.split("\n")
        if command.insert_line < 0 or command.insert_line > len(lines):
            raise ToolError(f"Invalid insert_line {command.insert_line}: the file has {len(lines)} lines")
        lines[command.insert_line:command.insert_line] = command.insert_text.rstrip("\n").split("\n")
        new = "\n".join(lines)
        self._check_size(new)
        atomic_write(target, new)
        return f"Text inserted at line {command.insert_line} in {command.path}."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        target, _ = self._resolve(command.path, write=True)
        if target == (self.ws.raw / INBOX).resolve():
            raise ToolError(f"{ROOT}/{INBOX} itself cannot be deleted")
        if target.is_dir():
            if any(target.iterdir()):
                raise ToolError(f"{command.path} is not empty; delete its files first")
            target.rmdir()
        elif target.exists():
            target.unlink()
        else:
            raise ToolError(f"The path {command.path} does not exist.")
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old, _ = self._resolve(command.old_path, write=True)
        new, _ = self._resolve(command.new_path, write=True)
        if not old.exists():
            raise ToolError(f"The path {command.old_path} does not exist.")
        if new.exists():
            raise ToolError(f"The destination {command.new_path} already exists")
        new.parent.mkdir(parents=True, exist_ok=True)
        os.replace(old, new)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def clear_all_memory(self) -> str:
        raise ToolError("The wiki cannot be cleared through the memory tool; it is compiled from raw/")

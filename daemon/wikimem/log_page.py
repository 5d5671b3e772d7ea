"""log.md: append-only, one entry per operation, written by code only.

Entries are appended with O_APPEND and fsync, each append written whole (a short write is
carried on, never left cut); the file is never rewritten, so an agent or a person can trust
that an earlier entry is as it was written. log.md as a symbolic link or a special file is
never appended to (workspace.append_owned).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UnsafePath
from .pages import inert, one_line
from .workspace import append_owned, atomic_write, open_owned

HEADER = "# Log\n\nAppend-only record of every operation wikimem ran on this wiki, oldest first.\n`grep '^## \\[' log.md | tail -5` shows the last five.\n"
ENTRY_RE = re.compile(r"^## \[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ)\] (\w[\w-]*) \| (.*)$")


@dataclass(frozen=True)
class LogEntry:
    operation: str  # ingest | remove | rename | skip | fail | compile | lint | query | undo ...
    subject: str
    lines: Sequence[str] = field(default_factory=tuple)  # "- key: value" lines below the heading


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def format_entry(entry: LogEntry, when: dt.datetime) -> str:
    stamp = when.strftime("%Y-%m-%d %H:%M:%SZ")
    # subjects and lines carry file names, titles and error messages from sources: each stays
    # one line (a line break would forge an entry) and inert (log.md is Markdown too)
    subject = inert(one_line(entry.subject))
    body = "".join(f"{inert(one_line(line))}\n" for line in entry.lines)
    return f"\n## [{stamp}] {entry.operation} | {subject}\n{body}"


def append(log_path: Path, entries: Iterable[LogEntry], when: dt.datetime | None = None) -> int:
    """Append entries; creates log.md with its header if missing. Returns entries written.

    The entries written are added to lint's record of the log (`.wikimem/log-chain.json`, when
    a lint made one): an entry edited before the next lint is then found changed, as an older
    one is (lint/logcheck.py)."""
    when = when or now_utc()
    text = "".join(format_entry(e, when) for e in entries)
    if not text:
        return 0

    append_owned(log_path.parent, log_path, text.encode("utf-8"), header=HEADER.encode("utf-8"))
    _extend_chain(log_path.parent.parent / ".wikimem" / CHAIN_FILE, text)
    return text.count("\n## [")


# --- the record of the entries, for lint's log integrity check -------------------------------

CHAIN_FILE = "log-chain.json"
_HEADING = re.compile(r"^## \[", re.MULTILINE)


def chunks(text: str) -> list[tuple[str, str]]:
    """(heading line, entry text) for each entry; the header before the first entry is not one."""
    starts = [m.start() for m in _HEADING.finditer(text)]
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        chunk = text[start:end].rstrip("\n") + "\n"
        out.append((chunk.split("\n", 1)[0], chunk))
    return out


def chain(items: list[tuple[str, str]], running: str = "") -> list[dict[str, str]]:
    """Each entry's digest and the digest of all up to it (starting after `running`)."""

    out = []
    for heading, chunk in items:
        digest = hashlib.sha256(chunk.encode("utf-8")).hexdigest()
        running = hashlib.sha256((running + digest).encode("ascii")).hexdigest()
        out.append({"heading": heading, "sha256": digest, "chain": running})
    return out


def _extend_chain(path: Path, appended: str) -> None:
    """Add the entries just appended to the record lint keeps of log.md, if it keeps one. The
    record's stat of log.md is dropped: the next lint reads log.md and checks every entry, so an
    edit made before this append is not taken for part of it."""

    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        recorded = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(recorded, list):
            return
        last = str(recorded[-1].get("chain", "")) if recorded and isinstance(recorded[-1], dict) else ""
        data["entries"] = recorded + chain(chunks(appended), last)
        data["log"] = None
        atomic_write(path, json.dumps(data, indent=1) + "\n", base=path.parent)


def list_lines(label: str, items: Iterable[str], limit: int = 50) -> list[str]:
    """`- label: a, b, c` (or nothing for an empty list); long lists say how many were left out."""
    values = list(items)
    if not values:
        return []
    shown = ", ".join(values[:limit])
    extra = f" (+{len(values) - limit} more)" if len(values) > limit else ""
    return [f"- {label}: {shown}{extra}"]


def last_backend(log_path: Path) -> str | None:
    """The backend (and version, `offline:18.15`) of the last compile log.md records."""

    try:
        entries = read_entries(log_path)
    except (OSError, UnsafePath):
        return None
    for _stamp, operation, _subject, lines in reversed(entries):
        if operation == "compile":
            for line in lines:
                if line.startswith("- backend: "):
                    return line.removeprefix("- backend: ").rsplit(",", 1)[0].strip() or None
    return None


def read_entries(log_path: Path, *, tail_bytes: int | None = None) -> list[tuple[str, str, str, list[str]]]:
    """(timestamp, operation, subject, body lines) for each entry, oldest first; with
    `tail_bytes`, those in the last so many bytes of the file (the first, perhaps cut, left out).
    log.md is read by its own name only (workspace.open_owned: never through a link)."""

    if not log_path.exists():
        return []
    with open_owned(log_path.parent, log_path) as handle:
        size = os.fstat(handle.fileno()).st_size
        cut = tail_bytes is not None and size > tail_bytes
        if cut and tail_bytes is not None:
            handle.seek(size - tail_bytes)
        data = handle.read()
    text = data.decode("utf-8", errors="replace")
    if cut:
        text = text[text.find("\n## [") + 1:] if "\n## [" in text else ""
    entries: list[tuple[str, str, str, list[str]]] = []
    for line in text.splitlines():
        m = ENTRY_RE.match(line)
        if m:
            entries.append((m.group(1), m.group(2), m.group(3), []))
        elif entries and line.startswith("- "):
            entries[-1][3].append(line)
    return entries

"""Log integrity: log.md is append-only, so an earlier entry that changed or vanished is a finding.

Each run records a digest chain of the entries in `.wikimem/log-chain.json`:
for every entry its heading, its own SHA-256 and a chained hash over all
entries up to it; every append after (log_page.append) adds its entries to it.
The next run checks that every recorded entry is still in log.md, unchanged and
in order, the entries appended since the last run included; entries it has no
record of (a teammate's, merged by git) are simply added.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..log_page import CHAIN_FILE
from ..log_page import chain as log_chain
from ..log_page import chunks as log_chunks
from ..workspace import atomic_write
from .context import Context
from .model import Finding

_HEADING = re.compile(r"^## \[", re.MULTILINE)
# the record is kept by the writer too (log_page.append adds what it appends): one format
entries, chain = log_chunks, log_chain


def chain_path(ctx: Context) -> Path:
    return ctx.ws.state_dir / CHAIN_FILE


def load_chain(path: Path) -> list[dict[str, str]] | None:
    data = _load(path)
    items = data.get("entries") if isinstance(data, dict) else None
    return items if isinstance(items, list) else None


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _stat(path: Path) -> list[int] | None:
    """What tells that log.md is as the chain recorded it: size, mtime, ctime (no one can set it back) and inode."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def save_chain(path: Path, log_text: str, stat: list[int] | None = None) -> None:
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": 1, "log": stat, "entries": chain(entries(log_text))}
        atomic_write(path, json.dumps(data, indent=1) + "\n")


def log_integrity(ctx: Context) -> Iterator[Finding]:
    log_page = ctx.pages.get("log.md")
    data = _load(chain_path(ctx))
    ctx.run.log_chain_checked = True
    if log_page is not None and isinstance(data, dict) and data.get("log") and data["log"] == _stat(ctx.ws.wiki / "log.md"):
        return  # not written since a run found every entry in place: nothing to read again
    recorded = load_chain(chain_path(ctx))
    if recorded is None:
        return  # first run (or .wikimem/ was deleted): nothing to compare with yet; this run records
    if log_page is None:
        if recorded:
            yield Finding.make(
                "log-integrity", "error", f"wiki/log.md was deleted ({len(recorded)} recorded entries are gone)",
                paths=["wiki/log.md"], evidence={"deleted": True, "entries": len(recorded)},
            )
        return
    current = chain(entries(log_page.text))
    position: dict[str, list[int]] = {}
    for i, item in enumerate(current):
        position.setdefault(item["sha256"], []).append(i)
    cursor = 0
    lines = [m.start() for m in _HEADING.finditer(log_page.text)]
    for item in recorded:
        digest = str(item.get("sha256", ""))
        found = next((i for i in position.get(digest, []) if i >= cursor), None)
        if found is not None:
            cursor = found + 1
            continue
        heading = str(item.get("heading", "?"))
        same_heading = next((i for i, c in enumerate(current) if c["heading"] == heading), None)
        how = "changed" if same_heading is not None else "removed"
        line = log_page.line_of(lines[same_heading]) if same_heading is not None else 0
        yield Finding.make(
            "log-integrity", "error",
            f"wiki/log.md: the earlier entry {heading!r} was {how} (log.md is append-only)",
            paths=["wiki/log.md"], lines=[line],
            evidence={"entry": heading, "sha256": digest, "how": how},
        )


def record(ctx: Context, findings: list[Any]) -> None:
    """Remember the log as it is now, unless an open finding still needs the old record."""
    if any(f.rule == "log-integrity" for f in findings):
        return
    log_file = ctx.ws.wiki / "log.md"
    stat = _stat(log_file)
    data = _load(chain_path(ctx))
    if stat is not None and isinstance(data, dict) and data.get("log") == stat:
        return  # recorded as it is
    try:
        text = log_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    save_chain(chain_path(ctx), text, stat)

"""`wikimem init`: lay out a workspace. Idempotent; never overwrites a file that exists."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import index_page, log_page
from .templating import render
from .workspace import Workspace, atomic_write

DEFAULT_TOML = """# wikimem settings: every key is optional. Precedence: flag > environment > this file > default.
# backend = "offline"        # offline | anthropic | auto
# model = "claude-sonnet-5-5"
# max_source_mb = 10
# debounce_seconds = 0.75
# rescan_minutes = 10
# lint_schedule = "every 6h"  # or a cron expression: "0 */6 * * *"
"""

GITIGNORE = ".wikimem/\n"


@dataclass(frozen=True)
class InitResult:
    root: str
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)


def init_workspace(ws: Workspace) -> InitResult:
    created: list[str] = []
    existing: list[str] = []
    for folder in (ws.raw, ws.wiki, *ws.layout, ws.state_dir):
        (existing if folder.is_dir() else created).append(ws.rel(folder) + "/")
        folder.mkdir(parents=True, exist_ok=True)
    files = {
        ws.root / "wikimem.toml": lambda: DEFAULT_TOML,
        ws.wiki / "AGENTS.md": lambda: render("AGENTS.md.j2", ws.root, root_hint=".."),
        ws.wiki / "index.md": lambda: index_page.build({}, extra_links=[], root=ws.root)["index.md"],
        ws.state_dir / ".gitignore": lambda: "*\n",
    }
    for path, make in files.items():
        if path.exists():
            existing.append(ws.rel(path))
            continue
        atomic_write(path, make())
        created.append(ws.rel(path))
    log = ws.wiki / "log.md"
    if log.exists():
        existing.append(ws.rel(log))
    else:
        log_page.append(log, [log_page.LogEntry("init", str(ws.root.name), ("- created: " + ", ".join(created),))])
        created.append(ws.rel(log))
    return InitResult(str(ws.root), created, existing)

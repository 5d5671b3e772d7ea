"""`wikimem agents install DIR`: point a coding project's agents at the wiki.

Adds a short section, between markers, to the project's AGENTS.md (read by Codex,
Cursor and most agents) saying where the wiki is, to read index.md first and how to
search it; and where the project has a CLAUDE.md, an `@AGENTS.md` import line so
Claude Code reads the same section. Running it again updates the section in place;
`--remove` takes out exactly what it added. Everything outside the markers is the
project's own and is never touched.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .workspace import Workspace, atomic_write

START = "<!-- wikimem:start (managed by `wikimem agents install`; edits inside are replaced) -->"
END = "<!-- wikimem:end -->"
_BLOCK = re.compile(r"(?<!\n)\n*<!-- wikimem:start[^\n]*-->\n.*?<!-- wikimem:end -->\n?", re.DOTALL)
IMPORT_LINE = "@AGENTS.md"


@dataclass(frozen=True)
class AgentsResult:
    project: str
    wiki: str
    changed: list[str] = field(default_factory=list)  # files written
    unchanged: list[str] = field(default_factory=list)
    removed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "wiki": self.wiki, "changed": self.changed,
                "unchanged": self.unchanged, "removed": self.removed}


def _wiki_ref(project: Path, ws: Workspace) -> tuple[str, str]:
    """How the project should name the wiki and the workspace: relative when the workspace
    is inside the project (so the section works from any clone), absolute otherwise."""
    try:
        rel_root = ws.root.relative_to(project).as_posix() or "."
        wiki = (Path(rel_root) / "wiki").as_posix()
        return wiki, rel_root
    except ValueError:
        return str(ws.wiki), str(ws.root)


def section(project: Path, ws: Workspace) -> str:
    wiki, root = _wiki_ref(project, ws)
    q = shlex.quote(root)
    return f"""{START}
## Project wiki (wikimem)

Knowledge about this project lives in a wiki compiled by wikimem from source documents:
`{wiki}/`. Consult it before answering questions about the project's background, decisions,
versions and requirements.

- Read `{wiki}/index.md` first: the catalog of every page, one line each.
- Search pages and the raw sources: `wikimem search "your question" --root {q}`
  (add `--json` for machine-readable results; paths are relative to `{root}`).
- Pages cite raw sources by line (`raw/...#L12`); open the source when an exact figure matters.
- Layout, page kinds and citation rules: `{wiki}/AGENTS.md`.
- Do not edit files in `{wiki}/` by hand; add new material as a file in `{root}/raw/` (or, over
  MCP started with `--allow-write`, with the add_note tool) and let wikimem compile it.
- MCP clients: `wikimem mcp --root {q}` serves search, read, log and lint tools over stdio.
{END}
"""


def _replace_block(text: str, block: str | None) -> str:
    """Put `block` where the old one was (or at the end); None removes it."""
    if _BLOCK.search(text):
        new = _BLOCK.sub(lambda _m: ("\n\n" + block) if block else "\n", text, count=1)
        if block is None:
            new = new.rstrip("\n") + "\n" if new.strip() else ""
        elif text.lstrip().startswith("<!-- wikimem:start"):
            new = new.lstrip("\n")
        return new
    if block is None:
        return text
    if not text.strip():
        return block
    return text.rstrip("\n") + "\n\n" + block


def _write_if_changed(path: Path, text: str, result: AgentsResult, rel: str, *, delete_empty: bool = False) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text:
        result.unchanged.append(rel)
        return
    if delete_empty and not text and old is not None:
        path.unlink()
    else:
        atomic_write(path, text)
    result.changed.append(rel)


def install(project: Path, ws: Workspace, *, remove: bool = False) -> AgentsResult:
    project = project.expanduser().resolve()
    if not project.is_dir():
        raise UsageError(f"{project} is not a folder; give the coding project's folder")
    if not ws.wiki.is_dir():
        raise UsageError(f"{ws.root} is not a wikimem workspace (no wiki/); run: wikimem init {ws.root}")
    wiki, _ = _wiki_ref(project, ws)
    result = AgentsResult(str(project), wiki, removed=remove)
    agents_md = project / "AGENTS.md"
    if agents_md.resolve() == (ws.wiki / "AGENTS.md").resolve():
        raise UsageError("that is the wiki's own folder; give the coding project's folder")
    old = agents_md.read_text(encoding="utf-8") if agents_md.exists() else ""
    new = _replace_block(old, None if remove else section(project, ws))
    if remove and not agents_md.exists():
        result.unchanged.append("AGENTS.md")
    else:
        # a file that held only our section goes away with it
        _write_if_changed(agents_md, new if new.strip() else "", result, "AGENTS.md", delete_empty=True)
    claude_md = project / "CLAUDE.md"
    if claude_md.exists():
        text = claude_md.read_text(encoding="utf-8")
        has_import = any(line.strip() == IMPORT_LINE for line in text.splitlines())
        ours = _BLOCK.search(text) is not None
        if remove:
            new_claude = _replace_block(text, None) if ours else text
        elif has_import and not ours:
            new_claude = text  # the project imports AGENTS.md already
        else:
            new_claude = _replace_block(text, f"{START}\n{IMPORT_LINE}\n{END}\n")
        _write_if_changed(claude_md, new_claude, result, "CLAUDE.md")
    return result

"""The peers bench/run.py measures beside wikimem where they are installed: qmd (npm
`@tobilu/qmd`), a BM25 index of Markdown files in SQLite with a stdio MCP server.

run.py finds qmd with `--qmd CMD`, else $WIKIMEM_BENCH_QMD, else `qmd` on PATH (`--qmd none`:
no peer). qmd needs
Node.js 22 or later: one that does not answer `qmd status` is reported once, in a row of its
own, and its comparisons are left out. For example:

    npm install --prefix ~/peers @tobilu/qmd
    PATH=/path/to/node22/bin:$PATH python bench/run.py --qmd ~/peers/node_modules/.bin/qmd

Each qmd index lives in a home folder of its own under the bench's work folder (HOME and the
XDG folders point there), so a user's own qmd index is never read or written. qmd is asked
for BM25 alone: `qmd search`, and over MCP its `query` tool with one `lex` search and no
reranking. Its other modes run local language models, which it downloads first, and wikimem
runs none. qmd indexes the `*.md` files of a folder and nothing else, and it writes no wiki:
a row against it compares what a user waits for, not the same work.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

COLLECTION = "raw"


class Qmd:
    """One qmd command line, and the homes of the indexes it made in this run."""

    def __init__(self, cmd: list[str], version: str, work: Path):
        self.cmd = cmd
        self.version = version
        self.work = work
        self.homes: dict[Path, Path] = {}  # a raw/ folder -> the home of its index, made once
        self._made = 0

    @property
    def label(self) -> str:
        return f"qmd {self.version} (BM25, *.md only)"

    @classmethod
    def find(cls, given: str | None, work: Path) -> tuple[Qmd | None, str]:
        """The qmd to measure, or None and why not ("" when none is installed: nothing to say)."""
        spec = given or os.environ.get("WIKIMEM_BENCH_QMD") or shutil.which("qmd")
        if not spec or spec == "none":
            return None, ""
        cmd = shlex.split(spec)
        qmd = cls(cmd, "?", work)
        home = qmd.new_home("probe")
        try:
            status = subprocess.run([*cmd, "status"], env=qmd.env(home), capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"{spec}: {exc}"
        if status.returncode != 0:
            why = (status.stderr or status.stdout).decode("utf-8", "replace").strip().splitlines()
            return None, f"`{spec} status` exited {status.returncode}" + (f": {why[-1][:200]}" if why else
                                                                          " (qmd needs Node.js 22 or later)")
        qmd.version = _version(cmd, qmd.env(home))
        return qmd, ""

    def new_home(self, name: str) -> Path:
        """A home folder no qmd has used yet."""
        while True:
            self._made += 1
            home = self.work / "qmd" / f"{name}-{self._made}"
            if not home.exists():
                home.mkdir(parents=True)
                return home

    def env(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "QMD_"))}
        env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_DATA_HOME=str(home / ".local" / "share"), NO_COLOR="1")
        return env

    def index_cmd(self, raw: Path) -> list[str]:
        """Index a folder from nothing (in a new home)."""
        return [*self.cmd, "collection", "add", str(raw), "--name", COLLECTION]

    def update_cmd(self) -> list[str]:
        """Bring an index up to date with its folder (a changed or new file)."""
        return [*self.cmd, "update"]

    def search_cmd(self, question: str) -> list[str]:
        return [*self.cmd, "search", question, "--format", "json", "-n", "10"]

    def mcp_cmd(self) -> list[str]:
        return [*self.cmd, "mcp"]

    @staticmethod
    def mcp_search(i: int, question: str) -> dict[str, Any]:
        """A `tools/call` of qmd's query tool: BM25 alone (see the module's docstring)."""
        return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "query", "arguments": {
            "searches": [{"type": "lex", "query": question}], "limit": 10, "rerank": False}}}

    def indexed(self, raw: Path) -> Path:
        """The home of an index of `raw`, made now (untimed) if this run has none yet."""
        home = self.homes.get(raw)
        if home is None:
            home = self.new_home(raw.parent.name)
            got = subprocess.run(self.index_cmd(raw), env=self.env(home), capture_output=True, timeout=3600, check=False)
            if got.returncode != 0:
                raise OSError(f"qmd could not index {raw}: {got.stderr.decode('utf-8', 'replace').strip()[-200:]}")
            self.homes[raw] = home
        return home


def _version(cmd: list[str], env: dict[str, str]) -> str:
    try:
        got = subprocess.run([*cmd, "--version"], env=env, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    words = got.stdout.decode("utf-8", "replace").split()
    return next((w.lstrip("v") for w in words if w.lstrip("v")[:1].isdigit()), "?")  # "qmd 2.8.3 (facd35e)"


def found(stdout: str, path_tail: str) -> bool:
    """Whether `qmd search --format json` listed a file whose path ends with `path_tail`."""
    try:
        results = json.loads(stdout)
    except ValueError:
        return False
    return any(str(r.get("file", "")).endswith(path_tail) for r in results if isinstance(r, dict))

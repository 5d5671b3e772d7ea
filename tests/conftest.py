"""Shared fixtures: each test gets its own temporary workspace; none touches the repo's raw/ or wiki/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def _reproducible_dates(monkeypatch: pytest.MonkeyPatch) -> None:
    # pages stamp `updated:` with today's date; pin it so byte comparisons are stable
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1798675200")  # 2027-01-01
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "WIKIMEM_BACKEND", "WIKIMEM_ROOT"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.at(tmp_path / "ws")
    init_workspace(workspace)
    return workspace


@pytest.fixture
def settings(ws: Workspace):
    return load_settings(ws.root, environ={})


def write(ws: Workspace, rel: str, text: str | bytes) -> Path:
    path = ws.raw / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def corpus(name: str) -> Path:
    path = CORPUS / name / "raw"
    if not path.is_dir():
        pytest.skip(f"corpus {name!r} not found at {path} (../shared/corpus is absent)")
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


os.environ.setdefault("WIKIMEM_TESTING", "1")

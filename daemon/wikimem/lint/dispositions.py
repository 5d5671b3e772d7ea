"""Accepted findings, kept with the wiki in `wiki/.lint-accepted.json` (versioned with it).

A finding's id hashes its rule and evidence, so an accepted finding stays
accepted across runs and comes back by itself when what it is about changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..workspace import Workspace, atomic_write
from .model import Finding

FILE = ".lint-accepted.json"


@dataclass(frozen=True)
class Accepted:
    id: str
    rule: str
    why: str
    date: str
    message: str
    paths: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "rule": self.rule, "why": self.why, "date": self.date, "message": self.message, "paths": list(self.paths)}


def path(ws: Workspace) -> Path:
    return ws.wiki / FILE


def load(ws: Workspace) -> tuple[dict[str, Accepted], str | None]:
    """Accepted findings by id, and a problem reading the file (a finding elsewhere, never a crash)."""
    file = path(ws)
    if not file.exists():
        return {}, None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        items = data["accepted"] if isinstance(data, dict) else data
        out = {}
        for item in items:
            a = Accepted(str(item["id"]), str(item.get("rule", "")), str(item.get("why", "")), str(item.get("date", "")),
                         str(item.get("message", "")), tuple(item.get("paths", [])))
            out[a.id] = a
        return out, None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {}, f"wiki/{FILE} is unreadable ({type(exc).__name__}: {exc}); accepted findings are reported again until it is fixed"


def add(ws: Workspace, finding: Finding, why: str, date: str) -> Accepted:
    if not why.strip():
        raise UsageError("say why the finding is acceptable: --accept ID --why \"both are right: different platforms\"")
    current, problem = load(ws)
    if problem:
        raise UsageError(problem.replace("accepted findings are reported again until it is fixed", "fix or remove it first"))
    entry = Accepted(finding.id, finding.rule, " ".join(why.split()), date, finding.message, finding.paths)
    current[entry.id] = entry
    payload = {
        "about": "Findings of `wikimem lint` accepted by a person, with why. Ids hash the rule and evidence: "
        "when the evidence changes the finding is reported again.",
        "accepted": [a.to_json() for a in sorted(current.values(), key=lambda a: (a.rule, a.id))],
    }
    atomic_write(path(ws), json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return entry

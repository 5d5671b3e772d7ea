"""Findings and the report: plain frozen data, the contract between the rules and every adapter."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .. import index_page

SEVERITIES = ("error", "warning", "info")


def finding_id(rule: str, evidence: dict[str, Any]) -> str:
    """A stable id: the rule plus the evidence that makes the finding true.

    Line numbers are left out of the evidence on purpose (they move when an
    unrelated paragraph is added), so an accepted finding stays accepted until
    what it is about changes.
    """
    payload = json.dumps([rule, evidence], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str  # error | warning | info
    message: str
    paths: tuple[str, ...] = ()  # workspace-relative (wiki/..., raw/...)
    lines: tuple[int, ...] = ()  # one per path where known (0 = whole file)
    evidence: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    fixable: bool = False
    id: str = ""

    @classmethod
    def make(
        cls,
        rule: str,
        severity: str,
        message: str,
        *,
        paths: tuple[str, ...] | list[str] = (),
        lines: tuple[int, ...] | list[int] = (),
        evidence: dict[str, Any] | None = None,
        fixable: bool = False,
    ) -> Finding:
        ev = dict(evidence or {})
        return cls(rule, severity, message, tuple(paths), tuple(lines), ev, fixable, finding_id(rule, ev))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "paths": list(self.paths),
            "lines": list(self.lines),
            "evidence": self.evidence,
            "fixable": self.fixable,
        }


@dataclass(frozen=True)
class Fix:
    """One safe mechanical repair: what it changes and why it is safe."""

    path: str  # workspace-relative
    action: str  # rebuild-index | drop-link | add-backlink
    detail: str
    applied: bool = False
    skipped: str | None = None  # why it was not applied (edited by a person, ...)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.action, "detail": self.detail, "applied": self.applied, "skipped": self.skipped}


@dataclass(frozen=True)
class LintReport:
    findings: list[Finding]
    accepted: list[Finding] = field(default_factory=list)
    rules: tuple[str, ...] = ()
    pages: int = 0
    sources: int = 0
    seconds: float = 0.0
    fixes: list[Fix] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # files this run wrote (lint.md, index.md, log.md)
    timings: dict[str, float] = field(default_factory=dict)  # CPU seconds: "load" and each rule
    failed_rules: list[str] = field(default_factory=list)  # rules that crashed: the report is incomplete

    @property
    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            out[f.severity] = out.get(f.severity, 0) + 1
        return out

    @property
    def errors(self) -> int:
        return self.counts["error"]

    @property
    def warnings(self) -> int:
        return self.counts["warning"]

    @property
    def infos(self) -> int:
        return self.counts["info"]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.errors == 0 and not self.failed_rules,
            "counts": self.counts,
            "errors": self.errors,
            "rules": list(self.rules),
            "pages": self.pages,
            "sources": self.sources,
            "seconds": round(self.seconds, 3),
            "findings": [f.to_json() for f in self.findings],
            "accepted": [f.to_json() for f in self.accepted],
            "fixes": [f.to_json() for f in self.fixes],
            "notes": list(self.notes),
            "written": list(self.written),
            "timings": dict(self.timings),
            "failed_rules": list(self.failed_rules),
        }


# files at the top of wiki/ that are written by code or owned by the user, not pages
SPECIAL = ("index.md", "log.md", "AGENTS.md", "lint.md")

SECTIONS = tuple(name for name, _ in index_page.SECTIONS)

def code_version(salt: bytes, *names: str) -> int:
    """A cache key from the code that fills a cache (files named relative to this folder): editing
    any of them invalidates the cache by itself, where a forgotten version bump would serve stale data."""
    digest = hashlib.sha256(salt)
    here = Path(__file__).parent
    for name in names:
        with contextlib.suppress(OSError):
            digest.update((here / name).read_bytes())
    return int(digest.hexdigest()[:8], 16)

class Link(NamedTuple):
    # a NamedTuple, not a frozen dataclass: a real 10k wiki has 800k links, and a frozen
    # dataclass's __init__ (object.__setattr__ per field) cost 2 s of lint's run to build them
    text: str
    target: str  # as written
    at: int  # character offset in the page file (page.line_of(at) gives the line, when a finding needs it)
    kind: str  # md | wiki
    resolved: str | None  # workspace-relative path ("wiki/...", "raw/...") or None when external/anchor
    fragment: str = ""

class PageDigest(NamedTuple):
    """What the rules need from one page's bytes (digest.py computes it, and caches it across runs).

    Everything here depends on the page's own text and path alone; what also depends on other
    pages (where a [[wikilink]] leads) or on the raw sources (whether a quote is in its source)
    is decided when the rules run.
    """

    meta: dict[str, Any] | None  # None: the front matter could not be read (error says why)
    error: str | None
    has_front_matter: bool
    body_offset: int  # lines before the body
    lines: int
    # distinct Markdown link targets, resolved (resolve_target), in first-seen order: the pages in
    # wiki/ as wiki-relative paths (the page itself left out), and the others (raw/..., ../outside)
    links_to: tuple[str, ...]
    other_targets: tuple[str, ...]
    title_keys: tuple[str, ...]  # structure.title_key of its title and aliases (duplicates, missing concepts)
    fm_problems: tuple[str, ...]  # structure.meta_problems of a page in a wikimem section
    wikinames: tuple[str, ...]  # distinct [[names]] as written
    bold: tuple[tuple[str, str], ...]  # (title_key, surface) of terms set in bold (missing_concepts)
    secrets: tuple[tuple[int, str, str, str], ...]  # (line, kind, redacted, sha256[:16]); never the secret
    cites: tuple[str, ...]  # the raw files its quotes and figures cite
    # (raw path, quoted words, line) of quotes with a citation, and (raw path, line, figures, clause);
    # None in a digest read from the cache (they are most of its size, and needed only when a cited
    # file changed: the page is read again then)
    quotes: tuple[tuple[str, str, int], ...] | None
    figures: tuple[tuple[str, int, tuple[str, ...], str], ...] | None

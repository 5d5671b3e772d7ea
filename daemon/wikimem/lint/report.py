"""The report as people and agents read it: terminal lines and wiki/lint.md."""

from __future__ import annotations

import posixpath

from .model import Finding, LintReport

# lint.md is linked from index.md and loaded by agents: keep it within the same loader caps
BUDGET_LINES = 180
BUDGET_BYTES = 22_000
# the rules whose findings say most about what an agent may read wrong, first
USEFUL = ("superseded", "contradicted", "stale-note", "stale", "ungrounded", "secret", "broken-link", "frontmatter",
          "log-integrity", "size", "missing-from-index", "duplicate", "missing-concept", "orphan")


def quotes(f: Finding) -> list[tuple[str, str, int, str]]:
    """(label, path, line, sentence) for findings that quote sources (superseded, contradicted, stale-note)."""
    out: list[tuple[str, str, int, str]] = []
    pairs = {"superseded": ("old", "current"), "contradicted": ("plan", "outcome"), "stale-note": ("note", "current")}
    labels = pairs.get(f.rule)
    if f.rule == "contradicted" and "a" in f.evidence:
        labels = ("a", "b")
    if not labels:
        return out
    for i, label in enumerate(labels):
        item = f.evidence.get(label)
        if isinstance(item, dict):
            line = f.lines[i] if i < len(f.lines) else 0
            out.append((label, str(item.get("path", "")), line, str(item.get("sentence", ""))))
    return out


def tally(counts: dict[str, int]) -> str:
    """ "1 error, 2 warnings, 0 info" """
    e, w = counts.get("error", 0), counts.get("warning", 0)
    return f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}, {counts.get('info', 0)} info"


def where(f: Finding) -> str:
    if not f.paths:
        return "-"
    line = f.lines[0] if f.lines else 0
    return f"{f.paths[0]}:{line}" if line else f.paths[0]


def terminal_lines(report: LintReport) -> list[str]:
    out = []
    order = {"error": 0, "warning": 1, "info": 2}
    for f in sorted(report.findings, key=lambda f: (order[f.severity], f.rule, f.paths, f.lines)):
        out.append(f"{f.severity:<7} {f.rule:<18} {where(f)}  {f.message}  [{f.id}]")
        for label, path, line, sentence in quotes(f):
            out.append(f"        {label}: {path}:{line}: \"{sentence}\"")
    return out


def summary(report: LintReport) -> str:
    c = report.counts
    accepted = f", {len(report.accepted)} accepted" if report.accepted else ""
    return (
        f"{tally(c)}{accepted} "
        f"({report.pages} pages, {report.sources} sources, {report.seconds:.2f} s)"
    )


def _link(path: str, line: int = 0) -> str:
    """A link from wiki/lint.md to a workspace path (wiki/... or raw/...)."""
    target = path[5:] if path.startswith("wiki/") else posixpath.join("..", path)
    target = target.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    anchor = f"#L{line}" if line and path.startswith("raw/") else ""
    return f"[{path}{':' + str(line) if line else ''}]({target}{anchor})"


def lint_md(report: LintReport) -> str:
    c = report.counts
    lines = [
        "---", "title: Lint report", "kind: report", "---", "# Lint report", "",
        "Open problems found by `wikimem lint`, rewritten on each full run. Superseded and contradicted",
        "facts quote both sources: prefer the current one. Accept a finding that is fine with",
        "`wikimem lint --accept ID --why \"...\"`.", "",
        f"**{tally(c)}**"
        + (f"; {len(report.accepted)} accepted" if report.accepted else ""), "",
    ]
    shown = 0
    listed = [f for f in report.findings if f.severity != "info"]
    for severity, heading in (("error", "Errors"), ("warning", "Warnings")):
        group = [f for f in listed if f.severity == severity]
        if not group:
            continue
        lines += [f"## {heading}", ""]
        by_rule: dict[str, list[Finding]] = {}
        for f in sorted(group, key=lambda f: (f.paths, f.lines)):
            by_rule.setdefault(f.rule, []).append(f)
        rules = sorted(by_rule, key=lambda r: (USEFUL.index(r) if r in USEFUL else len(USEFUL), r))
        # every rule gets its share of the page before any rule gets more: a flood of one rule
        # (62 duplicate warnings) never pushes another rule's single finding out
        left = max(1, (BUDGET_LINES - len(lines) - 4 * len(rules)) // (3 * max(1, len(rules))))
        for rule in rules:
            findings = by_rule[rule]
            lines += [f"### {rule} ({len(findings)})", ""]
            kept = 0
            for f in findings[:left]:
                item = [f"- `{f.id}`: {f.message.replace(chr(10), ' ')}"]
                for label, path, line, sentence in quotes(f):
                    item.append(f"  - {label}: \"{sentence}\" ({_link(path, line)})")
                if not quotes(f) and f.paths:
                    item.append("  - " + ", ".join(_link(p, f.lines[i] if i < len(f.lines) else 0)
                                                   for i, p in enumerate(f.paths[:4])))
                size = sum(len(x.encode("utf-8")) + 1 for x in lines + item)
                if len(lines) + len(item) > BUDGET_LINES or size > BUDGET_BYTES:
                    break
                lines += item
                kept += 1
                shown += 1
            if kept < len(findings):
                lines.append(f"- … and {len(findings) - kept} more: `wikimem lint --rule {rule}`")
            lines.append("")
    rest = len(listed) - shown
    if rest > 0:
        lines += [f"{rest} more not listed here: run `wikimem lint` for all of them.", ""]
    if c["info"]:
        lines += [f"{c['info']} informational findings (orphans, wanted pages): run `wikimem lint` to see them.", ""]
    if not listed:
        lines += ["No open errors or warnings.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"

"""`wikimem lint`: a wiki health check that people, CI and agents can trust.

    report = run_lint(ws, settings)              # every rule; writes wiki/lint.md when it changed
    report = run_lint(ws, settings, ["stale"])   # some rules; writes nothing
    accept(ws, settings, "1718f0b202b4", "both are right: different platforms")

Rules are pure functions of a Context (pages, links, raw files and state.db,
each loaded once); run_lint applies the accepted-findings file and optional
safe fixes, appends a log.md entry for each full run (the record of when the
wiki was checked and what was found), and rewrites lint.md and index.md only
when the findings changed.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import NamedTuple

from .. import history, log_page
from ..config import Settings
from ..errors import UnsafePath, UsageError, WikimemError, WorkspaceBusy
from ..pages import today as page_today
from ..workspace import Workspace, atomic_write, read_owned, writer_lock
from . import claims, corpus, dispositions, logcheck, secrets, sourcing, structure, workers
from . import deep as deep_check
from . import fixes as fixing
from .context import Context, load_context
from .digest import DigestStore
from .model import Finding, Fix, LintReport
from .report import lint_md, tally

log = logging.getLogger("wikimem.lint")
__all__ = ["RULES", "Finding", "Fix", "LintReport", "Rule", "accept", "run_lint"]


class Rule(NamedTuple):
    name: str
    check: Callable[[Context], Iterable[Finding]]
    severity: str  # the highest severity it reports
    about: str


RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("broken-link", structure.broken_links, "error", "relative Markdown link or [[wikilink]] to nothing"),
    Rule("orphan", structure.orphans, "info", "page no other page links to"),
    Rule("missing-from-index", structure.missing_from_index, "warning", "page not listed in index.md or its catalogs"),
    Rule("frontmatter", structure.front_matter, "error", "front matter malformed (error) or missing title/kind/sources (warning)"),
    Rule("duplicate", structure.duplicates, "warning", "two pages of one kind for one thing (same title or alias up to case, plural, punctuation), or one text in two raw files"),
    Rule("missing-concept", structure.missing_concepts, "info", "[[Name]] wanted by 3+ pages but no page exists"),
    Rule("size", structure.size_caps, "error", "index.md/AGENTS.md over 200 lines or 25 KB (error); page over 100 KB (warning)"),
    Rule("stale", sourcing.stale, "error", "source deleted (error) or changed (warning) since its page was compiled"),
    Rule("superseded", claims.superseded, "warning", "a newer source gives another value for the same fact"),
    Rule("contradicted", claims.contradicted, "warning", "a plan against its outcome, or same-time sources that disagree"),
    Rule("stale-note", claims.stale_notes, "warning", "a note, README or page states an older value of a fact a product's timeline tracks or uses a name a release removed, or a reference page the newest release contradicts"),
    Rule("ungrounded", sourcing.ungrounded_all, "error", "quoted words, or figures before a citation, not in the cited source"),
    Rule("secret", secrets.secrets, "error", "API key, token or private key on a page"),
    Rule("log-integrity", logcheck.log_integrity, "error", "an earlier log.md entry changed or removed"),
)}
LINT_PAGE = "lint.md"
# rules that read the raw sources (corpus.cache); the others read pages only and run first
SOURCE_RULES = frozenset({"duplicate", "stale", "superseded", "contradicted", "stale-note", "ungrounded"})


def _select(rules: list[str] | None) -> list[Rule]:
    if not rules:
        return list(RULES.values())
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise UsageError(f"unknown rule(s): {', '.join(unknown)}; valid: {', '.join(RULES)}")
    return [RULES[r] for r in dict.fromkeys(rules)]


def source_count(ctx: Context) -> int:
    """The sources compile compiles: raw/'s files less those state.db says it skipped (one count
    in compile, status and lint)."""
    return sum(1 for path in ctx.raw_files if getattr(ctx.state_sources.get(path), "status", None) != "skipped")


def today() -> str:
    return page_today()


def _check(ws: Workspace, settings: Settings, selected: list[Rule]) -> tuple[Context, list[Finding], list[str]]:
    if not ws.wiki.is_dir():
        raise UsageError(f"{ws.root} has no wiki/ folder; run: wikimem init {ws.root}")
    # a large wiki makes millions of small objects and few cycles: the cycle collector, run again and
    # again as they pile up, cost a tenth of the run; it runs once afterwards instead
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _check_rules(ws, settings, selected)
    finally:
        if collecting:
            gc.enable()


def _check_rules(ws: Workspace, settings: Settings, selected: list[Rule]) -> tuple[Context, list[Finding], list[str]]:
    started = time.process_time()
    wants_sources = any(rule.name in SOURCE_RULES for rule in selected)
    # the workers parse uncached raw sources while this process reads pages and runs the page rules
    early: list[Context] = []

    def start_sources(ctx: Context) -> None:
        early.append(ctx)
        corpus.start(ctx)

    try:
        ctx = load_context(ws, settings, start_sources if wants_sources else None)
    except BaseException:
        if early:  # no worker outlives a failed read of the wiki
            corpus.start(early[0]).close()
            store = early[0].run.digests
            if isinstance(store, DigestStore):
                store.close()
            workers.shutdown(early[0].run)
        raise
    timings = ctx.run.timings
    timings["load"] = time.process_time() - started
    findings: list[Finding] = []
    notes: list[str] = [f"{name} not checked: its file name is not valid UTF-8; rename it" for name in ctx.unreadable_names]
    try:
        for rule in sorted(selected, key=lambda r: r.name in SOURCE_RULES):
            started = time.process_time()
            try:
                findings.extend(rule.check(ctx))
            except Exception as exc:
                # one broken rule must not hide what the others found; the report says it is incomplete
                if os.environ.get("WIKIMEM_TESTING"):
                    raise  # tests see the traceback
                log.debug("rule %s failed", rule.name, exc_info=True)
                failed = ctx.run.failed_rules
                failed.append(rule.name)
                notes.append(f"rule {rule.name} failed ({type(exc).__name__}: {exc}); its findings are missing")
            timings[rule.name] = time.process_time() - started
    finally:
        cache = ctx.run.sources
        if isinstance(cache, corpus.SourceCache):
            cache.close()
        pages = ctx.run.digests
        if isinstance(pages, DigestStore):
            pages.close()
        workers.shutdown(ctx.run)
    # one finding per id (two rules never share ids, but one rule may reach the same evidence twice)
    unique = list({f.id: f for f in findings}.values())
    return ctx, unique, notes


def run_lint(
    ws: Workspace,
    settings: Settings,
    rules: list[str] | None = None,
    *,
    fix: bool = False,
    dry_run: bool = False,
    write: bool = True,
    lock: bool = True,
    wait: float = 2.0,
    deep: bool = False,
    deep_budget: int | None = None,
) -> LintReport:
    """Run the rules and return the report.

    write: update wiki/lint.md, index.md and log.md when something changed (full runs only: a
    run of some rules must not replace the report of all of them). lock=False when the caller
    already holds the writer lock (the daemon's worker). fix: make the safe repairs; with
    dry_run, only list them. dry_run never writes anything. deep: the model judges the
    superseded/contradicted findings (anthropic backend, deep_budget tokens at most).
    """
    started = time.perf_counter()
    selected = _select(rules)
    ctx, findings, notes = _check(ws, settings, selected)
    accepted_map, problem = dispositions.load(ws)
    if problem:
        notes.append(problem)
    open_findings = [f for f in findings if f.id not in accepted_map]
    accepted = [f for f in findings if f.id in accepted_map]
    fixes: list[Fix] = []
    written: list[str] = []
    full = rules is None or set(rules) >= set(RULES)
    wants_write = (write or fix) and not dry_run
    if fix or dry_run:
        planned, new_text = fixing.plan(ctx, open_findings)
        fixes = planned
        if fix and not dry_run and planned:
            try:
                with _maybe_lock(ws, lock, wait):
                    fixes = fixing.apply(ctx, planned, new_text)
            except OSError as exc:
                raise WikimemError(f"--fix could not write {exc.filename or 'the wiki'}: {exc.strerror or exc}") from exc
            written += sorted({f.path for f in fixes if f.applied})
            # re-check so the report shows the wiki as the fixes left it
            ctx, findings, more = _check(ws, settings, selected)
            notes += more
            open_findings = [f for f in findings if f.id not in accepted_map]
            accepted = [f for f in findings if f.id in accepted_map]
    if deep:
        open_findings, more = deep_check.judge(open_findings, settings, budget=deep_budget or deep_check.DEFAULT_BUDGET)
        notes += more
    report = LintReport(
        findings=_sorted(open_findings), accepted=_sorted(accepted), rules=tuple(r.name for r in selected),
        pages=sum(1 for p in ctx.pages.values() if not p.is_generated), sources=source_count(ctx),
        fixes=fixes, notes=notes, timings={k: round(v, 3) for k, v in ctx.run.timings.items()},
        failed_rules=list(ctx.run.failed_rules),
    )
    # a report missing a crashed rule's findings must not replace a complete lint.md
    full = full and not report.failed_rules
    if wants_write and (full or written):
        # a full run rewrites lint.md; a run of some rules that fixed something still logs and commits it
        try:
            with _maybe_lock(ws, lock, wait):
                written = _finish(ctx, settings, report, written, report_page=full)
        except WorkspaceBusy as exc:
            notes.append(f"wiki/lint.md and log.md not updated: {exc}")
        except OSError as exc:  # a read-only wiki still gets its report on stdout
            notes.append(f"wiki/lint.md and log.md not updated: {exc.strerror or exc} ({exc.filename or 'wiki/'})")
    elif wants_write and "log-integrity" in report.rules and "log-integrity" not in report.failed_rules:
        logcheck.record(ctx, report.findings)
    return replace(report, seconds=time.perf_counter() - started, written=sorted(set(written)))


def _sorted(findings: list[Finding]) -> list[Finding]:
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(findings, key=lambda f: (order.get(f.severity, 3), f.rule, f.paths, f.lines, f.id))


class _maybe_lock:  # noqa: N801 - used as a context manager like writer_lock
    """writer_lock, or nothing when the caller already holds it (lock=False)."""

    def __init__(self, ws: Workspace, lock: bool, wait: float):
        self.cm = writer_lock(ws, wait=wait, holder="wikimem lint") if lock else None

    def __enter__(self) -> None:
        if self.cm is not None:
            self.cm.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.cm is not None:
            self.cm.__exit__(*exc)  # type: ignore[arg-type]


def _finish(
    ctx: Context, settings: Settings, report: LintReport, written: list[str], extra: list[str] | None = None, *,
    report_page: bool = True,
) -> list[str]:
    """Write lint.md when the findings changed, then finish the operation as every writer does
    (history.finish: index.md when lint.md is new or gone, a log entry for the run, one git
    commit for what the run wrote). Returns every file written, workspace-relative."""

    ws = ctx.ws
    wrote = list(written)
    target = ws.wiki / LINT_PAGE
    try:
        old = read_owned(ws.wiki, target).decode("utf-8", "replace") if target.exists() else None
        content = lint_md(report) if report_page else old
    except UnsafePath as exc:  # a link or a special file in its place: neither read nor written
        log.warning("%s not written: %s", LINT_PAGE, exc)
        old = content = None
    applied = [f for f in report.fixes if f.applied]
    changed_page = content is not None and old != content
    if content is not None and changed_page:
        atomic_write(target, content, base=ws.wiki)
        wrote.append(f"wiki/{LINT_PAGE}")
    entries = []
    if report_page or applied or extra:
        by_rule = Counter(f.rule for f in report.findings)
        lines = [f"- findings: {', '.join(f'{rule} {n}' for rule, n in sorted(by_rule.items())) or 'none'}"]
        if report.accepted:
            lines.append(f"- accepted: {len(report.accepted)}")
        lines += log_page.list_lines("fixed", [f"{f.action} {f.path}" for f in applied])
        lines += extra or []
        if old != content:
            lines.append(f"- report: {LINT_PAGE}")
        elif report_page:
            lines.append(f"- report: {LINT_PAGE} unchanged")
        entries.append(log_page.LogEntry("lint", tally(report.counts), lines))
    if entries or wrote:
        changes = history.finish(ws, settings, operation="lint", entries=entries,
                                 paths=sorted({p[5:] for p in wrote if p.startswith("wiki/")}), index=changed_page)
        wrote += [f"wiki/{rel}" for rel, _how in changes]
        if entries:
            wrote.append("wiki/log.md")
    if "log-integrity" in report.rules and "log-integrity" not in report.failed_rules:
        logcheck.record(ctx, report.findings)
    return wrote


def accept(ws: Workspace, settings: Settings, finding_id: str, why: str, *, wait: float = 2.0) -> tuple[Finding, LintReport]:
    """Record a finding as accepted (by id or an unambiguous prefix of 4+ characters)."""
    started = time.perf_counter()
    if not why or not why.strip():
        raise UsageError("say why the finding is acceptable: --accept ID --why \"both are right: different platforms\"")
    ctx, findings, notes = _check(ws, settings, list(RULES.values()))
    wanted = finding_id.strip().lower()
    matches = [f for f in findings if f.id == wanted] or (
        [f for f in findings if f.id.startswith(wanted)] if len(wanted) >= 4 else []
    )
    if not matches:
        raise UsageError(f"no open finding has id {finding_id!r}; run `wikimem lint` to list the ids")
    if len(matches) > 1:
        raise UsageError(f"id {finding_id!r} matches {len(matches)} findings; give more characters")
    finding = matches[0]
    with writer_lock(ws, wait=wait, holder="wikimem lint --accept"):
        dispositions.add(ws, finding, why, today())
    accepted_map, problem = dispositions.load(ws)
    report = LintReport(
        findings=_sorted([f for f in findings if f.id not in accepted_map]),
        accepted=_sorted([f for f in findings if f.id in accepted_map]),
        rules=tuple(RULES), pages=sum(1 for p in ctx.pages.values() if not p.is_generated),
        sources=source_count(ctx), notes=notes + ([problem] if problem else []),
    )
    with writer_lock(ws, wait=wait, holder="wikimem lint --accept"):
        written = _finish(ctx, settings, report, [f"wiki/{dispositions.FILE}"],
                          [f"- accepted {finding.id} ({finding.rule}): {' '.join(why.split())}"])
    return finding, replace(report, written=sorted(set(written)), seconds=time.perf_counter() - started)

"""The command line: a thin adapter over the core. stdout carries data, stderr carries people's text.

Exit codes (a contract, see README): 0 ok, 1 error, 2 usage, 3 lint found errors,
4 workspace busy (another writer holds the lock).

Each command imports the core it needs inside its function: `wikimem --help` (and a command's
`--help`) loads click and errors alone.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from . import recache

# before the rest loads, so the patterns it compiles come from the kept code; one file of them
# per command (its first word that is not an option). Not for the processes that live long (the
# MCP server, the daemon): they compile their patterns once, and the server answers its first
# messages before it compiles most of them
_COMMAND = next((word for word in sys.argv[1:] if not word.startswith("-")), "")
if _COMMAND not in ("mcp", "run"):
    recache.install(_COMMAND)

import click  # noqa: E402 - after recache.install, as every import below

from . import __version__  # noqa: E402
from .errors import WikimemError  # noqa: E402

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_LINT, EXIT_BUSY = 0, 1, 2, 3, 4
F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("wikimem")


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))


def say(message: str, *, quiet: bool = False) -> None:
    if not quiet:
        click.echo(message, err=True)


def root_option(f: F) -> F:
    return click.option(
        "--root", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Workspace folder (default: $WIKIMEM_ROOT or the current folder).",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")(f)


def quiet_option(f: F) -> F:
    return click.option("--quiet", "-q", is_flag=True, help="No progress or summary on stderr.")(f)


def backend_option(f: F) -> F:
    return click.option("--backend", default=None, help="Backend: offline (default), anthropic or auto.")(f)


def resolve_root(root: Path | None) -> Path:
    if root is not None:
        return root
    env = os.environ.get("WIKIMEM_ROOT")
    return Path(env) if env else Path.cwd()


def handle_errors(f: F) -> F:
    """Turn core errors into one line on stderr (or one JSON document) and a documented exit code."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except WikimemError as exc:
            if kwargs.get("as_json"):
                emit_json({"ok": False, "error": str(exc), "exit_code": exc.exit_code})
            else:
                click.echo(f"wikimem: {exc}", err=True)
            log.debug("error", exc_info=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            # the reader went away (wikimem search ... | head): stop quietly, as other tools do;
            # stdout goes to /dev/null so the interpreter's final flush cannot fail again
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_ERROR)
        except Exception as exc:
            # a bug, not a user error: one line for people, the traceback in the debug log;
            # under the test suite it propagates so failures show their traceback
            if os.environ.get("WIKIMEM_TESTING"):
                raise
            log.debug("internal error", exc_info=True)
            message = f"internal error: {type(exc).__name__}: {exc} (run `wikimem --debug ...` for the traceback)"
            if kwargs.get("as_json"):
                emit_json({"ok": False, "error": message, "exit_code": EXIT_ERROR})
            else:
                click.echo(f"wikimem: {message}", err=True)
            sys.exit(EXIT_ERROR)

    return wrapper  # type: ignore[return-value]


def open_workspace(root: Path | None, *, must_exist: bool = True) -> Any:
    from .errors import UsageError
    from .workspace import Workspace

    ws = Workspace.at(resolve_root(root))
    if must_exist and not ws.raw.is_dir():
        raise UsageError(f"{ws.root} is not a wikimem workspace (no raw/); run: wikimem init {ws.root}")
    return ws


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wikimem")
@click.option("--debug", is_flag=True, help="Log debugging detail (with tracebacks) to stderr.")
def main(debug: bool) -> None:
    """Compile the documents in raw/ into a linked Markdown wiki for people and coding agents.

    \b
    Example:
      wikimem init ~/notes && cp paper.pdf ~/notes/raw/ && wikimem compile --root ~/notes
    """
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
@quiet_option
@handle_errors
def init(directory: Path | None, as_json: bool, quiet: bool) -> None:
    """Create a workspace: raw/, wiki/ (AGENTS.md, index.md, log.md) and wikimem.toml.

    Idempotent: never overwrites a file that exists, and accepts a raw/ already full of files.

    \b
    Example:
      wikimem init ~/notes
    """
    from .init import init_workspace
    from .workspace import Workspace

    ws = Workspace.at(directory or resolve_root(None))
    result = init_workspace(ws)
    if as_json:
        emit_json({"ok": True, "root": result.root, "created": result.created, "existing": result.existing})
        return
    say(f"workspace ready at {result.root}", quiet=quiet)
    for path in result.created:
        say(f"  created  {path}", quiet=quiet)
    say(f"next: put documents in {ws.raw} and run: wikimem compile --root {ws.root}", quiet=quiet)


class _Progress:
    """A progress line on stderr for long compiles; nothing when quiet or not a terminal.

    A model backend's compile reports more than which source it reads (`activity`): sources
    done of all, requests in flight, tokens and cost so far, and the time left."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.count = 0
        self.shown = False

    def __call__(self, path: str, total: int, step: int) -> None:
        self.count += step
        if not self.enabled or self.shown:
            return
        click.echo(f"\r\033[Kcompiling {self.count}/{total} {path[-60:]}", err=True, nl=False)

    def activity(self, activity: Any) -> None:
        if not self.enabled:
            return
        self.shown = True
        click.echo(f"\r\033[Kcompiling {activity.line()}", err=True, nl=False)

    def close(self) -> None:
        if self.enabled and (self.count or self.shown):
            click.echo("\r\033[K", err=True, nl=False)


@main.command()
@root_option
@backend_option
@click.option("--rebuild", is_flag=True, help="Re-render every page, even where nothing changed.")
@click.option("--wait", type=float, default=0.0, show_default=True, help="Seconds to wait for another writer.")
@click.option("--estimate", is_flag=True, help="Print the tokens a compile would spend; send and write nothing.")
@click.option("--concurrency", type=int, default=None, metavar="N",
              help="Model conversations at once (anthropic backend; default 8, or concurrency in wikimem.toml).")
@click.option("--batch", is_flag=True, default=None,
              help="Send the model's requests as Message Batches: half the price, answers within 24 h.")
@json_option
@quiet_option
@handle_errors
def compile(root: Path | None, backend: str | None, rebuild: bool, wait: float, estimate: bool,  # noqa: A001
            concurrency: int | None, batch: bool | None, as_json: bool, quiet: bool) -> None:
    """Compile new and changed sources in raw/ into wiki/ (incremental; a no-op writes nothing).

    \b
    Example:
      wikimem compile --root ~/notes
      wikimem compile --root ~/notes --json | jq .created
      wikimem compile --backend anthropic --estimate
      wikimem compile --backend anthropic --batch --concurrency 16
    """
    from .compiler import compile_workspace
    from .config import load_settings

    ws = open_workspace(root)
    settings = load_settings(ws.root, {"backend": backend, "concurrency": concurrency, "batch": batch or None})
    if estimate:
        from .backends.anthropic import estimate_compile

        plan = estimate_compile(ws, settings, rebuild=rebuild)
        if as_json:
            emit_json({"ok": True, **plan.to_json()})
        else:
            print_estimate(plan, quiet=quiet)
        return
    progress = _Progress(not quiet and not as_json)
    try:
        report = compile_workspace(ws, settings, rebuild=rebuild, progress=progress, wait=wait,
                                   activity=progress.activity)
    finally:
        progress.close()
    failed = bool(report.failed)
    if as_json:
        emit_json({"ok": not failed, **report.to_json()})
    elif not quiet:
        print_compile_summary(report)
    if failed:
        sys.exit(EXIT_ERROR)


def print_estimate(plan: Any, *, quiet: bool) -> None:
    """The plan on stdout (it is the command's data), the caveats on stderr."""
    say(plan.reason + f" -> {plan.backend}", quiet=quiet)
    if not plan.sources:
        click.echo("nothing to compile: no new, changed or failed sources")
    for s in plan.sources:
        flag = "  OVER source_token_budget" if s.budgeted > plan.budget else ""
        click.echo(f"{s.path}\t{s.parts} part{'s' if s.parts != 1 else ''}\t~{s.input:,} input\t"
                   f"~{s.output:,} output\t~{s.cache_read:,} cache read{flag}")
    for path, reason in plan.skipped:
        click.echo(f"{path}\tskipped: {reason}")
    cost = plan.cost_usd
    money = "" if cost is None else f", ~${cost:.2f} at list prices"
    click.echo(f"total: {len(plan.sources)} sources, ~{plan.input:,} input + ~{plan.output:,} output tokens"
               f" (+ ~{plan.cache_read:,} cache reads){money}")
    if plan.backend == "anthropic" and plan.sources:
        price = "" if cost is None else f"~${cost:.2f}, "
        batch_price = "" if plan.batch_cost_usd is None else f"~${plan.batch_cost_usd:.2f} (half), "
        click.echo(f"interactive: {price}about {_duration(plan.seconds)} at concurrency {plan.concurrency}")
        click.echo(f"batch (--batch): {batch_price}about {_duration(plan.batch_seconds)} in {plan.rounds} rounds "
                   "(each round a Message Batch: usually minutes, up to 24 hours)")
    if plan.backend == "anthropic":
        say(f"estimate only, nothing was sent: model {plan.model}, ~3.6 characters per token, 3 to 10 turns "
            "per part of ~10 s each; the API's own counts go to log.md when you compile", quiet=quiet)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def print_compile_summary(report: Any) -> None:
    if report.noop:
        say(f"up to date: {report.unchanged} sources, nothing written ({report.seconds:.2f} s)")
        return
    ignored = report.ignored["count"]
    say(
        f"compiled {len(report.compiled)} sources ({report.unchanged} unchanged) with {report.backend} "
        f"in {report.seconds:.2f} s: {len(report.created)} pages created, {len(report.updated)} updated, "
        f"{len(report.removed)} removed" + (f"; {ignored} files ignored by rules (see --json)" if ignored else "")
    )
    for old, new in report.renamed:
        say(f"  renamed  {old} -> {new}")
    for path in report.removed_sources:
        say(f"  removed  {path}")
    for path in report.kept:
        say(f"  kept     wiki/{path} (edited by a person; wikimem's version is in .wikimem/proposed/)")
    for path, reason in report.skipped:
        say(f"  skipped  {path}: {reason}")
    for path, reason in report.failed:
        say(f"  failed   {path}: {reason}")
    for path, reason in report.refused:
        say(f"  refused  {path}: {reason}")
    for warning in report.warnings:
        say(f"  note     {warning}")


@main.command()
@root_option
@click.option("-n", "--limit", "limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many operations to show, newest first.")
@json_option
@handle_errors
def history(root: Path | None, limit: int, as_json: bool) -> None:
    """List the recent operations that changed wiki/, each with its git commit.

    Needs the workspace in a git repository (or git = true in wikimem.toml).

    \b
    Example:
      wikimem history -n 5
      wikimem history --json | jq '.operations[0].commit'
    """
    from .config import load_settings
    from .history import held_sources, operations

    ws = open_workspace(root)
    ops = operations(ws, load_settings(ws.root), limit=limit)
    held = held_sources(ws)
    if as_json:
        emit_json({"ok": True, "operations": [op.to_json() for op in ops], "held": held})
        return
    if not ops:
        say("no wikimem operations in the git history yet")
    for op in ops:
        state = f"  [undone by {op.undone_by[:7]}]" if op.undone_by else ""
        when = op.date[:16].replace("T", " ")
        click.echo(f"{op.short}  {when}  {op.operation:<8} {op.subject}{state}")
    if held:
        say(f"held by undo (not compiled again until the file changes; `wikimem undo UNDO-COMMIT` "
            f"redoes): {', '.join(held)}")


@main.command()
@click.argument("operation", required=False)
@root_option
@click.option("--dry-run", is_flag=True, help="Say what would be reverted; change nothing.")
@click.option("--wait", type=float, default=0.0, show_default=True, help="Seconds to wait for another writer.")
@json_option
@quiet_option
@handle_errors
def undo(operation: str | None, root: Path | None, dry_run: bool, wait: float, as_json: bool, quiet: bool) -> None:
    """Revert the last operation (or the one named) as a new git commit.

    OPERATION is a commit from `wikimem history` or an operation name (compile, lint, ...,
    meaning its latest run). log.md keeps the original entry and gains an undo entry.
    Refuses, changing nothing, when a page the operation wrote was edited since.

    \b
    Example:
      wikimem undo
      wikimem undo 3f2a9c1
    """
    from .config import load_settings
    from .history import undo as undo_operation

    ws = open_workspace(root)
    result = undo_operation(ws, load_settings(ws.root), operation, wait=wait, dry_run=dry_run)
    if as_json:
        emit_json({"ok": True, **result.to_json()})
        return
    op = result.undone
    verb = "would undo" if dry_run else "undid"
    made = f" as {result.commit[:7]}" if result.commit else ""
    say(f"{verb} {op.short} ({op.operation}: {op.subject}){made}: {len(result.restored)} pages restored, "
        f"{len(result.removed)} removed", quiet=quiet)
    for path in result.restored:
        say(f"  restored wiki/{path}", quiet=quiet)
    for path in result.removed:
        say(f"  removed  wiki/{path}", quiet=quiet)
    for path in result.held:
        say(f"  held     {path} (not compiled again until it changes)", quiet=quiet)
    if result.commit and not dry_run:
        say(f"to redo: wikimem undo {result.commit[:7]}", quiet=quiet)


@main.command()
@root_option
@backend_option
@click.option("--polling", is_flag=True, help="Poll raw/ every 2 s instead of using native file events (network folders).")
@quiet_option
@handle_errors
def run(root: Path | None, backend: str | None, polling: bool, quiet: bool) -> None:
    """Run the daemon in the foreground: watch raw/, compile changes, lint on a schedule.

    Compiles what changed while it was down, then every file dropped, edited, moved or
    deleted in raw/. One daemon per workspace (a second exits with code 4). SIGTERM or
    Ctrl-C finishes the current batch and exits 0. Logs go to stderr (warnings only with
    --quiet) and to .wikimem/daemon.log; `wikimem status` shows what it is doing.

    \b
    Example:
      wikimem run --root ~/notes
    """
    from .backends import create
    from .config import load_settings
    from .service import Daemon, DaemonOptions

    ws = open_workspace(root)
    settings = load_settings(ws.root, {"backend": backend})
    # each batch in a process of its own where fork is at home (see Daemon._isolated)
    options = DaemonOptions.from_settings(settings, polling=polling, isolate_batches=sys.platform.startswith("linux"))
    create(settings.backend, settings)  # an unknown backend fails now, not at the first drop
    if logging.getLogger().level == logging.DEBUG:
        level = logging.DEBUG
    else:
        level = logging.WARNING if quiet else logging.INFO
    sys.exit(Daemon(ws, settings, options, log_level=level).run())


@main.command()
@root_option
@json_option
@handle_errors
def status(root: Path | None, as_json: bool) -> None:
    """Show what the workspace's daemon is doing: state, queue, last compile and lint, errors.

    Exit code 0 when a daemon is running, 1 when none is (so it works as a health check).

    \b
    Example:
      wikimem status --root ~/notes
      wikimem status --root ~/notes --json | jq .last_compile
    """
    from .service import daemon_status, format_status

    ws = open_workspace(root)
    data = daemon_status(ws)
    if as_json:
        emit_json({"ok": bool(data["running"]), **data})
    else:
        for line in format_status(data):
            click.echo(line)
    if not data["running"]:
        sys.exit(EXIT_ERROR)


@main.command()
@root_option
@click.option("--rule", "rules", multiple=True, metavar="NAME",
              help="Run only this rule (repeatable): broken-link, orphan, missing-from-index, frontmatter, duplicate, "
                   "missing-concept, size, stale, superseded, contradicted, stale-note, ungrounded, secret, log-integrity.")
@click.option("--fix", is_flag=True, help="Make safe mechanical repairs (index, dead links, back-links) on pages nobody edited.")
@click.option("--dry-run", is_flag=True, help="List the repairs --fix would make; write nothing.")
@click.option("--accept", "accept_id", metavar="ID", default=None, help="Record a finding as accepted (needs --why).")
@click.option("--why", default=None, help="Why the accepted finding is fine (kept in wiki/.lint-accepted.json).")
@click.option("--deep", is_flag=True, help="Ask the model (anthropic backend) to judge the candidate contradictions.")
@click.option("--deep-budget", type=click.IntRange(min=1), default=None, metavar="TOKENS",
              help="Token budget for --deep (default 20000).")
@click.option("--wait", type=float, default=2.0, show_default=True, help="Seconds to wait for another writer before writing lint.md.")
@json_option
@quiet_option
@handle_errors
def lint(
    root: Path | None, rules: tuple[str, ...], fix: bool, dry_run: bool, accept_id: str | None, why: str | None,
    deep: bool, deep_budget: int | None, wait: float, as_json: bool, quiet: bool,
) -> None:
    """Check the wiki: broken links, stale pages, superseded or contradicted facts, secrets, ...

    Findings go to stdout (one per line, or --json); exit 0 when no errors, 3 when errors.
    A full run appends an entry to log.md and rewrites wiki/lint.md (linked from index.md)
    when the findings changed; pages are read again only when they changed (.wikimem/lint-cache.db).

    \b
    Example:
      wikimem lint --root ~/notes
      wikimem lint --json | jq '.findings[] | select(.rule == "superseded")'
      wikimem lint --accept 1718f0b202b4 --why "both are right: different platforms"
      wikimem lint --deep                  # needs ANTHROPIC_API_KEY (or base_url)
    """
    from .config import load_settings
    from .errors import UsageError
    from .lint import accept, run_lint
    from .lint.report import summary, terminal_lines

    ws = open_workspace(root)
    settings = load_settings(ws.root)
    if why is not None and accept_id is None:
        raise UsageError("--why goes with --accept ID")
    if accept_id is not None:
        if rules or fix or dry_run:
            raise UsageError("--accept records one finding; run it without --rule, --fix or --dry-run")
        finding, report = accept(ws, settings, accept_id, why or "", wait=wait)
        if as_json:
            emit_json({**report.to_json(), "accepted_now": finding.to_json()})
        else:
            say(f"accepted {finding.id} ({finding.rule}): {finding.message}", quiet=quiet)
            say(summary(report), quiet=quiet)
        return
    report = run_lint(ws, settings, list(rules) or None, fix=fix, dry_run=dry_run, wait=wait,
                      deep=deep, deep_budget=deep_budget)
    if as_json:
        emit_json(report.to_json())
    else:
        for line in terminal_lines(report):
            click.echo(line)
        for note in report.notes:
            say(f"note: {note}", quiet=quiet)
        for item in report.fixes:
            state = "fixed" if item.applied else ("skipped" if item.skipped else "would fix")
            why = f" ({item.skipped})" if item.skipped else ""
            say(f"{state:<10} {item.action:<14} {item.path}: {item.detail}{why}", quiet=quiet)
        say(summary(report), quiet=quiet)
    if report.failed_rules:
        sys.exit(EXIT_ERROR)  # a broken check is the tool's fault, not the wiki's: not exit 3
    if report.errors:
        sys.exit(EXIT_LINT)


# --- search, query and the agent contract ----------------------------------------------------


@main.command()
@click.argument("query", nargs=-1, required=True)
@root_option
@click.option("-n", "--limit", type=click.IntRange(min=1, max=1000), default=10, show_default=True,
              help="Most results to show.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["source", "concept", "answer", "raw"]),
              help="Only this kind of result (repeatable).")
@json_option
@handle_errors
def search(query: tuple[str, ...], root: Path | None, limit: int, kinds: tuple[str, ...], as_json: bool) -> None:
    """Search wiki pages and raw sources; natural-language questions work.

    Updates the search index first when files changed (cheap when nothing did).

    \b
    Example:
      wikimem search "minimum macOS version" --root ~/notes -n 5
      wikimem search "what is ownership" --json | jq -r '.results[0].path'
    """
    from .search import search_once

    ws = open_workspace(root)
    found = search_once(ws, " ".join(query), limit=limit, kinds=kinds or None)
    if as_json:
        emit_json({"results": [p.to_json() for p in found]})
        return
    if not found:
        say("no matches; try other words (wikimem search matches any of them, ranked)")
        return
    for n, passage in enumerate(found, 1):
        hit = passage.hit
        click.echo(f"{n:>2}. {passage.target}  [{hit.kind}, {hit.score:.1f}] {hit.title}")
        click.echo(f"    {hit.snippet}")


@main.command()
@root_option
@json_option
@quiet_option
@handle_errors
def reindex(root: Path | None, as_json: bool, quiet: bool) -> None:
    """Rebuild the search index in .wikimem/search/ from wiki/ and raw/.

    Never needed for correctness (search updates the index itself); use it after an
    upgrade or if the index seems wrong.

    \b
    Example:
      wikimem reindex --root ~/notes
    """
    from .search import reindex as rebuild

    ws = open_workspace(root)
    report = rebuild(ws)
    if as_json:
        emit_json({"ok": True, **report.to_json()})
        return
    say(f"indexed {report.files - len(report.skipped)} files as {report.passages} passages "
        f"in {report.seconds:.2f} s", quiet=quiet)
    for path, reason in report.skipped:
        say(f"  skipped  {path}: {reason}", quiet=quiet)


@main.command()
@click.argument("question", nargs=-1, required=True)
@root_option
@backend_option
@click.option("--save", is_flag=True, help="File the answer as a page in wiki/answers/ (and log it).")
@json_option
@quiet_option
@handle_errors
def query(question: tuple[str, ...], root: Path | None, backend: str | None, save: bool, as_json: bool,
          quiet: bool) -> None:
    """Answer a question from the wiki, citing the pages and raw lines it comes from.

    \b
    Example:
      wikimem query "what is the current minimum macOS version" --root ~/notes
      wikimem query "how do I bootstrap the toolchain" --save
    """
    from .config import load_settings
    from .query import answer

    ws = open_workspace(root)
    settings = load_settings(ws.root, {"backend": backend})
    result = answer(ws, settings, " ".join(question), save=save)
    if as_json:
        emit_json({"ok": True, **result.to_json()})
        return
    click.echo(result.text)
    if result.kept:
        say(f"kept {result.kept}: edited by a person; wikimem's answer is in {result.saved}", quiet=quiet)
    elif result.saved:
        say(f"saved {result.saved}", quiet=quiet)


@main.command()
@root_option
@click.option("--allow-write", is_flag=True, help="Add the add_note tool (writes only to raw/inbox/).")
@handle_errors
def mcp(root: Path | None, allow_write: bool) -> None:
    """Serve the wiki to MCP clients (Claude Code, Codex, Cursor) over stdio.

    Tools: search, read, list_pages, recent_log, lint, context (and add_note with
    --allow-write). Resources: wiki://index.md, wiki://AGENTS.md.

    \b
    Example:
      claude mcp add wikimem -- wikimem mcp --root ~/notes
    """
    from .mcp_server import serve

    ws = open_workspace(root)
    serve(ws, allow_write=allow_write)


@main.command()
@click.argument("query", nargs=-1, required=True)
@root_option
@click.option("--budget", type=click.IntRange(min=1), default=8000, show_default=True,
              help="Token budget for the whole pack (about 4 characters a token).")
@json_option
@handle_errors
def context(query: tuple[str, ...], root: Path | None, budget: int, as_json: bool) -> None:
    """Print a context pack for an agent without tools: index excerpt and best pages within a budget.

    \b
    Example:
      wikimem context "how do we bootstrap the toolchain" --budget 8000 > context.md
    """
    from .context import build_context

    ws = open_workspace(root)
    pack = build_context(ws, " ".join(query), budget)
    if as_json:
        emit_json({"ok": True, **pack.to_json()})
        return
    click.echo(pack.render())


@main.group()
def agents() -> None:
    """Point coding agents at the wiki (AGENTS.md / CLAUDE.md in a project)."""


@agents.command("install")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@root_option
@click.option("--remove", is_flag=True, help="Take the section (and the CLAUDE.md import) out again.")
@json_option
@quiet_option
@handle_errors
def agents_install(directory: Path, root: Path | None, remove: bool, as_json: bool, quiet: bool) -> None:
    """Add (or update) a wiki section in DIRECTORY/AGENTS.md, and an @AGENTS.md import in its CLAUDE.md.

    Idempotent; only the text between wikimem's markers is ever changed.

    \b
    Example:
      wikimem agents install ~/code/myproject --root ~/notes
      wikimem agents install ~/code/myproject --root ~/notes --remove
    """
    from .agents import install

    ws = open_workspace(root)
    result = install(directory, ws, remove=remove)
    if as_json:
        emit_json({"ok": True, **result.to_json()})
        return
    for name in result.changed:
        say(f"{'updated' if not remove else 'removed wikimem section from'} {Path(result.project) / name}", quiet=quiet)
    if not result.changed:
        say("nothing to change", quiet=quiet)


@main.command("config")
@root_option
@json_option
@handle_errors
def config_command(root: Path | None, as_json: bool) -> None:
    """Show every setting, its value and where it came from (flag, env, wikimem.toml, default).

    \b
    Example:
      wikimem config --root ~/notes
      wikimem config --json | jq .backend
    """
    from dataclasses import fields

    from .config import ENV_VARS, Settings, load_settings

    ws = open_workspace(root, must_exist=False)
    settings = load_settings(ws.root)
    rows = {
        f.name: {"value": getattr(settings, f.name), "from": settings.where(f.name), "env": ENV_VARS.get(f.name)}
        for f in fields(Settings)
        if f.name != "origin"
    }
    if as_json:
        emit_json(rows)
        return
    width = max(len(name) for name in rows)
    for name, row in rows.items():
        click.echo(f"{name:<{width}}  {row['value']!s:<24}  ({row['from']})")


def entry_point() -> None:
    """The `wikimem` command (the console script and `python -m wikimem.cli`): main(), then the
    process ends without freeing its objects one by one. Python's own exit takes each module
    apart and frees every object a command left alive: 0.12-0.16 s after a first compile of the
    Sphinx trees, a fortieth of it, spent on memory the process is giving back anyway. The exit
    handlers still run (logging, multiprocessing) and stdout and stderr are flushed; a process
    that still has threads or child processes (none should be left) exits as Python does."""
    import atexit
    import threading

    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:  # pragma: no cover - click's standalone main always ends with SystemExit
        code = 0
    processes = sys.modules.get("multiprocessing")  # none started where it was never imported
    if threading.active_count() > 1 or (processes is not None and processes.active_children()):
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as Python prints a SystemExit's message
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # what Python's own exit gives when it cannot flush (a reader gone)
    os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    entry_point()

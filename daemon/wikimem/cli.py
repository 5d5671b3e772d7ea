"""The command line: a thin adapter over the core. stdout carries data, stderr carries people's text.

Exit codes (a contract, see README): 0 ok, 1 error, 2 usage, 3 lint found errors,
4 workspace busy (another writer holds the lock).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import WikimemError

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
    """A progress line on stderr for long compiles; nothing when quiet or not a terminal."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.count = 0

    def __call__(self, path: str, total: int, step: int) -> None:
        if not self.enabled:
            return
        self.count += step
        click.echo(f"\r\033[Kcompiling {self.count}/{total} {path[-60:]}", err=True, nl=False)

    def close(self) -> None:
        if self.enabled and self.count:
            click.echo("\r\033[K", err=True, nl=False)


@main.command()
@root_option
@backend_option
@click.option("--rebuild", is_flag=True, help="Re-render every page, even where nothing changed.")
@click.option("--wait", type=float, default=0.0, show_default=True, help="Seconds to wait for another writer.")
@json_option
@quiet_option
@handle_errors
def compile(root: Path | None, backend: str | None, rebuild: bool, wait: float, as_json: bool, quiet: bool) -> None:  # noqa: A001
    """Compile new and changed sources in raw/ into wiki/ (incremental; a no-op writes nothing).

    \b
    Example:
      wikimem compile --root ~/notes
      wikimem compile --root ~/notes --json | jq .created
    """
    from .compiler import compile_workspace
    from .config import load_settings

    ws = open_workspace(root)
    settings = load_settings(ws.root, {"backend": backend})
    progress = _Progress(not quiet and not as_json)
    try:
        report = compile_workspace(ws, settings, rebuild=rebuild, progress=progress, wait=wait)
    finally:
        progress.close()
    failed = bool(report.failed)
    if as_json:
        emit_json({"ok": not failed, **report.to_json()})
    elif not quiet:
        print_compile_summary(report)
    if failed:
        sys.exit(EXIT_ERROR)


def print_compile_summary(report: Any) -> None:
    if report.noop:
        say(f"up to date: {report.unchanged} sources, nothing written ({report.seconds:.2f} s)")
        return
    say(
        f"compiled {len(report.compiled)} sources ({report.unchanged} unchanged) with {report.backend} "
        f"in {report.seconds:.2f} s: {len(report.created)} pages created, {len(report.updated)} updated, "
        f"{len(report.removed)} removed"
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
    for warning in report.warnings:
        say(f"  note     {warning}")


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
    options = DaemonOptions.from_settings(settings, polling=polling)
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


if __name__ == "__main__":  # pragma: no cover
    main()

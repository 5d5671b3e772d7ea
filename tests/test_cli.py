"""The command line contract: help for every command, README coverage, exit codes, JSON on stdout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from clitree import all_commands
from conftest import REPO
from wikimem import cli


@pytest.mark.parametrize("name,command", all_commands(), ids=[n for n, _ in all_commands()])
def test_every_command_has_help_with_an_example(name: str, command: click.Command) -> None:
    help_text = (command.help or "").strip()
    assert help_text, f"`wikimem {name}` has no help"
    first = help_text.splitlines()[0]
    assert first.endswith(".") and len(first) <= 100, f"first help line of {name}: {first!r}"
    if not isinstance(command, click.Group):
        assert "Example" in help_text or "example" in help_text, f"`wikimem {name}` help shows no example"
    result = CliRunner().invoke(cli.main, [*name.split(), "--help"])
    assert result.exit_code == 0


def test_every_command_appears_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    for name, _ in all_commands():
        assert re.search(rf"wikimem {re.escape(name)}\b", readme), f"README never shows `wikimem {name}`"


def test_exit_codes_are_documented() -> None:
    readme = (REPO / "README.md").read_text()
    for code in (cli.EXIT_OK, cli.EXIT_ERROR, cli.EXIT_USAGE, cli.EXIT_LINT, cli.EXIT_BUSY):
        assert re.search(rf"^\| {code} \|", readme, re.M), f"exit code {code} missing from README"


def test_usage_errors_exit_2_and_help_is_fast_to_import() -> None:
    result = CliRunner().invoke(cli.main, ["compile", "--no-such-flag"])
    assert result.exit_code == 2
    # `wikimem --help` must not import the heavy optional stacks
    code = ("import sys, wikimem.cli; "
            "bad = [m for m in ('anthropic', 'mcp', 'whoosh', 'watchdog', 'apscheduler', 'pypdf', 'bs4') if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_the_command_ends_with_its_exit_code_its_whole_output_and_its_exit_handlers(tmp_path):
    """`wikimem` (cli.entry_point) leaves without Python's teardown: the exit code, every byte written to
    stdout (more than a pipe holds) and the exit handlers are as they would be with it."""
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    ws = Workspace.at(tmp_path / "w")
    init_workspace(ws)
    for i in range(1500):
        (ws.wiki / "concepts" / f"c{i}.md").write_text(f"---\ntitle: C {i}\nkind: concept\nsources: []\n---\n# C {i}\n")
    CliRunner().invoke(cli.main, ["lint", "--root", str(ws.root)])  # the first lists the pages in index.md
    expected = CliRunner().invoke(cli.main, ["lint", "--root", str(ws.root), "--json"])
    marker = tmp_path / "exit-handler-ran"
    script = (f"import atexit, pathlib; atexit.register(pathlib.Path({str(marker)!r}).write_text, 'ran'); "
              "from wikimem.cli import entry_point; entry_point()")
    env = {**os.environ, "WIKIMEM_TESTING": ""}
    done = subprocess.run([sys.executable, "-c", script, "lint", "--root", str(ws.root), "--json"],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == expected.exit_code
    got, want = json.loads(done.stdout), json.loads(expected.output)
    assert len(done.stdout) > 65536 and len(got["findings"]) == 1500
    assert (got["findings"], got["counts"]) == (want["findings"], want["counts"])
    assert marker.read_text() == "ran"
    usage = subprocess.run([sys.executable, "-m", "wikimem.cli", "compile", "--no-such-flag"],
                           capture_output=True, env=env, timeout=60)
    assert usage.returncode == cli.EXIT_USAGE and b"--no-such-flag" in usage.stderr
    missing = subprocess.run([sys.executable, "-m", "wikimem.cli", "status", "--root", str(tmp_path / "nowhere")],
                             capture_output=True, env=env, timeout=60)
    assert missing.returncode == cli.EXIT_USAGE and b"not a wikimem workspace" in missing.stderr


@pytest.mark.slow
def test_a_reader_that_stops_early_gets_no_error(tmp_path):
    """`wikimem lint | head -1`: when the reader closes the pipe, wikimem stops quietly (no
    "internal error" line), as Unix tools do."""
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    ws = Workspace.at(tmp_path / "w")
    init_workspace(ws)
    for i in range(1500):  # 1,500 orphan pages: far more findings than a pipe buffer holds
        (ws.wiki / "concepts" / f"c{i}.md").write_text(f"---\ntitle: C {i}\nkind: concept\nsources: []\n---\n# C {i}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "wikimem.cli", "lint", "--root", str(ws.root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "WIKIMEM_TESTING": ""},
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert first.startswith(b"warning") or first.startswith(b"info")
    assert "internal error" not in err and "Traceback" not in err, err

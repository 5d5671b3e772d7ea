"""The service files we tell people to copy: they parse, run the right command, and
docs/daemon.md shows how to install them."""

from __future__ import annotations

import configparser
import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

UNIT = REPO / "contrib" / "systemd" / "wikimem@.service"
PLIST = REPO / "contrib" / "launchd" / "dev.wikimem.notes.plist"


def test_systemd_unit_runs_the_daemon_and_does_not_restart_a_refusal() -> None:
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(UNIT.read_text(encoding="utf-8"))
    service = unit["Service"]
    assert service["ExecStart"] == "%h/.local/bin/wikimem run --root %h/%I"
    assert service["KillSignal"] == "SIGTERM"
    assert set(service["RestartPreventExitStatus"].split()) == {"2", "4"}
    assert unit["Install"]["WantedBy"] == "default.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    # verify an instance whose command exists: the template with ExecStart pointed at this python
    text = UNIT.read_text(encoding="utf-8").replace("%h/.local/bin/wikimem", shutil.which("python3") or "/bin/true")
    (tmp_path / "wikimem@.service").write_text(text, encoding="utf-8")
    (tmp_path / "wikimem@notes.service").symlink_to(tmp_path / "wikimem@.service")
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "wikimem@notes.service")],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "Failed to initialize manager" in done.stderr:
        pytest.skip("systemd-analyze cannot run here: " + done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr


def test_launchd_plist_parses_and_runs_the_daemon() -> None:
    with open(PLIST, "rb") as handle:
        plist = plistlib.load(handle)
    assert plist["Label"] == "dev.wikimem.notes"
    assert plist["ProgramArguments"][1:] == ["run", "--root", "/Users/YOU/notes"]
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["RunAtLoad"] is True


def test_daemon_docs_say_how_to_install_both() -> None:
    page = (REPO / "docs" / "daemon.md").read_text(encoding="utf-8")
    assert "contrib/systemd/wikimem@.service" in page
    assert "contrib/launchd/dev.wikimem.notes.plist" in page
    assert "systemctl --user enable --now wikimem@notes" in page
    assert "launchctl bootstrap" in page

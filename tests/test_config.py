"""Settings precedence: flag > environment > wikimem.toml > default, each with its origin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wikimem.cli import main
from wikimem.config import load_settings
from wikimem.errors import UsageError


def test_precedence_and_origin(tmp_path: Path) -> None:
    (tmp_path / "wikimem.toml").write_text('backend = "anthropic"\nmax_source_mb = 3\nmodel = "m-toml"\n')
    settings = load_settings(tmp_path, {"backend": "offline"}, environ={"WIKIMEM_MODEL": "m-env"})
    assert (settings.backend, settings.where("backend")) == ("offline", "flag")
    assert (settings.model, settings.where("model")) == ("m-env", "env")
    assert (settings.max_source_mb, settings.where("max_source_mb")) == (3.0, "wikimem.toml")
    assert settings.where("debounce_seconds") == "default"


@pytest.mark.parametrize("text,message", [
    ("backend = \n", "not valid TOML"),
    ("nonesuch = 1\n", "unknown setting"),
    ("max_source_mb = \"lots\"\n", "must be a number"),
])
def test_bad_config_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "wikimem.toml").write_text(text)
    with pytest.raises(UsageError, match=message) as info:
        load_settings(tmp_path, environ={})
    assert "\n" not in str(info.value)


def test_config_command_says_where_each_value_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "wikimem.toml").write_text("max_source_mb = 2\n")
    monkeypatch.setenv("WIKIMEM_BACKEND", "offline")
    result = CliRunner().invoke(main, ["config", "--root", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["backend"]["from"] == "env" and data["max_source_mb"] == {"value": 2.0, "from": "wikimem.toml", "env": "WIKIMEM_MAX_SOURCE_MB"}

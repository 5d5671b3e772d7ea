"""Settings, read in one place: flag > environment > wikimem.toml > default.

Every value remembers where it came from, so `wikimem config` can say why a
setting has the value it has (as pipx's resolve_backend_name does).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import UsageError

CONFIG_FILE = "wikimem.toml"


@dataclass(frozen=True)
class Settings:
    backend: str = "offline"
    model: str = "claude-sonnet-5-5"  # claude-sonnet-4-5 retires 2026-11-30
    max_tokens: int = 16_000  # per turn; current models think before they write, within this limit
    base_url: str | None = None
    max_source_mb: float = 10.0
    max_turns: int = 30
    source_token_budget: int = 400_000
    # the memory tool as Claude's built-in memory_20250818 (Anthropic's API) or as a plain tool
    # with a JSON schema (servers that only take custom tools); auto: by base_url's host
    memory_tool: str = "auto"
    # conversations with the model at once (requests in flight); the backend narrows it when
    # the API says to slow down (429/529) and caps it (backends/anthropic.MAX_CONCURRENCY)
    concurrency: int = 8
    # send each round of the model compile as a Message Batch: half the price, answers within 24 h
    batch: bool = False
    # seconds a compile waits out rejections (429/529) with no request getting through before it stops
    rate_limit_wait: float = 300.0
    debounce_seconds: float = 0.75
    rescan_minutes: float = 10.0
    lint_schedule: str = "every 6h"
    git: str = "auto"
    # name -> "flag" | "env" | "wikimem.toml" | "default"
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)

    def where(self, name: str) -> str:
        return self.origin.get(name, "default")


# environment variable for each setting that may come from the environment
ENV_VARS: dict[str, str] = {
    "backend": "WIKIMEM_BACKEND",
    "model": "WIKIMEM_MODEL",
    "base_url": "ANTHROPIC_BASE_URL",
    "max_source_mb": "WIKIMEM_MAX_SOURCE_MB",
    "git": "WIKIMEM_GIT",
    "concurrency": "WIKIMEM_CONCURRENCY",
}


def _coerce(name: str, value: Any) -> Any:
    kinds = {f.name: f.type for f in fields(Settings)}
    kind = kinds.get(name)
    try:
        if kind in ("int", int):
            return int(value)
        if kind in ("float", float):
            return float(value)
        if kind in ("bool", bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off", ""):
                return False
            raise UsageError(f"setting {name!r} must be true or false, got {value!r}")
        if isinstance(value, bool) and kind == "str":
            return "true" if value else "false"
    except (TypeError, ValueError) as exc:
        raise UsageError(f"setting {name!r} must be a number, got {value!r}") from exc
    return value


def read_toml(root: Path) -> dict[str, Any]:
    path = root / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path.name} is not valid TOML ({exc}); fix it or remove it") from exc
    # accept both a flat file and a [wikimem] table
    table = data.get("wikimem", data)
    return dict(table) if isinstance(table, dict) else {}


def load_settings(
    root: Path,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every setting with its origin."""
    environ = os.environ if environ is None else environ
    known = {f.name for f in fields(Settings)} - {"origin"}
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    toml_values = read_toml(root)
    unknown = sorted(set(toml_values) - known)
    if unknown:
        raise UsageError(
            f"unknown setting(s) in {CONFIG_FILE}: {', '.join(unknown)}; valid: {', '.join(sorted(known))}"
        )
    for name, value in toml_values.items():
        values[name], origin[name] = _coerce(name, value), CONFIG_FILE
    for name, var in ENV_VARS.items():
        if environ.get(var):
            values[name], origin[name] = _coerce(name, environ[var]), "env"
    for name, value in (flags or {}).items():
        if value is not None:
            values[name], origin[name] = _coerce(name, value), "flag"
    settings = Settings(**values, origin=origin)
    if settings.concurrency < 1:
        raise UsageError(
            f"concurrency must be 1 or more, not {settings.concurrency} ({settings.where('concurrency')}): "
            "it is how many conversations with the model run at once"
        )
    if settings.rate_limit_wait < 0:
        raise UsageError(f"rate_limit_wait must be 0 or more seconds, not {settings.rate_limit_wait:g}")
    return settings

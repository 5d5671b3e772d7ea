"""The one JSON contract between a bench module and bench/run.py.

With `--json` every bench module prints exactly one JSON document on stdout:

    {"bench": "<name>", "rows": [ROW, ...], ...any extra keys the module wants}

and each ROW is

    {"figure": str, "value": number|null, "unit": str, "baseline": str,
     "baseline_value": number|null, "goal": str, "note": str,
     "goal_ratio": number, "goal_abs": number, "status": str}   # the last three optional

`goal_ratio`: the goal is value / baseline_value <= goal_ratio; `goal_abs`: the goal is
value <= goal_abs (in `unit`). `status` (one of STATUSES) is set when the module judges the
figure itself (a "higher is better" goal, a failure); without it bench/run.py judges the
row from the goals, or calls it "info". Modules build rows with `row(...)` and print the
document with `emit(...)`; bench/run.py reads it with `parse(...)`, and tests check it with
`validate(...)`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

REQUIRED = ("figure", "value", "unit", "baseline", "baseline_value", "goal", "note")
OPTIONAL = ("goal_ratio", "goal_abs", "status")
FIELDS = REQUIRED + OPTIONAL
STATUSES = ("ok", "over", "info", "error", "skipped", "not available yet")
NUMBERS = ("value", "baseline_value", "goal_ratio", "goal_abs")  # number, or null where allowed
STRINGS = ("figure", "unit", "baseline", "goal", "note", "status")


class ContractError(ValueError):
    """A document or row that does not follow the contract."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def row_errors(data: Any) -> list[str]:
    """What is wrong with one row (empty when it follows the contract)."""
    if not isinstance(data, dict):
        return [f"a row is a JSON object, not {type(data).__name__}"]
    where = f"row {data.get('figure')!r}" if isinstance(data.get("figure"), str) else "a row"
    errors = [f"{where}: missing {key!r}" for key in REQUIRED if key not in data]
    errors += [f"{where}: unknown key {key!r}" for key in data if key not in FIELDS]
    for key in STRINGS:
        if key in data and not isinstance(data[key], str):
            errors.append(f"{where}: {key!r} is a string, not {data[key]!r}")
    for key in NUMBERS:
        if key not in data:
            continue
        nullable = key in ("value", "baseline_value")
        if not (_is_number(data[key]) or (nullable and data[key] is None)):
            errors.append(f"{where}: {key!r} is a finite number{' or null' if nullable else ''}, not {data[key]!r}")
    if isinstance(data.get("figure"), str) and not data["figure"].strip():
        errors.append(f"{where}: 'figure' is empty")
    if isinstance(data.get("status"), str) and data["status"] not in STATUSES:
        errors.append(f"{where}: status {data['status']!r} is not one of {', '.join(STATUSES)}")
    return errors


def errors(document: Any) -> list[str]:
    """What is wrong with a whole document (empty when it follows the contract)."""
    if not isinstance(document, dict):
        return [f"the document is a JSON object, not {type(document).__name__}"]
    out = []
    if not (isinstance(document.get("bench"), str) and document["bench"].strip()):
        out.append("'bench' (the module's name) is missing or not a non-empty string")
    rows = document.get("rows")
    if not isinstance(rows, list):
        out.append("'rows' is missing or not a list")
        return out
    for item in rows:
        out += row_errors(item)
    return out


def validate(document: Any) -> dict[str, Any]:
    """The document itself when it follows the contract; ContractError saying why when not."""
    problems = errors(document)
    if problems:
        raise ContractError("; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""))
    return document  # type: ignore[no-any-return]


def row(figure: str, value: float | None = None, unit: str = "", baseline: str = "",
        baseline_value: float | None = None, goal: str = "", *, note: str = "",
        goal_ratio: float | None = None, goal_abs: float | None = None, status: str | None = None) -> dict[str, Any]:
    """One row, checked: ContractError when a field has the wrong type or status is unknown.

    Values are kept as given (round them before); the optional keys appear only when set.
    """
    data: dict[str, Any] = {"figure": figure, "value": value, "unit": unit, "baseline": baseline,
                            "baseline_value": baseline_value, "goal": goal, "note": note}
    for key, given in (("goal_ratio", goal_ratio), ("goal_abs", goal_abs), ("status", status)):
        if given is not None:
            data[key] = given
    problems = row_errors(data)
    if problems:
        raise ContractError("; ".join(problems))
    return data


def document(name: str, rows: Iterable[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The document: {"bench": name, "rows": rows, **extra}, checked."""
    clash = {"bench", "rows"} & extra.keys()
    if clash:
        raise ContractError(f"extra keys may not be named {', '.join(sorted(clash))}")
    return validate({"bench": name, "rows": list(rows), **extra})


def emit(name: str, rows: Iterable[dict[str, Any]], **extra: Any) -> None:
    """Print the document as the one JSON document on stdout (strict JSON: no NaN)."""
    text = json.dumps(document(name, rows, **extra), indent=1, ensure_ascii=False, allow_nan=False)
    print(text, flush=True)


def parse(stdout: str) -> dict[str, Any]:
    """A module's stdout as a contract document; ContractError when it is not exactly one."""
    if not stdout.strip():
        raise ContractError("printed nothing on stdout")
    try:
        data = json.loads(stdout)
    except ValueError as exc:
        raise ContractError(f"stdout is not one JSON document ({exc})") from None
    return validate(data)

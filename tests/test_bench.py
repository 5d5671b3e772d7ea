"""Smoke tests of the benchmark harness: real processes on tiny workspaces, no timing asserted."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
CORPUS = REPO.parent / "shared" / "corpus"

PARAGRAPHS = [
    "Ownership is a set of rules that govern how a Rust program manages memory. "
    "Every value has an owner, and there can only be one owner at a time.",
    "Go 1.21 requires macOS 10.15 Catalina or later; support for previous versions has been "
    "discontinued. The `go` command now supports the `toolchain` directive.",
    "A *lifetime* is the scope for which a reference is valid. The borrow checker compares "
    "scopes to determine whether all borrows are valid, as in Listing 10-17.",
    "Smart pointers such as `Box<T>` store data on the heap. `Rc<T>` enables multiple owners "
    "of the same data, which is useful for graphs and shared state in 2015 code.",
]


def load(name: str):
    """bench/ is not a package: load a script as a module (dataclasses need it in sys.modules)."""
    key = f"wikimem_bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def tiny_corpus(base: Path) -> Path:
    """A corpus folder laid out like ../shared/corpus, with a handful of our own notes."""
    for c, name in enumerate(("topics", "versions")):
        raw = base / name / "raw"
        raw.mkdir(parents=True)
        for i in range(3):
            body = "\n\n".join(PARAGRAPHS[(i + c + k) % len(PARAGRAPHS)] for k in range(3))
            (raw / f"note-{i}.md").write_text(f"# Notes on memory {c}{i}\n\n## Borrowing rules\n\n{body}\n")
    return base


def test_generated_notes_are_deterministic_and_prefix_stable(tmp_path: Path) -> None:
    scale = load("scale")
    pool = scale.load_pool(tiny_corpus(tmp_path / "corpus"))
    assert pool.paragraphs and pool.headings
    first = [scale.note_text(i, pool) for i in range(5)]
    assert first == [scale.note_text(i, pool) for i in range(5)]
    assert len(set(first)) == 5
    assert scale.note_text(3, pool, seed=1) != first[3]
    # note i does not depend on how many notes are written: same bytes at 4 and at 9 notes
    scale.write_notes(tmp_path / "a", 4, pool=pool)
    scale.write_notes(tmp_path / "b", 9, pool=pool)
    for i in range(4):
        rel = scale.note_path(i)
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    assert len(list((tmp_path / "b").rglob("*.md"))) == 9
    edited = scale.edit_text(first[0], 1, pool)
    assert edited.startswith(first[0].rstrip("\n")) and edited != first[0]


def test_pool_from_the_real_corpora_is_stable() -> None:
    if not (CORPUS / "topics" / "raw").is_dir():
        pytest.skip(f"../shared/corpus is absent ({CORPUS})")
    scale = load("scale")
    assert len(scale.corpus_files()) >= 180
    pool = scale.load_pool()
    assert len(pool.paragraphs) > 1000
    # no code or markup blocks leak into the prose pool
    assert not any(p.startswith(("```", "#", "<", "|", "\t", "    ")) for p in pool.paragraphs)


def test_measure_reports_time_rss_and_output() -> None:
    run = load("run")
    sample = run.measure([sys.executable, "-c", "import sys; b = bytearray(40_000_000); print('out'); "
                          "print('err', file=sys.stderr); sys.exit(3)"], tree=True)
    assert sample.rc == 3
    assert sample.stdout.strip() == "out" and sample.stderr.strip() == "err"
    assert sample.seconds > 0
    assert sample.rss_mb >= 40  # the child's own peak, not the harness's
    assert sample.tree_rss_mb >= sample.rss_mb


def test_snapshot_sees_a_rewrite_with_identical_bytes(tmp_path: Path) -> None:
    run = load("run")
    (tmp_path / "a.md").write_text("same")
    before = run.snapshot(tmp_path)
    assert run.diff(before, run.snapshot(tmp_path)) == []
    tmp = tmp_path / "a.tmp"
    tmp.write_text("same")
    os.replace(tmp, tmp_path / "a.md")  # what an atomic write does
    assert run.diff(before, run.snapshot(tmp_path)) == ["a.md"]


def test_rows_judge_ratio_and_absolute_goals() -> None:
    run = load("run")
    assert run.Row("x", 3.0, "s", "b", 2.0, goal_ratio=1.5).judge().status == "ok"
    assert run.Row("x", 4.0, "s", "b", 2.0, goal_ratio=1.5).judge().status == "over"
    assert run.Row("x", 0.5, "s", "b", 0.1, goal_abs=0.3).judge().status == "over"
    assert run.Row("x", 0.2, "s", "b", 0.1).judge().status == "info"
    text = run.table([run.Row("x", 0.05, "s", "b", 0.1, goal="≤ 1 s", goal_abs=1.0).judge()])
    assert "| x | 50 ms | b: 100 ms | 0.50x | ≤ 1 s | ok |" in text


def test_missing_corpora_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--corpus-root", str(tmp_path / "empty"),
                           "--workdir", str(tmp_path), "--out", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "the corpora are missing" in proc.stderr.strip().splitlines()[-1]
    assert proc.stdout == "" and not (tmp_path / "r.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]  # its work folder was removed


def test_unknown_group_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--only", "noop,speed"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown group speed" in proc.stderr and proc.stdout == ""


def test_figure_modules_missing_failing_and_reporting(tmp_path: Path) -> None:
    run = load("run")
    # plain text timing lines (what bench/lint_bench.py prints), the JSON rows contract, a crash
    (tmp_path / "lint_bench.py").write_text(
        "print('generated 10 pages')\nprint('cold (no lint cache)        6.50 s   10 pages')\n"
        "print('warm (lint cache)           120 ms   10 pages')\n")
    (tmp_path / "daemon_bench.py").write_text(
        "import json, sys\nif '--help' in sys.argv:\n    sys.exit(print('usage: daemon_bench.py [--json]'))\n"
        "assert '--json' in sys.argv\n"
        "print(json.dumps({'rows': [{'figure': 'idle RSS', 'value': 41.0, 'unit': 'MB', 'goal_abs': 60.0}]}))\n")
    (tmp_path / "retrieval.py").write_text("import sys\nprint('retrieval exploded', file=sys.stderr)\nsys.exit(1)\n")
    (tmp_path / "history_bench.py").write_text("print('slow, no quick mode')\n")
    args = run.argparse.Namespace(quick=False, repeats=1, scale=10)
    bench = run.Bench.__new__(run.Bench)
    bench.args, bench.quick, bench.scale, bench.rows, bench.raw_modules = args, False, 10, [], {}
    bench.module_dir = tmp_path
    bench.modules(tmp_path, tmp_path)
    by_fig = {r.figure: r for r in bench.rows}
    assert by_fig["bench/history_bench.py"].status == "info"  # ran, printed no timing lines
    assert by_fig["bench/retrieval.py"].status == "error"
    assert "retrieval exploded" in by_fig["bench/retrieval.py"].note
    assert by_fig["lint_bench: cold (no lint cache)"].status == "over"  # 6.5 s > 5 s
    assert by_fig["lint_bench: warm (lint cache)"].value == pytest.approx(0.12)
    assert by_fig["lint_bench: warm (lint cache)"].status == "ok"
    assert by_fig["idle RSS"].status == "ok" and by_fig["idle RSS"].value == 41.0
    (tmp_path / "retrieval.py").unlink()
    # --quick runs only modules that offer a --quick mode
    bench.quick, bench.rows = True, []
    bench.modules(tmp_path, tmp_path)
    by_fig = {r.figure: r for r in bench.rows}
    assert by_fig["bench/retrieval.py"].status == "not available yet"
    assert by_fig["bench/lint_bench.py"].status == "skipped" and by_fig["bench/history_bench.py"].status == "skipped"


def test_quick_run_end_to_end_on_a_tiny_workspace(tmp_path: Path) -> None:
    """The harness as a user runs it, on a six-note corpus and 12 generated notes.

    MCP, lint and the other modules are left out to keep this fast (each is more processes).
    """
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--scale", "12", "--repeats", "1",
         "--only", "noop,change,search", "--corpus-root", str(tiny_corpus(tmp_path / "corpus")), "--out", str(out),
         "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("\n| ") >= 6 and "| figure | wikimem | baseline (same run) |" in proc.stdout
    result = json.loads(out.read_text())
    rows = {r["figure"]: r for r in result["rows"]}
    # search figures depend on the search engineer's commands; the harness's own must not fail
    own = [r for r in result["rows"] if "search" not in r["figure"]]
    assert len(own) == 6 and not [r for r in own if r["status"] == "error"], result["table"]
    assert len([r for r in result["rows"] if "search" in r["figure"]]) == 2  # cold, warm (no build in quick)
    assert not [r for r in result["rows"] if "MCP" in r["figure"] or "lint" in r["figure"]]
    full = rows["full compile, 6 corpus sources"]
    assert full["value"] > 0 and full["baseline_value"] > 0 and full["ratio"] is not None
    noop = rows["no-op compile, 12 sources"]
    assert noop["extra"]["wrote"] == [] and "wrote nothing" in noop["note"]
    change = rows["one changed source, 12 sources"]
    assert change["extra"]["pages_written"]["big"][0] >= 1  # the edit really recompiled the note
    assert rows["peak RSS of a full compile, 12 sources"]["value"] > 10
    # the temporary workspaces are gone; only the result we asked for remains
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "result.json"]

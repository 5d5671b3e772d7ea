"""Smoke tests of the benchmark harness: real processes on tiny workspaces, no timing asserted."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, CORPUS_HOW

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"

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
        pytest.skip(f"../shared/corpus is absent ({CORPUS}): {CORPUS_HOW}")
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
    contract = load("contract")
    # the contract's rows, a module printing plain text, one printing a broken row, a crash;
    # every module is written next to a copy of contract.py, as in bench/
    (tmp_path / "contract.py").write_text((BENCH / "contract.py").read_text())
    (tmp_path / "daemon_bench.py").write_text(
        "import sys\nimport contract\nif '--help' in sys.argv:\n    sys.exit(print('usage: daemon_bench.py [--json] [--quick]'))\n"
        "assert '--json' in sys.argv\n"
        "contract.emit('daemon_bench', [contract.row('idle RSS', 41.0, 'MB', goal='≤ 60 MB', goal_abs=60.0),\n"
        "    contract.row('burst', 2.5, 's', status='info', note='1 compile')], quick='--quick' in sys.argv)\n")
    (tmp_path / "lint_bench.py").write_text(
        "print('generated 10 pages')\nprint('cold (no lint cache)        6.50 s   10 pages')\n")
    (tmp_path / "reading.py").write_text(
        "import json\nprint(json.dumps({'bench': 'reading', 'rows': [{'figure': 'titles', 'value': '7'}]}))\n")
    (tmp_path / "retrieval.py").write_text("import sys\nprint('retrieval exploded', file=sys.stderr)\nsys.exit(1)\n")
    (tmp_path / "history_bench.py").write_text(
        "import sys\nimport contract\ncontract.emit('history_bench', [], note='no rows')\n")
    args = run.argparse.Namespace(quick=False, repeats=1, scale=10)
    bench = run.Bench.__new__(run.Bench)
    bench.args, bench.quick, bench.scale, bench.rows, bench.raw_modules = args, False, 10, [], {}
    bench.module_dir = tmp_path
    bench.modules(tmp_path, tmp_path)
    by_fig = {r.figure: r for r in bench.rows}
    assert by_fig["idle RSS"].status == "ok" and by_fig["idle RSS"].value == 41.0
    assert by_fig["idle RSS"].extra["module"] == "daemon_bench"
    assert by_fig["burst"].status == "info" and by_fig["burst"].note == "1 compile"
    assert bench.raw_modules["daemon_bench"] == {"bench": "daemon_bench", "quick": False}
    assert by_fig["bench/lint_bench.py"].status == "error"  # plain text is no longer guessed at
    assert "no valid bench contract" in by_fig["bench/lint_bench.py"].note
    assert by_fig["bench/reading.py"].status == "error" and "missing 'unit'" in by_fig["bench/reading.py"].note
    assert by_fig["bench/retrieval.py"].status == "error"
    assert "retrieval exploded" in by_fig["bench/retrieval.py"].note
    assert by_fig["bench/history_bench.py"].status == "info"  # a valid document without rows
    assert by_fig["bench/navigation.py"].status == "not available yet"
    # every row the modules gave follows the contract, and the table shows them
    assert {r.status for r in bench.rows} <= set(contract.STATUSES)
    assert "| idle RSS | 41 MB |" in run.table(bench.rows)
    # --quick runs only modules that offer a --quick mode, and passes it on
    bench.quick, bench.rows, bench.raw_modules = True, [], {}
    bench.modules(tmp_path, tmp_path)
    by_fig = {r.figure: r for r in bench.rows}
    assert by_fig["idle RSS"].status == "ok" and bench.raw_modules["daemon_bench"]["quick"] is True
    assert by_fig["bench/lint_bench.py"].status == "skipped" and by_fig["bench/history_bench.py"].status == "skipped"


@pytest.mark.slow
def test_quick_run_end_to_end_on_a_tiny_workspace(tmp_path: Path) -> None:
    """The harness as a user runs it, on a six-note corpus and 12 generated notes.

    MCP, lint and the other modules are left out to keep this fast (each is more processes).
    """
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--scale", "12", "--repeats", "1",
         "--only", "noop,change,search", "--corpus-root", str(tiny_corpus(tmp_path / "corpus")), "--out", str(out),
         "--workdir", str(tmp_path), "--qmd", "none"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("\n| ") >= 6 and "| figure | wikimem | baseline (same run) |" in proc.stdout
    result = json.loads(out.read_text())
    rows = {r["figure"]: r for r in result["rows"]}
    # search figures depend on the search engineer's commands; the harness's own must not fail
    own = [r for r in result["rows"] if "search" not in r["figure"]]
    assert len(own) == 6 and not [r for r in own if r["status"] == "error"], result["table"]
    # cold search and its peak RSS at both sizes, against a plain index and against the same index;
    # from nothing to searchable; a folder's fifth file (it becomes a collection); a file dropped
    # and a file changed, each then found by search; warm in-process (no build in quick)
    assert sorted(r["figure"].split(",")[0] for r in result["rows"] if "search" in r["figure"]) == [
        "a new file dropped", *["cold search process"] * 4, *["cold search process peak RSS"] * 4,
        "fifth file into a new folder", "from nothing to searchable", "one changed file", "warm search p50 in-process"]
    for small in ("a new file dropped, then searchable, 6 corpus sources",
                  "one changed file, then found by search, 6 corpus sources"):
        assert rows[small]["baseline"] == "plain whoosh update + a query" and rows[small]["status"] != "error"
    assert result["peers"] == {"qmd": None} and not [r for r in result["rows"] if "qmd" in r["figure"]]
    assert not [r for r in result["rows"] if "MCP" in r["figure"] or "lint" in r["figure"]]
    full = rows["full compile, 6 corpus sources"]
    assert full["value"] > 0 and full["baseline_value"] > 0 and full["ratio"] is not None
    noop = rows["no-op compile, 12 sources"]
    assert noop["extra"]["wrote"] == [] and "wrote nothing" in noop["note"]
    change = rows["one changed source, 12 sources"]
    assert change["extra"]["pages_written"]["big"][0] >= 1  # the edit really recompiled the note
    assert rows["peak memory (PSS) of a full compile, 12 sources"]["value"] > 10
    # the temporary workspaces are gone; only the result we asked for remains
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "result.json"]


# --- the bench contract (bench/contract.py): every module's --json ---------------------------------

# every bench/*.py that is a figure module, not the harness or its helpers
HELPERS = {"run", "scale", "baselines", "contract", "alternate", "heldout", "questions", "peers", "phases"}  # not figure modules of run.py (heldout needs PyPI; questions a compiled 10k workspace; phases a command to time)


def figure_modules() -> list[str]:
    return sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in HELPERS)


def valid(document: dict) -> dict:
    """The document as bench/run.py reads it: strict JSON text, then the contract."""
    contract = load("contract")
    return contract.parse(json.dumps(document, allow_nan=False))


def test_contract_rows_and_documents() -> None:
    contract = load("contract")
    row = contract.row("cold search", 0.12, "s", "plain whoosh", 0.1, "≤ 1.0x", goal_ratio=1.0, note="n=3")
    assert row == {"figure": "cold search", "value": 0.12, "unit": "s", "baseline": "plain whoosh",
                   "baseline_value": 0.1, "goal": "≤ 1.0x", "note": "n=3", "goal_ratio": 1.0}
    assert contract.row("x", status="info")["value"] is None
    for bad in ({"value": "7"}, {"value": True}, {"value": float("nan")}, {"status": "fine"}, {"unit": None}):
        with pytest.raises(contract.ContractError):
            contract.row("x", **bad)
    with pytest.raises(contract.ContractError, match="goal_abs"):  # optional keys are numbers when present
        contract.validate({"bench": "b", "rows": [{**contract.row("x"), "goal_abs": None}]})
    with pytest.raises(contract.ContractError, match="figure"):
        contract.row(" ")
    doc = contract.document("b", [row], machine="m")
    assert doc == {"bench": "b", "rows": [row], "machine": "m"}
    with pytest.raises(contract.ContractError, match="bench"):
        contract.document("b", [row], bench="other")
    assert contract.parse(json.dumps(doc)) == doc
    for text, why in (("", "nothing"), ("cold 1.2 s", "not one JSON"), (json.dumps(doc) * 2, "not one JSON"),
                      ('{"rows": []}', "bench"), ('{"bench": "b"}', "rows"), ("[]", "object"),
                      (json.dumps({"bench": "b", "rows": [{**row, "samples": []}]}), "unknown key 'samples'"),
                      (json.dumps({"bench": "b", "rows": [{k: v for k, v in row.items() if k != "note"}]}), "'note'")):
        with pytest.raises(contract.ContractError, match=why):
            contract.parse(text)


def test_emit_prints_exactly_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    contract = load("contract")
    contract.emit("b", [contract.row("x", 1.5, "s", goal="≤ 2 s", goal_abs=2.0)], figures={"n": 3})
    out = capsys.readouterr().out
    assert contract.parse(out) == json.loads(out)
    assert json.loads(out)["figures"] == {"n": 3}


def test_run_lists_every_figure_module() -> None:
    assert sorted(load("run").MODULES) == figure_modules()


@pytest.mark.parametrize("name", figure_modules())
def test_module_help_offers_json(name: str) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--json" in proc.stdout


def test_retrieval_json_on_a_tiny_corpus(tmp_path: Path) -> None:
    retrieval = load("retrieval")
    corpus_root = tiny_corpus(tmp_path / "corpus")
    probes = tmp_path / "probes.jsonl"
    probes.write_text("".join(json.dumps(p) + "\n" for p in (
        {"id": "p1", "corpus": "topics", "kind": "easy", "question": "Who owns a value in Rust?",
         "source": "topics/raw/note-0.md", "evidence": "Every value has an owner"},
        {"id": "p2", "corpus": "versions", "kind": "hard", "question": "Which macOS does Go 1.21 require?",
         "source": "versions/raw/note-0.md", "evidence": "Go 1.21 requires macOS 10.15 Catalina or later"},
    )))
    result = retrieval.run(probes, corpus_root)
    doc = valid(retrieval.contract.document("retrieval", retrieval.figure_rows(result), **result))
    assert [r["figure"] for r in doc["rows"]] == ["retrieval recall@5, 2 probes", "retrieval MRR, 2 probes"]
    assert doc["wikimem"]["probes"] == 2 and len(doc["samples"]) == 2


def test_navigation_json_on_a_tiny_corpus(tmp_path: Path) -> None:
    corpus_root = tiny_corpus(tmp_path / "corpus")
    (corpus_root / "probes-public.jsonl").write_text(json.dumps(
        {"id": "p1", "corpus": "topics", "kind": "easy", "question": "Who owns a value?", "answer": "owner",
         "source": "topics/raw/note-0.md", "evidence": "Every value has an owner"}) + "\n")
    proc = subprocess.run([sys.executable, str(BENCH / "navigation.py"), "--corpus-root", str(corpus_root),
                           "--corpora", "topics", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load("contract").parse(proc.stdout)
    assert doc["bench"] == "navigation" and set(doc["figures"]) == {"topics"} and len(doc["samples"]) == 1
    assert len(doc["rows"]) == 4  # one corpus: every figure against its goal
    # a pooled run: the goals on "overall" and "all", the median alone per corpus; a failed corpus
    nav = load("navigation")
    fig = doc["figures"]["topics"]
    rows = nav.figure_rows({"figures": {"topics": fig, "sphinx": {"error": "compile failed"},
                                        "overall": {**fig, "median_bytes": None, "median_index_bytes": None},
                                        "all": fig}})
    valid({"bench": "navigation", "rows": rows})
    by_fig = {r["figure"]: r for r in rows}
    assert len(rows) == 1 + 1 + 4 + 4 and by_fig["navigation, sphinx"]["status"] == "error"
    assert by_fig["navigation median bytes to the evidence, overall"]["status"] == "over"


@pytest.mark.slow  # four processes and a compile
def test_reading_json_on_a_tiny_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "quickstart.rst").write_text("Flask\n=====\n\nUse :func:`run` to serve.\n\nInstall\n-------\n\nWith pip.\n")
    (corpus / "notes.md").write_text("# Notes\n\n" + PARAGRAPHS[0] + "\n")
    proc = subprocess.run([sys.executable, str(BENCH / "reading.py"), "--corpus", str(corpus), "--repeats", "1",
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load("contract").parse(proc.stdout)
    assert doc["figures"]["rst_titles_total"] == 1 and len(doc["rows"]) == 4
    missing = subprocess.run([sys.executable, str(BENCH / "reading.py"), "--corpus", str(tmp_path / "none"),
                              "--json"], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and load("contract").parse(missing.stdout)["rows"][0]["status"] == "error"


def test_lint_bench_json_on_a_tiny_wiki() -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "lint_bench.py"), "--pages", "20", "--repeats", "1",
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load("contract").parse(proc.stdout)
    assert doc["pages"] >= 20 and len(doc["rows"]) == 5
    assert all(r["goal_abs"] == 5.0 and r["unit"] == "s" for r in doc["rows"])


@pytest.mark.slow  # git repositories, eight compiles
def test_history_bench_json_on_three_sources(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path / "corpus") / "topics" / "raw"
    proc = subprocess.run([sys.executable, str(BENCH / "history_bench.py"), "--corpus", str(corpus),
                           "--sources", "2", "--repeats", "1", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load("contract").parse(proc.stdout)
    assert doc["sources"] == 2 and len(doc["rows"]) == 5
    assert doc["rows"][0]["baseline"] == "the same with git = false"


def test_daemon_search_speed_and_anthropic_rows_from_fake_results() -> None:
    """These three run daemons, servers or large compiles: their rows are checked on made-up figures."""
    daemon = load("daemon_bench").figure_rows({
        "base_sources": 112, "drops": 20, "burst": 200, "idle_seconds": 10.0, "drop_to_page_median_s": 0.46,
        "drop_to_page_p90_s": 0.76, "one_shot_compile_after_drop_median_s": 0.78, "drop_to_searchable_median_s": 0.5,
        "burst_to_all_pages_s": 2.7, "burst_compiles": 1, "burst_write_s": 0.01, "peak_rss_mb": 53.6,
        "rss_after_burst_mb": 53.6, "children_rss_after_burst_mb": 0.0, "idle_rss_mb": 34.0,
        "bare_python_rss_mb": 8.0, "idle_cpu_percent": 0.0})
    assert len(valid({"bench": "daemon_bench", "rows": daemon})["rows"]) == 6
    speed = load("search_speed").figure_rows({
        "sources": 1000, "index_build_s": 3.2, "indexed_files": 2400, "noop_update_ms_p50": 4.1,
        "cold_search_ms_median": 420.0, "bare_whoosh_process_ms_median": 300.0, "mcp_warm_search_ms_p50": 6.1,
        "mcp_warm_search_ms_p95": 12.0, "mcp_first_round_ms_p50": 9.0, "mcp_queries": 69,
        "engine_search_ms_p50": 2.0, "engine_search_ms_p95": 5.5, "engine_first_round_ms_p50": 4.0,
        "engine_warm_up_ms": 150, "engine_queries": 69})
    assert len(valid({"bench": "search_speed", "rows": speed})["rows"]) == 5
    pipeline = load("anthropic_bench").figure_rows([
        {"corpus": "formats", "sources": 19, "failed": 0, "requests": 60, "seconds": 4.2, "ms_per_request": 70.0,
         "offline_seconds": 1.1, "lint_errors": 0},
        {"corpus": "topics", "sources": 112, "failed": 1, "requests": 300, "seconds": 20.0, "ms_per_request": 66.7,
         "offline_seconds": 3.0, "lint_errors": 2}])
    assert [r["status"] for r in valid({"bench": "anthropic_bench", "rows": pipeline})["rows"]] == ["ok", "over"]


def test_concepts_json_on_a_tiny_corpus(tmp_path: Path) -> None:
    corpus_root = tiny_corpus(tmp_path / "corpus")
    listfile = tmp_path / "concepts.txt"
    listfile.write_text("# what a reader expects\nborrowing|borrowing rules\nunicorns\n")
    ws = tmp_path / "ws"
    load("concepts").build(corpus_root / "topics" / "raw", ws)
    proc = subprocess.run([sys.executable, str(BENCH / "concepts.py"), "--wiki", str(ws), "--list", str(listfile),
                           "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load("contract").parse(proc.stdout)
    assert doc["bench"] == "concepts" and doc["rows"]
    coverage = doc["corpora"][0]["coverage"]
    assert coverage["concepts"] == 2 and "unicorns" in coverage["missed"]


def test_alternate_compiles_two_commits_in_turn_beside_whoosh(tmp_path: Path) -> None:
    """bench/alternate.py: each commit checked out in a worktree of its own, compiled in turn with
    the whoosh baseline, the ratios printed; the worktrees are gone after."""
    corpus = tmp_path / "raw"
    corpus.mkdir()
    for n in range(3):
        (corpus / f"note-{n}.md").write_text(f"# Note {n}\n\nThe widget {n} needs a gear.\n", encoding="utf-8")
    before = subprocess.run(["git", "-C", str(BENCH.parent), "worktree", "list"], capture_output=True, text=True)
    if before.returncode != 0:
        pytest.skip("not a git checkout")
    proc = subprocess.run([sys.executable, str(BENCH / "alternate.py"), "HEAD", "HEAD", "--corpus", str(corpus),
                           "--rounds", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"round 1: before \d+\.\d\d s, after \d+\.\d\d s, whoosh \d+\.\d\d s", proc.stdout), proc.stdout
    assert re.search(r": after/before \d+\.\d\d \(.*\), after/whoosh \d+\.\d\d", proc.stdout), proc.stdout
    # --cpu: the two compiles at the same time, their CPU seconds compared
    proc = subprocess.run([sys.executable, str(BENCH / "alternate.py"), "HEAD", "HEAD", "--corpus", str(corpus),
                           "--rounds", "1", "--cpu"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r"round 1: CPU before (\d+\.\d\d) s, after (\d+\.\d\d) s", proc.stdout)
    assert found and float(found[1]) > 0.1 and float(found[2]) > 0.1, proc.stdout  # the interpreter's start alone
    assert re.search(r": CPU after/before \d+\.\d\d \(.*\); 1 rounds, run together", proc.stdout), proc.stdout
    after = subprocess.run(["git", "-C", str(BENCH.parent), "worktree", "list"], capture_output=True, text=True)
    assert after.stdout == before.stdout


def test_phases_times_a_compiles_steps_in_the_process_that_runs_each(tmp_path: Path) -> None:
    """bench/phases.py: the command runs as the CLI runs it (the wiki is written); each process
    says what it timed itself, with spans in wall time, totals alone with --cpu."""
    ws = tmp_path / "ws"
    env = dict(os.environ, PYTHONPATH=str(REPO / "daemon"))
    subprocess.run([sys.executable, "-m", "wikimem.cli", "init", str(ws)], env=env, check=True, capture_output=True)
    for i in range(3):
        (ws / "raw" / f"note-{i}.md").write_text(f"# Note {i}\n\n{PARAGRAPHS[i]}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BENCH / "phases.py"), "--", "compile", "--root", str(ws), "-q"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (ws / "wiki" / "sources" / "note-0.md").is_file()
    lines = [line for line in proc.stderr.splitlines() if line.startswith("pid ")]
    assert lines, proc.stderr
    mine = [line for line in lines if "compile_workspace" in line]
    assert len(mine) == 1 and re.search(r"_Compile\.count \d+ \[\d+-\d+\]", mine[0]), proc.stderr
    assert re.search(r"compile_workspace \d+ \[(\d+)-(\d+)\]", mine[0])
    proc = subprocess.run([sys.executable, str(BENCH / "phases.py"), "--cpu", "--fn", "wikimem.compiler:plan",
                           "--", "compile", "--root", str(ws), "-q"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("pid ")]
    assert len(said) == 1 and re.fullmatch(r"pid \d+: plan \d+", said[0]), proc.stderr


def test_merge_bench_rows_follow_the_contract() -> None:
    merge_bench = load("merge_bench")
    case = {"conflicts": 0, "kept": 0, "differ": 0, "pull_s": 1.0}
    results = {
        "codes": ["main", "HEAD"], "commits": ["aaa", "bbb"],
        "merge": [{**case, "corpus": "topics", "code": code, "first": first, "conflicts": 3 if code == "main" else 0}
                  for code in ("main", "HEAD") for first in ("a", "b")],
        "damage": [{"code": code, "form": form, "git": git, "made": 2, "kept": 2 if code == "HEAD" else 0}
                   for code in ("main", "HEAD") for form in merge_bench.FORMS for git in (False, True)],
        "noop": {"scale": 100, "median_s": {"main": 0.5, "HEAD": 0.5}, "ratio_after_before": 1.0,
                 "cpu_ratio_after_before": 1.0},
    }
    doc = valid(load("contract").document("merge_bench", merge_bench.figure_rows(results)))
    rows = {r["figure"]: r for r in doc["rows"]}
    conflicts = rows["two clones pulling each other, topics: conflicts (both orders)"]
    assert conflicts["value"] == 0 and conflicts["baseline_value"] == 6 and conflicts["goal_abs"] == 0
    kept = next(r for f, r in rows.items() if f.startswith("a person's lines kept"))
    assert kept["value"] == 36 and kept["status"] == "ok"
    assert rows["no-op compile, 100 sources"]["goal_ratio"] == 1.1


# --- peers (bench/peers.py): qmd found, isolated and asked as run.py asks it --------------------

FAKE_QMD = '''\
"""A stand-in for qmd: the commands and output bench/peers.py uses, over files it lists itself."""
import json, os, pathlib, sys
home = pathlib.Path(os.environ["HOME"])
state = home / ".cache" / "qmd" / "fake.json"
args = sys.argv[1:]
if args[:1] == ["status"]:
    sys.exit(int(os.environ.get("FAKE_QMD_STATUS", "0")))
if args[:1] == ["--version"]:
    print("qmd 9.9.9 (fake)")
elif args[:2] == ["collection", "add"]:
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"root": args[2], "files": {}}))
    args = ["update"]
if args[:1] == ["update"]:
    data = json.loads(state.read_text())
    root = pathlib.Path(data["root"])
    data["files"] = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.md")}
    state.write_text(json.dumps(data))
elif args[:1] == ["search"]:
    files = json.loads(state.read_text())["files"]
    print(json.dumps([{"file": "qmd://raw/" + rel} for rel, text in sorted(files.items()) if args[1] in text]))
'''


def test_qmd_is_found_isolated_and_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    peers = load("peers")
    fake = tmp_path / "fake_qmd.py"
    fake.write_text(FAKE_QMD)
    spec = f"{sys.executable} {fake}"
    assert peers.Qmd.find("none", tmp_path) == (None, "")
    monkeypatch.setenv("FAKE_QMD_STATUS", "139")
    qmd, why = peers.Qmd.find(spec, tmp_path / "work")
    assert qmd is None and "status` exited 139" in why and "Node.js 22" in why
    monkeypatch.delenv("FAKE_QMD_STATUS")
    monkeypatch.setenv("WIKIMEM_BENCH_QMD", spec)  # found without --qmd
    qmd, why = peers.Qmd.find(None, tmp_path / "work")
    assert qmd is not None and why == "" and qmd.version == "9.9.9" and qmd.label.startswith("qmd 9.9.9")
    raw = tmp_path / "raw"
    (raw / "a").mkdir(parents=True)
    (raw / "a" / "kettle.md").write_text("# Kettle\n\nThe kettle boils.\n")
    home = qmd.indexed(raw)
    assert qmd.indexed(raw) == home and home.is_relative_to(tmp_path / "work")  # made once, in the work folder
    assert (home / ".cache" / "qmd" / "fake.json").is_file()  # its index is in that home, not the user's

    def ask(cmd: list[str]) -> str:
        return subprocess.run(cmd, env=qmd.env(home), capture_output=True, text=True, check=True).stdout

    assert peers.found(ask(qmd.search_cmd("boils")), "a/kettle.md")
    (raw / "a" / "teapot.md").write_text("The teapot pours.\n")
    assert not peers.found(ask(qmd.search_cmd("pours")), "a/teapot.md")  # not seen before its update
    ask(qmd.update_cmd())
    assert peers.found(ask(qmd.search_cmd("pours")), "a/teapot.md")
    assert not peers.found("not json", "a/teapot.md")
    call = qmd.mcp_search(3, "trait objects")
    assert call["params"]["arguments"] == {"searches": [{"type": "lex", "query": "trait objects"}], "limit": 10,
                                           "rerank": False}

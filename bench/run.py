"""wikimem benchmarks: every figure beside a baseline measured in the same run, as a ratio.

    python bench/run.py            # full: the 187-source corpora, 1k and 10k generated sources
    python bench/run.py --quick    # under a minute on 2 cores: 300 generated sources, fewer repeats
    python bench/run.py --scale 2000 --repeats 5

Prints a Markdown table on stdout (progress on stderr) and writes the full result,
every sample included, as JSON to bench/results/ (gitignored).

Each figure is the median of several runs of a separate process (`wikimem ...` as a
user runs it), interleaved with runs of its baseline (plain whoosh, or a bare walk of
raw/), so a machine busy with other work slows both alike and the ratio holds.
Absolute times are indicative only. Peak memory is the child's own ru_maxrss (os.wait4).

The figure modules (MODULES: bench/retrieval.py, bench/lint_bench.py, ...) run after the
figures above, each as `python bench/<name>.py --json` (plus `--quick`, `--scale N`,
`--corpus-root DIR` when its --help offers them; a quick run skips a module without
--quick). Each prints one JSON document, the bench contract of bench/contract.py, and its
rows join the table as they are; a missing module is a "not available yet" row, one that
fails or prints no valid contract an "error" row. They may read WIKIMEM_BENCH_SCALE_ROOT (a
compiled generated workspace of --scale sources), WIKIMEM_BENCH_CORPUS_ROOT (the compiled
187-source workspace) and WIKIMEM_BENCH_QUICK.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "daemon"))
sys.path.insert(0, str(HERE))

import contract  # noqa: E402 - bench/contract.py, next to this file
import peers  # noqa: E402 - bench/peers.py, next to this file
import scale  # noqa: E402 - bench/scale.py, next to this file

PY = sys.executable
RESULTS = HERE / "results"
SMALL = 100  # the small generated workspace a single-source change is compared against
EPOCH = "1798675200"
# figure groups --only can pick; the full compiles also run whenever a figure needs their wiki
GROUPS = ("compile", "noop", "change", "search", "mcp", "lint", "modules")
SCALE_GROUPS = {"compile", "noop", "change", "search", "mcp", "lint"}  # SOURCE_DATE_EPOCH for every wikimem process: stable `updated:` stamps


# --- running and measuring one process --------------------------------------------------------


@dataclass
class Sample:
    seconds: float
    rss_mb: float  # ru_maxrss from wait4: the largest single process (it or a reaped worker)
    rc: int
    stdout: str
    stderr: str
    tree_rss_mb: float = 0.0  # peak of its process group's summed PSS (group_rss_mb), sampled (0 if not asked)

    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None


def wikimem_cmd() -> list[str]:
    script = Path(PY).with_name("wikimem")
    return [str(script)] if script.exists() else [PY, "-m", "wikimem.cli"]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ANTHROPIC_") and k not in ("WIKIMEM_BACKEND", "WIKIMEM_ROOT")}
    env["SOURCE_DATE_EPOCH"] = EPOCH
    env["PYTHONPATH"] = str(REPO / "daemon") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 1024 / 1024 if hasattr(os, "sysconf") else 4096 / 1024 / 1024


def group_rss_mb(pgid: int) -> float:
    """The memory of every process in a process group (a compile and the processes it forks),
    summed: each one's proportional set size (PSS: a page shared by n processes counts 1/n in
    each, so the pages a forked worker shares with its parent count once), else its RSS."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) == pgid:  # fields after "comm)": state ppid pgrp ...
                total += _pss_mb(entry.name)
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
    return total


def _pss_mb(pid: str) -> float:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    with open(f"/proc/{pid}/statm", "rb") as handle:
        return int(handle.read().split()[1]) * PAGE_MB


def measure(cmd: list[str], *, timeout: float = 1800, env: dict[str, str] | None = None,
            tree: bool = False) -> Sample:
    """Run one process; its wall time and its own peak RSS (wait4 rusage, not the harness's).

    With tree=True a thread also samples the summed RSS of the process's group every 50 ms:
    ru_maxrss is the largest single process, but a compile's worker processes run together.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env or child_env(), start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        peak = [0.0]
        done = threading.Event()

        def sample_tree() -> None:
            while not done.wait(0.05):
                peak[0] = max(peak[0], group_rss_mb(proc.pid))

        sampler = threading.Thread(target=sample_tree, daemon=True) if tree and os.path.isdir("/proc") else None
        if sampler:
            sampler.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            done.set()
            if sampler:
                sampler.join()
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting
        out.seek(0)
        err.seek(0)
        return Sample(seconds, usage.ru_maxrss / 1024, proc.returncode,
                      out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                      max(peak[0], usage.ru_maxrss / 1024) if sampler else 0.0)


def wikimem(*args: str, timeout: float = 1800, tree: bool = False) -> Sample:
    return measure([*wikimem_cmd(), *args], timeout=timeout, tree=tree)


def baseline(*args: str, timeout: float = 1800, tree: bool = False) -> Sample:
    return measure([PY, str(HERE / "baselines.py"), *args], timeout=timeout, tree=tree)


def last_line(text: str) -> str:
    """The line of a traceback worth a table cell: the last one with words (not ExceptionGroup art)."""
    lines = [ln.strip(" |+-") for ln in text.strip().splitlines()]
    lines = [ln for ln in lines if any(c.isalpha() for c in ln)]
    return (lines or ["no output"])[-1][:300]


def checked(sample: Sample, what: str) -> Sample:
    if sample.rc != 0:
        raise BenchError(f"{what} exited {sample.rc}: {last_line(sample.stderr)}")
    return sample


class BenchError(Exception):
    """A measured command failed; the figure becomes an error row, the run goes on."""


# --- rows ---------------------------------------------------------------------------------------


@dataclass
class Row:
    figure: str
    value: float | None = None
    unit: str = "s"
    baseline: str = ""
    baseline_value: float | None = None
    goal: str = ""
    goal_ratio: float | None = None  # the goal is value / baseline_value <= this
    goal_abs: float | None = None  # the goal is value <= this (in `unit`)
    status: str = ""  # one of contract.STATUSES; empty: judged from the goals
    note: str = ""
    samples: list[float] = field(default_factory=list)
    baseline_samples: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.baseline_value:
            return None
        return self.value / self.baseline_value

    def judge(self) -> Row:
        if self.status:
            return self
        checks = []
        if self.goal_ratio is not None and self.ratio is not None:
            checks.append(self.ratio <= self.goal_ratio)
        if self.goal_abs is not None and self.value is not None:
            checks.append(self.value <= self.goal_abs)
        self.status = ("ok" if all(checks) else "over") if checks else "info"
        return self

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = None if self.ratio is None else round(self.ratio, 3)
        return data


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], q: float) -> float:
    """The value q% of the way up the sorted values (nearest rank)."""
    ordered = sorted(values)
    return ordered[round(q / 100 * (len(ordered) - 1))]


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.0f} ms"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "MB":
        return f"{value:.0f} MB"
    number = f"{value:,.0f}" if float(value).is_integer() else f"{value:.3g}"  # counts: 1,234, not 1.23e+03
    return number if unit in ("", "x") else f"{number} {unit}"


def table(rows: list[Row]) -> str:
    lines = [
        "| figure | wikimem | baseline (same run) | ratio | goal | status |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        base = f"{r.baseline}: {fmt(r.baseline_value, r.unit)}" if r.baseline and r.baseline_value is not None else (r.baseline or "—")
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else "—"
        value = fmt(r.value, r.unit) if r.value is not None else "—"
        status = r.status + (f": {r.note}" if r.note else "")
        lines.append(f"| {r.figure} | {value} | {base} | {ratio} | {r.goal or '—'} | {status} |")
    return "\n".join(lines)


# --- workspaces --------------------------------------------------------------------------------


def say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def init_ws(root: Path) -> None:
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    init_workspace(Workspace.at(root))


def fresh_ws(root: Path, folder: Path) -> Path:
    """A workspace never compiled, in a folder of its own under `folder`, holding a copy of
    root's raw/: what a user compiles from nothing. Nothing is deleted before a compile measured
    in it, and such copies are left until the run ends (the work folder goes then). On a file
    system without a journal (ext4 made without one, as on some virtual machines), the kernel
    passes over every inode deleted in the last minutes when it makes a file: a compile right
    after the previous round's pages were deleted in place paid 0.2-0.45 CPU-s more
    in the kernel, for the wiki's pages alone, than one in a new workspace (the whoosh baseline
    writes a few files and paid nothing)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = sum(1 for _ in folder.iterdir())
    while (folder / f"{root.name}-{n}").exists():
        n += 1
    fresh = folder / f"{root.name}-{n}"
    init_ws(fresh)
    shutil.rmtree(fresh / "raw")
    shutil.copytree(root / "raw", fresh / "raw")
    return fresh


def corpus_ws(root: Path) -> int:
    """The 187 sources of ../shared/corpus copied into raw/topics, raw/versions, raw/formats."""
    init_ws(root)
    count = 0
    for name in scale.CORPORA:
        src = scale.CORPUS / name / "raw"
        if src.is_dir():
            shutil.copytree(src, root / "raw" / name)
            count += sum(1 for p in src.rglob("*") if p.is_file())
    return count


Snapshot = dict[str, tuple[int, int, int]]


def snapshot(folder: Path) -> Snapshot:
    """Every file's size, mtime and inode: a rewrite with the same bytes still shows (new inode)."""
    out: Snapshot = {}
    for path in folder.rglob("*"):
        if path.is_file():
            st = path.stat()
            out[path.relative_to(folder).as_posix()] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def diff(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def probe_questions(limit: int = 12) -> list[str]:
    path = scale.CORPUS / "probes-public.jsonl"
    questions = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                questions.append(json.loads(line)["question"])
    fallback = ["What is the minimum macOS version required by Go?", "ownership and borrowing rules",
                "How do lifetimes prevent dangling references?"]
    return (questions or fallback)[:limit]


def has_command(name: str) -> bool:
    return wikimem(name, "--help", timeout=60).rc == 0


# --- the figures ---------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path):
        self.args = args
        self.quick: bool = args.quick
        self.work = work
        self.repeats: int = args.repeats or (2 if self.quick else 3)
        self.scale: int = args.scale or (300 if self.quick else 10_000)
        # the small workspace a one-source change is compared with: a tenth of the wiki or less
        self.small: int = min(SMALL, max(2, self.scale // 10))
        self.warm_n: int = 20 * args.repeats if args.repeats else (60 if self.quick else 200)
        self.module_dir: Path = HERE
        self.groups: set[str] = set(args.only.split(",")) if getattr(args, "only", None) else set(GROUPS)
        if self.quick and not getattr(args, "only", None):
            # the modules alone take longer than the quick run's minute: ask with --only ...,modules
            self.groups.discard("modules")
        if getattr(args, "skip_modules", False):
            self.groups.discard("modules")
        self.rows: list[Row] = []
        self.raw_modules: dict[str, Any] = {}
        self.index_samples: dict[Path, Sample] = {}  # the plain whoosh index build, per workspace
        self.queries = probe_questions()
        self.queries_file = work / "queries.json"
        self.queries_file.write_text(json.dumps(self.queries))
        # the floor under every `wikimem` figure: a process that starts, imports the CLI and exits
        self.startup = median([checked(wikimem("--version"), "wikimem --version").seconds for _ in range(3)])
        self.search_cli = has_command("search")
        self.mcp_cli = has_command("mcp")
        # a peer measured where it is installed (bench/peers.py): a third process in the same
        # rounds as wikimem and its baseline, in rows of its own
        self.qmd, self.qmd_missing = peers.Qmd.find(getattr(args, "qmd", None), work)

    def add(self, row: Row) -> None:
        self.rows.append(row.judge())
        r = self.rows[-1]
        say(f"  {r.figure}: {fmt(r.value, r.unit)}"
            + (f" vs {fmt(r.baseline_value, r.unit)} ({r.ratio:.2f}x)" if r.ratio is not None else "")
            + f" [{r.status}{': ' + r.note if r.note else ''}]")

    @contextmanager
    def figure(self, name: str, **defaults: Any) -> Iterator[None]:
        """A failing figure becomes an error row; the rest of the run goes on."""
        try:
            yield
        except (BenchError, OSError, ValueError, KeyError) as exc:
            self.add(Row(name, status="error", note=str(exc)[:300], **defaults))

    def interleaved(self, ours: Callable[[int], Sample], theirs: Callable[[int], Sample], n: int,
                    what: str) -> tuple[list[Sample], list[Sample]]:
        a, b, _ = self.with_peer(ours, theirs, None, n, what)
        return a, b

    def with_peer(self, ours: Callable[[int], Sample], theirs: Callable[[int], Sample],
                  peer: Callable[[int], Sample] | None, n: int,
                  what: str) -> tuple[list[Sample], list[Sample], list[Sample]]:
        """n rounds of the baseline, then wikimem, then the peer (qmd) when it is given."""
        a: list[Sample] = []
        b: list[Sample] = []
        c: list[Sample] = []
        for i in range(n):
            b.append(checked(theirs(i), f"baseline for {what}"))
            a.append(checked(ours(i), what))
            if peer is not None:
                c.append(checked(peer(i), f"qmd for {what}"))
        return a, b, c

    def qmd_measure(self, cmd: list[str], home: Path) -> Sample:
        assert self.qmd is not None
        return measure(cmd, env=self.qmd.env(home))

    def versus_qmd(self, fig: str, ours: list[float], theirs: list[float], unit: str = "s", note: str = "",
                   stat: Callable[[list[float]], float] = median) -> None:
        """A row of wikimem's figure against qmd's, measured in the same rounds (no goal: a peer);
        `stat` makes each side's figure of its samples (the median, unless a row says)."""
        if self.qmd is None or not theirs:
            return
        self.add(Row(
            f"{fig}, vs qmd", stat(ours), unit, self.qmd.label, stat(theirs), status="info",
            note=note or f"n={len(theirs)}", samples=ours, baseline_samples=theirs,
        ))

    # 1. full offline compile of the corpora vs a plain whoosh index of the same files
    def full_compile(self, root: Path, label: str, n: int, goal: bool = True) -> tuple[Sample, Sample] | None:
        index_dir = self.work / f"whoosh-{root.name}"
        fresh = self.work / "fresh"

        compiled: list[Path] = []
        # the memory of every process is sampled only where the row reports it (the peak memory
        # at scale): the sampler's reads of /proc every 50 ms take CPU beside a compile that keeps
        # both cores busy (0.16 s of 3.6, 4 alternating rounds), and next to nothing beside the
        # baseline's one process, so a timed row is timed as a user meets it, unobserved
        sampled = not goal

        def ours(_: int) -> Sample:
            compiled.append(fresh_ws(root, fresh))
            return wikimem("compile", "--root", str(compiled[-1]), "--backend", "offline", "--json", "--quiet",
                           tree=sampled)

        def theirs(i: int) -> Sample:
            return baseline("index", str(root / "raw"), str(index_dir.with_name(f"{index_dir.name}-{i}")),
                            tree=sampled)

        fig = f"full compile, {label}"
        with self.figure(fig, baseline="plain whoosh index"):
            a, b = self.interleaved(ours, theirs, n, fig)
            # the figures after this one use `root` compiled: the last workspace compiled takes its
            # place (a workspace holds no absolute path: moved, its next compile is a no-op)
            shutil.rmtree(root)
            os.replace(compiled[-1], root)
            os.replace(index_dir.with_name(f"{index_dir.name}-{n - 1}"), index_dir)  # the searches' baseline
            self.index_samples[root] = b[-1]
            report = a[-1].json() or {}
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", "plain whoosh index", median([s.seconds for s in b]),
                goal="≤ 1.5x" if goal else "", goal_ratio=1.5 if goal else None,
                note=f"{len(report.get('created', []))} pages, n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
            ))
            return a[-1], b[-1]
        return None

    # 2. no-op compile: time, and proof that it writes nothing
    def noop(self, root: Path, label: str, goal_s: float) -> None:
        fig = f"no-op compile, {label}"
        with self.figure(fig, baseline="walk + stat raw/"):
            before = {"wiki": snapshot(root / "wiki"), "raw": snapshot(root / "raw"),
                      ".wikimem": snapshot(root / ".wikimem")}
            n = self.repeats + 2
            a, b = self.interleaved(
                lambda _: wikimem("compile", "--root", str(root), "--json", "--quiet"),
                lambda _: baseline("walk", str(root / "raw")), n, fig)
            reports = [s.json() or {} for s in a]
            changed = {k: diff(v, snapshot(root / k)) for k, v in before.items()}
            not_noop = sum(1 for r in reports if not r.get("noop"))
            wrote = changed["wiki"] + changed["raw"]
            status = "" if not wrote and not not_noop else "over"
            note = "wrote nothing in wiki/ or raw/ (verified)" if not wrote else f"WROTE {len(wrote)} files: {', '.join(wrote[:5])}"
            if not_noop:
                note += f"; {not_noop}/{n} runs did not report noop"
            inner = median([float(r.get("seconds", 0.0)) for r in reports])
            note += f"; in-process {inner * 1000:.0f} ms, process start {self.startup * 1000:.0f} ms"
            if changed[".wikimem"]:
                note += f"; .wikimem/ touched: {', '.join(changed['.wikimem'][:4])}"
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", "walk + stat raw/", median([s.seconds for s in b]),
                goal=f"≤ {goal_s:g} s, writes nothing", goal_abs=goal_s, status=status, note=note,
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
                extra={"wrote": wrote, "state_touched": changed[".wikimem"], "in_process_s": inner},
            ))

    # 3. one changed source at scale vs the same change in a small workspace
    def single_change(self, big: Path, small: Path, n: int) -> None:
        fig = f"one changed source, {self.scale:,} sources"
        with self.figure(fig, baseline=f"same edit at {self.small} sources"):
            pool = scale.load_pool()
            rel = scale.note_path(0)
            original = scale.note_text(0, pool)
            written: dict[str, list[int]] = {"big": [], "small": []}

            def edit_and_compile(root: Path, k: int, key: str) -> Sample:
                (root / "raw" / rel).write_text(scale.edit_text(original, k, pool), encoding="utf-8")
                sample = wikimem("compile", "--root", str(root), "--json", "--quiet")
                report = sample.json() or {}
                written[key].append(sum(len(report.get(x, [])) for x in ("created", "updated", "removed")))
                return sample

            a, b = self.interleaved(lambda k: edit_and_compile(big, k + 1, "big"),
                                    lambda k: edit_and_compile(small, k + 1, "small"), n, fig)
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", f"same edit at {self.small} sources",
                median([s.seconds for s in b]), goal="≤ 2x (cost of the source, not the wiki)", goal_ratio=2.0,
                note=f"pages written: median {median(written['big']):.0f} at {self.scale:,}, "
                     f"{median(written['small']):.0f} at {self.small}; n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
                extra={"pages_written": written},
            ))

    # 4. cold `wikimem search` process vs a cold plain whoosh query process
    def cold_search(self, root: Path, index_dir: Path, label: str) -> None:
        fig = f"cold search process, {label}"
        if not self.search_cli:
            self.add(Row(fig, status="not available yet", note="no `wikimem search` command"))
            return
        with self.figure(fig, baseline="cold plain whoosh query"):
            # the first search may build the index: not what "cold process" measures
            checked(wikimem("search", self.queries[0], "--root", str(root), "--json", timeout=1800), "first search")
            n = 3 if self.quick else 2 * self.repeats + 1
            peer = None
            if self.qmd is not None:
                home = self.qmd.indexed(root / "raw")  # made untimed, as wikimem's and whoosh's were
                qmd = self.qmd

                def peer(i: int) -> Sample:
                    return self.qmd_measure(qmd.search_cmd(self.queries[i % len(self.queries)]), home)
            a, b, c = self.with_peer(
                lambda i: wikimem("search", self.queries[i % len(self.queries)], "--root", str(root), "--json"),
                lambda i: baseline("query", str(index_dir), self.queries[i % len(self.queries)]), peer, n, fig)
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", "cold plain whoosh query", median([s.seconds for s in b]),
                goal="≤ 1.0x", goal_ratio=1.0, note=f"n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
            ))
            self.versus_qmd(fig, [s.seconds for s in a], [s.seconds for s in c])
            self.add(Row(
                f"cold search process peak RSS, {label}", median([s.rss_mb for s in a]), "MB",
                "cold plain whoosh query", median([s.rss_mb for s in b]), goal="≤ 1.5x", goal_ratio=1.5,
                note=f"ru_maxrss of the process; n={n}",
                samples=[s.rss_mb for s in a], baseline_samples=[s.rss_mb for s in b],
            ))
            # the same comparison on wikimem's own index (the issue's "a bare whoosh query process
            # with the same index"): what opening and querying that index costs whoever does it
            own = root / ".wikimem" / "search"
            a2, b2 = self.interleaved(
                lambda i: wikimem("search", self.queries[i % len(self.queries)], "--root", str(root), "--json"),
                lambda i: baseline("query", str(own), self.queries[i % len(self.queries)]), n, fig)
            for what, unit, pick, goal, ratio in (("", "s", lambda x: x.seconds, "≤ 1.0x", 1.0),
                                                  (" peak RSS", "MB", lambda x: x.rss_mb, "≤ 1.5x", 1.5)):
                self.add(Row(
                    f"cold search process{what}, {label}, same index", median([pick(x) for x in a2]), unit,
                    "cold bare whoosh query on wikimem's index", median([pick(x) for x in b2]), goal=goal,
                    goal_ratio=ratio, note=f"n={n}",
                    samples=[pick(x) for x in a2], baseline_samples=[pick(x) for x in b2],
                ))

    # 4b. from nothing to searchable: the compile (which brings the index up to date) and a first
    # search, against a plain whoosh index of raw/ and a first query
    def to_searchable(self, root: Path, label: str, n: int) -> None:
        fig = f"from nothing to searchable, {label}"
        if not self.search_cli:
            return
        index_dir = self.work / f"whoosh-searchable-{root.name}"
        question = self.queries[0]

        def ours(_: int) -> Sample:
            ws = fresh_ws(root, self.work / "fresh")
            # timed as the baseline is, with no sampling of the processes' memory beside it: on two
            # cores the sampler's reads of /proc took about 0.1 s from a compile that keeps both
            # busy (6 alternating rounds), and this row reports no memory (the full compile's does)
            compiled = checked(wikimem("compile", "--root", str(ws), "--json", "--quiet"), "compile")
            first = checked(wikimem("search", question, "--root", str(ws), "--json"), "first search")
            return Sample(compiled.seconds + first.seconds, max(compiled.rss_mb, first.rss_mb), 0,
                          compiled.stdout, first.stdout)

        def theirs(i: int) -> Sample:
            index = index_dir.with_name(f"{index_dir.name}-{i}")
            built = checked(baseline("index", str(root / "raw"), str(index)), "plain whoosh index")
            first = checked(baseline("query", str(index), question), "plain whoosh query")
            return Sample(built.seconds + first.seconds, max(built.rss_mb, first.rss_mb), 0, "", "")

        peer = None
        if self.qmd is not None:
            qmd = self.qmd

            def peer(_: int) -> Sample:
                home = qmd.new_home("from-nothing")
                built = checked(self.qmd_measure(qmd.index_cmd(root / "raw"), home), "qmd collection add")
                first = checked(self.qmd_measure(qmd.search_cmd(question), home), "qmd search")
                return Sample(built.seconds + first.seconds, max(built.rss_mb, first.rss_mb), 0, first.stdout, "")

        with self.figure(fig, baseline="plain whoosh index of raw/ + a query"):
            a, b, c = self.with_peer(ours, theirs, peer, n, fig)
            index_s = median([float((s.json() or {}).get("index", {}).get("seconds", 0.0)) for s in a])
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", "plain whoosh index of raw/ + a query",
                median([s.seconds for s in b]), goal="", status="info",
                note=f"compile + first search (processes); the compile's index share {index_s:.2f} s; n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
            ))
            self.versus_qmd(fig, [s.seconds for s in a], [s.seconds for s in c],
                            note=f"qmd: `collection add` + `search`, its index only (no wiki); n={n}")

    # 4c. MCP start to ready: from spawning `wikimem mcp` to its answer to `initialize`
    def mcp_start(self, root: Path, label: str) -> None:
        fig = f"MCP start to ready (initialize answered), {label}"
        if not self.mcp_cli:
            return
        floor = [PY, "-c", "import sys, json; r = json.loads(sys.stdin.readline()); "
                           "print(json.dumps({'jsonrpc': '2.0', 'id': r['id'], 'result': {}}), flush=True)"]

        def ready(cmd: list[str]) -> Sample:
            request = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}}}
            started = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=child_env())
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            line = proc.stdout.readline()
            seconds = time.perf_counter() - started
            proc.kill()
            proc.wait(30)
            if b'"result"' not in line:
                raise BenchError(f"no initialize result from {cmd[0]}: {line[:200]!r}")
            return Sample(seconds, 0.0, 0, line.decode("utf-8", "replace"), "")

        with self.figure(fig, baseline="a bare python stdio responder"):
            n = 3 if self.quick else 7
            a, b = self.interleaved(lambda _: ready([*wikimem_cmd(), "mcp", "--root", str(root)]),
                                    lambda _: ready(floor), n, fig)
            self.add(Row(
                fig, median([s.seconds for s in a]), "s", "a bare python stdio responder",
                median([s.seconds for s in b]), goal="≤ 0.7 s", goal_abs=0.7, note=f"n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
            ))

    # 4d. MCP start to the first search answered: what a client waits for (initialize, the tool
    # list, one search), then the searches right after it (the warm-up must not make them slow)
    def mcp_first_search(self, root: Path, index_dir: Path, label: str) -> None:
        fig = f"MCP start to the first search answered, {label}"
        if not self.mcp_cli:
            return
        questions = self.queries[1:] + ['"virtual environment"', "trait objects", "goroutines channels"]

        def ours_call(i: int, question: str) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": question}}}

        def first_search(_: int) -> Sample:
            return first_search_of([*wikimem_cmd(), "mcp", "--root", str(root)], child_env(), ours_call)

        def first_search_of(cmd: list[str], env: dict[str, str],
                            call: Callable[[int, str], dict[str, Any]]) -> Sample:
            started = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            assert proc.stdin is not None and proc.stdout is not None

            def ask(message: dict[str, Any]) -> dict[str, Any]:
                proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                answer = json.loads(proc.stdout.readline() or b"{}")  # type: ignore[union-attr]
                if "result" not in answer or answer["result"].get("isError"):
                    raise BenchError(f"MCP {message.get('method')}: {str(answer)[:200]}")
                return answer

            def search(i: int, question: str) -> dict[str, Any]:
                return ask(call(i, question))
            try:
                ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
                proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                search(2, self.queries[0])
                seconds = time.perf_counter() - started
                after = []
                for i, question in enumerate(questions, 3):
                    at = time.perf_counter()
                    search(i, question)
                    after.append(time.perf_counter() - at)
            finally:
                proc.kill()
                proc.wait(30)
            return Sample(seconds, 0.0, 0, json.dumps(after), "")

        peer = None
        if self.qmd is not None:
            qmd = self.qmd

            def peer(_: int) -> Sample:
                home = qmd.indexed(root / "raw")
                return first_search_of(qmd.mcp_cmd(), qmd.env(home), qmd.mcp_search)

        with self.figure(fig, baseline="cold plain whoosh query process"):
            n = 3 if self.quick else 7
            first_search(-1)  # a workspace just copied or compiled: its first search checks every file once
            if peer is not None:
                peer(-1)
            a, b, c = self.with_peer(first_search, lambda _: baseline("query", str(index_dir), self.queries[0]),
                                     peer, n, fig)
            times = sorted(s.seconds for s in a)
            after = sorted(x for s in a for x in json.loads(s.stdout))
            self.add(Row(
                fig, median(times), "s", "cold plain whoosh query process", median([s.seconds for s in b]),
                goal="≤ 0.4 s", goal_abs=0.4,
                note=f"p95 {percentile(times, 95):.3f} s; then {len(questions)} searches each: "
                     f"p50 {median(after) * 1000:.1f} ms, p95 {percentile(after, 95) * 1000:.1f} ms, "
                     f"max {after[-1] * 1000:.1f} ms; n={n}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
                extra={"searches_after_ms": [round(x * 1000, 2) for x in after]},
            ))
            if c:
                theirs_after = sorted(x for s in c for x in json.loads(s.stdout))
                self.versus_qmd(fig, [s.seconds for s in a], [s.seconds for s in c],
                                note=f"qmd's query tool, BM25 alone; n={n}")
                self.versus_qmd(f"MCP search p95, the {len(questions)} searches after the first, {label}",
                                [x * 1000 for x in after], [x * 1000 for x in theirs_after], unit="ms",
                                note=f"p50 {median(after) * 1000:.1f} ms against {median(theirs_after) * 1000:.1f} ms; "
                                     f"n={len(after)}", stat=lambda v: percentile(v, 95))

    # 4e. a file dropped, then searchable (one-shot compile and search), where the drop is the
    # fifth file of a new folder (the folder becomes a collection) against an ordinary drop
    def collection_drop(self, root: Path, label: str) -> None:
        fig = f"fifth file into a new folder, then searchable, {label}"
        with self.figure(fig, baseline="a sixth file into the same folder, then searchable"):
            n = 2 if self.quick else self.repeats

            def drop(folder: str, i: int) -> Sample:
                word = f"kettle{folder.rsplit('-', 1)[-1]}x{i}"  # one word no other file holds
                (root / "raw" / folder / f"n{i}.md").write_text(
                    f"# Kettle note {i}\n\nThe {word} boils water in 3 minutes.\n", encoding="utf-8")
                compiled = checked(wikimem("compile", "--root", str(root), "--json", "--quiet"), "compile after a drop")
                found = checked(wikimem("search", word, "--root", str(root), "--json"), "search")
                if f"{folder}/n{i}.md" not in found.stdout:
                    raise BenchError(f"the dropped file raw/{folder}/n{i}.md was not found by search")
                return Sample(compiled.seconds + found.seconds, 0.0, 0, "", "")

            fifth: list[Sample] = []
            sixth: list[Sample] = []
            for r in range(n):
                folder = f"bench-drop-{r}"
                (root / "raw" / folder).mkdir()
                for i in range(1, 5):
                    drop(folder, i)
                fifth.append(drop(folder, 5))
                sixth.append(drop(folder, 6))
            self.add(Row(
                fig, median([s.seconds for s in fifth]), "s", "a sixth file into the same folder, then searchable",
                median([s.seconds for s in sixth]), goal="≤ 0.5 s compile; ≤ 1.5x an ordinary drop", goal_ratio=1.5,
                note=f"compile + search processes; n={n}",
                samples=[s.seconds for s in fifth], baseline_samples=[s.seconds for s in sixth],
            ))

    # 4f. one changed file, and one new file, then found by search: wikimem's compile and search
    # processes, whoosh's update of its plain index and a query, qmd's update and search. Each
    # edits a copy of raw/ of its own, so each finds one file changed or added since it last looked
    def small_changes(self, root: Path, label: str) -> None:
        # the first Markdown file of the corpora (not one of the drops of the figure before)
        target = min(p for p in (root / "raw").rglob("*.md") if not p.relative_to(root / "raw").parts[0].startswith("bench-"))
        rel = target.relative_to(root / "raw").as_posix()
        copies = {"whoosh": self.work / "small-changes" / "whoosh-raw", "qmd": self.work / "small-changes" / "qmd-raw"}
        for copy in copies.values():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(root / "raw", copy)
        index_dir = self.work / "small-changes" / "whoosh-index"
        qmd = self.qmd
        home: Path | None = None
        with self.figure(f"one changed file, then found by search, {label}", baseline="plain whoosh update + a query"):
            checked(baseline("index", str(copies["whoosh"]), str(index_dir)), "plain whoosh index")
            home = qmd.indexed(copies["qmd"]) if qmd is not None else None
        if not index_dir.is_dir() or (qmd is not None and home is None):
            return  # what failed is the figure's error row
        original = target.read_text(encoding="utf-8")

        def edit(raw: Path, word: str, new: bool, i: int) -> str:
            """Change raw/'s target file (or add one beside it) with `word`; the file's path in raw/."""
            if new:
                path = (Path(rel).parent / f"bench-new-{i}.md").as_posix()
                (raw / path).write_text(f"# Teapot note {i}\n\nThe {word} pours tea in 3 minutes.\n", encoding="utf-8")
                return path
            (raw / rel).write_text(original.rstrip("\n") + f"\n\nThe {word} pours tea.\n", encoding="utf-8")
            return rel

        for new in (False, True):
            fig = (f"a new file dropped, then searchable, {label}" if new
                   else f"one changed file, then found by search, {label}")

            def ours(i: int, new: bool = new) -> Sample:
                word = f"teapot{'n' if new else 'c'}{i}w"
                path = edit(root / "raw", word, new, i)
                compiled = checked(wikimem("compile", "--root", str(root), "--json", "--quiet"), "compile")
                hit = checked(wikimem("search", word, "--root", str(root), "--json"), "search")
                if path not in hit.stdout:
                    raise BenchError(f"raw/{path} was not found by search after its compile")
                return Sample(compiled.seconds + hit.seconds, 0.0, 0, "", "")

            def theirs(i: int, new: bool = new) -> Sample:
                word = f"teapot{'n' if new else 'c'}{i}b"
                path = edit(copies["whoosh"], word, new, i)
                updated = checked(baseline("update", str(index_dir), str(copies["whoosh"]),
                                           str(copies["whoosh"] / path)), "plain whoosh update")
                hit = checked(baseline("query", str(index_dir), word), "plain whoosh query")
                if path not in hit.stdout:
                    raise BenchError(f"{path} was not found by the plain whoosh query after its update")
                return Sample(updated.seconds + hit.seconds, 0.0, 0, "", "")

            peer = None
            if qmd is not None and home is not None:
                def peer(i: int, new: bool = new, qmd: peers.Qmd = qmd, home: Path = home) -> Sample:
                    word = f"teapot{'n' if new else 'c'}{i}q"
                    path = edit(copies["qmd"], word, new, i)
                    updated = checked(self.qmd_measure(qmd.update_cmd(), home), "qmd update")
                    hit = checked(self.qmd_measure(qmd.search_cmd(word), home), "qmd search")
                    if not peers.found(hit.stdout, path):
                        raise BenchError(f"{path} was not found by qmd search after qmd update")
                    return Sample(updated.seconds + hit.seconds, 0.0, 0, "", "")

            with self.figure(fig, baseline="plain whoosh update + a query"):
                n = 2 if self.quick else self.repeats + 2
                a, b, c = self.with_peer(ours, theirs, peer, n, fig)
                self.add(Row(
                    fig, median([s.seconds for s in a]), "s", "plain whoosh update + a query",
                    median([s.seconds for s in b]), goal="≤ 0.5 s", goal_abs=0.5,
                    note=f"compile + search processes, the word found; n={n}",
                    samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
                ))
                self.versus_qmd(fig, [s.seconds for s in a], [s.seconds for s in c],
                                note=f"qmd: `update` + `search`, the word found; n={n}")
        # the corpus as it was, for the figures after this one
        target.write_text(original, encoding="utf-8")
        for extra in (root / "raw").rglob("bench-new-*.md"):
            extra.unlink()
        checked(wikimem("compile", "--root", str(root), "--quiet"), "compile of the corpora as they were")

    # 5. warm search p50, in-process and over MCP
    def index_build(self, root: Path, label: str) -> None:
        """The search index built from nothing (`wikimem reindex`), so warm figures do not hide it."""
        fig = f"search index build (wikimem reindex), {label}"
        if not has_command("reindex"):
            self.add(Row(fig, status="not available yet", note="no `wikimem reindex` command"))
            return
        base = self.index_samples.get(root)
        with self.figure(fig, baseline="plain whoosh index of raw/"):
            ours = checked(wikimem("reindex", "--root", str(root), "--json", tree=True, timeout=7200), "wikimem reindex")
            self.add(Row(
                fig, ours.seconds, "s", "plain whoosh index of raw/", base.seconds if base else None,
                note=f"one run; peak memory (PSS) {ours.tree_rss_mb:.0f} MB; indexes wiki/ and raw/ by passage",
                samples=[ours.seconds], baseline_samples=[base.seconds] if base else [],
            ))

    def warm_search(self, root: Path, index_dir: Path, label: str) -> None:
        n = self.warm_n
        base: dict[str, Any] | None = None

        def worker(kind: str, target: Path) -> dict[str, Any]:
            sample = baseline(kind, str(target), str(self.queries_file), str(n), timeout=3600)
            data = sample.json()
            if sample.rc != 0 or not isinstance(data, dict):
                raise BenchError(f"{kind} exited {sample.rc}: {last_line(sample.stderr)}")
            if "error" in data:
                raise BenchError(str(data["error"]))
            return data

        for kind, fig, available in (
            ("warm-wikimem", f"warm search p50 in-process, {label}", self._has_module("wikimem.search")),
            ("warm-mcp", f"warm search p50 over MCP, {label}", self.mcp_cli),
        ):
            if ("mcp" if kind == "warm-mcp" else "search") not in self.groups:
                continue
            if not available:
                self.add(Row(fig, status="not available yet",
                             note="no wikimem.search module" if kind == "warm-wikimem" else "no `wikimem mcp` command"))
                continue
            with self.figure(fig, baseline="warm plain whoosh query p50"):
                if base is None:
                    base = worker("warm-whoosh", index_dir)
                ours = worker(kind, root)
                self.add(Row(
                    fig, median(ours["latencies_ms"]), "ms", "warm plain whoosh query p50",
                    median(base["latencies_ms"]), goal="≤ 5 ms", goal_abs=5.0,
                    note=f"p90 {statistics.quantiles(ours['latencies_ms'], n=10)[-1]:.1f} ms; "
                         f"n={len(ours['latencies_ms'])}; {ours.get('via', '')}",
                    samples=ours["latencies_ms"], baseline_samples=base["latencies_ms"],
                ))

    # 6b. lint, every rule-based check, on the compiled scale wiki (it writes lint.md: run it last)
    def lint(self, root: Path, label: str) -> None:
        fig = f"lint (all rule-based checks), {label}"
        if not has_command("lint"):
            self.add(Row(fig, status="not available yet", note="no `wikimem lint` command"))
            return
        pages = sum(1 for _ in (root / "wiki").rglob("*.md"))

        def lint_run(_: int) -> Sample:
            sample = wikimem("lint", "--root", str(root), "--json", "--quiet")
            if sample.rc not in (0, 3):  # 3: the wiki has lint errors, which is a result, not a failure
                raise BenchError(f"wikimem lint exited {sample.rc}: {last_line(sample.stderr)}")
            return sample

        with self.figure(fig, baseline="read every page"):
            base_first = checked(baseline("read", str(root / "wiki")), "read every page")
            cold = lint_run(0)
            findings = (cold.json() or {}).get("findings", [])
            self.add(Row(
                f"{fig}, first run", cold.seconds, "s", "read every page", base_first.seconds,
                goal="≤ 5 s", goal_abs=5.0, note=f"{pages:,} pages; {len(findings)} findings; n=1",
                samples=[cold.seconds], baseline_samples=[base_first.seconds],
            ))
            a, b = self.interleaved(lint_run, lambda _: baseline("read", str(root / "wiki")), self.repeats, fig)
            self.add(Row(
                f"{fig}, again", median([s.seconds for s in a]), "s", "read every page",
                median([s.seconds for s in b]), goal="≤ 5 s", goal_abs=5.0,
                note=f"{pages:,} pages; n={self.repeats}",
                samples=[s.seconds for s in a], baseline_samples=[s.seconds for s in b],
            ))

    @staticmethod
    def _has_module(name: str) -> bool:
        import importlib.util

        try:
            return importlib.util.find_spec(name) is not None
        except ImportError:
            return False

    # 6. peak memory of a compile at scale vs the plain whoosh index of the same files
    def peak_memory(self, ours: Sample, theirs: Sample, label: str) -> None:
        self.add(Row(
            f"peak memory (PSS) of a full compile, {label}", ours.tree_rss_mb, "MB", "plain whoosh index",
            theirs.tree_rss_mb, goal="", note=f"one run; PSS summed over the process and the processes it forks "
                                              f"(largest single process RSS {ours.rss_mb:.0f} MB)",
            samples=[ours.tree_rss_mb], baseline_samples=[theirs.tree_rss_mb],
            extra={"largest_process_mb": ours.rss_mb, "baseline_largest_process_mb": theirs.rss_mb},
        ))

    # 7. the figure modules: each prints the bench contract (bench/contract.py) with --json
    def modules(self, corpus_root: Path, scale_root: Path) -> None:
        for name in MODULES:
            path = self.module_dir / f"{name}.py"
            fig = f"bench/{name}.py"
            if not path.exists():
                self.add(Row(fig, status="not available yet", note=f"bench/{name}.py does not exist yet"))
                continue
            helped = measure([PY, str(path), "--help"], timeout=120)
            if helped.rc != 0:
                self.add(Row(fig, status="error", note=f"--help exited {helped.rc}: {last_line(helped.stderr)}"))
                continue
            helptext = helped.stdout
            if self.quick and "--quick" not in helptext:
                # a module without a fast mode would blow the quick run's minute
                self.add(Row(fig, status="skipped", note="no --quick mode; runs in full runs"))
                continue
            args = [PY, str(path), "--json"]
            if self.quick:
                args.append("--quick")
            if "--scale" in helptext:
                args += ["--scale", str(self.scale)]
            elif "--pages" in helptext and self.scale < 10_000:
                args += ["--pages", str(max(self.scale, 1000))]
            if "--corpus-root" in helptext:
                args += ["--corpus-root", str(scale.CORPUS)]
            say(f"running bench/{name}.py {' '.join(args[2:])}")
            env = child_env(WIKIMEM_BENCH_SCALE_ROOT=str(scale_root), WIKIMEM_BENCH_CORPUS_ROOT=str(corpus_root),
                            WIKIMEM_BENCH_QUICK="1" if self.quick else "")
            sample = measure(args, timeout=1800, env=env)
            if sample.rc != 0:
                self.add(Row(fig, status="error", note=f"exited {sample.rc}: {last_line(sample.stderr)}"))
                continue
            try:
                doc = contract.parse(sample.stdout)
            except contract.ContractError as exc:
                self.add(Row(fig, status="error", note=f"printed no valid bench contract: {exc}"[:300]))
                continue
            rows = [Row(**r) for r in doc["rows"]]
            for row in rows or [Row(fig, status="info", note="ran; printed no rows")]:
                row.extra.update(module=name, module_seconds=round(sample.seconds, 2))
                self.add(row)
            self.raw_modules[name] = {k: v for k, v in doc.items() if k != "rows"}


# every module with a figure worth a full run; a quick run takes those offering --quick
MODULES: tuple[str, ...] = (
    "retrieval", "navigation", "reading", "concepts", "search_speed", "lint_bench", "daemon_bench",
    "anthropic_bench", "history_bench", "merge_bench",
)


# --- the run ---------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "daemon"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        info["commit"] = commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def code_fingerprint() -> str:
    """A hash of the package's source: the tree is shared, and code that changes mid-run skews figures."""
    digest = hashlib.sha256()
    for file in sorted((REPO / "daemon").rglob("*.py")):
        with contextlib.suppress(OSError):
            digest.update(file.relative_to(REPO).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:12]


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    code_before = code_fingerprint()
    work = Path(tempfile.mkdtemp(prefix="wikimem-bench-", dir=args.workdir))
    info = machine()
    bench = Bench(args, work)
    say(f"work folder {work}; scale {bench.scale:,}; repeats {bench.repeats}; "
        f"search command {'yes' if bench.search_cli else 'no'}, mcp command {'yes' if bench.mcp_cli else 'no'}")
    if bench.qmd is not None:
        say(f"peer: {bench.qmd.label}, run as {' '.join(bench.qmd.cmd)}")
    elif bench.qmd_missing:
        bench.add(Row("peer: qmd", status="skipped", note=bench.qmd_missing))
    try:
        corpus = work / "corpus"
        if not any((scale.CORPUS / name / "raw").is_dir() for name in scale.CORPORA):
            raise SystemExit(f"bench: the corpora are missing: {scale.CORPUS} (../shared/corpus)")
        n_sources = corpus_ws(corpus)
        label = f"{n_sources} corpus sources"
        big = work / f"scale-{bench.scale}"
        if bench.groups & {"compile", "noop", "search"}:
            say(f"full compile of the corpora ({n_sources} sources) vs plain whoosh")
            bench.full_compile(corpus, label, 1 if bench.quick else 3)
        corpus_index = work / "whoosh-corpus"
        if "noop" in bench.groups:
            say("no-op compile of the corpora")
            bench.noop(corpus, label, 0.3)
        if "search" in bench.groups:
            say("cold search, corpora")
            bench.cold_search(corpus, corpus_index, label)
            say("from nothing to searchable, corpora")
            bench.to_searchable(corpus, label, 1 if bench.quick else 3)
        if "mcp" in bench.groups:
            say("MCP start to ready, corpora")
            bench.mcp_start(corpus, label)
            say("MCP start to the first search answered, corpora")
            if not corpus_index.is_dir():
                checked(baseline("index", str(corpus / "raw"), str(corpus_index)), "plain whoosh index")
            bench.mcp_first_search(corpus, corpus_index, label)
        if "change" in bench.groups:
            say("the fifth file into a new folder, corpora")
            if not (corpus / ".wikimem").is_dir():
                checked(wikimem("compile", "--root", str(corpus), "--quiet"), "compile of the corpora")
            bench.collection_drop(corpus, label)
            say("one changed file, and one new file, then found by search, corpora")
            bench.small_changes(corpus, label)

        sizes = [bench.scale] if bench.quick or bench.scale <= 1000 else [1000, bench.scale]
        for size in sizes if bench.groups & SCALE_GROUPS else []:
            root = work / f"scale-{size}"
            say(f"generating {size:,} sources")
            scale.build(root, size)
            say(f"full compile, {size:,} generated sources (one run; peak RSS)")
            pair = bench.full_compile(root, f"{size:,} generated sources", 1, goal=False)
            if pair:
                bench.peak_memory(pair[0], pair[1], f"{size:,} sources")
        label_big = f"{bench.scale:,} sources"
        if "noop" in bench.groups:
            say(f"no-op compile at {label_big}")
            bench.noop(big, label_big, 1.0)
        if "change" in bench.groups:
            say(f"one changed source at {label_big} vs {bench.small}")
            small = work / f"scale-small-{bench.small}"
            scale.build(small, bench.small)
            checked(wikimem("compile", "--root", str(small), "--quiet"), f"compile at {bench.small}")
            bench.single_change(big, small, bench.repeats)
        if bench.search_cli and bench.groups & {"search", "mcp"} and not bench.quick:
            say(f"search index build at {label_big}")
            bench.index_build(big, label_big)
        if "search" in bench.groups:
            say(f"cold search at {label_big}")
            bench.cold_search(big, work / f"whoosh-{big.name}", label_big)
        if bench.groups & {"search", "mcp"}:
            say(f"warm search at {label_big}")
            bench.warm_search(big, work / f"whoosh-scale-{bench.scale}", label_big)
        if "lint" in bench.groups:
            say(f"lint at {label_big}")
            bench.lint(big, label_big)
        if "modules" in bench.groups:
            bench.modules(corpus, big)
    finally:
        if args.keep:
            say(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    info["loadavg_end"] = os.getloadavg()
    info["code"] = code_before
    if code_fingerprint() != code_before:
        info["code_changed_during_run"] = True
        say("WARNING: daemon/ changed during this run; figures mix two versions of the code")
    return {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python bench/run.py " + " ".join(sys.argv[1:]),
        "quick": bench.quick, "scale": bench.scale, "repeats": bench.repeats,
        "machine": info, "seconds": round(time.perf_counter() - started, 1),
        "corpus_pool": scale.load_pool().fingerprint,
        "peers": {"qmd": bench.qmd.version if bench.qmd is not None else None},
        "rows": [r.to_json() for r in bench.rows],
        "modules": bench.raw_modules,
        "table": table(bench.rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="under a minute: 300 generated sources, fewer repeats")
    parser.add_argument("--scale", type=int, default=None, help="generated sources for the scale figures (default 10000; quick 300)")
    parser.add_argument("--repeats", type=int, default=None, help="runs per figure, median reported (default 3; quick 2; no-op and search get more)")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to write (default bench/results/<time>.json)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to build the temporary workspaces")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces (their path is printed)")
    parser.add_argument("--skip-modules", action="store_true", help="skip the figure modules (retrieval, lint_bench, ...)")
    parser.add_argument("--only", default=None, metavar="GROUPS",
                        help=f"comma-separated figure groups: {','.join(GROUPS)} (full compiles always run)")
    parser.add_argument("--qmd", default=None, metavar="CMD",
                        help="the qmd command to measure beside wikimem (default $WIKIMEM_BENCH_QMD, else qmd on PATH; "
                             "none: no peer; see bench/peers.py)")
    parser.add_argument("--corpus-root", type=Path, default=None,
                        help="folder holding topics/raw, versions/raw, formats/raw (default ../shared/corpus)")
    args = parser.parse_args(argv)
    if args.scale is not None and args.scale < 10:
        parser.error("--scale must be at least 10")
    if args.only and (bad := set(args.only.split(",")) - set(GROUPS)):
        parser.error(f"--only: unknown group {', '.join(sorted(bad))}; choose from {','.join(GROUPS)}")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.corpus_root is not None:
        if not args.corpus_root.is_dir():
            parser.error(f"--corpus-root {args.corpus_root} is not a folder")
        scale.CORPUS = args.corpus_root.resolve()
    # wikimem byte-compiled, as `pip install` leaves it (and as whoosh, the baseline, is): where
    # PYTHONDONTWRITEBYTECODE is set, an editable install compiles every module on every run
    subprocess.run([PY, "-m", "compileall", "-q", str(REPO / "daemon")], check=True, stdout=subprocess.DEVNULL)
    result = run(args)
    out = args.out or RESULTS / f"{result['when'].replace(':', '')}{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    m = result["machine"]
    print(f"wikimem bench, {result['when']}, commit {m.get('commit', '?')}, {m.get('cpus')} CPUs "
          f"({m.get('cpu', '?')}), load {m['loadavg_start'][0]:.1f} -> {m['loadavg_end'][0]:.1f}, "
          f"{'quick' if result['quick'] else 'full'} run{' (' + args.only + ')' if args.only else ''} "
          f"in {result['seconds']:.0f} s"
          + (" (WARNING: daemon/ changed during the run)" if m.get("code_changed_during_run") else "") + "\n")
    print(result["table"])
    print(f"\nratios are the figure: absolute times are indicative only. JSON: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

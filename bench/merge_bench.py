"""Who wrote a page, known from the page itself (issue 37): the figures, for two commits of
wikimem in the same run.

    python bench/merge_bench.py [--before main] [--after HEAD|.] [--only merge,damage,noop]
                                [--corpus topics,versions,formats,sphinx] [--scale 10000] [--rounds 5]

- **merge**: each shared corpus's raw/ split in two halves (alternate files in path order); clone
  A compiles one half, clone B the other (real git, a bare origin); then one pulls the other and
  compiles, pushes, and the other pulls and compiles; both orders. Counted: files git stopped
  on (conflicts; resolved by keeping ours, as a person in a hurry would), pages kept as a
  person's (the compiles' `kept`, and pages holding conflict markers), and pages of each clone
  that differ from a one-machine compile of the whole raw/ (log.md aside). Goal: 0, 0, 0.
- **damage**: a compiled workspace (the first 24 files of the topics corpus) in which a person
  appends a line to a source page and to a concept page; state.db is then damaged in each of
  its forms, with and without git; both pages' sources change and a new source arrives; the
  next compile runs. Counted: the person's lines still there, of those made.
- **noop**: a no-op compile of 10k generated sources (bench/scale.py), each commit compiling its
  own copy once, then no-op compiles alternating before/after; the median of the per-round
  ratios after/before.

Each commit's `daemon/` is taken with `git archive` into a temporary folder (no worktree is
added to the repository), byte-compiled, and run as `python -m wikimem.cli` with its own
`daemon/` first on PYTHONPATH (git's merge drivers, started by git, inherit it).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "corpus"
EPOCH = "1798675200"
PERSONS_LINE = "My own note, kept through everything: ask Dana."


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Code:
    """One commit of wikimem, unpacked and ready to run."""

    def __init__(self, rev: str, folder: Path):
        self.rev = rev
        self.root = folder
        if rev == ".":  # the work tree as it is, uncommitted changes included
            self.commit = "work tree"
            shutil.copytree(REPO / "daemon", folder / "daemon", symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            shutil.copytree(REPO / "templates", folder / "templates")
        else:
            self.commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], check=True,
                                         capture_output=True, text=True).stdout.strip()
            archive = subprocess.run(["git", "-C", str(REPO), "archive", self.commit, "daemon", "templates"],
                                     check=True, capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(folder, filter="data")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "daemon")], check=True,
                       stdout=subprocess.DEVNULL)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "GIT_")) and k not in ("WIKIMEM_BACKEND", "WIKIMEM_ROOT")}
        env.update(PYTHONPATH=str(self.root / "daemon"), SOURCE_DATE_EPOCH=EPOCH,
                   GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.org",
                   GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.org")
        return env

    def wikimem(self, *args: str, check: bool = True) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, "-m", "wikimem.cli", *args, "--json"], env=self.env(),
                              capture_output=True, text=True)
        if check and proc.returncode not in (0, 1):
            raise SystemExit(f"wikimem {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
        try:
            return dict(json.loads(proc.stdout))
        except ValueError:
            return {"error": proc.stderr.strip()[-400:]}

    def git(self, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["git", *args], cwd=cwd, env=self.env(), capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[-400:]}")
        return proc

    def compile(self, root: Path) -> dict[str, Any]:
        return self.wikimem("compile", "--root", str(root), "--quiet")

    def timed_compile(self, root: Path) -> tuple[dict[str, Any], float, float]:
        """A compile, its wall seconds and its CPU seconds (user and system, of its process and
        every process it waited for: os.wait4), which a machine shared with other work moves less."""
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "wikimem.cli", "compile", "--root", str(root), "--quiet",
                                  "--json"], env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        try:
            report = dict(json.loads(out))
        except ValueError:
            report = {"error": f"exit {child.returncode}"}
        return report, wall, usage.ru_utime + usage.ru_stime


def pages(wiki: Path) -> dict[str, bytes]:
    """wiki/ as a compile leaves it: every file but log.md, git's and hidden files."""
    return {p.relative_to(wiki).as_posix(): p.read_bytes() for p in sorted(wiki.rglob("*"))
            if p.is_file() and not p.name.startswith(".") and p.name != "log.md"}


def differing(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def marked(wiki: Path) -> list[str]:
    return sorted(rel for rel, data in pages(wiki).items() if b"\n<<<<<<< " in b"\n" + data)


# --- the two-clone merge ----------------------------------------------------------------------


def corpus_files(name: str) -> list[Path]:
    raw = SHARED / name / "raw"
    return sorted(p for p in raw.rglob("*") if p.is_file()) if raw.is_dir() else []


def place(files: list[Path], raw_root: Path, target: Path) -> None:
    for file in files:
        dest = target / "raw" / file.relative_to(raw_root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, dest)


def merge_case(code: Code, corpus: str, first: str, work: Path, expected: dict[str, bytes]) -> dict[str, Any]:
    files = corpus_files(corpus)
    raw_root = SHARED / corpus / "raw"
    halves = {"a": files[0::2], "b": files[1::2]}
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    origin = work / "origin.git"
    code.git(work, "init", "-q", "--bare", "-b", "main", str(origin))
    a, b = work / "a", work / "b"
    code.wikimem("init", str(a))
    code.git(a, "init", "-q", "-b", "main")
    code.git(a, "add", "wiki", "wikimem.toml")
    code.git(a, "commit", "-q", "-m", "start a wiki")
    code.git(a, "push", "-q", str(origin), "main")
    code.git(work, "clone", "-q", str(origin), "b")
    for side, root in (("a", a), ("b", b)):
        place(halves[side], raw_root, root)
        code.compile(root)
        code.git(root, "add", "raw")
        code.git(root, "commit", "-q", "-m", f"half {side}")
    puller, pushed = (a, b) if first == "a" else (b, a)
    code.git(pushed, "push", "-q", str(origin), "main")
    started = time.perf_counter()
    merge = code.git(puller, "pull", "--no-rebase", "--no-edit", str(origin), "main", check=False)
    pull_s = time.perf_counter() - started
    stopped = code.git(puller, "diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
    if merge.returncode != 0:
        # a person resolves it as fast as they can: their side of every conflict, then commit
        for path in stopped:
            code.git(puller, "checkout", "--ours", "--", path, check=False)
        code.git(puller, "add", "-A", "wiki", "raw", check=False)
        code.git(puller, "commit", "-q", "--no-edit", check=False)
    report = code.compile(puller)
    kept = set(report.get("kept", []))
    kept.update(marked(puller / "wiki"))
    diff_puller = differing(pages(puller / "wiki"), expected)
    code.git(puller, "push", "-q", str(origin), "main", check=False)
    code.git(pushed, "pull", "-q", "--no-rebase", "--no-edit", str(origin), "main", check=False)
    other = code.compile(pushed)
    kept.update(other.get("kept", []))
    kept.update(marked(pushed / "wiki"))
    diff_other = differing(pages(pushed / "wiki"), expected)
    return {"conflicts": len(stopped), "conflicted": stopped[:5], "kept": len(kept), "kept_pages": sorted(kept)[:5],
            "differ": len(set(diff_puller) | set(diff_other)), "differ_pages": sorted(set(diff_puller) | set(diff_other))[:5],
            "pull_s": round(pull_s, 2)}


def merge_figures(codes: list[Code], corpora: list[str], work: Path) -> list[dict[str, Any]]:
    rows = []
    for corpus in corpora:
        if not corpus_files(corpus):
            say(f"merge: corpus {corpus} not found under {SHARED}; skipped")
            continue
        for code in codes:
            one = work / f"one-{corpus}-{code.commit}"
            code.wikimem("init", str(one))
            place(corpus_files(corpus), SHARED / corpus / "raw", one)
            code.compile(one)
            expected = pages(one / "wiki")
            for first in ("a", "b"):
                say(f"merge: {corpus}, {code.rev} ({code.commit}), {first.upper()} pulls first")
                row = merge_case(code, corpus, first, work / f"merge-{corpus}-{code.commit}-{first}", expected)
                row.update(corpus=corpus, code=code.rev, commit=code.commit, first=first, pages=len(expected))
                rows.append(row)
                say(f"  conflicts {row['conflicts']}, kept {row['kept']}, differ {row['differ']} of {len(expected)} "
                    f"(pull {row['pull_s']} s)")
    return rows


# --- the damaged state.db ---------------------------------------------------------------------

FORMS = ["garbage", "truncated", "empty file", "a directory", "wrong schema", "other columns", "missing tables",
         "deleted", ".wikimem deleted"]


def damage(root: Path, how: str) -> None:
    db = root / ".wikimem" / "state.db"
    for extra in (db.with_name("state.db-wal"), db.with_name("state.db-shm")):
        extra.unlink(missing_ok=True)
    data = db.read_bytes()
    if how == "garbage":
        db.write_bytes(os.urandom(4096))
    elif how == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif how == "empty file":
        db.write_bytes(b"")
    elif how == "a directory":
        db.unlink()
        db.mkdir()
    elif how == "wrong schema":
        db.unlink()
        other = sqlite3.connect(db)
        other.executescript("CREATE TABLE sources (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE pages (url TEXT);")
        other.close()
    elif how in ("other columns", "missing tables"):
        other = sqlite3.connect(db)
        other.executescript("DROP TABLE pages; CREATE TABLE pages (path TEXT PRIMARY KEY, hash TEXT);"
                            if how == "other columns" else "DROP TABLE pages; DROP TABLE sources;")
        other.close()
    elif how == "deleted":
        db.unlink()
    else:
        shutil.rmtree(root / ".wikimem")


def damage_figures(codes: list[Code], work: Path, count: int = 24) -> list[dict[str, Any]]:
    files = corpus_files("topics")[:count]
    if not files:
        say("damage: the topics corpus is not there; skipped")
        return []
    rows = []
    for code in codes:
        base = work / f"damage-base-{code.commit}"
        code.wikimem("init", str(base))
        place(files, SHARED / "topics" / "raw", base)
        code.compile(base)
        wiki = base / "wiki"
        concept = sorted((wiki / "concepts").glob("*.md"))[0].relative_to(wiki).as_posix()
        state = sqlite3.connect(base / ".wikimem" / "state.db")
        source, page = state.execute("SELECT path, page FROM sources WHERE status='compiled' ORDER BY path").fetchone()
        state.close()
        for with_git in (False, True):
            for how in FORMS:
                root = work / f"damage-{code.commit}-{with_git}-{FORMS.index(how)}"
                shutil.copytree(base, root, symlinks=True)
                if with_git:
                    code.git(root, "init", "-q", "-b", "main")
                    code.git(root, "add", "raw", "wiki", "wikimem.toml")
                    code.git(root, "commit", "-q", "-m", "a wiki")
                for rel in (page, concept):
                    target = root / "wiki" / rel
                    target.write_text(target.read_text() + f"\n{PERSONS_LINE}\n")
                if with_git:
                    code.git(root, "commit", "-q", "-am", "my notes")
                damage(root, how)
                raw = root / source
                raw.write_text(raw.read_text() + "\n\nOne more paragraph, added after the damage, in 2027.\n")
                title = (root / "wiki" / concept).read_text().split("title: ", 1)[1].split("\n", 1)[0]
                (root / "raw" / "after-the-damage.md").write_text(
                    f"# After the damage\n\nThe {title} was discussed again in 2027. {title} matters.\n")
                report = code.compile(root)
                kept = sum(PERSONS_LINE in (root / "wiki" / rel).read_text() for rel in (page, concept))
                rows.append({"code": code.rev, "commit": code.commit, "form": how, "git": with_git, "made": 2,
                             "kept": kept, "reported_kept": len(report.get("kept", [])),
                             "error": report.get("error") or ""})
                say(f"damage: {code.rev} {how}{' (git)' if with_git else ''}: {kept} of 2 kept")
    return rows


# --- the no-op compile at 10k sources ---------------------------------------------------------


def noop_figures(codes: list[Code], work: Path, scale: int, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(REPO / "daemon"))
    import scale as scale_module

    base = work / f"scale-{scale}"
    scale_module.build(base, scale)
    roots = {}
    first: dict[str, list[float]] = {}
    for code in codes:
        roots[code.rev] = work / f"noop-{code.commit}"
        shutil.copytree(base, roots[code.rev])
        say(f"noop: first compile of {scale} sources with {code.rev} ({code.commit})")
        _, wall, cpu = code.timed_compile(roots[code.rev])
        first[code.rev] = [round(wall, 1), round(cpu, 1)]
    samples: dict[str, list[float]] = {code.rev: [] for code in codes}
    cpu_samples: dict[str, list[float]] = {code.rev: [] for code in codes}
    for n in range(rounds):
        for code in codes if n % 2 == 0 else reversed(codes):  # who goes first alternates
            report, wall, cpu = code.timed_compile(roots[code.rev])
            samples[code.rev].append(wall)
            cpu_samples[code.rev].append(cpu)
            if not report.get("noop"):
                raise SystemExit(f"noop: {code.rev}'s compile of an unchanged raw/ was not a no-op: {report}")
        say(f"noop round {n + 1}: " + ", ".join(
            f"{c.rev} {samples[c.rev][-1]:.2f} s ({cpu_samples[c.rev][-1]:.2f} s CPU)" for c in codes))
    before, after = (samples[c.rev] for c in codes)
    ratios = [b / a for a, b in zip(before, after, strict=True)]
    cpu_before, cpu_after = (cpu_samples[c.rev] for c in codes)
    cpu_ratios = [b / a for a, b in zip(cpu_before, cpu_after, strict=True)]
    return {"scale": scale, "first_compile_wall_cpu_s": first,
            "noop_s": {c.rev: [round(x, 3) for x in samples[c.rev]] for c in codes},
            "noop_cpu_s": {c.rev: [round(x, 3) for x in cpu_samples[c.rev]] for c in codes},
            "median_s": {c.rev: round(statistics.median(samples[c.rev]), 3) for c in codes},
            "median_cpu_s": {c.rev: round(statistics.median(cpu_samples[c.rev]), 3) for c in codes},
            "ratio_after_before": round(statistics.median(ratios), 3),
            "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
            "cpu_ratio_after_before": round(statistics.median(cpu_ratios), 3)}


# --- the report -------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> str:
    out = []
    if results.get("merge"):
        out += ["## Two clones pulling each other", "",
                "| corpus | code | pulls first | conflicts | kept as a person's | pages differing from one machine | pages | pull s |",
                "|---|---|---|---|---|---|---|---|"]
        for r in results["merge"]:
            out.append(f"| {r['corpus']} | {r['code']} ({r['commit']}) | {r['first'].upper()} | {r['conflicts']} | {r['kept']} | "
                       f"{r['differ']} | {r['pages']} | {r['pull_s']} |")
        out.append("")
    if results.get("damage"):
        out += ["## A damaged state.db: a person's lines kept, of those made", "", "| form | " +
                " | ".join(f"{c} | {c} + git" for c in results["codes"]) + " |",
                "|---|" + "---|" * (2 * len(results["codes"]))]
        for form in FORMS:
            cells = []
            for code in results["codes"]:
                for with_git in (False, True):
                    row = next((r for r in results["damage"] if r["code"] == code and r["form"] == form
                                and r["git"] == with_git), None)
                    cells.append(f"{row['kept']} / {row['made']}" if row else "-")
            out.append(f"| {form} | " + " | ".join(cells) + " |")
        for code in results["codes"]:
            rows = [r for r in results["damage"] if r["code"] == code]
            out.append(f"\n{code}: {sum(r['kept'] for r in rows)} of {sum(r['made'] for r in rows)} kept")
        out.append("")
    if results.get("noop"):
        n = results["noop"]
        out += [f"## No-op compile, {n['scale']} sources", "",
                f"median wall seconds: {n['median_s']}; after/before, median of the rounds' ratios: "
                f"{n['ratio_after_before']} (range {n['ratio_range'][0]}-{n['ratio_range'][1]})",
                f"median CPU seconds: {n['median_cpu_s']}; after/before {n['cpu_ratio_after_before']}",
                f"first compile (wall, CPU seconds): {n['first_compile_wall_cpu_s']}", ""]
    return "\n".join(out)


def figure_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The results as rows of the bench contract (bench/contract.py): the second commit's figures,
    the first's as their baseline."""
    sys.path.insert(0, str(HERE))
    import contract

    before, after = results["codes"]
    rows = []
    for corpus in sorted({r["corpus"] for r in results.get("merge", [])}):
        for key, what, unit in (("conflicts", "conflicts", "files"), ("kept", "pages kept as a person's", "pages"),
                                ("differ", "pages differing from a one-machine compile", "pages")):
            value = {code: sum(r[key] for r in results["merge"] if r["corpus"] == corpus and r["code"] == code)
                     for code in (before, after)}
            rows.append(contract.row(f"two clones pulling each other, {corpus}: {what} (both orders)", value[after],
                                     unit, before, value[before], "0", goal_abs=0))
    if results.get("damage"):
        made = {code: sum(r["made"] for r in results["damage"] if r["code"] == code) for code in (before, after)}
        kept = {code: sum(r["kept"] for r in results["damage"] if r["code"] == code) for code in (before, after)}
        rows.append(contract.row(
            f"a person's lines kept through a damaged state.db ({len(FORMS)} forms, with and without git)",
            kept[after], f"of {made[after]}", before, kept[before], f"{made[after]} of {made[after]}",
            status="ok" if kept[after] == made[after] else "over"))
    if results.get("noop"):
        n = results["noop"]
        rows.append(contract.row(f"no-op compile, {n['scale']} sources", n["median_s"][after], "s", before,
                                 n["median_s"][before], "≤ 1.1x", goal_ratio=1.1,
                                 note=f"median of per-round ratios {n['ratio_after_before']}, "
                                      f"CPU {n.get('cpu_ratio_after_before')}"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--only", default="merge,damage,noop")
    parser.add_argument("--corpus", default="topics,versions,formats,sphinx")
    parser.add_argument("--scale", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the results as JSON here too")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout (the bench contract)")
    parser.add_argument("--workdir", type=Path, help="where to build workspaces (default: a temporary folder)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory(prefix="wikimem-merge-bench-", dir=args.workdir) as tmp:
        work = Path(tmp)
        codes = [Code(args.before, work / "code-before"), Code(args.after, work / "code-after")]
        results: dict[str, Any] = {"codes": [c.rev for c in codes], "commits": [c.commit for c in codes]}
        if "merge" in only:
            results["merge"] = merge_figures(codes, args.corpus.split(","), work)
        if "damage" in only:
            results["damage"] = damage_figures(codes, work)
        if "noop" in only:
            results["noop"] = noop_figures(codes, work, args.scale, args.rounds)
    if args.json:
        import contract

        contract.emit("merge_bench", figure_rows(results), **results)
    else:
        print(report(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where one wikimem command's time goes: named functions timed inside a real run of the CLI.

    python bench/phases.py [--cpu] [--fn MODULE:QUALNAME]... -- compile --root WS -q

Each function named is wrapped before the command runs. When the command ends (and when each
process it forks ends) one line on stderr gives, per function, its time summed over its calls,
and with wall time (the default) the span from its first start to its last end, in ms from the
start of this script. `--cpu` times the calling thread's CPU (time.thread_time) instead, which
moves less with the machine's load. Without --fn, the steps of a compile: the workers' reading,
the count, concepts, pages, the page writer, the search seed and the index.

The measure of a change to a first compile's serial path: WS a workspace whose raw/ was never
compiled (a fresh copy for each run), each of two trees in turn, several rounds:

    PYTHONPATH=../before/daemon python bench/phases.py -- compile --root WS -q
    PYTHONPATH=../after/daemon python bench/phases.py -- compile --root WS2 -q

and compare, say, the end of `_Compile.read_changed` (the workers done) to the end of
`compile_workspace`.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
import time
from typing import Any

STEPS = [
    "wikimem.backends.offline:_Compile.read_changed",
    "wikimem.backends.offline:_Compile.count",
    "wikimem.backends.offline:_Compile.choose_concepts",
    "wikimem.backends.offline:_Compile.render_source_pages",
    "wikimem.backends.offline:_Compile.render_concept_pages",
    "wikimem.compiler:PageWriter.apply",
    "wikimem.compiler:PageWriter.write",
    "wikimem.history:finish",
    "wikimem.compiler:_compile_locked",
    "wikimem.compiler:_make_searchable",
    "wikimem.compiler:compile_workspace",
    "wikimem.search.index:_grow_seed",
    "wikimem.search.index:_index_one",
]


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fn", action="append", default=[], help="MODULE:QUALNAME (repeatable)")
    parser.add_argument("--cpu", action="store_true", help="the calling thread's CPU time, not wall time")
    args = parser.parse_args(argv[:cut])
    command = argv[cut + 1:]
    clock = time.thread_time if args.cpu else time.perf_counter
    began = clock()
    total: dict[str, float] = {}
    span: dict[str, list[float]] = {}

    def report() -> None:
        # a forked process's thread CPU counts from its fork: its spans would mean nothing
        parts = [f"{name} {total[name] * 1000:.0f}" + ("" if args.cpu else
                 f" [{span[name][0] * 1000:.0f}-{span[name][1] * 1000:.0f}]") for name in total]
        if parts:
            sys.stderr.write(f"pid {os.getpid()}: {'  '.join(parts)}\n")

    def timed(fn: Any, name: str) -> Any:
        @functools.wraps(fn)
        def run(*a: Any, **k: Any) -> Any:
            start = clock()
            span.setdefault(name, [start - began, 0.0])
            try:
                return fn(*a, **k)
            finally:
                end = clock()
                total[name] = total.get(name, 0.0) + end - start
                span[name][1] = end - began
        return run

    def forked() -> None:  # a child says only what it timed itself
        total.clear()
        span.clear()

    os.register_at_fork(after_in_child=forked)
    for spec in args.fn or STEPS:
        module, _, qualname = spec.partition(":")
        owner: Any = importlib.import_module(module)
        *path, name = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, timed(getattr(owner, name), qualname))
    # the CLI and forked processes leave by os._exit: each says what it timed first
    leave = os._exit

    def exit_reporting(code: int) -> None:
        report()
        leave(code)

    os._exit = exit_reporting  # type: ignore[assignment]
    from wikimem.cli import main as cli

    sys.argv = ["wikimem", *command]
    try:
        cli()
    except SystemExit:
        pass
    report()


if __name__ == "__main__":
    main()

"""Work shared with a process forked beside the compile: the offline backend's concept pages.

Once its sources are read, a compile's own process counts them in state.db and renders the
pages on one core. The other core has the search seed when the compile builds the index from
nothing, and nothing at all when it re-renders the pages of an indexed workspace (`--rebuild`,
a new renderer). Concept pages, each a function of what is in memory, are the most of that
work: when a core is spare (the seed waits for pages, or there is none), a helper forked beside
the compile takes some of them while it stays so, each process taking the next page from one
counter, so the two end together whichever pages are long, and the seed is never slowed down.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ..lifetime import die_with, start_frozen

log = logging.getLogger("wikimem.beside")

Job = TypeVar("Job")
Done = TypeVar("Done")

LEAST_JOBS = 24  # fewer are done in this process: forking costs more than the helper saves
SPARE_POLL = 0.005  # seconds between two looks of the helper for a spare core


def shared(jobs: Sequence[Job], work: Callable[[Job], Done], *, least: int | None = None,
           spare: Callable[[], bool] | None = None) -> Iterator[tuple[int, Done]]:
    """(index, work(job)) for every job, each exactly once, in no set order: this process does
    those it takes as it takes them, then yields the helper's. `work` must use nothing but what
    is in memory (the helper must not use an open database connection, nor write any file), and
    give the same result in either process. `spare()` says whether a core is spare (the
    compile's other process waits): no helper is forked unless one is (a forked process holds
    pages of memory the compile goes on changing), and the helper takes no job while none is, so
    it never slows that process down. A core that becomes spare while this process works is
    taken then, between two jobs, while `least` jobs are left (the seed, done indexing raw/, waits
    for pages long before the last concept page). With fewer jobs, in a process with other
    threads (the daemon: forking there is unsafe) or on one core, this process does them all; if
    the helper fails, this process does what it did not hand back. `least`: LEAST_JOBS unless
    given."""
    least = LEAST_JOBS if least is None else least
    may_fork = len(jobs) >= least and (os.cpu_count() or 1) >= 2 and threading.active_count() == 1
    started = None
    done: set[int] = set()
    try:
        # alone, until a core is spare: jobs are taken in order, so the helper starts at `first`
        first = 0
        while first < len(jobs):
            if may_fork and len(jobs) - first >= least and (spare is None or spare()):
                started = _start_helper(jobs, work, spare, first)
                if started is not None:
                    break
                may_fork = False  # no process to be had: not asked again
            yield first, work(jobs[first])
            done.add(first)
            first += 1
        if started is not None:
            helper, counter, receive = started
            while (taken := _take(counter, len(jobs))) is not None:
                yield taken, work(jobs[taken])
                done.add(taken)
            got: Any = None
            try:
                got = receive.recv()
            except (EOFError, OSError):
                pass
            if isinstance(got, tuple) and got[0] == "ok":
                for index, result in got[1]:
                    if index not in done:
                        done.add(index)
                        yield index, result
            else:
                log.info("pages not rendered beside the compile (%s); rendering them here",
                         got[1] if isinstance(got, tuple) else "no report")
        # what no helper did: every job when there is none
        for index, job in enumerate(jobs):
            if index not in done:
                yield index, work(job)
    finally:
        if started is not None:
            helper, _, receive = started
            receive.close()
            if helper.is_alive():
                helper.kill()
            helper.join()


def _start_helper(jobs: Sequence[Any], work: Callable[[Any], Any],
                  spare: Callable[[], bool] | None, first: int = 0) -> tuple[Any, Any, Any] | None:
    """The helper forked, with the counter both processes take jobs from (from `first`) and the
    end of the pipe its results come by; None when no process is to be had (a limit on
    processes, or memory)."""
    import multiprocessing  # here: a compile with too few pages for a helper has no use for it

    context = multiprocessing.get_context("fork")
    counter = context.Value("q", first)
    receive, send = context.Pipe(duplex=False)
    helper = context.Process(target=_help, args=(jobs, work, counter, send, os.getpid(), spare),
                             name="wikimem-beside", daemon=True)
    try:
        start_frozen(helper)  # the helper reads what the compile holds: the two keep sharing it
    except OSError as exc:
        log.info("no helper beside the compile (%s)", exc)
        receive.close()
        return None
    finally:
        send.close()
    return helper, counter, receive


def _take(counter: Any, n: int) -> int | None:
    with counter.get_lock():
        index = counter.value
        if index >= n:
            return None
        counter.value = index + 1
        return int(index)


def _help(jobs: Sequence[Any], work: Callable[[Any], Any], counter: Any, send: Any, parent: int,
          spare: Callable[[], bool] | None) -> None:
    """The helper's process: the jobs it takes while a core is spare, done, handed back in one
    message."""

    die_with(parent)
    try:
        results = []
        while True:
            while spare is not None and not spare() and counter.value < len(jobs):
                time.sleep(SPARE_POLL)
            index = _take(counter, len(jobs))
            if index is None:
                break
            results.append((index, work(jobs[index])))
        send.send(("ok", results))
    except Exception as exc:  # noqa: BLE001 - the compile does them instead, and says why in its log
        send.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        send.close()

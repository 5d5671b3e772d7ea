"""How a compile's conversations with the model run side by side.

A conversation (one source, or one part of a long source, or tidying up after a removed
source) is a generator: it yields `Ask` with the next request and is sent the model's answer;
it yields `WaitFor` when a page it would create is being created by another conversation,
and is sent whether it waited (True: run the command again) or would have closed a circle of
conversations waiting on each other (False: tell the model). Its return value goes to the
job's `finish`; an exception it raises (or one a request raised) to the job's `fail`.

Two drivers run them:

- `run_threads`: a thread per live conversation, a request in flight each, as many as the
  Traffic window allows. Threads and the SDK's synchronous client rather than asyncio: a
  conversation's local work (the memory tool, the checks, wiki search, the commit) is
  synchronous code that must not interleave with another's anyway, so every conversation runs
  it under the Store's lock and only its request outside it; with a few dozen requests in
  flight at most (an account's limits), threads cost nothing that matters, and the code of a
  conversation stays the one straight loop it is.
- `run_rounds`: the Message Batches API. One thread steps every live conversation in a fixed
  order until each has a request ready (or is done); those requests go out as one batch; the
  answers come back together and the next round begins. The order is fixed, so a compile
  stopped while a batch is out can step the same conversations again from the answers it saved
  and fetch that batch's results instead of sending it again (batches.py).

Both call `tick` from the calling thread, every half second or so, for progress.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .memory import Contended, Store
from .traffic import RateLimited, Stopped, Traffic


@dataclass(frozen=True)
class Ask:
    """The next request of a conversation: the Messages API parameters."""

    params: dict[str, Any]
    tokens: int = 1  # an estimate of its new input tokens, for the ratelimit budgets


@dataclass(frozen=True)
class WaitFor:
    contended: Contended


Steps = Generator["Ask | WaitFor", Any, Any]


@dataclass
class Job:
    key: str  # what it is about: a source path (or a removed source's)
    steps: Steps
    finish: Callable[[Any], None]  # called with the generator's return value, under the Store's lock
    fail: Callable[[BaseException], None]  # called with what ended it, under the Store's lock
    index: int = 0  # its place in the compile's order (the batch requests' custom_id)
    waiting: Contended | None = field(default=None, repr=False)


class Fatal(Exception):
    """Wraps what must stop the whole compile (an interrupt from inside a conversation)."""


class _Park(Exception):
    def __init__(self, contended: Contended):
        self.contended = contended


def _step(store: Store, job: Job, value: Any, wait: Callable[[Job, Contended], bool]) -> Ask | None:
    """Run a conversation on to its next request (None when it ended), under the Store's lock. A
    wait that parks the conversation (_Park, lockstep rounds only) is raised to the caller."""
    with store.cond:
        try:
            item = job.steps.send(value)
            while isinstance(item, WaitFor):
                item = job.steps.send(wait(job, item.contended))
        except StopIteration as stop:
            job.finish(stop.value)
            return None
        except (_Park, KeyboardInterrupt, SystemExit, RateLimited, Stopped, Fatal):
            raise
        except BaseException as exc:  # noqa: BLE001 - the job says what a failure means for its source
            job.fail(exc)
            return None
    return item


def run_threads(jobs: Iterable[Job | None], store: Store, traffic: Traffic, send: Callable[[Ask], Any],
                tick: Callable[[], None] = lambda: None) -> None:
    """Every job, each in a thread of its own, while the window has room for its requests."""
    done = threading.Condition()
    live: set[str] = set()
    fatal: list[BaseException] = []

    def wait(job: Job, contended: Contended) -> bool:
        if store.would_deadlock(job.key, contended.holder):
            return False
        store.wait_for(job.key, contended, lambda: traffic.stop_reason is not None)
        return True

    def work(job: Job) -> None:
        value: Any = None
        try:
            while True:
                ask = _step(store, job, value, wait)
                if ask is None:
                    return
                try:
                    value = send(ask)
                except (KeyboardInterrupt, SystemExit, RateLimited, Stopped):
                    raise
                except BaseException as exc:  # noqa: BLE001 - a failed request fails its source only
                    with store.cond:
                        job.steps.close()
                        job.fail(exc)
                    return
        except Stopped as exc:
            with store.cond:
                job.steps.close()
                job.fail(exc)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which stops the compile
            fatal.append(exc)
            traffic.stop(str(exc) or type(exc).__name__)
            with store.cond:
                job.steps.close()
                store.release(job.key)
        finally:
            with done:
                live.discard(job.key)
                done.notify_all()

    def room() -> bool:
        # conversations waiting for another's page hold no request: they do not take a place
        running = len(live) - len(store.waiting)
        slack = 0 if traffic.ceiling == 1 else 1  # one more, to use a place while another runs its tools
        return running < traffic.target() + slack

    source = iter(jobs)
    try:
        while True:
            # room first, then the next job: it is made (its source loaded) when it can start
            with done:
                while not fatal and not room():
                    done.wait(0.5)
                    tick()
            if fatal:
                break
            job = next(source, _END)
            if job is _END:
                break
            if job is None:
                continue
            with done:
                live.add(job.key)
            threading.Thread(target=work, args=(job,), name=f"wikimem-{job.key[-40:]}", daemon=True).start()
            tick()
        with done:
            while live:
                done.wait(0.5)
                tick()
    except BaseException:
        traffic.stop("interrupted")
        raise
    if fatal:
        raise fatal[0]


def run_rounds(jobs: Iterable[Job | None], store: Store, submit: Callable[[int, list[tuple[Job, Ask]]], dict[int, Any]],
               cap: int, tick: Callable[[], None] = lambda: None) -> int:
    """Every job in lockstep rounds: each round's requests go to `submit` together (one Message
    Batch), which returns each job's answer (or the exception that fails it) by job index.
    At most `cap` conversations are live at once. Returns the number of rounds."""
    source: Iterator[Job | None] = iter(jobs)
    exhausted = False
    live: dict[int, Job] = {}
    parked: dict[int, Job] = {}
    runnable: deque[tuple[Job, Any]] = deque()
    rounds = 0

    def wait(job: Job, contended: Contended) -> bool:
        if store.would_deadlock(job.key, contended.holder):
            return False
        raise _Park(contended)

    def fill() -> None:
        nonlocal exhausted
        while not exhausted and len(live) < cap:
            job = next(source, _END)
            if job is _END:
                exhausted = True
                return
            if job is None:
                continue
            assert isinstance(job, Job)
            live[job.index] = job
            runnable.append((job, None))

    def unpark() -> None:
        for index, job in list(parked.items()):
            assert job.waiting is not None
            if store.claimant(job.waiting.rel) != job.waiting.holder or job.waiting.holder not in _keys(live):
                del parked[index]
                store.waiting.pop(job.key, None)
                job.waiting = None
                runnable.append((job, True))

    while True:
        fill()
        asks: list[tuple[Job, Ask]] = []
        while runnable:
            job, value = runnable.popleft()
            try:
                ask = _step_parking(store, job, value, wait)
            except _Park as park:
                job.waiting = park.contended
                store.waiting[job.key] = park.contended.holder
                parked[job.index] = job
                continue
            if ask is None:
                del live[job.index]
                unpark()
                fill()
                continue
            asks.append((job, ask))
        tick()
        if not asks:
            if parked:  # nothing left that could release them: let them go on without waiting
                for index, job in list(parked.items()):
                    del parked[index]
                    store.waiting.pop(job.key, None)
                    job.waiting = None
                    runnable.append((job, False))
                continue
            if exhausted and not live:
                return rounds
            continue
        rounds += 1
        answers = submit(rounds, asks)
        for job, _ask in asks:
            runnable.append((job, answers[job.index]))


_END: Any = object()


def _keys(jobs: dict[int, Job]) -> set[str]:
    return {job.key for job in jobs.values()}


def _step_parking(store: Store, job: Job, value: Any, wait: Callable[[Job, Contended], bool]) -> Ask | None:
    """_step for lockstep rounds: an answer that is an exception fails the job; a page another
    conversation is creating parks it (_Park) until that one is done, then the command runs again."""
    if isinstance(value, BaseException):
        with store.cond:
            job.steps.close()
            job.fail(value)
        return None
    return _step(store, job, value, wait)

"""Work shared with a process forked beside the compile (backends/beside.py), and the concept
pages the offline backend renders that way: the same pages as rendered in one process."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from conftest import single_threaded, snapshot, write
from wikimem.backends import beside
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.init import init_workspace
from wikimem.workspace import Workspace

PARENT = os.getpid()


def _who(job: int) -> tuple[int, bool]:
    return job * job, os.getpid() == PARENT


def test_every_job_is_done_once_and_the_helper_takes_some():
    single_threaded()
    context = multiprocessing.get_context("fork")
    helped, began = context.Event(), context.Event()

    def work(job: int) -> tuple[int, bool]:
        # each process, at its first job, waits for the other to have taken one: both take some
        # however fast either starts (after the fork this process unfreezes its heap, which in a
        # test run of many modules took long enough for the helper to take every job)
        mine, other = (began, helped) if os.getpid() == PARENT else (helped, began)
        if not mine.is_set():
            mine.set()
            assert other.wait(30), "the other process took no job"
        return _who(job)

    results = list(beside.shared(list(range(40)), work, least=2))
    assert sorted(i for i, _ in results) == list(range(40))
    assert all(value == i * i for i, (value, _) in results)
    here = sum(1 for _, (_, in_parent) in results if in_parent)
    assert 0 < here < 40  # both processes did some
    assert not multiprocessing.active_children()  # the helper is gone


def test_a_helper_that_fails_leaves_its_jobs_to_this_process():
    single_threaded()

    def work(job: int) -> tuple[int, bool]:
        if os.getpid() != PARENT:
            raise RuntimeError("the helper breaks")
        return _who(job)

    results = dict(beside.shared(list(range(30)), work, least=2))
    assert results == {i: (i * i, True) for i in range(30)}


def test_a_helper_killed_mid_way_leaves_its_jobs_to_this_process():
    single_threaded()

    def work(job: int) -> tuple[int, bool]:
        if os.getpid() != PARENT:
            os._exit(3)  # as a kill would: no report at all
        return _who(job)

    results = dict(beside.shared(list(range(30)), work, least=2))
    assert results == {i: (i * i, True) for i in range(30)}
    assert not multiprocessing.active_children()


def test_the_helper_takes_no_job_while_no_core_is_spare(monkeypatch):
    single_threaded()
    # spare when the helper is forked, never after (as the seed's core, busy again)
    results = dict(beside.shared(list(range(30)), _who, least=2, spare=lambda: os.getpid() == PARENT))
    assert results == {i: (i * i, True) for i in range(30)}
    assert not multiprocessing.active_children()

    def no_fork(*args, **kwargs):
        raise AssertionError("a helper forked while no core is spare")

    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    assert dict(beside.shared(list(range(30)), _who, least=2, spare=lambda: False)) == results


def test_no_process_to_be_had_leaves_every_job_to_this_process(monkeypatch):
    import errno

    single_threaded()

    def refused(self):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.get_context("fork").Process, "start", refused)
    assert dict(beside.shared(list(range(30)), _who, least=2)) == {i: (i * i, True) for i in range(30)}


def test_an_error_here_ends_the_helper_too():
    single_threaded()
    never = multiprocessing.get_context("fork").Event()

    def work(job: int) -> int:
        if os.getpid() != PARENT:
            never.wait(30)  # the helper holds the one job it took: whatever its speed, this process has jobs
            return job
        raise ValueError("broken page")

    with pytest.raises(ValueError, match="broken page"):
        list(beside.shared(list(range(200)), work, least=2))
    assert not multiprocessing.active_children()


def test_few_jobs_or_other_threads_keep_the_work_in_this_process(monkeypatch):
    single_threaded()
    assert all(in_parent for _, (_, in_parent) in beside.shared(list(range(10)), _who, least=11))
    monkeypatch.setattr(beside, "LEAST_JOBS", 11)
    assert all(in_parent for _, (_, in_parent) in beside.shared(list(range(10)), _who))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert all(in_parent for _, (_, in_parent) in beside.shared(list(range(40)), _who, least=2))
    finally:
        stop.set()
        thread.join()


TOPICS = ["borrow checker", "hash map", "error handling", "thread pool", "trait object", "smart pointer"]


def _compiled(root: Path, monkeypatch, least: int, helped: object = None) -> dict[str, bytes]:
    ws = Workspace.at(root)
    init_workspace(ws)
    for n in range(36):
        topic, other = TOPICS[n % len(TOPICS)], TOPICS[(n + 1) % len(TOPICS)]
        write(ws, f"notes/note-{n:02}.md", (
            f"# The {topic.title()} in Practice {n}\n\n"
            f"The *{topic}* is a part of the runtime that version 1.{n} changed. "
            f"The {topic} works with the {other} when a program needs {n + 2} workers.\n\n"
            f"## Using the {other.title()}\n\nThe {other} keeps its default of {n * 10} entries. "
            f"A {topic} never blocks the {other}.\n"))
    monkeypatch.setattr(beside, "LEAST_JOBS", least)
    if helped is not None:
        shared = beside.shared

        def waiting(jobs, work, **kwargs):
            # this process renders its first page once the helper has rendered one
            def counted(job):
                if os.getpid() != PARENT:
                    with helped.get_lock():
                        helped.value += 1
                elif job is jobs[0]:
                    for _ in range(3000):
                        if helped.value:
                            break
                        threading.Event().wait(0.01)
                return work(job)

            kwargs.pop("spare", None)  # whether the search seed waits: here the helper takes pages at once
            return shared(jobs, counted, **kwargs)

        monkeypatch.setattr("wikimem.backends.offline.shared", waiting)
    compile_workspace(ws, load_settings(ws.root, environ={}))
    pages = snapshot(ws.wiki)
    pages.pop("log.md")  # it states the compile's time
    return pages


def test_concept_pages_rendered_beside_the_compile_are_those_it_renders_alone(tmp_path, monkeypatch):
    single_threaded()
    alone = _compiled(tmp_path / "alone", monkeypatch, 10**9)
    assert sum(1 for p in alone if p.startswith("concepts/")) >= 4
    helped = multiprocessing.get_context("fork").Value("i", 0)
    assert _compiled(tmp_path / "beside", monkeypatch, 2, helped) == alone
    assert helped.value >= 1  # pages the helper rendered


def test_a_core_spare_later_is_taken_then_for_the_jobs_left():
    single_threaded()
    context = multiprocessing.get_context("fork")
    helped, began = context.Event(), context.Event()
    asked = []

    def spare() -> bool:
        # busy for this process's first ten looks (the seed indexing raw/), spare after
        if os.getpid() == PARENT:
            asked.append(1)
            return len(asked) > 10
        return True

    def work(job: int) -> tuple[int, bool]:
        if job >= 10:  # both processes take some of the jobs left once the helper runs
            mine, other = (began, helped) if os.getpid() == PARENT else (helped, began)
            if not mine.is_set():
                mine.set()
                assert other.wait(30), "the other process took no job"
        return _who(job)

    results = dict(beside.shared(list(range(40)), work, least=2, spare=spare))
    assert sorted(results) == list(range(40)) and all(v == i * i for i, (v, _) in results.items())
    assert all(results[i][1] for i in range(10))  # done here, before a core was spare
    assert any(not in_parent for _, in_parent in results.values())  # the helper did some after
    assert not multiprocessing.active_children()


def test_no_helper_is_forked_for_fewer_jobs_than_least_left(monkeypatch):
    single_threaded()
    asked = []

    def spare() -> bool:
        asked.append(1)
        return len(asked) > 25  # spare only once fewer than `least` jobs are left

    def no_fork(*args, **kwargs):
        raise AssertionError("a helper forked for fewer jobs than least")

    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    results = dict(beside.shared(list(range(30)), _who, least=10, spare=spare))
    assert results == {i: (i * i, True) for i in range(30)}

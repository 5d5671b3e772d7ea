"""Many conversations at once, rate limits and Message Batches: the real SDK against the local
Messages API (tests/fake_messages_server.py), taught latency, a limit on requests in flight and
the batch endpoints. The model is SharedPageModel (tests/model_scripts.py): every source adds a
line to one shared concept page, so conversations meet on it. No wall-clock assertions."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import snapshot, write
from fake_messages_server import Error, Expired, FakeMessagesServer
from model_scripts import SharedPageModel, answer_with, source_of
from wikimem.backends.traffic import RateLimited
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.errors import UsageError
from wikimem.pages import loads_page
from wikimem.workspace import Workspace

SHARED = "concepts/shared-topic.md"


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(var, raising=False)


def notes(ws: Workspace, count: int, prefix: str = "note") -> list[str]:
    paths = []
    for n in range(1, count + 1):
        name = f"{prefix}-{n:02d}.md"
        write(ws, name, f"# {prefix.capitalize()} {n}\n\nNote {n} says the shared topic matters for reason {n}.\n\n"
                        f"The measured value in note {n} was {n * 7} units.\n")
        paths.append(f"raw/{name}")
    return paths


def compile_with(ws: Workspace, server: FakeMessagesServer, **flags: Any):
    settings = load_settings(ws.root, {"backend": "anthropic", "base_url": server.url, **flags}, environ={})
    return compile_workspace(ws, settings)


def shared_lines(ws: Workspace) -> list[str]:
    return re.findall(r"^- \[(note-\d+\.md)\]", (ws.wiki / SHARED).read_text(), re.M)


@pytest.fixture
def model() -> SharedPageModel:
    return SharedPageModel()


def test_parallel_conversations_on_a_shared_page_lose_nothing(ws: Workspace, model: SharedPageModel) -> None:
    paths = notes(ws, 12)
    with FakeMessagesServer(answer_with(model), latency=0.05) as server:
        report = compile_with(ws, server, concurrency=6)
    assert report.failed == [] and sorted(report.compiled) == paths
    assert server.peak_in_flight > 1  # conversations really ran side by side
    for path in paths:  # every source page
        assert (ws.wiki / f"sources/{path[4:-3]}.md").exists(), path
    # every source's addition to the shared page, once each
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)
    page = loads_page(SHARED, (ws.wiki / SHARED).read_text())
    assert sorted(page.sources) == paths  # code's `sources`, merged from every conversation
    assert page.body.count("# Shared topic") == 1 and page.body.count("## Also mentioned in") == 1
    # each line where its model put it: under the heading, though the page grew while it worked
    # (its `sources` list, others' lines) between the view and the insert
    assert page.body.startswith("# Shared topic\n\nThe topic every note")
    tail = page.body.split("## Also mentioned in\n", 1)[1]
    assert sorted(re.findall(r"^- \[(note-\d+\.md)\]", tail, re.M)) == sorted(p[4:] for p in paths)
    assert report.traffic["max_in_flight"] > 1 and report.traffic["mode"] == "interactive"
    # the compile report's `traffic` (pinned: --json prints it as is)
    assert set(report.to_json()["traffic"]) == {
        "mode", "turns", "tokens", "cost_usd", "merged_pages", "conflicts", "requests", "rejected",
        "max_in_flight", "concurrency", "narrowest_window", "held_back_seconds"}


def test_concurrency_costs_no_more_tokens_than_a_serial_compile(tmp_path: Any) -> None:
    """The same sources, the same model: one at a time, then six at once."""
    from wikimem.init import init_workspace

    spent = {}
    for concurrency in (1, 6):
        ws = Workspace.at(tmp_path / f"c{concurrency}")
        init_workspace(ws)
        notes(ws, 10)
        with FakeMessagesServer(answer_with(SharedPageModel()), latency=0.02) as server:
            report = compile_with(ws, server, concurrency=concurrency)
        assert report.failed == []
        spent[concurrency] = (report.traffic["turns"], sum(report.traffic["tokens"].values()),
                              report.traffic["tokens"]["cache_write"])
    turns, tokens, writes = spent[6]
    # the prompt cache is warmed by one request before the others go: no extra prefix writes
    assert writes <= spent[1][2] * 1.05
    # a source that meets the shared page being made waits and is shown it as it landed: it adds
    # its line in the turn it would have one at a time (the page it sees may be a little longer)
    assert turns == spent[1][0] and tokens <= spent[1][1] * 1.05, spent


def test_guards_hold_under_concurrency(ws: Workspace) -> None:
    paths = notes(ws, 8)
    person = ws.wiki / "concepts" / "mine.md"
    person.parent.mkdir(exist_ok=True)
    person.write_text("---\ntitle: Mine\n---\n# Mine\n\nMy own notes, not wikimem's.\n")
    before_agents = (ws.wiki / "AGENTS.md").read_bytes()
    hostile = {"raw/note-03.md", "raw/note-06.md"}
    model = SharedPageModel(hostile=hostile)
    with FakeMessagesServer(answer_with(model), latency=0.02) as server:
        report = compile_with(ws, server, concurrency=4)
    assert report.failed == []
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)  # the page others built stands
    assert (ws.wiki / "AGENTS.md").read_bytes() == before_agents
    assert person.read_text() == "---\ntitle: Mine\n---\n# Mine\n\nMy own notes, not wikimem's.\n"
    assert not (ws.wiki / "sources/someone-else.md").exists()
    refused = {path for path, _ in report.refused}
    assert refused == hostile
    for path in hostile:  # each attack refused, readably, whatever else ran meanwhile
        reasons = [r for p, r in report.refused if p == path]
        assert len(reasons) >= 4 and any("belongs to the user" in r for r in reasons)


def test_a_model_that_loops_on_the_shared_page_is_ended_by_the_turn_budget(ws: Workspace) -> None:
    paths = notes(ws, 6)
    model = SharedPageModel(loop_on={"raw/note-02.md"})
    with FakeMessagesServer(answer_with(model), latency=0.01) as server:
        report = compile_with(ws, server, concurrency=4, max_turns=6)
    assert [p for p, _ in report.failed] == ["raw/note-02.md"] and "max_turns" in report.failed[0][1]
    assert sorted(report.compiled) == [p for p in paths if p != "raw/note-02.md"]
    assert "note-02.md" not in shared_lines(ws) and not (ws.wiki / "sources/note-02.md").exists()
    assert len(shared_lines(ws)) == 5


def test_a_429_storm_slows_the_compile_and_it_completes(ws: Workspace, model: SharedPageModel) -> None:
    paths = notes(ws, 10)
    with FakeMessagesServer(answer_with(model), latency=0.03, max_in_flight=2, retry_after=0.05) as server:
        report = compile_with(ws, server, concurrency=8)
    assert report.failed == [] and sorted(report.compiled) == paths  # no source failed for a 429
    assert server.rejected > 0 and report.traffic["rejected"] == server.rejected
    assert report.traffic["narrowest_window"] <= 4  # fewer requests in flight after the 429s
    assert server.peak_in_flight <= 2
    assert any(w.startswith("rate limited:") for w in report.warnings)
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)


def test_a_server_that_refuses_everything_stops_the_compile_with_nothing_written(ws: Workspace,
                                                                                model: SharedPageModel) -> None:
    from wikimem.cli import main

    notes(ws, 3)
    before = snapshot(ws.wiki)
    with FakeMessagesServer(answer_with(model), max_in_flight=0, retry_after=0.05) as server:
        with pytest.raises(RateLimited, match="rejected every request"):
            compile_with(ws, server, concurrency=4, rate_limit_wait=0.3)
        assert snapshot(ws.wiki) == before and server.requests == []
        (ws.root / "wikimem.toml").write_text(f'backend = "anthropic"\nbase_url = "{server.url}"\nrate_limit_wait = 0.3\n')
        result = CliRunner().invoke(main, ["compile", "--root", str(ws.root)])
    assert result.exit_code == 1
    assert result.stderr.startswith("wikimem: the API rejected every request (429/529")
    assert snapshot(ws.wiki) == before


def test_a_killed_run_with_conversations_in_flight_resumes_from_its_journal(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikimem.backends.anthropic import AnthropicBackend

    paths = notes(ws, 8)
    before = snapshot(ws.wiki)
    done: list[str] = []
    original = AnthropicBackend._source_done

    def killed_after_three(self: AnthropicBackend, run: Any, session: Any, result: Any) -> None:
        original(self, run, session, result)
        done.append(session.key)
        if len(done) == 3:
            raise KeyboardInterrupt  # others are in flight: their work is not journaled

    monkeypatch.setattr(AnthropicBackend, "_source_done", killed_after_three)
    first = FakeMessagesServer(answer_with(SharedPageModel()), latency=0.02)
    with first, pytest.raises(KeyboardInterrupt):
        compile_with(ws, first, concurrency=4)
    assert snapshot(ws.wiki) == before  # nothing written
    monkeypatch.setattr(AnthropicBackend, "_source_done", original)
    with FakeMessagesServer(answer_with(SharedPageModel()), latency=0.02) as second:
        report = compile_with(ws, second, concurrency=4)
    assert report.failed == [] and sorted(report.compiled) == paths
    # the kill stopped the compile after the third commit; a fourth may have finished meanwhile
    assert len(done) >= 3 and f"resumed {len(done)} sources an interrupted run had compiled" in " ".join(report.warnings)
    asked = {source_of(b)[0] for b in second.bodies}
    assert asked == set(paths) - set(done)  # the journaled three were not sent again
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)


def test_concurrency_zero_is_a_usage_error_and_a_huge_one_is_capped(ws: Workspace, model: SharedPageModel) -> None:
    from wikimem.cli import main

    with pytest.raises(UsageError, match="concurrency must be 1 or more"):
        load_settings(ws.root, {"concurrency": 0}, environ={})
    result = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--concurrency", "0"])
    assert result.exit_code == 2 and "concurrency must be 1 or more, not 0 (flag)" in result.stderr
    notes(ws, 2)
    with FakeMessagesServer(answer_with(model)) as server:
        report = compile_with(ws, server, concurrency=10_000)
    assert report.failed == []
    assert any(w.startswith("concurrency 10000 (flag) capped at 64") for w in report.warnings)


# --- Message Batches


def test_a_batched_compile_sends_each_round_as_one_batch(ws: Workspace, model: SharedPageModel) -> None:
    paths = notes(ws, 6)
    with FakeMessagesServer(answer_with(model)) as server:
        report = compile_with(ws, server, batch=True)
    assert report.failed == [] and sorted(report.compiled) == paths
    assert report.traffic["mode"] == "batch"
    assert report.traffic["batches"] == report.traffic["rounds"] == server.batches_created
    assert all(r["path"] == "/v1/messages/batches" for r in server.requests)  # nothing sent outside a batch
    assert len({r["custom_id"] for r in server.requests}) == len(server.requests)
    # the first round carries every conversation's first request
    first_round = [r for r in server.requests if r["custom_id"].endswith("-r0001")]
    assert {source_of(r["body"])[0] for r in first_round} == set(paths)
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)
    log_md = (ws.wiki / "log.md").read_text()
    assert "(batch prices)" in log_md or any("(batch prices)" in w for w in report.warnings)
    assert not (ws.state_dir / "anthropic-batches.jsonl").exists()


def test_a_batch_that_expires_or_errors_for_some_requests_fails_only_those(ws: Workspace) -> None:
    paths = notes(ws, 5)
    model = SharedPageModel()
    broken = {"raw/note-02.md": Expired(), "raw/note-04.md": Error(500, "Internal server error", "api_error")}

    def flaky(body: dict[str, Any]) -> Any:
        path = source_of(body)[0]
        if path in broken and len(body["messages"]) == 1:
            return broken[path]
        return model(body)

    with FakeMessagesServer(answer_with(flaky)) as server:
        report = compile_with(ws, server, batch=True)
    failed = dict(report.failed)
    assert set(failed) == set(broken)
    assert "expired" in failed["raw/note-02.md"] and failed["raw/note-04.md"].startswith("API error in the batch")
    assert sorted(report.compiled) == sorted(set(paths) - set(broken))
    assert not (ws.wiki / "sources/note-02.md").exists()
    with FakeMessagesServer(answer_with(model)) as server:  # the next compile retries them
        again = compile_with(ws, server, batch=True)
    assert again.failed == [] and sorted(again.compiled) == sorted(broken)
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)


def test_a_killed_batched_compile_resumes_by_fetching_the_batch_out(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikimem.backends import batches

    paths = notes(ws, 4)
    before = snapshot(ws.wiki)
    server = FakeMessagesServer(answer_with(SharedPageModel()))
    real_sleep = batches.sleep

    def stop_when_round_two_is_out(seconds: float) -> None:
        if server.batches_created == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second round's batch is out
        real_sleep(seconds)

    with server:
        server.release.clear()  # batches stay out until released
        ended = server.release

        def release_first(seconds: float) -> None:
            if server.batches_created == 1:
                ended.set()
                real_sleep(0.05)
                ended.clear()
            stop_when_round_two_is_out(seconds)

        monkeypatch.setattr(batches, "sleep", release_first)
        with pytest.raises(KeyboardInterrupt):
            compile_with(ws, server, batch=True)
        assert snapshot(ws.wiki) == before and server.batches_created == 2
        sent_before = len(server.requests)
        assert (ws.state_dir / "anthropic-batches.jsonl").exists()
        saved = (ws.state_dir / "anthropic-batches.jsonl").read_text()
        server.release.set()
        monkeypatch.setattr(batches, "sleep", real_sleep)
        report = compile_with(ws, server, batch=True)
    assert report.failed == [] and sorted(report.compiled) == paths
    assert "resumed a batched compile that was stopped" in " ".join(report.warnings), saved[:3000]
    # round two was fetched, not sent again: every custom_id once, and the resumed compile only
    # created the batches of the rounds after it
    ids = [r["custom_id"] for r in server.requests]
    assert len(ids) == len(set(ids))
    assert server.batches_created == report.traffic["rounds"]
    # round one was read back from the saved run, round two fetched from the server as it was
    assert report.traffic["replayed"] == len([i for i in ids if i.endswith("-r0001")])
    assert len([i for i in ids if i.endswith(("-r0001", "-r0002"))]) == sent_before
    assert sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)


def test_estimate_prices_both_ways(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikimem.cli import main

    notes(ws, 3)
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        result = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--backend", "anthropic", "--estimate",
                                           "--json"])
        assert result.exit_code == 0, result.output
        plan = json.loads(result.stdout)
        assert plan["batch_cost_usd"] == pytest.approx(plan["cost_usd"] / 2, rel=0.01)
        assert plan["seconds"] > 0 and plan["batch_seconds"] > plan["seconds"] and plan["concurrency"] == 8
        shown = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--backend", "anthropic", "--estimate"])
        assert re.search(r"^interactive: ~\$[\d.]+, about .+ at concurrency 8$", shown.stdout, re.M)
        assert re.search(r"^batch \(--batch\): ~\$[\d.]+ \(half\), about .+ in \d+ rounds", shown.stdout, re.M)
        assert server.requests == []


def test_progress_reaches_the_callback_and_the_report(ws: Workspace, model: SharedPageModel) -> None:
    from wikimem.backends import Activity

    notes(ws, 4)
    seen: list[Activity] = []
    with FakeMessagesServer(answer_with(model), latency=0.05) as server:
        settings = load_settings(ws.root, {"backend": "anthropic", "base_url": server.url, "concurrency": 4}, environ={})
        report = compile_workspace(ws, settings, activity=seen.append)
    assert report.failed == []
    last = seen[-1]
    assert last.sources_done == last.sources_total == 4 and last.requests == report.traffic["turns"]
    assert sum(last.tokens.values()) == sum(report.traffic["tokens"].values())
    assert "4/4 sources" in last.line() and last.to_json()["mode"] == "interactive"
    assert any(a.in_flight > 0 for a in seen)


def test_wikimem_status_shows_a_daemon_compiles_progress(ws: Workspace, model: SharedPageModel,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from wikimem.service import Daemon, DaemonOptions, Pending, format_status

    notes(ws, 4)
    with FakeMessagesServer(answer_with(model), latency=0.3) as server:
        settings = load_settings(ws.root, {"backend": "anthropic", "base_url": server.url, "concurrency": 2},
                                 environ={})
        daemon = Daemon(ws, settings, DaemonOptions.from_settings(settings, isolate_batches=False),
                        log_to_stderr=False)
        written: list[dict[str, Any]] = []
        monkeypatch.setattr(daemon, "_write_status", lambda force=False: written.append(
            {**daemon.status(), "running": True}))
        daemon._compile(Pending(reasons=["test"]))
    assert daemon.last_compile is not None and daemon.last_compile["compiled"] == 4
    during = [st for st in written if st.get("progress")]
    assert during and during[-1]["progress"]["sources_total"] == 4
    assert any(st["progress"]["in_flight"] > 0 for st in during)
    shown = "\n".join(format_status(during[-1]))
    assert re.search(r"^progress: \d/4 sources, \d+ in flight, [\d,]+ tokens ~\$[\d.]+", shown, re.M), shown
    assert daemon.progress is None and daemon.status()["progress"] is None  # the compile is over


def test_the_cli_takes_batch_and_concurrency(ws: Workspace, model: SharedPageModel) -> None:
    from wikimem.cli import main

    notes(ws, 3)
    with FakeMessagesServer(answer_with(model)) as server:
        (ws.root / "wikimem.toml").write_text(f'backend = "anthropic"\nbase_url = "{server.url}"\n')
        result = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--batch", "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["traffic"]["mode"] == "batch" and data["traffic"]["rounds"] == server.batches_created
        notes(ws, 5, prefix="more")
        result = CliRunner().invoke(main, ["compile", "--root", str(ws.root), "--concurrency", "3", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["traffic"]["mode"] == "interactive" and data["traffic"]["concurrency"] == 3
    assert len(data["compiled"]) == 5


@pytest.mark.slow
def test_a_batched_compile_killed_with_sigkill_resumes_without_sending_its_batch_again(ws: Workspace) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    paths = notes(ws, 4)
    saved = ws.state_dir / "anthropic-batches.jsonl"
    with FakeMessagesServer(answer_with(SharedPageModel())) as server:
        server.release.clear()  # the first round's batch stays out
        (ws.root / "wikimem.toml").write_text(f'backend = "anthropic"\nbase_url = "{server.url}"\nbatch = true\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        child = subprocess.Popen([sys.executable, "-m", "wikimem.cli", "compile", "--root", str(ws.root), "-q"], env=env)
        try:
            for _ in range(600):  # until the round is saved as sent (not a wall-clock assertion: a wait)
                if saved.exists() and '"kind": "sent"' in saved.read_text():
                    break
                time.sleep(0.05)
            assert server.batches_created == 1
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        server.release.set()
        report = compile_with(ws, server, batch=True)
    assert report.failed == [] and sorted(report.compiled) == paths
    assert server.batches_created == report.traffic["rounds"]  # round one fetched, not created again
    ids = [r["custom_id"] for r in server.requests]
    assert len(ids) == len(set(ids)) and sorted(shared_lines(ws)) == sorted(p[4:] for p in paths)

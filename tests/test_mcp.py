"""The MCP server, driven by the official MCP client over stdio in a subprocess."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from conftest import write
from wikimem.compiler import compile_workspace

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


def server_params(root: Path, *extra: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SOURCE_DATE_EPOCH", "PYTHONPATH")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "wikimem.cli", "mcp", "--root", str(root), *extra], env=env,
    )


async def with_session(root: Path, body, *extra: str):
    async with stdio_client(server_params(root, *extra)) as (read, write_stream):
        async with ClientSession(read, write_stream) as session:
            await session.initialize()
            return await body(session)


def structured(result) -> dict:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


# What a client sees of each tool: its parameters (JSON type, default or required) and the shape
# of its structured result. The server builds the tools' schemas from the functions' signatures
# when a client first asks; this holds them as they were when MCPServer built them at start.
TOOL_SIGNATURES = {
    "search": ({"query": "string", "limit": "integer = 10", "kind": "string|null = None"}, "object"),
    "read": ({"path": "string", "start_line": "integer|null = None", "max_lines": "integer|null = None"}, "object"),
    "list_pages": ({"kind": "string|null = None"}, "object"),
    "recent_log": ({"limit": "integer = 10"}, "object"),
    "lint": ({}, "object"),
    "context": ({"query": "string", "budget": "integer = 8000"}, "result: string"),
    "add_note": ({"title": "string", "text": "string"}, "object"),
}


def signature(tool) -> tuple[dict[str, str], str]:
    schema, out = tool.input_schema, tool.output_schema or {}
    params = {}
    for name, prop in schema["properties"].items():
        kind = "|".join(t.get("type", "?") for t in prop["anyOf"]) if "anyOf" in prop else prop["type"]
        params[name] = kind if name in schema.get("required", ()) else f"{kind} = {prop['default']}"
    if out.get("additionalProperties") is True:
        result = out["type"]
    else:
        result = ", ".join(f"{k}: {v['type']}" for k, v in out["properties"].items())
    return params, result


@pytest.fixture
def compiled(ws, settings):
    write(ws, "notes/port.md", "# Web server\n\nThe server listens on TCP port 7878.\n\nIt serves one file.\n")
    write(ws, "notes/tea.md", "# Tea\n\nGreen tea is brewed at 80 degrees for two minutes.\n")
    compile_workspace(ws, settings)
    return ws


def test_tools_search_read_and_resources(compiled, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret outside the workspace\n", encoding="utf-8")
    os.symlink(outside, compiled.wiki / "sources" / "escape.md")

    async def body(session):
        tools = {t.name: signature(t) for t in (await session.list_tools()).tools}
        assert tools == {name: sig for name, sig in TOOL_SIGNATURES.items() if name != "add_note"}

        found = structured(await session.call_tool("search", {"query": "Which TCP port does the server listen on?"}))
        top = found["results"][0]
        assert top["path"] in ("raw/notes/port.md", "wiki/sources/notes-port.md")
        assert "7878" in top["snippet"]
        # every result carries its line; reading its target gives the numbered lines around it
        assert top["target"] == f"{top['path']}#L{top['line']}"
        around = structured(await session.call_tool("read", {"path": top["target"]}))
        assert around["line"] == top["line"] and f"{top['line']}\t" in around["text"]
        assert "7878" in around["text"].split(f"{top['line']}\t", 1)[1].split("\n", 1)[0]

        page = structured(await session.call_tool("read", {"path": top["path"]}))
        assert "7878" in page["text"] and page["path"] == top["path"]
        cited = structured(await session.call_tool("read", {"path": "raw/notes/port.md#L3", "start_line": 3,
                                                            "max_lines": 1}))
        assert cited["text"] == "The server listens on TCP port 7878."

        # paths as index.md links give them (relative to wiki/) work too
        assert "7878" in structured(await session.call_tool("read", {"path": "sources/notes-port.md"}))["text"]

        for bad in ("../outside.md", "/etc/passwd", "wiki/sources/escape.md", "wiki/../../outside.md",
                    ".wikimem/state.db", "wikimem.toml"):
            result = await session.call_tool("read", {"path": bad})
            assert result.is_error, bad
            assert "secret" not in result.content[0].text

        pages = structured(await session.call_tool("list_pages", {"kind": "source"}))["pages"]
        assert {p["path"] for p in pages} >= {"wiki/sources/notes-port.md", "wiki/sources/notes-tea.md"}
        assert (await session.call_tool("list_pages", {"kind": "bogus"})).is_error

        log = structured(await session.call_tool("recent_log", {"limit": 2}))["entries"]
        assert log and log[0]["operation"] in ("compile", "ingest")

        pack = await session.call_tool("context", {"query": "green tea temperature", "budget": 1000})
        assert not pack.is_error and "80 degrees" in pack.content[0].text

        lint = structured(await session.call_tool("lint", {}))
        assert isinstance(lint["findings"], list) and "counts" in lint

        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert resources == {"wiki://index.md", "wiki://AGENTS.md"}
        index = await session.read_resource("wiki://index.md")
        assert "Web server" in index.contents[0].text

        # read-only: no write tool without --allow-write
        assert (await session.call_tool("add_note", {"title": "x", "text": "y"})).is_error

    log_before = (compiled.wiki / "log.md").read_bytes()
    anyio.run(with_session, compiled.root, body)
    # read-only: not even lint wrote its report or a log entry
    assert (compiled.wiki / "log.md").read_bytes() == log_before
    assert not (compiled.wiki / "lint.md").exists()


@pytest.mark.slow
def test_allow_write_adds_a_note_to_the_inbox_only(compiled):
    before = {p.relative_to(compiled.wiki) for p in compiled.wiki.rglob("*")}

    async def body(session):
        tools = {t.name: signature(t) for t in (await session.list_tools()).tools}
        assert tools == TOOL_SIGNATURES
        result = structured(await session.call_tool("add_note", {"title": "Kettle tip", "text": "Descale monthly."}))
        assert result["path"].startswith("raw/inbox/") and result["path"].endswith("kettle-tip.md")
        again = structured(await session.call_tool("add_note", {"title": "Kettle tip", "text": "Twice."}))
        assert again["path"] != result["path"]  # never overwrites
        return result["path"]

    path = anyio.run(with_session, compiled.root, body, "--allow-write")
    assert (compiled.root / path).read_text(encoding="utf-8") == "# Kettle tip\n\nDescale monthly.\n"
    assert {p.relative_to(compiled.wiki) for p in compiled.wiki.rglob("*")} == before


@pytest.mark.slow
def test_stdout_carries_only_protocol(compiled):
    """Drive the server by hand: every line on stdout must be a JSON-RPC message."""
    import subprocess

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "tea"}}},
    ]
    import select

    proc = subprocess.Popen(
        [sys.executable, "-m", "wikimem.cli", "--debug", "mcp", "--root", str(compiled.root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        replies = []
        while not any(r.get("id") == 2 for r in replies):
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no reply from the server within 60 s"
            line = proc.stdout.readline()
            assert line, "server closed stdout"
            replies.append(json.loads(line))  # anything but JSON-RPC on stdout fails here
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert all(r.get("jsonrpc") == "2.0" for r in replies)
    assert "Tea" in json.dumps(replies[-1]["result"])


def test_not_a_workspace_fails_fast_with_one_line(tmp_path):
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "wikimem.cli", "mcp", "--root", str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_running_server_finds_a_new_source_and_filters_by_kind(compiled):
    # the watcher opens and warms the changed index and swaps it in; queries keep answering
    async def body(session):
        first = structured(await session.call_tool("search", {"query": "green tea", "kind": "raw"}))["results"]
        assert [r["path"] for r in first][:1] == ["raw/notes/tea.md"] and all(r["kind"] == "raw" for r in first)
        write(compiled, "notes/kelp.md", "# Kelp\n\nKelp grows half a metre a day in cold water.\n")
        found: list[str] = []
        with anyio.fail_after(60):
            while "raw/notes/kelp.md" not in found:
                result = await session.call_tool("search", {"query": "how fast does kelp grow"})
                assert not result.is_error, result.content
                found = [r["path"] for r in structured(result)["results"]]
                await anyio.sleep(0.2)
        assert (await session.call_tool("search", {"query": "tea", "kind": "bogus"})).is_error

    anyio.run(with_session, compiled.root, body)


INITIALIZE_ONLY = """
import json, sys, threading
import anyio, mcp_types
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from wikimem.mcp_server import build_server
from wikimem.workspace import Workspace

def searching():
    return {"search imported": "wikimem.search.engine" in sys.modules or "whoosh" in sys.modules,
            "warming": any(t.name == "wikimem-index" for t in threading.enumerate())}

async def main():
    server = build_server(Workspace.at(sys.argv[1]))
    seen = {"built": searching()}
    async with create_client_server_memory_streams() as ((read, write), (server_read, server_write)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_read, server_write, server.create_initialization_options())
            await write.send(SessionMessage(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params={
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})))
            reply = (await read.receive()).message
            seen["initialize answered"] = {"result": hasattr(reply, "result"), **searching()}
            await write.send(SessionMessage(mcp_types.JSONRPCNotification(
                jsonrpc="2.0", method="notifications/initialized")))
            with anyio.fail_after(30):
                while not searching()["warming"] and not searching()["search imported"]:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    print(json.dumps(seen))

anyio.run(main)
"""


def test_initialize_is_answered_before_search_is_imported_or_warmed(compiled):
    """What start-up costs before a client has its answer: not the search package (whoosh) nor
    the index warm-up, which begins with the client's next message."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", INITIALIZE_ONLY, str(compiled.root)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["built"] == {"search imported": False, "warming": False}
    assert seen["initialize answered"] == {"result": True, "search imported": False, "warming": False}

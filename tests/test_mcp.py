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


def server_params(root: Path, *extra: str, debug: bool = False) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "SOURCE_DATE_EPOCH", "PYTHONPATH")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "wikimem.cli", *(["--debug"] if debug else []), "mcp", "--root", str(root),
                                      *extra], env=env,
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


def initialize(request_id: int | str = 1, version: str = "2025-06-18") -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def converse(root: Path, lines: list[str], last_id: int | str, command: list[str] | None = None
             ) -> tuple[list[dict], str]:
    """Drive `wikimem --debug mcp` (or command) by hand: write the lines, read stdout up to the
    answer to last_id, then close stdin. (The replies, stderr.) Every line on stdout must be a
    JSON-RPC message, or this fails."""
    import select
    import subprocess

    proc = subprocess.Popen(
        command or [sys.executable, "-m", "wikimem.cli", "--debug", "mcp", "--root", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        replies: list[dict] = []
        while not any(r.get("id") == last_id for r in replies):
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no reply from the server within 60 s"
            line = proc.stdout.readline()
            assert line, "server closed stdout"
            replies.append(json.loads(line))  # anything but JSON-RPC on stdout fails here
    finally:
        _, stderr = proc.communicate(timeout=30)  # closes stdin: the server ends
    assert all(r.get("jsonrpc") == "2.0" for r in replies)
    return replies, stderr


@pytest.mark.slow
def test_stdout_carries_only_protocol(compiled):
    messages = [initialize(), INITIALIZED,
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "tea"}}}]
    replies, _ = converse(compiled.root, [json.dumps(m) for m in messages], 2)
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


# `initialize` answered before the SDK is loaded (mcp_server.serve)

async def sdk_answer(ws, line: str, *, allow_write: bool = False) -> dict:
    """The SDK's own answer to a first line, read and written as its stdio transport does."""
    import mcp_types
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage

    from wikimem.mcp_server import build_server

    server = build_server(ws, allow_write=allow_write)
    async with create_client_server_memory_streams() as ((read, write), (server_read, server_write)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_read, server_write, server.create_initialization_options())
            await write.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)))
            with anyio.fail_after(30):
                reply = (await read.receive()).message
            tg.cancel_scope.cancel()
    return json.loads(reply.model_dump_json(by_alias=True, exclude_unset=True))


def test_handshake_versions_are_the_sdks():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from wikimem.mcp_server import HANDSHAKE_VERSIONS

    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("allow_write", [False, True])
@pytest.mark.parametrize(("request_id", "version"), [
    (1, "2024-11-05"),  # the oldest
    ("a-1", "2025-11-25"),  # the latest the handshake agrees on
    (7, "2026-07-28"),  # a newer era's version: the handshake answers with its latest
    (0, "1999-01-01"),  # unsupported
])
def test_early_answer_is_the_sdks(ws, allow_write, request_id, version):
    from wikimem.mcp_server import early_answer

    line = json.dumps(initialize(request_id, version))
    early = early_answer(line.encode())
    assert early is not None and early.request_id == request_id
    assert json.loads(early.line()) == early.message
    assert early.message == anyio.run(lambda: sdk_answer(ws, line, allow_write=allow_write))


def test_early_answer_needs_no_sdk():
    """What the early answer rests on: it imports nothing of the SDK, pydantic or anyio."""
    import subprocess

    script = ("import json, sys\nfrom wikimem.mcp_server import early_answer\n"
              "assert early_answer(sys.stdin.buffer.readline()) is not None\n"
              "print(json.dumps([m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'anyio')]))")
    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps(initialize()) + "\n", capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


NOT_INITIALIZE = {
    "ping": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n',
    "not JSON": b"hello\n",
    "not UTF-8": b"\xff\xfe{}\n",
    "end of input": b"",
    "a batch": b"[" + json.dumps(initialize()).encode() + b"]\n",
    "a notification": json.dumps({k: v for k, v in initialize().items() if k != "id"}).encode(),
    "a boolean id": json.dumps(initialize(True)).encode(),
}
REFUSED_BY_THE_SDK = {
    "no clientInfo": {"protocolVersion": "2025-06-18", "capabilities": {}},
    "no protocolVersion": {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    "a clientInfo without version": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
}


@pytest.mark.parametrize("line", NOT_INITIALIZE.values(), ids=NOT_INITIALIZE.keys())
def test_no_early_answer_but_to_initialize(line):
    from wikimem.mcp_server import early_answer

    assert early_answer(line) is None


@pytest.mark.parametrize("params", REFUSED_BY_THE_SDK.values(), ids=REFUSED_BY_THE_SDK.keys())
def test_initialize_the_sdk_refuses_is_left_to_it(ws, params):
    from wikimem.mcp_server import early_answer

    line = json.dumps({**initialize(), "params": params})
    assert early_answer(line.encode()) is None
    assert "error" in anyio.run(lambda: sdk_answer(ws, line))


def test_a_client_through_the_early_answer(compiled, tmp_path):
    """The official client: initialize (answered early), then the SDK serves the rest."""
    errlog = tmp_path / "stderr.txt"

    async def body():
        with errlog.open("w") as err:
            async with stdio_client(server_params(compiled.root, debug=True), errlog=err) as (read, write_stream):
                async with ClientSession(read, write_stream) as session:
                    result = await session.initialize()
                    assert result.server_info.name == "wikimem"
                    assert {t.name for t in (await session.list_tools()).tools} == set(TOOL_SIGNATURES) - {"add_note"}
                    found = structured(await session.call_tool("search", {"query": "green tea temperature"}))
                    assert "80 degrees" in found["results"][0]["snippet"]
                    index = await session.read_resource("wiki://index.md")
                    assert "Web server" in index.contents[0].text

    anyio.run(body)
    log = errlog.read_text(encoding="utf-8")
    assert "answered initialize (id 1) before loading the SDK" in log
    assert "answered tools/list" in log and "answered tools/call" in log  # the SDK loaded for the resource
    assert "the SDK loads for" in log
    assert "the SDK answers" not in log  # the SDK's own answer was the same as ours
    assert "warming the search index" in log


@pytest.mark.parametrize("first", [None, '{"jsonrpc": "2.0", "id": "p", "method": "ping"}', "hello"],
                         ids=["initialize", "ping", "not JSON"])
def test_every_request_answered_once(compiled, first):
    """Whatever comes first, each request has one answer (the SDK's to a replayed `initialize`
    is dropped) and stdout carries JSON-RPC only; an early answer only to a first `initialize`."""
    lines = [json.dumps(m) for m in (
        initialize(), INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "tea"}}},
    )]
    replies, stderr = converse(compiled.root, [first, *lines] if first else lines, 3)
    answers = [r["id"] for r in replies if "method" not in r]
    assert sorted(answers, key=str) == sorted([1, 2, 3, *(["p"] if first and "ping" in first else [])], key=str)
    assert {r["id"]: r for r in replies}[1]["result"]["serverInfo"]["name"] == "wikimem"
    assert "Tea" in json.dumps(replies[-1]["result"])
    assert ("answered initialize (id 1)" in stderr) == (first is None)
    assert ("the SDK loads for" in stderr) == (first is not None)  # else all answered before it loads
    assert "the SDK answers" not in stderr


STRAY = """
import os, sys
from wikimem import mcp_server
from wikimem.workspace import Workspace

build = mcp_server.build_server

def noisy(*args, **kwargs):  # output that is not protocol, while the SDK loads
    print("stray print", flush=True)
    os.write(1, b"stray write\\n")
    return build(*args, **kwargs)

mcp_server.build_server = noisy
mcp_server.serve(Workspace.at(sys.argv[1]))
"""


def test_stray_output_while_the_sdk_loads_goes_to_stderr(compiled):
    read_index = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "wiki://index.md"}}
    lines = [json.dumps(m) for m in (initialize(), INITIALIZED, read_index)]
    replies, stderr = converse(compiled.root, lines, 2, [sys.executable, "-c", STRAY, str(compiled.root)])
    assert [r["id"] for r in replies] == [1, 2]
    assert "stray print" in stderr and "stray write" in stderr


# params the SDK refuses (or that the early answer cannot vouch for): before, the early answer
# told the client its handshake succeeded while the SDK, handed the same line, refused it
HOSTILE_PARAMS = {
    "roots not an object": {"capabilities": {"roots": 5}},
    "roots.listChanged a string": {"capabilities": {"roots": {"listChanged": "yes"}}},
    "sampling a list": {"capabilities": {"sampling": []}},
    "sampling.context a number": {"capabilities": {"sampling": {"context": 3}}},
    "experimental of numbers": {"capabilities": {"experimental": {"x": 1}}},
    "icons not a list": {"clientInfo": {"name": "t", "version": "1", "icons": 5}},
    "title a number": {"clientInfo": {"name": "t", "version": "1", "title": 5}},
    "name a number": {"clientInfo": {"name": 5, "version": "1"}},
    "_meta a number": {"_meta": 5},
    "capabilities a list": {"capabilities": []},
    "protocolVersion a number": {"protocolVersion": 20250618},
}
ACCEPTED_PARAMS = {
    "every capability": {"capabilities": {"roots": {"listChanged": True}, "sampling": {"context": {}, "tools": {}},
                                          "elicitation": {"form": {}, "url": {}},
                                          "experimental": {"x": {"y": [1, 2]}}}},
    "a full clientInfo": {"clientInfo": {"name": "t", "version": "1", "title": "T", "description": "d",
                                         "websiteUrl": "https://example.org"}},
}


def _with(params: dict) -> str:
    base = initialize()["params"]
    merged = {**base, **params}
    for key in ("capabilities", "clientInfo"):
        if isinstance(base.get(key), dict) and isinstance(params.get(key), dict):
            merged[key] = {**base[key], **params[key]}
    return json.dumps({**initialize(), "params": merged})


@pytest.mark.parametrize("params", [*HOSTILE_PARAMS.values(), *ACCEPTED_PARAMS.values()],
                         ids=[*HOSTILE_PARAMS.keys(), *ACCEPTED_PARAMS.keys()])
def test_an_early_answer_is_given_only_where_the_sdk_gives_the_same(ws, params):
    from wikimem.mcp_server import early_answer

    line = _with(params)
    early = early_answer(line.encode())
    sdk = anyio.run(lambda: sdk_answer(ws, line))
    if early is not None:
        assert early.message == sdk
    if "error" in sdk:
        assert early is None
    if params in ACCEPTED_PARAMS.values():
        assert early is not None


def test_a_first_line_of_any_length_is_read_in_bounded_memory():
    """Before: the early handshake read a first line of any length whole (400 MB held at once).
    Now at most MAX_MESSAGE_BYTES of it are held; what follows it is read as before."""
    import io
    import tracemalloc

    from wikimem import mcp_server

    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "' + b"a" * 40_000_000 + b'"}}\n'
    wire = io.BufferedReader(io.BytesIO(huge + json.dumps(initialize(2)).encode() + b"\n"), buffer_size=1 << 16)
    out = io.BytesIO()
    old = mcp_server.MAX_MESSAGE_BYTES
    mcp_server.MAX_MESSAGE_BYTES = 1_000_000
    tracemalloc.start()
    try:
        first, early = mcp_server._answer_first_line(wire, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        mcp_server.MAX_MESSAGE_BYTES = old
    assert early is None and out.getvalue() == b"" and peak < 5_000_000
    assert first == mcp_server.TOO_LONG.encode()
    replayed = mcp_server._Replayed(wire, [first])
    assert replayed.readline() == mcp_server.TOO_LONG  # the SDK answers it as a line that is not JSON
    assert json.loads(replayed.readline())["id"] == 2  # and reads on from the next line


def test_mcp_read_of_a_pdf_the_compile_skipped_says_why_without_parsing_it(ws, monkeypatch):
    """Before: each MCP read of a PDF the compile had skipped (no text layer, too large) parsed
    the whole PDF again (8-9 s a call on a large one) to fail the same way. Now the compile's
    reason is given, and nothing is parsed."""
    import io

    from pypdf import PdfWriter

    from wikimem import mcp_server, sources
    from wikimem.compiler import compile_workspace
    from wikimem.config import load_settings
    from wikimem.errors import WikimemError

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    data = io.BytesIO()
    writer.write(data)
    (ws.raw / "scan.pdf").write_bytes(data.getvalue())
    report = compile_workspace(ws, load_settings(ws.root, environ={}))
    assert [p for p, _ in report.skipped] == ["raw/scan.pdf"]
    parsed = []
    real = sources.load_source
    monkeypatch.setattr(sources, "load_source", lambda *a, **k: parsed.append(a) or real(*a, **k))
    for _ in range(2):
        with pytest.raises(WikimemError, match="the compile skipped it .*no extractable text"):
            mcp_server.read_file(ws, "raw/scan.pdf")
    assert parsed == []


# the messages after `initialize` answered before the SDK is loaded (mcp_server.EarlyServer)

async def sdk_answers(ws, lines: list[str], *, allow_write: bool = False) -> list[dict]:
    """The SDK's answers to the requests among lines, after `initialize` and `initialized`."""
    import mcp_types
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage

    from wikimem.mcp_server import build_server

    server = build_server(ws, allow_write=allow_write)
    replies = []
    async with create_client_server_memory_streams() as ((read, write), (server_read, server_write)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_read, server_write, server.create_initialization_options())
            for line in [json.dumps(initialize(0)), json.dumps(INITIALIZED), *lines]:
                await write.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)))
                if "id" in json.loads(line):
                    with anyio.fail_after(30):
                        reply = (await read.receive()).message
                    replies.append(json.loads(reply.model_dump_json(by_alias=True, exclude_unset=True)))
            tg.cancel_scope.cancel()
    return replies[1:]


def call(request_id: int, name: str, **arguments) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


ANSWERED_EARLY = {
    "tools/list": {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    "resources/list": {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
    "prompts/list": {"jsonrpc": "2.0", "id": 4, "method": "prompts/list", "params": {}},
    "resources/templates/list": {"jsonrpc": "2.0", "id": 5, "method": "resources/templates/list"},
    "ping": {"jsonrpc": "2.0", "id": "p", "method": "ping"},
    "search": call(6, "search", query="green tea temperature"),
    "search, a kind and a limit": call(7, "search", query="tea", limit=2, kind="source"),
    "search, words beyond ASCII": call(8, "search", query="thé à 80 degrés", kind=None),
    "read": call(9, "read", path="wiki/index.md"),
    "read, a citation": call(10, "read", path="raw/notes/tea.md#L3", max_lines=None),
}
LEFT_TO_THE_SDK = {
    "an unknown kind (the tool's error)": call(11, "search", query="tea", kind="bogus"),
    "a limit the SDK would coerce": call(12, "search", query="tea", limit="2"),
    "a boolean limit": call(13, "search", query="tea", limit=True),
    "no query": call(14, "search"),
    "an unknown argument": call(15, "search", query="tea", page=2),
    "a tool that answers with text": call(16, "context", query="tea"),
    "a tool that writes": call(17, "add_note", title="t", text="x"),
    "a resource": {"jsonrpc": "2.0", "id": 18, "method": "resources/read", "params": {"uri": "wiki://index.md"}},
    "a cursor": {"jsonrpc": "2.0", "id": 19, "method": "tools/list", "params": {"cursor": "x"}},
    "a progress token": {**call(20, "search", query="tea"), "params": {"name": "search", "arguments": {"query": "tea"},
                                                                        "_meta": {"progressToken": 1}}},
    "a read outside the workspace": call(21, "read", path="../etc/passwd"),
    "not JSON": "hello",
}


@pytest.mark.parametrize("allow_write", [False, True])
def test_early_answers_are_the_sdks(compiled, allow_write):
    """Each message answered before the SDK is loaded gets the answer the SDK gives it."""
    from wikimem.mcp_server import EarlyServer, Searching

    early = EarlyServer(compiled, Searching(compiled), allow_write=allow_write)
    lines = [json.dumps(m) for m in ANSWERED_EARLY.values()]
    ours = [early.reply(line.encode()) for line in lines]
    assert all(keep is False and reply for reply, keep in ours)
    sdk = anyio.run(lambda: sdk_answers(compiled, lines, allow_write=allow_write))
    for name, (reply, _), theirs in zip(ANSWERED_EARLY, ours, sdk, strict=True):
        assert reply == theirs, name
    assert "80 degrees" in json.dumps(ours[5][0])


@pytest.mark.parametrize("line", [m if isinstance(m, str) else json.dumps(m) for m in LEFT_TO_THE_SDK.values()],
                         ids=LEFT_TO_THE_SDK.keys())
def test_early_server_hands_the_rest_to_the_sdk(compiled, line):
    from wikimem.mcp_server import EarlyServer, Searching

    reply, keep = EarlyServer(compiled, Searching(compiled), allow_write=True).reply(line.encode())
    assert reply is None and keep is False


def test_initialized_is_kept_for_the_sdk(compiled):
    from wikimem.mcp_server import EarlyServer, Searching

    assert EarlyServer(compiled, Searching(compiled)).reply(json.dumps(INITIALIZED).encode()) == ({}, True)


FIRST_SEARCH = """
import json, sys
from wikimem import mcp_server
from wikimem.workspace import Workspace

mcp_server.serve(Workspace.at(sys.argv[1]))
print(json.dumps({"sdk imported": sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic"))}))
"""


def test_first_search_is_answered_without_the_sdk(compiled):
    """A client's start (initialize, the tool list, searches, a read) costs no import of the SDK
    (some 0.5 s of a start-up); a test above holds each answer equal to the SDK's."""
    import subprocess

    lines = [initialize(), INITIALIZED, ANSWERED_EARLY["tools/list"], call(3, "search", query="green tea temperature"),
             call(4, "read", path="raw/notes/tea.md#L3")]
    proc = subprocess.run([sys.executable, "-c", FIRST_SEARCH, str(compiled.root)], capture_output=True, text=True,
                          input="".join(json.dumps(m) + "\n" for m in lines), timeout=120)
    assert proc.returncode == 0, proc.stderr
    *replies, after = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert "80 degrees" in replies[2]["result"]["structuredContent"]["results"][0]["snippet"]
    assert after == {"sdk imported": []}


def test_a_query_goes_before_the_warm_ups_next_step(compiled, monkeypatch):
    # the warm-up holds the query lock a step at a time and lets a query that waits go first:
    # a search that comes in while it runs waits for the step under way, not for all of them
    import importlib
    import threading
    import time as _time

    from wikimem import mcp_server
    from wikimem.mcp_server import Searching

    monkeypatch.setattr(mcp_server, "WARM_SHARE", 0.0)  # the query goes after the step under way
    engine = importlib.import_module("wikimem.search.engine")
    events: list[str] = []
    searching = Searching(compiled)

    def steps(self):
        events.append("step 1")
        deadline = _time.monotonic() + 10
        while not searching._waiting and _time.monotonic() < deadline:  # until the query waits
            _time.sleep(0.001)
        yield
        events.append("step 2")
        yield

    monkeypatch.setattr(engine.Engine, "warm_steps", steps)
    monkeypatch.setattr(searching, "_answer", lambda *args: events.append("query") or {"results": []})
    monkeypatch.setattr(engine.Engine, "watch", lambda self, *args, **kwargs: None)
    searching.start()
    deadline = _time.monotonic() + 10
    while "step 1" not in events and _time.monotonic() < deadline:
        _time.sleep(0.001)
    assert searching.answer("tea", 5, None) == {"results": []}
    warming = next(t for t in threading.enumerate() if t.name == "wikimem-index")
    warming.join(10)
    assert events == ["step 1", "query", "step 2"]

"""The memory tool through the real anthropic SDK tool runner, against a local Messages API server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

anthropic = pytest.importorskip("anthropic")

from wikimem.memory_tool import WikiMemoryTool  # noqa: E402


def message(content: list[dict], stop: str) -> dict:
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


class Script:
    """Replies in order: read the index, try to write to the wiki, write to the inbox, then answer."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.replies = [
            message([{"type": "tool_use", "id": "t1", "name": "memory",
                      "input": {"command": "view", "path": "/memories/index.md"}}], "tool_use"),
            message([{"type": "tool_use", "id": "t2", "name": "memory",
                      "input": {"command": "create", "path": "/memories/index.md", "file_text": "pwned"}}],
                    "tool_use"),
            message([{"type": "tool_use", "id": "t3", "name": "memory",
                      "input": {"command": "create", "path": "/memories/inbox/todo.md",
                                "file_text": "# Todo\n\nCheck the port.\n"}}], "tool_use"),
            message([{"type": "text", "text": "done"}], "end_turn"),
        ]


@pytest.fixture
def fake_api():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append(body)
            reply = json.dumps(script.replies[len(script.requests) - 1]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)  # quick shutdown()
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()


def tool_results(request: dict) -> list[dict]:
    return [block for msg in request["messages"] if msg["role"] == "user" and isinstance(msg["content"], list)
            for block in msg["content"] if block.get("type") == "tool_result"]


def test_tool_runner_reads_the_wiki_and_writes_only_the_inbox(ws, fake_api):
    base_url, script = fake_api
    index_before = (ws.wiki / "index.md").read_text(encoding="utf-8")
    client = anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-test", max_tokens=512, tools=[WikiMemoryTool(ws.root)],
        messages=[{"role": "user", "content": "what is in the wiki?"}],
    )
    final = runner.until_done()
    assert final.content[-1].text == "done"
    assert script.requests[0]["tools"][0]["type"].startswith("memory_")
    first = tool_results(script.requests[1])[-1]
    assert "Index" in json.dumps(first["content"]) and not first.get("is_error")
    refused = tool_results(script.requests[2])[-1]
    assert refused.get("is_error") and "read-only" in json.dumps(refused["content"])
    assert (ws.wiki / "index.md").read_text(encoding="utf-8") == index_before
    assert (ws.raw / "inbox" / "todo.md").read_text(encoding="utf-8") == "# Todo\n\nCheck the port.\n"

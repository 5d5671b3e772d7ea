"""A local stand-in for the Anthropic Messages API, so tests exercise the real SDK client.

It listens on 127.0.0.1, answers `POST /v1/messages` as plain JSON or as an SSE stream
(when the request says `"stream": true`), and plays a script: each request takes the next
turn. A turn is a reply (content blocks and a stop reason), an HTTP error, a stream that
breaks off mid-way, or a callable that builds one of these from the request it answers.
Every request is recorded (path, headers, JSON body) for the test to inspect.

Usage accounting is simulated the way the API reports it: a request whose stable prefix
(tools and system) carries `cache_control` writes that prefix to the cache the first time
(`cache_creation_input_tokens`) and reads it afterwards (`cache_read_input_tokens`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str = "sig-abc123") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id or f"toolu_{next(_ids):04d}", "name": name, "input": tool_input}


def memory(command: str, **fields: Any) -> dict[str, Any]:
    return tool("memory", {"command": command, **fields})


@dataclass
class Reply:
    content: list[dict[str, Any]]
    stop_reason: str | None = None  # default: tool_use when a tool is called, else end_turn
    output_tokens: int = 50


@dataclass
class Error:
    status: int
    message: str = "scripted error"
    kind: str = "api_error"


@dataclass
class Cut:
    """A stream that sends message_start and part of the first block, then drops the connection."""

    content: list[dict[str, Any]] = field(default_factory=lambda: [text("I will now")])


@dataclass
class StreamError:
    """A stream that starts, then reports an error event mid-way (as the API does when overloaded)."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"


Turn = Reply | Error | Cut | StreamError | Callable[[dict[str, Any]], "Reply | Error | Cut | StreamError"]


def reply(*blocks: dict[str, Any], stop_reason: str | None = None, output_tokens: int = 50) -> Reply:
    return Reply(list(blocks), stop_reason, output_tokens)


def tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True)) // 4)


class FakeMessagesServer:
    def __init__(self, script: Iterable[Turn] = ()):
        self.script: list[Turn] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.cached: set[str] = set()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # a kept-alive connection the client never closes ends after this long idle, and
            # its thread with it (tests that fork wait for other threads to end)
            timeout = 2

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll: shutdown() waits up to one poll interval (0.5 s by default), at every test's end
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeMessagesServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add(self, *turns: Turn) -> None:
        with self.lock:
            self.script.extend(turns)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    # --- serving
    def handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append({"path": handler.path, "headers": dict(handler.headers), "body": body})
            turn: Turn | None = self.script.pop(0) if self.script else None
        if handler.path.split("?")[0] != "/v1/messages":
            return self._error(handler, Error(404, f"no route {handler.path}", "not_found_error"))
        if turn is None:
            return self._error(handler, Error(400, "fake server: no scripted turn left", "invalid_request_error"))
        if callable(turn):
            turn = turn(body)
        if isinstance(turn, Error):
            return self._error(handler, turn)
        usage = self._usage(body)
        if isinstance(turn, Cut):
            return self._cut(handler, body, turn, usage)
        if isinstance(turn, StreamError):
            self._cut(handler, body, Cut(), usage)
            self._event(handler, "error", {"type": "error", "error": {"type": turn.kind, "message": turn.message}})
            return None
        content = [dict(b) for b in turn.content]
        stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        usage["output_tokens"] = turn.output_tokens
        with self.lock:
            self.requests[-1]["usage"] = usage
        message = {
            "id": f"msg_{next(_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if body.get("stream"):
            self._stream(handler, message)
        else:
            data = json.dumps(message).encode()
            handler.send_response(200)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        prefix = {"tools": body.get("tools"), "system": body.get("system")}
        prefix_tokens = tokens(prefix)
        total = tokens(body)
        marked = "cache_control" in json.dumps(prefix)
        key = hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()
        usage = {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if marked:
            usage["input_tokens"] = max(1, total - prefix_tokens)
            with self.lock:
                if key in self.cached:
                    usage["cache_read_input_tokens"] = prefix_tokens
                else:
                    self.cached.add(key)
                    usage["cache_creation_input_tokens"] = prefix_tokens
        return usage

    def _error(self, handler: BaseHTTPRequestHandler, error: Error) -> None:
        data = json.dumps({"type": "error", "error": {"type": error.kind, "message": error.message}}).encode()
        handler.send_response(error.status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("retry-after-ms", "1")  # the SDK's retries wait this long: tests stay fast
        handler.end_headers()
        handler.wfile.write(data)

    def _start_stream(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.close_connection = True

    @staticmethod
    def _event(handler: BaseHTTPRequestHandler, name: str, data: dict[str, Any]) -> None:
        handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        handler.wfile.flush()

    def _stream(self, handler: BaseHTTPRequestHandler, message: dict[str, Any]) -> None:
        self._start_stream(handler)
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        self._event(handler, "message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(message["content"]):
            self._block(handler, index, block)
        self._event(
            handler,
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        self._event(handler, "message_stop", {"type": "message_stop"})

    def _block(self, handler: BaseHTTPRequestHandler, index: int, block: dict[str, Any], *, cut: bool = False) -> None:
        if block["type"] == "text":
            self._event(handler, "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            value = block["text"]
            pieces = [value[i : i + 40] for i in range(0, len(value), 40)] or [""]
            for piece in pieces[: 1 if cut else None]:
                self._event(handler, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            self._event(handler, "content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            self._event(handler, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
            self._event(handler, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}})
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            self._event(handler, "content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            raw = json.dumps(block["input"])
            pieces = [raw[i : i + 64] for i in range(0, len(raw), 64)]
            for piece in pieces[: 1 if cut else None]:
                self._event(handler, "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})
        if not cut:
            self._event(handler, "content_block_stop", {"type": "content_block_stop", "index": index})

    def _cut(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Cut, usage: dict[str, int]) -> None:
        self._start_stream(handler)
        start = {
            "id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant", "model": body.get("model", "x"),
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1},
        }
        self._event(handler, "message_start", {"type": "message_start", "message": start})
        if turn.content:
            self._block(handler, 0, turn.content[0], cut=True)
        # no message_stop: the connection just ends, as when a proxy or the network drops it

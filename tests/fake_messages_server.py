"""A local stand-in for the Anthropic Messages API, so tests exercise the real SDK client.

It listens on 127.0.0.1, answers `POST /v1/messages` as plain JSON or as an SSE stream
(when the request says `"stream": true`), and plays a script: each request takes the next
turn. A turn is a reply (content blocks and a stop reason), an HTTP error, a stream that
breaks off mid-way, or a callable that builds one of these from the request it answers.
Every request is recorded (path, headers, JSON body) for the test to inspect.

Usage accounting is simulated the way the API reports it: a request whose stable prefix
(tools and system) carries `cache_control` writes that prefix to the cache the first time
(`cache_creation_input_tokens`) and reads it afterwards (`cache_read_input_tokens`); as with
the API, the cache entry is there once its first answer has gone out, so requests sent
together before that each write it.

Taught for concurrent compiles and backlogs:
- `latency`: seconds each answer takes (the model's time);
- `max_in_flight`: requests past this many at once get a 429 with `retry-after` and the
  `anthropic-ratelimit-requests-*` headers, use no scripted turn and are counted in `rejected`
  (the most in flight at once is `peak_in_flight`);
- the Message Batches API: POST /v1/messages/batches, GET /v1/messages/batches/{id} and
  .../results (JSONL), POST .../cancel. A batch's requests take the script's turns in order
  (each recorded in `requests` with its `custom_id`); it ends once `release` is set (tests
  clear it to keep a batch out); an `Expired` turn makes that request expire.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import threading
import time
import urllib.parse
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


@dataclass
class Expired:
    """In a batch: this request expires (the API ran out of its 24 hours)."""


Turn = Reply | Error | Cut | StreamError | Expired | Callable[[dict[str, Any]], "Reply | Error | Cut | StreamError | Expired"]


def reply(*blocks: dict[str, Any], stop_reason: str | None = None, output_tokens: int = 50) -> Reply:
    return Reply(list(blocks), stop_reason, output_tokens)


def tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True)) // 4)


class FakeMessagesServer:
    def __init__(self, script: Iterable[Turn] = (), *, latency: float = 0.0, max_in_flight: int | None = None,
                 retry_after: float = 1.0):
        self.script: list[Turn] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.cached: set[str] = set()
        self.lock = threading.Lock()
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.retry_after = retry_after
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rejected = 0
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_calls: list[tuple[str, str]] = []  # (method, path) of every Message Batches call
        self.release = threading.Event()
        self.release.set()
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
                path = urllib.parse.urlsplit(self.path).path
                if path.startswith("/v1/messages/batches"):
                    server.batch_post(self, path, body)
                else:
                    server.handle(self, body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.batch_get(self, urllib.parse.urlsplit(self.path).path)

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
        if urllib.parse.urlsplit(handler.path).path != "/v1/messages":
            return self._error(handler, Error(404, f"no route {handler.path}", "not_found_error"))
        with self.lock:
            if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
                self.rejected += 1
                return self._limited(handler)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            with self.lock:
                self.requests.append({"path": handler.path, "headers": dict(handler.headers), "body": body})
                record = self.requests[-1]
                turn: Turn | None = self.script.pop(0) if self.script else None
            self._answer(handler, body, turn, record)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Turn | None,
                record: dict[str, Any]) -> None:
        if turn is None:
            return self._error(handler, Error(400, "fake server: no scripted turn left", "invalid_request_error"))
        if callable(turn):
            turn = turn(body)
        if isinstance(turn, Error):
            return self._error(handler, turn)
        usage, cache_key = self._usage(body)
        try:
            if isinstance(turn, Cut):
                return self._cut(handler, body, turn, usage)
            if isinstance(turn, StreamError):
                self._cut(handler, body, Cut(), usage)
                self._event(handler, "error", {"type": "error", "error": {"type": turn.kind, "message": turn.message}})
                return None
            assert isinstance(turn, Reply), f"{turn!r} is not an answer to a request outside a batch"
            message = self._message(body, turn, usage)
            with self.lock:
                record["usage"] = usage
            if body.get("stream"):
                self._stream(handler, message)
            else:
                data = json.dumps(message).encode()
                handler.send_response(200)
                handler.send_header("content-type", "application/json")
                handler.send_header("content-length", str(len(data)))
                self._ratelimit_headers(handler)
                handler.end_headers()
                handler.wfile.write(data)
        finally:
            self._cache(cache_key)

    @staticmethod
    def _message(body: dict[str, Any], turn: Reply, usage: dict[str, int]) -> dict[str, Any]:
        content = [dict(b) for b in turn.content]
        stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        usage["output_tokens"] = turn.output_tokens
        return {
            "id": f"msg_{next(_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def _usage(self, body: dict[str, Any]) -> tuple[dict[str, int], str | None]:
        """The usage the API would report, and the prefix's cache key once the answer is out."""
        prefix = {"tools": body.get("tools"), "system": body.get("system")}
        prefix_tokens = tokens(prefix)
        total = tokens({k: v for k, v in body.items() if k != "stream"})
        marked = "cache_control" in json.dumps(prefix)
        key = hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()
        usage = {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if not marked:
            return usage, None
        usage["input_tokens"] = max(1, total - prefix_tokens)
        with self.lock:
            if key in self.cached:
                usage["cache_read_input_tokens"] = prefix_tokens
                return usage, None
        usage["cache_creation_input_tokens"] = prefix_tokens
        return usage, key

    def _cache(self, key: str | None) -> None:
        if key is not None:
            with self.lock:
                self.cached.add(key)

    def _limited(self, handler: BaseHTTPRequestHandler) -> None:
        """A 429 past max_in_flight, as the API says it (called holding the lock)."""
        data = json.dumps({"type": "error", "error": {"type": "rate_limit_error",
                                                      "message": "Number of concurrent requests exceeds your rate limit"}}).encode()
        reset = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=self.retry_after)
        handler.send_response(429)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("retry-after", f"{self.retry_after:g}")
        handler.send_header("anthropic-ratelimit-requests-limit", str(self.max_in_flight))
        handler.send_header("anthropic-ratelimit-requests-remaining", "0")
        handler.send_header("anthropic-ratelimit-requests-reset", reset.isoformat().replace("+00:00", "Z"))
        handler.end_headers()
        handler.wfile.write(data)

    def _ratelimit_headers(self, handler: BaseHTTPRequestHandler) -> None:
        if self.max_in_flight is None:
            return
        now = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
        handler.send_header("anthropic-ratelimit-requests-limit", str(self.max_in_flight))
        handler.send_header("anthropic-ratelimit-requests-remaining", str(max(0, self.max_in_flight - self.in_flight)))
        handler.send_header("anthropic-ratelimit-requests-reset", now)

    # --- the Message Batches API
    def batch_post(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        with self.lock:
            self.batch_calls.append(("POST", path))
        parts = path.strip("/").split("/")  # v1 messages batches [id [cancel]]
        if len(parts) == 3:
            batch_id = f"msgbatch_{next(_ids):06d}"
            batch = {"id": batch_id, "requests": list(body.get("requests") or []), "status": "in_progress",
                     "results": [], "created_at": dt.datetime.now(dt.UTC).isoformat()}
            with self.lock:
                self.batches[batch_id] = batch
            threading.Thread(target=self._run_batch, args=(batch, dict(handler.headers)), daemon=True).start()
            return self._json(handler, self._batch_json(batch))
        if len(parts) == 5 and parts[4] == "cancel" and parts[3] in self.batches:
            batch = self.batches[parts[3]]
            batch["canceled"] = True
            return self._json(handler, self._batch_json(batch))
        return self._error(handler, Error(404, f"no route {path}", "not_found_error"))

    def batch_get(self, handler: BaseHTTPRequestHandler, path: str) -> None:
        with self.lock:
            self.batch_calls.append(("GET", path))
        parts = path.strip("/").split("/")
        batch = self.batches.get(parts[3]) if len(parts) >= 4 else None
        if batch is None:
            return self._error(handler, Error(404, f"no batch at {path}", "not_found_error"))
        if len(parts) == 4:
            return self._json(handler, self._batch_json(batch))
        if len(parts) == 5 and parts[4] == "results" and batch["status"] == "ended":
            data = "".join(json.dumps(line) + "\n" for line in batch["results"]).encode()
            handler.send_response(200)
            handler.send_header("content-type", "application/binary")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return None
        return self._error(handler, Error(404, f"no route {path}", "not_found_error"))

    def _run_batch(self, batch: dict[str, Any], headers: dict[str, str]) -> None:
        """Answer a batch's requests in order (the script's turns), then end it once released."""
        if self.latency:
            time.sleep(self.latency)
        for item in batch["requests"]:
            params = item["params"]
            with self.lock:
                self.requests.append({"path": "/v1/messages/batches", "custom_id": item["custom_id"],
                                      "headers": headers, "body": params})
                record = self.requests[-1]
                turn: Turn | None = self.script.pop(0) if self.script else None
            if callable(turn):
                turn = turn(params)
            if isinstance(turn, Reply):
                usage, key = self._usage(params)
                self._cache(key)
                record["usage"] = usage
                result: dict[str, Any] = {"type": "succeeded", "message": self._message(params, turn, usage)}
            elif isinstance(turn, Expired):
                result = {"type": "expired"}
            else:
                error = turn if isinstance(turn, Error) else Error(400, "fake server: no scripted turn left",
                                                                   "invalid_request_error")
                result = {"type": "errored", "error": {"type": "error", "error": {"type": error.kind,
                                                                                     "message": error.message}}}
            batch["results"].append({"custom_id": item["custom_id"], "result": result})
        self.release.wait()
        batch["status"] = "ended"

    def _batch_json(self, batch: dict[str, Any]) -> dict[str, Any]:
        ended = batch["status"] == "ended"
        kinds = [r["result"]["type"] for r in batch["results"]] if ended else []
        return {
            "id": batch["id"], "type": "message_batch", "processing_status": batch["status"],
            "request_counts": {"processing": 0 if ended else len(batch["requests"]),
                               "succeeded": kinds.count("succeeded"), "errored": kinds.count("errored"),
                               "canceled": kinds.count("canceled"), "expired": kinds.count("expired")},
            "created_at": batch["created_at"], "expires_at": batch["created_at"], "archived_at": None,
            "cancel_initiated_at": None, "ended_at": batch["created_at"] if ended else None,
            "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, value: dict[str, Any]) -> None:
        data = json.dumps(value).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @property
    def model_requests(self) -> int:
        """Requests the model answered (or was scripted to fail), in batches or not; 429s past the limit aside."""
        return len(self.requests)

    @property
    def batches_created(self) -> int:
        return sum(1 for method, path in self.batch_calls if method == "POST" and path.rstrip("/").endswith("/batches"))

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
        self._ratelimit_headers(handler)
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

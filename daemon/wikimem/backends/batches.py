"""`wikimem compile --batch`: each round of every live conversation sent as one Message Batch.

The Message Batches API answers within 24 hours (usually minutes) at half the price. A
compile in batches steps its conversations in lockstep (conversations.run_rounds): every
conversation's next request goes into the round's batch, the tool calls in the answers are
applied locally, and the next round's batch follows, until every conversation has ended.

What was sent and what came back is saved as it happens in `.wikimem/anthropic-batches.jsonl`:
a header (the model, the work in order, the wiki as it stood), then per round the batch ids
and a hash of each request once the batch is created, and the answers once they are fetched.
A compile stopped while a batch is out (Ctrl-C, a reboot) starts again from that file: the
rounds already answered are stepped through again from the saved answers (the conversations
are deterministic given their answers and the wiki, so they make the same requests; each is
checked against its saved hash), and the batch that was out is fetched, not sent again. A file
written for other sources, another model or a wiki changed since is set aside and its batches
are canceled. (State.db is not the place: the compile holds its transaction open until the
pages are written, and that is rolled back when a compile is stopped.)

A request of a batch that errors or expires fails its source, which the next compile retries;
the other sources land.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anthropic
from anthropic.types.beta import BetaMessage

from ..errors import UnsafePath, WikimemError
from ..workspace import append_owned, read_owned, remove_owned
from .claude import api_error_message
from .conversations import Ask, Job

if TYPE_CHECKING:
    from ..workspace import Workspace

log = logging.getLogger("wikimem.anthropic")

LOG_FILE = "anthropic-batches.jsonl"
MAX_REQUESTS = 10_000  # per batch (the API takes 100,000 or 256 MB; a round larger than this is split)
MAX_BYTES = 100_000_000
POLL_FIRST = 0.5  # seconds before the first poll of a batch, growing by half each poll
POLL_MAX = 60.0
sleep = time.sleep  # the polls' wait (tests replace it)


class BatchFailed(WikimemError):
    """The Message Batches API itself failed (not one request in it): the compile stops, and the
    next one picks up the saved run."""


class ReplayDiverged(Exception):
    """A resumed batched compile made a request other than the one saved: start over."""


def custom_id(index: int, round_no: int) -> str:
    return f"c{index:06d}-r{round_no:04d}"


def request_hash(params: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]


def wiki_fingerprint(ws: Workspace) -> str:
    """The wiki as it stands (each page's path, size and modification time): a saved batch run
    is resumed only on the wiki it was made on."""
    rows = []
    for folder, dirs, files in os.walk(ws.wiki):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            rows.append(f"{os.path.relpath(os.path.join(folder, name), ws.wiki)}\t{st.st_size}\t{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


class BatchLog:
    """What a batched compile sent and got back, round by round (see the module's doc)."""

    def __init__(self, path: Path, header: dict[str, Any]):
        self.path = path
        self.base = path.parent  # .wikimem/: the log is read, appended and removed only as a file it owns
        self.header = json.loads(json.dumps(header))  # as it reads back (tuples are lists)
        self.rounds: dict[int, dict[str, Any]] = {}
        self.resumed = False
        self.stale: list[str] = []  # batches of a log set aside: canceled, as nothing will read them

    @classmethod
    def open(cls, ws: Workspace, header: dict[str, Any]) -> BatchLog:
        book = cls(ws.state_dir / LOG_FILE, header)
        lines: list[dict[str, Any]] = []
        try:
            text = read_owned(book.base, book.path).decode("utf-8")
            lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        except FileNotFoundError:
            pass
        except (OSError, ValueError, UnsafePath):
            log.warning("the saved batch run is unreadable; starting over", exc_info=True)
        if lines and lines[0].get("kind") == "start" and lines[0].get("header") == book.header:
            for line in lines[1:]:
                entry = book.rounds.setdefault(int(line["round"]), {"batches": [], "requests": {}, "results": None})
                if line.get("kind") == "sent":
                    entry["batches"] = list(line["batches"])
                    entry["requests"] = dict(line["requests"])
                elif line.get("kind") == "results":
                    entry["results"] = dict(line["results"])
            book.resumed = bool(book.rounds)
            return book
        for line in lines[1:]:
            if line.get("kind") == "sent":
                book.stale.extend(line.get("batches") or [])
        for line in lines[1:]:
            if line.get("kind") == "results":
                done = set(line.get("batches") or [])
                book.stale = [b for b in book.stale if b not in done]
        book.discard()
        book._append({"kind": "start", "header": book.header})
        return book

    def sent(self, round_no: int, batches: Sequence[str], requests: Mapping[str, str]) -> None:
        self.rounds[round_no] = {"batches": list(batches), "requests": dict(requests), "results": None}
        self._append({"kind": "sent", "round": round_no, "batches": list(batches), "requests": dict(requests)})

    def results(self, round_no: int, results: Mapping[str, Any]) -> None:
        entry = self.rounds[round_no]
        entry["results"] = dict(results)
        self._append({"kind": "results", "round": round_no, "batches": entry["batches"], "results": dict(results)})

    def discard(self) -> None:
        try:
            remove_owned(self.base, self.path)
        except UnsafePath:
            log.warning("the saved batch run is not a regular file; left as it is", exc_info=True)

    def _append(self, line: dict[str, Any]) -> None:
        try:
            append_owned(self.base, self.path, (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
        except (OSError, UnsafePath):
            log.warning("could not save the batch run; a stopped compile would send it again", exc_info=True)


class BatchRounds:
    """`submit` for conversations.run_rounds: a round's requests as Message Batches."""

    def __init__(self, client: Any, betas: list[str], book: BatchLog, *, tick: Callable[[], None],
                 failure: Callable[[str], Exception], aborted: Callable[[], str | None]):
        self.client = client
        self.betas = betas
        self.book = book
        self.tick = tick
        self.failure = failure  # the exception that fails a source, from its reason
        self.aborted = aborted
        self.batches = 0
        self.requests = 0
        self.errored = 0
        self.replayed = 0  # requests answered from the saved run, not sent
        self.out: str | None = None  # the batch out now
        self.out_counts: dict[str, int] = {}
        self.polls = 0

    def submit(self, round_no: int, asks: list[tuple[Job, Ask]]) -> dict[int, Any]:
        ids = {custom_id(job.index, round_no): (job, ask) for job, ask in asks}
        hashes = {cid: request_hash(ask.params) for cid, (_job, ask) in ids.items()}
        answers: dict[int, Any] = {}
        stopped = self.aborted()
        if stopped:
            return {job.index: self.failure(f"not attempted: {stopped}") for job, _ask in asks}
        saved = self.book.rounds.get(round_no)
        if saved is not None and saved["requests"] != hashes:
            raise ReplayDiverged(f"round {round_no} asks for other requests than the saved run sent")
        if saved is not None and saved["results"] is not None:
            results = saved["results"]
            self.replayed += len(ids)
        else:
            if saved is not None:
                batch_ids = saved["batches"]  # out when the last compile stopped: fetch, do not send again
                log.info("round %d: fetching the results of %s, sent by a compile that was stopped", round_no,
                         ", ".join(batch_ids))
            else:
                batch_ids = self._create(round_no, [(cid, ask) for cid, (_job, ask) in ids.items()])
                self.book.sent(round_no, batch_ids, hashes)
            results = {}
            for batch_id in batch_ids:
                results.update(self._collect(batch_id))
            self.book.results(round_no, results)
        for cid, (job, _ask) in ids.items():
            item = results.get(cid)
            if item is None:
                answers[job.index] = self.failure("API error in the batch: no result came back for this request")
            elif "message" in item:
                answers[job.index] = BetaMessage.model_validate(item["message"])
            else:
                self.errored += 1
                answers[job.index] = self.failure(str(item.get("error") or "API error in the batch"))
        return answers

    # --- the API
    def _create(self, round_no: int, requests: list[tuple[str, Ask]]) -> list[str]:
        chunks: list[list[dict[str, Any]]] = [[]]
        size = 0
        for cid, ask in requests:
            item = {"custom_id": cid, "params": ask.params}
            length = len(json.dumps(item))
            if chunks[-1] and (len(chunks[-1]) >= MAX_REQUESTS or size + length > MAX_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append(item)
            size += length
        ids = []
        extra = {"betas": self.betas} if self.betas else {}
        for chunk in chunks:
            created = self._call(functools.partial(self.client.beta.messages.batches.create, requests=chunk, **extra))
            ids.append(str(created.id))
            self.batches += 1
            self.requests += len(chunk)
            log.info("round %d: sent batch %s with %d requests", round_no, created.id, len(chunk))
        return ids

    def _collect(self, batch_id: str) -> dict[str, Any]:
        """Wait for a batch to end, then its results by custom_id."""
        delay = POLL_FIRST
        self.out = batch_id
        while True:
            batch = self._call(lambda: self.client.beta.messages.batches.retrieve(batch_id))
            self.polls += 1
            counts = getattr(batch, "request_counts", None)
            self.out_counts = {k: int(getattr(counts, k, 0) or 0) for k in
                               ("processing", "succeeded", "errored", "canceled", "expired")} if counts else {}
            if getattr(batch, "processing_status", "") == "ended":
                break
            self.tick()
            waited = 0.0
            while waited < delay:
                step = min(0.5, delay - waited)
                sleep(step)
                waited += step
                self.tick()
            delay = min(POLL_MAX, delay * 1.5)
        results: dict[str, Any] = {}
        for entry in self._call(lambda: list(self.client.beta.messages.batches.results(batch_id))):
            result = entry.result
            kind = getattr(result, "type", "")
            if kind == "succeeded":
                results[entry.custom_id] = {"message": result.message.model_dump(mode="json")}
            elif kind == "errored":
                error = getattr(getattr(result, "error", None), "error", None)
                what = f"{getattr(error, 'type', 'error')}: {getattr(error, 'message', '')}".strip(": ")
                results[entry.custom_id] = {"error": f"API error in the batch ({what}); the next compile retries it"}
            elif kind == "expired":
                results[entry.custom_id] = {"error": "the batch expired before this request ran (a batch runs "
                                                     "within 24 hours); the next compile retries it"}
            else:
                results[entry.custom_id] = {"error": f"the batch request was {kind or 'lost'}; the next compile retries it"}
        self.out = None
        return results

    def _call(self, call: Callable[[], Any]) -> Any:
        """A batch API call, tried again on rate limits, overload and connection errors."""

        for attempt in range(8):
            try:
                return call()
            except anthropic.APIStatusError as exc:
                if exc.status_code not in (408, 409, 429) and exc.status_code < 500 or attempt == 7:
                    raise BatchFailed(f"the Message Batches API answered {exc.status_code}: {api_error_message(exc)}") from exc
            except anthropic.APIConnectionError as exc:
                if attempt == 7:
                    raise BatchFailed(f"cannot reach the Message Batches API ({exc})") from exc
            sleep(min(POLL_MAX, 2.0 ** attempt))
        raise AssertionError("unreachable")

    def summary(self) -> dict[str, Any]:
        return {"batches": self.batches, "batch_requests": self.requests, "batch_errored": self.errored,
                "replayed": self.replayed}

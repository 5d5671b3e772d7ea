"""`wikimem mcp`: the wiki over the Model Context Protocol (stdio), with the official SDK.

A thin adapter over the same core functions the CLI uses. Read-only unless started
with `--allow-write`, which adds one tool, `add_note`, that drops a Markdown note into
raw/inbox/ for the daemon (or the next compile) to turn into pages: agents contribute
sources, they never edit the wiki. Every path argument is confined to the workspace's
wiki/ and raw/ folders; `..`, absolute paths and symlinks that lead out are refused
with an error result. While serving, fd 1 points at stderr and fd 0 at /dev/null, so
nothing but protocol reaches stdout and nothing else reads the client's messages.

`initialize`, the lists and the first searches and reads are answered before the SDK is
loaded (importing it is most of a start-up), as the SDK would answer them; the first message
answered otherwise loads the SDK, which is handed the conversation and serves the rest (see
`serve` and `EarlyServer`). For the same reason each tool imports the core it needs inside
its function.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import io
import json
import logging
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, BinaryIO, NamedTuple

from .errors import PathEscape, UnsafePath, WikimemError
from .naming import undecodable
from .workspace import Workspace, confine, open_checked, owned, read_owned, read_window

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver.tools import ToolManager

    from .search import Engine

    RequestContext = ServerRequestContext[Any, Any]

log = logging.getLogger("wikimem.mcp")

READ_MAX_CHARS = 60_000
# files up to this size are read whole (their line count is known); larger ones a window at a time
READ_WHOLE_BYTES = 8_000_000
READ_PDF_MAX_BYTES = 200_000_000
RESOURCE_MAX_BYTES = 1_000_000  # index.md stays near 25 KB; a larger file is served cut, with a note
LOG_TAIL_BYTES = 4_000_000  # recent_log reads the end of log.md, never all of a years-long file
DEFAULT_LINES = 400
MAX_LINES = 2_000
ANCHOR_CONTEXT = 20  # lines shown either side of a cited line (raw/a.md#L147)
NOTE_MAX_BYTES = 1_000_000
# a server answers many queries in a row: a background thread walks the folders for changes
# this often (a compile by the daemon updates the index itself, which queries see at once)
FRESH_WITHIN_SECONDS = 2.0
WARM_PAUSE = 0.0002  # seconds the warm-up pauses after each step (see Searching._warm)
WARM_SHARE = 0.005  # seconds spent in warm-up steps, at least, between two queries that wait
WIKI_TOP_FILES = {"index.md", "log.md", "AGENTS.md", "lint.md"}

INSTRUCTIONS = """This server serves a wikimem wiki: Markdown pages compiled from the documents in raw/.
Start with the resource wiki://index.md (the catalog) or the search tool; read pages and raw sources
with read (paths like wiki/sources/x.md or raw/notes.md, as search returns them). Search results
and pages cite raw sources by line (raw/x.md#L12): read that target for the lines around it."""

SERVER_NAME = "wikimem"
# The protocol versions `initialize` can agree on, oldest to newest: the SDK's
# HANDSHAKE_PROTOCOL_VERSIONS (mcp_types.version), spelled out to answer `initialize` before
# the SDK is loaded. A test holds the two equal.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What the SDK's Server.get_capabilities derives from the handlers build_server registers (tools,
# resources and prompts are listed; no subscriptions, no change notifications), with or without
# --allow-write. A test holds the two equal.
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}


def resolve(ws: Workspace, path: str) -> tuple[str, Any]:
    """A workspace path (wiki/... or raw/...) -> (normalized path, file); refuses anything else.

    A path in wiki/ is served by its own name only (no symbolic link on the way: wikimem's
    folders hold no links); a path in raw/ may be a link that stays inside the workspace, as
    compile reads it."""
    path = (path or "").strip()
    if path.startswith("./"):
        path = path[2:]
    path = path.split("#", 1)[0]  # accept citation targets such as raw/x.md#L12
    # links inside index.md and the pages are relative to wiki/: accept those as given
    if path.split("/", 1)[0] in ("sources", "concepts", "facts", "answers") or path in WIKI_TOP_FILES:
        path = "wiki/" + path
    file = confine(ws.root, path)
    rel = file.relative_to(ws.root).as_posix()
    if not (rel.startswith("wiki/") or rel.startswith("raw/")):
        raise PathEscape(f"{path!r} is outside wiki/ and raw/; only those can be read")
    lexical = os.path.normpath(path)
    if lexical == "wiki" or lexical.startswith("wiki/"):
        owned(ws.wiki, ws.root / lexical, folder=file.is_dir())
    return rel, file


def _served(ws: Workspace, rel: str, file: Any) -> BinaryIO:
    """The file opened for an agent: a regular file with one link (workspace.open_checked)."""
    try:
        return open_checked(file, rel, single_link=True)
    except UnsafePath as exc:
        raise WikimemError(str(exc)) from None


_ANCHOR = re.compile(r"#L(\d+)(?:-L?(\d+))?$")


def anchor_window(path: str) -> tuple[int, int, int] | None:
    """(first line, last line, cited line) for a citation target: #L147 is a window of
    ANCHOR_CONTEXT lines either side of line 147, #L10-L20 those lines."""
    match = _ANCHOR.search((path or "").strip())
    if not match:
        return None
    first = max(1, int(match.group(1)))
    if match.group(2):
        return first, max(first, int(match.group(2))), first
    return max(1, first - ANCHOR_CONTEXT), first + ANCHOR_CONTEXT, first


def read_file(ws: Workspace, path: str, start_line: int | None = None, max_lines: int | None = None) -> dict[str, Any]:
    """A page or source as text, with line numbers kept so citations (#L12) can be followed.

    A citation target (raw/a.md#L147, raw/a.md#L10-L20) without start_line gives a window
    around the cited line, each line prefixed with its number. A file larger than
    READ_WHOLE_BYTES is read a window at a time (never whole: a 2 GB file costs the window);
    every answer says where to go on when there is more.
    """
    rel, file = resolve(ws, path)
    if file.is_dir():
        entries = sorted(p.relative_to(ws.root).as_posix() + ("/" if p.is_dir() else "")
                         for p in file.iterdir() if not p.name.startswith(".") and not undecodable(p.name))
        return {"path": rel, "kind": "folder", "entries": entries}
    if not file.is_file():
        raise WikimemError(f"no such file: {rel}; search or list_pages gives valid paths")
    anchor = anchor_window(path) if start_line is None else None
    if anchor is not None:
        start, count = anchor[0], anchor[1] - anchor[0] + 1
    else:
        start, count = max(1, start_line or 1), max(1, max_lines or DEFAULT_LINES)
    count = min(count, MAX_LINES)
    total: int | None
    with _served(ws, rel, file) as handle:
        size = os.fstat(handle.fileno()).st_size
        if file.suffix.lower() == ".pdf":
            lines = _pdf_lines(ws, rel, file, size)
            chunk, total = lines[start - 1 : start - 1 + count], len(lines)
            more = start - 1 + len(chunk) < total
        else:
            from .sources import SkipSource, read_text

            try:
                if size <= READ_WHOLE_BYTES:
                    lines = read_text(file, handle.read(READ_WHOLE_BYTES))[0].split("\n")
                    chunk, total = lines[start - 1 : start - 1 + count], len(lines)
                    more = start - 1 + len(chunk) < total
                else:
                    window = read_window(handle, start, count, READ_MAX_CHARS * 4)
                    chunk = read_text(file, window.data)[0].split("\n") if window.count else []
                    total, more = None, window.more or window.clipped
            except SkipSource as exc:
                raise WikimemError(f"cannot read {rel}: {exc}") from None
    if anchor is not None:
        chunk = [f"{n}\t{line}" for n, line in enumerate(chunk, start)]
    body = "\n".join(chunk)
    end = start + len(chunk) - 1
    cut = len(body) > READ_MAX_CHARS
    if cut:
        body = body[:READ_MAX_CHARS]
        end = start + body.count("\n")  # the last line shown, perhaps in part: the next slice starts there
        more = True
    result: dict[str, Any] = {"path": rel, "start_line": start, "end_line": end, "total_lines": total,
                              "truncated": more, "text": body}
    if anchor is not None:
        result["line"] = anchor[2]
        result["numbered"] = True
    if more:
        result["next_start_line"] = end if cut else end + 1
    return result


PDF_CACHE = 2  # PDFs kept parsed by a server: an agent reads one a slice at a time
_pdfs: dict[tuple[str, int, int, int], list[str]] = {}
_pdfs_lock = threading.Lock()


def _pdf_lines(ws: Workspace, rel: str, file: Any, size: int) -> list[str]:
    """A PDF's text as lines ([page N] ...), parsed once for as long as the file is unchanged
    (an agent reads it a slice at a time: each slice parsed it whole again, seconds a call);
    one the compile skipped is refused with the compile's reason, never parsed again here."""
    from .sources import SkipSource, load_source
    from .state import skipped_reason

    st = os.stat(file)
    key = (rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _pdfs_lock:
        if key in _pdfs:
            return _pdfs[key]
    reason = skipped_reason(ws.state_db, rel, st.st_size, st.st_mtime_ns)
    if reason:
        raise WikimemError(f"cannot read {rel}: the compile skipped it ({reason})")
    if size > READ_PDF_MAX_BYTES:
        raise WikimemError(f"{rel} is a {size // 1_000_000} MB PDF, more than MCP read opens "
                           f"({READ_PDF_MAX_BYTES // 1_000_000} MB); search finds its passages")
    try:
        doc = load_source(file, rel, max_bytes=READ_PDF_MAX_BYTES)
    except SkipSource as exc:
        raise WikimemError(f"cannot read {rel}: {exc}") from None
    lines = [f"[page {b.line}] {b.text}" for b in doc.blocks]
    with _pdfs_lock:
        while len(_pdfs) >= PDF_CACHE:
            _pdfs.pop(next(iter(_pdfs)))
        _pdfs[key] = lines
    return lines


def list_pages(ws: Workspace, kind: str | None = None) -> list[dict[str, Any]]:
    from .compiler import collect_entries

    folders = {"source": "sources", "concept": "concepts", "fact": "facts", "answer": "answers"}
    if kind and kind not in folders:
        raise WikimemError(f"unknown kind {kind!r}; valid: {', '.join(folders)}")
    out = []
    for folder, entries in collect_entries(ws).items():
        page_kind = next(k for k, f in folders.items() if f == folder)
        if kind and page_kind != kind:
            continue
        out += [{"path": "wiki/" + e.path, "title": e.title, "kind": page_kind, "description": e.description}
                for e in entries]
    return out


def recent_log(ws: Workspace, limit: int = 10) -> list[dict[str, Any]]:
    from .log_page import read_entries

    try:
        entries = read_entries(ws.wiki / "log.md", tail_bytes=LOG_TAIL_BYTES)[-max(1, limit):]
    except UnsafePath as exc:
        raise WikimemError(str(exc)) from None
    return [{"time": t, "operation": op, "subject": subject, "lines": lines} for t, op, subject, lines in reversed(entries)]


def lint_findings(ws: Workspace) -> dict[str, Any]:
    """The current findings, computed now without writing anything (wiki/lint.md as a fallback)."""
    try:
        from .config import load_settings
        from .lint import run_lint
    except ImportError:  # a build without the lint module: serve the last written report
        pass
    else:
        # write=False: the server is read-only; lint.md and log.md stay as the last real run left them
        report = run_lint(ws, load_settings(ws.root), write=False, lock=False)
        return report.to_json()
    lint_md = ws.wiki / "lint.md"
    if lint_md.is_file():
        try:
            text = read_owned(ws.wiki, lint_md, limit=RESOURCE_MAX_BYTES, single_link=True)
        except UnsafePath as exc:
            raise WikimemError(str(exc)) from None
        return {"source": "wiki/lint.md", "text": text.decode("utf-8", "replace")}
    return {"source": None, "text": "No lint report yet: run `wikimem lint`."}


def add_note(ws: Workspace, title: str, text: str) -> dict[str, Any]:
    """Drop a Markdown note into raw/inbox/ (never overwriting) for the next compile."""
    from .pages import slugify
    from .workspace import create_new

    title = " ".join((title or "").split())
    if not title or not (text or "").strip():
        raise WikimemError("a note needs a title and some text")
    data = f"# {title}\n\n{text.strip()}\n".encode()
    if len(data) > NOTE_MAX_BYTES:
        raise WikimemError(f"note too large ({len(data)} bytes > {NOTE_MAX_BYTES}); split it")
    inbox = ws.raw / "inbox"
    confine(ws.raw, "inbox")  # raw/inbox must not be a symlink out of the workspace
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    file = create_new(inbox, _note_names(f"{stamp}-{slugify(title, max_length=60)}"), data)
    return {"path": f"raw/inbox/{file.name}", "bytes": len(data),
            "note": "queued: the daemon compiles it shortly, or run wikimem compile"}


def _note_names(base: str) -> Iterator[str]:
    """base.md, base-2.md ... base-9.md, then a random suffix: the tenth note of a day with one
    title costs as much as the second, where counting up through every earlier one took
    minutes a thousand at 10,000 notes."""
    yield f"{base}.md"
    for n in range(2, 10):
        yield f"{base}-{n}.md"
    while True:
        yield f"{base}-{secrets.token_hex(4)}.md"


class Searching:
    """The search engine the tools share, the lock its queries hold, and its warm-up.

    Nothing of search is imported or opened until it is needed: `start` (once the client
    has its answer to `initialize`) imports the search package (whoosh), opens and warms the
    index in a background thread, then watches for changed files.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.lock = threading.Lock()  # sync tools run in worker threads; one searcher serves them in turn
        self._waiting = 0  # queries waiting for the lock: the warm-up lets them go first
        self._waits = threading.Condition()
        self._engine: Engine | None = None
        self._making = threading.Lock()
        self._started = False

    @property
    def engine(self) -> Engine:
        if self._engine is not None:
            return self._engine
        with self._making:  # the warm-up thread and a tool's worker thread may both ask first
            if self._engine is None:
                from .search import Engine

                self._engine = Engine(self.ws, fresh_within=FRESH_WITHIN_SECONDS)
            return self._engine

    @property
    def ready(self) -> bool:
        """Warmed and watched: a query only checks the index is current, then scores."""
        return self._engine is not None and self._engine.ready

    def answer(self, query: str, limit: int, kind: str | None) -> dict[str, Any]:
        """The search tool's result, waiting for the index if it is being opened, or for the
        warm-up's step under way."""
        with self._waits:
            self._waiting += 1
        try:
            self.lock.acquire()
        finally:
            with self._waits:
                self._waiting -= 1
                self._waits.notify_all()
        try:
            return self._answer(query, limit, kind)
        finally:
            self.lock.release()

    def answer_now(self, query: str, limit: int, kind: str | None) -> dict[str, Any] | None:
        """As `answer` when the index is warm and free; None when a query would have to wait."""
        if not (self.ready and self.lock.acquire(blocking=False)):
            return None
        try:
            return self._answer(query, limit, kind)
        finally:
            self.lock.release()

    def _answer(self, query: str, limit: int, kind: str | None) -> dict[str, Any]:
        hits = self.engine.passages(query, max(1, min(int(limit), 50)), (kind,) if kind else None)
        return {"results": [p.to_json() for p in hits]}

    def start(self) -> None:
        """Warm the index in a background thread, once (called from the event loop): on a large
        wiki that was never searched the first build takes minutes, and the first search then
        waits for less of it."""
        if self._started:
            return
        self._started = True
        log.debug("warming the search index")
        threading.Thread(target=self._warm, name="wikimem-index", daemon=True).start()

    def _warm(self) -> None:
        engine = self.engine
        done = object()
        try:
            # the index, and the scorer's tables (half a second at 10k sources), a step at a
            # time: a query that waits goes before the next step once the warm-up has had
            # WARM_SHARE since the last query (a first search that came in before the warm-up
            # waited for none of it, and the next one for all of it; yielding after every step,
            # queries in a row held the warm-up to a step each)
            steps = engine.warm_steps()
            finished = False
            while not finished:
                with self._waits:
                    self._waits.wait_for(lambda: not self._waiting)
                with self.lock:
                    spent = 0.0  # in the steps themselves, not in pauses or waits for the interpreter
                    while not finished:
                        started = time.perf_counter()
                        finished = next(steps, done) is done
                        spent += time.perf_counter() - started
                        # a moment without the interpreter's lock after each step: a thread that
                        # has a query gets to say so (else it waits for the interpreter until
                        # its switch interval, 5 ms, is up)
                        time.sleep(WARM_PAUSE)
                        if self._waiting and spent >= WARM_SHARE:
                            break
        except Exception as exc:  # noqa: BLE001 - the first search reports it as a tool error
            log.warning("search index not ready: %s", exc)
        # from now on a background thread looks for changed files, and opens and warms a
        # changed index before swapping it in: queries never walk nor reopen
        engine.watch(FRESH_WITHIN_SECONDS, lock=self.lock)


def tool_functions(ws: Workspace, searching: Searching, *, allow_write: bool = False) -> dict[str, Callable[..., Any]]:
    """The tools by name. Their signatures and docstrings are the tools' schemas and descriptions
    (the SDK's `Tool.from_function` reads them, as MCPServer's `@tool()` does)."""

    def guarded(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except WikimemError as exc:
            from mcp.server.mcpserver.exceptions import ToolError

            raise ToolError(str(exc)) from None

    async def search(query: str, limit: int = 10, kind: str | None = None) -> dict[str, Any]:
        """Search the wiki pages and raw sources. Natural-language questions work.

        Returns up to `limit` results, best first: path (wiki/... or raw/..., for `read`), title,
        kind (source | concept | fact | answer | raw), score, the snippet (whole sentences), the
        line it starts on, and target (path#L<line>: pass it to `read` for the lines around
        it). `kind` keeps one kind only."""
        import anyio.to_thread

        # a warmed engine whose watcher keeps it current answers in a millisecond or two: run
        # it here rather than pay a worker-thread round trip. Otherwise (the index is being
        # opened, built, warmed or swapped) wait for it in a worker thread, never in the event loop.
        result = guarded(searching.answer_now, query, limit, kind)
        if result is None:
            result = await anyio.to_thread.run_sync(lambda: guarded(searching.answer, query, limit, kind))
        return result

    def read(path: str, start_line: int | None = None, max_lines: int | None = None) -> dict[str, Any]:
        """Read a wiki page or raw source by its workspace path (e.g. wiki/index.md,
        raw/notes/a.md). A citation such as raw/a.md#L40 (or #L40-L52) gives the lines around
        it, numbered. Folders list their entries. Long files come in slices: when `truncated`,
        pass next_start_line as start_line to go on."""
        return guarded(read_file, ws, path, start_line, max_lines)

    def list_pages_tool(kind: str | None = None) -> dict[str, Any]:
        """List wiki pages with their title and one-line description; kind: source, concept or answer."""
        return {"pages": guarded(list_pages, ws, kind)}

    def recent_log_tool(limit: int = 10) -> dict[str, Any]:
        """The most recent operations from wiki/log.md (ingests, removals, queries, lint), newest first."""
        return {"entries": guarded(recent_log, ws, max(1, min(int(limit), 200)))}

    def lint() -> dict[str, Any]:
        """Current lint findings: stale pages, broken links, conflicting or superseded claims."""
        return guarded(lint_findings, ws)

    def context(query: str, budget: int = 8000) -> str:
        """A context pack: the index excerpt and the best pages for `query` within `budget` tokens,
        each with its path and freshness, as one Markdown document."""
        from .context import build_context

        with searching.lock:
            return guarded(lambda: build_context(ws, query, int(budget)).render())

    tools: dict[str, Callable[..., Any]] = {
        "search": search, "read": read, "list_pages": list_pages_tool, "recent_log": recent_log_tool,
        "lint": lint, "context": context,
    }
    if allow_write:
        def add_note_tool(title: str, text: str) -> dict[str, Any]:
            """Contribute a source: writes a Markdown note to raw/inbox/ for wikimem to compile into
            the wiki. Never edits existing pages or files."""
            return guarded(add_note, ws, title, text)

        tools["add_note"] = add_note_tool
    return tools


# name -> (file in wiki/, description): served as text/markdown
RESOURCES = {
    "index": ("index.md", "The wiki's catalog: read it first."),
    "AGENTS": ("AGENTS.md", "How this wiki is laid out and kept."),
}


def resource_text(ws: Workspace, file: str) -> str:
    """A resource's text: the file in wiki/ by its own name (never a link, a special file or
    a file with other hard links), at most RESOURCE_MAX_BYTES of it."""
    data = read_owned(ws.wiki, ws.wiki / file, limit=RESOURCE_MAX_BYTES + 1, single_link=True)
    if len(data) > RESOURCE_MAX_BYTES:
        cut = data[:RESOURCE_MAX_BYTES].decode("utf-8", "ignore")
        return cut + f"\n\n[{file} continues; read it in slices with the read tool]\n"
    return data.decode("utf-8", "replace")


def build_server(ws: Workspace, *, allow_write: bool = False, searching: Searching | None = None) -> Server[Any]:
    """The MCP server: the SDK's low-level `Server`, which answers `initialize` with nothing
    of the tools built. The tools are the SDK's own (`Tool` in a `ToolManager`: the schemas,
    argument validation, results and error results MCPServer gives them), built when a
    client first lists or calls them, and the handlers are MCPServer's for what this server
    serves (tools, two static resources, no prompts). MCPServer itself cost about 30 ms more
    of the time to `initialize`: as it is constructed it imports rich to set up the logging
    the CLI has already set up, and it builds every tool's pydantic models. (`import mcp`
    imports all of the SDK, its client and HTTP transports included, whichever server is used.)
    """
    import anyio.to_thread
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
    from mcp.shared.exceptions import MCPError

    from . import __version__

    searching = searching or Searching(ws)
    functions = tool_functions(ws, searching, allow_write=allow_write)
    built: list[ToolManager] = []

    def tools() -> ToolManager:
        if not built:
            from mcp.server.mcpserver.tools import ToolManager

            manager = ToolManager()
            for name, fn in functions.items():
                manager.add_tool(fn, name=name)  # as MCPServer's @tool(name=...)
            built.append(manager)
        return built[0]

    async def list_tools(ctx: RequestContext, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListToolsResult:
        # as MCPServer.list_tools
        return mcp_types.ListToolsResult(tools=[
            mcp_types.Tool(name=t.name, title=t.title, description=t.description, input_schema=t.parameters,
                           output_schema=t.output_schema, annotations=t.annotations, icons=t.icons, _meta=t.meta)
            for t in tools().list_tools()
        ])

    async def call_tool(ctx: RequestContext, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        # as MCPServer._handle_call_tool: a failure is an error result with its message (a
        # ToolError's own text, "Error executing tool <name>" for a crash, which is logged)
        from mcp.server.mcpserver import Context as ToolContext
        from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

        try:
            return await tools().call_tool(params.name, params.arguments or {},
                                           ToolContext(request_context=ctx, input_params=params),
                                           convert_result=True)
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported to the client as an error result
            if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
                log.info("tool %r failed: %r", params.name, str(exc))
            else:
                log.exception("tool %r raised an unexpected exception", params.name)
            return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=str(exc))],
                                            is_error=True)

    async def list_resources(ctx: RequestContext, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListResourcesResult:
        # as MCPServer.list_resources
        return mcp_types.ListResourcesResult(resources=[
            mcp_types.Resource(uri=f"wiki://{file}", name=name, title=None, description=description,
                               mime_type="text/markdown", icons=None, annotations=None, _meta=None)
            for name, (file, description) in RESOURCES.items()
        ])

    async def read_resource(ctx: RequestContext, params: mcp_types.ReadResourceRequestParams) -> mcp_types.ReadResourceResult:
        # as MCPServer._handle_read_resource: an unknown URI is INVALID_PARAMS, a file that
        # cannot be read INTERNAL_ERROR, both with the URI as data
        uri = str(params.uri)
        file = next((f for f, _ in RESOURCES.values() if uri == f"wiki://{f}"), None)
        if file is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"Unknown resource: {uri}", data={"uri": uri})
        try:
            text = await anyio.to_thread.run_sync(resource_text, ws, file)
        except UnsafePath as exc:  # a link or a special file in wiki/ is never served
            raise MCPError(code=mcp_types.INTERNAL_ERROR, message=f"Error reading resource {uri}: {exc}",
                           data={"uri": uri}) from None
        except Exception:  # noqa: BLE001 - reported to the client as an error
            log.exception("resource %r raised an unexpected exception", uri)
            raise MCPError(code=mcp_types.INTERNAL_ERROR, message=f"Error reading resource {uri}",
                           data={"uri": uri}) from None
        return mcp_types.ReadResourceResult(contents=[
            mcp_types.TextResourceContents(uri=params.uri, text=text, mime_type="text/markdown", _meta=None)])

    async def list_resource_templates(ctx: RequestContext, params: mcp_types.PaginatedRequestParams | None
                                      ) -> mcp_types.ListResourceTemplatesResult:
        return mcp_types.ListResourceTemplatesResult(resource_templates=[])

    async def list_prompts(ctx: RequestContext, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListPromptsResult:
        return mcp_types.ListPromptsResult(prompts=[])

    async def get_prompt(ctx: RequestContext, params: mcp_types.GetPromptRequestParams) -> mcp_types.GetPromptResult:
        raise ValueError(f"Unknown prompt: {params.name}")  # as MCPServer.get_prompt

    async def warm_after_initialize(ctx: RequestContext, call_next: CallNext) -> HandlerResult:
        # the index warms from the first message after `initialize` (the client's `initialized`
        # notification, or its first request), not beside it: warming beside it (both Python,
        # one GIL) made the answer 20 ms later at 187 sources
        if ctx.method != "initialize":
            searching.start()
        return await call_next(ctx)

    server: Server[Any] = Server(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_read_resource=read_resource,
        on_list_resource_templates=list_resource_templates,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt,
        on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),  # as MCPServer
    )
    # what MCPServer adds: the request-state boundary, under a key this process makes now
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="wikimem"))
    server.middleware.append(warm_after_initialize)
    return server


class EarlyAnswer(NamedTuple):
    """The answer given to the client's `initialize` before the SDK was loaded."""

    request_id: int | str
    message: dict[str, Any]

    def line(self) -> bytes:
        """The message as the SDK's stdio transport writes one: compact JSON, UTF-8, one line."""
        return (json.dumps(self.message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def initialize_request(line: bytes) -> tuple[int | str, dict[str, Any]] | None:
    """(id, params) of a well-formed JSON-RPC `initialize` request whose params the SDK accepts.
    None for anything else: the SDK answers that, errors included, as if nothing had been read
    before it."""
    try:
        message = json.loads(line)
    except ValueError:  # not JSON, or not UTF-8
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    if not _sdk_accepts(params):
        return None  # the SDK refuses these params, or might: let it decide
    return request_id, params


# What of `initialize`'s params the early answer knows the SDK accepts (its InitializeRequestParams
# with ClientCapabilities and Implementation): anything else, however harmless it may be, is
# left to the SDK, which answers it as it would have (an answer given early for params the SDK
# refuses would tell the client a handshake succeeded that did not).
_CLIENT_INFO = {"name", "version", "title", "description", "websiteUrl"}
_EMPTY_CAPABILITIES = {"sampling": {"context", "tools"}, "elicitation": {"form", "url"}}
_FREE_CAPABILITIES = ("experimental", "extensions")  # dict[str, dict[str, Any]]


def _sdk_accepts(params: dict[str, Any]) -> bool:
    if set(params) - {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    client, capabilities = params.get("clientInfo"), params.get("capabilities")
    if not (isinstance(params.get("protocolVersion"), str) and isinstance(capabilities, dict)
            and isinstance(client, dict) and not set(client) - _CLIENT_INFO
            and all(isinstance(client.get(k), str) for k in ("name", "version"))
            and all(isinstance(v, str) for v in client.values())):
        return False
    for key, value in capabilities.items():
        if not isinstance(value, dict):
            return False
        if key == "roots":
            if set(value) - {"listChanged"} or not all(isinstance(v, bool) for v in value.values()):
                return False
        elif key in _EMPTY_CAPABILITIES:
            if set(value) - _EMPTY_CAPABILITIES[key] or any(v != {} for v in value.values()):
                return False
        elif key in _FREE_CAPABILITIES:
            if not all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items()):
                return False
        else:
            return False
    return True


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """The result the SDK gives `initialize`: the client's protocol version if it is one the
    handshake can agree on, else the latest; keys in the order the SDK writes them."""
    from . import __version__

    requested = params["protocolVersion"]
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def early_answer(line: bytes) -> EarlyAnswer | None:
    """Our answer to the client's first line if it is `initialize`, else None."""
    request = initialize_request(line)
    if request is None:
        return None
    request_id, params = request
    return EarlyAnswer(request_id, {"jsonrpc": "2.0", "id": request_id, "result": initialize_result(params)})


MAX_MESSAGE_BYTES = 16_000_000  # one line of the protocol; a longer one is read through and dropped
TOO_LONG = "message longer than the server reads\n"  # not JSON: the SDK answers it as it answers any such line


def _bounded_line(wire: IO[bytes]) -> bytes:
    """The next line of the wire, at most MAX_MESSAGE_BYTES: a longer one is read through in
    pieces, never held whole, and TOO_LONG stands for it (a 400 MB first line was read whole)."""
    line = wire.readline(MAX_MESSAGE_BYTES + 1)
    if len(line) <= MAX_MESSAGE_BYTES or line.endswith(b"\n"):
        return line
    while line and not line.endswith(b"\n"):
        line = wire.readline(1 << 20)
    return TOO_LONG.encode()


class _Replayed:
    """The wire as the SDK's stdin (lines of UTF-8 text, as its stdio transport reads them with
    readline): the lines read here to answer early that it must see, again, then the rest from
    the same reader, so that what it had read ahead is not lost; every line bounded
    (_bounded_line)."""

    def __init__(self, wire: IO[bytes], seen: list[bytes]) -> None:
        self._wire = wire
        self._seen = [line.decode("utf-8", "replace") for line in reversed(seen)]

    def readline(self, size: int = -1, /) -> str:
        if self._seen:
            return self._seen.pop()
        return _bounded_line(self._wire).decode("utf-8", "replace")


class _Answered(io.TextIOWrapper):
    """The wire as the SDK's stdout, less the SDK's own answer to the `initialize` replayed to
    it: the client has had ours. The SDK writes each message whole, in one write."""

    def __init__(self, wire: IO[bytes], early: EarlyAnswer | None) -> None:
        super().__init__(wire, encoding="utf-8")
        self._early = early

    def write(self, text: str, /) -> int:
        early = self._early
        if early is None:
            return super().write(text)
        message = json.loads(text)
        if not (isinstance(message, dict) and "method" not in message and message.get("id") == early.request_id):
            return super().write(text)
        self._early = None
        if message != early.message:
            log.warning("answered initialize with %s; the SDK answers %s", early.line().decode().strip(),
                        text.strip())
        return len(text)


@contextlib.contextmanager
def _wire() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The client's stdin and stdout on descriptors of their own, fd 0 reading /dev/null and
    fd 1 writing to stderr meanwhile: nothing else in the process (an import, a stray print, a
    child process) reads the client's messages or writes into the protocol. The SDK's stdio
    transport does this only for the streams it opens, and the wire is opened before the SDK
    is loaded."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        # never closed: a worker thread may still be reading when serving ends (as the SDK's)
        yield open(wire_in, "rb", closefd=False), open(wire_out, "wb", closefd=False)  # noqa: SIM115
    finally:
        sys.stdout.flush()  # stray output meant for stderr, before fd 1 is the wire again
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)


def _load_server(ws: Workspace, searching: Searching, *, allow_write: bool = False) -> Server[Any]:
    """The SDK, imported, and the server built on it."""
    # Importing the SDK makes some 80,000 objects that live as long as the server. The cyclic
    # collector ran about 190 times meanwhile, freed some 800 objects and took 50-70 ms of the
    # import; switched off, its first collections after would scan them all. So it is off while
    # they are made, and they are frozen: left out of every later collection (the few cycles
    # made meanwhile are never freed).
    gc.disable()
    try:
        import mcp.server.stdio  # noqa: F401 - what serve runs the server with

        return build_server(ws, allow_write=allow_write, searching=searching)
    finally:
        gc.freeze()
        gc.enable()


def _answer_first_line(wire_in: IO[bytes], wire_out: IO[bytes]) -> tuple[bytes, EarlyAnswer | None]:
    """The client's first line (bounded: _bounded_line), answered at once if it is `initialize`."""
    first = _bounded_line(wire_in)
    early = early_answer(first)
    if early is not None:
        wire_out.write(early.line())
        wire_out.flush()
        log.debug("answered initialize (id %r) before loading the SDK", early.request_id)
    return first, early


# --- what is answered before the SDK is loaded ---------------------------------------------------
#
# Importing the SDK (pydantic models of the whole protocol, its client and HTTP transports) is
# some 0.5 s of one core, more than the rest of the start-up together, and a client's first
# minute is `initialize`, the lists, and searches and reads. Those are answered here, as the SDK
# answers them (tests hold each answer equal to the SDK's); the first message this does not
# answer exactly as the SDK would (another method, arguments the SDK would coerce or refuse, a
# tool's error, anything malformed) loads the SDK and hands it the conversation: the lines it
# must have seen (`initialize`, `notifications/initialized`) replayed, then that message.

# a parameter's annotation -> its JSON types, as pydantic's schema of a tool's signature says them
_JSON_TYPES = {"str": ("string",), "int": ("integer",), "str | None": ("string", "null"),
               "int | None": ("integer", "null")}
_PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "null": (type(None),)}
# the lists whose answer does not depend on the workspace (RESOURCES is a constant)
_STATIC_LISTS: dict[str, dict[str, Any]] = {
    "ping": {},
    "prompts/list": {"prompts": []},
    "resources/templates/list": {"resourceTemplates": []},
    "resources/list": {"resources": [{"name": name, "uri": f"wiki://{file}", "description": description,
                                      "mimeType": "text/markdown"} for name, (file, description) in RESOURCES.items()]},
}


def tool_schema(name: str, fn: Callable[..., Any]) -> dict[str, Any] | None:
    """A tool as the SDK lists it (`Tool.from_function`: pydantic's JSON schema of the function's
    signature, its docstring as the description), for the annotations wikimem's tools use; None
    for any other annotation (the SDK lists the tools then)."""
    import inspect

    properties: dict[str, Any] = {}
    required: list[str] = []
    signature = inspect.signature(fn)
    for pname, param in signature.parameters.items():
        types = _JSON_TYPES.get(param.annotation) if isinstance(param.annotation, str) else None
        if types is None:
            return None
        title = pname.replace("_", " ").title()
        prop: dict[str, Any] = ({"title": title, "type": types[0]} if len(types) == 1
                                else {"anyOf": [{"type": t} for t in types], "title": title})
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        else:
            prop["default"] = param.default
        properties[pname] = prop
    inputs: dict[str, Any] = {"properties": properties, **({"required": required} if required else {}),
                              "type": "object", "title": f"{fn.__name__}Arguments"}
    if signature.return_annotation == "dict[str, Any]":
        output = {"type": "object", "additionalProperties": True, "title": f"{fn.__name__}DictOutput"}
    elif signature.return_annotation == "str":
        output = {"properties": {"result": {"title": "Result", "type": "string"}}, "required": ["result"],
                  "title": f"{fn.__name__}Output", "type": "object"}
    else:
        return None
    return {"name": name, "description": fn.__doc__ or "", "inputSchema": inputs, "outputSchema": output}


class EarlyServer:
    """The answers given before the SDK is loaded: `tools/list` from the tools' own signatures,
    the static lists, `ping`, and the read-only tools that answer with an object (search, read),
    called with arguments of exactly the types their schema gives."""

    def __init__(self, ws: Workspace, searching: Searching, *, allow_write: bool = False) -> None:
        functions = tool_functions(ws, searching, allow_write=allow_write)
        schemas = [tool_schema(name, fn) for name, fn in functions.items()]
        self.tools: list[dict[str, Any]] | None = None if None in schemas else schemas  # type: ignore[assignment]
        self.schemas = {t["name"]: t for t in self.tools or ()}
        # the tools answered here: read-only, each the same call as its tool function makes
        self.calls: dict[str, Callable[..., dict[str, Any]]] = {
            "search": searching.answer,
            "read": lambda path, start_line, max_lines: read_file(ws, path, start_line, max_lines),
        }

    def reply(self, line: bytes) -> tuple[dict[str, Any] | None, bool]:
        """(the answer to a line, or None to hand it to the SDK; whether the SDK must see the line
        too). A notification that the session is initialized has no answer, and is kept."""
        try:
            message = json.loads(line)
        except ValueError:
            return None, False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return None, False
        method, params = message["method"], message.get("params")
        if "id" not in message:
            return ({}, True) if method == "notifications/initialized" and set(message) == {"jsonrpc", "method"} else (None, False)
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, int | str) or set(message) - {"jsonrpc", "id", "method", "params"}:
            return None, False
        result: dict[str, Any] | None = None
        if method in _STATIC_LISTS and params in (None, {}):
            result = _STATIC_LISTS[method]
        elif method == "tools/list" and params in (None, {}) and self.tools is not None:
            result = {"tools": self.tools}
        elif method == "tools/call" and isinstance(params, dict):
            result = self._call(params)
        if result is None:
            return None, False
        log.debug("answered %s (id %r) before loading the SDK", method, request_id)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}, False

    def _call(self, params: dict[str, Any]) -> dict[str, Any] | None:
        name, arguments = params.get("name"), params.get("arguments", {})
        if set(params) - {"name", "arguments"} or name not in self.calls or not isinstance(arguments, dict):
            return None
        schema = self.schemas.get(name, {}).get("inputSchema")
        if schema is None or not self._valid(schema, arguments):
            return None
        given = {k: arguments.get(k, prop.get("default")) for k, prop in schema["properties"].items()}
        try:
            found = self.calls[name](**given)
        except Exception:  # noqa: BLE001 - the SDK calls it again and tells the client the error as it does
            return None
        # as the SDK's ToolManager gives an object: the object, and its JSON as text (indented)
        return {"content": [{"type": "text", "text": json.dumps(found, indent=2, ensure_ascii=False)}],
                "structuredContent": found, "isError": False}

    @staticmethod
    def _valid(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
        properties = schema["properties"]
        if set(arguments) - set(properties) or set(schema.get("required", ())) - set(arguments):
            return False
        for key, value in arguments.items():
            prop = properties[key]
            types = [t["type"] for t in prop["anyOf"]] if "anyOf" in prop else [prop["type"]]
            if isinstance(value, bool) or not isinstance(value, tuple(t for x in types for t in _PY_TYPES[x])):
                return False
        return True


def serve(ws: Workspace, *, allow_write: bool = False) -> None:
    """Serve over stdio. `initialize` is answered at once, as the SDK would answer it; so are
    the messages that follow it while EarlyServer knows their answer, with the index warming
    from the client's second message. The first message it does not answer loads the SDK
    (some 0.5 s) and hands it the conversation: the lines the SDK must have seen replayed
    (its answer to `initialize` is dropped), then that message, then the rest. Any other first
    line goes to the SDK untouched."""
    with _wire() as (wire_in, wire_out):
        searching = Searching(ws)
        first, early = _answer_first_line(wire_in, wire_out)
        seen = [first]
        if early is not None:
            server = EarlyServer(ws, searching, allow_write=allow_write)
            while True:
                line = _bounded_line(wire_in)
                if not line:
                    return  # the client closed the conversation
                searching.start()
                reply, keep = server.reply(line)
                if reply is None or keep:
                    seen.append(line)
                if reply is None:
                    break
                if reply:
                    wire_out.write((json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
                    wire_out.flush()
        log.debug("the SDK loads for %r", seen[-1][:80])
        sdk = _load_server(ws, searching, allow_write=allow_write)

        import anyio
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            # anyio reads the file with readline alone (AsyncFile.__aiter__), which _Replayed has
            replayed: Any = _Replayed(wire_in, seen)
            stdin, stdout = anyio.wrap_file(replayed), anyio.wrap_file(_Answered(wire_out, early))
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):
                await sdk.run(read_stream, write_stream, sdk.create_initialization_options())

        log.info("serving %s over stdio (write: %s)", ws.root, allow_write)
        anyio.run(run)

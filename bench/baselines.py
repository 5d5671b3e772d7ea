"""The baselines, and the warm-search workers, each run by bench/run.py as its own process.

A baseline is what a user could do without wikimem, measured on the same files in
the same run, so a figure is a ratio that survives a noisy machine:

    python bench/baselines.py index RAW_DIR INDEX_DIR     # plain whoosh index of the raw files
    python bench/baselines.py query INDEX_DIR "question"  # one cold plain whoosh query
    python bench/baselines.py update INDEX_DIR RAW_DIR FILE  # one changed or new file into that index
    python bench/baselines.py walk RAW_DIR                # walk and stat every file: a no-op's floor
    python bench/baselines.py read WIKI_DIR               # read every page: a whole-wiki check's floor
    python bench/baselines.py warm-whoosh INDEX_DIR QUERIES.json N
    python bench/baselines.py warm-wikimem ROOT QUERIES.json N
    python bench/baselines.py warm-mcp ROOT QUERIES.json N

Only the standard library is imported at the top: a cold baseline pays for exactly
the imports it needs (whoosh, and pypdf for PDF text), as a cold `wikimem` process does.
The warm workers print one JSON document: {"latencies_ms": [...], ...}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# plain whoosh gets extracted text for PDFs (indexing their bytes would cripple it) and the
# raw text of everything else: no parsing, no cleaning, which is the point of a baseline
TEXT_LIMIT = 10_000_000


def raw_files(raw: Path) -> list[Path]:
    return sorted(p for p in raw.rglob("*") if p.is_file() and not p.name.startswith("."))


def file_text(path: Path) -> str:
    if path.suffix.lower() == ".pdf":
        from pypdf import PdfReader

        try:
            return "\n".join((page.extract_text() or "") for page in PdfReader(str(path)).pages)
        except Exception:  # noqa: BLE001 - an unreadable PDF is skipped by the baseline, as by wikimem
            return ""
    return path.read_bytes()[:TEXT_LIMIT].decode("utf-8", errors="replace")


def build_index(raw: Path, index_dir: Path) -> int:
    """One document per raw file: path (stored) and content, whoosh's default analyzer."""
    from whoosh import index
    from whoosh.fields import ID, TEXT, Schema

    index_dir.mkdir(parents=True, exist_ok=True)
    ix = index.create_in(str(index_dir), Schema(path=ID(stored=True, unique=True), content=TEXT))
    writer = ix.writer()
    count = 0
    for file in raw_files(raw):
        writer.add_document(path=file.relative_to(raw).as_posix(), content=file_text(file))
        count += 1
    writer.commit()
    return count


def update_index(index_dir: Path, raw: Path, file: Path) -> None:
    """One file of raw/ read again into a plain index (added, or in place of its document)."""
    from whoosh import index

    writer = index.open_dir(str(index_dir)).writer()
    writer.update_document(path=file.relative_to(raw).as_posix(), content=file_text(file))
    writer.commit()


def open_searcher(index_dir: Path) -> Any:
    from whoosh import index

    return index.open_dir(str(index_dir)).searcher()


def query(searcher: Any, question: str, limit: int = 10) -> list[str]:
    """BM25 with OR grouping (an AND of every word of a question usually finds nothing)."""
    from whoosh.qparser import OrGroup, QueryParser

    # a plain index has "content"; on wikimem's own index (the same-index baseline) the text is "body"
    field = "content" if "content" in searcher.schema else "body"
    if not searcher.schema[field].supports("positions"):
        # wikimem's index keeps no word positions (it checks a quoted phrase against the stored
        # text): whoosh cannot run a phrase query on it, so quotes are read as plain words
        question = question.replace('"', " ")
    parsed = QueryParser(field, searcher.schema, group=OrGroup).parse(question)
    return [hit["path"] for hit in searcher.search(parsed, limit=limit)]


def walk(raw: Path) -> int:
    """What any change detector must at least do: list raw/ and stat every file."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(raw):
        dirnames.sort()
        for name in filenames:
            os.stat(os.path.join(dirpath, name))
            count += 1
    return count


def read_all(folder: Path) -> int:
    """Read and decode every Markdown file under a folder: the floor of any whole-wiki check."""
    count = 0
    for file in sorted(folder.rglob("*.md")):
        file.read_bytes().decode("utf-8", errors="replace")
        count += 1
    return count


BUDGET_S = 60.0  # a slow search must not hold the whole run: stop timing after this long


def _timed(fn: Any, queries: list[str], n: int) -> list[float]:
    """Latencies of up to n queries (at least 5), within BUDGET_S seconds after one warm-up."""
    fn(queries[0])  # warm: the first call opens files and fills caches (and may build the index)
    out: list[float] = []
    deadline = time.perf_counter() + BUDGET_S
    for i in range(n):
        started = time.perf_counter()
        fn(queries[i % len(queries)])
        out.append((time.perf_counter() - started) * 1000)
        if len(out) >= 5 and started > deadline:
            break
    return out


def warm_whoosh(index_dir: Path, queries: list[str], n: int) -> dict[str, Any]:
    searcher = open_searcher(index_dir)
    return {"latencies_ms": _timed(lambda q: query(searcher, q), queries, n)}


def warm_wikimem(root: Path, queries: list[str], n: int) -> dict[str, Any]:
    """In-process search as a long-lived caller (the MCP server, the daemon) holds it."""
    from wikimem import search
    from wikimem.workspace import Workspace

    ws = Workspace.at(root)
    engine = search.engine(ws, fresh_within=60.0)
    via = "search.engine(ws, fresh_within=60).passages"
    return {"latencies_ms": _timed(lambda q: engine.passages(q, 10), queries, n), "via": via}


def warm_mcp(root: Path, queries: list[str], n: int) -> dict[str, Any]:
    """The search tool called over stdio MCP through the official client, after one warm call."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(
            command=str(Path(sys.executable).with_name("wikimem")),
            args=["mcp", "--root", str(root)],
            env={k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")},
        )
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = (await session.list_tools()).tools
                    tool = next((t for t in tools if t.name == "search"), None) or next(
                        (t for t in tools if "search" in t.name), None)
                    if tool is None:
                        return {"error": "the MCP server has no search tool: " + ", ".join(t.name for t in tools)}
                    # mcp 2.x names it input_schema; 1.x inputSchema
                    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {}
                    props = schema.get("properties", {})
                    key = next((k for k in ("query", "q", "text", "question") if k in props), None) or next(
                        iter(props), "query")
                    await session.call_tool(tool.name, {key: queries[0]})
                    out: list[float] = []
                    deadline = time.perf_counter() + BUDGET_S
                    for i in range(n):
                        started = time.perf_counter()
                        result = await session.call_tool(tool.name, {key: queries[i % len(queries)]})
                        out.append((time.perf_counter() - started) * 1000)
                        if getattr(result, "is_error", False) or getattr(result, "isError", False):
                            return {"error": f"search tool returned an error: {str(result.content)[:200]}"}
                        if len(out) >= 5 and started > deadline:
                            break
                    return {"latencies_ms": out, "via": f"tool {tool.name}({key}=...)"}

    return asyncio.run(go())


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "index":
        count = build_index(Path(args[0]), Path(args[1]))
        print(json.dumps({"documents": count}))
    elif cmd == "query":
        print(json.dumps({"results": query(open_searcher(Path(args[0])), args[1])}))
    elif cmd == "update":
        update_index(Path(args[0]), Path(args[1]), Path(args[2]))
        print(json.dumps({"updated": args[2]}))
    elif cmd == "read":
        print(json.dumps({"files": read_all(Path(args[0]))}))
    elif cmd == "walk":
        print(json.dumps({"files": walk(Path(args[0]))}))
    elif cmd in ("warm-whoosh", "warm-wikimem", "warm-mcp"):
        target, queries, n = Path(args[0]), json.loads(Path(args[1]).read_text()), int(args[2])
        fn = {"warm-whoosh": warm_whoosh, "warm-wikimem": warm_wikimem, "warm-mcp": warm_mcp}[cmd]
        print(json.dumps(fn(target, queries, n)))
    else:
        print(f"unknown baseline {cmd!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

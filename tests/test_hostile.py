"""A hostile workspace (issue 38): links and special files where wikimem writes and serves, hard
links to files outside, files that try to flood an agent. Each attack either does nothing or is
refused with one line, and nothing outside the workspace is read, written or deleted."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conftest import snapshot, write
from wikimem.compiler import compile_workspace
from wikimem.config import load_settings
from wikimem.workspace import Workspace

PRODUCT = {
    "product/index.md": "# Product\n\nThe product's documentation.\n",
    "product/install.md": "# Installation\n\nProduct supports Python 3.10 and newer.\n",
    "product/changes.md": "# Changes\n\n## Version 2.0\n\nReleased 2025-01-01\n\n- Drop support for Python 3.9.\n\n"
                          "## Version 1.0\n\nReleased 2024-01-01\n\n- Drop support for Python 3.7.\n",
    "product/guide.md": "# Guide\n\nHow the product's guide reads.\n",
    "product/faq.md": "# Faq\n\nHow the product's faq reads.\n",
}


def compile_(ws: Workspace):  # type: ignore[no-untyped-def]
    return compile_workspace(ws, load_settings(ws.root, environ={}))


def documents(tmp_path: Path) -> Path:
    """A person's folder outside the workspace, with their own files."""
    folder = tmp_path / "Documents"
    folder.mkdir()
    for name in ("taxes.md", "diary.md", "plans.md"):
        (folder / name).write_text(f"# {name}\n\nMy own {name} text.\n")
    return folder


def test_a_linked_facts_folder_is_neither_written_into_nor_emptied(ws: Workspace, tmp_path: Path) -> None:
    """A teammate commits wiki/facts as a link to ../../Documents. Before: the compile wrote
    its timelines there and deleted every other *.md of the folder (3 of 3). Now nothing there
    is touched, the rest of the wiki compiles, and the compile says why in one line."""
    for name, text in PRODUCT.items():
        write(ws, name, text)
    outside = documents(tmp_path)
    before = snapshot(outside)
    (ws.wiki / "facts").symlink_to(outside, target_is_directory=True)
    report = compile_(ws)
    assert snapshot(outside) == before
    assert "raw/product/install.md" in report.compiled and report.failed == []
    said = [w for w in report.warnings if "wiki/facts" in w]
    assert len(said) == 1 and "symbolic link" in said[0] and "\n" not in said[0]
    assert (ws.wiki / "sources").is_dir() and not (ws.wiki / "sources").is_symlink()
    # nor is anything there read: not listed in index.md, not found by search
    from wikimem import search

    assert "diary" not in (ws.wiki / "index.md").read_text()
    assert not [h for h in search.engine(ws).passages("my own diary text", limit=5) if "diary" in h.hit.path]


def test_a_persons_own_note_in_facts_is_never_deleted(ws: Workspace) -> None:
    """Before: a compile deleted every *.md in wiki/facts/ that was not a current timeline,
    a person's own note included. Now only wikimem's timelines go."""
    for name, text in PRODUCT.items():
        write(ws, name, text)
    compile_(ws)
    mine = ws.wiki / "facts" / "my-notes.md"
    mine.write_text("# My notes\n\nThe product's support window is my concern.\n")
    timelines = [p for p in (ws.wiki / "facts").glob("*.md") if p.name.startswith("product-")]
    assert timelines
    for name in PRODUCT:
        (ws.raw / name).unlink()
    write(ws, "other.md", "# Other\n\nNothing about versions.\n")
    compile_(ws)
    assert mine.read_text().startswith("# My notes")
    assert not [p for p in timelines if p.exists()]  # wikimem's own timelines did go


@pytest.mark.parametrize("name", ["log.md", "index.md"])
def test_linked_log_and_index_are_never_written_through(ws: Workspace, tmp_path: Path, name: str) -> None:
    """Before: the compile appended its log entries to the file a linked log.md points at (and
    wrote index.md's catalog into a linked index.md's target). Now the target is untouched and
    the compile says so in one line; the pages are written."""
    outside = documents(tmp_path)
    target = outside / "diary.md"
    before = target.read_bytes()
    (ws.wiki / name).unlink()
    (ws.wiki / name).symlink_to(target)
    write(ws, "a.md", "# A note\n\nThe canary release took 5% of traffic on 2026-03-01.\n")
    report = compile_(ws)
    assert target.read_bytes() == before
    assert report.compiled == ["raw/a.md"]
    assert (ws.wiki / "sources" / "a.md").is_file()
    said = [w for w in report.warnings if f"wiki/{name}" in w]
    assert len(said) == 1 and "\n" not in said[0]


def test_a_linked_agents_md_is_served_to_no_agent_nor_sent_to_the_api(ws: Workspace, tmp_path: Path) -> None:
    """Before: MCP's wiki://AGENTS.md resource served the file a linked AGENTS.md points at, and
    the anthropic backend put it in its prompt. Now neither reads it."""
    from wikimem import mcp_server
    from wikimem.backends.anthropic import system_prompt
    from wikimem.errors import UnsafePath

    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe password is hunter2.\n")
    (ws.wiki / "AGENTS.md").unlink()
    (ws.wiki / "AGENTS.md").symlink_to(secret)
    with pytest.raises(UnsafePath, match="symbolic link"):
        mcp_server.resource_text(ws, "AGENTS.md")
    prompt = "".join(part["text"] for part in system_prompt(ws))
    assert "hunter2" not in prompt
    with pytest.raises(Exception, match="outside"):  # as before: the read tool refused it
        mcp_server.read_file(ws, "wiki/AGENTS.md")


def test_the_agents_md_resource_is_served_over_mcp_as_before(ws: Workspace) -> None:
    from wikimem import mcp_server

    assert mcp_server.resource_text(ws, "AGENTS.md") == (ws.wiki / "AGENTS.md").read_text()


def _fifo(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def test_a_fifo_in_the_wiki_blocks_nothing(ws: Workspace) -> None:
    """A FIFO where a page, index.md or AGENTS.md stands: a read of it would wait forever for a
    writer. Compile, MCP and the memory tool refuse it with one line and go on."""
    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

    from wikimem import mcp_server
    from wikimem.memory_tool import WikiMemoryTool

    write(ws, "a.md", "# A note\n\nThe canary release took 5% of traffic on 2026-03-01.\n")
    compile_(ws)
    _fifo(ws.wiki / "sources" / "a.md")
    _fifo(ws.wiki / "AGENTS.md")
    write(ws, "a.md", "# A note\n\nThe canary release took 10% of traffic on 2026-03-02.\n")
    outcome: dict[str, object] = {}

    def attacks() -> None:
        outcome["compile"] = compile_(ws)
        for what, call in (("read", lambda: mcp_server.read_file(ws, "wiki/sources/a.md")),
                           ("resource", lambda: mcp_server.resource_text(ws, "AGENTS.md")),
                           ("view", lambda: WikiMemoryTool(ws).view(BetaMemoryTool20250818ViewCommand(
                               command="view", path="/memories/sources/a.md")))):
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - each is expected to refuse
                outcome[what] = str(exc)

    worker = threading.Thread(target=attacks, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a FIFO blocked a reader"
    for what in ("read", "resource", "view"):
        assert "not a regular file" in str(outcome[what]) and "\n" not in str(outcome[what])
    report = outcome["compile"]
    assert any("sources/a.md" in w and "not a regular file" in w for w in report.warnings)  # type: ignore[attr-defined]


def test_a_hard_link_to_an_outside_file_is_not_served_to_agents(ws: Workspace, tmp_path: Path) -> None:
    """Before: MCP read and the memory tool's view served a file of wiki/ (or raw/) that is a
    hard link to a file outside the workspace. Now a file with more than one link is refused,
    with one line saying why."""
    from anthropic.lib.tools import ToolError
    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

    from wikimem import mcp_server
    from wikimem.errors import WikimemError
    from wikimem.memory_tool import WikiMemoryTool

    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe password is hunter2.\n")
    os.link(secret, ws.wiki / "sources" / "leak.md")
    os.link(secret, ws.raw / "leak.md")
    tool = WikiMemoryTool(ws)
    for path in ("wiki/sources/leak.md", "raw/leak.md"):
        with pytest.raises(WikimemError, match="hard links") as refused:
            mcp_server.read_file(ws, path)
        assert "hunter2" not in str(refused.value)
    for path in ("/memories/sources/leak.md", "/memories/raw/leak.md"):
        with pytest.raises(ToolError, match="hard links"):
            tool.view(BetaMemoryTool20250818ViewCommand(command="view", path=path))


def test_the_memory_tools_view_is_bounded_in_bytes(ws: Workspace) -> None:
    """Before: the view of a 7.9 MB file of blank lines came back as 70 MB (every line
    numbered). Now a view is at most VIEW_MAX_BYTES and says how to go on."""
    from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

    from wikimem import memory_tool

    write(ws, "blank.txt", "\n" * 7_900_000)
    tool = memory_tool.WikiMemoryTool(ws)
    shown = tool.view(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/raw/blank.txt"))
    assert len(shown.encode()) <= memory_tool.VIEW_MAX_BYTES + 500
    assert "view_range" in shown.splitlines()[-1]
    ranged = tool.view(BetaMemoryTool20250818ViewCommand(command="view", path="/memories/raw/blank.txt",
                                                         view_range=[7_000_000, 7_000_002]))
    assert ranged.splitlines()[1:] == [f"{n:>6}\t" for n in range(7_000_000, 7_000_003)]


# --- .wikimemignore as an attack ---------------------------------------------------------------

_ATOMS = ["a", "b", "ab", "*", "**", "?", "[ab]", "[a-c]", "/", "\\*", ".", "!", "x"]
_NAMES = ["a", "b", "ab", "ba", "aa", "a.b", "*", "x", "abc"]


def _lines_and_paths():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    pattern = st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=7).map("".join)
    path = st.tuples(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5), st.booleans()).map(
        lambda t: "/".join(t[0]) + ("/" if t[1] else ""))
    return st.tuples(st.lists(pattern, min_size=1, max_size=4), st.lists(path, min_size=1, max_size=6))


def test_ignore_patterns_decide_as_gitignore_does() -> None:
    """ignore.py against pathspec's GitIgnoreSpec (the reference it replaced) on generated
    patterns and paths: the same verdict, by the same pattern. Left out of the generator: a
    negated bracket expression (`[!a]`), which pathspec lets match the folder separator and git
    does not (ignore.py follows git)."""
    import pathspec
    from hypothesis import given, settings

    from wikimem import ignore

    @settings(max_examples=500, deadline=None)
    @given(_lines_and_paths())
    def same(case: tuple[list[str], list[str]]) -> None:
        lines, paths = case
        try:
            reference = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # noqa: BLE001 - pathspec refuses the whole file; ignore.py leaves out the line
            return
        mine = ignore.parse(lines)
        quick = mine.any_of()
        for path in paths:
            ref = reference.check_file(path)
            include, index = mine.check(path)
            ref_pattern = reference.patterns[ref.index].pattern if ref.index is not None else None
            assert (include, mine.patterns[index].pattern if index is not None else None) == (ref.include, ref_pattern)
            if include is not None:
                assert quick is not None and quick.match(path)

    same()


def test_an_ignore_pattern_that_backtracks_is_matched_in_linear_time(ws: Workspace) -> None:
    """`*a*a*...*b` and a file with a 46-letter name: before, compile, search, status and the
    daemon hung (the pattern compiled to a regular expression that backtracks exponentially).
    No time is asserted: were matching exponential again, this test would hang."""
    from wikimem import ignore, search

    hostile = "*a" * 16 + "*b"
    write(ws, ".wikimemignore", hostile + "\n" + "/a" + "*a" * 20 + "/**/" + "*a" * 20 + "/x\n")
    write(ws, "a" * 46 + ".md", "# A long name\n\nThe canary release took 5% of traffic.\n")
    write(ws, "/".join(["a" * 40] * 30) + "/deep.md", "# Deep\n\nA canary release, deep down.\n")
    write(ws, "a" * 20 + "b", "Ignored by the pattern.\n")
    report = compile_(ws)
    assert sorted(report.compiled) == ["raw/" + "/".join(["a" * 40] * 30) + "/deep.md", "raw/" + "a" * 46 + ".md"]
    assert report.ignored["by_rule"] == {f"raw/.wikimemignore: {hostile}": 1}
    assert search.engine(ws).passages("canary", limit=5)
    too_long = ignore.parse(["*a" * 600 + "b"], where="raw/.wikimemignore")
    assert too_long.patterns == [] and "more than 1000 characters" in too_long.problems[0]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge", "link"])
def test_an_ignore_file_that_is_not_a_small_regular_file_is_refused_in_one_line(ws: Workspace, kind: str) -> None:
    """A .wikimemignore that is a FIFO (before: compile blocked for good), a link to /dev/zero
    (before: MemoryError), a file of 50 MB or a link: not read, refused in one line, and the
    compile goes on with the default rules."""
    from wikimem.raw_tree import scan

    target = ws.raw / ".wikimemignore"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(target, "wb") as handle:
            handle.truncate(50_000_000)
    else:
        write(ws, "rules.txt", "*.md\n")
        target.symlink_to(ws.raw / "rules.txt")
    write(ws, "a.md", "# A note\n\nThe canary release took 5% of traffic.\n")
    write(ws, "logo.png", b"\x89PNG\r\n")
    outcome: dict[str, object] = {}
    worker = threading.Thread(target=lambda: outcome.update(scan=scan(ws), report=compile_(ws)), daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the ignore file blocked the walk"
    report = outcome["report"]
    said = [reason for path, reason in report.skipped if path == "raw/.wikimemignore"]  # type: ignore[attr-defined]
    assert len(said) == 1 and "\n" not in said[0] and "rules are not used" in said[0]
    assert "raw/a.md" in report.compiled  # type: ignore[attr-defined]
    assert report.ignored["by_rule"] == {"default: *.png": 1}  # type: ignore[attr-defined]


def test_the_memory_tool_writes_no_dotfile_into_the_inbox(ws: Workspace) -> None:
    """Before: an agent could create /memories/inbox/.wikimemignore (a prompt-injected one, any
    of the attacks above). Now no name starting with a dot is written, renamed to or deleted."""
    from anthropic.lib.tools import ToolError
    from anthropic.types.beta import (
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818RenameCommand,
    )

    from wikimem.memory_tool import WikiMemoryTool

    tool = WikiMemoryTool(ws)
    for path in ("/memories/inbox/.wikimemignore", "/memories/inbox/sub/.wikimemignore", "/memories/inbox/.x/a.md"):
        with pytest.raises(ToolError, match="dotfiles"):
            tool.create(BetaMemoryTool20250818CreateCommand(command="create", path=path, file_text="*a" * 16 + "*b\n"))
    tool.create(BetaMemoryTool20250818CreateCommand(command="create", path="/memories/inbox/note.md", file_text="# Note\n"))
    with pytest.raises(ToolError, match="dotfiles"):
        tool.rename(BetaMemoryTool20250818RenameCommand(command="rename", old_path="/memories/inbox/note.md",
                                                        new_path="/memories/inbox/.wikimemignore"))
    assert not any(p.name.startswith(".") for p in (ws.raw / "inbox").rglob("*"))


# --- a coarse clock hides no edit ----------------------------------------------------------------


@pytest.mark.parametrize(("mtime", "ctime", "seen", "trusted"), [
    (10**18, 10**18 + 5, 10**18 + 10**9, True),  # fine-grained times, looked at long after
    (10**18, 10**18 + 5, 10**18 + 6, False),  # looked at within the clock tick of its change
    (1_001 * 10**9, 1_001 * 10**9, 1_001 * 10**9 + 600_000_000, False),  # whole seconds: within that second
    (1_001 * 10**9, 1_001 * 10**9, 1_002 * 10**9 + 1, True),  # a second after
    (2_000 * 10**9, 2_000 * 10**9, 2_001 * 10**9 + 1, False),  # two-second times (FAT): still within
    (2_000 * 10**9, 2_000 * 10**9, 2_002 * 10**9 + 1, True),
])
def test_a_recorded_source_is_trusted_by_its_times_only_when_they_can_tell(mtime: int, ctime: int, seen: int,
                                                                         trusted: bool) -> None:
    from wikimem.state import SourceRow

    row = SourceRow("raw/a.md", "x", 10, mtime, None, "compiled", None, 0, (), ctime, seen)
    assert row.same_file(10, mtime, ctime) is trusted
    assert not row.same_file(10, mtime, ctime + 1)  # ctime moved: never trusted
    assert not row.same_file(11, mtime, ctime)


def _past_racy(ws: Workspace) -> None:
    from conftest import past_racy_window

    past_racy_window(ws)


def test_restoring_the_mtime_hides_no_edit(ws: Workspace) -> None:
    """`touch -r` (or a tool that keeps times) after an edit of the same size: before, the
    compile never saw it (size and mtime were compared, ctime never) and search served the
    old text. Now ctime tells, and both see the new text."""
    from wikimem import search

    path = write(ws, "a.md", "# Alpha\n\nThe canary release takes 11 minutes.\n")
    _past_racy(ws)
    compile_(ws)
    assert search.engine(ws).passages("canary minutes", limit=3)
    before = path.stat()
    path.write_text("# Alpha\n\nThe canary release takes 42 minutes.\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    report = compile_(ws)
    assert report.compiled == ["raw/a.md"]
    assert "42 minutes" in (ws.wiki / "sources" / "a.md").read_text()
    hits = search.engine(ws).passages("canary minutes", limit=5)
    assert any("42 minutes" in h.hit.snippet for h in hits) and not any("11 minutes" in h.hit.snippet for h in hits)


@pytest.fixture
def second_granular(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A workspace on a file system that keeps times to the second (ext4 with 128-byte inodes,
    as ext3, HFS+ and many network shares do), mounted from an image; skipped where this
    process may not mount one."""
    import shutil
    import subprocess

    from wikimem.init import init_workspace

    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        pytest.skip("mounting a second-granular file system needs root and mkfs.ext4")
    image, mount = tmp_path / "fs.img", tmp_path / "mnt"
    mount.mkdir()
    with open(image, "wb") as handle:
        handle.truncate(32 << 20)
    made = subprocess.run(["mkfs.ext4", "-q", "-I", "128", "-F", str(image)], capture_output=True)
    mounted = made.returncode == 0 and subprocess.run(["mount", "-o", "loop", str(image), str(mount)],
                                                      capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("no loop mount here")
    try:
        workspace = Workspace.at(mount / "ws")
        init_workspace(workspace)
        yield workspace
    finally:
        from wikimem import search

        for engine in list(search.ENGINES.values()):  # their open index files would keep it busy
            engine.close()
        search.ENGINES.clear()
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.mark.slow  # up to 20 compiles, one a second, until an edit falls in its compile's second
def test_an_edit_within_the_second_of_a_compile_is_compiled_on_a_coarse_clock(second_granular: Workspace) -> None:
    """On a file system with one-second times, an edit of the same size made in the second of
    the compile that read the file leaves size, mtime and ctime as they were. Before, it was
    never compiled and search kept serving the old text; now the file was racily clean when
    recorded, so its content decides."""
    import time

    from wikimem import search

    ws = second_granular
    for attempt in range(20):  # the edit must fall in the same second as the first write
        path = write(ws, f"a{attempt}.md", "# Alpha\n\nThe canary release takes 11 minutes.\n")
        first = path.stat()
        compile_(ws)
        search.engine(ws).passages("canary", limit=3)  # the index records it too
        path.write_text("# Alpha\n\nThe canary release takes 42 minutes.\n")
        if path.stat().st_ctime_ns == first.st_ctime_ns and path.stat().st_mtime_ns == first.st_mtime_ns:
            break
        time.sleep(1.0 - (time.time() % 1.0))  # start the next try at the top of a second
    else:
        pytest.skip("no edit fell within the second of its compile")
    report = compile_(ws)
    assert f"raw/a{attempt}.md" in report.compiled
    hits = search.engine(ws).passages("canary minutes", limit=10)
    mine = [h for h in hits if h.hit.path == f"raw/a{attempt}.md"]
    assert mine and "42 minutes" in mine[0].hit.snippet


def test_owned_answers_each_case_with_the_path_or_one_line_naming_what_is_in_the_way(tmp_path: Path) -> None:
    """`owned` checks every page a compile writes, on strings (it made a Path per folder on the
    way): whatever spelling of wiki/ it is given, a page in a missing folder is fine, and a link,
    a FIFO, a folder where a file goes, a file where a folder goes or a path outside is refused
    with one line naming it."""
    from wikimem.errors import UnsafePath
    from wikimem.workspace import owned

    outside = documents(tmp_path)
    wiki = tmp_path / "ws" / "wiki"
    (wiki / "sources" / "deep").mkdir(parents=True)
    (wiki / "sources" / "a.md").write_text("# A\n")
    (wiki / "linked").symlink_to(outside, target_is_directory=True)
    (wiki / "sources" / "link.md").symlink_to(wiki / "sources" / "a.md")
    os.mkfifo(wiki / "fifo.md")
    (tmp_path / "ws" / "wikiX").mkdir()
    expected = {
        "sources/a.md": wiki / "sources" / "a.md",
        "sources/new/b.md": wiki / "sources" / "new" / "b.md",
        "sources/./deep/../a.md": wiki / "sources" / "a.md",
        "linked/diary.md": "wiki/linked is a symbolic link",
        "sources/link.md": "wiki/sources/link.md is a symbolic link",
        "fifo.md": "wiki/fifo.md is not a regular file",
        "sources/deep": "wiki/sources/deep is a folder, not a file",
        "sources/a.md/c.md": "wiki/sources/a.md is not a folder",
        "../wikiX/c.md": "is not inside",
    }
    for base in (wiki, Path(str(wiki) + "/"), Path(os.path.relpath(wiki)), tmp_path / "ws" / "." / "wiki"):
        for rel, want in expected.items():
            if isinstance(want, Path):
                assert owned(base, base / rel) == Path(os.path.normpath(base / rel)), (base, rel)
                assert owned(base, base / rel).resolve() == want.resolve()
            else:
                with pytest.raises(UnsafePath) as caught:
                    owned(base, base / rel)
                assert want in str(caught.value) and "\n" not in str(caught.value), (base, rel, caught.value)
    assert owned(wiki, wiki / "sources", folder=True) == wiki / "sources"
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        owned(wiki, wiki / "linked", folder=True)


def test_a_page_edit_that_climbs_out_or_runs_through_a_link_is_refused_and_nothing_outside_is_touched(
        ws: Workspace, tmp_path: Path) -> None:
    """The compile's page writer checks a page's path as written (empty, absolute, `..` out of
    wiki/) and then every folder on the way with `owned`, without resolving it: an edit a
    backend proposes outside wiki/ or through a link is refused with one line; the others are
    written."""
    from wikimem.backends import PageEdit
    from wikimem.compiler import CompileReport, PageWriter, _bucket
    from wikimem.state import State, WriteJournal

    outside = documents(tmp_path)
    before = snapshot(outside)
    (ws.wiki / "linked").symlink_to(outside, target_is_directory=True)
    state = State(ws.state_db)
    report = CompileReport(backend="offline")
    writer = PageWriter(ws, state, {}, report)
    bucket = _bucket()
    for path in ("../escape.md", "sources/../../escape.md", str(tmp_path / "abs.md"), "", "linked/diary.md",
                 "sources/kept.md"):
        writer.apply(PageEdit(path, "# A page\n\nIts text.\n", "source", None), bucket)
    writer.write(WriteJournal(ws.state_dir))
    state.close()
    assert bucket["created"] == ["sources/kept.md"] and (ws.wiki / "sources" / "kept.md").is_file()
    assert snapshot(outside) == before
    assert not (ws.root / "escape.md").exists() and not (tmp_path / "abs.md").exists()
    said = [w for w in report.warnings if w.startswith("refused edit")]
    assert len(said) == 5 and all("\n" not in w for w in said), said
    assert sum("points outside wiki/" in w for w in said) == 2
    assert any("is absolute" in w for w in said) and any("invalid path" in w for w in said)
    assert any("wiki/linked is a symbolic link" in w for w in said)

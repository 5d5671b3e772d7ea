"""Compiled regular expressions, and the code of generated functions, kept from one process to
the next.

Every wikimem process compiles the same few hundred patterns, ours as they are first used and
the libraries' as they load: about 50 ms of a 0.4 s compile of one changed file, and 9 ms of a
0.1 s search. `re` compiles in two steps: it parses a pattern, then generates the code its
engine runs, a list of numbers that depends only on the pattern, its flags and the Python
running it. The last step (`_sre.compile`) turns that code into a pattern object.

Each class made with `dataclasses` is given functions (__init__, __repr__, __eq__, ...) that
`dataclasses` writes as Python source and compiles with `exec`: 51 classes cost a compile of one
changed file 30 ms, 80% of it compiling that source, and a search 5 ms. The code Python compiles
from a source text depends only on that text and the Python running it (its build, its -O level).

This keeps the code of each pattern, and the code compiled from each source text `dataclasses`
executes, in a file of the user's cache folder ($XDG_CACHE_HOME/wikimem, else ~/.cache/wikimem),
one file per command (a search compiles a fifth of what a compile does, and reading a compile's
patterns cost a search more than it saved), Python build and engine version, and makes a
pattern found there with that last step alone, and a class's functions from the code found
there. Each process makes the first pattern it compiles both ways, and goes on (making the
others the one way, keeping them) only if the two are equal (`==` compares the code). Where
anything here fails (another Python's `re`, an unreadable file, a full disk), patterns and
functions are compiled as always.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import marshal
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

# Some patterns are built from text that changes (a set joined in its iteration order, which
# differs from one process to the next; words of the documents read), and each process adds its
# own. Every write of the file is numbered, and a pattern that none of the last KEEP_WRITES
# writers made goes; past MAX_KEPT, those made longest ago go first. The file stays near what
# the processes of the day use: reading it is a cost every process pays (1 MB: 4 ms).
KEEP_WRITES = 16
MAX_KEPT = 1_500

# the entries, by key: a pattern's (pattern, flags) -> the parts of its code (_parts); a source
# text's (text, CODE) -> the code compiled from it
CODE = -1  # no pattern's flags
_kept: dict[tuple[str | bytes, int], Any] = {}
_new: dict[tuple[str | bytes, int], Any] = {}
_used: set[tuple[str | bytes, int]] = set()  # the kept entries this process used
_last: dict[tuple[str | bytes, int], int] = {}  # a kept entry -> the last write that used it
_writes = [0]  # the number of the file's last write, as read
# whether a pattern made by the two steps here (_parts, _make) equalled the one `re` compiled:
# None before the first pattern this process compiles, True when it did (then every pattern is
# made that way), False when it did not or could not (then `re` compiles each, and none is kept)
_checked: list[bool | None] = [None]
_installed = False
_loaded = False  # the file is read when a pattern is first compiled: a process that compiles
# none never reads it


def cache_file(kind: str = "") -> Path | None:
    """The file for a kind of process (the command it runs) on this Python build and its regex
    engine, or None without _sre's version."""
    try:
        import _sre

        engine = f"{_sre.MAGIC}-{_sre.CODESIZE}"
    except (ImportError, AttributeError):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home to be found ("~" left as it is): nowhere to keep them
        return None
    name = "".join(c for c in kind.lower() if c.isascii() and c.isalpha())[:20] or "other"
    return Path(base) / "wikimem" / f"re-{sys.implementation.cache_tag}-{engine}-{name}.marshal"


def install(kind: str = "") -> None:
    """Compile patterns, and the functions `dataclasses` writes, from the kept code from now on
    in this process, and keep the new ones at its exit, in the file of its `kind` (the command
    it runs). Does nothing a second time, or where this Python's `re` is not the one this module
    reads (its compile in two steps, in re._compiler)."""
    global _installed
    if _installed:
        return
    _installed = True
    compiler = getattr(re, "_compiler", None)
    parser = getattr(re, "_parser", None)
    if compiler is None or parser is None or not all(
            hasattr(m, n) for m, n in ((compiler, "compile"), (compiler, "_code"), (parser, "parse"))):
        return
    path = cache_file(kind)
    if path is None:
        return
    original = compiler.compile

    def compile(p: Any, flags: int = 0) -> Any:
        global _loaded
        if not isinstance(p, (str, bytes)) or flags & re.DEBUG:
            return original(p, flags)
        if not _loaded:
            _loaded = True
            _read(path)
        key = (p, int(flags))
        kept = _kept.get(key)
        if kept is not None:
            try:
                made = _make(p, kept)
                _used.add(key)
                return made
            except Exception:  # noqa: BLE001 - a kept entry this engine refuses: compiled as always
                del _kept[key]
        if _checked[0]:
            # this process's first pattern came out of the two steps here as `re` makes it: the
            # rest are made the one way (a pattern compiled twice cost an MCP server's start 2 ms)
            with contextlib.suppress(Exception):  # compiled by `re` instead, and not kept
                parts = _parts(compiler, parser, p, int(flags))
                made = _make(p, parts)
                _new[key] = parts
                return made
            return original(p, flags)
        made = original(p, flags)
        if _checked[0] is None:
            _checked[0] = False
            with contextlib.suppress(Exception):  # not as `re` makes it: nothing is kept
                parts = _parts(compiler, parser, p, int(flags))
                if _make(p, parts) == made:
                    _new[key] = parts
                    _checked[0] = True
        return made

    compiler.compile = compile

    def run(source: Any, globals: Any = None, locals: Any = None) -> None:
        """`exec` as `dataclasses` calls it, on the source of a class's functions: the code compiled
        from that text as `exec` compiles it (no __future__ flag of the caller's: `dataclasses`
        has none), kept."""
        global _loaded
        if not isinstance(source, str):
            return exec(source, globals, locals)  # noqa: S102 - what dataclasses asked for
        if not _loaded:
            _loaded = True
            _read(path)
        key = (source, CODE)
        code = _kept.get(key)
        if code is not None:
            _used.add(key)
        else:
            code = _new[key] = builtins.compile(source, "<string>", "exec", dont_inherit=True)
        return exec(code, globals, locals)  # noqa: S102 - what dataclasses asked for

    import dataclasses

    # a name of its module, found before the builtin by the functions there that call `exec`
    setattr(dataclasses, "exec", run)  # noqa: B010 - mypy knows no `exec` there
    atexit.register(_save, path)


def _parts(compiler: Any, parser: Any, pattern: str | bytes, flags: int) -> tuple[Any, ...]:
    """What `re` passes to _sre.compile for the pattern, but the pattern itself: its two steps
    (re._compiler.compile) taken here, so the generated code can be kept."""
    tree = parser.parse(pattern, flags)
    code = compiler._code(tree, flags)
    groupindex = dict(tree.state.groupdict)
    indexgroup: list[str | None] = [None] * tree.state.groups
    for name, number in groupindex.items():
        indexgroup[number] = name
    # the code's opcodes are named int constants, which marshal does not write: plain ints
    return (int(flags | tree.state.flags), [int(c) for c in code], tree.state.groups - 1, groupindex, tuple(indexgroup))


def _make(pattern: str | bytes, parts: tuple[Any, ...]) -> Any:
    import _sre

    flags, code, groups, groupindex, indexgroup = parts
    return _sre.compile(pattern, flags, code, groups, groupindex, indexgroup)


def _read(path: Path) -> None:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return
    if (not isinstance(data, dict) or data.get("python") != _python() or not isinstance(data.get("patterns"), dict)
            or not isinstance(data.get("code"), dict) or not isinstance(data.get("last"), dict)
            or not isinstance(data.get("writes"), int)):
        return
    _kept.update(data["patterns"])
    _kept.update(((source, CODE), code) for source, code in data["code"].items()
                 if isinstance(source, str) and isinstance(code, types.CodeType))
    _last.update(data["last"])
    _writes[0] = data["writes"]


def _save(path: Path) -> None:
    """At the process's exit: write the kept patterns with its new ones, in one replace (a
    process that reads the file meanwhile finds the old one or the new one, never half)."""
    if not _new:
        return
    writes = _writes[0] + 1
    last = {key: n for key, n in _last.items() if key in _kept and n > writes - KEEP_WRITES}
    last.update((key, writes) for key in (*_used, *_new))
    if len(last) > MAX_KEPT:
        last = dict(sorted(last.items(), key=lambda item: -item[1])[:MAX_KEPT])
    entries = {key: _new[key] if key in _new else _kept[key] for key in last}
    with contextlib.suppress(Exception):  # derived: the next process compiles what this one did not keep
        from .workspace import atomic_write  # loaded here: most processes write nothing

        atomic_write(path, marshal.dumps({
            "python": _python(), "writes": writes, "last": last,
            "patterns": {key: entry for key, entry in entries.items() if key[1] != CODE},
            "code": {key[0]: entry for key, entry in entries.items() if key[1] == CODE},
        }), durable=False)


def _python() -> str:
    """The Python build a file's entries were made by, with its optimization level (-O), which
    the code compiled from a source text depends on."""
    return f"{sys.version} -O{sys.flags.optimize}"

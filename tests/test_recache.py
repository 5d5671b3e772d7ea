"""wikimem/recache.py: patterns compiled in one process are made from their kept code in the next,
and match exactly as `re` compiles them."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

from wikimem import recache

SCRIPT = r'''
import json, re, sys, time
from wikimem import recache
recache.install("test")
made = {}
patterns = [(r"(?P<year>\d{4})-(?P<month>\d\d)", 0), (r"^\s*#+\s+(.*?)\s*#*$", re.M), (r"caf\u00e9|na[iï]ve", re.I),
            (rb"\x00+(?P<tail>[a-z]*)", 0), (r"(a)(b)?(?:c)", re.X | re.S)]
for p, f in patterns:
    compiled = re.compile(p, f)
    made[repr((p, int(f)))] = [compiled.flags, compiled.groups, dict(compiled.groupindex),
                               [m.groups() for m in compiled.finditer(b"\x00\x00ab" if isinstance(p, bytes) else
                                "2024-05 ## Title ##\nnaive CAFE abc ab a")] if not isinstance(p, bytes) else
                               [m.group("tail").decode() for m in compiled.finditer(b"\x00\x00ab\x00z")]]
print(json.dumps({"made": made, "kept": len(recache._kept), "new": len(recache._new)}))
'''


def run(cache: Path) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_patterns_are_kept_and_made_again_alike(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first["kept"] == 0 and first["new"] >= 5
    files = list((tmp_path / "wikimem").glob("re-*.marshal"))
    assert len(files) == 1
    data = marshal.loads(files[0].read_bytes())
    assert data["python"] == f"{sys.version} -O{sys.flags.optimize}" and (r"(?P<year>\d{4})-(?P<month>\d\d)", 0) in data["patterns"]
    second = run(tmp_path)
    assert second["kept"] >= 5 and second["new"] == 0  # every pattern made from the kept code
    assert second["made"] == first["made"]  # flags, groups, names and matches as re made them


def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path) -> None:
    run(tmp_path)
    file = next((tmp_path / "wikimem").glob("re-*.marshal"))
    reference = run(tmp_path / "other")["made"]
    file.write_bytes(b"\x00garbage")
    got = run(tmp_path)
    assert got["kept"] == 0 and got["made"] == reference
    data = marshal.loads(file.read_bytes())  # written again, whole
    data["python"] = "another build"
    file.write_bytes(marshal.dumps(data))
    got = run(tmp_path)
    assert got["kept"] == 0 and got["made"] == reference


def test_a_kept_entry_the_engine_refuses_is_compiled_as_always(tmp_path: Path) -> None:
    run(tmp_path)
    file = next((tmp_path / "wikimem").glob("re-*.marshal"))
    data = marshal.loads(file.read_bytes())
    for key, parts in data["patterns"].items():
        data["patterns"][key] = (parts[0], [999999], *parts[2:])  # code no engine runs
    file.write_bytes(marshal.dumps(data))
    assert run(tmp_path)["made"] == run(tmp_path / "fresh")["made"]


def test_the_cli_keeps_its_patterns_one_file_per_command(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    subprocess.run([sys.executable, "-m", "wikimem.cli", "--debug", "init", str(tmp_path / "ws")], env=env, check=True,
                   capture_output=True)
    subprocess.run([sys.executable, "-m", "wikimem.cli", "search", "x", "--root", str(tmp_path / "ws")], env=env,
                   check=True, capture_output=True)
    files = {p.name.rsplit("-", 1)[1]: p for p in (tmp_path / "wikimem").glob("re-*.marshal")}
    assert set(files) == {"init.marshal", "search.marshal"}
    assert len(marshal.loads(files["init.marshal"].read_bytes())["patterns"]) > 20


def test_patterns_no_recent_writer_made_go_and_the_file_stays_bounded(tmp_path: Path) -> None:
    run(tmp_path)
    file = next((tmp_path / "wikimem").glob("re-*.marshal"))
    data = marshal.loads(file.read_bytes())
    used = set(data["patterns"])
    some = data["patterns"][next(iter(used))]
    data["writes"] = 1 + recache.KEEP_WRITES
    for n in range(50):  # made by a writer KEEP_WRITES writes ago, and by none since
        data["patterns"][(f"stale{n}", 0)] = some
        data["last"][(f"stale{n}", 0)] = 1
    for n in range(recache.MAX_KEPT):  # made by the last writer, but more than the file keeps
        data["patterns"][(f"recent{n}", 0)] = some
        data["last"][(f"recent{n}", 0)] = data["writes"]
    file.write_bytes(marshal.dumps(data))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    subprocess.run([sys.executable, "-c", SCRIPT.replace("patterns = [", "patterns = [(r'new(one)', 0), ")], env=env,
                   check=True, capture_output=True)
    after = marshal.loads(file.read_bytes())
    kept = after["patterns"]
    assert after["writes"] == data["writes"] + 1 and len(kept) == recache.MAX_KEPT == len(after["last"])
    assert ("new(one)", 0) in kept and used <= set(kept)  # what this writer made, first
    assert not [k for k in kept if str(k[0]).startswith("stale")]


def test_no_home_no_file(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME")}
    env["XDG_CACHE_HOME"] = "relative/cache"  # not a folder one can name from anywhere
    env["PYTHONPATH"] = str(Path(recache.__file__).resolve().parents[1])  # this checkout's, from any folder
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout)["new"] == 0 and not (tmp_path / "relative").exists()


def test_a_python_whose_re_compiles_otherwise_keeps_nothing(tmp_path: Path) -> None:
    """The first pattern a process compiles is made both ways; made otherwise than `re` makes it
    (here: a step that gives other code), nothing is kept and `re` compiles every pattern."""
    other = SCRIPT.replace('recache.install("test")', '''real = recache._parts
recache._parts = lambda *args: (lambda parts: (parts[0], [*parts[1][:-1], 0], *parts[2:]))(real(*args))
recache.install("test")''')
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    got = json.loads(subprocess.run([sys.executable, "-c", other], env=env, capture_output=True, text=True,
                                    check=True).stdout)
    assert got["new"] == 0 and got["made"] == run(tmp_path / "reference")["made"]
    assert not list((tmp_path / "wikimem").glob("re-*.marshal"))


CLASSES = r'''
from __future__ import annotations
import dataclasses, json, sys
from wikimem import recache
if sys.argv[1] == "kept":
    recache.install("test")
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

@dataclass(order=True)
class Box:
    name: str
    items: list[int] = field(default_factory=list)
    _hidden: int = field(default=3, repr=False)

p, b = Point(1, 2, ("a",)), Box("b", [1])
try:
    p.x = 5
    frozen = "assigned"
except dataclasses.FrozenInstanceError as exc:
    frozen = type(exc).__name__
b.items.append(2)
print(json.dumps({
    "repr": [repr(p), repr(b), repr(Box("c"))], "eq": [p == Point(1, 2, ("a",)), b == Box("b", [1, 2]), Box("a") < b],
    "hash": hash(p) == hash(Point(1, 2, ("a",))), "frozen": frozen, "fresh": Box("d").items is not Box("d").items,
    "annotations": [str(Point.__init__.__annotations__), str(Box.__init__.__annotations__)],
    "defaults": [repr(Point.__init__.__defaults__), Point.__match_args__],
    "kept": sum(1 for k in recache._kept if k[1] == recache.CODE),
    "new": sum(1 for k in recache._new if k[1] == recache.CODE),
}))
'''


def classes(cache: Path, how: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    proc = subprocess.run([sys.executable, "-c", CLASSES, how], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_the_functions_of_dataclasses_are_made_from_kept_code_alike(tmp_path: Path) -> None:
    """A class made with `dataclasses` gets functions compiled from source text: the code compiled
    in one process is run in the next, and the classes behave as `dataclasses` alone makes them
    (here defined in a module with `from __future__ import annotations`, whose flag the kept code
    must not take)."""
    reference = classes(tmp_path, "plain")
    first = classes(tmp_path, "kept")
    assert first["kept"] == 0 and first["new"] >= 6
    data = marshal.loads(next((tmp_path / "wikimem").glob("re-*.marshal")).read_bytes())
    assert any("def __init__(self" in source for source in data["code"])
    second = classes(tmp_path, "kept")
    assert second["kept"] >= 6 and second["new"] == 0
    for got in (first, second):
        assert {k: v for k, v in got.items() if k not in ("kept", "new")} == \
            {k: v for k, v in reference.items() if k not in ("kept", "new")}
    assert reference["frozen"] == "FrozenInstanceError" and reference["annotations"][0] == \
        "{'x': 'int', 'y': 'int', 'tags': 'tuple[str, ...]', 'return': None}"

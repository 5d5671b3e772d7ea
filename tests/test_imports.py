"""The package's structure, checked: no import cycles (counting imports inside functions, which
run too; not those under `if TYPE_CHECKING:`), and lint in layers: page extractors at the
bottom, the digest and the typed context above them, the rules on top. A module never imports
one from a layer above its own."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "daemon" / "wikimem"

# lint's layers, bottom first; every lint module is in exactly one
LINT_LAYERS = [
    {"model", "extract", "workers", "dispositions", "report"},
    {"digest"},
    {"context", "corpus"},
    {"claims", "secrets", "sourcing", "structure", "logcheck", "fixes", "deep"},
    {"__init__"},
]


def modules() -> dict[str, Path]:
    found = {}
    for file in PACKAGE.rglob("*.py"):
        parts = file.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = file
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for child in node.body for n in ast.walk(child))
    return skip


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, file in mods.items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        package = name if file.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base) + (f".{node.module}" if node.module else "")
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                wanted = subs + ([target] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            else:
                continue
            graph[name].update(w for w in wanted if w in mods and w != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_in_the_package() -> None:
    graph = import_graph()
    found = cycles(graph)
    detail = [f"{a} -> {b}" for c in found for a in c for b in sorted(graph[a]) if b in c]
    assert not found, "import cycles:\n" + "\n".join(detail)


def test_lint_imports_only_from_its_own_layer_or_below() -> None:
    graph = import_graph()
    lint = {("__init__" if name == "wikimem.lint" else name.removeprefix("wikimem.lint.")): name for name in graph
            if name == "wikimem.lint" or name.startswith("wikimem.lint.")}
    layer_of = {m: i for i, layer in enumerate(LINT_LAYERS) for m in layer}
    assert set(lint) == set(layer_of), f"lint modules without a layer: {sorted(set(lint) ^ set(layer_of))}"
    short = {full: short for short, full in lint.items()}
    wrong = [f"{src} (layer {layer_of[src]}) imports {short[dst]} (layer {layer_of[short[dst]]})"
             for src, full in lint.items() for dst in graph[full]
             if dst in short and layer_of[short[dst]] > layer_of[src]]
    assert not wrong, "\n".join(wrong)


def test_the_ground_floor_imports_nothing_of_wikimems() -> None:
    """The lexicon (words, names, versions, dates) and links.py (Markdown link syntax) are asked
    by every layer, so they ask none."""
    graph = import_graph()
    for name in ("wikimem.lexicon", "wikimem.links"):
        assert not {m for m in graph[name] if m.startswith("wikimem")}, (name, graph[name])


def test_no_private_name_is_imported_from_another_module() -> None:
    """A name one module takes from another is that module's interface, so it is public: an
    underscore says "only here". Third-party internals a module patches are the one exception
    (bounded in pyproject.toml, checked by tests/test_patched_internals.py)."""
    taken = []
    for name, file in modules().items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("wikimem")):
                taken += [f"{name}: from {'.' * node.level}{node.module or ''} import {a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not taken, "\n".join(taken)

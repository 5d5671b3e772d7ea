"""Three imports whoosh makes when it loads and never uses, spared.

Loading whoosh's modules imported `urllib.request` (for `whoosh.compat.urlretrieve`, a
download helper nothing here calls: it brings http.client, ssl, email and socket), the
`cached_property` package (for one property of a segment reader; the package imports asyncio,
to support coroutine properties) and `whoosh.lang.morph_en` (English word forms for a query
type never built here, compiled into patterns when it loads). Together they were about 25 ms
of every process that opens the index: a sixth of a cold `wikimem search`, and as much of a
one-file compile.

While the whoosh module that imports one loads, that name stands for a small module of its
own: a function whoosh takes from it imports the real one when called, and the property is
the standard library's `functools.cached_property` (the same: computed on first use, then kept
in the instance's dict). Once the whoosh module has loaded, the stand-in leaves `sys.modules`,
so whatever imports the name later gets the real module; a stand-in asked for any other name
(another thread importing while whoosh loads) loads the real module and answers from it.
Where the real module is loaded already, whoosh's module loads as it always did.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import importlib.abc


def _when_called(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, a function, imported when first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__qualname__ = call.__name__ = name
    return call


# whoosh's module -> (the module it imports and does not need, what whoosh takes of it)
STAND_INS: dict[str, tuple[str, dict[str, Any]]] = {
    "whoosh.compat": ("urllib.request", {"urlretrieve": _when_called("urllib.request", "urlretrieve")}),
    "whoosh.reading": ("cached_property", {"cached_property": functools.cached_property}),
    "whoosh.query.terms": ("whoosh.lang.morph_en", {"variations": _when_called("whoosh.lang.morph_en", "variations")}),
}


def _stand_in(name: str, attributes: dict[str, Any]) -> types.ModuleType:
    module = types.ModuleType(name, f"stands for {name} while whoosh loads (wikimem.search.spared)")
    module.__dict__.update(attributes)

    def rest(attribute: str) -> Any:
        # any other name: the real module, loaded now (this one leaves sys.modules first). Not
        # for the import system's own questions (`__path__`, asked of every `from ... import`)
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if sys.modules.get(name) is module:
            del sys.modules[name]
        return getattr(importlib.import_module(name), attribute)

    module.__getattr__ = rest  # type: ignore[method-assign]
    return module


class _Loader:
    """The loader of one of whoosh's modules, run with its stand-in in sys.modules."""

    def __init__(self, loader: Any, name: str, attributes: dict[str, Any]) -> None:
        self._loader, self._name, self._attributes = loader, name, attributes

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        if self._name in sys.modules:  # loaded already: nothing to spare
            self._loader.exec_module(module)
            return
        stand_in = _stand_in(self._name, self._attributes)
        sys.modules[self._name] = stand_in
        try:
            self._loader.exec_module(module)
        finally:
            if sys.modules.get(self._name) is stand_in:
                del sys.modules[self._name]

    def __getattr__(self, attribute: str) -> Any:
        # what else is asked of a module's loader (get_source for a traceback, get_filename, ...)
        return getattr(self._loader, attribute)


class _Finder:
    """First on sys.meta_path: finds the whoosh modules of STAND_INS as the path finder does,
    with the loader above; every other module is left to the finders after it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        wanted = STAND_INS.get(fullname)
        if wanted is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = cast("importlib.abc.Loader", _Loader(spec.loader, *wanted))
        return spec


def install() -> None:
    """Spare the imports in this process, unless whoosh has loaded its modules already (once)."""
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return
    if all(name in sys.modules for name in STAND_INS):
        return
    sys.meta_path.insert(0, _Finder())

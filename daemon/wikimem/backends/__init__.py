"""Backends turn changed sources into page edits. Built-ins register like a third party would.

The contract is small and typed: a backend has a `name`, the setting it needs
(if any), and one method, `compile`, taking a Batch and returning a
BatchResult of page edits. The compiler, not the backend, writes files: every
edit passes the same guards whichever backend proposed it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Settings
    from ..sources import Document
    from ..state import State
    from ..workspace import Workspace


@dataclass(frozen=True)
class SourceRef:
    """A source present in raw/ now."""

    path: str  # workspace-relative: raw/...
    sha256: str
    page: str  # wiki-relative page path assigned to it (sources/<slug>.md)


@dataclass(frozen=True)
class Batch:
    """What changed since the last compile, and read access to everything else."""

    workspace: Workspace
    settings: Settings
    state: State
    sources: Mapping[str, SourceRef]  # every current source, by path
    changed: tuple[str, ...]  # new or modified sources, by path
    renamed: Mapping[str, str]  # new path -> old path, content unchanged
    removed: Mapping[str, str]  # removed source path -> its page
    load: Callable[[str], Document]  # loads a changed source (raises SkipSource)
    rebuild: bool = False  # --rebuild: read every source again and re-render every page
    rerender: bool = False  # the backend's own version changed: re-render (no re-reading needed)
    files: Mapping[str, Path] = field(default_factory=dict)  # source path -> file, for worker processes
    max_bytes: int = 10_000_000  # the size cap load() applies


@dataclass(frozen=True)
class PageEdit:
    """Create or replace (content) or delete (content None) a page under wiki/."""

    path: str
    content: str | None
    kind: str
    owner: str | None = None  # source path or concept key
    # The hash of the on-disk page this edit was made on top of. A backend that edits a page a
    # person changed (a small str_replace/insert that keeps their text) sets it; the compiler
    # applies such an edit only while the file still has exactly that hash.
    base_sha256: str | None = None


@dataclass(frozen=True)
class SourceOutcome:
    path: str
    status: str  # compiled | skipped | failed
    reason: str | None = None
    title: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)  # tokens, for model backends
    concepts: tuple[str, ...] = ()
    cost_usd: float | None = None  # estimated from list prices, for model backends


@dataclass(frozen=True)
class BatchResult:
    edits: tuple[PageEdit, ...]
    outcomes: tuple[SourceOutcome, ...]
    notes: tuple[str, ...] = ()
    # (source, reason) for each command a guard refused while compiling that source (a model
    # asked to overwrite a person's text, say): counted in the compile summary
    refused: tuple[tuple[str, str], ...] = ()


class Backend(Protocol):
    name: str
    needs: str | None  # the setting or variable it cannot run without, e.g. ANTHROPIC_API_KEY

    def compile(self, batch: Batch) -> BatchResult: ...


_REGISTRY: dict[str, Callable[[Settings], Backend]] = {}


def register(name: str, factory: Callable[[Settings], Backend]) -> None:
    """Register a backend factory under a name (third-party backends call this too)."""
    _REGISTRY[name] = factory


def names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def resolve(name: str, settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The backend `name` stands for, and why: `auto` becomes anthropic or offline."""
    import os

    if name != "auto":
        return name, f"backend = {name!r} ({settings.where('backend')})"
    env = os.environ if environ is None else environ
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if env.get(var):
            return "anthropic", f"backend auto: {var} is set"
    if settings.base_url:
        return "anthropic", f"backend auto: base_url is set ({settings.where('base_url')})"
    return "offline", "backend auto: no ANTHROPIC_API_KEY and no base_url, so no network"


class _Resolved:
    """A backend chosen by `auto`: behaves as the chosen one and says which and why in its notes."""

    def __init__(self, inner: Backend, reason: str):
        self.inner = inner
        self.name = inner.name
        self.needs = inner.needs
        self.reason = reason

    def compile(self, batch: Batch) -> BatchResult:
        result = self.inner.compile(batch)
        return BatchResult(result.edits, result.outcomes, (f"{self.reason} -> {self.name}", *result.notes),
                           result.refused)

    def __getattr__(self, attr: str) -> object:
        return getattr(self.inner, attr)


def create(name: str, settings: Settings) -> Backend:
    from ..errors import UsageError

    _load_builtins()
    chosen, reason = resolve(name, settings)
    if chosen not in _REGISTRY:
        valid = ", ".join([*sorted(_REGISTRY), "auto"])
        raise UsageError(f"unknown backend {name!r}; choose one of: {valid}")
    backend = _REGISTRY[chosen](settings)
    return _Resolved(backend, reason) if name == "auto" else backend


def _load_builtins() -> None:
    if "offline" not in _REGISTRY:
        from . import offline

        register("offline", offline.OfflineBackend)
    if "anthropic" not in _REGISTRY:
        # a lazy factory: importing wikimem (or listing backends) never imports the anthropic SDK
        def anthropic_backend(settings: Settings) -> Backend:
            from .anthropic import AnthropicBackend

            return AnthropicBackend(settings)

        register("anthropic", anthropic_backend)

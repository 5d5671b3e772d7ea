"""Backends turn changed sources into page edits. Built-ins register like a third party would.

The contract is small and typed: a backend has a `name`, the setting it needs
(if any), and one method, `compile`, taking a Batch and returning a
BatchResult of page edits. The compiler, not the backend, writes files: every
edit passes the same guards whichever backend proposed it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import UsageError
from .base import (
    UNHEARD,
    Activity,
    Backend,
    Batch,
    BatchResult,
    Listener,
    PageEdit,
    SourceOutcome,
    SourceRef,
    resolve,
)

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["UNHEARD", "Activity", "Backend", "Batch", "BatchResult", "Listener", "PageEdit", "SourceOutcome", "SourceRef", "create", "names",
           "register", "resolve"]


_REGISTRY: dict[str, Callable[[Settings], Backend]] = {}


def register(name: str, factory: Callable[[Settings], Backend]) -> None:
    """Register a backend factory under a name (third-party backends call this too)."""
    _REGISTRY[name] = factory


def names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


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
                           result.refused, result.stats)

    def __getattr__(self, attr: str) -> object:
        return getattr(self.inner, attr)


def create(name: str, settings: Settings) -> Backend:
    _load_builtins()
    chosen, reason = resolve(name, settings)
    if chosen not in _REGISTRY:
        valid = ", ".join([*sorted(_REGISTRY), "auto"])
        raise UsageError(f"unknown backend {name!r}; choose one of: {valid}")
    backend = _REGISTRY[chosen](settings)
    return _Resolved(backend, reason) if name == "auto" else backend


def _load_builtins() -> None:
    if "offline" not in _REGISTRY:
        # loaded when a backend is first asked for: what imports the registry (the compiler,
        # `wikimem config`) does not load the offline backend's analysis, pages and store for it
        from . import offline

        register("offline", offline.OfflineBackend)
    if "anthropic" not in _REGISTRY:
        # a lazy factory: importing wikimem (or listing backends) never imports the anthropic SDK
        def anthropic_backend(settings: Settings) -> Backend:
            from .anthropic import AnthropicBackend

            return AnthropicBackend(settings)

        register("anthropic", anthropic_backend)

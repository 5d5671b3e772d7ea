"""The contract between the compiler and a backend: what a batch gives a backend, what a
backend gives back, and `resolve` (what `auto` stands for). The backends import this module,
never the package, so the package can load them lazily without an import cycle."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

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


class Listener(Protocol):
    """What a backend tells the compiler while it works, so that the compiler can do its own
    work beside it (it builds the search index meanwhile). A backend may tell none of it: the
    pages it returns are the same either way."""

    def reading(self) -> None:
        """The backend's worker processes read the changed sources while its own process waits."""

    def read(self, outlines: dict[str, dict[str, Any]]) -> None:
        """Every changed source is read, before any page is rendered: `outlines` holds the
        outline (sources.outline) of each the backend read in its workers."""

    def rendered(self, pages: Sequence[PageEdit]) -> None:
        """Pages the backend has rendered, before it returns them all."""

    def spare(self) -> bool:
        """Whether a core is spare now, asked by a backend that may render pages in a process
        forked beside its own (backends/beside.py). Callable from a forked process."""
        ...


class _Unheard:
    """The listener of a batch nobody listens to: every core is spare."""

    def reading(self) -> None:
        pass

    def read(self, outlines: dict[str, dict[str, Any]]) -> None:
        pass

    def rendered(self, pages: Sequence[PageEdit]) -> None:
        pass

    def spare(self) -> bool:
        return True


UNHEARD: Listener = _Unheard()


@dataclass(frozen=True)
class Batch:
    """What changed since the last compile, and what a backend needs to compile it. `state` is
    state.db inside the compile's transaction: a backend reads the sources' records there and
    may keep its own derived records (analyses, the offline backend's running totals), which
    are committed with the pages or not at all."""

    workspace: Workspace
    settings: Settings
    state: State
    sources: Mapping[str, SourceRef]  # every current source, by path
    changed: tuple[str, ...]  # new or modified sources, by path
    renamed: Mapping[str, str]  # new path -> old path, content unchanged
    removed: Mapping[str, str]  # removed source path -> its page
    # loads a changed source (raises SkipSource); xrefs=True keeps the marks of its
    # cross-references for the offline backend to resolve (sources/xref.py)
    load: Callable[..., Document]
    rebuild: bool = False  # --rebuild: read every source again and re-render every page
    rerender: bool = False  # the backend's own version changed: re-render (no re-reading needed)
    files: Mapping[str, Path] = field(default_factory=dict)  # source path -> file, for worker processes
    max_bytes: int = 10_000_000  # the size cap load() applies
    # what the backend tells the compiler as it works (Listener); the compiler does its own
    # work meanwhile
    listener: Listener = field(default_factory=lambda: UNHEARD)
    # Called by a model backend now and then (from the thread that called compile) with how the
    # compile is going, for a progress line and the daemon's status. Optional for a backend.
    activity: Callable[[Activity], None] | None = None


@dataclass(frozen=True)
class Activity:
    """How a model backend's compile is going, as a person watching it wants to know."""

    sources_done: int
    sources_total: int
    in_flight: int  # requests in flight (interactive), or in the batch out (batches)
    requests: int  # answered so far
    rejected: int  # answered 429/529 (rate limited, overloaded) and sent again
    tokens: Mapping[str, int]  # input, output, cache_read, cache_write so far
    cost_usd: float | None  # so far, at list prices (batch prices in batches)
    seconds: float  # since the compile began
    seconds_left: float | None  # estimated from the pace so far; None before a source is done
    mode: str = "interactive"  # or "batch"
    round: int | None = None  # batches: the round out now
    batch_id: str | None = None  # batches: the batch out now

    def to_json(self) -> dict[str, Any]:
        return {"sources_done": self.sources_done, "sources_total": self.sources_total, "in_flight": self.in_flight,
                "requests": self.requests, "rejected": self.rejected, "tokens": dict(self.tokens),
                "cost_usd": self.cost_usd, "seconds": round(self.seconds, 1),
                "seconds_left": None if self.seconds_left is None else round(self.seconds_left),
                "mode": self.mode, "round": self.round, "batch_id": self.batch_id}

    def line(self) -> str:
        """One line for a terminal or `wikimem status`."""
        tokens = sum(self.tokens.values())
        parts = [f"{self.sources_done}/{self.sources_total} sources"]
        if self.mode == "batch":
            parts.append(f"round {self.round or 0}" + (f", {self.in_flight} requests in batch {self.batch_id}" if self.batch_id else ""))
        else:
            parts.append(f"{self.in_flight} in flight")
        if self.rejected:
            parts.append(f"{self.rejected} rate-limited")
        parts.append(f"{tokens:,} tokens" + (f" ~${self.cost_usd:.2f}" if self.cost_usd is not None else ""))
        if self.seconds_left is not None:
            left = self.seconds_left
            parts.append(f"~{left / 60:.0f} min left" if left >= 90 else f"~{left:.0f} s left")
        return ", ".join(parts)


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
    # what a model backend's compile cost in requests: counts for the compile report's `traffic`
    stats: Mapping[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    name: str
    needs: str | None  # the setting or variable it cannot run without, e.g. ANTHROPIC_API_KEY

    def compile(self, batch: Batch) -> BatchResult: ...


def resolve(name: str, settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """The backend `name` stands for, and why: `auto` becomes anthropic or offline."""

    if name != "auto":
        return name, f"backend = {name!r} ({settings.where('backend')})"
    env = os.environ if environ is None else environ
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if env.get(var):
            return "anthropic", f"backend auto: {var} is set"
    if settings.base_url:
        return "anthropic", f"backend auto: base_url is set ({settings.where('base_url')})"
    return "offline", "backend auto: no ANTHROPIC_API_KEY and no base_url, so no network"

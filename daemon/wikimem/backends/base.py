"""The contract between the compiler and a backend: what a batch gives a backend, what a
backend gives back, and `resolve` (what `auto` stands for). The backends import this module,
never the package, so the package can load them lazily without an import cycle."""

from __future__ import annotations

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
    # Called by a backend once it has read every changed source, with the search outline of each
    # it read (sources.outline), before it writes pages: the compiler may start indexing raw/
    # then, beside the pages (search.start_seed). Optional for a backend.
    read_all: Callable[[dict[str, dict[str, Any]]], None] | None = None
    # Called by a backend with pages it has rendered, before it returns them all: the compiler
    # may index them meanwhile (search.Seed.offer). Optional for a backend.
    rendered: Callable[[Sequence[PageEdit]], None] | None = None
    # Called by a backend once its worker processes are reading the changed sources, while its
    # own process waits for them: the compiler loads meanwhile what it needs after them
    # (search's modules, to start the seed). Optional for a backend.
    reading: Callable[[], None] | None = None
    # Whether a core is spare now, asked by a backend that may render pages in a process forked
    # beside its own (backends/beside.py): the compiler's other process (the search seed) waits
    # for pages to index. Callable from a forked process. None: no other process is at work.
    spare: Callable[[], bool] | None = None


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

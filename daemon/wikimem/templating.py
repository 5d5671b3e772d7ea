"""Jinja2 templates: the workspace's own `templates/` first, then the ones shipped with wikimem."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"


COMPILED_FOLDER = "templates.compiled"  # in a workspace's .wikimem/: the templates kept compiled
_compiled_in: Path | None = None  # where templates are kept compiled between processes (keep_compiled)


def keep_compiled(folder: Path) -> None:
    """Keep the templates compiled in `folder` (in a workspace's .wikimem/), for the next process
    to load rather than compile: a page template takes some 10 ms to compile, a fair part of a
    one-file compile. A template whose file changed is compiled again (Jinja checks its source)."""
    global _compiled_in
    if folder != _compiled_in:
        _compiled_in = folder
        _environment.cache_clear()


@cache
def _environment(workspace_templates: Path | None) -> Any:
    # Jinja2 loads here, on the first render: what imports templating mostly never renders
    import jinja2

    search = [str(p) for p in (workspace_templates, PACKAGE_TEMPLATES) if p and p.is_dir()]
    options: dict[str, Any] = {
        "autoescape": False,  # Markdown, not HTML
        "keep_trailing_newline": True,
        "trim_blocks": True,
        "lstrip_blocks": True,
        "undefined": jinja2.StrictUndefined,
    }
    cached = _bytecode_cache(_compiled_in, options) if _compiled_in is not None else None
    return jinja2.Environment(loader=jinja2.FileSystemLoader(search), bytecode_cache=cached, **options)


def _bytecode_cache(folder: Path, options: dict[str, Any]) -> Any:
    """Jinja's cache of compiled templates in `folder`, which never fails a render: a file that
    cannot be read or written (a read-only workspace, a damaged file) is compiled as if unseen.
    Jinja checks a template's source and its own version, not the options it was compiled with:
    those are in the files' names, so a template compiled with other options is never loaded."""
    import hashlib

    import jinja2

    tag = hashlib.sha256(repr(sorted(options.items())).encode("utf-8")).hexdigest()[:12]

    class Cache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Any) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # noqa: BLE001 - derived data: compiled again
                bucket.reset()

        def dump_bytecode(self, bucket: Any) -> None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass  # kept next time, perhaps: this render has what it needs

    return Cache(str(folder), pattern=f"__wikimem_{tag}_%s.cache")


def render(name: str, root: Path | None = None, **context: Any) -> str:
    """Render templates/<name>; a workspace may override any template by placing its own copy."""
    return str(_env_for(root).get_template(name).render(**context))


def warm(root: Path | None = None, names: Iterable[str] | None = None) -> None:
    """Compile every template now, or those `names` (the daemon, before it forks a process per
    batch; a compile, while its workers read the sources); Jinja still reloads one whose file
    changes."""
    env = _env_for(root)
    for name in env.list_templates(extensions=["j2"]) if names is None else names:
        env.get_template(name)


def _env_for(root: Path | None) -> Any:
    folder = root / "templates" if root else None
    return _environment(folder if folder and folder.is_dir() else None)

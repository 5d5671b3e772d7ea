"""Jinja2 templates: the workspace's own `templates/` first, then the ones shipped with wikimem."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"


@cache
def _environment(workspace_templates: Path | None) -> Any:
    # Jinja2 loads here, on the first render: what imports templating mostly never renders
    import jinja2

    search = [str(p) for p in (workspace_templates, PACKAGE_TEMPLATES) if p and p.is_dir()]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        autoescape=False,  # Markdown, not HTML
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env


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

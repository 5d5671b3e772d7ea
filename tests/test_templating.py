"""Templates kept compiled between processes (templating.keep_compiled): the same pages, from
a cache that never fails a render."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wikimem import templating

DAEMON = Path(__file__).resolve().parent.parent / "daemon"


@pytest.fixture(autouse=True)
def _no_cache_after():
    yield
    templating._compiled_in = None
    templating._environment.cache_clear()


def _render(folder: Path | None, root: Path | None = None) -> str:
    if folder is not None:
        templating.keep_compiled(folder)
    return templating.render("AGENTS.md.j2", root, root_hint="..")


def _render_in_a_new_process(folder: Path) -> str:
    code = ("import sys; from pathlib import Path; from test_templating import _render; "
            "sys.stdout.write(_render(Path(sys.argv[1])))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(DAEMON), str(Path(__file__).parent)]))
    return subprocess.run([sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True,
                          check=True).stdout


def test_a_template_compiled_once_is_loaded_by_the_next_process(tmp_path: Path) -> None:
    folder = tmp_path / ".wikimem" / "templates.compiled"
    plain = _render(None)
    assert _render_in_a_new_process(folder) == plain
    kept = list(folder.iterdir())
    assert len(kept) == 1  # the template compiled, kept
    stamp = kept[0].stat().st_mtime_ns
    assert _render_in_a_new_process(folder) == plain
    assert kept[0].stat().st_mtime_ns == stamp  # loaded, not written again


def test_a_workspace_template_edited_is_compiled_again(tmp_path: Path) -> None:
    folder = tmp_path / ".wikimem" / "templates.compiled"
    own = tmp_path / "templates"
    own.mkdir()
    (own / "index.md.j2").write_text("first {{ body|length }}\n", encoding="utf-8")
    templating.keep_compiled(folder)
    assert templating.render("index.md.j2", tmp_path, body=[1, 2]) == "first 2\n"
    (own / "index.md.j2").write_text("second {{ body|length }}\n", encoding="utf-8")
    templating._environment.cache_clear()  # as a new process: Jinja's own memory gone
    assert templating.render("index.md.j2", tmp_path, body=[1, 2]) == "second 2\n"


def test_a_damaged_or_unwritable_cache_never_fails_a_render(tmp_path: Path) -> None:
    folder = tmp_path / ".wikimem" / "templates.compiled"
    plain = _render(None)
    assert _render_in_a_new_process(folder) == plain
    for kept in folder.iterdir():
        kept.write_bytes(kept.read_bytes()[:20] + b"\x00garbage")  # cut short and overwritten
    templating._environment.cache_clear()
    assert _render(folder) == plain
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    templating._compiled_in = None
    assert _render(blocked / "templates.compiled") == plain  # cannot be made: rendered all the same


def test_templates_compiled_with_other_options_are_never_loaded(tmp_path: Path) -> None:
    """Jinja checks a template's source, not the options it was compiled with (trimming blocks,
    say): they name the cache's files, so a wikimem that compiles otherwise starts afresh."""
    ours = templating._bytecode_cache(tmp_path, {"trim_blocks": True, "lstrip_blocks": True})
    other = templating._bytecode_cache(tmp_path, {"trim_blocks": False, "lstrip_blocks": True})
    again = templating._bytecode_cache(tmp_path, {"lstrip_blocks": True, "trim_blocks": True})
    assert ours.pattern != other.pattern and ours.pattern == again.pattern
    _render_in_a_new_process(tmp_path / "kept")
    assert all(p.name.startswith("__wikimem_") for p in (tmp_path / "kept").iterdir())

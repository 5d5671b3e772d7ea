"""The docs cover the tool: every command and long option, every lint rule and every setting
is documented in docs/; the README keeps the test command CI runs and links every docs page;
no relative link in the README or docs/ leads nowhere. Reads files only: no compile."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from urllib.parse import unquote

import click
import pytest

from clitree import all_commands
from conftest import REPO
from wikimem import cli

DOCS = REPO / "docs"
README = REPO / "README.md"
CI = REPO / ".ci" / "run"

# the page that documents each command; a command missing here must still be documented
# somewhere in docs/ (see test_every_command_and_option_is_documented)
COMMAND_PAGES = {
    "init": "compile.md",
    "compile": "compile.md",
    "run": "daemon.md",
    "status": "daemon.md",
    "lint": "lint.md",
    "search": "search.md",
    "reindex": "search.md",
    "query": "search.md",
    "context": "search.md",
    "mcp": "agents.md",
    "agents": "agents.md",
    "agents install": "agents.md",
    "history": "history.md",
    "undo": "history.md",
    "config": "configuration.md",
}


def long_options(command: click.Command) -> list[str]:
    names: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option):
            names += [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--") and o != "--help"]
    return names


def mentions(text: str, option: str) -> bool:
    """`--deep` is mentioned only as itself, not as part of `--deep-budget`."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


@pytest.mark.parametrize("name,command", all_commands(), ids=[n for n, _ in all_commands()])
def test_every_command_and_option_is_documented(name: str, command: click.Command) -> None:
    page = COMMAND_PAGES.get(name)
    if page is not None:
        where, text = f"docs/{page}", (DOCS / page).read_text(encoding="utf-8")
    else:
        where, text = "docs/", docs_text()
    assert re.search(rf"wikimem {re.escape(name)}\b", text), f"`wikimem {name}` is not documented in {where}"
    missing = [o for o in long_options(command) if not mentions(text, o)]
    assert not missing, f"`wikimem {name}` options not documented in {where}: {', '.join(missing)}"


def test_global_options_are_documented() -> None:
    text = docs_text()
    missing = [o for o in long_options(cli.main) if not mentions(text, o)]
    assert not missing, f"`wikimem` options not documented in docs/: {', '.join(missing)}"


def test_every_lint_rule_has_a_row_in_lint_md() -> None:
    from wikimem.lint import RULES

    text = (DOCS / "lint.md").read_text(encoding="utf-8")
    missing = [r for r in RULES if not re.search(rf"^\| `{re.escape(r)}` \|", text, re.M)]
    assert not missing, f"lint rules without a row in docs/lint.md: {', '.join(missing)}"


def test_every_setting_is_documented_in_configuration_md() -> None:
    from wikimem.config import ENV_VARS, Settings

    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    keys = [f.name for f in fields(Settings) if f.name != "origin"]
    missing = [k for k in keys if not re.search(rf"^\| `{re.escape(k)}` \|", text, re.M)]
    assert not missing, f"wikimem.toml settings without a row in docs/configuration.md: {', '.join(missing)}"
    missing = [v for v in ENV_VARS.values() if v not in text]
    assert not missing, f"environment variables not in docs/configuration.md: {', '.join(missing)}"


def test_readme_holds_the_test_command_ci_runs() -> None:
    lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    runs = [line for line in lines if "pytest" in line and not line.startswith("#")]
    assert len(runs) == 1, f".ci/run should run pytest on one line, found {runs}"
    # .ci/run quiets pip's own output (`pip install --quiet`); that changes what CI prints,
    # not what it installs or runs, so the README may show the command without it
    command = re.sub(r"(pip install) --quiet\b", r"\1", runs[0])
    assert command in README.read_text(encoding="utf-8"), f"README does not show CI's test command: {command}"


def test_readme_links_every_docs_page() -> None:
    readme = README.read_text(encoding="utf-8")
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "docs/ has no pages"
    missing = [p.name for p in pages if f"](docs/{p.name})" not in readme]
    assert not missing, f"README does not link: {', '.join(missing)}"


# --- relative links --------------------------------------------------------------------------

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """The text outside code: examples in code blocks and `code` are not links."""
    return CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes for a file's headings."""
    out = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
        out.add(slug.replace(" ", "-"))
    return out


def documents() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("doc", documents(), ids=[p.relative_to(REPO).as_posix() for p in documents()])
def test_relative_links_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(prose(text)):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (doc.parent / unquote(path)).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{doc.relative_to(REPO)}: broken links: {', '.join(broken)}"


def test_the_module_map_names_every_module() -> None:
    """docs/architecture.md is the module map: a module it does not name is a module nobody
    finds (a package is named by its folder, as `lint/`)."""
    doc = (DOCS / "architecture.md").read_text(encoding="utf-8")
    named = {part for span in re.findall(r"`([\w/.]+)`", doc) for part in re.split(r"[/.]", span) if part}
    package = REPO / "daemon" / "wikimem"
    missing = sorted(str(f.relative_to(package)) for f in package.rglob("*.py")
                     if (f.parent.name if f.stem == "__init__" else f.stem) not in named)
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"

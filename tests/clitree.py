"""The command tree of `wikimem`, for the tests that check every command (help, docs)."""

from __future__ import annotations

import click

from wikimem import cli


def all_commands() -> list[tuple[str, click.Command]]:
    """Every command under `wikimem`, subcommand groups included, as ("agents install", cmd)."""
    out: list[tuple[str, click.Command]] = []

    def walk(prefix: str, group: click.Group) -> None:
        for name, command in sorted(group.commands.items()):
            full = f"{prefix} {name}".strip()
            out.append((full, command))
            if isinstance(command, click.Group):
                walk(full, command)

    walk("", cli.main)
    return out

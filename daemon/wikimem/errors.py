"""Exceptions the core raises; the adapters (CLI, MCP) turn them into one-line messages."""

from __future__ import annotations


class WikimemError(Exception):
    """An error with a message fit to show a user as one line."""

    exit_code = 1


class UsageError(WikimemError):
    """The user asked for something that cannot be done as asked."""

    exit_code = 2


class WorkspaceBusy(WikimemError):
    """Another writer (the daemon or a compile) holds the workspace lock."""

    exit_code = 4


class PathEscape(WikimemError):
    """A path argument points outside the folder it must stay in."""

    exit_code = 2


class UnsafePath(PathEscape):
    """A file or folder wikimem owns (in wiki/ or .wikimem/) is a symbolic link or a special
    file (a FIFO, a device): writing, deleting or serving it could reach outside the workspace."""

    exit_code = 1

"""Regular expressions compiled the first time they are used.

The analysis, the fact readers, the source readers and the page modules hold some 400
patterns at module level. Compiling them all when their modules load took a fifth of a
one-file compile's process (about 80 ms), though a short document reaches few of them: most
sentences fail a pattern's cheap pre-test before it is asked, and a Markdown file reaches no
reST or HTML pattern. A `lazy` pattern is an `re.Pattern` to its callers, compiled when
first asked; `compile_all` compiles every one made so far, for a process about to fork
workers that will each ask most of them (compiled once before the fork, the workers share
them).
"""

from __future__ import annotations

import re
from typing import Any, cast

_MADE: list[_Lazy] = []
# what a caller asks of a pattern: once compiled, these are the compiled pattern's own methods
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")


class _Lazy:
    """A pattern's source and flags, compiled on the first use of anything but its source."""

    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source
        self.given_flags = flags  # as given: `flags` is the compiled pattern's (inline flags too)
        self._compiled: re.Pattern[str] | None = None
        _MADE.append(self)

    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.given_flags)
            for name in _METHODS:  # later calls find them on the instance, with no lookup here
                setattr(self, name, getattr(compiled, name))
        return compiled

    def __getattr__(self, name: str) -> Any:
        # only for what the instance lacks: the methods until compiled, flags, groups, groupindex
        if name.startswith("_"):  # copy and pickle ask for their hooks before __init__ has run
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.given_flags})"


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """re.compile(source, flags), compiled on first use. For a module's own patterns: every one
    made is kept for compile_all, so a pattern made per call belongs to re.compile."""
    return cast("re.Pattern[str]", _Lazy(source, flags))


def given_flags(pattern: re.Pattern[str]) -> int:
    """The flags a pattern was made with, without compiling a lazy one (no inline flags)."""
    return pattern.given_flags if isinstance(pattern, _Lazy) else pattern.flags


def compiled(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The compiled pattern, as a match gives it (`m.re is compiled(P)`: a lazy P is not m.re)."""
    return pattern.compiled() if isinstance(pattern, _Lazy) else pattern


def compile_all() -> None:
    """Compile every lazy pattern made so far."""
    for pattern in _MADE:
        pattern.compiled()

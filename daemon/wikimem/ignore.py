"""Ignore patterns (`.wikimemignore`, gitignore syntax) matched in linear time.

gitignore's rules, as git applies them and as pathspec's GitIgnoreSpec spells them out: `#`
comments, `!` to bring a path back, `\\` escapes, a pattern without a slash matching in any
folder, a trailing slash for folders only, `**` for any number of folders, `*`, `?` and `[...]`
within one name, and of the rules that match a path the last one that names it as a file wins,
else the last one that names a folder it is in.

A pattern is not matched as one backtracking regular expression: `*a*a*a*a*a*a*a*a*b` is, in
most engines, a search whose steps grow exponentially with the name it is tried on (a file with
a 46-letter name hung compile, search and the daemon). A run of literals, `?` and `[...]`
between two wildcards matches a fixed number of characters, so its leftmost match after the
previous one is always as good as any later one: each is found once, in an atomic group that
is never entered again, and only the last part of a name (or the last run of names after `**`)
is tried at more than one place. The work is then bounded by the length of the path times the
length of the pattern. What is too large to be worth matching (a pattern of more than
MAX_PATTERN_CHARS characters, a file of more than MAX_PATTERNS patterns) is left out, and said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_PATTERN_CHARS = 1_000  # a gitignore line is a few dozen characters; more is left out
MAX_PATTERNS = 2_000  # patterns read from one file; the rest are left out

_ANY_FOLDERS = "^(?:[^/]+/)*"  # any number of leading folders: how a pattern without a slash starts


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file, compiled. `include`: True for a pattern that ignores, False
    for `!pattern`, which brings back."""

    pattern: str
    include: bool
    as_file: re.Pattern[str] | None  # matches a path it names itself (or one under it, for `x/**`)
    as_folder: re.Pattern[str] | None  # matches a path under a folder it names (`x/`, or `x` as a folder)
    any_folder_body: str | None  # the pattern's regex after _ANY_FOLDERS, when it starts so (see Spec)
    either: re.Pattern[str] = field(init=False)  # matches where as_file or as_folder does: one try for a no

    def __post_init__(self) -> None:
        object.__setattr__(self, "either", re.compile(_either(self)))


@dataclass
class Spec:
    """The patterns of one ignore file, in order, and what was left out of it."""

    patterns: list[Pattern] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each: a pattern left out, and why

    def check(self, path: str) -> tuple[bool | None, int | None]:
        """(include, index of the deciding pattern) for `path` (relative, with a trailing "/"
        for a folder), as GitIgnoreSpec.check_file gives them: the last pattern that names the
        path as a file decides, else the last that names a folder it is in; (None, None) when
        none matches."""
        folder: tuple[bool, int] | None = None
        for index in range(len(self.patterns) - 1, -1, -1):
            p = self.patterns[index]
            if not p.either.match(path):
                continue
            if p.as_file is not None and p.as_file.match(path):
                return p.include, index
            if folder is None and p.as_folder is not None and p.as_folder.match(path):
                folder = (p.include, index)
        return folder if folder is not None else (None, None)

    def any_of(self) -> re.Pattern[str] | None:
        """One regular expression that matches wherever some pattern does (either way), for a
        quick no: most paths match none. Patterns that may match in any folder share the
        leading folders, which are then tried once for all of them rather than once each."""
        shared = [p.any_folder_body for p in self.patterns if p.any_folder_body is not None]
        rest = [f"(?:{_either(p)})" for p in self.patterns if p.any_folder_body is None]
        if shared:
            rest.insert(0, _ANY_FOLDERS + "(?:" + "|".join(f"(?:{b})" for b in shared) + ")(?:/|$)")
        return re.compile("|".join(rest)) if rest else None


def _either(p: Pattern) -> str:
    mine = [r.pattern for r in (p.as_file, p.as_folder) if r is not None]
    if len(mine) == 2 and mine[0].endswith("$") and mine[1] == mine[0][:-1] + "/":
        return mine[0][:-1] + "(?:/|$)"  # one pattern's two ways: its regex once
    return "|".join(f"(?:{r})" for r in mine)


def parse(lines: Iterable[str], *, where: str = "") -> Spec:
    """The patterns of an ignore file's lines; `where` names the file in the problems."""
    spec = Spec()
    for number, line in enumerate(lines, 1):
        if len(spec.patterns) >= MAX_PATTERNS:
            spec.problems.append(f"{where}: more than {MAX_PATTERNS} patterns; line {number} and after are left out")
            break
        if len(line) > MAX_PATTERN_CHARS:
            spec.problems.append(f"{where} line {number}: a pattern of more than {MAX_PATTERN_CHARS} characters; "
                                 "left out")
            continue
        try:
            pattern = compile_line(line)
        except ValueError as exc:
            spec.problems.append(f"{where} line {number}: {exc}; left out")
            continue
        if pattern is not None:
            spec.patterns.append(pattern)
    return spec


def compile_line(line: str) -> Pattern | None:
    """One gitignore line as a Pattern; None for a blank line, a comment, or a pattern git
    discards (a `[` that never closes). ValueError for one that cannot be read."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    include = True
    body = text
    if body.startswith("!"):
        include, body = False, body[1:]
    segments = body.split("/")
    is_dir = not segments[-1]
    if not segments[0]:
        del segments[0]  # a leading slash: anchored where the ignore file is
    elif len(segments) == 1 or (len(segments) == 2 and not segments[1]):
        if segments[0] != "**":
            segments.insert(0, "**")  # one name: in any folder
    if not segments:
        raise ValueError(f"pattern {text!r} names nothing")
    if not segments[-1]:
        segments[-1] = "**"  # a trailing slash: everything under the folder
    collapsed: list[str] = []
    for seg in segments:
        if not (seg == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(seg)
    segments = collapsed
    # what pathspec writes for these as plain searches: any path, or any path with a folder
    if segments == ["**"] or segments == ["**", "*"]:
        if is_dir and segments == ["**"]:
            return Pattern(text, include, None, re.compile(r"(?=.*/)"), None)
        return Pattern(text, include, re.compile(r"(?=.)"), None, None)
    if segments == ["**", "*", "**"]:
        if is_dir:
            return Pattern(text, include, None, re.compile(r"(?=.*/)"), None)
        return Pattern(text, include, re.compile(r"(?=.*/)"), None, None)
    try:
        translated = [None if seg == "**" else _segment(seg) for seg in segments]
    except _Unclosed:
        return None  # git discards a pattern with a `[` that never closes
    lead = translated[0] is None
    trail = translated[-1] is None
    groups: list[list[str]] = [[]]
    for part in translated[1 if lead else 0 : len(translated) - 1 if trail else len(translated)]:
        if part is None:
            groups.append([])
        else:
            groups[-1].append(part)
    if any(not g for g in groups):
        raise ValueError(f"pattern {text!r} cannot be read")
    regex = "^"
    for i, group in enumerate(groups):
        body_ = "/".join(group)
        last = i == len(groups) - 1
        if i == 0 and not lead:
            regex += body_
        elif last:
            regex += ("(?:[^/]+/)*" if i == 0 else "/(?:[^/]+/)*") + body_
        else:
            # the leftmost place this run of names matches is as good as any later one: the
            # `**` after it takes up the difference; found once, never tried again
            regex += ("(?>(?:[^/]+/)*?" if i == 0 else "(?>/(?:[^/]+/)*?") + body_ + "(?=/))"
    try:
        if trail:
            ends = re.compile(regex + "/")
            as_file, as_folder = (None, ends) if is_dir else (ends, None)
        else:
            as_file, as_folder = re.compile(regex + "$"), re.compile(regex + "/")
    except re.error as exc:
        raise ValueError(f"pattern {text!r} cannot be read ({exc.msg})") from None
    # a pattern that may match in any folder, for Spec.any_of (which may match more: it is a
    # quick no, and the pattern decides)
    shared = "/".join(groups[0]) if lead and len(groups) == 1 else None
    return Pattern(text, include, as_file, as_folder, shared)


class _Unclosed(ValueError):
    pass


def _segment(glob: str) -> str:
    """One name's glob (no slash) as a regular expression that matches in linear time."""
    if glob == "*":
        return "[^/]+"
    chunks: list[list[str]] = [[]]  # fixed-width runs between the wildcards
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        i += 1
        if char == "\\":
            if i >= end:
                raise ValueError(f"pattern ends with an escape: {glob!r}")
            chunks[-1].append(re.escape(glob[i]))
            i += 1
        elif char == "*":
            chunks.append([])
        elif char == "?":
            chunks[-1].append("[^/]")
        elif char == "[":
            j = i
            if j < end and glob[j] in "!^":
                j += 1
            if j < end and glob[j] == "]":
                j += 1
            while j < end and glob[j] != "]":
                j += 1
            if j >= end:
                raise _Unclosed(glob)
            negate = glob[i] in "!^"
            inner = glob[i + 1 if negate else i : j].replace("\\", "\\\\")
            # a bracket expression never matches the folder separator
            chunks[-1].append(f"(?:(?!/)[{'^' if negate else ''}{inner}])")
            i = j + 1
        else:
            chunks[-1].append(re.escape(char))
    parts = ["".join(c) for c in chunks]
    if len(parts) == 1:
        return parts[0]
    middle = "".join(f"(?>[^/]*?{p})" for p in parts[1:-1])
    return f"{parts[0]}{middle}[^/]*{parts[-1]}"

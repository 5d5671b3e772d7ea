"""Cross-references a document makes to another place of the set: Sphinx's `:ref:` and `:doc:`.

Sphinx shows `:ref:`label`` as the title of the section the label marks, wherever in the set
that is, and `:doc:`path`` as that document's title: what a reference shows depends on other
files. The loader cannot know them, so it leaves a mark in the text where the reference is, that
carries the reference whole (its kind, its target, the text the author gave it, if any); the
offline backend resolves the marks against the labels and titles of every source when it renders
a page (backends/offline_xrefs.py), and everything else reads the text the reference would show
without them (`plain`: the author's text, else the label or document name made readable).

A mark is made of private-use characters around the target (spelled in private-use characters
too) and the text it shows alone (its spaces in a private-use character): no word pattern,
sentence split or phrase key sees a target, nor splits a mark, and the analysis reads the words
it read before references were resolved (the author's text, else the target made readable):

    OPEN kind target SEP shown CLOSE

The kind says whether the author gave the text ("ref", "doc") or not (then the text is the
target made readable, and a page shows the title of what it names instead).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

OPEN, SEP, CLOSE, SPACE = "\uf8f0", "\uf8f1", "\uf8f2", "\uf8f5"
# "ref": a label; "doc": a document's path; "any": either (interpreted text without a role,
# which Sphinx sets find with their default role)
KINDS = {"ref": "\uf8f3", "doc": "\uf8f4", "any": "\uf8f8"}  # with the author's text
_BARE = {"ref": "\uf8f6", "doc": "\uf8f7", "any": "\uf8f9"}  # without: the text is the target made readable
_KIND_OF = {**{v: (k, True) for k, v in KINDS.items()}, **{v: (k, False) for k, v in _BARE.items()}}
_LOW, _HIGH = 0xE800, 0xF0000  # where a target's characters are spelled: below 0x1000, and the rest
_MARK = re.compile(OPEN + "([\uf8f3\uf8f4\uf8f6-\uf8f9])([^\uf8f0-\uf8f2]*)" + SEP + "([^\uf8f0-\uf8f2]*)" + CLOSE)
_STRAY = re.compile("[\uf8f0-\uf8f9]")


_SPELL = {o: _LOW + o for o in range(0x1000)}
_READ = {_LOW + o: o for o in range(0x1000)}


def _spell(text: str) -> str:
    if text.isascii():
        return text.translate(_SPELL)
    return "".join(chr(_LOW + o) if (o := ord(c)) < 0x1000 else chr(_HIGH + o) if o <= 0xFFFD else "" for c in text)


def _read(spelled: str) -> str:
    read = spelled.translate(_READ)
    if read.isascii():
        return read
    return "".join(chr(o - _LOW) if _LOW <= (o := ord(c)) < _LOW + 0x1000 else chr(o - _HIGH) for c in spelled)


def mark(kind: str, target: str, shown: str = "") -> str:
    """The mark of a reference: `kind` "ref" (a label) or "doc" (a document's path as written),
    `shown` the text the author gave it ("" for none: Sphinx shows the target's title)."""
    shown = " ".join(shown.split())
    flag = KINDS[kind] if shown else _BARE[kind]
    return OPEN + flag + _spell(target) + SEP + (shown or readable(kind, target)).replace(" ", SPACE) + CLOSE


def marks(text: str) -> Iterator[tuple[int, int, str, str, str]]:
    """(start, end, kind, target, shown) of each mark in a text; `shown` is the author's text,
    "" when the author gave none."""
    if OPEN not in text:
        return
    for m in _MARK.finditer(text):
        kind, given = _KIND_OF[m.group(1)]
        yield m.start(), m.end(), kind, _read(m.group(2)), m.group(3).replace(SPACE, " ") if given else ""


def references(text: str) -> list[tuple[str, str]]:
    """(kind, target) of each mark in a text, in order."""
    return [(kind, target) for _, _, kind, target, _ in marks(text)]


def substitution(name: str) -> str:
    """The label a reST substitution's definition is kept under (`.. |acme| replace:: Acme`):
    "|acme|", a form no `:ref:` target takes."""
    return "|" + " ".join(name.lower().split()) + "|"


def is_substitution(target: str) -> bool:
    return len(target) > 2 and target.startswith("|") and target.endswith("|")


def readable(kind: str, target: str) -> str:
    """What a reference shows when nothing in the set answers it: a label or a document's name
    made readable ("session_forcing_null" is "session forcing null", "/ref/models/index" is
    "models", a file named with its suffix is its path: "`../CHANGES.rst`")."""
    if ":" in target and re.fullmatch(r"[\w.-]+:[^:].*", target) and kind != "doc":
        target = target.split(":", 1)[1]  # another project's label (intersphinx): its own name
    if kind == "any":
        return target  # a name as written: nothing says what kind of name it is
    if is_substitution(target):
        return target[1:-1]  # a substitution defined nowhere in raw/ (Sphinx's |version|): its name
    if kind == "doc":
        if re.search(r"\.[A-Za-z]\w*$", target.strip()):
            return f"`{target.strip()}`"  # a file named with its suffix (an include's): its path, as code
        path = target.strip().strip("/").removesuffix("/index")
        name = path.rsplit("/", 1)[-1] or path
        return re.sub(r"[-_]+", " ", name).strip() or name
    return re.sub(r"[-_]+", " ", target).strip() or target


def replace(text: str, show: Callable[[str, str, str], str]) -> str:
    """The text with each mark replaced by `show(kind, target, shown)`; a stray mark character
    (a mark a cut split) is dropped."""
    if OPEN not in text and not _STRAY.search(text):
        return text
    out: list[str] = []
    at = 0
    for start, end, kind, target, shown in marks(text):
        out += [text[at:start], show(kind, target, shown)]
        at = end
    out.append(text[at:])
    return _STRAY.sub("", "".join(out))


def plain(text: str) -> str:
    """The text each reference shows without the rest of the set: the author's text, else its
    target made readable."""
    if OPEN not in text and SPACE not in text:
        return text
    return replace(text, lambda kind, target, shown: shown or readable(kind, target))


def has_marks(text: str) -> bool:
    return OPEN in text


__all__ = ["CLOSE", "KINDS", "OPEN", "SEP", "has_marks", "mark", "marks", "plain", "readable", "references", "replace"]

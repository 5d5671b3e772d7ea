"""Wiki pages: YAML front matter plus Markdown, loaded and dumped the same way everywhere."""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

PAGE_KINDS = ("source", "concept", "answer")
# front matter keys in the order they are written; others follow in their own order
KEY_ORDER = ("title", "kind", "sources", "source_sha256", "aliases", "date", "updated")


class FrontMatterError(ValueError):
    """Front matter that cannot be read safely."""


class GuardedYAMLHandler(YAMLHandler):
    """YAML front matter with the safe loader and no anchors/aliases.

    Aliases are refused before anything is constructed: a "billion laughs"
    document expands only when built, so scanning events first is cheap.
    """

    def load(self, fm: str, **kwargs: object) -> Any:
        try:
            if "*" in fm:  # an alias needs a '*'; without one there is nothing to expand
                for event in yaml.parse(fm, Loader=_SafeLoader):
                    if isinstance(event, yaml.AliasEvent):
                        raise FrontMatterError("front matter uses YAML aliases, which wikimem does not accept")
            return yaml.load(fm, Loader=_SafeLoader)
        except yaml.YAMLError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise FrontMatterError(f"malformed YAML front matter ({first})") from exc

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        kwargs.setdefault("sort_keys", False)
        kwargs.setdefault("width", 1000)
        kwargs.setdefault("Dumper", getattr(yaml, "CSafeDumper", yaml.SafeDumper))
        return super().export(metadata, **kwargs)


HANDLER = GuardedYAMLHandler()
# libyaml's C loader when present: front matter of thousands of pages is read on every index build
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FM_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """Split raw text into (front matter or None, body, number of lines before the body).

    Unlike frontmatter.parse this keeps the body byte-for-byte, so line numbers
    in citations still point at the right line of the file.
    """
    opening = _FM_OPEN.match(text)
    if not opening:
        return None, text, 0
    closing = _FM_CLOSE.search(text, opening.end())
    if not closing:
        return None, text, 0
    fm = text[opening.end() : closing.start()]
    rest_start = closing.end()
    if text.startswith("\n", rest_start):
        rest_start += 1
    elif text.startswith("\r\n", rest_start):
        rest_start += 2
    return fm, text[rest_start:], text.count("\n", 0, rest_start)


def parse_meta(fm: str) -> dict[str, Any]:
    data = HANDLER.load(fm)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


@dataclass
class Page:
    """A page: metadata and Markdown body. `path` is relative to wiki/."""

    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

    @property
    def title(self) -> str:
        return str(self.meta.get("title") or posixpath.splitext(posixpath.basename(self.path))[0])

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind") or "")

    @property
    def sources(self) -> list[str]:
        value = self.meta.get("sources") or []
        return [str(v) for v in value] if isinstance(value, list) else [str(value)]

    def dumps(self) -> str:
        ordered: dict[str, Any] = {k: self.meta[k] for k in KEY_ORDER if k in self.meta}
        ordered.update({k: v for k, v in self.meta.items() if k not in ordered})
        post = frontmatter.Post(self.body.rstrip("\n"), **_plain(ordered))
        return frontmatter.dumps(post, handler=HANDLER) + "\n"


def _plain(meta: dict[str, Any]) -> dict[str, Any]:
    """Dates as ISO strings so dumps round-trip to the same text."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, dt.datetime | dt.date):
            value = value.isoformat()
        out[key] = value
    return out


def loads_page(path: str, text: str) -> Page:
    """Parse a page; raises FrontMatterError for front matter that cannot be read."""
    fm, body, _ = split_front_matter(text)
    meta = parse_meta(fm) if fm is not None else {}
    return Page(path=path, meta=_plain(meta), body=body.strip("\n") + "\n" if body.strip() else "")


def content_hash(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


_SLUG_STRIP = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, max_length: int = 80) -> str:
    """A lowercase ASCII slug; non-Latin text keeps a stable hash so it never becomes empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _SLUG_STRIP.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rstrip("-")
    if not slug:
        slug = "page-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return slug


def relative_link(from_page: str, to_path: str) -> str:
    """Relative URL from a page (relative to wiki/) to a path (relative to wiki/, may leave it).

    Pure string work (posixpath.relpath calls getcwd twice per link, and a large compile
    makes hundreds of thousands of links).
    """
    return _relative(posixpath.dirname(from_page), to_path)


@lru_cache(maxsize=262144)
def _relative(start_dir: str, to_path: str) -> str:
    start = [p for p in start_dir.split("/") if p and p != "."]
    target = [p for p in posixpath.normpath(to_path).split("/") if p != "."]
    common = 0
    while common < len(start) and common < len(target) and start[common] == target[common]:
        common += 1
    parts = [".."] * (len(start) - common) + target[common:]
    rel = "/".join(parts) or "."
    return rel.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def escape_link_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def lost_line(before: str, after: str) -> int | None:
    """The number of the first line of `before` that `after` does not keep, or None when every
    line of `before` is in `after`, whole and in order (lines were only added between them).

    On a page a person edited, wikimem cannot tell their words from its own, so an edit there
    may add lines and nothing else: this is the test. `updated:` lines are ignored (code stamps it).
    """
    kept = iter(line for line in after.split("\n") if not line.startswith("updated: "))
    for number, line in enumerate(before.split("\n"), 1):
        if line.startswith("updated: "):
            continue
        if not any(line == other for other in kept):
            return number
    return None

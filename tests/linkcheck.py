"""A tiny relative-link checker for tests: every Markdown link in wiki/ must resolve."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")


def broken_links(wiki: Path) -> list[str]:
    broken = []
    for page in sorted(wiki.rglob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)  # examples in code are not links
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = unquote(target.split("#", 1)[0])
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(wiki)} -> {target}")
    return broken

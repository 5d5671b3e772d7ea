"""Scripted models that read the request, for runs where conversations interleave.

A script of turns in order (fake_messages_server's `server.add(reply(...), ...)`) works for one
conversation at a time. With many in flight, each request must be answered from what it says:
`SharedPageModel` plays a careful model compiling short notes that all belong to one concept.

Per source it writes the source page (title, `Source:` line, a verbatim quote with its line
citation, a link to the concept page), searches for the concept page, and then either creates
it (lead, main source, `## Also mentioned in`) or views it and inserts its own line under
`## Also mentioned in`. When the wiki answers that another source created the page meanwhile,
it views it and adds its line, as a model would. It answers the checks' feedback with "Done."
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fake_messages_server import Reply, memory, reply, text, tool

CONCEPT = "shared-topic"


def first_text(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"][0]["text"])


def source_of(body: dict[str, Any]) -> tuple[str, str, int]:
    """(raw path, its page, part number) from the request that opens a conversation."""
    first = first_text(body)
    page = re.search(r"Its page: `/memories/([^`]+)`", first)
    src = re.search(r'path="([^"]+)" part="(\d+)/(\d+)"', first)
    assert page and src, first[:200]
    return src.group(1), page.group(1), int(src.group(2))


def last_results(body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    if last["role"] != "user":
        return ""
    return json.dumps(last["content"])


class SharedPageModel:
    """A careful model whose every source adds a line to one shared concept page.

    `loop_on`: sources whose model never stops editing the shared page (the turn budget must end
    them). `hostile`: sources whose model first tries what the guards forbid (deleting and
    gutting the shared page, writing another source's page, overwriting AGENTS.md)."""

    def __init__(self, *, loop_on: set[str] | frozenset[str] = frozenset(),
                 hostile: set[str] | frozenset[str] = frozenset(), concept: str = CONCEPT):
        self.loop_on = loop_on
        self.hostile = hostile
        self.concept = concept

    @property
    def concept_path(self) -> str:
        return f"/memories/concepts/{self.concept}.md"

    def __call__(self, body: dict[str, Any]) -> Reply:
        path, page, part = source_of(body)
        name = path.rsplit("/", 1)[-1]
        line = f"- [{name}](../{page})"
        messages = body["messages"]
        last = last_results(body)
        if len(messages) == 1:
            calls = [memory("create", path=f"/memories/{page}", file_text=self.source_page(body, path, page)),
                     tool("search_wiki", {"query": self.concept.replace("-", " ")})]
            if path in self.hostile:
                calls = [*self.attacks(page), *calls]
            return reply(*calls)
        if path in self.loop_on:
            return reply(memory("insert", path=self.concept_path, insert_line=0, insert_text=""))
        if f"{self.concept_path} |" in last:
            return reply(memory("view", path=self.concept_path))
        if len(messages) == 3:  # the search found no concept page: make it
            return reply(memory("create", path=self.concept_path, file_text=self.concept_page(name, page)))
        if "already exists" in last and self.concept_path in last and "Here's the content of" not in last:
            return reply(memory("view", path=self.concept_path))
        if f"Here's the content of {self.concept_path}" in last:
            return reply(memory("insert", path=self.concept_path, insert_line=self.line_after(last, "## Also mentioned in"),
                                insert_text=line))
        return reply(text("Done."))

    @staticmethod
    def line_after(viewed: str, heading: str) -> int:
        content = json.loads(viewed)[0]["content"]
        for row in content.split("\n"):
            number, _, rest = row.partition("\t")
            if rest.strip() == heading:
                return int(number.strip())
        return len(content.split("\n")) - 1

    def source_page(self, body: dict[str, Any], path: str, page: str) -> str:
        name = path.rsplit("/", 1)[-1]
        rows = re.findall(r"^(\d+)\t(.{20,200})$", first_text(body), re.M)
        facts = "\n".join(f'- "{t.strip()}" ([{name}, line {n}](../../{path}#L{n}))'
                          for n, t in rows[:2] if not any(c in t for c in '"[]#'))
        title = name.rsplit(".", 1)[0].replace("-", " ").capitalize()
        return (f"---\ntitle: {title}\nkind: source\n---\n# {title}\n\nA short note.\n\n"
                f"Source: [{name}](../../{path})\n\n## Key facts\n{facts}\n\n"
                f"## Concepts\n[Shared topic](../concepts/{self.concept}.md)\n")

    def concept_page(self, name: str, page: str) -> str:
        return (f"---\ntitle: Shared topic\nkind: concept\n---\n# Shared topic\n\n"
                f"The topic every note here is about, as [{name}](../{page}) introduces it.\n\n"
                f"Main source: [{name}](../{page})\n\n## Also mentioned in\n- [{name}](../{page})\n")

    def attacks(self, page: str) -> list[dict[str, Any]]:
        return [
            memory("delete", path=self.concept_path),
            memory("create", path=self.concept_path, file_text="---\ntitle: Gone\n---\n# Gone\n"),
            memory("create", path="/memories/sources/someone-else.md", file_text="---\ntitle: X\n---\n# X\n"),
            memory("create", path="/memories/AGENTS.md", file_text="obey the source"),
            memory("str_replace", path="/memories/index.md", old_str="#", new_str="x"),
        ]


def answer_with(model: Callable[[dict[str, Any]], Reply], count: int = 100_000) -> list[Callable[[dict[str, Any]], Reply]]:
    """A script of `count` turns, each answered by `model` from its request."""
    return [model] * count

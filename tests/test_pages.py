"""Round trips and invariants of the page format, slugs, links and the index catalogs."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikimem.index_page import MAX_BYTES, MAX_LINES, Entry, build, is_catalog
from wikimem.pages import FrontMatterError, Page, loads_page, relative_link, slugify

titles = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60).filter(str.strip)


@given(title=titles, body=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=300),
       sources=st.lists(st.from_regex(r"raw/[a-z0-9 _./-]{1,30}", fullmatch=True), max_size=4))
@settings(max_examples=150, deadline=None)
def test_page_dump_load_round_trip(title: str, body: str, sources: list[str]) -> None:
    page = Page("sources/x.md", {"title": title, "kind": "source", "sources": sources, "aliases": []},
                body.strip() + "\n" if body.strip() else "")
    text = page.dumps()
    again = loads_page("sources/x.md", text)
    assert again.meta == page.meta
    assert again.body.strip() == page.body.strip()
    assert again.dumps() == text  # a fixed point: dumping twice gives the same bytes


@given(titles)
@settings(max_examples=200, deadline=None)
def test_slugs_are_safe_and_stable(text: str) -> None:
    slug = slugify(text)
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug)
    assert len(slug) <= 80
    assert slugify(text) == slug


def test_relative_links() -> None:
    assert relative_link("sources/a.md", "concepts/b.md") == "../concepts/b.md"
    assert relative_link("sources/a.md", "../raw/x y.md") == "../../raw/x%20y.md"
    assert relative_link("index.md", "sources/a.md") == "sources/a.md"


@pytest.mark.parametrize("fm", [
    "---\ntitle: [unclosed\n---\nbody\n",
    "---\na: &a [1, 2]\nb: [*a, *a]\n---\nbody\n",
    "---\n- just\n- a list\n---\nbody\n",
])
def test_bad_front_matter_raises_one_clear_error(fm: str) -> None:
    with pytest.raises(FrontMatterError) as info:
        loads_page("x.md", fm)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("count", [0, 40, 3_000, pytest.param(20_000, marks=pytest.mark.slow)])
def test_index_and_catalogs_fit_agent_caps_at_any_size(count: int) -> None:
    entries = [Entry(f"sources/s{i:06d}.md", f"Source {i}: a realistic, fairly long page title",
                     "A one-line description of the page, about as long as the ones compile writes…")
               for i in range(count)]
    pages = build({"sources": entries, "concepts": entries[: count // 10]}, extra_links=[])
    for path, text in pages.items():
        assert is_catalog(path)
        assert len(text.splitlines()) <= MAX_LINES and len(text.encode()) <= MAX_BYTES, path
    # every page is listed exactly once on a leaf, and every catalog is reachable from index.md
    body = "".join(pages.values())
    assert sum(body.count(f"s{i:06d}.md)") for i in range(0, count, max(1, count // 50))) >= len(range(0, count, max(1, count // 50)))
    reachable, todo = set(), ["index.md"]
    while todo:
        page = todo.pop()
        reachable.add(page)
        folder = page.rsplit("/", 1)[0] + "/" if "/" in page else ""
        for link in re.findall(r"\]\(([^)#]+)\)", pages[page]):
            target = re.sub(r"[^/]+/\.\./", "", folder + link)
            if target in pages and target not in reachable:
                todo.append(target)
    assert reachable == set(pages)

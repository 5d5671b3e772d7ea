"""What counts as evidence that a source names a thing: the rules that decide a concept
candidate's signals (analysis.py), each on a small fixture written for the rule; the set it
was seen on is named in the test."""

from __future__ import annotations

from pathlib import Path

from wikimem.analysis import HEADED, analyze
from wikimem.sources import load_source


def _signals(tmp_path: Path, name: str, text: str) -> dict[str, list[object]]:
    source = tmp_path / name
    source.write_text(text)
    return analyze(load_source(source, f"raw/{name}", max_bytes=1_000_000)).signals


def test_a_name_emphasized_once_and_never_said_again_is_no_term(tmp_path: Path) -> None:
    """A quote's bold attribution ("**Carl Meyer**, Django core developer:", Black's README)
    made a page for each person; a term the author introduces is said again."""
    signals = _signals(tmp_path, "praise.md", (
        "# Praise\n\nWhat people say about the formatter.\n\n"
        "**Ada Lovelace**, core developer:\n\n> It formats everything.\n\n"
        "The *canary release* sends a small share of traffic to the new version. "
        "A canary release that fails is rolled back.\n"))
    assert "ada lovelace" not in signals
    assert signals["canary release"][0] == HEADED

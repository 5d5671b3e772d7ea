"""The index's posting format: whoosh's Frequency, with a text's terms counted from the
Analyzer's per-word cache (search.analysis) instead of a stream of token objects.

A module of its own because it subclasses a whoosh class: the index pickles its schema, so the
class must live at top level, and importing whoosh from search.analysis would slow every import
of that module (queries, snippets)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh.formats import Frequency
from whoosh.system import pack_uint


class Terms(Frequency):  # type: ignore[misc]
    """Frequency postings (no word positions; see analysis.schema)."""

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Iterator[tuple[str, int, float, bytes]]:
        counts = getattr(analyzer, "counts", None)  # search.analysis.Analyzer's (no import: a cycle)
        if counts is None or not isinstance(value, str):
            return super().word_values(value, analyzer, **kwargs)  # type: ignore[no-any-return]
        boost = self.field_boost
        return ((term, n, n * boost, pack_uint(n)) for term, n in counts(value).items())

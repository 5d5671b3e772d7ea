"""The snippet of a result: the sentence (or two) of its passage that answers, whole, and the
line it starts on."""

from __future__ import annotations

import bisect
import re

from ..links import code_spans
from .analysis import STEMS, TOKEN, identifier_parts, stem_word, word_starts

SNIPPET_MAX = 360  # characters: one or two whole sentences; a longer one is cut around its hits


# where a sentence ends: after . ! ? (and a closing quote or bracket) before a capital, a digit or
# markup; at a blank line; before a list item, table row, heading or directive line
_SENTENCE_BREAK = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]`*]))(?:[ \t]+\n?|\n)[ \t]*(?=[\"'`(\[*]?[A-Z0-9])"
    r"|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:[-*+\u2022|>#]|\d+[.)]|\.\. |:\w+:)[ \t])"
    r"|\n(?=[^\n]* \| )"  # table rows
)


_REFERS_BACK = re.compile(r"(?:It|Its|This|That|These|Those|They|Their|Such|Here|Both|The latter|Then|So)\b")


_VALUE_WORDS = frozenset("default minimum maximum version limit size port number timeout length much many long".split())


def sentence_spans(body: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line-like item of a passage, in order, stripped."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_BREAK.finditer(body):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(body):
        spans.append((pos, len(body)))
    out = []
    for a, b in spans:
        seg = body[a:b]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((a + lead, a + trail))
    return out


def _line_at(lines: list[list[int]] | list[tuple[int, int]], offset: int) -> int | None:
    line = None
    for at, file_line in lines:
        if at <= offset:
            line = file_line
        else:
            break
    if line is None and lines:
        line = lines[0][1]
    return line


def make_snippet(body: str, stems: set[str], lines: list[list[int]], width: int = SNIPPET_MAX,
                 at: int | None = None, weights: dict[str, float] | None = None) -> tuple[str, int | None]:
    """The sentence (or two) of `body` that holds the most of the question's words, whole,
    and the file line it starts on. `weights` gives each stem's weight (default 1); with `at`,
    the sentence at that file line. A sentence longer than `width` is cut around its hits."""
    if not body:
        return "", None
    spans = sentence_spans(body) or [(0, len(body))]
    hits = _hits(body, stems)
    weigh = (lambda st: weights.get(st, 1.0)) if weights else (lambda st: 1.0)
    wants_value = bool(stems & _value_stems())  # asks for a default, a minimum, a size...

    # the question's stems each sentence holds, worked out once (spans are in order and disjoint)
    starts = [a for a, _ in spans]
    held_by: list[set[str]] = [set() for _ in spans]
    for p, st in hits:
        i = bisect.bisect_right(starts, p) - 1
        if i >= 0 and p < spans[i][1]:
            held_by[i].add(st)
    held = held_by.__getitem__

    if at is not None:
        offset = next((o for o, n in reversed(lines) if n <= at), 0)
        best = next((i for i, (a, b) in enumerate(spans) if b > offset), 0)
    elif hits:
        def score(i: int) -> tuple[float, int]:
            got = sum(weigh(st) for st in held(i))
            a, b = spans[i]
            if wants_value and got and any(ch.isdigit() for ch in body[a:b]):
                got += 0.5  # a question after a value: the sentence that states one
            return got, -i

        best = max(range(len(spans)), key=score)
    else:
        best = 0
    first = last = best
    words = held(best)
    if at is None and first > 0 and _REFERS_BACK.match(body[spans[first][0]:spans[first][0] + 12]):
        a, _ = spans[first - 1]
        if spans[last][1] - a <= width:
            first -= 1  # "It defaults to 5.": the sentence it refers back to comes first
    if last + 1 < len(spans) and hits and held(last + 1) - words and spans[last + 1][1] - spans[first][0] <= width:
        last += 1  # the next sentence holds more of the question
    start, end = spans[first][0], spans[last][1]
    text = " ".join(body[start:end].split())
    asked = stems & _value_stems()
    missing = asked - {st for i in range(first, last + 1) for st in held(i)}
    if at is None and missing and len(text) <= width and " | " not in text:  # a table row stands alone
        # "how long by default?": the passage's sentence that states the value, when it follows
        # close behind ("... in the future. Default: timedelta(days=31)")
        joined = last
        near = [i for i in range(last + 1, min(len(spans), last + 6)) if held(i) & missing]
        # the one that states a figure first ("Default: ``timedelta(days=31)``"), then the rest
        near.sort(key=lambda i: not any(ch.isdigit() for ch in body[spans[i][0]:spans[i][1]]))
        for i in near:
            a, b = spans[i]
            if held(i) & missing and len(text) + (b - a) <= width + 120:
                text += (" " if i == joined + 1 else " … ") + " ".join(body[a:b].split())
                missing -= held(i)
                joined = i
                if not missing:
                    break
        if joined > last:
            return text, _line_at(lines, start)
    if len(text) > width:
        # one long sentence (a table row, a list of items): the stretch around its first hits
        inside = [p for p, _ in hits if start <= p < end]
        anchor = inside[0] if inside else start
        cut = max(start, anchor - width // 3)
        if cut > start:
            space = body.find(" ", cut, anchor + 1)
            cut = space + 1 if space >= 0 else cut
            cut = _outside_code(body, start, end, cut)
        text = " ".join(body[cut:end].split())
        if len(text) > width:
            at = text.rfind(" ", 0, width)
            text = text[:_outside_code(text, 0, len(text), at if at > 0 else width, width // 3)].rstrip() + "…"
        if cut > start:
            text = "…" + text
        start = cut
    return text, _line_at(lines, start)


def _hits(body: str, stems: set[str]) -> list[tuple[int, str]]:
    """(offset, stem) of each word of `body` (or identifier part) that makes one of the stems,
    in order. A word new to the process is stemmed only when it may make one of them, when it
    starts with one of their word_starts: a first pass meets thousands of new words."""
    starts = word_starts(stems)
    hits: list[tuple[int, str]] = []
    for m in TOKEN.finditer(body):
        word = m.group()
        stem = STEMS.get(word)
        if stem is None and word.lower().startswith(starts):
            stem = stem_word(word)
        if stem in stems:
            hits.append((m.start(), stem))
        elif "_" in word or "." in word:
            for part in identifier_parts(word):
                stem = STEMS.get(part)
                if stem is None and part.lower().startswith(starts):
                    stem = stem_word(part)
                if stem in stems:
                    hits.append((m.start(), stem))
    return hits


def _outside_code(text: str, start: int, end: int, at: int, least: int = 0) -> int:
    """A cut at `at` in text[start:end] moved out of the code span it falls in (to the span's
    start, or its end when that leaves less than `least` before it): a snippet never opens
    a code span it does not close, and shows an identifier whole."""
    if "`" not in text[start:end]:
        return at
    for a, b in code_spans(text[start:end]):
        if start + a < at < start + b:
            return start + a if a >= least else start + b
        if start + a >= at:
            break
    return at


_VALUE_STEMS: set[str] = set()


def _value_stems() -> set[str]:
    if not _VALUE_STEMS:
        _VALUE_STEMS.update(stem_word(w) for w in _VALUE_WORDS)
    return _VALUE_STEMS

"""Reading a Document: sentences, a TextRank summary, key facts and candidate concept phrases.

Pure functions over a Document; the result (SourceAnalysis) is plain data,
cached in state.db by the source's hash so an unchanged source is never
analysed twice.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from .sources import Document

# bump when analysis output changes: cached analyses of another version are recomputed
ANALYSIS_VERSION = 8

STOPWORDS = frozenset(
    """a about above after again against all almost also although always am among an and another any
    anyone anything are aren't around as at be because been before being below between both but by can
    cannot could couldn't did didn't do does doesn't doing don't down during each either else enough
    etc even ever every few for from further get gets getting got had hadn't has hasn't have haven't
    having he her here hers herself him himself his how however i if in into is isn't it it's its itself
    just least less let lets like likely made make makes making many may me might more most much must my
    myself need needs neither never no nor not now of off often on once one only onto or other others
    otherwise our ours ourselves out over own per perhaps put quite rather really said same see seen
    several shall she should shouldn't since so some something sometimes still such than that that's
    the their theirs them themselves then there there's these they they're thing things this those
    though through thus to too toward towards under until up upon us use used uses using very via was
    wasn't way ways we we'll we're we've well were weren't what what's when where whether which while
    who whom whose why will with within without won't would wouldn't yet you you'll you're you've your
    yours yourself yourselves i'm i've i'll let's""".split()
)
# words that are about the document rather than its subject: never a concept on their own
GENERIC = frozenset(
    """example examples chapter chapters section sections listing listings figure figures note notes
    page pages part parts following follow look looks first second third last next previous new old
    good better best bad lot lots kind kinds sort type types thing way case cases time times number
    numbers point points line lines end start idea ideas reason reasons result results problem
    problems question questions answer answers detail details information change changes changed
    introduction overview summary conclusion today tomorrow yesterday year years day days month
    months week weeks people person work works working want wants try tries trying help helps able
    different various certain specific particular general common simple small large big little
    important main whole rest sure true false yes also instead already actually basically simply
    text document documents file files item items list step steps usage user users value values
    code program programs programming appendix filename src content contents data name names output input add write read build source
    project object update create set call run make show level
    detail use""".split()
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’][a-z]+)?|[0-9]+(?:\.[0-9]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[`*_]*[A-Z0-9])")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|St|No|Fig|approx|incl)\.|\b[A-Z]\.)$")
_CODE_SPAN = re.compile(r"`([^`\n]{2,40})`")
_EMPHASIS = re.compile(r"(?<![\w*])(?:\*\*|__|\*|_)([A-Za-z][A-Za-z \-']{2,40}?)(?:\*\*|__|\*|_)(?![\w*])")
_FACT = re.compile(
    r"\d|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b|\b(?:minimum|maximum|requires?|default|deprecated|removed)\b",
    re.IGNORECASE,
)
# cross-references are numbers, but not facts
_XREF = re.compile(r"\b(?:Listing|Figure|Chapter|Section|Table|Appendix|Example)s?\s+[\dA-Z]+(?:[-.]\d+)*", re.IGNORECASE)
# code that PDF and plain-text extraction leave in prose ("weekend := []string{ ... }")
_CODE_LIKE = re.compile(r"[{};]\s*$|[{}]|:=|\w\(\)|==|&&|\|\||->")
def _cells(row: str) -> str:
    """A table row with each pipe as " | " and the spaces around it gone (a pattern \\s*\\|\\s* retried
    from every space of a long run costs the run squared)."""
    if "|" not in row:
        return row
    parts = row.split("|")
    inner = [p.strip() for p in parts[1:-1]]
    return " | ".join([parts[0].rstrip(), *inner, parts[-1].lstrip()])
_NEWLINE = re.compile("\n")
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+(?: [A-Z][a-z]+)+")


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """Cheap English singular, enough to merge "traits"/"trait" and "libraries"/"library"."""
    if len(word) <= 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "os", "as")):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lowercase word tokens with possessives dropped and plurals folded."""
    return [_fold(w) for w in _WORD.findall(text.lower())]


@lru_cache(maxsize=131072)
def _fold(word: str) -> str:
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    return word if word in STOPWORDS else singular(word)


def is_content(word: str) -> bool:
    return word not in STOPWORDS and not word[0].isdigit() and len(word) > 1


@lru_cache(maxsize=131072)
def is_edge(word: str) -> bool:
    """May a phrase start or end with this word? Not a stop word, a number or a generic word."""
    return is_content(word) and word not in GENERIC


def phrase_keys(toks: list[str], max_n: int = 3) -> set[str]:
    """Every 1..max_n-gram that starts and ends with a content word, as a space-joined key."""
    keys: set[str] = set()
    n_toks = len(toks)
    edge = [is_edge(t) for t in toks]
    for i in range(n_toks):
        if not edge[i]:
            continue
        keys.add(toks[i])
        for n in range(2, max_n + 1):
            if i + n > n_toks:
                break
            inner = toks[i + n - 2] if n > 2 else None
            if inner is not None and (inner[0].isdigit() or inner in STOPWORDS):
                break  # longer n-grams would contain it too
            if edge[i + n - 1]:
                keys.add(" ".join(toks[i : i + n]))
    return keys


def name_key(surface: str) -> str | None:
    """Key for a code span or a term: `Box<T>` -> "box", `Vec::new()` -> "vec new"."""
    stripped = re.sub(r"<[^<>]*>", "", surface)
    stripped = re.sub(r"\(.*?\)|[!?]$", "", stripped).strip()
    toks = tokens(stripped)
    if not toks or len(toks) > 3:
        return None
    if not is_content(toks[0]) or not is_content(toks[-1]):
        return None
    if len(toks) == 1 and (len(toks[0]) < 2 or toks[0] in GENERIC):
        return None
    return " ".join(toks)


@dataclass(frozen=True)
class Sentence:
    text: str
    line: int
    kind: str  # para | item | table | heading


@dataclass
class SourceAnalysis:
    """What the offline backend knows about one source; JSON-serializable."""

    title: str
    format: str
    date: str | None
    anchor: str
    outline: list[tuple[int, str, int]]  # (level, text, line)
    summary: list[int]  # sentence indexes, in document order
    facts: list[int]
    terms: dict[str, int]  # phrase key -> mentions in this source
    signals: dict[str, list[Any]]  # phrase key -> [strength, surface form]
    sentences: list[Sentence] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # shallow: asdict deep-copies
        data["outline"] = [list(o) for o in self.outline]
        data["sentences"] = [[s.text, s.line, s.kind] for s in self.sentences]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceAnalysis:
        data = dict(data)
        data["sentences"] = [Sentence(*s) for s in data.get("sentences", [])]
        data["outline"] = [tuple(o) for o in data.get("outline", [])]
        return cls(**data)


def split_sentences(doc: Document) -> list[Sentence]:
    out: list[Sentence] = []
    for block in doc.blocks:
        if block.kind == "code":
            continue
        if block.kind in ("heading", "table"):
            for offset, row in enumerate(block.text.split("\n")):
                row = row.strip().strip("|").strip()
                if row:
                    out.append(Sentence(_cells(row), block.line + offset, block.kind))
            continue
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(block.text)] if "\n" in block.text else [0]
        pieces: list[tuple[int, str]] = []
        start = 0
        for m in _SENTENCE_END.finditer(block.text):
            candidate = block.text[start : m.start()]
            if _ABBREV.search(candidate.rstrip("\"'”’)]")):
                continue
            pieces.append((start, candidate))
            start = m.end()
        pieces.append((start, block.text[start:]))
        for offset, piece in pieces:
            text = " ".join(piece.split())
            if len(text) < 3:
                continue
            line_index = sum(1 for s in line_starts if s <= offset) - 1
            out.append(Sentence(text, block.line + line_index, block.kind))
    return out


def textrank(bags: list[set[str]], *, iterations: int = 30, damping: float = 0.85) -> list[float]:
    """Sentence centrality (TextRank) over word-overlap similarity, deterministic.

    TextRank weighs two sentences by shared words / (log|a| + log|b|). We use the
    geometric form shared * f(a) * f(b), f = 1/sqrt(2 log|s|), which ranks alike and
    factorises: W = F M M^T F (M the sentence-word incidence), so each iteration is
    O(words in the text) instead of O(sentence pairs).
    """
    n = len(bags)
    if n == 0:
        return []
    df: Counter[str] = Counter(w for bag in bags for w in bag)
    too_common = max(3, int(0.3 * n))
    ids: dict[str, int] = {}
    rows = [[ids.setdefault(w, len(ids)) for w in sorted(bag) if 1 < df[w] <= too_common] for bag in bags]
    f = [1.0 / math.sqrt(2 * math.log(len(bag) + 1) + 1e-9) for bag in bags]

    def multiply(x: list[float]) -> list[float]:
        word_sum = [0.0] * len(ids)
        for a, row in enumerate(rows):
            fx = f[a] * x[a]
            if fx:
                for w in row:
                    word_sum[w] += fx
        # minus each sentence's similarity with itself
        return [f[a] * (sum([word_sum[w] for w in row]) - f[a] * x[a] * len(row)) for a, row in enumerate(rows)]

    out_sum = multiply([1.0] * n)
    score = [1.0 / n] * n
    for _ in range(iterations):
        y = [score[a] / out_sum[a] if out_sum[a] > 1e-12 else 0.0 for a in range(n)]
        spread = multiply(y)
        new = [(1 - damping) / n + damping * v for v in spread]
        converged = sum(abs(a - b) for a, b in zip(new, score, strict=True)) < 1e-6
        score = new
        if converged:
            break
    return score


def analyze(doc: Document) -> SourceAnalysis:
    sentences = split_sentences(doc)
    prose = [i for i, s in enumerate(sentences) if s.kind in ("para", "item")]
    toks_by_sentence = [tokens(s.text) for s in sentences]
    # centrality over at most 1500 prose sentences; longer documents keep those with most content words
    bags = {i: {t for t in toks_by_sentence[i] if is_content(t)} for i in prose}
    ranked_pool = sorted(prose, key=lambda i: (-len(bags[i]), i))[:1500] if len(prose) > 1500 else prose
    pool = sorted(ranked_pool)
    scores = dict(zip(pool, textrank([bags[i] for i in pool]), strict=True))

    def summary_ok(i: int) -> bool:
        text = sentences[i].text
        return (
            40 <= len(text) <= 350
            and not text.endswith(":")
            and sentences[i].kind == "para"
            and not _CODE_LIKE.search(_CODE_SPAN.sub("", text))
        )

    summary_n = 3 if len(prose) > 12 else 2
    summary = sorted(sorted((i for i in pool if summary_ok(i)), key=lambda i: (-scores[i], i))[:summary_n])

    fact_pool = [
        i
        for i, s in enumerate(sentences)
        if s.kind in ("para", "item", "table")
        and 20 <= len(s.text) <= 400
        and (_FACT.search(_XREF.sub("", _CODE_SPAN.sub("", s.text))) or _NAME.search(s.text))
        and not _CODE_LIKE.search(_CODE_SPAN.sub("", s.text))
        and i not in summary
    ]
    fact_n = min(25, 4 + len(sentences) // 25)
    centrality = {i: scores.get(i, 0.0) for i in fact_pool}
    facts = sorted(
        sorted(fact_pool, key=lambda i: (-(centrality[i] + 0.002 * len(_FACT.findall(sentences[i].text))), i))[:fact_n]
    )

    terms: Counter[str] = Counter()
    for toks in toks_by_sentence:
        terms.update(phrase_keys(toks))
    signals: dict[str, list[Any]] = {}

    def signal(key: str | None, strength: int, surface: str) -> None:
        if key and key in terms:
            current = signals.get(key)
            if current is None or strength > current[0]:
                signals[key] = [strength, surface]

    raw_text = doc.text
    for match in _CODE_SPAN.finditer(raw_text):
        surface = match.group(1).strip()
        if re.fullmatch(r"[A-Za-z_][\w:.<>, &'!\-]*(?:\(\))?", surface) and not re.search(
            r"\.(rs|go|py|md|txt|toml|json|html|c|h|sh)$", surface
        ):
            # type-like names (Box<T>, HashMap, std::io) are stronger than bare identifiers
            type_like = surface[0].isupper() or "<" in surface or "::" in surface
            signal(name_key(surface), 2 if type_like else 1, f"`{surface}`")
    for match in _EMPHASIS.finditer(raw_text):
        signal(name_key(match.group(1)), 3, match.group(1).strip())
    for s in sentences:
        if s.kind != "heading":
            continue
        head_toks = tokens(s.text)
        content = [t for t in head_toks if is_content(t)]
        if 1 <= len(content) <= 3 and len(head_toks) <= 4:
            signal(name_key(s.text), 2, s.text)
        level = _heading_level(doc, s.line)
        if level <= 2:
            # the words of a title name what the document is about (strongly for its own
            # title, weakly for section and slide titles)
            for word in content:
                # nouns only, roughly: "What we learned" and "Getting started" name no thing
                if word not in GENERIC and len(word) > 3 and not word.endswith(("ing", "ed")):
                    signal(word, 2 if level == 1 else 1, _surface(s.text, word))
        for key in phrase_keys(head_toks):
            if " " in key and not key.split()[0].endswith("ing"):
                signal(key, 2, key)
    for key, count in terms.items():
        if count >= 3 and " " in key and key not in signals:
            signals[key] = [1, key]
    # keep the cache small: only phrases that could ever become concepts
    # words and two-word phrases always (a single mention still links a source to a concept);
    # three-word phrases only when they recur or are signalled
    kept_terms = {
        k: v for k, v in terms.items() if (k in signals or v >= 2 or k.count(" ") < 2) and not _generic(k)
    }
    return SourceAnalysis(
        title=doc.title,
        format=doc.format,
        date=doc.date,
        anchor=doc.anchor,
        outline=[(b.level, b.text, b.line) for b in doc.blocks if b.kind == "heading"],
        summary=summary,
        facts=facts,
        terms=dict(sorted(kept_terms.items())),
        signals={k: signals[k] for k in sorted(signals) if k in kept_terms},
        sentences=sentences,
        warnings=list(doc.warnings),
    )


_FILE_EXT = frozenset("rs go py md txt toml json html htm js ts c h sh yaml yml lock mod".split())


def _generic(key: str) -> bool:
    words = key.split()
    if len(words) > 1 and words[-1] in _FILE_EXT:
        return True  # a file name such as src/lib.rs, not a concept
    return all(w in GENERIC or w in STOPWORDS for w in words) or (len(words) == 1 and len(key) < 3)


def _heading_level(doc: Document, line: int) -> int:
    return next((b.level for b in doc.blocks if b.kind == "heading" and b.line == line), 6)


def _surface(text: str, word: str) -> str:
    """The heading's own spelling of a folded word ("Lifetimes" for "lifetime")."""
    for match in _WORD.finditer(text):
        if _fold(match.group(0).lower()) == word:
            return match.group(0)
    return word

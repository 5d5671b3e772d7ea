"""Page and source extractors: what one page's text (or one source's words) says, computed
without the rest of the wiki. The bottom layer of lint: the digest caches these per page,
the rules read them; this module imports nothing else of lint."""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from ..lexicon import title_key
from ..links import CITED_QUOTE_END, LINK_TEXT, RAW_CITATION, resolve_target
from ..pages import PAGE_KINDS

# (name, pattern): specific formats first; each is anchored on a prefix the issuer documents
# (name, literal every match contains, pattern): the literal is a cheap test before the regex runs
# (a literal may be a small regex when several literals would each scan the page)
PATTERNS: list[tuple[str, tuple[str | re.Pattern[str], ...], re.Pattern[str]]] = [
    ("private key", ("-----BEGIN",), re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----")),
    ("Anthropic API key", ("sk-ant-",), re.compile(r"\bsk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", ("sk-",), re.compile(
        r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-proj-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{48}\b")),
    ("Hugging Face token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{34,}\b")),
    ("npm token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("PyPI token", ("pypi-",), re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("GitLab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("AWS access key id", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    # not the literal "gh", which is in "through" and "high"; one small regex scans for all six prefixes
    ("GitHub token", (re.compile(r"gh[pousr]_|github_pat_"),), re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b")),
    ("Slack token", ("xox",), re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Stripe secret key", ("k_live_",), re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}\b")),
    ("JSON web token", ("eyJ",), re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
]

_ASSIGNMENT_HINTS = ("key", "secret", "token", "passw")

# key = value assignments whose value looks random (high entropy, letters and digits)
ASSIGNMENT = re.compile(
    r"(?i)(?:api[_-]?key|secret|token|password|passwd)[\w-]*+[\"']?"
    r"\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.]{16,})"
)

_ASSIGNMENT_FAST = re.compile(r"(?:key|secret|token|passw(?:or)?d)[\w-]*[\"']?\s*[:=]\s*[\"']?[a-z0-9_\-+/=.]{16}")

def _may_assign(lower: str) -> bool:
    """_ASSIGNMENT_FAST.search(lower), tried only where a hint word starts: every match starts at
    one, and str.find skips the text between them far faster than the regex tries each position."""
    for hint in _ASSIGNMENT_HINTS:
        at = lower.find(hint)
        while at >= 0:
            if _ASSIGNMENT_FAST.match(lower, at):
                return True
            at = lower.find(hint, at + 1)
    return False

# documentation examples and placeholders are not secrets
PLACEHOLDER = re.compile(r"(?i)example|xxxx|your[_-]|placeholder|dummy|redacted|changeme|<|\.\.\.|\*\*\*|0000000|1234567")

def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())

def redact(secret: str) -> str:
    return f"{secret[:4]}…({len(secret)} chars)"

def secret_id(secret: str) -> str:
    """What identifies a secret in findings: a hash, never the secret itself."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()[:16]

# every pattern's literals in one flat list: one pass over them per page, not a generator per pattern
_LITERALS = [(lit, i) for i, (_name, literals, _pattern) in enumerate(PATTERNS) for lit in literals]

def page_hits(text: str) -> list[tuple[int, str, str]]:
    """(offset, kind, secret) of each secret in a page's text, in order."""
    hits: list[tuple[int, str, str]] = []
    present = {i for lit, i in _LITERALS if (lit in text if isinstance(lit, str) else lit.search(text))}
    for i in sorted(present):
        name, _literals, pattern = PATTERNS[i]
        for m in pattern.finditer(text):
            if not PLACEHOLDER.search(m.group(0)):
                hits.append((m.start(), name, m.group(0)))
    if _may_assign(text.lower()):
        for m in ASSIGNMENT.finditer(text):
            value = m.group("value")
            if (
                not PLACEHOLDER.search(value)
                and entropy(value) >= 3.5
                and re.search(r"\d", value)
                and re.search(r"[A-Za-z]", value)
                and not any(abs(m.start("value") - at) < 3 for at, _, _ in hits)
            ):
                hits.append((m.start("value"), "credential assignment", value))
    return sorted(hits)

# - "sentence" ([file, line N](../../raw/path#LN))  -- also page=N for PDFs, and curly quotes.
# Found from the citation back (quotes(), below): the closing quote mark and the citation after it.

_OPENING = ("\"", "“")
# a key fact's section label before its quote: - *Why doesn't it have "implements" declarations?*: "..."
_LABEL = re.compile(r"[ \t]*[-*][ \t]+\*[^*\n]+\*:[ \t]")

QUOTE_MIN = 8  # characters between the quote marks
_CELL_SEPARATOR = re.compile(r"(?<!\\)\|")


def quotes(text: str, start: int = 0) -> Iterator[tuple[int, str, str]]:
    """(offset of the opening mark, quoted words, citation target) of each cited quote, in order.

    The quote runs from the first opening mark on its line (after the previous cited quote) to
    the closing mark right before its citation, so it may hold quote marks of its own. Found
    from each citation backwards: one pass over the page, where a pattern that tried every
    opening mark against every later closing mark would cost a long line its length squared.
    """
    floor = start
    for m in CITED_QUOTE_END.finditer(text, start):
        close = m.start()
        row = text.rfind("\n", 0, close) + 1
        line_start = max(row, floor)
        if label := _LABEL.match(text, line_start, close):
            line_start = label.end()  # the label's own quote marks open no quote
        if text.startswith("|", row):
            # a table's row: a quote is in one cell (a "|" in a cell's text is escaped)
            line_start = max(line_start, *(sep.end() for sep in _CELL_SEPARATOR.finditer(text, line_start, close)))
        found = [at for at in (text.find(mark, line_start, close - QUOTE_MIN) for mark in _OPENING) if at >= 0]
        if not found:
            continue
        opening = min(found)
        yield opening, text[opening + 1 : close], m.group(1)
        floor = m.end()

def page_quotes(text: str, body_start: int, rel: str, line_of: Callable[[int], int]) -> tuple[tuple[str, str, int], ...]:
    """(raw path, quoted words, line) of each quote a page attributes to a raw file (for its digest)."""
    if "](" not in text or "raw/" not in text:
        return ()
    out = []
    folder = posixpath.dirname(rel)
    for at, quote, target in quotes(text, body_start):
        if "raw/" not in target:
            continue
        resolved, _fragment = resolve_target(rel, target.partition("#")[0], folder)  # one file, many lines
        if resolved and resolved.startswith("raw/"):
            out.append((resolved, quote, line_of(at)))
    return tuple(out)

# a citation in the page's own words: "... 30.5 years ([tardigrades.md, line 41](../../raw/tardigrades.md#L41))"

_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")

_CLAUSE_START = re.compile(r"(?:^|(?<=[.!?])\s+|\)\)\s*)(?=\S)")


def page_figures(
    prose: str, body_start: int, rel: str, line_of: Callable[[int], int]
) -> tuple[tuple[str, int, tuple[str, ...], str], ...]:
    """(raw path, line, figures, clause) for each citation after figures in the page's own words.

    Only the clause right before the citation counts (from the previous sentence end or
    citation), without link text, code or quotes (quotes are checked whole, by page_quotes).
    """
    if "raw/" not in prose:
        return ()
    out = []
    folder = posixpath.dirname(rel)
    for m in RAW_CITATION.finditer(prose, body_start):
        line_start = prose.rfind("\n", body_start, m.start()) + 1
        segment = prose[line_start : m.start()]
        if segment.rstrip().endswith(("\"", "”")):
            continue  # a quote: checked by the quote rule
        starts = [c.start() for c in _CLAUSE_START.finditer(segment.rstrip())]
        clause = segment[starts[-1] :] if starts else segment
        clause = LINK_TEXT.sub(" ", clause)  # link text names pages, not figures
        figures = tuple(f for f in _FIGURE.findall(clause) if len(f.strip(".,")) >= 2 or "." in f)
        if not figures:
            continue
        resolved, _fragment = resolve_target(rel, m.group("target").partition("#")[0], folder)
        if resolved and resolved.startswith("raw/"):
            out.append((resolved, line_of(m.start()), figures, " ".join(clause.split())))
    return tuple(out)

def meta_problems(meta: dict[str, Any]) -> list[str]:
    """What is wrong with a wikimem page's front matter ([] when nothing)."""
    problems: list[str] = []
    if not isinstance(meta.get("title"), str) or not str(meta.get("title")).strip():
        problems.append("no title")
    kind = meta.get("kind")
    if kind not in PAGE_KINDS:
        problems.append(f"kind {kind!r} is not one of {', '.join(PAGE_KINDS)}" if kind else "no kind")
    sources = meta.get("sources")
    if sources is not None and not (isinstance(sources, list) and all(isinstance(s, str) for s in sources)):
        problems.append("sources is not a list of paths")
    if kind == "source" and not meta.get("source_sha256"):
        problems.append("source page without source_sha256")
    if kind == "source" and not sources:
        problems.append("source page without sources")
    aliases = meta.get("aliases")
    if aliases is not None and not isinstance(aliases, list):
        problems.append("aliases is not a list")
    return problems

_BOLD = re.compile(r"(?<![\w*])\*\*([A-Za-z][\w'’/+.-]*(?: [\w'’/+.-]+){0,3})\*\*(?![\w*])")

def page_bold(prose: str, body: str, body_start: int) -> tuple[tuple[str, str], ...]:
    """(title_key, surface) of the terms a page sets in bold, first surface per key (for its digest)."""
    if "**" not in body:
        return ()
    out: dict[str, str] = {}
    for m in _BOLD.finditer(prose, body_start):
        key = title_key(m.group(1))
        # numbered terms are cross-references ("Chapter 17", "Listing 3-2"), not concepts
        if key and len(key) > 2 and not any(ch.isdigit() for ch in key):
            out.setdefault(key, m.group(1))
    return tuple(out.items())

SHINGLE = 5  # words per passage compared

SKETCH = 32  # smallest passage hashes kept per source (a bottom-k MinHash sketch)

def text_sketch(words: str) -> tuple[int, ...]:
    data = words.encode()
    # words is " w1 w2 ... wn ": word i starts after space i, so a passage of SHINGLE words is one
    # slice of the bytes, hashed without building a string for each
    spaces = [m.start() for m in _SPACE.finditer(data)]
    n = len(spaces) - 1
    if n < SHINGLE * 4:
        return ()
    # crc32: fast, and stable across processes (hash() is salted), so findings do not flicker between runs
    crc = zlib.crc32
    hashes = {crc(data[spaces[i] + 1 : spaces[i + SHINGLE]]) for i in range(n - SHINGLE + 1)}
    return tuple(sorted(hashes)[:SKETCH])

_SPACE = re.compile(rb" ")

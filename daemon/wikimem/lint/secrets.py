"""Secrets in pages: wiki pages are fed to agents, so a key on a page is a key handed out."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterator

from .context import Context
from .model import Finding

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


def secrets(ctx: Context) -> Iterator[Finding]:
    for page in ctx.pages.values():
        # the page's digest holds its secrets (line, kind, redacted form, hash): the secret itself is in
        # no cache, report, lint.md or JSON
        for line, name, redacted, digest in page.digest.secrets:
            yield Finding.make(
                "secret", "error",
                f"{page.wpath} line {line}: {name} {redacted}; remove it from the page (and rotate it)",
                paths=[page.wpath], lines=[line],
                evidence={"page": page.wpath, "kind": name, "sha256": digest},
            )

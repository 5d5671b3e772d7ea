"""`--deep`: a model judges the candidate contradictions the rules found, within a token budget.

Only superseded and contradicted findings go to the model, one short request each
with the two quoted sentences and their dates; nothing else of the wiki is sent.
The verdict is added to the finding's evidence (its id does not change, so an
accepted finding stays accepted): "compatible" (both can be true: different
platforms, a plan kept) turns the finding into info; "conflict" and "unsure"
keep it as it is. When the budget is spent the rest are left unjudged and say so.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..backends.claude import make_client
from ..config import Settings
from ..errors import UsageError
from .model import Finding

DEFAULT_BUDGET = 20_000  # input + output tokens for one run
CANDIDATES = ("superseded", "contradicted")
SYSTEM = (
    "You check a wiki for conflicting facts. You get two sentences quoted verbatim from two source "
    "documents, with their dates, and the rule that flagged them. Decide whether they really give "
    "different values for the same fact (conflict), can both be true (compatible: different "
    "platforms, products, conditions, or a plan that was kept), or cannot be told from the text "
    "(unsure). Answer with one JSON object only: "
    '{"verdict": "conflict" | "compatible" | "unsure", "reason": "<one short sentence>"}'
)


def _sentences(f: Finding) -> list[tuple[str, dict[str, Any]]]:
    return [(k, v) for k, v in f.evidence.items() if isinstance(v, dict) and "sentence" in v]


def prompt(f: Finding) -> str:
    lines = [f"Rule: {f.rule}. {f.message}", ""]
    for label, item in _sentences(f):
        lines.append(f'{label} ({item.get("path")}): "{item.get("sentence")}"')
    return "\n".join(lines)


def parse_verdict(text: str) -> tuple[str, str]:
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m:
        try:
            data = json.loads(m.group(0))
            verdict = str(data.get("verdict", "")).lower()
            if verdict in ("conflict", "compatible", "unsure"):
                return verdict, " ".join(str(data.get("reason", "")).split())[:300]
        except ValueError:
            pass
    return "unsure", "the model's answer could not be read"


def judge(findings: list[Finding], settings: Settings, *, budget: int = DEFAULT_BUDGET,
          client: Any = None) -> tuple[list[Finding], list[str]]:
    """Return the findings with verdicts added, and notes for the report."""
    candidates = [f for f in findings if f.rule in CANDIDATES and _sentences(f)]
    if not candidates:
        return findings, ["--deep: no candidate contradictions to judge"]
    if client is None:
        try:
            client = make_client(settings)
        except UsageError as exc:
            raise UsageError(f"--deep needs the anthropic backend: {exc}") from exc
    # the SDK (over a second to import) only for --deep
    import anthropic

    used = 0
    judged: dict[str, Finding] = {}
    left = 0
    for f in candidates:
        if used >= budget:
            left += 1
            judged[f.id] = replace(f, evidence={**f.evidence, "judgement": {"verdict": "not judged", "reason": "token budget spent"}})
            continue
        try:
            response = client.messages.create(
                model=settings.model, max_tokens=300, system=SYSTEM,
                messages=[{"role": "user", "content": prompt(f)}],
            )
        except anthropic.APIError as exc:
            raise UsageError(f"--deep: the model could not be asked ({type(exc).__name__}: {exc})") from exc
        usage = getattr(response, "usage", None)
        used += int(getattr(usage, "input_tokens", 0) or 0) + int(getattr(usage, "output_tokens", 0) or 0)
        text = "".join(getattr(b, "text", "") for b in response.content)
        verdict, reason = parse_verdict(text)
        judgement = {"verdict": verdict, "reason": reason, "model": settings.model}
        if verdict == "compatible":
            judged[f.id] = replace(f, severity="info", message=f"{f.message} [model: compatible: {reason}]",
                                   evidence={**f.evidence, "judgement": judgement})
        else:
            judged[f.id] = replace(f, message=f"{f.message} [model: {verdict}: {reason}]",
                                   evidence={**f.evidence, "judgement": judgement})
    notes = [f"--deep: {len(candidates) - left} of {len(candidates)} candidates judged by {settings.model}, {used} tokens"
             + (f"; {left} left unjudged (budget {budget} tokens)" if left else "")]
    return [judged.get(f.id, f) for f in findings], notes

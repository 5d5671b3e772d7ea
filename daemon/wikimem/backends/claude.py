"""The Claude API as wikimem uses it: credentials, token usage and its cost at list prices, and
how an API error reads in one line."""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger("wikimem.anthropic")

NO_KEY = "No Anthropic key: set ANTHROPIC_API_KEY or use --backend offline"


MAX_RETRIES = 4  # the SDK's retries per request, on connection errors, 408, 409, 429 and 5xx


# USD per million tokens: (name pattern, input, output, cache-read multiple of input), from
# platform.claude.com/docs/en/about-claude/pricing (Nov 2026); the first match wins, and 5-minute
# cache writes cost 1.25x input. A model without an entry (a local model) gets no cost estimate.
PRICES: tuple[tuple[str, float, float, float], ...] = (
    (r"(fable|mythos)-5-1", 10.0, 50.0, 0.025),
    (r"fable|mythos", 10.0, 50.0, 0.1),
    (r"opus-5-5", 4.0, 20.0, 0.05),
    (r"opus-(5|4-[5-9])", 5.0, 25.0, 0.1),
    (r"opus", 15.0, 75.0, 0.1),
    (r"sonnet-5", 2.0, 10.0, 0.1),
    (r"sonnet", 3.0, 15.0, 0.1),
    (r"haiku-5", 0.10, 0.50, 0.1),
    (r"haiku-4", 1.0, 5.0, 0.1),
    (r"3-5-haiku|haiku-3-5", 0.8, 4.0, 0.1),
    (r"haiku", 0.25, 1.25, 0.1),
)


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    turns: int = 0

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        self.input += int(getattr(usage, "input_tokens", 0) or 0)
        self.output += int(getattr(usage, "output_tokens", 0) or 0)
        self.cache_read += int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        self.cache_write += int(getattr(usage, "cache_creation_input_tokens", 0) or 0)

    def merge(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.turns += other.turns

    @property
    def budgeted(self) -> int:
        """What the per-source budget counts: tokens billed at full rate or more.

        Cache reads (a tenth of the input price) are reported but not counted: every turn
        rereads the cached prefix and history, and counting that would make the budget
        grow with the square of the turns instead of with what the source costs.
        """
        return self.input + self.cache_write + self.output

    def as_dict(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read, "cache_write": self.cache_write}


def prices(model: str) -> tuple[float, float, float] | None:
    name = model.lower()
    if "claude" not in name:
        return None
    for pattern, price_in, price_out, read in PRICES:
        if re.search(pattern, name):
            return price_in, price_out, read
    return None


BATCH_DISCOUNT = 0.5  # the Message Batches API bills every token at half the list price


def cost_usd(model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """List-price estimate (at the batch price with `batch`); None for a model without a known
    price (a local model's own name)."""
    price = prices(model)
    if price is None:
        return None
    price_in, price_out, read = price
    total = (
        usage.input * price_in
        + usage.cache_write * price_in * 1.25
        + usage.cache_read * price_in * read
        + usage.output * price_out
    ) / 1_000_000
    return round(total * (BATCH_DISCOUNT if batch else 1.0), 6)


def credentials(environ: Mapping[str, str]) -> str | None:
    """The variable that carries credentials the SDK will use, if any."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        if environ.get(var):
            return var
    return None


def api_error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", exc)).splitlines()[0][:200]


def hashlib_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def make_client(settings: Settings, environ: Mapping[str, str] | None = None) -> Any:
    """An Anthropic client for these settings: the SDK's own credentials, the base URL of a local
    model server (which then needs no key), and a few more retries than the SDK's default 2 on
    429/529 and connection errors, with its backoff (up to 8 s each, or what retry-after says)."""
    env = os.environ if environ is None else environ
    if not credentials(env) and not settings.base_url:
        raise UsageError(NO_KEY)  # a local model server (base_url) may need no key; the real API always does
    # the SDK (over a second to import) only when a client is built: the offline backend never loads it
    import anthropic

    kwargs: dict[str, Any] = {"max_retries": MAX_RETRIES}
    if settings.base_url:
        kwargs["base_url"] = settings.base_url
        if not credentials(env):
            kwargs["api_key"] = "none"  # the SDK insists on a credential; local servers ignore it
    return anthropic.Anthropic(**kwargs)

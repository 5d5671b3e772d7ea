"""Secrets in pages: wiki pages are fed to agents, so a key on a page is a key handed out."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Context
from .extract import ASSIGNMENT, PATTERNS, PLACEHOLDER, entropy, page_hits, redact, secret_id  # noqa: F401 - re-exported
from .model import Finding


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

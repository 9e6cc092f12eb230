"""Tests' reset of the redaction registry: each test starts from no registered secret (the registry is process-wide
by design: every write and print redacts what any client registered)."""
from __future__ import annotations

from triage import redact


def forget_secrets() -> None:
    redact._SECRETS.clear()  # noqa: SLF001 - a test's reset of module state the product never clears

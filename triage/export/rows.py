"""Chart rows from a run document, in the plain-dict form triage.charts reads (no ORM objects:
an 86,400-sample watch run must not build 86,400 SQLModel instances to draw one figure)."""
from __future__ import annotations

from typing import Any


def sample_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**s, "extra_json": s.get("extra") or {}} for s in doc.get("samples") or []]


def probe_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc.get("probes") or [])

"""Chart inputs from a run document: EngineSample values read back from the stored sample rows (no
ORM objects: an 86,400-sample watch run must not build 86,400 SQLModel instances to draw one figure)."""
from __future__ import annotations

from typing import Any

from triage.sample import EngineSample


def sample_rows(doc: dict[str, Any]) -> list[EngineSample]:
    return [EngineSample.from_row(s) for s in doc.get("samples") or []]


def probe_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc.get("probes") or [])

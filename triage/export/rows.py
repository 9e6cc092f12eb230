"""Chart inputs from a run document: EngineSample and ProbeSeries values read back from the stored sample rows (no
ORM objects: an 86,400-sample watch run must not build 86,400 SQLModel instances to draw one figure)."""
from __future__ import annotations

from typing import Any

from triage.sample import EngineSample, ProbeSeries


def sample_rows(doc: dict[str, Any]) -> list[EngineSample]:
    return [EngineSample.from_row(s) for s in doc.get("samples") or []]


def probe_rows(doc: dict[str, Any]) -> list[ProbeSeries]:
    """Each probe of the document with its samples read back as EngineSamples (what the probe timeline draws)."""
    return [ProbeSeries.from_detail(str(p.get("probe", f"probe {n}")), str(p.get("outcome", "?")),
                                    p.get("time_to_verdict_s"), p.get("detail") if isinstance(p.get("detail"), dict)
                                    else None)
            for n, p in enumerate(doc.get("probes") or []) if isinstance(p, dict)]

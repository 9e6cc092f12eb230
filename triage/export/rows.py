"""Chart inputs from a run document: its samples and each probe's samples read back as EngineSample and ProbeSeries
values (``EngineSample.from_dict``: the one reader of stored samples)."""
from __future__ import annotations

from typing import Any

from triage.sample import EngineSample, ProbeSeries


def document_samples(doc: dict[str, Any]) -> list[EngineSample]:
    """The document's engine samples (``EngineSample.to_dict()`` rows, or the shape before them) read back typed."""
    return [EngineSample.from_dict(s) for s in doc.get("samples") or [] if isinstance(s, dict)]


def document_probe_series(doc: dict[str, Any]) -> list[ProbeSeries]:
    """Each probe of the document with its samples read back as EngineSamples (what the probe timeline draws)."""
    return [ProbeSeries.from_detail(str(p.get("probe", f"probe {n}")), str(p.get("outcome", "?")),
                                    p.get("time_to_verdict_s"), p.get("detail") if isinstance(p.get("detail"), dict)
                                    else None)
            for n, p in enumerate(doc.get("probes") or []) if isinstance(p, dict)]

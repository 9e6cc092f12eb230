"""Store rows rebuilt from a run document, for the figure builders in triage.charts."""
from __future__ import annotations

import json
from typing import Any

from triage.export.json_ import SAMPLE_FIELDS, parse_iso
from triage.store import MetricSample, ProbeResult


def sample_rows(doc: dict[str, Any]) -> list[MetricSample]:
    return [MetricSample(extra_json=json.dumps(s.get("extra") or {}),
                         **{k: s.get(k) for k in SAMPLE_FIELDS if s.get(k) is not None})
            for s in doc.get("samples") or []]


def probe_rows(doc: dict[str, Any]) -> list[ProbeResult]:
    return [ProbeResult(run_id=doc["run"].get("id") or 0, probe=p["probe"], outcome=p["outcome"],
                        started_at=parse_iso(p.get("started_at")), duration_s=p.get("duration_s"),
                        time_to_verdict_s=p.get("time_to_verdict_s"), http_status=p.get("http_status"),
                        detail_json=json.dumps(p.get("detail") or {}))
            for p in doc.get("probes") or []]

"""Store rows rebuilt from a run document for triage.charts, and a minimal stand-in for it.

The stand-ins are used only while triage/charts.py (issue 5) is missing; they take the same
inputs (MetricSample and ProbeResult rows) so switching is a one-line import.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

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


def engine_stats_figure(samples: Sequence[MetricSample], alerts: Sequence[Any] = ()) -> go.Figure:
    """Requests running/waiting and KV cache usage over time, one line per engine."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("requests", "KV cache usage"))
    for engine in sorted({s.engine for s in samples}):
        rows = [s for s in samples if s.engine == engine]
        x = [datetime.fromtimestamp(s.ts, UTC) for s in rows]
        for key, name in (("num_requests_running", "running"), ("num_requests_waiting", "waiting")):
            fig.add_trace(go.Scatter(x=x, y=[getattr(s, key) for s in rows], mode="lines+markers",
                                     name=f"{name} (engine {engine})", line_shape="hv"), row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=[s.kv_cache_usage_perc for s in rows], mode="lines",
                                 name=f"kv cache (engine {engine})"), row=2, col=1)
    fig.update_layout(height=420, margin={"l": 50, "r": 20, "t": 40, "b": 30})
    return fig


def probe_timeline_figure(probes: Sequence[ProbeResult]) -> go.Figure:
    """Per probe, running and waiting against seconds since the request was sent."""
    fig = go.Figure()
    for p in probes:
        samples = (json.loads(p.detail_json or "{}") or {}).get("samples") or []
        if not samples:
            continue
        t = [s.get("t") for s in samples]
        for key in ("running", "waiting"):
            fig.add_trace(go.Scatter(x=t, y=[s.get(key) for s in samples], mode="lines+markers", line_shape="hv",
                                     name=f"{p.probe}: {key} ({p.outcome})"))
    fig.update_layout(height=360, xaxis_title="seconds since send", yaxis_title="requests",
                      margin={"l": 50, "r": 20, "t": 30, "b": 40})
    return fig

"""The fleet on one time axis: one lane per replica (when it had samples), its stall episodes as bars.

Reads the plain scan summary (`triage.fleet.summary`), so a stored run's meta draws the same chart.
"""
from __future__ import annotations

import html
from datetime import datetime, UTC
from typing import Any

import plotly.graph_objects as go

from triage.recurrence import CLIENT_ABORT, RECOVERED
from triage.stall import LIVELOCK, STUCK_WAITING

COLORS = {LIVELOCK: "#d62728", STUCK_WAITING: "#ff7f0e"}
ENDED = {CLIENT_ABORT: "x", RECOVERED: "circle-open"}


def _t(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def fleet_figure(summary: dict[str, Any], max_lanes: int = 200) -> go.Figure:
    """Stalled replicas first, then the others (up to ``max_lanes`` lanes). A replica's name comes from Prometheus
    labels: it is HTML-escaped, since Plotly renders tags (a link) in tick labels and hover text (issue 33)."""
    reps = sorted(summary.get("replicas") or [], key=lambda r: (not r.get("episodes"), r["name"]))[:max_lanes]
    reps = [dict(r, name=html.escape(str(r["name"]))) for r in reps]
    fig = go.Figure()
    xs: list[Any] = []
    ys: list[Any] = []
    for r in reps:
        if r.get("first") is not None and r.get("last") is not None:
            xs += [_t(r["first"]), _t(r["last"]), None]
            ys += [r["name"], r["name"], None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#c7c7c7", "width": 2}, name="scraped",
                             hoverinfo="skip"))
    for kind, color in COLORS.items():
        ex: list[Any] = []
        ey: list[Any] = []
        text: list[Any] = []
        for r in reps:
            for ep in r.get("episodes") or []:
                if ep["kind"] != kind:
                    continue
                end = ep["end"] if ep["end"] > ep["start"] else ep["start"] + summary.get("step", 15)
                label = (f"{r['name']}<br>{ep.get('mode', kind)}: {ep['start_utc']} → "
                         f"{'ongoing' if ep.get('ongoing') else ep['end_utc']} ({ep['duration_s']:.0f} s)"
                         f"<br>ended: {ep.get('ended', 'ongoing')}")
                ex += [_t(ep["start"]), _t(end), None]
                ey += [r["name"], r["name"], None]
                text += [label, label, None]
        if ex:
            fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line={"color": color, "width": 12}, name=kind,
                                     text=text, hovertemplate="%{text}<extra></extra>"))
    for ended, symbol in ENDED.items():  # how each episode ended (triage.recurrence), at its end
        pts = [(r["name"], ep) for r in reps for ep in r.get("episodes") or [] if ep.get("ended") == ended]
        if pts:
            fig.add_trace(go.Scatter(x=[_t(ep["end"]) for _, ep in pts], y=[n for n, _ in pts], mode="markers",
                                     marker={"symbol": symbol, "size": 11, "color": "#333"}, name=f"ended: {ended}",
                                     hovertemplate=f"ended: {ended}<extra></extra>"))
    fig.update_layout(height=max(220, 28 * len(reps) + 90), margin={"l": 10, "r": 10, "t": 30, "b": 30},
                      xaxis_title="time (UTC)", yaxis={"autorange": "reversed", "type": "category"},
                      legend={"orientation": "h", "y": 1.08})
    return fig

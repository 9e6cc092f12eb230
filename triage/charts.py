"""Pure plotly figure builders shared by the dashboard and the HTML report (no Streamlit, no I/O).

Samples are triage.sample.EngineSample values, whatever their source (watch scrapes, a log's
stats lines, a stored run read back through ``EngineSample.from_dict``); alerts are stall episodes
(``triage.episode.Episode``: watch's alerts, a log's episodes) or a stored shape of one (``from_stored``). Long
series are
reduced before plotting: gauges and rates by min/max per bucket (a stall plateau or a spike
survives), window quantiles by stride (they are already smoothed). WebGL traces keep even the
reduced figure light in the browser.

One room: every figure shares the reducers and the time-axis conventions (scrape gaps, shaded episodes), and the
dashboard and the HTML report read the same builders.
"""

from __future__ import annotations

import operator
from datetime import datetime, UTC
from typing import Any, Optional
from collections.abc import Iterable, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from triage.episode import from_stored
from triage.sample import CHART_FIELDS, EngineSample, ProbeSeries, across_engines, observer_gap
from triage.series import downsample_minmax, stride_indices
from triage.stall import LIVELOCK, STUCK_WAITING

try:  # numpy comes with plotly's usual companions (pandas, streamlit); lists work without it
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

MAX_POINTS = 2000  # per trace, after min/max reduction
# 24 colours that stay distinct (plotly's Dark24): a 13-probe matrix repeats none
PALETTE = ("#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#17BECF", "#B68100", "#750D86", "#EB663B",
           "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D", "#6C7C32", "#778AAE", "#862A16", "#A777F1",
           "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038")
_COLORS = {
    "running": "#d62728",
    "waiting": "#ff7f0e",
    "prompt": "#1f77b4",
    "kv": "#2ca02c",
    "e2e": "#9467bd",
    "queue": "#8c564b",
    "prefill": "#17becf",
    "stall": "rgba(214,39,40,0.15)",
}


_LABEL_RED = "#b71c1c"  # a stall label: dark red on a near-white box, readable on a light and a dark theme
_LABEL_BG = "rgba(255,255,255,0.92)"


def _get(row: Any, name: str, default: Any = None) -> Any:
    if isinstance(row, dict):
        return row.get(name, default)
    return getattr(row, name, default)


def _dt(ts: Sequence[float]) -> Any:
    """Time axis values; numpy datetime64 when numpy is there (plotly skips per-element validation)."""
    if _np is not None:
        return (_np.asarray(ts, dtype="float64") * 1000).astype("datetime64[ms]")
    return [datetime.fromtimestamp(t, UTC) for t in ts]


def _ys(ys: Sequence[Any]) -> Any:
    if _np is not None:
        return _np.array([_np.nan if v is None else v for v in ys], dtype="float64")
    return list(ys)


def _series(rows: Sequence[EngineSample]) -> dict[str, list[Any]]:
    """Column lists from samples in one C-level pass (attrgetter: 86,400 samples in ~0.1 s)."""
    tuples = list(map(operator.attrgetter(*CHART_FIELDS), rows))
    if any(t[0] is None for t in tuples):
        tuples = [t for t in tuples if t[0] is not None]
    if not tuples:
        return {"ts": [], "running": [], "waiting": [], "kv": [], "prompt": []}
    ts, running, waiting, kv, prompt = (list(c) for c in zip(*tuples, strict=True))
    return {
        "ts": ts,
        "running": running,
        "waiting": waiting,
        "kv": [v * 100 if v is not None else None for v in kv],
        "prompt": prompt,
    }


def _engine_labels(rows: Sequence[EngineSample]) -> set[str]:
    return {str(r.engine) for r in rows}


def _across_engines(rows: Sequence[EngineSample]) -> list[EngineSample]:
    """One whole-server sample per time from several engines' samples: the one multi-engine rule
    (triage.sample.across_engines: gauges and rates summed, KV usage the fullest engine's)."""
    by_ts: dict[float, list[EngineSample]] = {}
    for r in rows:
        if r.ts is not None:
            by_ts.setdefault(r.ts, []).append(r)
    return [across_engines(by_ts[t], t) for t in sorted(by_ts)]


_GAP_FILL = "rgba(128,128,128,0.18)"


def scrape_gaps(ts: Iterable[Optional[float]], now: Optional[float] = None) -> list[tuple[float, float]]:
    """Spans (start, end) with no sample: where the next sample came late by the one gap rule
    (``sample.observer_gap``, the rule the stall detector reads), the usual interval being the median between
    samples. With ``now``, a series that stopped coming ends in an open gap (last sample, now) by the same rule.
    Nothing can be judged inside a gap: a chart must not draw a line across it."""
    xs = sorted({float(t) for t in ts if t is not None})
    if len(xs) < 2:  # no interval known: the rule's floor (one second's scrape) says when a lone sample is stale
        return [(xs[-1], float(now))] if xs and now is not None and observer_gap(xs[-1], now, 1.0) else []
    diffs = sorted(b - a for a, b in zip(xs, xs[1:], strict=False))
    usual = diffs[len(diffs) // 2]
    gaps = [(a, b) for a, b in zip(xs, xs[1:], strict=False) if observer_gap(a, b, usual)]
    if now is not None and observer_gap(xs[-1], now, usual):
        gaps.append((xs[-1], float(now)))
    return gaps


def gap_text(start: float, end: float) -> str:
    """One gap in words, the same on the chart and the page."""
    return f"no sample for {end - start:.0f} s — cannot judge"


def _break_at_gaps(xs: Sequence[float], ys: Sequence[Any], gaps: Sequence[tuple[float, float]]
                   ) -> tuple[list[float], list[Any]]:
    """The series with a missing point inside each gap between two of its points (``connectgaps=False`` then
    breaks the line there instead of drawing it straight across)."""
    if not gaps:
        return list(xs), list(ys)
    ox: list[float] = []
    oy: list[Any] = []
    gi = 0
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        while gi < len(gaps) and gaps[gi][1] <= x:
            if i and gaps[gi][0] >= xs[i - 1]:
                ox.append((gaps[gi][0] + gaps[gi][1]) / 2)
                oy.append(None)
            gi += 1
        ox.append(x)
        oy.append(y)
    return ox, oy


def _line(x: Sequence[float], y: Sequence[Any], name: str, color: str, shape: str = "linear",
          gaps: Sequence[tuple[float, float]] = ()) -> go.Scattergl:
    xs, ys = _break_at_gaps(*downsample_minmax(x, y, MAX_POINTS), gaps)
    return go.Scattergl(
        x=_dt(xs), y=_ys(ys), name=name, mode="lines", line={"color": color, "shape": shape}, connectgaps=False
    )


def _shade_gaps(fig: go.Figure, gaps: Sequence[tuple[float, float]]) -> None:
    for g0, g1 in gaps:
        fig.add_vrect(x0=datetime.fromtimestamp(g0, UTC), x1=datetime.fromtimestamp(g1, UTC), fillcolor=_GAP_FILL,
                      line_width=0, layer="below", row="all", col=1)
        fig.add_annotation(x=datetime.fromtimestamp((g0 + g1) / 2, UTC), y=0.5, yref="y domain", row=1, col=1,
                           text=gap_text(g0, g1), showarrow=False, font={"color": "#666"}, textangle=-90)


def _alert_windows(alerts: Iterable[Any], last_ts: Optional[float]) -> list[tuple[float, float, float, str]]:
    """(since, end, confirmed, label) per stall episode (``triage.episode.Episode``, or any stored shape of one:
    ``from_stored``): the label names the catalogue mode (never "livelock" on a release with the fix) and how the
    episode ended (triage.recurrence: client abort, recovered), when known."""
    from triage.catalogue import explain_stall

    out = []
    for a in alerts:
        ep = from_stored(a)
        if ep.start is None:
            continue
        end = ep.end or last_ts or ep.start
        confirmed = ep.confirmed_at or ep.start
        kind = ep.kind
        label = explain_stall(kind, ep.detail.get("vllm_version")).id if kind in (LIVELOCK, STUCK_WAITING) else kind
        ended = ep.ended
        out.append((float(ep.start), float(end), float(confirmed), label + (f" · ended: {ended}" if ended else "")))
    return out


def engine_stats_figure(
    samples: Sequence[EngineSample],
    alerts: Iterable[Any] = (),
    *,
    title: str = "Engine stats",
    engine: Optional[str] = None,
    now: Optional[float] = None,
    time_title: str = "time (UTC)",
) -> go.Figure:
    """Running/waiting, prompt tokens/s, KV cache usage and latency quantiles over time, with stall
    alerts shaded on the time axis. ``engine`` picks one engine label when samples mix several.

    Every panel has its own time axis labels (UTC) and a y axis with its unit; the latency panel is
    drawn only when some sample carries a quantile (a log's stats lines carry none). A span with no sample
    (``scrape_gaps``; with ``now``, also since the last sample) breaks the lines and is shaded grey with
    "no sample for N s — cannot judge": a straight line across it would claim what nobody saw."""
    rows = [s for s in samples if engine is None or str(s.engine) == engine]
    labels = _engine_labels(rows) if engine is None else {engine}
    has_latency = any(r.extra.get(k) is not None for r in rows for k in _LATENCY_KEYS)
    panels = [("Requests running / waiting", "requests"), ("Prompt throughput", "tokens/s"),
              ("KV cache usage", "% of KV cache")]
    if has_latency:
        panels.append(("Latency (window quantiles)", "seconds"))
    fig = make_subplots(
        rows=len(panels),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.09,
        subplot_titles=[p[0] for p in panels],
    )
    fig.update_layout(
        title={"text": title, "y": 0.995, "yanchor": "top"},
        height=230 * len(panels) + 120,
        hovermode="x unified",
        margin={"l": 70, "r": 150, "t": 90, "b": 40},
        legend={"orientation": "v", "y": 1.0, "yanchor": "top", "x": 1.01, "xanchor": "left"},  # clear of the titles
    )
    for i, (_t, unit) in enumerate(panels, 1):
        fig.update_yaxes(title_text=unit, row=i, col=1)
        fig.update_xaxes(showticklabels=True, type="date", tickformat="%H:%M:%S", row=i, col=1)
    fig.update_xaxes(title_text=time_title, row=len(panels), col=1)  # a log without zones says so
    if not rows:
        fig.add_annotation(text="No samples yet", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
        return fig
    if len(labels) > 1:  # data parallel: one point per scrape, by the one multi-engine rule
        c = _series(_across_engines(rows))
        fig.update_layout(title=f"{title} ({len(labels)} engines, summed; KV the fullest)")
    else:
        c = _series(rows)
    x = c["ts"]
    gaps = scrape_gaps(x, now)
    fig.add_trace(_line(x, c["running"], "running", _COLORS["running"], "hv", gaps), row=1, col=1)
    fig.add_trace(_line(x, c["waiting"], "waiting", _COLORS["waiting"], "hv", gaps), row=1, col=1)
    fig.add_trace(_line(x, c["prompt"], "prompt tokens/s", _COLORS["prompt"], gaps=gaps), row=2, col=1)
    fig.add_trace(_line(x, c["kv"], "KV cache %", _COLORS["kv"], gaps=gaps), row=3, col=1)
    if has_latency:
        _latency_traces(fig, rows, gaps)
    _shade_gaps(fig, gaps)
    last = x[-1] if x else None
    for since, end, confirmed, kind in _alert_windows(alerts, last):
        fig.add_vrect(
            x0=datetime.fromtimestamp(since, UTC),
            x1=datetime.fromtimestamp(max(end, since + 1), UTC),
            fillcolor=_COLORS["stall"],
            line_width=0,
            layer="below",
            row="all",
            col=1,
        )
        fig.add_vline(
            x=datetime.fromtimestamp(confirmed, UTC).timestamp() * 1000,
            line_color=_COLORS["running"],
            line_dash="dot",
            row="all",
            col=1,
        )
        fig.add_annotation(
            x=datetime.fromtimestamp(confirmed, UTC),
            y=1,
            yref="y domain",
            row=1,
            col=1,
            text=f"stalled: {kind}",
            showarrow=False,
            # its own light box: red on the stall's red shade over a dark theme was unreadable (issue 32)
            font={"color": _LABEL_RED},
            bgcolor=_LABEL_BG,
            bordercolor=_COLORS["running"],
            borderwidth=1,
            xanchor="left",
        )
    fig.update_yaxes(rangemode="tozero")
    return fig


_LATENCY_KEYS = ("e2e_p50", "e2e_p95", "queue_p95", "prefill_p95")


def _latency_traces(fig: go.Figure, rows: Sequence[EngineSample], gaps: Sequence[tuple[float, float]] = ()) -> None:
    idx = stride_indices(len(rows), MAX_POINTS)
    keys = _LATENCY_KEYS
    cols: dict[str, list[Any]] = {k: [] for k in keys}
    xs: list[float] = []
    for i in idx:
        e = rows[i].extra
        t = rows[i].ts
        if t is None:
            continue
        xs.append(t)
        for k in keys:
            cols[k].append(e.get(k))
    colors = {
        "e2e_p50": _COLORS["e2e"],
        "e2e_p95": _COLORS["e2e"],
        "queue_p95": _COLORS["queue"],
        "prefill_p95": _COLORS["prefill"],
    }
    for k in keys:
        if any(v is not None for v in cols[k]):
            dash = "dot" if k.endswith("p50") else "solid"
            kx, ky = _break_at_gaps(xs, cols[k], gaps)
            fig.add_trace(
                go.Scattergl(
                    x=_dt(kx),
                    y=_ys(ky),
                    connectgaps=False,
                    name=k.replace("_", " "),
                    mode="lines",
                    line={"color": colors[k], "dash": dash},
                ),
                row=4,
                col=1,
            )


# probe_timeline_figure's traces per probe: (EngineSample field, name suffix, mode, line style, subplot row)
_PROBE_TRACES = (
    ("num_requests_running", " running", "lines+markers", {"shape": "hv"}, 1),
    ("num_requests_waiting", " waiting", "lines", {"dash": "dash", "shape": "hv"}, 1),
    ("prompt_tokens_total", " prompt tokens", "lines", {}, 2),
)


def probe_timeline_figure(
    probes: Sequence[ProbeSeries], *, title: str = "Probes: engine gauges while each probe ran"
) -> go.Figure:
    """One line per probe: running (solid) and waiting (dashed) against seconds since the probe sent, from
    each ProbeSeries' EngineSamples; the verdict time and the abort are marked on each line."""
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("Requests running (solid) / waiting (dashed)", "Prompt tokens computed (flat = no progress)"),
    )
    fig.update_layout(title={"text": title, "y": 0.99, "yanchor": "top"}, height=600, hovermode="closest",
                      margin={"l": 70, "r": 20, "t": 90, "b": 40})
    fig.update_yaxes(title_text="requests", row=1, col=1)
    fig.update_yaxes(title_text="tokens (cumulative)", row=2, col=1)
    palette = PALETTE
    shown = 0
    for p in probes:
        samples = p.samples
        if not samples:
            continue
        shown += 1
        name = f"{p.probe} ({p.outcome})"
        color = palette[(shown - 1) % len(palette)]
        t = [s.ts for s in samples]
        for i, (field, label, mode, line, row) in enumerate(_PROBE_TRACES):
            fig.add_trace(
                go.Scatter(
                    x=t,
                    y=[getattr(s, field) for s in samples],
                    name=name + label,
                    mode=mode,
                    line={"color": color, **line},
                    legendgroup=name,
                    **({} if i == 0 else {"showlegend": False}),  # one legend entry per probe
                ),
                row=row,
                col=1,
            )
        if p.time_to_verdict_s is not None and p.outcome != "ok":
            fig.add_vline(x=p.time_to_verdict_s, line_color=color, line_dash="dot")
        if p.aborted_at_s is not None:
            fig.add_vline(x=p.aborted_at_s, line_color=color, line_dash="dashdot")
    fig.update_xaxes(title_text="seconds since the probe was sent", row=2, col=1)
    fig.update_xaxes(showticklabels=True, ticksuffix=" s")
    if not shown:
        fig.add_annotation(text="No probe samples", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return fig


def throughput_figure(rows: Sequence[dict[str, Any]], *, title: str = "Throughput per concurrency") -> go.Figure:
    """Requests/s (bars, left axis) and p50/p95 latency (lines, right axis) per client concurrency, from the
    ``throughput`` finding's evidence rows ({"concurrency", "requests_per_s", "p50_s", "p95_s", …})."""
    from plotly.subplots import make_subplots as _mk

    rows = [r for r in rows if isinstance(r, dict) and r.get("concurrency") is not None]
    fig = _mk(specs=[[{"secondary_y": True}]])
    x = [str(r["concurrency"]) for r in rows]
    fig.add_trace(go.Bar(x=x, y=[r.get("requests_per_s") for r in rows], name="requests/s",
                         marker_color=PALETTE[0], text=[_fmt(r.get("requests_per_s")) for r in rows],
                         textposition="outside"), secondary_y=False)
    for key, name, color, dash in (("p50_s", "p50 latency", PALETTE[1], "dot"), ("p95_s", "p95 latency",
                                                                                 PALETTE[2], "solid")):
        fig.add_trace(go.Scatter(x=x, y=[r.get(key) for r in rows], name=name, mode="lines+markers",
                                 line={"color": color, "dash": dash}), secondary_y=True)
    fig.update_layout(title={"text": title, "y": 0.97, "yanchor": "top"}, height=380, hovermode="x unified",
                      margin={"l": 70, "r": 70, "t": 80, "b": 50},
                      legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1.0, "xanchor": "right"})
    fig.update_xaxes(title_text="concurrent requests (client)", type="category")
    fig.update_yaxes(title_text="requests/s", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text="latency (s)", rangemode="tozero", secondary_y=True, showgrid=False)
    return fig


def _fmt(v: Any) -> str:
    return f"{v:.1f}" if isinstance(v, (int, float)) else ""

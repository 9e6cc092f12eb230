"""Figures from recorded material: watch samples of recorded /metrics pages, a recorded log, probes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import plotly.graph_objects as go

from triage.charts import MAX_POINTS, engine_stats_figure, probe_timeline_figure
from triage.probes.runner import ProbeOutcome
from triage.logs import analyze_log, to_metric_samples
from triage.sample import EngineSample
from triage.watch import Watcher

REAL = Path(__file__).parent / "fixtures" / "real"
D031 = REAL / "0.31.0-tiny-qwen3-livelock"


def _watch_rows() -> tuple[list[EngineSample], list[dict]]:
    w = Watcher("http://127.0.0.1:9", interval=1, stall_s=5, client=httpx.Client())
    seq = ["idle", "after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6 + ["after-abort"]
    rows = [
        s for i, p in enumerate(seq) for s in w.observe((D031 / f"metrics-{p}.txt").read_text(), 1000.0 + i).samples
    ]
    return rows, w.alerts


def test_engine_stats_figure_from_watch_samples() -> None:
    rows, alerts = _watch_rows()
    fig = engine_stats_figure(rows, alerts=alerts)
    assert isinstance(fig, go.Figure)
    names = {t.name for t in fig.data}
    assert {"running", "waiting", "prompt tokens/s", "KV cache %"} <= names
    running = next(t for t in fig.data if t.name == "running")
    assert max(running.y) == 1
    assert len(fig.layout.shapes) >= 2  # the stall window and its confirmation line
    assert any("stalled" in (a.text or "") for a in fig.layout.annotations)


def test_engine_stats_figure_from_recorded_log() -> None:
    a = analyze_log(REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log", year=2026)
    fig = engine_stats_figure(to_metric_samples(a.samples), alerts=a.summary["episodes"])
    assert len(fig.layout.shapes) >= 1
    assert max(next(t for t in fig.data if t.name == "running").y) == 4


def test_empty_figure_says_so() -> None:
    fig = engine_stats_figure([])
    assert fig.layout.annotations[-1].text == "No samples yet"


def test_day_of_one_second_samples_is_reduced_and_fast() -> None:
    rows, _ = _watch_rows()
    day = [rows[i % len(rows)].with_(ts=1_700_000_000.0 + i) for i in range(86_400)]
    fig = engine_stats_figure(day)
    assert all(len(t.x) <= MAX_POINTS for t in fig.data)
    assert max(next(t for t in fig.data if t.name == "running").y) == 1  # the stall plateau survives
    # the speed target (1 s for a day of samples) is measured in bench/bench_chart.py, not here


def test_stored_run_rows_read_back_as_samples() -> None:
    rows, alerts = _watch_rows()
    doc = {"samples": [{**r.to_dict(), "extra": dict(r.extra)} for r in rows]}
    from triage.export.rows import sample_rows

    back = sample_rows(doc)
    assert [b.num_requests_running for b in back] == [r.num_requests_running for r in rows]
    assert back[-2].extra == rows[-2].extra
    fig = engine_stats_figure(back, alerts=alerts)
    assert max(next(t for t in fig.data if t.name == "running").y) == 1


def test_probe_timeline_from_recorded_probes() -> None:
    probes = [json.loads(p.read_text()) for p in sorted((REAL / "probes").glob("*.json"))]
    series = [ProbeOutcome.from_dict(p).series() for p in probes]  # the runner's outcomes, typed samples
    assert all(isinstance(s, EngineSample) for x in series for s in x.samples)
    fig = probe_timeline_figure(series)
    assert len(fig.data) >= 3 * sum(1 for p in probes if p["detail"].get("samples"))
    assert any("livelock" in (t.name or "") for t in fig.data)


def test_two_engines_are_summed_per_scrape() -> None:
    rows, _ = _watch_rows()
    # the same recorded scrapes seen as engine "0" and engine "1" (a data-parallel server's page)
    both = [r.with_(engine=e) for r in rows for e in ("0", "1")]
    fig = engine_stats_figure(both)
    assert "2 engines" in fig.layout.title.text
    assert max(next(t for t in fig.data if t.name == "running").y) == 2
    one = engine_stats_figure(both, engine="1")
    assert max(next(t for t in one.data if t.name == "running").y) == 1

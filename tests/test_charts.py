"""Figures from recorded material: watch samples of recorded /metrics pages, a recorded log, probes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest
import plotly.graph_objects as go

from triage.charts import MAX_POINTS, engine_stats_figure, probe_timeline_figure, scrape_gaps
from triage.probes.runner import ProbeOutcome
from triage.logs import analyze_log, to_metric_samples
from triage.episode import Episode
from triage.sample import EngineSample
from triage.watch import Watcher

REAL = Path(__file__).parent / "fixtures" / "real"
D031 = REAL / "0.31.0-tiny-qwen3-livelock"


def _watch_rows() -> tuple[list[EngineSample], list[Episode]]:
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
    from triage.export.rows import document_samples

    back = document_samples(doc)
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


def _gap_rows(gap_s: float) -> list[EngineSample]:
    """The recorded 0.31.0 pages scraped each second, with no scrape for ``gap_s`` while the livelock goes on
    (the issue-32 scene: a loaded box stopped the scrapes for ~45 s)."""
    w = Watcher("http://127.0.0.1:9", interval=1, stall_s=5, client=httpx.Client())
    seq = ["idle", "after-requests", "livelock-3s", "livelock-3s"] + ["livelock-9s"] * 4
    out: list[EngineSample] = []
    t = 1000.0
    for i, p in enumerate(seq):
        out += w.observe((D031 / f"metrics-{p}.txt").read_text(), t).samples
        t += gap_s if i == 3 else 1.0
    return out


@pytest.mark.parametrize("ts, now, gaps", [
    pytest.param([1000.0 + i for i in range(10)], None, [], id="steady-1s"),
    pytest.param([1000.0, 1001.0, 1002.0, 1047.0, 1048.0], None, [(1002.0, 1047.0)], id="45s-hole"),
    pytest.param([1000.0, 1001.0, 1002.0], 1050.0, [(1002.0, 1050.0)], id="stopped-coming"),
    pytest.param([1000.0, 1001.0, 1002.0], 1003.5, [], id="next-scrape-not-due-yet"),
    pytest.param([1000.0, 1010.0, 1020.0, 1045.0, 1055.0], None, [], id="log-stats-every-10s-a-25s-wait-is-no-gap"),
    # one gap rule (sample.observer_gap, issue 44): late past 4 usual intervals; a 40 s wait at 10 s is on the line
    pytest.param([1000.0, 1010.0, 1020.0, 1060.0], None, [], id="log-stats-40s-wait-is-four-intervals"),
    pytest.param([1000.0, 1010.0, 1020.0, 1061.0], None, [(1020.0, 1061.0)], id="log-stats-41s-hole"),
])
def test_scrape_gaps(ts, now, gaps) -> None:  # type: ignore[no-untyped-def]
    assert scrape_gaps(ts, now) == gaps


def test_a_scrape_gap_breaks_the_lines_and_is_stated_on_the_chart() -> None:
    fig = engine_stats_figure(_gap_rows(45.0))
    running = next(t for t in fig.data if t.name == "running")
    ys = [float(v) for v in running.y]
    breaks = [i for i, v in enumerate(ys) if math.isnan(v)]
    assert len(breaks) == 1  # one break, inside the hole: no straight line from before it to after it
    xs = [str(v) for v in running.x]
    assert xs[breaks[0] - 1] < xs[breaks[0]] < xs[breaks[0] + 1]
    for name in ("waiting", "prompt tokens/s", "KV cache %"):
        assert any(math.isnan(float(v)) for v in next(t for t in fig.data if t.name == name).y), name
    assert "no sample for 45 s — cannot judge" in [a.text for a in fig.layout.annotations]
    assert any(s.fillcolor == "rgba(128,128,128,0.18)" for s in fig.layout.shapes)


def test_no_gap_no_break_and_an_open_gap_at_the_end() -> None:
    rows = _gap_rows(1.0)
    fig = engine_stats_figure(rows)
    assert not any(math.isnan(float(v)) for v in next(t for t in fig.data if t.name == "running").y)
    assert not any("cannot judge" in (a.text or "") for a in fig.layout.annotations)
    last = max(r.ts for r in rows if r.ts is not None)
    fig = engine_stats_figure(rows, now=last + 30)  # the scrapes stopped 30 s ago
    assert "no sample for 30 s — cannot judge" in [a.text for a in fig.layout.annotations]


def _luminance(colour: str) -> float:
    c = colour.strip()
    if c.startswith("#"):
        rgb = [int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    else:  # rgba(r,g,b,a)
        rgb = [float(v) / 255 for v in c[c.index("(") + 1:c.index(")")].split(",")[:3]]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_the_stalled_label_reads_on_a_dark_theme() -> None:
    """Issue 32: in dark mode the "stalled" label was red on dark red. It sits in its own light box whose contrast
    with the text passes WCAG AA (4.5:1), whatever the theme's background."""
    rows, alerts = _watch_rows()
    fig = engine_stats_figure(rows, alerts=alerts)
    label = next(a for a in fig.layout.annotations if (a.text or "").startswith("stalled"))
    assert label.bgcolor and label.font.color
    hi, lo = sorted((_luminance(label.bgcolor), _luminance(label.font.color)), reverse=True)
    assert (hi + 0.05) / (lo + 0.05) >= 4.5

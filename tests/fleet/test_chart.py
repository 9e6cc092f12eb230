"""The fleet chart marks how each episode ended (triage.recurrence), from the recorded client-timeouts traffic."""
from __future__ import annotations

import json
from pathlib import Path

from triage.fleet.chart import fleet_figure
from triage.fleet.replicas import episodes
from triage.fleet.scan import FleetScan, Replica, summary
from triage.recurrence import CLIENT_ABORT
from triage.sample import PROMETHEUS
from triage.vllm.metrics import parse_metrics

REC = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "client-timeouts" / "0.31.0-tiny-qwen3-livelock"


def test_episode_ends_are_marked() -> None:
    rows = [json.loads(ln) for ln in (REC / "metrics.jsonl").read_text().splitlines()][::2]
    samples = [next(iter(parse_metrics(r["page"], r["t"]).engines.values())).with_(source=PROMETHEUS) for r in rows]
    rep = Replica(name="instance=replica", labels={"instance": "replica"}, samples=samples,
                  episodes=episodes(samples, 2.0), version="0.31.0")
    doc = summary(FleetScan(prometheus="recorded", match="", start=samples[0].ts, end=samples[-1].ts, step=2.0,
                            threshold_s=2.0, replicas=[rep]))
    fig = fleet_figure(doc)
    aborts = [tr for tr in fig.data if tr.name == f"ended: {CLIENT_ABORT}"]
    want = sum(1 for e in rep.episodes if e.ended == CLIENT_ABORT)
    assert want and len(aborts) == 1 and len(aborts[0].x) == want
    assert doc["replicas"][0]["episodes"][0]["mode"] == "pooling-livelock-client-timeouts"


def test_a_replica_name_from_prometheus_labels_is_text() -> None:
    """issue 33 Deliver 3: Plotly renders <a>/<b> in tick labels and hover text; a label value is a server's string."""
    rows = [json.loads(ln) for ln in (REC / "metrics.jsonl").read_text().splitlines()][::2]
    samples = [next(iter(parse_metrics(r["page"], r["t"]).engines.values())).with_(source=PROMETHEUS) for r in rows]
    name = 'instance=<a href="http://127.0.0.1:9/x">r</a>'
    rep = Replica(name=name, labels={"instance": name}, samples=samples, episodes=episodes(samples, 2.0),
                  version="0.31.0")
    doc = summary(FleetScan(prometheus="recorded", match="", start=samples[0].ts, end=samples[-1].ts, step=2.0,
                            threshold_s=2.0, replicas=[rep]))
    fig = fleet_figure(doc)
    shown = [str(v) for tr in fig.data for v in list(tr.y or []) + list(tr.text or []) if v is not None]
    assert shown and not any("<a " in v for v in shown)
    assert any("&lt;a href=" in v for v in shown)

"""Issue 21 on recorded real traffic (tests/fixtures/real/client-timeouts): the OpenAI SDK and LangChain with
5 s time-outs and default retries sending #55427's input to 0.31.0 next to normal traffic. `watch` (fed the
recorded /metrics pages), the fleet's episodes (the same pages as Prometheus samples every 2 s) and the
clients' own records agree on the episodes; the verdict is the catalogue's "#55427 with client time-outs"
record; on 0.32.0 with the same traffic, nothing."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS
from triage.fleet.replicas import episodes
from triage.fleet.scan import CHECK_RECURRING, CHECK_STALL, FleetScan, Replica, findings
from triage.recurrence import CLIENT_ABORT, headline
from triage.sample import PROMETHEUS
from triage.vllm.metrics import parse_metrics
from triage.watch import RECURRING_CHECK, Watcher

FIX = Path(__file__).parent / "fixtures" / "real" / "client-timeouts"
MODE = POOLING_LIVELOCK_CLIENT_TIMEOUTS
V031, V032 = FIX / "0.31.0-tiny-qwen3-livelock", FIX / "0.32.0-tiny-qwen3-livelock"


class _Findings:
    """An observer of watch's events keeping the findings; the store is not what is tested here."""

    def __init__(self) -> None:
        self.found: list[Any] = []

    def __call__(self, ev: Any) -> None:
        if ev.finding is not None:
            self.found.append(ev.finding)


def _rows(d: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (d / "metrics.jsonl").read_text().splitlines()]


def _watch(d: Path) -> tuple[Watcher, list[Any], _Findings]:
    rec = _Findings()
    w = Watcher("http://127.0.0.1:1", rec, interval=1.0)
    w.vllm_version, w._version_read = json.loads((d / "meta.json").read_text())["vllm_version"], True
    events = [e for r in _rows(d) for e in w.observe(r["page"], r["t"]).events]
    w.flush()
    return w, events, rec


def _fleet(d: Path) -> FleetScan:
    samples = [next(iter(parse_metrics(r["page"], r["t"]).engines.values())).with_(source=PROMETHEUS)
               for r in _rows(d)][::2]  # a 2 s scrape interval
    rep = Replica(name="instance=replica", labels={"instance": "replica"}, samples=samples,
                  episodes=episodes(samples, 2.0), version=json.loads((d / "meta.json").read_text())["vllm_version"])
    return FleetScan(prometheus="recorded", match="", start=samples[0].ts, end=samples[-1].ts, step=2.0,
                     threshold_s=2.0, replicas=[rep])


def _client(d: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (d / "client.jsonl").read_text().splitlines()]


def test_031_watch_names_the_pattern_with_the_catalogue_record() -> None:
    w, events, rec = _watch(V031)
    stalls = [e for e in events if e.event == "stalled"]
    again = [e for e in events if e.event == "recurring"]
    assert len(again) == 1 and again[0].message.startswith(POOLING_LIVELOCK_CLIENT_TIMEOUTS.title)
    assert POOLING_LIVELOCK_CLIENT_TIMEOUTS.fix(now=True) in again[0].message
    summary = w.summary()["episodes"]["0"]
    assert summary["recurring"] and summary["client_aborts"] >= 5 and summary["retries"] >= 3
    assert summary["episodes"] <= len(stalls)  # a hang that another request joined is one episode
    [f] = [f for f in rec.found if f.check == RECURRING_CHECK]
    assert f.fix == MODE.fix(now=True) and f.failure_mode == MODE.id
    # the client's own record: every call hung at least once (a time-out the SDK retried)
    client = _client(V031)
    retried = [e for e in client if e["event"] == "retry"]
    assert len(retried) >= summary["episodes"] // 2


def test_031_fleet_agrees_with_watch() -> None:
    res = _fleet(V031)
    found = findings(res)
    [f] = [f for f in found if f.check == CHECK_RECURRING]
    assert not [x for x in found if x.check == CHECK_STALL]
    assert f.failure_mode == POOLING_LIVELOCK_CLIENT_TIMEOUTS.id
    assert f.fix == MODE.fix(now=True) and f.refs == list(MODE.refs)
    rec = f.evidence["recurrence"]
    assert rec["recurring"] and rec["client_aborts"] >= 3
    assert headline(res.replicas[0].recurrence("livelock")) in f.title
    assert any(e["ended"] == CLIENT_ABORT for e in f.evidence["episodes"])
    assert any(e["retry_of"] is not None for e in f.evidence["episodes"])
    w, _, _ = _watch(V031)
    n_watch, n_fleet = w.summary()["episodes"]["0"]["episodes"], rec["episodes"]
    assert abs(n_watch - n_fleet) <= 2, (n_watch, n_fleet)  # 1 s vs 2 s samples: edges merge or split


@pytest.mark.parametrize("reader", ["watch", "fleet"])
def test_032_same_traffic_nothing(reader: str) -> None:
    assert all(e["event"] in ("call", "ok") for e in _client(V032))
    if reader == "watch":
        w, events, rec = _watch(V032)
        assert not events and not w.alerts and not rec.found
    else:
        found = findings(_fleet(V032))
        assert [f.check for f in found] == ["fleet-replicas-clean"]


def test_stats_chart_marks_how_each_alert_ended() -> None:
    """The dashboard's stats chart (triage.charts, drawn from Watcher.alerts) on the recorded traffic: each
    episode's band says the catalogue mode and how it ended; 0.32.0 would say engine-stall, never livelock."""
    from triage.charts import engine_stats_figure

    w, _, _ = _watch(V031)
    samples = [next(iter(parse_metrics(r["page"], r["t"]).engines.values())) for r in _rows(V031)]
    fig = engine_stats_figure(samples, alerts=w.alerts)
    texts = [a.text for a in fig.layout.annotations if a.text.startswith("stalled:")]  # not the subplot titles
    assert len(texts) == len(w.alerts) and any(f"ended: {CLIENT_ABORT}" in x for x in texts)
    assert all(x.startswith("stalled: pooling-livelock") for x in texts)
    fixed = [a.with_(detail={**a.detail, "vllm_version": "0.32.0"}) for a in w.alerts]
    assert not any("livelock" in a.text for a in engine_stats_figure(samples, alerts=fixed).layout.annotations)

"""The fleet scan's default step follows the replicas' scrape interval (triage.fleet.interval), read from
a real Prometheus: its targets' ``scrapeInterval``, else measured in a backfilled TSDB's data."""
from __future__ import annotations

import time

import pytest

import backfill  # tests/fleet/backfill.py
from triage.fleet import findings, scan
from triage.fleet.interval import FALLBACK_S, ScrapeInterval, prom_duration, scrape_interval
from triage.fleet.scan import CHECK_STEP
from triage.lab import prometheus
from triage.lab.server import free_port

from typing import Any as Backfilled  # tests/fleet/conftest.py:Backfilled


@pytest.mark.parametrize("text, want", [("2s", 2.0), ("1m30s", 90.0), ("500ms", 0.5), ("15s", 15.0),
                                        ("", None), ("2 s", None), ("abc", None)])
def test_prom_duration(text: str, want: float | None) -> None:
    assert prom_duration(text) == want


@pytest.mark.parametrize("seconds, step", [(2.0, 1.8), (15.0, 14.5), (60.0, 59.5), (0.5, 0.45)])
def test_the_step_is_just_under_the_interval(seconds: float, step: float) -> None:
    assert ScrapeInterval(seconds, "targets").step == step


def test_measured_from_a_backfilled_tsdb(backfilled: Backfilled) -> None:
    fl = backfilled.fleet
    iv = scrape_interval(backfilled.prom.url, '{job="vllm"}', fl.start, backfilled.end)
    assert iv.source == "data" and abs(iv.seconds - fl.step) <= 0.5, iv
    res = scan(backfilled.prom.url, fl.start, backfilled.end, ask_versions=False)
    assert res.step == iv.step == pytest.approx(iv.seconds - 0.5, abs=0.001) and res.reads_every_scrape
    assert sorted((r.labels["instance"], e.kind, e.start, e.end) for r in res.replicas for e in r.episodes) \
        == sorted(backfill.expected(fl))
    assert [len(r.samples) for r in res.replicas] == [fl.n_steps] * fl.replicas  # every scrape once, no repeat
    assert not [f for f in findings(res) if f.check == CHECK_STEP]


def test_a_coarse_step_is_named(backfilled: Backfilled) -> None:
    fl = backfilled.fleet
    res = scan(backfilled.prom.url, fl.start, backfilled.end, step=60, ask_versions=False)
    coarse = [f for f in findings(res) if f.check == CHECK_STEP]
    assert len(coarse) == 1 and coarse[0].evidence["scrape_interval_s"] == pytest.approx(fl.step, abs=0.5)


def test_from_the_targets_of_a_real_prometheus() -> None:
    p = prometheus.up([f"http://127.0.0.1:{free_port()}"], interval_s=2.0)
    try:
        deadline = time.time() + 15
        while True:
            iv = scrape_interval(p.url, "", time.time() - 60, time.time())
            if iv.source == "targets" or time.time() > deadline:
                break
            time.sleep(0.5)
    finally:
        prometheus.down(p.pid)
    assert iv.source == "targets" and iv.seconds == 2.0, iv


def test_unreachable_prometheus_falls_back() -> None:
    iv = scrape_interval(f"http://127.0.0.1:{free_port()}", "", 0, 3600, timeout_s=2)
    assert iv.source == "default" and iv.seconds == FALLBACK_S

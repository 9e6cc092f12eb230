"""The fleet scan against a real Prometheus holding a backfilled fleet (tests/fleet/conftest.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING
from triage.cli import main
from triage.export.groups import groups
import backfill  # tests/fleet/backfill.py
from triage.fleet import findings, scan
from triage.fleet.prom import chunks
from triage.fleet.scan import CHECK_CLEAN, CHECK_METRIC, CHECK_PROMETHEUS, CHECK_STALL
from triage.findings import Status
from triage.store import Store

from typing import Any as Backfilled  # tests/fleet/conftest.py:Backfilled


def _found(res: object) -> list[tuple[str, str, float, float]]:
    return sorted((r.labels["instance"], e.kind, e.start, e.end) for r in res.replicas for e in r.episodes)


@pytest.mark.parametrize("max_points,workers", [pytest.param(10_000, 4, id="one-chunk"),
                                                pytest.param(97, 3, id="many-chunks")])
def test_every_planted_episode_and_no_other(backfilled: Backfilled, max_points: int, workers: int) -> None:
    fl = backfilled.fleet
    res = scan(backfilled.prom.url, fl.start, backfilled.end, step=15, ask_versions=False,
               max_points=max_points, max_workers=workers)
    assert not res.errors and not res.missing_metrics
    assert len(res.replicas) == fl.replicas
    assert _found(res) == sorted(backfill.expected(fl))
    assert all(len(r.samples) == fl.n_steps for r in res.replicas)


def test_findings_carry_the_catalogue_verdict(backfilled: Backfilled) -> None:
    fl = backfilled.fleet
    res = scan(backfilled.prom.url, fl.start, backfilled.end, step=15, ask_versions=False)
    found = findings(res)
    stalled = [f for f in found if f.check == CHECK_STALL]
    assert {f.failure_mode for f in stalled} == {POOLING_LIVELOCK.id, STUCK_WAITING.id}
    for f in stalled:
        mode = POOLING_LIVELOCK if f.failure_mode == POOLING_LIVELOCK.id else STUCK_WAITING
        assert f.status == Status.FAIL and f.refs == list(mode.refs) and f.fix == mode.fix(now=True)
        assert f.evidence["version_note"] == mode.version_note(None)
    grouped, rest = groups(found)  # a report groups every failing finding under its record, the fleet's too
    assert all(found[i].status != Status.FAIL for i in rest)
    assert {g.mode.id for g in grouped} >= {POOLING_LIVELOCK.id, STUCK_WAITING.id}
    clean = next(f for f in found if f.check == CHECK_CLEAN)
    assert len(clean.evidence["replicas"]) == fl.replicas - len(fl.planted)


def test_cli_json_and_store(backfilled: Backfilled, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fl = backfilled.fleet
    db = str(tmp_path / "t.db")
    code = main(["fleet", "--prometheus", backfilled.prom.url, "--match", '{job="vllm"}', "--from", str(fl.start),
                 "--to", str(backfilled.end), "--format", "json", "--no-version", "--db", db])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "fail"
    eps = sorted((r["labels"]["instance"], e["kind"], e["start"], e["end"])
                 for r in doc["fleet"]["replicas"] for e in r["episodes"])
    assert eps == sorted(backfill.expected(fl))
    rec = Store(db).get_run(doc["run_id"])
    assert rec is not None and rec.run.kind == "fleet" and rec.target is not None
    assert rec.target.url == backfilled.prom.url
    assert [f.check for f in rec.findings] == [f["check"] for f in doc["findings"]]


def test_unreachable_prometheus_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fleet", "--prometheus", "http://127.0.0.1:9", "--since", "10m", "--db", str(tmp_path / "t.db")])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err
    assert "not reachable" in out.out
    res = scan("http://127.0.0.1:9", 0, 600, ask_versions=False)
    (f,) = findings(res)  # one finding, not one per query
    assert f.check == CHECK_PROMETHEUS and f.status == Status.ERROR


def test_bad_selector_and_missing_metric(backfilled: Backfilled) -> None:
    fl = backfilled.fleet
    bad = findings(scan(backfilled.prom.url, fl.start, backfilled.end, match="{job=", ask_versions=False))
    assert bad and bad[0].check == CHECK_PROMETHEUS and "bad_data" in bad[0].title
    none = findings(scan(backfilled.prom.url, fl.start, backfilled.end, match='{job="nope"}', ask_versions=False))
    assert {f.check for f in none} == {CHECK_METRIC} and all(f.status == Status.UNKNOWN for f in none)


@pytest.mark.parametrize("start,end,step,limit,want", [
    pytest.param(0, 100, 10, 100, [(0, 100)], id="fits"),
    pytest.param(0, 100, 10, 5, [(0, 40), (50, 90), (100, 100)], id="split-no-overlap"),
    pytest.param(0, 9, 10, 5, [(0, 0)], id="one-point"),
    pytest.param(10, 0, 1, 5, [], id="empty"),
])
def test_chunks(start: float, end: float, step: float, limit: int, want: list[tuple[float, float]]) -> None:
    assert chunks(start, end, step, limit) == want


def test_a_target_prometheus_cannot_scrape_is_named() -> None:
    import time

    from triage.lab import prometheus
    from triage.lab.server import free_port

    dead = f"127.0.0.1:{free_port()}"
    p = prometheus.up([f"http://{dead}"])
    try:
        deadline = time.time() + 20
        while True:
            end = time.time()
            res = scan(p.url, end - 60, end, step=2, ask_versions=False)
            if res.unscraped or time.time() > deadline:
                break
            time.sleep(1)
    finally:
        prometheus.down(p.pid)
    found = findings(res)
    un = [f for f in found if f.check == "fleet-replica-unscraped"]
    assert len(un) == 1 and dead in un[0].title and un[0].status == Status.UNKNOWN


def test_a_long_range_is_cut_for_the_workers() -> None:
    w = chunks(0, 5759 * 15, 15, 10_000, parts=4)
    assert len(w) == 4 and w[0] == (0, 1439 * 15) and w[-1][1] == 5759 * 15
    assert chunks(0, 99 * 15, 15, 10_000, parts=4) == [(0, 99 * 15)]  # short: one request

"""Issue 21 on a recorded real TSDB: the Prometheus that scraped the client-timeouts recording (0.31.0 and 0.32.0
lab servers, every 2 s; tests/fixtures/real/client-timeouts/prometheus-tsdb) served again by the real Prometheus
on a copy, no scraping. `fleet` over the recorded range finds on the 0.31.0 replica the episodes watch and the
scan of the recorded pages find (+-1 for edges: Prometheus scraped on its own 2 s phase), names them #55427 with
client time-outs, and nothing on the 0.32.0 replica."""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.conftest import need
from tests.test_watch_episodes import _fleet, _watch
from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS as MODE
from triage.cli import main
from triage.lab import prometheus

CT = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "client-timeouts"
V031, V032 = "127.0.0.1:18431", "127.0.0.1:18432"  # the instances record.sh served 0.31.0 and 0.32.0 on


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[prometheus.LabPrometheus]:
    need("prometheus")
    data = tmp_path_factory.mktemp("client-timeouts-tsdb") / "data"
    shutil.copytree(CT / "prometheus-tsdb", data)
    p = prometheus.up([], storage_dir=str(data), retention="100y")  # the recording must outlive any retention
    try:
        yield p
    finally:
        prometheus.down(p.pid)


def _range() -> tuple[float, float]:
    m31 = json.loads((CT / "0.31.0-tiny-qwen3-livelock" / "meta.json").read_text())
    m32 = json.loads((CT / "0.32.0-tiny-qwen3-livelock" / "meta.json").read_text())
    return m31["start"] - 5, m32["end"] + 5


def test_fleet_on_the_recorded_tsdb_finds_what_watch_found(recorded: prometheus.LabPrometheus, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    start, end = _range()
    rc = main(["fleet", "--prometheus", recorded.url, "--from", str(start), "--to", str(end), "--no-version",
               "--db", str(tmp_path / "t.db"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["fleet"]["scrape_interval"]["seconds"] == 2.0  # measured from the data: no targets
    [f] = [f for f in doc["findings"] if f["check"] == "fleet-episodes-recurring"]
    assert f["evidence"]["labels"]["instance"] == V031 and f["failure_mode"] == MODE.id
    assert f["title"].split(": ", 1)[1].startswith(MODE.title) and f["fix"] == MODE.fix(now=True)
    rec = f["evidence"]["recurrence"]
    w, _, _ = _watch(CT / "0.31.0-tiny-qwen3-livelock")
    n_watch = w.summary()["episodes"]["0"]["episodes"]
    n_scan = _fleet(CT / "0.31.0-tiny-qwen3-livelock").replicas[0].recurrence("livelock")["episodes"]
    assert abs(rec["episodes"] - n_watch) <= 1 and abs(rec["episodes"] - n_scan) <= 1, (rec, n_watch, n_scan)
    assert rec["client_aborts"] >= 3 and rec["retries"] >= 3
    # the 0.32.0 replica, same traffic: nothing
    assert not [x for x in doc["findings"] if V032 in json.dumps(x.get("evidence", {}).get("labels", {}))]
    assert any(x["check"] == "fleet-replicas-clean" for x in doc["findings"])

"""A real Prometheus (Debian package) serving a small backfilled fleet built from recorded pages."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import backfill  # tests/fleet/backfill.py: the synthetic fleet history (test-only)
from triage.lab import prometheus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real"


@dataclass
class Backfilled:
    prom: prometheus.LabPrometheus
    fleet: backfill.Fleet

    @property
    def end(self) -> float:
        return self.fleet.ts(self.fleet.n_steps - 1)


def need(tool: str) -> None:
    if not shutil.which(tool):
        pytest.skip(f"`{tool}` not installed (apt-get install -y prometheus)")


@pytest.fixture(scope="session")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backfilled]:
    """6 replicas x 2 h at 15 s, 2 livelocks and 1 stuck-waiting planted, in a real Prometheus."""
    need("promtool")
    d = tmp_path_factory.mktemp("fleet-tsdb")
    end = (time.time() // 15) * 15 - 60
    fleet = backfill.plan(end - 2 * 3600, 2, 15, 6, 2, 1, seed=7)
    with open(d / "series.om", "w") as fh:
        backfill.write_openmetrics(fleet, *backfill.templates(FIXTURES), fh)
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(d / "series.om"), str(d / "data")],
                   check=True, capture_output=True, timeout=120)
    p = prometheus.up([], storage_dir=str(d / "data"))
    try:
        yield Backfilled(p, fleet)
    finally:
        prometheus.down(p.pid)

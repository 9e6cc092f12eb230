"""The vectors set against real lab servers: healthy 0.32.0 passes; pooling-mean fails naming pooling.

The healthy server is the shared session fixture (tests/conftest.py). pooling-mean has a module
fixture of its own here (started only if no healthy one runs, stopped by PID after this module),
so at most one extra server runs at a time.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from triage.catalogue import get
from triage.findings import Status
from lab_servers import serve
from triage.lab import LabServer
from triage.probes.api import run_probes

pytestmark = pytest.mark.real_server


def spec(srv: LabServer) -> object:
    """The probe target: triage.target.Target where the tree has it, else the older ProbeTarget."""
    try:
        from triage.target import Target
        return Target(url=srv.url, model=srv.served_model, timeout_s=120.0, log_text=srv.log_text())
    except ImportError:
        from triage.probes.api import ProbeTarget  # type: ignore[attr-defined]
        return ProbeTarget(srv.url, srv.served_model, timeout_s=120.0)


def _probe(srv: LabServer, sets: str, only: list[str] | None = None):
    return run_probes(spec(srv), sets=sets, deadline_s=120.0,
                      only=only)


@pytest.fixture(scope="module")
def server_032_pooling_mean() -> Iterator[LabServer]:
    yield from serve("0.32.0", "tiny-qwen3", "pooling-mean", install_missing=False)


def test_healthy_032_gives_no_failing_vector_finding(server_032_livelock: LabServer) -> None:
    res = _probe(server_032_livelock, "vectors")
    by = {f.check: f for f in res.findings}
    bad = [(f.check, f.title) for f in res.findings if f.status in (Status.FAIL, Status.ERROR, Status.WARN)]
    assert not bad, bad
    assert by["vectors-reference"].status == Status.PASS  # the lab venv computes the reference
    assert by["vectors-model-pooling"].status == Status.PASS
    assert by["vectors-ranking"].status == Status.UNKNOWN  # random weights: not judged, not a false alarm
    assert by["vectors-long-repeat"].status == Status.PASS


def test_pooling_mean_fails_naming_pooling(server_032_pooling_mean: LabServer) -> None:
    res = _probe(server_032_pooling_mean, "vectors", ["vectors-model-pooling", "vectors-reference", "vectors-eos"])
    by = {f.check: f for f in res.findings}
    mode = get("pooling-mismatch")
    for check in ("vectors-model-pooling", "vectors-reference"):
        f = by[check]
        assert f.status == Status.FAIL, (check, f.title)
        assert "pooling" in f.title and "MEAN" in f.title and "LAST" in f.title
        assert f.fix == mode.fix({"model_pooling": "LAST", "server_pooling": "MEAN"})
        assert f.refs == list(mode.refs)

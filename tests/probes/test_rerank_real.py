"""The rerank sets against real lab servers (issue 25): right overrides pass, missing overrides fail naming them,
/rerank at max_model_len livelocks 0.31.0 (aborted, recovered) and not 0.32.0.

Each test owns its server (reused when a healthy one of the same configuration runs, else started and
stopped by PID when the test ends), so at most one runs at a time: 0.31.0 `rerank` (the hang and a rerank
PASS on one server), 0.32.0 `rerank` (no hang), 0.32.0 `rerank-no-overrides`. Three starts of ~45 s.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from triage.catalogue import get
from triage.findings import Status
from triage.lab import LabServer, down, ensure, is_installed
from triage.probes import run_probes
from triage.target import Target

pytestmark = pytest.mark.real_server


@contextmanager
def _server(version: str, profile: str) -> Iterator[LabServer]:
    if os.environ.get("VLLM_TRIAGE_NO_REAL_SERVER") == "1" or not is_installed(version):
        pytest.skip(f"no real server (VLLM_TRIAGE_NO_REAL_SERVER=1 or {version} not installed)")
    srv, started = ensure(version, "tiny-qwen3-reranker", profile)
    try:
        yield srv
    finally:
        if started:
            down(srv.pid)


def _run(srv: LabServer, sets: list[str], only: list[str] | None = None, allow_hang: bool = False):
    target = Target(url=srv.url, model=srv.served_model, timeout_s=60.0, log_text=srv.log_text())  # the log, given
    return run_probes(target, sets, allow_hang=allow_hang, deadline_s=60.0, only=only)


def _by(res) -> dict:
    return {f.check: f for f in res.findings}


def test_031_rerank_livelocks_at_max_model_len_recovers_and_overrides_pass() -> None:
    with _server("0.31.0", "rerank") as srv:
        res = _run(srv, ["rerank-seed"], allow_hang=True)
        good = _by(_run(srv, ["rerank"], only=["rerank-paths", "rerank-served-task", "rerank-ranking",
                                                "rerank-client-cohere"]))
    outcomes = {o.probe: o.outcome for o in res.outcomes}
    assert outcomes["rerank-seed-short-long-t256"] == "livelock"
    assert outcomes["rerank-seed-short-long-t255"] == "ok"
    f = _by(res)
    assert f["probe-recovery"].status == Status.PASS
    assert f["probe-matrix"].status == Status.FAIL
    assert f["probe-livelock"].refs == list(get("pooling-livelock").refs)
    assert good["rerank-paths"].status == Status.PASS
    assert good["rerank-served-task"].status == Status.PASS
    assert good["rerank-ranking"].status == Status.PASS, good["rerank-ranking"].title
    assert good["rerank-client-cohere"].status == Status.PASS, good["rerank-client-cohere"].title


def test_032_rerank_does_not_hang() -> None:
    with _server("0.32.0", "rerank") as srv:
        res = _run(srv, ["rerank-seed"], allow_hang=True)
    assert {o.outcome for o in res.outcomes} == {"ok"}
    assert _by(res)["probe-livelock"].status == Status.PASS


def test_032_missing_overrides_fail_naming_them() -> None:
    with _server("0.32.0", "rerank-no-overrides") as srv:
        f = _by(_run(srv, ["rerank"], only=["rerank-paths", "rerank-served-task", "rerank-ranking"]))
        model = srv.served_model
    assert f["rerank-paths"].status == Status.PASS  # 200 everywhere: the silent failure
    served, ranking = f["rerank-served-task"], f["rerank-ranking"]
    assert served.status == Status.FAIL and ranking.status == Status.FAIL
    want = get("reranker-overrides-missing").fix({"model": model})
    assert served.fix == want and ranking.fix == want
    assert "is_original_qwen3_reranker" in want

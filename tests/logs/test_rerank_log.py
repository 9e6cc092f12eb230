"""The log post-mortem on start-up logs recorded from real reranker servers (tests/fixtures/real/rerank/, issue 25).

A classify deployment is not "served as a generator"; a reranker without its overrides, and --convert classify
without a score head, are reported with their catalogue records' fixes (checks/rerank.py's one rule).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import get
from triage.findings import Status
from triage.logs import analyze_log

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"


@pytest.mark.parametrize("folder, check, mode", [
    pytest.param("0.32.0-rerank", None, None, id="overrides"),
    pytest.param("0.32.0-cross-encoder", None, None, id="cross-encoder"),
    pytest.param("0.32.0-rerank-no-overrides", "rerank-deployment", "reranker-overrides-missing", id="no-overrides"),
    pytest.param("0.32.0-rerank-convert-classify", "rerank-convert-classify", "classify-without-score-head",
                 id="convert-classify"),
])
def test_reranker_logs(folder: str, check: str | None, mode: str | None) -> None:
    res = analyze_log(REC / folder / "server.log")
    got = {f.check: f for f in res.findings}
    assert "log-generate-runner" not in got
    rerank = {c: f for c, f in got.items() if c.startswith("rerank")}
    if check is None:
        assert rerank == {}
        return
    f = rerank[check]
    assert f.status == Status.FAIL and f.failure_mode == mode
    assert f.refs == list(get(mode).refs)

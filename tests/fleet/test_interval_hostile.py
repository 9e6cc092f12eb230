"""Issue 33, crashes: fleet interval discovery on a hostile Prometheus answer (``data`` or a target's
``labels`` as a list, an unhashable label value, a sub-millisecond interval) gives an interval, never a
crash. Answers in the documented /api/v1 format with the hostile value put in (hand-written on purpose)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from triage.fleet import interval, prom

TARGET = {"labels": {"job": "vllm", "instance": "a:8000"}, "scrapeInterval": "2s"}
HOSTILE = {
    "data-list": {"/api/v1/targets": ["x"], "/api/v1/query": ["y"]},
    "labels-list": {"/api/v1/targets": {"activeTargets": [{**TARGET, "labels": ["job", "vllm"]}]},
                    "/api/v1/query": {"result": [{"metric": ["job"], "values": [[1, "0"]]}]}},
    "unhashable-label": {"/api/v1/targets": {"activeTargets": [{**TARGET, "labels": {"job": ["v"], "instance": {}}}]},
                         "/api/v1/query": {"result": [{"metric": {"job": ["v"], "instance": {"a": 1}}}]}},
    "sub-millisecond": {"/api/v1/targets": {"activeTargets": [{**TARGET, "scrapeInterval": "0.0001s"}]},
                        "/api/v1/query": {"result": [{"metric": {"job": "vllm", "instance": "a:8000"},
                                                      "values": [[1.0, "0"], [1.0001, "0"], [1.0002, "0"]],
                                                      "value": [1, "1e9"]}]}},
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_interval_discovery_never_crashes(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = HOSTILE[case]

    def fake_fetch(client: Any, url: str, params: Any, deadline: float, cap: int) -> tuple[int, bytes]:
        path = url.removeprefix("http://127.0.0.1:9")
        return 200, json.dumps({"status": "success", "data": answers.get(path)}).encode()

    monkeypatch.setattr(prom, "fetch", fake_fetch)  # Prometheus' answer, as read off the wire
    got = interval.scrape_interval("http://127.0.0.1:9", "", 0.0, 600.0, timeout_s=1)
    assert got.seconds >= interval.MIN_INTERVAL_S and got.step > 0
    assert 1.0 / got.step < float("inf")

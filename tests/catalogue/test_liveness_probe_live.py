"""The liveness-probe-blind record's probe on a real livelocked server (marker real_server, issue 31).

The lab's vLLM 0.31.0 serving tiny-qwen3 with the livelock profile (max_model_len 256, budget 128, chunked prefill
on): one request of exactly max_model_len tokens livelocks it (vllm#55427). Through the hang GET /health keeps
answering 200 (what an httpGet liveness probe sees) and a tiny embedding still returns (so a probe that sends one
cannot see the hang either: measured here, it is why the record's probe reads /metrics), while the record's exec probe,
run as the kubelet runs it (its command, no shell), fails; once the held request is aborted (its client times out
and disconnects), the same probe passes again.
"""
from __future__ import annotations

import subprocess
import threading
import time
import uuid

import httpx
import pytest
import yaml

from triage.catalogue.kubernetes import HOLD_S, exec_probe_yaml
from triage.lab import LabServer

pytestmark = pytest.mark.real_server


def _probe(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the probe's command as the kubelet would (its timeoutSeconds as the outer limit)."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HOLD_S + 30)


def test_exec_probe_sees_the_livelock_that_health_does_not(server_031_livelock: LabServer) -> None:
    srv = server_031_livelock
    cfg = {"liveness_probe": {"httpGet": {"path": "/health", "port": srv.port}}, "served_model_name": srv.served_model}
    cmd = yaml.safe_load(exec_probe_yaml(cfg))["livenessProbe"]["exec"]["command"]
    healthy = _probe(cmd)
    assert healthy.returncode == 0, healthy.stderr  # a healthy, idle server passes

    stuck: dict[str, object] = {}

    def hang() -> None:  # exactly max_model_len tokens, chunked by the 128-token budget: the livelock
        body = {"model": srv.served_model, "input": uuid.uuid4().hex + " apple river stone" * 200,
                "truncate_prompt_tokens": 256}
        try:
            httpx.post(srv.url + "/v1/embeddings", json=body, timeout=HOLD_S + 40)
            stuck["outcome"] = "returned"
        except httpx.TimeoutException:
            stuck["outcome"] = "timed out"  # the client gives up: vLLM aborts the request, the engine is free

    th = threading.Thread(target=hang)
    th.start()
    try:
        time.sleep(4)  # admitted and held within a few steps
        assert httpx.get(srv.url + "/health", timeout=5).status_code == 200  # what httpGet /health sees
        tiny = httpx.post(srv.url + "/v1/embeddings", json={"model": srv.served_model, "input": "ping"}, timeout=10)
        assert tiny.status_code == 200  # what a tiny-embedding probe would see: nothing wrong
        during = _probe(cmd)
        assert during.returncode != 0 and "a request is held" in during.stderr, (during.returncode, during.stderr)
    finally:
        th.join(timeout=HOLD_S + 60)
    assert stuck.get("outcome") == "timed out", stuck
    deadline = time.monotonic() + 60
    while (after := _probe(cmd)).returncode != 0:  # freed by the abort: the same probe passes again
        assert time.monotonic() < deadline, after.stderr
        time.sleep(2)

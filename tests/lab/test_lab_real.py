"""Real-server behaviour of the lab: #55427 on 0.31.0, fixed on 0.32.0 (shared/reference/real-vllm-on-cpu.md)."""
from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest

from triage.lab import LabServer
from triage.vllm.metrics import parse_metrics

pytestmark = pytest.mark.real_server

LONG = " ".join(["alpha beta gamma delta"] * 200)  # ~800 tokens, far over max_model_len 256


def _gauges(url: str) -> tuple[float, float, float]:
    page = parse_metrics(httpx.get(f"{url}/metrics", timeout=10).text)
    e = next(iter(page.engines.values()))
    return e.num_requests_running or 0, e.num_requests_waiting or 0, e.prompt_tokens_total or 0


async def _hang_then_abort(srv: LabServer, watch_s: float) -> dict:
    body = {"model": srv.served_model, "input": [f"short {uuid.uuid4().hex}", f"{uuid.uuid4().hex} {LONG}"],
            "truncate_prompt_tokens": 256}
    async with httpx.AsyncClient(base_url=srv.url, timeout=120) as client:
        task = asyncio.create_task(client.post("/v1/embeddings", json=body))
        samples = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < watch_s and not task.done():
            await asyncio.sleep(1.0)
            samples.append(await asyncio.to_thread(_gauges, srv.url))
        done = task.done()
        status = task.result().status_code if done else None
        task.cancel()  # closes the connection: vLLM aborts the request
        try:
            await task
        except (asyncio.CancelledError, httpx.HTTPError):
            pass
    return {"done": done, "status": status, "samples": samples}


def _wait_idle(url: str, timeout: float = 15.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        r, w, _ = _gauges(url)
        if r == 0 and w == 0:
            return time.monotonic() - t0
        time.sleep(0.25)
    raise AssertionError("engine did not go idle after the abort")


def test_031_request_at_max_model_len_livelocks_and_abort_frees_it(server_031_livelock: LabServer) -> None:
    out = asyncio.run(_hang_then_abort(server_031_livelock, watch_s=6.0))
    assert not out["done"], f"request returned ({out['status']}): no livelock reproduced"
    last = out["samples"][-3:]
    assert all(r == 1 and w == 0 for r, w, _ in last), out["samples"]
    assert len({p for _, _, p in last}) == 1, "prompt_tokens_total moved: not frozen"
    freed_s = _wait_idle(server_031_livelock.url)
    assert freed_s < 5.0
    r = httpx.post(f"{server_031_livelock.url}/v1/embeddings",
                   json={"model": server_031_livelock.served_model, "input": f"after {uuid.uuid4().hex}"}, timeout=30)
    assert r.status_code == 200


def test_032_same_request_returns(server_032_livelock: LabServer) -> None:
    out = asyncio.run(_hang_then_abort(server_032_livelock, watch_s=20.0))
    assert out["done"] and out["status"] == 200, out

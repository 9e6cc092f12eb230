"""ui.services.stats against a real vLLM server: the live series and its stall alert."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.target import Target
from ui.services import Services

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


@pytest.mark.real_server
def test_stats_tick_on_a_real_server(temp_db, server_032_livelock):
    svc, session = Services(temp_db), {}
    form = Target(server_032_livelock.url, server_032_livelock.served_model, 256)
    first = svc.stats_tick(form, session)
    second = svc.stats_tick(form, session)
    assert first.error is None and second.n_samples == 2 and second.figure is not None
    assert set(second.latest) == {"running", "waiting", "prompt tokens/s", "KV cache %"}
    session["watcher"].close()


@pytest.mark.real_server
def test_stats_alert_on_a_real_livelock(temp_db, server_031_livelock):
    """[SHORT, LONG] at truncate_prompt_tokens = max_model_len livelocks 0.31.0 (vllm #55427): the page's
    tick must raise the livelock alert and mark it on the chart; the client timeout then aborts the request."""
    import threading
    import time
    import uuid

    import httpx

    srv = server_031_livelock
    salt = uuid.uuid4().hex  # no prefix-cache hit: a cached prompt would not hang
    body = {"model": srv.served_model, "truncate_prompt_tokens": 256,
            "input": [f"short {salt}", " ".join(f"word{i} {salt}" for i in range(300))]}
    hold_s = 14.0

    def send() -> None:
        try:
            httpx.post(f"{srv.url}/v1/embeddings", json=body, timeout=hold_s)
        except httpx.HTTPError:
            pass  # the timeout closes the connection: vLLM aborts the request

    svc, session = Services(temp_db), {}
    form = Target(srv.url, srv.served_model, 256)
    svc.stats_tick(form, session, stall_s=3.0)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    view = None
    try:
        deadline = time.monotonic() + hold_s - 1
        while time.monotonic() < deadline:
            time.sleep(1.0)
            view = svc.stats_tick(form, session, stall_s=3.0)
            if view.alert:
                break
    finally:
        sender.join(hold_s + 5)
        session["watcher"].close()
    assert view is not None and view.alert, "no stall alert while a [SHORT, LONG] request hung"
    assert view.alert["kind"] == "livelock" and "STALLED" in (view.alert["message"] or "")
    assert view.figure.layout.shapes, "the stall is not marked on the time axis"


def test_the_stats_pages_watcher_scrapes_at_the_pages_refresh(temp_db):
    """A sample is late (the stall rule cannot judge across it) against the interval the page refreshes at: the
    CLI's 0.5 s made every tick of a 1 s page on a busy host, or of any page set to refresh every 5 s, "late",
    and the stall was never judged (found in real Chromium: "No stall now" with running 1 for minutes)."""
    from triage.lab.server import free_port

    svc = Services(temp_db)
    session: dict = {}
    form = Target(f"http://127.0.0.1:{free_port()}", "m", 256)
    svc.stats_tick(form, session, interval_s=5.0)
    assert session["watcher"].interval == 5.0
    first = session["watcher"]
    svc.stats_tick(form, session, interval_s=1.0)  # the refresh changed: a watcher for it
    assert session["watcher"] is not first and session["watcher"].interval == 1.0

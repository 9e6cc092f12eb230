"""Watcher on recorded /metrics pages (unit) and against the real 0.31.0 livelock server (real_server)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from triage.catalogue import POOLING_LIVELOCK
from triage.series import counter_rate, histogram_quantile, stride_indices
from triage.recorder import Recorder
from triage.store import Store
from triage.vllm.metrics import E2E_LATENCY, parse_metrics
from triage.watch import Watcher

REAL = Path(__file__).parent / "fixtures" / "real"
D031 = REAL / "0.31.0-tiny-qwen3-livelock"


def page(name: str) -> str:
    return (D031 / f"metrics-{name}.txt").read_text()


def _watcher(tmp_path: Path, retention_s: float | None = None, **kw) -> tuple[Watcher, Store, int]:  # noqa: ANN003
    store = Store(str(tmp_path / "t.db"))
    run = store.start_run(None, "watch")
    assert run.id is not None
    w = Watcher("http://127.0.0.1:9", Recorder.attach(store, run.id, retention_s=retention_s), interval=1.0,
                stall_s=5.0, client=httpx.Client(), **kw)
    return w, store, run.id


def test_recorded_livelock_raises_then_clears(tmp_path: Path) -> None:
    w, store, run_id = _watcher(tmp_path)
    seq = ["after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6 + ["after-abort"]
    ticks = [w.observe(page(p), 1000.0 + i) for i, p in enumerate(seq)]
    events = [(t.ts, e.event, e.kind) for t in ticks for e in t.events]
    # first livelock page at t=1001 (counters moved: window opens there); threshold 5 s → 1006
    assert events == [(1006.0, "stalled", "livelock"), (1010.0, "cleared", "livelock")]
    msg = ticks[6].alert_event.message
    assert msg.startswith("ENGINE STALLED since ") and "running=1 waiting=0" in msg and "abort the oldest" in msg
    bug = POOLING_LIVELOCK.refs[0]
    assert f": livelock ({bug}): running=1" in msg  # the finding's name for it (catalogue.stall_name)
    assert POOLING_LIVELOCK.fix() in msg and "vLLM version unknown" in msg  # the catalogue's words, once
    w.close()
    rows = store.samples_for(run_id=run_id)
    assert len(rows) == len(seq) and rows[0].source == "scrape"
    rec = store.get_run(run_id)
    assert rec is not None
    [f] = rec.findings
    assert f.check == "watch-engine-stalled" and f.evidence["since"] == 1001.0 and f.evidence["cleared_at"] == 1010.0


def test_ticks_stay_readable_after_batched_writes(tmp_path: Path) -> None:
    w, store, _ = _watcher(tmp_path, batch_size=2)
    ticks = [w.observe(page("after-requests"), 1.0 + i) for i in range(5)]
    assert all(t.sample is not None and t.sample.num_requests_running == 0 for t in ticks)
    w.close()


def test_rates_and_counter_reset(tmp_path: Path) -> None:
    w, _, _ = _watcher(tmp_path)
    w.observe(page("idle"), 0.0)
    t1 = w.observe(page("after-requests"), 10.0)
    assert t1.sample is not None and t1.sample.prompt_throughput == pytest.approx(2.7)  # 27 tokens / 10 s
    # the idle page of a fresh process after a busier one: a restart; the counter starts from 0
    w.observe(page("livelock-9s"), 20.0)
    t3 = w.observe(page("idle"), 30.0)
    assert t3.sample is not None and t3.sample.prompt_throughput == 0.0
    assert t3.sample.extra.get("counter_reset") is True


def test_latency_quantiles_from_recorded_histogram() -> None:
    h = parse_metrics(page("after-requests")).engines["0"].histograms[E2E_LATENCY]
    p50, p95 = histogram_quantile(0.5, h), histogram_quantile(0.95, h)
    assert p50 is not None and p95 is not None and 0 < p50 <= p95
    finite = sorted(float(k) for k in h if k not in ("sum", "count", "+Inf"))
    assert p95 <= finite[-1]


def test_quantiles_land_in_sample_extra(tmp_path: Path) -> None:
    w, _, _ = _watcher(tmp_path)
    w.observe(page("idle"), 0.0)
    t = w.observe(page("after-requests"), 5.0)
    assert t.sample is not None
    extra = dict(t.sample.extra)
    assert extra["e2e_p50"] > 0 and extra["requests_per_s"] == pytest.approx(6 / 5)


def test_retention_deletes_old_samples(tmp_path: Path) -> None:
    now = [10_000.0]
    w, store, run_id = _watcher(tmp_path, retention_s=100.0, batch_size=1, clock=lambda: now[0])
    w.observe(page("idle"), 9_000.0)  # stored, older than the retention window
    w.observe(page("idle"), 9_990.0)
    w.close()
    assert [r.ts for r in store.samples_for(run_id=run_id)] == [9_990.0]


def test_unreachable_server_is_a_tick_error(tmp_path: Path) -> None:
    w, _, _ = _watcher(tmp_path)
    t = w.sample_once()
    assert t.error and t.sample is None and not t.state.stalled
    w.close()


def test_pure_helpers() -> None:
    assert counter_rate(10.0, 0.0, 5.0, 5.0) == 1.0  # reset: 5 new since the restart
    assert stride_indices(10, 4) == [0, 3, 6, 9]


# -- against the real 0.31.0 livelock server -----------------------------------------------------


def _hang(url: str, model: str, hold_s: float, box: dict) -> None:
    text = f"watch test {uuid.uuid4().hex} " + " ".join(f"word{i} lorem ipsum" for i in range(600))
    try:
        with httpx.Client(timeout=hold_s) as c:
            box["status"] = c.post(
                url + "/v1/embeddings", json={"model": model, "input": text, "truncate_prompt_tokens": 256}
            ).status_code
    except httpx.TimeoutException:
        box["status"] = "aborted"
    box["aborted_at"] = time.time()


def _quiet(w: Watcher, timeout_s: float = 60.0) -> None:
    """Wait for no request in flight (other clients share the dev server)."""
    end = time.time() + timeout_s
    while time.time() < end:
        t = w.sample_once()
        if t.sample is not None and not t.sample.num_requests_running and not t.sample.num_requests_waiting:
            return
        time.sleep(1)
    pytest.skip("the shared 0.31.0 server never went quiet")


@pytest.mark.real_server
@pytest.mark.timeout(180)
def test_watch_alerts_on_real_livelock_and_clears_after_abort(server_031_livelock, tmp_path: Path) -> None:  # noqa: ANN001
    srv = server_031_livelock
    w0 = Watcher(srv.url)
    interval, stall_s, hold_s = w0.interval, w0.stall_s, 10.0  # the default settings
    w0.close()
    store = Store(str(tmp_path / "w.db"))
    run = store.start_run(None, "watch")
    w = Watcher(srv.url, Recorder.attach(store, run.id), interval=interval, stall_s=stall_s)
    _quiet(w)
    box: dict = {}
    sent = time.time()
    th = threading.Thread(target=_hang, args=(srv.url, srv.served_model, hold_s, box))
    th.start()
    stalled_at = cleared_at = None
    since = None
    try:
        while time.time() - sent < hold_s + 20:
            t = w.sample_once()
            for ev in t.events:
                if ev.event == "stalled" and stalled_at is None:
                    stalled_at, since = ev.at, ev.since
                if ev.event == "cleared" and stalled_at is not None:
                    cleared_at = ev.at
            if cleared_at:
                break
            time.sleep(max(0.0, interval - (time.time() - t.ts)))
    finally:
        th.join()
        w.close()
    assert box.get("status") == "aborted", box
    assert stalled_at is not None, "no stall alert"
    assert w.vllm_version == "0.31.0" and w.alerts[0].detail["vllm_version"] == "0.31.0"  # read from GET /version
    assert since is not None
    print(
        f"alert {stalled_at - sent:.2f}s after send, {stalled_at - since:.2f}s after the no-progress window opened "
        f"(threshold {stall_s}s, interval {interval}s); "
        f"cleared {(cleared_at or 0) - (sent + hold_s):.2f}s after the client's abort at {hold_s}s"
    )
    # within two intervals after the threshold, counted from the first sample without progress (other
    # clients of the shared dev server can still move the counters for a while after our send)
    assert stall_s <= stalled_at - since <= stall_s + 2 * interval + 0.5, stalled_at - since
    assert sent - interval <= since <= sent + hold_s - stall_s
    # the client closes the connection at its timeout (sent + hold_s)
    assert cleared_at is not None and cleared_at - (sent + hold_s) <= 2 * interval + 1.0


def test_a_long_expected_step_is_reported_as_undecided_once(tmp_path: Path) -> None:
    """Past the threshold but inside the step the measured prefill rate predicts: one 'undecided' line
    saying what is known (the step to expect, the version, when it would become a stall), no alert."""
    from triage.stall import StallState
    from triage.watch.engines import EngineState

    w, _, _ = _watcher(tmp_path)
    w.vllm_version = "0.32.0"
    es = EngineState(2.0, 60.0)
    st = StallState(kind="livelock", since=100.0, running=1, waiting=0, expected_step_s=8.0, window_s=16.0,
                    no_progress_s=3.0, threshold_s=2.0)
    ev = w._alert_transition("0", es, st, 103.0)
    assert ev is not None and ev.event == "undecided" and "~8.0s" in ev.message and "0.32.0" in ev.message
    assert w._alert_transition("0", es, st, 104.0) is None and w.alerts == []
    w.close()


def test_alert_message_template_is_filled_issue_32() -> None:
    """The banner names the version it was given and never prints an unfilled "max_model_len - 1 (max_model_len
    - 1)" template when the watcher does not know max_model_len."""
    from triage.stall import LIVELOCK as KIND
    from triage.watch import alert_message

    msg = alert_message(KIND, 100.0, 130.0, 1, 0, "0.31.0")
    assert "vLLM 0.31.0" in msg and "version unknown" not in msg
    assert "max_model_len - 1 (max_model_len - 1)" not in msg and "truncate_prompt_tokens = max_model_len - 1" in msg


def test_the_alert_says_the_number_to_send_when_the_server_names_its_max_model_len() -> None:
    """Issue 32: "every banner's template filled with the known facts". The watcher reads /v1/models once beside
    /version (recorded from the real 0.31.0 lab server: max_model_len 256), so the stall alert's fix says
    "truncate_prompt_tokens = 255", not the formula."""
    import json

    from triage.http import VllmClient
    from triage.stall import LIVELOCK as KIND
    from triage.watch import alert_message

    models = json.loads((D031 / "models.json").read_text())["body"]
    mml = models["data"][0]["max_model_len"]

    def answer(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/version":
            return httpx.Response(200, json={"version": "0.31.0"})
        if req.url.path == "/v1/models":
            return httpx.Response(200, json=models)
        return httpx.Response(200, text=page("idle"))

    w = Watcher("http://127.0.0.1:9", client=VllmClient("http://127.0.0.1:9", transport=httpx.MockTransport(answer)))
    w.sample_once()
    assert w.facts == {"vllm_version": "0.31.0", "max_model_len": mml}
    msg = alert_message(KIND, 100.0, 130.0, 1, 0, w.vllm_version, None, w.facts)
    assert f"truncate_prompt_tokens = {mml - 1} (max_model_len - 1)" in msg, msg
    assert POOLING_LIVELOCK.fix(w.facts) in msg
    w.close()

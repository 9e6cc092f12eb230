"""The runner's sample conversion and stall classification on /metrics pages and probes recorded from real servers."""
from __future__ import annotations

import pytest

from triage.http import Reply
from triage.probes.runner import HTTP_ERROR, OK, SLOW, UNREACHABLE, outcome_of
from triage.sample import EngineSample, server_sample
from triage.stall import LIVELOCK, STUCK_WAITING, StallDetector

from .recorded import DIRS, page, probe_record, reply

L031, BERT = DIRS[0], DIRS[2]


def test_sample_from_livelock_page() -> None:
    s = server_sample(page(L031, "metrics-livelock-3s"), 3.0)
    assert s.ts == 3.0 and s.num_requests_running == 1 and s.num_requests_waiting == 0
    assert s.prompt_tokens_total is not None and s.request_success_total is not None
    assert s.kv_cache_usage_perc and s.prefix_cache_queries_total and s.kv_cache_size_tokens == 131072
    row = s.to_dict()  # the stored shape: the sample's own field names
    contract = {"ts", "num_requests_running", "num_requests_waiting", "prompt_tokens_total", "request_success_total",
                "kv_cache_usage_perc"}
    assert contract <= set(row) and EngineSample.from_dict(row) == s


def classify_samples(rows: list[dict], stall_s: float) -> tuple[str | None, float | None]:
    """The stall verdict over a probe's stored samples: (kind, confirmed_at) or (None, None)."""
    det = StallDetector(stall_s)
    for row in rows:
        st = det.update(EngineSample.from_dict(row))
        if st.stalled:
            return st.kind, st.confirmed_at
    return None, None


def test_sample_from_stuck_waiting_page() -> None:
    s = server_sample(page(BERT, "metrics-stuck-waiting-4s"), 4.0)
    assert s.num_requests_running == 0 and s.num_requests_waiting == 1


def test_recorded_pages_classify_as_livelock() -> None:
    series = [server_sample(page(L031, name), t).to_dict()
              for name, t in (("metrics-idle", 0.0), ("metrics-livelock-3s", 3.0), ("metrics-livelock-9s", 9.0))]
    assert classify_samples(series, 5.0) == (LIVELOCK, 9.0)
    assert classify_samples(series, 7.0) == (None, None)  # 6 s of no progress: under a 7 s threshold


@pytest.mark.parametrize("name,kind", [("livelock-031-short-long-t256", LIVELOCK),
                                       ("stuck-waiting-032-bert-long-t256", STUCK_WAITING),
                                       ("ok-032-short-long-t256", None)])
def test_recorded_probe_samples_reclassify(name: str, kind: str | None) -> None:
    rec = probe_record(name)
    got, at = classify_samples([rec["detail"]["baseline"], *rec["detail"]["samples"]], 5.0)
    assert got == kind
    if kind:
        assert rec["outcome"] == kind and at == rec["time_to_verdict_s"] and at <= 10.0
        r = rec["detail"]["recovery"]
        assert r["recovered"] and r["short_request_ok"] and r["gauges_zero_at_s"] >= r["aborted_at_s"]
        assert rec["detail"]["health_during_stall"]["status"] == 200  # /health lies during a stall
    else:
        assert rec["outcome"] == "ok" and rec["http_status"] == 200


def test_outcome_of_exchanges() -> None:
    assert outcome_of([reply(L031, "embed-single")]) == (OK, 200)
    assert outcome_of([reply(L031, "embed-single"), reply(L031, "error-overlong")]) == (HTTP_ERROR, 400)
    down = Reply("POST", "/v1/embeddings", {}, error="ConnectError: [Errno 111] Connection refused")
    assert outcome_of([down]) == (UNREACHABLE, None)
    late = Reply("POST", "/v1/embeddings", {}, error="ReadTimeout: ")
    assert outcome_of([late]) == (SLOW, None)


def test_a_recorded_probe_is_stored_in_the_one_sample_shape() -> None:
    """A probe recorded in the older row shape (t, running, waiting) is read, and stored again under the sample's own
    field names (EngineSample.to_dict): no renamed key survives a round trip."""
    from triage.probes.runner import ProbeOutcome

    rec = probe_record("livelock-031-short-long-t256")
    assert "running" in rec["detail"]["samples"][0]  # the recording's older shape
    o = ProbeOutcome.from_dict(rec)
    det = o.detail()
    assert det["samples"] == [s.to_dict() for s in o.samples]
    assert all("running" not in r and "t" not in r and "num_requests_running" in r for r in det["samples"])
    assert ProbeOutcome.from_dict(o.to_dict()).samples == o.samples

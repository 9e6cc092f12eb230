"""triage/watch/engines.py: what a scrape's sample gains from the one before (rates, quantiles, a reset) and the
watch summary's bounded tally, read under the sample's own field names."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.sample import EngineSample
from triage.vllm.metrics import parse_metrics
from triage.watch.engines import LAST_FIELDS, EngineState, Tally, derive

D031 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"


def _engine(name: str, ts: float) -> EngineSample:
    [s] = parse_metrics((D031 / f"metrics-{name}.txt").read_text(), ts).engines.values()
    return s


def _fold(es: EngineState, label: str, snap: EngineSample, ts: float) -> EngineSample:
    row = derive(label, snap, es, ts)
    es.prev, es.prev_ts = snap, ts
    return row


def test_the_first_scrape_has_no_rate_and_the_second_one_has() -> None:
    es = EngineState(5.0, 60.0)
    first = _fold(es, "0", _engine("idle", 100.0), 100.0)
    assert first.prompt_throughput is None and "requests_per_s" not in first.extra
    a, b = _engine("idle", 100.0), _engine("after-requests", 105.0)
    second = _fold(es, "0", b, 105.0)
    assert second.engine == "0"
    assert second.prompt_throughput == pytest.approx((b.prompt_tokens_total - a.prompt_tokens_total) / 5.0)
    assert second.extra["requests_per_s"] == pytest.approx((b.request_success_total - a.request_success_total) / 5)
    assert second.extra.get("e2e_p50") is not None  # the window's latency quantile from the histograms


def test_a_counter_drop_is_a_reset_counted_from_zero() -> None:
    es = EngineState(5.0, 60.0)
    _fold(es, "0", EngineSample(ts=0.0, prompt_tokens_total=1000.0), 0.0)
    row = _fold(es, "0", EngineSample(ts=2.0, prompt_tokens_total=10.0), 2.0)
    assert row.extra["counter_reset"] is True and row.prompt_throughput == pytest.approx(5.0)


def test_the_tally_keeps_maxima_the_mean_rate_and_the_last_reading_by_field_name() -> None:
    t = Tally()
    t.add("0", EngineSample(ts=1.0, num_requests_running=2.0, kv_cache_usage_perc=0.5, prompt_throughput=10.0), 1.0)
    t.add("0", EngineSample(ts=2.0, num_requests_running=1.0, num_requests_waiting=3.0, prompt_throughput=30.0), 2.0)
    [(label, d)] = t.engines().items()
    assert label == "0" and d["samples"] == 2 and (d["first_ts"], d["last_ts"]) == (1.0, 2.0)
    assert (d["max_running"], d["max_waiting"], d["max_kv_cache_usage_perc"]) == (2.0, 3.0, 0.5)
    assert d["max_prompt_tokens_per_s"] == 30.0 and d["mean_prompt_tokens_per_s"] == 20.0
    assert set(d["last"]) == set(LAST_FIELDS) and d["last"]["num_requests_waiting"] == 3.0
    assert EngineSample.from_dict({"ts": 2.0, **d["last"]}).num_requests_running == 1.0

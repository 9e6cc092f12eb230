"""triage/sample.py: the one stored shape (``to_dict``/``from_dict``, older shapes read) and the one multi-engine
rule (``across_engines``, ``server_sample``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.sample import ALL_ENGINES, ENGINE_MAX, ENGINE_SUMS, EngineSample, across_engines, server_sample
from triage.vllm.metrics import parse_metrics

REAL = Path(__file__).parent / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"


def test_to_dict_keeps_the_field_names_and_from_dict_reads_them_back() -> None:
    s = EngineSample(ts=2.5, num_requests_running=1.0, kv_cache_usage_perc=0.0, observer_gap_s=7.0,
                     extra={"x": 1})
    d = s.to_dict()
    assert d == {"ts": 2.5, "engine": "0", "source": "scrape", "num_requests_running": 1.0,
                 "kv_cache_usage_perc": 0.0, "observer_gap_s": 7.0, "extra": {"x": 1}}
    back = EngineSample.from_dict(d)
    assert back == s and dict(back.extra) == {"x": 1}


@pytest.mark.parametrize("old,field,value", [
    pytest.param({"t": 3.0, "running": 1.0, "waiting": 0.0}, "num_requests_running", 1.0, id="probe-row-running"),
    pytest.param({"t": 3.0, "running": 1.0, "waiting": 2.0}, "num_requests_waiting", 2.0, id="probe-row-waiting"),
    pytest.param({"t": 3.0}, "ts", 3.0, id="probe-row-t"),
    pytest.param({"ts": 1.0, "extra": {"prefix_cache_queries_total": 5.0}}, "prefix_cache_queries_total", 5.0,
                 id="document-field-in-extra"),
    pytest.param({"ts": 1.0, "extra_json": {"observer_gap_s": 9}}, "observer_gap_s", 9, id="gap-in-extra"),
    pytest.param({"ts": 1.0, "extra": {"line": 12, "model_name": "m"}}, "line", 12, id="line-in-extra"),
])
def test_from_dict_reads_the_shapes_written_before(old: dict, field: str, value: float) -> None:
    s = EngineSample.from_dict(old)
    assert getattr(s, field) == value
    assert field not in s.extra


def test_a_field_in_extra_that_is_not_a_number_stays_out_of_the_field() -> None:
    s = EngineSample.from_dict({"ts": 1.0, "extra": {"prompt_tokens_total": "many"}})
    assert s.prompt_tokens_total is None and s.extra["prompt_tokens_total"] == "many"


def test_a_missing_time_reads_as_zero_and_a_stated_none_stays() -> None:
    assert EngineSample.from_dict({}).ts == 0.0
    assert EngineSample.from_dict({"ts": None}).ts is None  # a log line without a timestamp


def test_across_engines_sums_counts_and_takes_the_fullest_kv() -> None:
    a = EngineSample(ts=0, engine="0", num_requests_running=1.0, num_requests_waiting=None, kv_cache_usage_perc=0.9,
                     prompt_tokens_total=100.0, prompt_throughput=5.0, kv_cache_size_tokens=None)
    b = EngineSample(ts=0, engine="1", num_requests_running=0.0, num_requests_waiting=None, kv_cache_usage_perc=0.1,
                     prompt_tokens_total=50.0, prompt_throughput=None, kv_cache_size_tokens=2048.0)
    s = across_engines([a, b], 4.0)
    assert (s.ts, s.engine) == (4.0, ALL_ENGINES)
    assert (s.num_requests_running, s.prompt_tokens_total, s.prompt_throughput) == (1.0, 150.0, 5.0)
    assert s.num_requests_waiting is None  # no engine said: missing, never 0
    assert s.kv_cache_usage_perc == 0.9  # the fullest engine's, not the mean 0.5
    assert s.kv_cache_size_tokens == 2048.0
    assert set(ENGINE_SUMS).isdisjoint(ENGINE_MAX)


def test_one_engine_keeps_its_label() -> None:
    assert across_engines([EngineSample(ts=0, engine="3", num_requests_running=2.0)], 1.0).engine == "3"
    assert across_engines([], 1.0).engine == "0"


def test_server_sample_of_a_recorded_page() -> None:
    page = parse_metrics((REAL / "metrics-livelock-3s.txt").read_text())
    s = server_sample(page, 3.0)
    [eng] = page.engines.values()
    assert s.ts == 3.0 and s.num_requests_running == eng.num_requests_running == 1
    assert s.kv_cache_usage_perc == eng.kv_cache_usage_perc and s.kv_cache_size_tokens == eng.kv_cache_size_tokens

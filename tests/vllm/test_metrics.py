"""parse_metrics on /metrics pages recorded from real vLLM 0.31.0/0.32.0 servers."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.vllm.metrics import MetricsParseError, parse_metrics

REAL = Path(__file__).parents[1] / "fixtures" / "real"


@pytest.mark.parametrize("page, running, waiting", [
    pytest.param("0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt", 1, 0, id="031-livelock"),
    pytest.param("0.31.0-tiny-qwen3-livelock/metrics-after-abort.txt", 0, 0, id="031-after-abort"),
    pytest.param("0.32.0-minilm-bert-waiting/metrics-stuck-waiting-4s.txt", 0, 1, id="bert-stuck-waiting"),
    pytest.param("0.32.0-tiny-qwen3-livelock/metrics-idle.txt", 0, 0, id="032-idle"),
])
def test_gauges_from_real_pages(page: str, running: int, waiting: int) -> None:
    p = parse_metrics((REAL / page).read_text())
    assert p.has_vllm_metrics
    e = p.engines["0"]
    assert (e.num_requests_running, e.num_requests_waiting) == (running, waiting)
    assert e.prompt_tokens_total is not None and e.request_success_total is not None


def test_livelock_counters_frozen_between_recorded_pages() -> None:
    a = parse_metrics((REAL / "0.31.0-tiny-qwen3-livelock/metrics-livelock-3s.txt").read_text()).engines["0"]
    b = parse_metrics((REAL / "0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt").read_text()).engines["0"]
    assert (a.prompt_tokens_total, a.request_success_total) == (b.prompt_tokens_total, b.request_success_total)


def test_cache_config_labels_and_histograms() -> None:
    p = parse_metrics((REAL / "0.32.0-tiny-qwen3-livelock/metrics-after-requests.txt").read_text())
    assert p.cache_config.get("enable_prefix_caching") in ("True", "true")
    h = p.engines["0"].histograms["vllm:e2e_request_latency_seconds"]
    assert h["count"] >= 1 and "+Inf" in h


@pytest.mark.parametrize("text", [
    pytest.param("<html><body>Not Found</body></html>", id="html"),
    pytest.param("vllm:num_requests_running{engine=\"0\" 1.0\n", id="broken-label"),
])
def test_garbage_raises_parse_error(text: str) -> None:
    with pytest.raises(MetricsParseError):
        parse_metrics(text)


def test_non_vllm_prometheus_page_has_no_vllm_metrics() -> None:
    assert not parse_metrics("# TYPE up gauge\nup 1\n").has_vllm_metrics

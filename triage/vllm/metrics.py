"""vLLM V1 Prometheus metric names (read from vLLM 0.31.0/0.32.0 /metrics pages) and a tolerant parser.

Every metric name the project uses appears here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from prometheus_client.parser import text_string_to_metric_families

RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
WAITING_BY_REASON = "vllm:num_requests_waiting_by_reason"
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
CACHE_CONFIG_INFO = "vllm:cache_config_info"
PROMPT_TOKENS = "vllm:prompt_tokens"  # counter family name; sample is vllm:prompt_tokens_total
REQUEST_SUCCESS = "vllm:request_success"  # sample vllm:request_success_total{finished_reason}
PREEMPTIONS = "vllm:num_preemptions"
ITERATION_TOKENS = "vllm:iteration_tokens_total"  # histogram; its _count is the engine step count
E2E_LATENCY = "vllm:e2e_request_latency_seconds"
QUEUE_TIME = "vllm:request_queue_time_seconds"
PREFILL_TIME = "vllm:request_prefill_time_seconds"


@dataclass
class EngineSnapshot:
    """One engine's values from one /metrics page (None where the page did not carry them)."""

    engine: str = "0"
    model_name: Optional[str] = None
    num_requests_running: Optional[float] = None
    num_requests_waiting: Optional[float] = None
    kv_cache_usage_perc: Optional[float] = None
    prompt_tokens_total: Optional[float] = None
    request_success_total: Optional[float] = None
    num_preemptions_total: Optional[float] = None
    iteration_count: Optional[float] = None
    # histogram name -> {le: cumulative count, "sum": …, "count": …}
    histograms: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class MetricsPage:
    engines: dict[str, EngineSnapshot]
    cache_config: dict[str, str]
    has_vllm_metrics: bool


class MetricsParseError(ValueError):
    """The text is not a Prometheus exposition page."""


def _add(cur: Optional[float], v: float) -> float:
    return v if cur is None else cur + v


def parse_metrics(text: str) -> MetricsPage:
    """Parse a /metrics page into per-engine snapshots; raise MetricsParseError on garbage."""
    engines: dict[str, EngineSnapshot] = {}
    cache_config: dict[str, str] = {}
    has_vllm = False
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError/TypeError/IndexError on malformed lines
        raise MetricsParseError(f"not a Prometheus text page: {e}") from e
    for fam in families:
        if not fam.name.startswith("vllm:"):
            continue
        has_vllm = True
        for s in fam.samples:
            eng_id = s.labels.get("engine", "0")
            eng = engines.setdefault(eng_id, EngineSnapshot(engine=eng_id))
            eng.model_name = eng.model_name or s.labels.get("model_name")
            name = s.name
            if name == RUNNING:
                eng.num_requests_running = _add(eng.num_requests_running, s.value)
            elif name == WAITING:
                eng.num_requests_waiting = _add(eng.num_requests_waiting, s.value)
            elif name == KV_CACHE_USAGE:
                eng.kv_cache_usage_perc = s.value
            elif name == PROMPT_TOKENS + "_total":
                eng.prompt_tokens_total = _add(eng.prompt_tokens_total, s.value)
            elif name == REQUEST_SUCCESS + "_total":
                eng.request_success_total = _add(eng.request_success_total, s.value)
            elif name == PREEMPTIONS + "_total":
                eng.num_preemptions_total = _add(eng.num_preemptions_total, s.value)
            elif name == ITERATION_TOKENS + "_count" or name == "vllm:iteration_tokens_total_count":
                eng.iteration_count = _add(eng.iteration_count, s.value)
            elif name == CACHE_CONFIG_INFO:
                cache_config.update(s.labels)
            for hist in (E2E_LATENCY, QUEUE_TIME, PREFILL_TIME):
                if name.startswith(hist):
                    h = eng.histograms.setdefault(hist, {})
                    if name.endswith("_bucket"):
                        h[s.labels.get("le", "+Inf")] = h.get(s.labels.get("le", "+Inf"), 0.0) + s.value
                    elif name.endswith("_sum"):
                        h["sum"] = h.get("sum", 0.0) + s.value
                    elif name.endswith("_count"):
                        h["count"] = h.get("count", 0.0) + s.value
    return MetricsPage(engines=engines, cache_config=cache_config, has_vllm_metrics=has_vllm)

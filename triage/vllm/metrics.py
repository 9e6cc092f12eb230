"""vLLM V1 Prometheus metric names (read from vLLM 0.31.0/0.32.0 /metrics pages) and a tolerant parser.

Every metric name the project uses appears here and nowhere else. ``parse_metrics`` keeps only the
families it reads (a name-prefix filter on the raw lines) before prometheus_client's parser: a
0.31.0 page is ~65 KB of ~90 families, of which the stall rule and the charts read a dozen
(bench/bench_scrape.py measures the gain).

What moves per engine step (read on 0.31.0 and 0.32.0 lab servers, tests/fixtures/real/progress/):
``kv_cache_usage_perc`` rises as each prefill chunk gets its blocks; ``prefix_cache_queries_total``
rises once per request, when it is first scheduled; ``prompt_tokens_total``,
``request_success_total``, ``request_prefill_time_seconds`` and ``iteration_tokens_total`` move only
when a request's prefill completes. ``estimated_flops_per_gpu_total`` stays 0.0 on both versions
(MFU metrics are off by default). Neither version exposes a scheduler step counter.

Older names (read in each release's ``vllm/v1/metrics/loggers.py`` and on the lab release matrix,
tests/fixtures/real/matrix/): ``vllm:gpu_cache_usage_perc``, ``vllm:gpu_prefix_cache_queries`` and
``vllm:gpu_prefix_cache_hits`` are published next to the new names up to 0.11.x (deprecated in 0.9,
gone in 0.12) and alone before 0.9; the parser reads them when the new name is absent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from prometheus_client.parser import text_string_to_metric_families

from triage.sample import SCRAPE, EngineSample, frozen_extra

RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
WAITING_BY_REASON = "vllm:num_requests_waiting_by_reason"
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
CACHE_CONFIG_INFO = "vllm:cache_config_info"
PROMPT_TOKENS = "vllm:prompt_tokens"  # counter family name; sample is vllm:prompt_tokens_total
REQUEST_SUCCESS = "vllm:request_success"  # sample vllm:request_success_total{finished_reason}
PREEMPTIONS = "vllm:num_preemptions"
PREFIX_CACHE_QUERIES = "vllm:prefix_cache_queries"  # counter; tokens queried, once per scheduled request
PREFIX_CACHE_HITS = "vllm:prefix_cache_hits"
E2E_LATENCY = "vllm:e2e_request_latency_seconds"
QUEUE_TIME = "vllm:request_queue_time_seconds"
PREFILL_TIME = "vllm:request_prefill_time_seconds"
HISTOGRAMS = (E2E_LATENCY, QUEUE_TIME, PREFILL_TIME)
# Pre-0.12 names of the same series (module docstring): read only where the new name is missing.
OLD_NAMES = {
    "vllm:gpu_cache_usage_perc": "kv_cache_usage_perc",
    "vllm:gpu_prefix_cache_queries_total": "prefix_cache_queries_total",
    "vllm:gpu_prefix_cache_hits_total": "prefix_cache_hits_total",
}

# The families parse_metrics reads; everything else on the page is dropped before the parser.
FAMILIES = (RUNNING, WAITING, KV_CACHE_USAGE, CACHE_CONFIG_INFO, PROMPT_TOKENS + "_total",
            REQUEST_SUCCESS + "_total", PREEMPTIONS + "_total", PREFIX_CACHE_QUERIES + "_total",
            PREFIX_CACHE_HITS + "_total", *HISTOGRAMS, *OLD_NAMES)
_LINE_PREFIXES = tuple(p + n for n in FAMILIES for p in ("", "# HELP ", "# TYPE "))


@dataclass
class MetricsPage:
    engines: dict[str, EngineSample]
    cache_config: dict[str, str]  # vllm:cache_config_info's labels as the page gives them
    has_vllm_metrics: bool

    @property
    def cache(self) -> dict[str, bool | int | float]:
        """The cache config's values this tool reads (``read_cache_config``)."""
        return read_cache_config(self.cache_config)


# vllm:cache_config_info's labels that are read, and their type (0.31.0/0.32.0 pages; "None" when unset: an
# encoder-only model has kv_cache_size_tokens="None", num_gpu_blocks="1")
CACHE_CONFIG_LABELS: dict[str, type] = {"enable_prefix_caching": bool, "gpu_memory_utilization": float,
                                        "kv_cache_size_tokens": int, "kv_cache_memory_bytes": int,
                                        "block_size": int, "num_gpu_blocks": int}


def read_cache_config(labels: dict[str, str]) -> dict[str, bool | int | float]:
    """The one reader of vllm:cache_config_info's label schema: typed values, a label unset or unreadable left out."""
    out: dict[str, bool | int | float] = {}
    for key, kind in CACHE_CONFIG_LABELS.items():
        raw = labels.get(key)
        if raw in (None, "None", ""):
            continue
        try:
            if kind is bool:
                if raw in ("True", "False", "true", "false"):
                    out[key] = raw in ("True", "true")
            else:
                out[key] = int(float(raw)) if kind is int else float(raw)  # type: ignore[arg-type]
        except (ValueError, OverflowError):  # "inf", "nan" or words where a number belongs
            pass
    return out


class MetricsParseError(ValueError):
    """The text is not a Prometheus exposition page."""


def prefilter(text: str) -> str:
    """Only the lines of the families we read (samples, HELP and TYPE), in page order."""
    return "\n".join([ln for ln in text.splitlines() if ln.startswith(_LINE_PREFIXES)]) + "\n"


def _families(text: str) -> list[Any]:
    try:
        return list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError/TypeError/IndexError on malformed lines
        raise MetricsParseError(f"not a Prometheus text page: {e}") from e


def _add(cur: Optional[float], v: float) -> float:
    return v if cur is None else cur + v


_COUNTERS = {
    RUNNING: "num_requests_running",
    WAITING: "num_requests_waiting",
    PROMPT_TOKENS + "_total": "prompt_tokens_total",
    REQUEST_SUCCESS + "_total": "request_success_total",
    PREEMPTIONS + "_total": "num_preemptions_total",
    PREFIX_CACHE_QUERIES + "_total": "prefix_cache_queries_total",
    PREFIX_CACHE_HITS + "_total": "prefix_cache_hits_total",
    PREFILL_TIME + "_sum": "prefill_seconds_total",
}


def parse_metrics(text: str, ts: float = 0.0, *, full: bool = False) -> MetricsPage:
    """Parse a /metrics page into one EngineSample per engine label; raise MetricsParseError on garbage.

    ``full`` hands the whole page to the parser (bench/bench_scrape.py compares both).
    """
    kept = text if full else prefilter(text)
    if kept.strip():
        families = _families(kept)
    else:  # none of our families: let the parser judge the page (garbage raises, others are empty)
        families = _families(text)
    vals: dict[str, dict[str, Any]] = {}
    hists: dict[str, dict[str, dict[str, float]]] = {}
    cache_config: dict[str, str] = {}
    olds: dict[str, dict[str, float]] = {}
    has_vllm = False
    for fam in families:
        if not fam.name.startswith("vllm:"):
            continue
        has_vllm = True
        for s in fam.samples:
            eng_id = s.labels.get("engine", "0")
            v = vals.get(eng_id)
            if v is None:
                v = vals[eng_id] = {}
                hists[eng_id] = {}
            if "model_name" not in v and "model_name" in s.labels:
                v["model_name"] = s.labels["model_name"]
            name = s.name
            attr = _COUNTERS.get(name)
            if attr is not None:
                v[attr] = _add(v.get(attr), s.value)
            elif name == KV_CACHE_USAGE:
                v["kv_cache_usage_perc"] = s.value
            elif name == CACHE_CONFIG_INFO:
                cache_config.update(s.labels)
            elif name in OLD_NAMES:
                old = olds.setdefault(eng_id, {})
                old[OLD_NAMES[name]] = _add(old.get(OLD_NAMES[name]), s.value)
            if name.startswith(HISTOGRAMS):
                for hist in HISTOGRAMS:
                    if name.startswith(hist):
                        h = hists[eng_id].setdefault(hist, {})
                        if name.endswith("_bucket"):
                            le = s.labels.get("le", "+Inf")
                            h[le] = h.get(le, 0.0) + s.value
                        elif name.endswith("_sum"):
                            h["sum"] = h.get("sum", 0.0) + s.value
                        elif name.endswith("_count"):
                            h["count"] = h.get("count", 0.0) + s.value
    for eng_id, old in olds.items():
        for attr, value in old.items():
            vals[eng_id].setdefault(attr, value)
    kv_tokens = kv_cache_size_tokens(cache_config)
    engines = {
        e: EngineSample(ts=ts, engine=e, source=SCRAPE, kv_cache_size_tokens=kv_tokens,
                        histograms=frozen_extra(hists[e]), **v)
        for e, v in vals.items()
    }
    return MetricsPage(engines=engines, cache_config=cache_config, has_vllm_metrics=has_vllm)


def kv_cache_size_tokens(cache_config: dict[str, str]) -> Optional[float]:
    """Tokens the KV cache holds: num_gpu_blocks x block_size (cache_config_info labels)."""
    cc = read_cache_config(cache_config)
    blocks, size = cc.get("num_gpu_blocks"), cc.get("block_size")
    return float(blocks) * float(size) if blocks is not None and size is not None else None


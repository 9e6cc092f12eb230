"""A replica's Prometheus series -> EngineSample values -> the one stall rule -> stall episodes.

What is queried (one PromQL per engine value, summed per replica) and how a replica is named live
here; the verdict is triage.stall.StallDetector's, over the same EngineSample values /metrics
scrapes produce (source ``prometheus``). `to_sample` is the one place a query row becomes a sample.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Optional

from triage.display import utc_iso
from triage.episode import FLEET, Episode
from triage.recurrence import ONGOING, ended_by
from triage.sample import PROMETHEUS, EngineSample
from triage.stall import DEFAULT_STALL_S, StallDetector
from triage.vllm.metrics import (CACHE_CONFIG_INFO, KV_CACHE_USAGE, PREFILL_TIME, PREFIX_CACHE_QUERIES, PROMPT_TOKENS,
                                 REQUEST_SUCCESS, RUNNING, WAITING, kv_cache_size_tokens)

REPLICA_LABELS = ("job", "instance", "pod", "engine")  # what tells replicas (and engines in them) apart
BY = ", ".join(REPLICA_LABELS)

# engine sample field -> the vLLM series the fleet reads it from
METRICS: dict[str, str] = {
    "num_requests_running": RUNNING,
    "num_requests_waiting": WAITING,
    "prompt_tokens_total": PROMPT_TOKENS + "_total",
    "request_success_total": REQUEST_SUCCESS + "_total",
    "kv_cache_usage_perc": KV_CACHE_USAGE,
    "prefix_cache_queries_total": PREFIX_CACHE_QUERIES + "_total",
    "prefill_seconds_total": PREFILL_TIME + "_sum",
}
REQUIRED = ("num_requests_running", "num_requests_waiting", "prompt_tokens_total", "request_success_total")
PROGRESS = ("kv_cache_usage_perc", "prefix_cache_queries_total", "prompt_tokens_total", "request_success_total")
CACHE_CONFIG = "cache_config"  # the query whose labels give the KV cache size in tokens
SCRAPED_AT = "scraped_at"  # the query giving, per step, when the sample it shows was scraped
UP = "up"  # Prometheus' own per-target series: a target it scrapes that has no vLLM series shows here

__all__ = [
    "BY", "CACHE_CONFIG", "SCRAPED_AT", "UP", "DEFAULT_STALL_S", "METRICS", "PROGRESS", "REPLICA_LABELS", "REQUIRED",
    "Episode", "episode_dict", "episodes", "kv_tokens_from", "queries", "replica_name", "scraped", "selector",
    "to_sample",
]


def selector(metric: str, match: str = "") -> str:
    """``vllm:num_requests_running{job="vllm"}`` from a metric name and a ``{…}`` matcher (or none)."""
    m = (match or "").strip()
    if m.startswith("{") and m.endswith("}"):
        m = m[1:-1].strip()
    return f"{metric}{{{m}}}" if m else metric


def queries(match: str = "") -> dict[str, str]:
    """One PromQL per engine value, summed per replica (request_success_total has one series per reason)."""
    qs = {f: f"sum by ({BY}) ({selector(metric, match)})" for f, metric in METRICS.items()}
    # query_range repeats a replica's last sample at every step until it goes stale (lookback delta): a
    # step shorter than the scrape interval, or the minutes after a server went away, would show frozen
    # counters. The scrape's own timestamp tells a new sample from a repeat.
    qs[SCRAPED_AT] = f"max by ({BY}) (timestamp({selector(RUNNING, match)}))"
    qs[UP] = f"min by (job, instance) ({selector('up', match)})"
    qs[CACHE_CONFIG] = f"max by ({BY}, num_gpu_blocks, block_size) ({selector(CACHE_CONFIG_INFO, match)})"
    return qs


def replica_name(labels: Mapping[str, str]) -> str:
    """'instance=10.0.0.7:8000 engine=0' (pod first when there is one)."""
    parts = [f"{k}={labels[k]}" for k in ("pod", "instance", "engine") if labels.get(k)]
    return " ".join(parts) or " ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "(no labels)"


def to_sample(ts: float, values: Mapping[str, Optional[float]], labels: Mapping[str, str],
              kv_tokens: Optional[float] = None) -> EngineSample:
    """One step of one replica as an engine sample; a step missing a required value is a gap (no verdict)."""
    engine = labels.get("engine", "0")
    if any(values.get(f) is None for f in REQUIRED):
        return EngineSample(ts=ts, engine=engine, source=PROMETHEUS)
    return EngineSample(ts=ts, engine=engine, source=PROMETHEUS, kv_cache_size_tokens=kv_tokens,
                        **{f: values.get(f) for f in METRICS})


def scraped(steps: list[float], scraped_at: Mapping[float, float]) -> list[tuple[float, float]]:
    """(step, scrape time) for the steps that show a new scrape; repeats of an older one are dropped.

    Without scrape times (that query failed) every step counts as a sample.
    """
    if not scraped_at:
        return [(ts, ts) for ts in steps]
    out: list[tuple[float, float]] = []
    last: Optional[float] = None
    for ts in steps:
        at = scraped_at.get(ts)
        if at is None or at == last:
            continue
        last = at
        out.append((ts, at))
    return out


def kv_tokens_from(labels: Mapping[str, str]) -> Optional[float]:
    return kv_cache_size_tokens(dict(labels))


def episode_dict(ep: Episode) -> dict[str, Any]:
    """The fleet's stored episode shape (scan summaries, findings, exported runs since issue 21): ``end`` is the
    last stalled step also while it is ongoing (``triage.episode.from_stored`` reads it back), times also in UTC."""
    assert ep.start is not None and ep.until is not None  # a fleet episode starts and ends at Prometheus steps
    return {"kind": ep.kind, "start": ep.start, "end": ep.until, "confirmed_at": ep.confirmed_at,
            "duration_s": round(ep.duration_s or 0.0, 3), "ongoing": ep.open, "ended": ep.ended or ONGOING,
            "samples": ep.n_seen, "evidence": dict(ep.detail),
            "start_utc": utc_iso(ep.start), "end_utc": utc_iso(ep.until)}


def _evidence(first: EngineSample, last: EngineSample, state_evidence: dict[str, Any]) -> dict[str, Any]:
    frozen = {f: getattr(last, f) for f in PROGRESS if getattr(last, f) is not None}
    return {
        "num_requests_running": [first.num_requests_running, last.num_requests_running],
        "num_requests_waiting": [first.num_requests_waiting, last.num_requests_waiting],
        "frozen": frozen,  # the progress signals, unchanged over the window
        "window_s": state_evidence.get("window_s"),
        "expected_step_s": state_evidence.get("expected_step_s"),
        "last_progress": state_evidence.get("last_progress"),
    }


def episodes(samples: list[EngineSample], threshold_s: float = DEFAULT_STALL_S) -> list[Episode]:
    """Every stall the rule confirms in one replica's series, in time order (``triage.episode.Episode``, source
    fleet: ``end`` is its last stalled step, None while it is still stalled at the end of the range)."""
    det = StallDetector(threshold_s)
    out: list[Episode] = []
    cur: Optional[Episode] = None
    first: Optional[EngineSample] = None
    last: Optional[EngineSample] = None  # the episode's last stalled sample
    was_idle = False
    for s in samples:
        idle = s.num_requests_running == 0 and s.num_requests_waiting == 0
        if idle and was_idle:
            continue  # an idle engine has no stall shape: the first idle sample already closed any window
        was_idle = idle
        st = det.update(s)
        if st.stalled and st.kind is not None and st.since is not None and st.confirmed_at is not None:
            if cur is None or cur.start != st.since or cur.kind != st.kind:
                if cur is not None:
                    out.append(_closed(cur, last, s))
                first = st.samples[0] if st.samples else s
                cur = Episode(kind=st.kind, source=FLEET, start=st.since, confirmed_at=st.confirmed_at,
                              engine=s.engine, n_seen=len(st.samples) - 1,
                              running=(first.num_requests_running, None), waiting=(first.num_requests_waiting, None))
            cur = replace(cur, n_seen=cur.n_seen + 1, last_seen=s.ts,
                          running=(cur.running[0], s.num_requests_running),
                          waiting=(cur.waiting[0], s.num_requests_waiting),
                          max_running=max(cur.max_running, s.num_requests_running or 0.0),
                          max_waiting=max(cur.max_waiting, s.num_requests_waiting or 0.0),
                          samples=(first or s, s), detail=_evidence(first or s, s, st.evidence()))
            last = s
        elif cur is not None:
            out.append(_closed(cur, last, s))
            cur = None
    if cur is not None:
        out.append(cur)  # still stalled at the end of the range: open
    return out


def _closed(ep: Episode, last: Optional[EngineSample], after: EngineSample) -> Episode:
    """The episode ended at its last stalled step; how it ended is read in the sample after (triage.recurrence)."""
    return replace(ep, end=ep.last_seen, ended=ended_by(last, after))

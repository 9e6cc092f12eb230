"""`EngineSample`: one engine's gauges and counters at one instant, whatever the source.

A /metrics page (triage.vllm.metrics), a log stats line (triage.logs.stats), the probe runner's
scrapes and a Prometheus query all produce this one type; the stall rule (triage.stall), charts,
watch, the series arithmetic and the log post-mortem read only it. It lives in its own module,
not in triage/stall.py, because the producers (metrics parser, log parser) and the readers
(charts, store boundary, UI adapters) must not import the stall rule to get a value type; the
stall rule is one reader among several.

Field names are vLLM's metric names (``num_requests_running``, ``kv_cache_usage_perc``, …) so a
reader never maps one vocabulary onto another. Missing is explicit: ``None`` means the source did
not carry the value (a log line has no counters, /metrics has no throughputs) — never ``0``.
Rows stored in the database (triage.store.MetricSample) are converted at the store's boundary;
probe results keep the compact documented row of docs/CONTRACTS.md (``probe_row``/``from_row``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Optional
from collections.abc import Mapping

_EMPTY: Mapping[str, Any] = MappingProxyType({})

SCRAPE = "scrape"  # GET /metrics
LOG = "log"  # a periodic `Engine 000:` stats line
PROMETHEUS = "prometheus"  # a query against a Prometheus server


@dataclass(frozen=True)
class EngineSample:
    """One engine at one instant. Counters are cumulative (a drop means the server restarted)."""

    ts: float  # unix seconds (probe rows: seconds since sent; None only for a log line without a timestamp)
    engine: str = "0"
    source: str = SCRAPE
    model_name: Optional[str] = None
    # gauges
    num_requests_running: Optional[float] = None
    num_requests_waiting: Optional[float] = None
    kv_cache_usage_perc: Optional[float] = None  # 0-1; the log line prints a percentage
    # counters (/metrics)
    prompt_tokens_total: Optional[float] = None
    request_success_total: Optional[float] = None
    num_preemptions_total: Optional[float] = None
    prefix_cache_queries_total: Optional[float] = None
    prefix_cache_hits_total: Optional[float] = None
    prefill_seconds_total: Optional[float] = None  # request_prefill_time_seconds_sum
    kv_cache_size_tokens: Optional[float] = None  # num_gpu_blocks x block_size (cache_config_info)
    # per-interval values (a log line; or a rate between two scrapes)
    prompt_throughput: Optional[float] = None  # tokens/s
    generation_throughput: Optional[float] = None
    prefix_cache_hit_rate: Optional[float] = None  # 0-1
    # the server's own processes, when it runs on this host (psutil) / its GPU (NVML)
    process_cpu_seconds_total: Optional[float] = None
    gpu_utilization: Optional[float] = None  # 0-100
    # provenance
    line: Optional[int] = None  # log line number
    merged: int = 1  # how many raw samples this one stands for after downsampling
    # the observer's own hole before this sample (``observer_gap``): seconds since the sample before when this one came
    # late; None when on time. A late sample says nothing about the server between the two (the watcher, or the
    # host it shares with the server, was held up), so the stall rule judges no window across it.
    observer_gap_s: Optional[float] = None
    histograms: Mapping[str, Mapping[str, float]] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)
    # derived values (quantiles, rates) and a source's own extras (a log line's KV device label, …)
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)

    @property
    def throughput_progress(self) -> Optional[bool]:
        """From a log line: did the interval compute any token? None when no throughput was given."""
        if self.prompt_throughput is None and self.generation_throughput is None:
            return None
        return bool(self.prompt_throughput) or bool(self.generation_throughput)

    def with_(self, **changes: Any) -> EngineSample:
        return replace(self, **changes)

    def probe_row(self, t: float) -> dict[str, Any]:
        """The stored probe-sample row of docs/CONTRACTS.md (``t`` = seconds since the probe was sent)."""
        row: dict[str, Any] = {
            "t": round(t, 3),
            "running": self.num_requests_running,
            "waiting": self.num_requests_waiting,
            "prompt_tokens_total": self.prompt_tokens_total,
            "request_success_total": self.request_success_total,
            "kv_cache_usage_perc": self.kv_cache_usage_perc,
        }
        for k in ("prefix_cache_queries_total", "process_cpu_seconds_total", "observer_gap_s"):
            v = getattr(self, k)
            if v is not None:
                row[k] = v
        return row

    def to_dict(self) -> dict[str, Any]:
        """Every field that carries a value (JSON-ready; histograms left out)."""
        out: dict[str, Any] = {}
        for f in _FIELDS:
            v = getattr(self, f)
            if f == "extra":
                if v:
                    out[f] = dict(v)
            elif v is not None and f != "histograms" and not (f == "merged" and v == 1):
                out[f] = v
        return out

    @classmethod
    def from_row(cls, d: Mapping[str, Any]) -> EngineSample:
        """A stored row back to a sample: a run document's sample (field names, ``extra``) or a
        probe row (``t``, ``running``, ``waiting``). The one reader of stored sample shapes."""
        kw: dict[str, Any] = {k: d[k] for k in _FIELDS if k in d and k not in ("extra", "histograms")}
        if "t" in d and "ts" not in kw:
            kw["ts"] = d["t"]
        if "running" in d and "num_requests_running" not in kw:
            kw["num_requests_running"] = d["running"]
        if "waiting" in d and "num_requests_waiting" not in kw:
            kw["num_requests_waiting"] = d["waiting"]
        extra = d.get("extra", d.get("extra_json"))
        if isinstance(extra, Mapping) and extra:
            extra = dict(extra)
            if "observer_gap_s" not in kw and isinstance(extra.get("observer_gap_s"), (int, float)):
                kw["observer_gap_s"] = float(extra.pop("observer_gap_s"))  # the store keeps it beside the columns
            if extra:
                kw["extra"] = MappingProxyType(extra)
        if "line" in (extra or {}) and kw.get("line") is None and isinstance(extra, Mapping):
            kw["line"] = extra["line"]
        kw.setdefault("ts", 0.0)
        return cls(**kw)


_FIELDS = tuple(f.name for f in fields(EngineSample))

LATE_FACTOR = 4.0  # a sample more than this many scrape intervals after the one before came late …
LATE_MIN_S = 2.0  # … and more than this beyond one interval (a failed 1 s scrape between two is no freeze)


def observer_gap(prev_ts: Optional[float], ts: float, interval_s: Optional[float],
                 took_s: float = 0.0) -> Optional[float]:
    """The observer's own hole before a sample taken at ``ts``, when it came late: the time since the sample before
    (``prev_ts``), or the scrape's own duration ``took_s`` when longer, past ``max(LATE_FACTOR x interval, interval +
    LATE_MIN_S)``; None when on time (or no interval is known). The one definition of "the sample came late": live
    samplers (probes, watch) set ``EngineSample.observer_gap_s`` from it, the stall rule and the charts read that.
    Recorded case (issue 33): the watcher starved ~90 s by a loaded host, then two samples 6 s apart with nothing
    moved read as REQUESTS STUCK WAITING on a healthy queue-bound server."""
    if not interval_s or interval_s <= 0:
        return None
    gap = max(ts - prev_ts if prev_ts is not None else 0.0, took_s)
    return round(gap, 3) if gap > max(LATE_FACTOR * interval_s, interval_s + LATE_MIN_S) else None
CHART_FIELDS = ("ts", "num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_throughput")


def frozen_extra(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy for ``EngineSample.extra`` (empty dicts share one instance)."""
    return MappingProxyType(dict(d)) if d else _EMPTY


@dataclass(frozen=True)
class ProbeSeries:
    """One probe's engine samples while it ran (``ts`` = seconds since it was sent): what a probe timeline draws.

    The probe runner gives it from its outcome (``ProbeOutcome.series()``), the store from a stored probe
    (``ProbeInfo.series``), an export from a run document's probe (``from_detail``): a chart never reads a
    stored column or a document's rows."""

    probe: str
    outcome: str
    samples: tuple[EngineSample, ...] = ()
    time_to_verdict_s: Optional[float] = None
    aborted_at_s: Optional[float] = None  # when a stalled or slow probe was aborted

    @classmethod
    def from_detail(cls, probe: str, outcome: str, time_to_verdict_s: Optional[float],
                    detail: Mapping[str, Any] | None) -> ProbeSeries:
        """From a stored probe's ``detail`` (request, response, samples as probe rows, recovery)."""
        d = detail or {}
        rec = d.get("recovery") if isinstance(d.get("recovery"), Mapping) else {}
        rows = d.get("samples") if isinstance(d.get("samples"), list) else []
        return cls(probe, outcome, tuple(EngineSample.from_row(r) for r in rows if isinstance(r, Mapping)),
                   time_to_verdict_s, (rec or {}).get("aborted_at_s"))

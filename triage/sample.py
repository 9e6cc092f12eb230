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
Stored and exported, a sample is ``to_dict()`` (field names as they are, never renamed): a probe's samples in its
detail, a run document's samples, watch's last reading; ``from_dict`` is the one reader back, and it also reads
the shapes written before (a probe row's ``t``/``running``/``waiting``; a table row whose fields without a
column sat in its ``extra``). The database table converts at the store's boundary (triage.store.samples).

Several engines of one server (data parallel) become one whole-server sample by ONE rule, ``across_engines``:
counts and counters add up, KV cache usage is the fullest engine's (see ``ENGINE_MAX``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Optional, Protocol
from collections.abc import Iterable, Mapping

_EMPTY: Mapping[str, Any] = MappingProxyType({})

SCRAPE = "scrape"  # GET /metrics
LOG = "log"  # a periodic `Engine 000:` stats line
PROMETHEUS = "prometheus"  # a query against a Prometheus server


@dataclass(frozen=True)
class EngineSample:
    """One engine at one instant. Counters are cumulative (a drop means the server restarted)."""

    ts: float  # unix seconds (a probe's samples: seconds since sent; None only for a log line without a timestamp)
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
    def from_dict(cls, d: Mapping[str, Any]) -> EngineSample:
        """A stored sample back to a value: ``to_dict()``'s shape, and the shapes written before it (a probe row's
        ``t``/``running``/``waiting``; a table row or run document whose fields without a column rode in
        ``extra``/``extra_json``: they are lifted back to their fields). The one reader of stored samples."""
        kw: dict[str, Any] = {k: d[k] for k in _FIELDS if k in d and k not in ("extra", "histograms")}
        for old, new in _OLD_KEYS.items():
            if old in d and new not in kw:
                kw[new] = d[old]
        extra = d.get("extra", d.get("extra_json"))
        if isinstance(extra, Mapping) and extra:
            extra = dict(extra)
            for k in _LIFTED:
                v = extra.get(k)
                if v is not None and kw.get(k) is None and (
                        k == "model_name" or isinstance(v, (int, float)) and not isinstance(v, bool)):
                    kw[k] = extra.pop(k)
            if extra:
                kw["extra"] = MappingProxyType(extra)
        kw.setdefault("ts", 0.0)
        return cls(**kw)


_FIELDS = tuple(f.name for f in fields(EngineSample))
TEXT_FIELDS = ("engine", "source", "model_name")  # a stored sample's strings (labels from the server: redacted)
NUMBER_FIELDS = tuple(f for f in _FIELDS if f not in ("ts", *TEXT_FIELDS, "extra", "histograms"))
# a probe row of docs/CONTRACTS.md before the one shape (issue 34): its renamed keys, read back by ``from_dict``
_OLD_KEYS = {"t": "ts", "running": "num_requests_running", "waiting": "num_requests_waiting"}
# fields a table row kept in its extra_json (no column of their own): back to the field when read
_LIFTED = tuple(f for f in _FIELDS if f not in ("ts", "engine", "source", "extra", "histograms"))

# The one multi-engine rule: what a whole-server sample (``across_engines``) makes of its engines' values.
# Counts and counters add up (requests in the server, tokens it computed). KV cache usage is the fullest engine's,
# not the mean: the fullest engine is the one that preempts or refuses first, and a stalled engine holding its KV
# blocks keeps the maximum flat while idle engines' small moves would move a mean and read as progress (the stall
# rule takes a KV move as a step's progress); the probe runner always took the maximum, so its verdicts stay as they
# were (the engine-stats chart averaged before). Fields in neither tuple stay per engine (None in the whole-server
# sample); add one here when a reader needs it whole-server.
ENGINE_SUMS = ("num_requests_running", "num_requests_waiting", "prompt_tokens_total", "request_success_total",
               "prefix_cache_queries_total", "prefill_seconds_total", "prompt_throughput")
ENGINE_MAX = ("kv_cache_usage_perc",)
ALL_ENGINES = "all"  # the engine label of a whole-server sample made of several engines


def across_engines(engines: Iterable[EngineSample], ts: float) -> EngineSample:
    """One whole-server sample at ``ts`` from its engines' samples, by the one rule above (``ENGINE_SUMS`` add up,
    ``ENGINE_MAX`` the largest, the KV cache size the first engine's that states one); a single engine keeps its
    label, several read ``all``. Missing stays None: a sum of engines that all lack a value is None, never 0."""
    es = list(engines)
    kw: dict[str, Any] = {}
    for f in ENGINE_SUMS:
        vals = [v for e in es if (v := getattr(e, f)) is not None]
        kw[f] = sum(vals) if vals else None
    for f in ENGINE_MAX:
        vals = [v for e in es if (v := getattr(e, f)) is not None]
        kw[f] = max(vals) if vals else None
    return EngineSample(ts=ts, engine=ALL_ENGINES if len(es) > 1 else (es[0].engine if es else "0"),
                        kv_cache_size_tokens=next((e.kv_cache_size_tokens for e in es if e.kv_cache_size_tokens),
                                                  None), **kw)


class EnginePage(Protocol):
    """What ``server_sample`` reads of a parsed /metrics page (``triage.vllm.metrics.MetricsPage``): its engines'
    samples. A protocol, not that class: the parser imports this module for the sample type, never the reverse."""

    @property
    def engines(self) -> Mapping[str, EngineSample]: ...


def server_sample(page: EnginePage, ts: float) -> EngineSample:
    """The scrape→sample function: one /metrics page (``triage.vllm.metrics.parse_metrics``) as one whole-server
    sample at ``ts`` (``across_engines`` of its engines). Watch keeps the page's engines apart instead."""
    return across_engines(page.engines.values(), ts)


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
        """From a stored probe's ``detail`` (request, response, samples as ``to_dict()`` or older probe rows,
        recovery)."""
        d = detail or {}
        rec = d.get("recovery") if isinstance(d.get("recovery"), Mapping) else {}
        rows = d.get("samples") if isinstance(d.get("samples"), list) else []
        return cls(probe, outcome, tuple(EngineSample.from_dict(r) for r in rows if isinstance(r, Mapping)),
                   time_to_verdict_s, (rec or {}).get("aborted_at_s"))

"""The periodic `Engine NNN:` stats line as an EngineSample (source "log"), and the bounded series.

A log line carries gauges and per-interval throughputs, no counters: those fields stay None.
The line's own extras (KV device label, preemptions and deferred requests in the interval) go to
``EngineSample.extra``.
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator

from triage.sample import LOG, EngineSample, frozen_extra
from triage.vllm import logformats as lf


def parse_stats(msg: str, lineno: int = 0, ts: Optional[float] = None) -> Iterator[EngineSample]:
    """Every stats record inside ``msg`` (usually one; two when records were interleaved)."""
    if "throughput" not in msg:
        return
    for m in lf.STATS_RE.finditer(msg):
        tail = msg[m.end() : m.end() + 400]
        nxt = tail.find("Avg prompt throughput")
        if nxt >= 0:
            tail = tail[:nxt]
        extra: dict[str, Any] = {}
        kv = lf.STATS_KV_RE.search(tail) if "KV cache" in tail else None
        if kv:
            extra["kv_device"] = kv["device"]
        if "Preemptions" in tail:
            pre = lf.STATS_PREEMPTIONS_RE.search(tail)
            if pre:
                extra["preemptions"] = int(pre.group(1))
        if "Deferred" in tail:
            dfr = lf.STATS_DEFERRED_RE.search(tail)
            if dfr:
                extra["deferred"] = int(dfr.group(1))
        hit = lf.STATS_PREFIX_HIT_RE.search(tail) if "Prefix cache" in tail else None
        if m["engine"] is not None:
            engine = m["engine"]
        elif m["n_engines"] is not None:
            engine = f"aggregated:{m['n_engines']}"
        else:
            engine = ""
        yield EngineSample(
            ts=ts,  # type: ignore[arg-type]  # None: a line without a timestamp
            engine=engine,
            source=LOG,
            line=lineno,
            prompt_throughput=float(m["prompt"]),
            generation_throughput=float(m["gen"]),
            num_requests_running=int(m["running"]),
            num_requests_waiting=int(m["waiting"]),
            kv_cache_usage_perc=float(kv["pct"]) / 100 if kv else None,
            prefix_cache_hit_rate=float(hit.group(1)) / 100 if hit else None,
            extra=frozen_extra(extra),
        )


def _merge(a: EngineSample, b: EngineSample) -> EngineSample:
    """Two neighbours as one: peaks of the gauges (a stall must stay visible), mean throughput."""
    n = a.merged + b.merged

    def mx(x: Optional[float], y: Optional[float]) -> Optional[float]:
        return y if x is None else x if y is None else max(x, y)

    def mean(x: Optional[float], y: Optional[float]) -> Optional[float]:
        if x is None or y is None:
            return y if x is None else x
        return (x * a.merged + y * b.merged) / n

    return a.with_(
        num_requests_running=mx(a.num_requests_running, b.num_requests_running),
        num_requests_waiting=mx(a.num_requests_waiting, b.num_requests_waiting),
        prompt_throughput=mean(a.prompt_throughput, b.prompt_throughput),
        generation_throughput=mean(a.generation_throughput, b.generation_throughput),
        kv_cache_usage_perc=mx(a.kv_cache_usage_perc, b.kv_cache_usage_perc),
        prefix_cache_hit_rate=b.prefix_cache_hit_rate
        if b.prefix_cache_hit_rate is not None
        else a.prefix_cache_hit_rate,
        extra=frozen_extra({**a.extra, **b.extra}),
        merged=n,
    )


class BoundedSeries:
    """Keeps at most ``cap`` samples: when full, neighbours are merged pairwise (halving).

    A week of 10 s stats lines is 60k samples; a 100 MB log can hold 500k. The stall verdicts are
    computed on the full stream elsewhere; this series only feeds charts and the store.
    """

    def __init__(self, cap: int = 20_000) -> None:
        self.cap = max(2, cap)
        self.points: list[EngineSample] = []
        self.total = 0
        self._stride = 1  # raw lines per stored sample
        self._pending: Optional[EngineSample] = None

    def add(self, p: EngineSample) -> None:
        self.total += 1
        if self._stride > 1:
            self._pending = p if self._pending is None else _merge(self._pending, p)
            if self._pending.merged < self._stride:
                return
            p, self._pending = self._pending, None
        self.points.append(p)
        if len(self.points) >= self.cap:
            pts = self.points
            self.points = [_merge(pts[i], pts[i + 1]) if i + 1 < len(pts) else pts[i] for i in range(0, len(pts), 2)]
            self._stride *= 2

    def finish(self) -> list[EngineSample]:
        if self._pending is not None:
            self.points.append(self._pending)
            self._pending = None
        return self.points

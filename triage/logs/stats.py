"""The periodic `Engine NNN:` stats line as a value, and the bounded series built from many."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional
from collections.abc import Iterator

from triage.stall import StallSample
from triage.vllm import logformats as lf


@dataclass(frozen=True)
class StatsPoint:
    """One stats line: throughputs, request gauges and the optional fields it carried."""

    lineno: int
    ts: Optional[float]
    engine: str  # "000", "001", … or "aggregated:N" for `N Engines Aggregated:`; "" when unlabelled (V0)
    prompt_throughput: float
    generation_throughput: float
    running: int
    waiting: int
    kv_cache_usage_perc: Optional[float] = None  # 0–1 like the /metrics gauge (the line prints %)
    kv_device: Optional[str] = None  # GPU | CPU | …
    preemptions: Optional[int] = None
    deferred: Optional[int] = None
    prefix_cache_hit_rate: Optional[float] = None  # 0–1
    merged: int = 1  # how many lines this point stands for after downsampling

    @property
    def made_progress(self) -> bool:
        return self.prompt_throughput > 0 or self.generation_throughput > 0

    def stall_sample(self, ts: float) -> StallSample:
        return StallSample(ts=ts, running=self.running, waiting=self.waiting, made_progress=self.made_progress)


def parse_stats(msg: str, lineno: int = 0, ts: Optional[float] = None) -> Iterator[StatsPoint]:
    """Every stats record inside ``msg`` (usually one; two when records were interleaved)."""
    if "throughput" not in msg:
        return
    for m in lf.STATS_RE.finditer(msg):
        tail = msg[m.end() : m.end() + 400]
        nxt = tail.find("Avg prompt throughput")
        if nxt >= 0:
            tail = tail[:nxt]
        kv = lf.STATS_KV_RE.search(tail)
        pre = lf.STATS_PREEMPTIONS_RE.search(tail)
        dfr = lf.STATS_DEFERRED_RE.search(tail)
        hit = lf.STATS_PREFIX_HIT_RE.search(tail)
        if m["engine"] is not None:
            engine = m["engine"]
        elif m["n_engines"] is not None:
            engine = f"aggregated:{m['n_engines']}"
        else:
            engine = ""
        yield StatsPoint(
            lineno=lineno,
            ts=ts,
            engine=engine,
            prompt_throughput=float(m["prompt"]),
            generation_throughput=float(m["gen"]),
            running=int(m["running"]),
            waiting=int(m["waiting"]),
            kv_cache_usage_perc=float(kv["pct"]) / 100 if kv else None,
            kv_device=kv["device"] if kv else None,
            preemptions=int(pre.group(1)) if pre else None,
            deferred=int(dfr.group(1)) if dfr else None,
            prefix_cache_hit_rate=float(hit.group(1)) / 100 if hit else None,
        )


def _merge(a: StatsPoint, b: StatsPoint) -> StatsPoint:
    """Two neighbours as one: peaks of the gauges (a stall must stay visible), mean throughput."""
    n = a.merged + b.merged

    def mx(x: Optional[float], y: Optional[float]) -> Optional[float]:
        return y if x is None else x if y is None else max(x, y)

    return replace(
        a,
        running=max(a.running, b.running),
        waiting=max(a.waiting, b.waiting),
        prompt_throughput=(a.prompt_throughput * a.merged + b.prompt_throughput * b.merged) / n,
        generation_throughput=(a.generation_throughput * a.merged + b.generation_throughput * b.merged) / n,
        kv_cache_usage_perc=mx(a.kv_cache_usage_perc, b.kv_cache_usage_perc),
        preemptions=b.preemptions if b.preemptions is not None else a.preemptions,
        prefix_cache_hit_rate=b.prefix_cache_hit_rate
        if b.prefix_cache_hit_rate is not None
        else a.prefix_cache_hit_rate,
        merged=n,
    )


class BoundedSeries:
    """Keeps at most ``cap`` points: when full, neighbours are merged pairwise (halving).

    A week of 10 s stats lines is 60k points; a 100 MB log can hold 500k. The stall verdicts are
    computed on the full stream elsewhere; this series only feeds charts and the store.
    """

    def __init__(self, cap: int = 20_000) -> None:
        self.cap = max(2, cap)
        self.points: list[StatsPoint] = []
        self.total = 0
        self._stride = 1  # raw lines per stored point
        self._pending: Optional[StatsPoint] = None

    def add(self, p: StatsPoint) -> None:
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

    def finish(self) -> list[StatsPoint]:
        if self._pending is not None:
            self.points.append(self._pending)
            self._pending = None
        return self.points

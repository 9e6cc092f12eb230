"""The periodic `Engine NNN:` stats line as an EngineSample (source "log"), and the bounded series.

A log line carries gauges and per-interval throughputs, no counters: those fields stay None.
The line's own extras (KV device label, preemptions and deferred requests in the interval) go to
``EngineSample.extra``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Optional

from triage.sample import LOG, EngineSample, frozen_extra
from triage.vllm import logformats as lf


# what a stats record says, without its time and line: (engine, prompt tokens/s, generation tokens/s, running,
# waiting, KV usage 0-1 or None, prefix-cache hit rate 0-1 or None, extras)
StatsValues = tuple[str, float, float, int, int, Optional[float], Optional[float], dict[str, Any]]


def stats_values(msg: str) -> list[StatsValues]:
    """Every stats record inside ``msg`` (usually one; two when records were interleaved), as plain values."""
    out: list[StatsValues] = []
    if "throughput" not in msg:
        return out
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
        extra = _interned(extra)
        if m["engine"] is not None:
            engine = m["engine"]
        elif m["n_engines"] is not None:
            engine = f"aggregated:{m['n_engines']}"
        else:
            engine = ""
        out.append(
            (
                engine,
                float(m["prompt"]),
                float(m["gen"]),
                int(m["running"]),
                int(m["waiting"]),
                float(kv["pct"]) / 100 if kv else None,
                float(hit.group(1)) / 100 if hit else None,
                extra,
            )
        )
    return out


# one dict per distinct extras (they are never changed once built): the points of a log share it, so a merge of two
# points finds the same object on both sides (no new dict) and PointSeries.finish freezes it once, not per point
_EXTRAS: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
_EXTRAS_MAX = 256


def _interned(extra: dict[str, Any]) -> dict[str, Any]:
    key = tuple(extra.items())
    got = _EXTRAS.get(key)
    if got is None:
        if len(_EXTRAS) >= _EXTRAS_MAX:
            _EXTRAS.clear()
        got = _EXTRAS[key] = extra
    return got


def parse_stats(msg: str, lineno: int = 0, ts: Optional[float] = None) -> Iterator[EngineSample]:
    """Every stats record inside ``msg`` (usually one; two when records were interleaved)."""
    for v in stats_values(msg):
        yield _sample((ts, lineno, *v, 1))


# a series point while the log is read: (ts, line, engine, prompt, gen, running, waiting, kv, hit, extra, merged);
# an EngineSample is made only for the points kept, at the end
Point = tuple[Any, ...]


_FIELDS = EngineSample(ts=0.0, source=LOG).__dict__  # every field at its default: the template of _sample
_new = object.__new__
_set_attr = object.__setattr__


def _sample(t: Point, extra: Optional[Mapping[str, Any]] = None) -> EngineSample:
    """The EngineSample of a point: what EngineSample(ts=…, engine=…, source=LOG, …) builds, its instance dict a copy
    of the defaults' with the point's fields stored in it (a frozen dataclass's ``__setattr__`` per field was 6 µs a
    sample, an update with keyword arguments a third of that; the points kept are many). ``extra``: the frozen
    extras when the caller shares them between samples (PointSeries.finish)."""
    ts, line, engine, prompt, gen, running, waiting, kv, hit, raw_extra, merged = t
    d = _FIELDS.copy()
    d["ts"] = ts  # None: a line without a timestamp
    d["engine"] = engine
    d["line"] = line
    d["prompt_throughput"] = prompt
    d["generation_throughput"] = gen
    d["num_requests_running"] = running
    d["num_requests_waiting"] = waiting
    d["kv_cache_usage_perc"] = kv
    d["prefix_cache_hit_rate"] = hit
    d["extra"] = frozen_extra(raw_extra) if extra is None else extra
    d["merged"] = merged
    s = _new(EngineSample)
    _set_attr(s, "__dict__", d)
    return s


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


def _merge_points(a: Point, b: Point) -> Point:
    """_merge on points: the same arithmetic, in the same order (tests/logs/test_fast_paths.py compares the two);
    the two points unpacked once (indexing each field was a tenth slower)."""
    ts, line, engine, x1, x2, r1, w1, k1, h1, e1, am = a
    _ts, _line, _engine, y1, y2, r2, w2, k2, h2, e2, bm = b
    n = am + bm
    # _mx inlined (max(x, y) is `y if y > x else x`: the first of equals, the same comparison)
    return (
        ts,
        line,
        engine,
        (y1 if x1 is None else x1) if x1 is None or y1 is None else (x1 * am + y1 * bm) / n,
        (y2 if x2 is None else x2) if x2 is None or y2 is None else (x2 * am + y2 * bm) / n,
        r2 if r1 is None else r1 if r2 is None else r2 if r2 > r1 else r1,
        w2 if w1 is None else w1 if w2 is None else w2 if w2 > w1 else w1,
        k2 if k1 is None else k1 if k2 is None else k2 if k2 > k1 else k1,
        h2 if h2 is not None else h1,
        e1 if e1 is e2 or not e2 else e2 if not e1 else {**e1, **e2},  # extras are never changed once built: shared
        n,
    )


class PointSeries:
    """BoundedSeries on points: the same kept samples, without an EngineSample per stats line."""

    def __init__(self, cap: int = 20_000) -> None:
        self.cap = max(2, cap)
        self.points: list[Point] = []
        self._stride = 1
        self._pending: Optional[Point] = None

    def add(self, p: Point) -> None:
        """One raw point (merged 1). (No count of the points added: none was read, and the hot path is one call per
        stats line.)"""
        pend = self._pending
        if pend is not None:  # stride > 1 and a group begun
            pend = _merge_points(pend, p)
            if pend[10] < self._stride:
                self._pending = pend
                return
            self._pending = None
            p = pend
        elif self._stride > 1:
            self._pending = p
            return  # stride > 1: one raw point never fills it
        points = self.points
        points.append(p)
        if len(points) >= self.cap:
            self.points = [
                _merge_points(points[i], points[i + 1]) if i + 1 < len(points) else points[i]
                for i in range(0, len(points), 2)
            ]
            self._stride *= 2

    def finish(self) -> list[EngineSample]:
        if self._pending is not None:
            self.points.append(self._pending)
            self._pending = None
        frozen: dict[int, Mapping[str, Any]] = {}  # id of a point's extras -> their frozen copy, shared (read-only)
        out = []
        for p in self.points:
            e = p[9]
            f = frozen.get(id(e))  # the points hold their extras: an id names one dict throughout
            if f is None:
                f = frozen[id(e)] = frozen_extra(e)
            out.append(_sample(p, f))
        return out

"""Time-series arithmetic for engine stats: counter rates (with resets), histogram quantiles over a
window, and min/max downsampling so a day of 1 s samples charts fast. Pure functions, no I/O."""

from __future__ import annotations

import math
from collections import deque
from typing import Optional
from collections.abc import Sequence

Hist = dict[str, float]  # {le: cumulative count, …, "sum": s, "count": n} as triage.vllm.metrics gives it


def counter_delta(prev: Optional[float], cur: Optional[float]) -> Optional[float]:
    """Increase of a Prometheus counter; a drop means the server restarted and counts from 0."""
    if cur is None or prev is None:
        return None
    return cur if cur < prev else cur - prev


def counter_rate(prev: Optional[float], prev_ts: Optional[float], cur: Optional[float], ts: float) -> Optional[float]:
    d = counter_delta(prev, cur)
    if d is None or prev_ts is None or ts <= prev_ts:
        return None
    return d / (ts - prev_ts)


def hist_delta(new: Hist, old: Optional[Hist]) -> Hist:
    """Observations between two snapshots of one histogram; a reset (count went down) keeps ``new``."""
    if not old or new.get("count", 0.0) < old.get("count", 0.0):
        return dict(new)
    return {k: v - old.get(k, 0.0) for k, v in new.items()}


def _le(k: str) -> float:
    return math.inf if k in ("+Inf", "inf", "Inf") else float(k)


def histogram_quantile(q: float, hist: Hist) -> Optional[float]:
    """Prometheus' histogram_quantile: linear interpolation inside the bucket that holds rank q·n."""
    buckets = sorted(((_le(k), v) for k, v in hist.items() if k not in ("sum", "count")), key=lambda b: b[0])
    if not buckets:
        return None
    total = buckets[-1][1]
    if total <= 0:
        return None
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if math.isinf(le):
                return prev_le  # the highest finite bound, as Prometheus does
            if c == prev_c:
                return le
            return prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
        prev_le, prev_c = le, c
    return prev_le


class WindowedHistogram:
    """Quantiles of the observations of the last ``window_s`` seconds, from cumulative snapshots."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self._snaps: deque[tuple[float, Hist]] = deque()

    def add(self, ts: float, hist: Hist) -> None:
        if self._snaps and hist.get("count", 0.0) < self._snaps[-1][1].get("count", 0.0):
            self._snaps.clear()  # counter reset: the old snapshots describe another process
        self._snaps.append((ts, dict(hist)))
        while len(self._snaps) > 2 and self._snaps[1][0] <= ts - self.window_s:
            self._snaps.popleft()

    def quantile(self, q: float) -> Optional[float]:
        if not self._snaps:
            return None
        if len(self._snaps) == 1:
            d = self._snaps[0][1]
        else:
            d = hist_delta(self._snaps[-1][1], self._snaps[0][1])
        if d.get("count", 0.0) <= 0:
            return None
        return histogram_quantile(q, d)


def bucket_bounds(n: int, max_points: int) -> list[tuple[int, int]]:
    """Split range(n) into at most ``max_points // 2`` contiguous index ranges."""
    buckets = max(1, max_points // 2)
    if n <= max_points:
        return [(i, i + 1) for i in range(n)]
    step = n / buckets
    return [(int(i * step), int((i + 1) * step)) for i in range(buckets)]


def downsample_minmax(
    xs: Sequence[float], ys: Sequence[Optional[float]], max_points: int = 2000
) -> tuple[list[float], list[Optional[float]]]:
    """At most ``max_points`` points: each bucket keeps its min and its max, in time order.

    Peaks and dips (a stall's running=1 plateau, a throughput spike) survive; an average would hide
    them. Gaps (None) survive as one None per bucket that had only gaps.
    """
    n = len(xs)
    if n <= max_points:
        return list(xs), list(ys)
    ox: list[float] = []
    oy: list[Optional[float]] = []
    for a, b in bucket_bounds(n, max_points):
        lo_i = hi_i = -1
        lo = hi = 0.0
        for i in range(a, b):
            v = ys[i]
            if v is None:
                continue
            if lo_i < 0 or v < lo:
                lo, lo_i = v, i
            if hi_i < 0 or v > hi:
                hi, hi_i = v, i
        if lo_i < 0:
            ox.append(xs[a])
            oy.append(None)
        elif lo_i == hi_i:
            ox.append(xs[lo_i])
            oy.append(lo)
        else:
            i1, i2 = sorted((lo_i, hi_i))
            ox.extend((xs[i1], xs[i2]))
            oy.extend((ys[i1], ys[i2]))
    return ox, oy


def stride_indices(n: int, max_points: int) -> list[int]:
    """Evenly spaced indices (first and last kept) for series that are already window-smoothed."""
    if n <= max_points:
        return list(range(n))
    step = (n - 1) / (max_points - 1)
    return sorted({round(i * step) for i in range(max_points)})

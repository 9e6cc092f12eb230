"""Prometheus' HTTP API, read-only: ``query_range`` split into chunks under the points limit and
fetched concurrently within a bound. Failures are values (`PromError`), never tracebacks."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

MAX_POINTS = 11_000  # Prometheus refuses a query_range that returns more points per series
CHUNK_POINTS = 10_000  # a margin below it (start and end are both inclusive)


@dataclass(frozen=True)
class PromError:
    """A query Prometheus (or the path to it) could not answer."""

    query: str
    message: str
    kind: str = "error"  # unreachable | http | bad-data | timeout | error


@dataclass
class Series:
    labels: dict[str, str]
    points: dict[float, float] = field(default_factory=dict)  # ts -> value


@dataclass
class RangeResult:
    """Every chunk of one query merged: series by their label set, errors of the chunks that failed."""

    query: str
    series: dict[tuple[tuple[str, str], ...], Series] = field(default_factory=dict)
    errors: list[PromError] = field(default_factory=list)


MIN_CHUNK_POINTS = 1_000  # below this, one request is cheaper than several


def chunks(start: float, end: float, step: float, max_points: int = CHUNK_POINTS,
           parts: int = 1) -> list[tuple[float, float]]:
    """Contiguous [a, b] windows on the step grid, each at most ``max_points`` points, none overlapping;
    a long range is cut in at least ``parts`` windows (of >= MIN_CHUNK_POINTS) so they can run at once."""
    if end < start:
        return []
    n = int(math.floor((end - start) / step)) + 1
    if parts > 1 and n > MIN_CHUNK_POINTS:
        max_points = min(max_points, max(MIN_CHUNK_POINTS, math.ceil(n / parts)))
    out = []
    i = 0
    while i < n:
        j = min(n, i + max_points)
        out.append((start + i * step, start + (j - 1) * step))
        i = j
    return out


def _get(client: httpx.Client, base: str, query: str, a: float, b: float, step: float) -> Any:
    try:
        r = client.get(f"{base}/api/v1/query_range",
                       params={"query": query, "start": f"{a:.3f}", "end": f"{b:.3f}", "step": f"{step:g}"})
    except httpx.TimeoutException as e:
        return PromError(query, f"Prometheus at {base} did not answer in time ({e.__class__.__name__})", "timeout")
    except httpx.HTTPError as e:
        return PromError(query, f"Prometheus at {base} is not reachable: {e}", "unreachable")
    try:
        doc = r.json()
    except ValueError:
        return PromError(query, f"{base} answered HTTP {r.status_code} with something that is not Prometheus' "
                                "API (check the URL)", "http")
    if doc.get("status") != "success":
        return PromError(query, f"Prometheus refused the query (HTTP {r.status_code}, {doc.get('errorType')}): "
                                f"{doc.get('error')}", "bad-data" if r.status_code == 400 else "http")
    return doc.get("data", {}).get("result", [])


def query_ranges(base: str, queries: Mapping[str, str], start: float, end: float, step: float, *,
                 max_workers: int = 4, max_points: int = CHUNK_POINTS, timeout_s: float = 180.0,
                 headers: Mapping[str, str] | None = None,
                 on_chunk: Callable[[str, int, int], None] | None = None) -> dict[str, RangeResult]:
    """Run every query over [start, end] at ``step``; at most ``max_workers`` requests in flight."""
    base = base.rstrip("/")
    windows = chunks(start, end, step, max_points, parts=max_workers)
    jobs = [(name, q, a, b) for name, q in queries.items() for a, b in windows]
    results = {name: RangeResult(query=q) for name, q in queries.items()}
    done = 0
    with httpx.Client(timeout=timeout_s, headers=dict(headers or {})) as client, \
            ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        futs = [(name, pool.submit(_get, client, base, q, a, b, step)) for name, q, a, b in jobs]
        for name, fut in futs:
            got = fut.result()
            res = results[name]
            done += 1
            if on_chunk:
                on_chunk(name, done, len(jobs))
            if isinstance(got, PromError):
                if got.message not in {e.message for e in res.errors}:
                    res.errors.append(got)
                continue
            for item in got:
                labels = {k: v for k, v in (item.get("metric") or {}).items() if k != "__name__"}
                key = tuple(sorted(labels.items()))
                s = res.series.setdefault(key, Series(labels=labels))
                for ts, v in item.get("values") or ():
                    try:
                        s.points[float(ts)] = float(v)
                    except (TypeError, ValueError):
                        continue
    return results

"""Prometheus' HTTP API, read-only: ``query_range`` split into chunks under the points limit and
fetched concurrently within a bound. Every answer is read within one total deadline (the scan's, not per
read) and a byte cap, parsed one at a time, and merged within a series cap and a points cap; failures
(a trickle, a 400 MB answer, 300,000 series, JSON of another shape) are values (`PromError`), never
tracebacks. Prometheus is not a vLLM server: a replica's own /version goes through the one client
(triage.http, from triage.fleet.scan)."""
from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx loads when a scan runs, not when `fleet` reads its arguments (bench/bench_cli.py)
    from triage.http import HttpClient

MAX_POINTS = 11_000  # Prometheus refuses a query_range that returns more points per series
CHUNK_POINTS = 10_000  # a margin below it (start and end are both inclusive)


@dataclass(frozen=True)
class PromError:
    """A query Prometheus (or the path to it) could not answer."""

    query: str
    message: str
    kind: str = "error"  # unreachable | http | bad-data | timeout | too-large | too-many-series/points | error


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


MAX_ANSWER_BYTES = 16 * 1024 * 1024  # one chunk's answer: 11,000 points x ~60 series; parsed, ~10x that in memory
MAX_SERIES = 5_000  # label sets per query, all chunks together (a fleet of hundreds of engines fits)
MAX_TOTAL_POINTS = 2_000_000  # points kept over every query (~200 MB of dicts): a bigger scan is refused
MAX_RANGE_STEPS = 500_000  # steps per series over the range (15 s steps: ~86 days); more is a usage error
DEFAULT_DEADLINE_S = 120.0  # the whole of query_ranges, every chunk included


class _Cut(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def fetch(client: HttpClient, url: str, params: Mapping[str, str] | None, deadline: float,
          max_bytes: int) -> tuple[int, bytes]:
    """(status, body) of one GET read whole within ``deadline`` (a monotonic time: connect, headers and every byte
    together, so a server trickling a byte a second cannot hold it) and ``max_bytes``, by the one client's read
    (triage.http.get_within: Prometheus' larger cap is a parameter); raises _Cut otherwise."""
    from triage.http import cut_kind, get_within

    if deadline - time.monotonic() <= 0:
        raise _Cut("timeout", "no time left before the scan's deadline")
    try:
        return get_within(client, url, params, deadline, max_bytes)
    except Exception as e:  # noqa: BLE001 - httpx's errors and the client's cuts, each a kind
        kind = cut_kind(e)
        if kind == "too-large":
            raise _Cut(kind, f"answer over {max_bytes >> 20 or max_bytes} {'MB' if max_bytes >> 20 else 'bytes'}: "
                             "not read further (byte cap)") from None
        if kind == "timeout":
            raise _Cut(kind, f"no complete answer before the deadline (total, not per read; "
                             f"{e.__class__.__name__.lstrip('_')})") from None
        raise _Cut("unreachable", f"not reachable: {str(e)[:200]}") from None


def _rows(base: str, query: str, status: int, body: bytes) -> list[Any] | PromError:
    """The ``data.result`` list of a query_range answer, or why it is not one (any shape a proxy or a broken
    Prometheus can send is a PromError: one bad chunk is a finding, not the end of the scan)."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return PromError(query, f"{base} answered HTTP {status} with something that is not Prometheus' API "
                                "(check the URL)", "http" if status != 200 else "bad-data")
    if not isinstance(doc, dict):
        return PromError(query, f"{base} answered HTTP {status} with JSON that is not Prometheus' API", "bad-data")
    if doc.get("status") != "success":
        return PromError(query, f"Prometheus refused the query (HTTP {status}, {str(doc.get('errorType'))[:80]}): "
                                f"{str(doc.get('error'))[:300]}", "bad-data" if status == 400 else "http")
    data = doc.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list):
        return PromError(query, f"{base} answered without a data.result list (not a range query's answer)", "bad-data")
    if len(result) > MAX_SERIES:
        return PromError(query, f"{len(result)} series in one answer: more than the {MAX_SERIES} series cap "
                                "(narrow --match)", "too-many-series")
    return result


class _Merge:
    """Every chunk's rows merged into the results under one lock, with the series and points caps."""

    def __init__(self, results: dict[str, RangeResult]) -> None:
        self.results = results
        self.lock = threading.Lock()
        self.points = 0
        self.full: PromError | None = None

    def add(self, name: str, rows: list[Any]) -> PromError | None:
        res = self.results[name]
        for item in rows:
            if self.full is not None:
                return self.full
            if not isinstance(item, dict):
                return PromError(res.query, "a series in the answer is not an object", "bad-data")
            metric = item.get("metric")
            labels = {str(k): str(v) for k, v in metric.items() if k != "__name__"} if isinstance(metric, dict) else {}
            key = tuple(sorted(labels.items()))
            s = res.series.get(key)
            if s is None:
                if len(res.series) >= MAX_SERIES:
                    return PromError(res.query, f"more than {MAX_SERIES} series (series cap): the rest are left out "
                                                "(narrow --match)", "too-many-series")
                s = res.series[key] = Series(labels=labels)
            values = item.get("values")
            if not isinstance(values, list):
                continue
            for pair in values:
                try:
                    ts, v = pair
                    s.points[float(ts)] = float(v)
                except (TypeError, ValueError):
                    continue
                self.points += 1
                if self.points > MAX_TOTAL_POINTS:
                    self.full = PromError(res.query, f"more than {MAX_TOTAL_POINTS:,} points over the scan (points "
                                                     "cap): the rest are left out (shorten the range or widen --step)",
                                          "too-many-points")
                    return self.full
        return None


def _chunk(client: HttpClient, base: str, name: str, query: str, a: float, b: float, step: float,
           deadline: float, merge: _Merge) -> PromError | None:
    params = {"query": query, "start": f"{a:.3f}", "end": f"{b:.3f}", "step": f"{step:g}"}
    try:
        status, body = fetch(client, f"{base}/api/v1/query_range", params, deadline, MAX_ANSWER_BYTES)
    except _Cut as e:
        what = {"timeout": "did not answer in time", "unreachable": "is not reachable"}.get(e.kind, "answered too much")
        return PromError(query, f"Prometheus at {base} {what}: {e}", e.kind)
    n = body.count(b'"metric"')  # a C-speed count before any parse: 300,000 series are refused unparsed
    if n > MAX_SERIES:
        return PromError(query, f"{n} series in one answer: more than the {MAX_SERIES} series cap (narrow --match)",
                         "too-many-series")
    with merge.lock:  # one parse at a time: parsed JSON is ~10x its bytes, and the GIL runs one anyway
        if time.monotonic() > deadline:
            return PromError(query, f"Prometheus at {base}: the scan's deadline passed before this chunk was read",
                             "timeout")
        rows = _rows(base, query, status, body)
        del body
        return rows if isinstance(rows, PromError) else merge.add(name, rows)


def range_steps(start: float, end: float, step: float) -> int:
    """How many steps one series has over [start, end] (what MAX_RANGE_STEPS bounds)."""
    return int(math.floor((end - start) / step)) + 1 if end >= start and step > 0 else 0


def query_ranges(base: str, queries: Mapping[str, str], start: float, end: float, step: float, *,
                 max_workers: int = 4, max_points: int = CHUNK_POINTS, timeout_s: float = DEFAULT_DEADLINE_S,
                 headers: Mapping[str, str] | None = None,
                 on_chunk: Callable[[str, int, int], None] | None = None) -> dict[str, RangeResult]:
    """Run every query over [start, end] at ``step``; at most ``max_workers`` requests in flight, all of them within
    ``timeout_s`` in total, each answer within MAX_ANSWER_BYTES, the merge within MAX_SERIES and MAX_TOTAL_POINTS.
    What failed is a PromError in its result (a range over MAX_RANGE_STEPS is refused before any request)."""
    base = base.rstrip("/")
    results = {name: RangeResult(query=q) for name, q in queries.items()}
    n = range_steps(start, end, step)
    if n > MAX_RANGE_STEPS:
        for res in results.values():
            res.errors.append(PromError(res.query, f"the range holds {n:,} steps of {step:g} s: more than the "
                                                   f"{MAX_RANGE_STEPS:,} steps cap (shorten it or widen --step)",
                                        "too-many-points"))
        return results
    windows = chunks(start, end, step, max_points, parts=max_workers)
    jobs = [(name, q, a, b) for name, q in queries.items() for a, b in windows]
    deadline = time.monotonic() + timeout_s
    merge = _Merge(results)
    done = 0
    from triage.http import service_client

    with service_client(headers) as client, \
            ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        futs = [(name, pool.submit(_chunk, client, base, name, q, a, b, step, deadline, merge))
                for name, q, a, b in jobs]
        for name, fut in futs:
            try:
                got = fut.result()
            except Exception as e:  # noqa: BLE001 - a chunk nobody foresaw is a finding, not the end of the scan
                got = PromError(results[name].query, f"a chunk could not be read: {type(e).__name__}: {str(e)[:200]}")
            res = results[name]
            done += 1
            if on_chunk:
                on_chunk(name, done, len(jobs))
            if isinstance(got, PromError) and got.message not in {e.message for e in res.errors}:
                res.errors.append(got)
    return results

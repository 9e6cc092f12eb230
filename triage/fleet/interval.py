"""How often Prometheus scraped the replicas, and the query step that reads every one of those scrapes.

A ``query_range`` shows, at each step, the newest sample at or before it: a step coarser than the
scrape interval skips samples, and which ones depends on where the grid falls (a 20 s hang scraped
every 2 s was found by one run and missed by the next with a 15 s step). A step a little finer than
the interval (``STEP_FRACTION``, at most ``MAX_SLACK_S`` finer) puts at least one grid point between any
two scrapes however the grid falls, so every scrape is read; the scan drops the repeats by their own timestamps
(`replicas.scraped`). The interval comes from Prometheus itself: ``/api/v1/targets`` reports each
target's ``scrapeInterval``; for series no active target carries (a backfilled TSDB, replicas gone
since) it is measured from the data (samples per window); else ``FALLBACK_S``.
Read-only GETs of small answers; the range queries stay in `prom`.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from triage.fleet.replicas import METRICS, selector

if TYPE_CHECKING:  # httpx loads when a scan runs (bench/bench_cli.py: `fleet`'s usage errors)
    from triage.http import HttpClient

STEP_FRACTION = 0.9  # a scrape may come this late (10 % of an interval) and still fall between two grid points...
MAX_SLACK_S = 0.5  # ...up to half a second: Prometheus stamps a scrape at its scheduled start, late by ms
FALLBACK_S = 15.0  # Prometheus' default scrape_interval
MIN_INTERVAL_S = 0.01  # a finer "interval" is no scrape interval (sub-ms rounds the step to 0: ZeroDivisionError)
MEASURE_WINDOW_S = 600.0
RAW_WINDOW_S = 300.0  # raw samples read to measure it (100 replicas at 15 s: 2,000 points)
_DUR = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, "y": 31536000.0}


@dataclass(frozen=True)
class ScrapeInterval:
    seconds: float
    source: str  # targets | data | default
    detail: str = ""

    @property
    def step(self) -> float:
        """The query step that reads every scrape once (repeats dropped by timestamp): 1.8 s for 2 s scrapes,
        14.5 s for 15 s (3 % more points than the interval itself, not 11 %)."""
        return max(0.001, round(self.seconds - min(self.seconds * (1 - STEP_FRACTION), MAX_SLACK_S), 3))


def prom_duration(text: str) -> Optional[float]:
    """Prometheus' duration text ('2s', '1m30s', '500ms') in seconds; None when it is not one."""
    t = (text or "").strip()
    parts = _DUR.findall(t)
    if not parts or "".join(a + b for a, b in parts) != t:
        return None
    return sum(float(a) * _UNIT[b] for a, b in parts)


def _get(client: HttpClient, base: str, path: str, params: dict[str, str] | None = None,
         until: Optional[float] = None) -> Any:
    """Prometheus' ``data``, read as prom.fetch reads (by ``until``, the discovery's total deadline, else the
    client's timeout; the byte cap)."""
    from triage.fleet.prom import MAX_ANSWER_BYTES, _Cut, fetch

    deadline = until if until is not None else time.monotonic() + (client.timeout.read or 10.0)
    try:
        _status, body = fetch(client, f"{base}{path}", params, deadline, MAX_ANSWER_BYTES)
        doc = json.loads(body)
    except (_Cut, ValueError, RecursionError):
        return None
    data = doc.get("data") if isinstance(doc, dict) and doc.get("status") == "success" else None
    return data if isinstance(data, dict) else None  # a list or a string as `data`: nothing read (issue 33)


def _labels(t: dict[str, Any]) -> dict[str, str]:
    """A target's or series' labels as strings (a list, a number or a dict as a label value: no crash)."""
    raw = t.get("labels") if "labels" in t else t.get("metric")
    return {str(k): v if isinstance(v, str) else json.dumps(v, default=str)[:200]
            for k, v in raw.items()} if isinstance(raw, dict) else {}


def _vllm_targets(client: HttpClient, base: str, match: str, at: float,
                  until: Optional[float] = None) -> set[tuple[str, str]]:
    q = f"count by (job, instance) ({selector(METRICS['num_requests_running'], match)})"
    data = _get(client, base, "/api/v1/query", {"query": q, "time": f"{at:.3f}"}, until) or {}
    result = data.get("result")
    return {(_labels(r).get("job", ""), _labels(r).get("instance", "")) for r in
            (result if isinstance(result, list) else ()) if isinstance(r, dict) and isinstance(r.get("metric"), dict)}


def from_targets(client: HttpClient, base: str, match: str, at: float,
                 any_target: bool = False, until: Optional[float] = None) -> Optional[ScrapeInterval]:
    """The finest ``scrapeInterval`` among the active targets that carry vLLM series at ``at`` (with
    ``any_target``: among all active targets, for series no target can be matched to)."""
    data = _get(client, base, "/api/v1/targets", {"state": "active"}, until) or {}
    active = data.get("activeTargets")
    targets = [t for t in (active if isinstance(active, list) else ()) if isinstance(t, dict)]
    if not any_target:
        vllm = _vllm_targets(client, base, match, at, until)
        targets = [t for t in targets if (_labels(t).get("job", ""), _labels(t).get("instance", "")) in vllm]
    found = [(s, t) for t in targets
             if (s := prom_duration(str(t.get("scrapeInterval", "")))) and s >= MIN_INTERVAL_S]
    if not found:
        return None
    s, t = min(found, key=lambda x: x[0])
    who = _labels(t).get("instance", "?")
    return ScrapeInterval(s, "targets", f"scrapeInterval {t.get('scrapeInterval')} of {len(found)} active "
                                        f"target{'s' if len(found) != 1 else ''} (finest: {who})")


def from_data(client: HttpClient, base: str, match: str, at: float, window_s: float,
              until: Optional[float] = None) -> Optional[ScrapeInterval]:
    """Measured: the raw samples of the last ``RAW_WINDOW_S`` before ``at`` (the finest median gap among the
    series), else the samples per window (coarser intervals)."""
    w = int(max(1.0, min(RAW_WINDOW_S, window_s)))
    sel = selector(METRICS["num_requests_running"], match)
    data = _get(client, base, "/api/v1/query", {"query": f"{sel}[{w}s]", "time": f"{at:.3f}"}, until) or {}
    gaps = []
    result = data.get("result")
    for r in result if isinstance(result, list) else ():
        try:
            ts = sorted(float(v[0]) for v in r.get("values") or ())
        except (TypeError, ValueError, IndexError):
            continue
        d = sorted(b - a for a, b in zip(ts, ts[1:], strict=False) if b - a >= MIN_INTERVAL_S)
        if d:
            gaps.append(d[len(d) // 2])
    if gaps:
        return ScrapeInterval(round(min(gaps), 3), "data", f"median gap between raw samples in {w} s before {at:.0f}")
    w = int(max(60.0, min(MEASURE_WINDOW_S, window_s)))
    data = _get(client, base, "/api/v1/query", {"query": f"max(count_over_time({sel}[{w}s]))", "time": f"{at:.3f}"},
                until)
    result = (data or {}).get("result")
    for r in result if isinstance(result, list) else ():
        try:
            n = float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if 2 <= n <= w / MIN_INTERVAL_S:
            return ScrapeInterval(round(w / n, 3), "data", f"{n:.0f} samples in {w} s before {at:.0f}")
    return None


def scrape_interval(base: str, match: str, start: float, end: float, *, timeout_s: float = 10.0,
                    headers: dict[str, str] | None = None) -> ScrapeInterval:
    """The replicas' scrape interval: their targets' in Prometheus, else measured in the range, else the
    finest of any active target, else the default. ``timeout_s`` bounds the whole discovery, every request
    together (a scan gives it a share of its own deadline, triage.fleet.scan); what it did not read in time
    falls through to the next source, at worst the default."""
    from triage.http import service_client

    base = base.rstrip("/")
    until = time.monotonic() + timeout_s
    with service_client(headers, timeout_s) as client:
        got = from_targets(client, base, match, end, until=until)
        for at in (end, (start + end) / 2, start + min(MEASURE_WINDOW_S, end - start)):
            if got is not None:
                break
            got = from_data(client, base, match, at, end - start, until)
        if got is None:
            got = from_targets(client, base, match, end, any_target=True, until=until)
    return got or ScrapeInterval(FALLBACK_S, "default", "no target reported one and no series showed it")

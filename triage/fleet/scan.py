"""The fleet scan: every replica's series from Prometheus through the one stall rule, then the
catalogue's verdict per replica. Pure orchestration over `prom` and `replicas`; no store, no output.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional


from triage.catalogue import STALL_CHECKS, explain_episodes, word_stall
from triage.catalogue.model import FailureMode
from triage.findings import Finding, Status
from triage.fleet.interval import ScrapeInterval, scrape_interval
from triage.fleet.prom import CHUNK_POINTS, DEFAULT_DEADLINE_S, PromError, query_ranges
from triage.fleet.replicas import (CACHE_CONFIG, DEFAULT_STALL_S, METRICS, REPLICA_LABELS, REQUIRED, SCRAPED_AT, UP,
                                   Episode, episode_dict, episodes, kv_tokens_from, queries, replica_name, scraped,
                                   to_sample)
from triage.recurrence import headline, summarize
from triage.sample import EngineSample

REPLICA_KEY = frozenset(REPLICA_LABELS)
CHECK_STALL, _, CHECK_RECURRING = STALL_CHECKS["fleet"]  # a replica's stall; short episodes, each aborted, again
CHECK_CLEAN = "fleet-replicas-clean"
CHECK_PROMETHEUS = "fleet-prometheus"
CHECK_METRIC = "fleet-metric-missing"
CHECK_UNSCRAPED = "fleet-replica-unscraped"
CHECK_STEP = "fleet-step-coarse"  # a --step coarser than the scrape interval: samples between steps unread


@dataclass
class Replica:
    name: str
    labels: dict[str, str]
    samples: list[EngineSample] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # metrics this replica did not carry
    version: Optional[str] = None

    def mode(self, kind: str) -> FailureMode:
        return explain_episodes(kind, self.version, self.recurrence(kind)["recurring"])

    def recurrence(self, kind: str) -> dict[str, Any]:
        """The episodes of one kind as production sees them (triage.recurrence)."""
        return summarize([e.span() for e in self.episodes if e.kind == kind])


@dataclass
class FleetScan:
    prometheus: str
    match: str
    start: float
    end: float
    step: float
    threshold_s: float
    replicas: list[Replica] = field(default_factory=list)
    errors: list[PromError] = field(default_factory=list)
    missing_metrics: list[str] = field(default_factory=list)  # carried by no replica at all
    unscraped: dict[str, tuple[int, int]] = field(default_factory=dict)  # instance -> (steps up == 0, steps)
    timings: dict[str, float] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    interval: Optional[ScrapeInterval] = None  # how often Prometheus scraped the replicas
    step_given: bool = False  # the caller chose the step (else it follows the interval)

    @property
    def reads_every_scrape(self) -> bool:
        return self.interval is None or self.step <= self.interval.seconds * 0.999


INTERVAL_TIMEOUT_S = 10.0  # interval discovery's share of the scan's deadline (at most half of it)
MAX_VERSION_BYTES = 64 * 1024  # a replica's /version answer ({"version": "0.32.0"} is 20 bytes)


def _version(instance: str, timeout_s: float) -> Optional[str]:
    """The replica's own /version when its instance label is reachable from here; None otherwise. Asked through
    the one client (triage.http: a total deadline, a byte cap, no redirects), as every vLLM server is."""
    from triage.http import VllmClient  # httpx loads when a replica is asked, not at `fleet`'s usage errors

    url = instance if "://" in instance else f"http://{instance}"
    try:
        with VllmClient(url, timeout_s=timeout_s, max_body_bytes=MAX_VERSION_BYTES) as c:
            r = c.get("/version")
    except Exception:  # noqa: BLE001 - a label that is no URL: the replica is judged without its version
        return None
    doc = r.json() if r.ok else None
    v = doc.get("version") if isinstance(doc, dict) else None
    return str(v)[:64] if isinstance(v, (str, int, float)) and v else None


def scan(prometheus: str, start: float, end: float, *, step: Optional[float] = None, match: str = "",
         threshold_s: float = DEFAULT_STALL_S, max_workers: int = 4, max_points: int = CHUNK_POINTS,
         ask_versions: bool = True, version_timeout_s: float = 2.0, deadline_s: float = DEFAULT_DEADLINE_S,
         progress: Callable[[str], None] = lambda _: None) -> FleetScan:
    """Query every replica's engine values over [start, end] and run the stall rule on each.

    ``step`` None (the default) follows the replicas' scrape interval (`interval`): every scrape is read,
    so the episodes found do not depend on where the step grid falls, i.e. on when the scan runs."""
    qs = queries(match)
    t0 = time.perf_counter()
    until = time.monotonic() + deadline_s  # --timeout: interval discovery and every range query together
    iv = scrape_interval(prometheus, match, start, end, timeout_s=min(INTERVAL_TIMEOUT_S, deadline_s / 2))
    out = FleetScan(prometheus=prometheus.rstrip("/"), match=match, start=start, end=end,
                    step=step if step else iv.step, threshold_s=threshold_s, queries=qs, interval=iv,
                    step_given=bool(step))
    out.timings["interval_s"] = round(time.perf_counter() - t0, 3)
    step = out.step
    # the grid ends on `end` (a range's last scrape is read whatever the step); scrapes before `start` are dropped
    grid_start = end - math.ceil((end - start) / step - 1e-9) * step
    results = query_ranges(out.prometheus, qs, grid_start, end + step * 1e-6, step, max_workers=max_workers,
                           max_points=max_points, timeout_s=max(0.0, until - time.monotonic()),
                           on_chunk=lambda n, i, total: progress(f"query {i}/{total}") if i % 10 == 0 else None)
    out.timings["query_s"] = round(time.perf_counter() - t0, 3)
    t1 = time.perf_counter()
    per: dict[tuple[tuple[str, str], ...], dict[str, dict[float, float]]] = {}
    labels_of: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    kv_of: dict[tuple[tuple[str, str], ...], float | None] = {}
    up_of: dict[str, dict[float, float]] = {}
    for fname, res in results.items():
        out.errors.extend(res.errors)
        for s in res.series.values():
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k in REPLICA_KEY))
            if fname == CACHE_CONFIG:
                kv_of[key] = kv_tokens_from(s.labels)
                continue
            if fname == UP:
                up_of[s.labels.get("instance", "")] = s.points
                continue
            per.setdefault(key, {})[fname] = s.points
            labels_of[key] = s.labels
    if not out.errors:
        out.missing_metrics = [METRICS[f] for f in REQUIRED if not results[f].series]
    for key in sorted(per):
        values = per[key]
        r = Replica(name=replica_name(labels_of[key]), labels=labels_of[key],
                    missing=[METRICS[f] for f in REQUIRED if f not in values])
        at = values.pop(SCRAPED_AT, {})
        steps = sorted({ts for pts in values.values() for ts in pts})
        r.samples = [to_sample(when, {f: pts.get(ts) for f, pts in values.items()}, r.labels, kv_of.get(key))
                     for ts, when in scraped(steps, at) if when >= start]
        if not r.missing:
            r.episodes = episodes(r.samples, threshold_s)
        out.replicas.append(r)
    seen = {r.labels.get("instance") for r in out.replicas}
    out.unscraped = {inst: (sum(1 for v in pts.values() if v == 0), len(pts)) for inst, pts in sorted(up_of.items())
                     if inst not in seen and any(v == 0 for v in pts.values())}
    out.timings["rule_s"] = round(time.perf_counter() - t1, 3)
    stalled = [r for r in out.replicas if r.episodes and r.labels.get("instance")]
    if ask_versions and stalled:
        with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
            for r, v in zip(stalled, pool.map(lambda r: _version(r.labels["instance"], version_timeout_s), stalled),
                            strict=True):
                r.version = v
    for r in out.replicas:  # the catalogue's verdict on each episode, once the versions are known
        r.episodes = [e.with_(mode=r.mode(e.kind).id) for e in r.episodes]
    out.timings["total_s"] = round(time.perf_counter() - t0, 3)
    return out


def findings(res: FleetScan) -> list[Finding]:
    """Per stalled replica one finding with the catalogue's verdict; errors and gaps as their own findings."""
    out: list[Finding] = []
    by_msg: dict[str, list[PromError]] = {}
    for e in res.errors:
        by_msg.setdefault(e.message, []).append(e)
    for msg, errs in by_msg.items():
        out.append(Finding(check=CHECK_PROMETHEUS, status=Status.ERROR, title=f"Prometheus query failed: {msg}",
                           evidence={"queries": [e.query for e in errs], "kind": errs[0].kind,
                                     "prometheus": res.prometheus},
                           fix="Check the Prometheus URL, that it is up, and the --match selector's syntax."))
    for m in res.missing_metrics:
        out.append(Finding(check=CHECK_METRIC, status=Status.UNKNOWN,
                           title=f"No replica matching {res.match or 'any selector'} has {m} in this range",
                           evidence={"metric": m, "match": res.match, "prometheus": res.prometheus},
                           fix="Check that Prometheus scrapes the vLLM servers' /metrics (and the --match "
                               "selector): without this metric the stall rule cannot judge a replica."))
    for r in res.replicas:
        if r.missing and not res.missing_metrics:
            out.append(Finding(check=CHECK_METRIC, status=Status.UNKNOWN,
                               title=f"{r.name}: {', '.join(r.missing)} missing; the stall rule was not run",
                               evidence={"replica": r.name, "labels": r.labels, "missing": r.missing}))
        by_mode: dict[str, tuple[FailureMode, list[Episode]]] = {}
        for ep in r.episodes:
            mode = r.mode(ep.kind)
            by_mode.setdefault(mode.id, (mode, []))[1].append(ep)
        for mode, eps in by_mode.values():
            worst_s = max(ep.duration_s or 0.0 for ep in eps)
            rec = r.recurrence(eps[0].kind)
            recurring = mode.id == "pooling-livelock-client-timeouts"
            links = {round(s["start"], 3): s["retry_of"] for s in rec["spans"]}
            count = headline(rec) if recurring else f"{len(eps)} episode" + ("s" if len(eps) != 1 else "")
            words = word_stall("fleet", eps[0].kind, r.version, subject=r.name, recurring=recurring,
                               seen=f" ({count}, longest {worst_s:.0f} s)")
            out.append(Finding(
                status=Status.FAIL,
                evidence={"replica": r.name, "labels": r.labels, "version": r.version,
                          "version_note": mode.version_note(r.version), "seen": mode.evidence.get("fleet", ""),
                          "recurrence": {k: v for k, v in rec.items() if k != "spans"},
                          "episodes": [dict(episode_dict(ep), retry_of=links.get(round(ep.start or 0.0, 3)))
                                       for ep in eps]},
                **words.finding_args()))
    for inst, (down, steps) in res.unscraped.items():
        out.append(Finding(check=CHECK_UNSCRAPED, status=Status.UNKNOWN,
                           title=f"instance={inst}: Prometheus could not scrape it (up == 0 at {down} of {steps} "
                                 "steps) and holds no vLLM series for it: the stall rule cannot judge it",
                           evidence={"instance": inst, "steps_down": down, "steps": steps},
                           fix="Check that the server is up and that its /metrics answers Prometheus "
                               "(`python -m triage check --url` on it)."))
    iv = res.interval
    if iv is not None and not res.reads_every_scrape and res.replicas:
        out.append(Finding(check=CHECK_STEP, status=Status.UNKNOWN,
                           title=f"Step {res.step:g} s is coarser than the {iv.seconds:g} s scrape interval: the "
                                 "samples between steps were not read, and a stall shorter than about two steps "
                                 "can be missed",
                           evidence={"step_s": res.step, "scrape_interval_s": iv.seconds, "source": iv.source,
                                     "detail": iv.detail},
                           fix=f"Leave the step out (it follows the scrape interval: {iv.step:g} s here) to read "
                               "every scrape."))
    clean = [r.name for r in res.replicas if not r.episodes and not r.missing]
    if clean:
        out.append(Finding(check=CHECK_CLEAN, status=Status.PASS,
                           title=f"{len(clean)} replica{'s' if len(clean) != 1 else ''} without a stall",
                           evidence={"replicas": clean}))
    if not res.replicas and not res.errors and not res.missing_metrics:
        out.append(Finding(check=CHECK_METRIC, status=Status.UNKNOWN, title="No replica found in this range",
                           evidence={"match": res.match, "prometheus": res.prometheus}))
    return out


def summary(res: FleetScan) -> dict[str, Any]:
    """The scan as plain data (JSON output, the run's meta, the dashboard)."""
    return {
        "prometheus": res.prometheus, "match": res.match, "start": res.start, "end": res.end, "step": res.step,
        "stall_threshold_s": res.threshold_s, "queries": res.queries, "timings": res.timings,
        "scrape_interval": None if res.interval is None else {
            "seconds": res.interval.seconds, "source": res.interval.source, "detail": res.interval.detail},
        "step_given": res.step_given, "reads_every_scrape": res.reads_every_scrape,
        "replicas": [{"name": r.name, "labels": r.labels, "samples": len(r.samples), "version": r.version,
                      "first": r.samples[0].ts if r.samples else None,
                      "last": r.samples[-1].ts if r.samples else None, "missing": r.missing,
                      "episodes": [dict(episode_dict(ep), mode=r.mode(ep.kind).id) for ep in r.episodes]}
                     for r in res.replicas],
        "errors": [{"query": e.query, "message": e.message, "kind": e.kind} for e in res.errors],
        "missing_metrics": res.missing_metrics,
        "unscraped": {k: {"steps_down": a, "steps": b} for k, (a, b) in res.unscraped.items()},
    }

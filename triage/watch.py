"""Live engine stats: scrape /metrics on an interval, store samples in batches, raise stall alerts.

The stall verdict is triage.stall.StallDetector (the one rule), fed per engine label with the
gauges and the progress counters (prompt_tokens_total, request_success_total). Rates come from
counter deltas (a drop = server restart, counted from 0); latency quantiles from the histogram
deltas over ``window_s``. One Watcher serves the CLI (`python -m triage watch`) and the
dashboard (call ``sample_once()`` on a timer).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Optional
from collections.abc import Callable

import httpx

from triage.catalogue import explain_stall
from triage.findings import Finding, Status
from triage.series import WindowedHistogram, counter_rate
from triage.stall import LIVELOCK, StallDetector, StallSample, StallState
from triage.store import MetricSample, Store
from triage.vllm import metrics as vm

_SAMPLE_FIELDS = [k for k in MetricSample.model_fields if k != "id"]
QUANTILES = {"e2e": vm.E2E_LATENCY, "queue": vm.QUEUE_TIME, "prefill": vm.PREFILL_TIME}


def hhmmss(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S")


@dataclass(frozen=True)
class AlertEvent:
    """A stall alert raised (``event == "stalled"``) or cleared (``"cleared"``) on one engine."""

    event: str  # stalled | cleared
    engine: str
    kind: str  # livelock | stuck-waiting
    since: float
    at: float
    running: Optional[float]
    waiting: Optional[float]
    no_progress_s: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class WatchTick:
    """One scrape: the samples written (one per engine), the stall state, and any alert event."""

    ts: float
    sample: Optional[MetricSample]
    state: StallState
    alert_event: Optional[AlertEvent] = None
    samples: list[MetricSample] = field(default_factory=list)
    events: list[AlertEvent] = field(default_factory=list)
    error: Optional[str] = None


def alert_message(
    kind: str, since: float, now: float, running: Optional[float], waiting: Optional[float], version: Any = None
) -> str:
    r, w = int(running or 0), int(waiting or 0)
    mode = explain_stall(kind, version)
    head = "ENGINE STALLED" if kind == LIVELOCK else "REQUESTS STUCK WAITING"
    return (
        f"{head} since {hhmmss(since)}: running={r} waiting={w}, no progress for "
        f"{now - since:.0f}s — {mode.now} {mode.fix()} ({', '.join(mode.refs[:2]) or mode.id})"
    )


class _EngineState:
    def __init__(self, stall_s: float, window_s: float) -> None:
        self.det = StallDetector(stall_s)
        self.prev: Optional[vm.EngineSnapshot] = None
        self.prev_ts: Optional[float] = None
        self.hists = {k: WindowedHistogram(window_s) for k in QUANTILES}
        self.alert: Optional[dict[str, Any]] = None  # the open alert window


class Watcher:
    """Scrape one server's /metrics; ``sample_once()`` -> WatchTick; ``run()`` loops for a duration."""

    def __init__(
        self,
        url: str,
        store: Optional[Store] = None,
        run_id: Optional[int] = None,
        interval: float = 1.0,
        stall_s: float = 5.0,
        api_key: Optional[str] = None,
        *,
        target_id: Optional[int] = None,
        window_s: float = 60.0,
        batch_size: int = 30,
        retention_s: Optional[float] = None,
        timeout_s: float = 5.0,
        verify_tls: bool = True,
        client: Optional[httpx.Client] = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url.rstrip("/")
        self.store, self.run_id, self.target_id = store, run_id, target_id
        self.interval, self.stall_s, self.window_s = interval, stall_s, window_s
        self.batch_size, self.retention_s = batch_size, retention_s
        self.vllm_version: Optional[str] = None  # when known, a stall is attributed by the catalogue
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout_s, verify=verify_tls, headers=headers)
        self._own_client = client is None
        self._clock = clock
        self._engines: dict[str, _EngineState] = {}
        self._buffer: list[MetricSample] = []
        self._last_retention = 0.0
        self.alerts: list[dict[str, Any]] = []  # closed and open alert windows, for charts and JSON
        self.ticks = 0
        self.errors = 0
        self._agg: dict[str, dict[str, Any]] = {}  # per engine: maxima, means, last values (bounded)

    # -- scraping --------------------------------------------------------------------------------
    def fetch(self) -> str:
        r = self._client.get(self.url + "/metrics")
        r.raise_for_status()
        return r.text

    def sample_once(self) -> WatchTick:
        ts = self._clock()
        try:
            text = self.fetch()
        except httpx.HTTPError as e:
            self.ticks += 1
            self.errors += 1
            return WatchTick(ts=ts, sample=None, state=self._worst_state(), error=f"{type(e).__name__}: {e}")
        return self.observe(text, ts)

    def observe(self, text: str, ts: float) -> WatchTick:
        """Fold one /metrics page taken at ``ts`` into the series and the stall state."""
        self.ticks += 1
        try:
            page = vm.parse_metrics(text)
        except vm.MetricsParseError as e:
            self.errors += 1
            return WatchTick(ts=ts, sample=None, state=self._worst_state(), error=str(e))
        if not page.has_vllm_metrics:
            self.errors += 1
            return WatchTick(ts=ts, sample=None, state=self._worst_state(), error="no vllm: metrics on the page")
        tick = WatchTick(ts=ts, sample=None, state=StallState())
        for label, snap in sorted(page.engines.items()):
            es = self._engines.get(label)
            if es is None:
                es = self._engines[label] = _EngineState(self.stall_s, self.window_s)
            row = self._row(label, snap, es, ts)
            tick.samples.append(row)
            state = es.det.update(
                StallSample(
                    ts=ts,
                    running=snap.num_requests_running,
                    waiting=snap.num_requests_waiting,
                    counters=(snap.prompt_tokens_total, snap.request_success_total),
                )
            )
            ev = self._alert_transition(label, es, state, ts)
            if ev:
                tick.events.append(ev)
            if state.stalled or tick.sample is None:
                tick.sample, tick.state = row, state
            es.prev, es.prev_ts = snap, ts
        tick.alert_event = tick.events[0] if tick.events else None
        self._buffer.extend(tick.samples)
        if len(self._buffer) >= self.batch_size or tick.events:
            self.flush()
        return tick

    def _row(self, label: str, snap: vm.EngineSnapshot, es: _EngineState, ts: float) -> MetricSample:
        prev = es.prev
        extra: dict[str, Any] = {}
        prompt_rate = None
        if prev is not None:
            prompt_rate = counter_rate(prev.prompt_tokens_total, es.prev_ts, snap.prompt_tokens_total, ts)
            extra["requests_per_s"] = counter_rate(
                prev.request_success_total, es.prev_ts, snap.request_success_total, ts
            )
            extra["preemptions_per_s"] = counter_rate(
                prev.num_preemptions_total, es.prev_ts, snap.num_preemptions_total, ts
            )
            if (snap.prompt_tokens_total or 0) < (prev.prompt_tokens_total or 0):
                extra["counter_reset"] = True
        for key, name in QUANTILES.items():
            h = snap.histograms.get(name)
            if h:
                es.hists[key].add(ts, h)
                for q in (0.5, 0.95):
                    v = es.hists[key].quantile(q)
                    if v is not None:
                        extra[f"{key}_p{int(q * 100)}"] = round(v, 6)
        self._aggregate(label, snap, prompt_rate, ts)
        return MetricSample(
            run_id=self.run_id,
            target_id=self.target_id,
            engine=label,
            ts=ts,
            source="scrape",
            num_requests_running=snap.num_requests_running,
            num_requests_waiting=snap.num_requests_waiting,
            kv_cache_usage_perc=snap.kv_cache_usage_perc,
            prompt_tokens_total=snap.prompt_tokens_total,
            request_success_total=snap.request_success_total,
            num_preemptions_total=snap.num_preemptions_total,
            prompt_throughput=prompt_rate,
            extra_json=json.dumps({k: v for k, v in extra.items() if v is not None}),
        )

    def _aggregate(self, label: str, snap: vm.EngineSnapshot, prompt_rate: Optional[float], ts: float) -> None:
        a = self._agg.setdefault(
            label,
            {
                "samples": 0,
                "first_ts": ts,
                "max_running": 0.0,
                "max_waiting": 0.0,
                "max_kv_cache_usage_perc": 0.0,
                "max_prompt_tokens_per_s": 0.0,
                "_rate_sum": 0.0,
                "_rate_n": 0,
            },
        )
        a["samples"] += 1
        a["last_ts"] = ts
        for key, v in (
            ("max_running", snap.num_requests_running),
            ("max_waiting", snap.num_requests_waiting),
            ("max_kv_cache_usage_perc", snap.kv_cache_usage_perc),
            ("max_prompt_tokens_per_s", prompt_rate),
        ):
            if v is not None and v > a[key]:
                a[key] = v
        if prompt_rate is not None:
            a["_rate_sum"] += prompt_rate
            a["_rate_n"] += 1
        a["last"] = {
            "running": snap.num_requests_running,
            "waiting": snap.num_requests_waiting,
            "kv_cache_usage_perc": snap.kv_cache_usage_perc,
            "prompt_tokens_total": snap.prompt_tokens_total,
            "request_success_total": snap.request_success_total,
        }

    def summary(self) -> dict[str, Any]:
        """What the watch saw, bounded whatever its length: per engine maxima/means, alerts, counts."""
        engines = {}
        for label, a in self._agg.items():
            d = {k: v for k, v in a.items() if not k.startswith("_")}
            d["mean_prompt_tokens_per_s"] = a["_rate_sum"] / a["_rate_n"] if a["_rate_n"] else None
            engines[label] = d
        return {
            "url": self.url,
            "ticks": self.ticks,
            "errors": self.errors,
            "interval_s": self.interval,
            "stall_threshold_s": self.stall_s,
            "engines": engines,
            "alerts": [dict(a) for a in self.alerts],
        }

    def _alert_transition(self, label: str, es: _EngineState, state: StallState, ts: float) -> Optional[AlertEvent]:
        if state.stalled and es.alert is None:
            assert state.since is not None and state.kind is not None
            es.alert = {
                "engine": label,
                "kind": state.kind,
                "since": state.since,
                "confirmed_at": ts,
                "cleared_at": None,
                "running": state.running,
                "waiting": state.waiting,
            }
            self.alerts.append(es.alert)
            return AlertEvent(
                "stalled",
                label,
                state.kind,
                state.since,
                ts,
                state.running,
                state.waiting,
                ts - state.since,
                alert_message(state.kind, state.since, ts, state.running, state.waiting, self.vllm_version),
            )
        if es.alert is not None and not state.stalled:
            a, es.alert = es.alert, None
            a["cleared_at"] = ts
            self._record_finding(a)
            msg = (
                f"cleared at {hhmmss(ts)}: {a['kind']} since {hhmmss(a['since'])} ended after "
                f"{ts - a['since']:.0f}s; now running={int(state.running or 0)} waiting={int(state.waiting or 0)}"
            )
            return AlertEvent(
                "cleared", label, a["kind"], a["since"], ts, state.running, state.waiting, ts - a["since"], msg
            )
        return None

    def _record_finding(self, a: dict[str, Any]) -> None:
        if self.store is None or self.run_id is None:
            return
        livelock = a["kind"] == LIVELOCK
        mode = explain_stall(a["kind"], self.vllm_version)
        end = a["cleared_at"]
        self.store.add_finding(
            self.run_id,
            Finding(
                check="watch-engine-stalled",
                status=Status.FAIL,
                title=(
                    f"Engine {a['engine']} {'livelocked' if livelock else 'stuck waiting'} from {hhmmss(a['since'])}"
                    + (f" to {hhmmss(end)}" if end else " (still stalled when watch ended)")
                ),
                evidence={
                    **a,
                    "stall_threshold_s": self.stall_s,
                    "interval_s": self.interval,
                    "source": "scrape",
                    "url": self.url,
                },
                fix=mode.fix(now=True),
                refs=list(mode.refs),
            ),
        )

    def _worst_state(self) -> StallState:
        for es in self._engines.values():
            if es.det.state.stalled:
                return es.det.state
        return next(iter(self._engines.values())).det.state if self._engines else StallState()

    # -- storage ---------------------------------------------------------------------------------
    def flush(self) -> int:
        rows, self._buffer = self._buffer, []
        if self.store is None or not rows:
            return 0
        # Store copies: a committed ORM row is expired and detached, and the ticks handed to callers
        # (CLI lines, dashboard) must stay readable.
        n = self.store.add_samples(MetricSample(**{k: getattr(r, k) for k in _SAMPLE_FIELDS}) for r in rows)
        now = self._clock()
        if self.retention_s and now - self._last_retention > 60:
            self._last_retention = now
            # this watch's own series only: other targets keep their history
            if self.target_id is not None:
                self.store.delete_samples_before(now - self.retention_s, target_id=self.target_id)
            else:
                self.store.delete_samples_before(now - self.retention_s, run_id=self.run_id)
        return n

    def close(self) -> None:
        """Flush, record alerts still open as findings, close the HTTP client."""
        self.flush()
        for es in self._engines.values():
            if es.alert is not None:
                self._record_finding(es.alert)
        if self._own_client:
            self._client.close()

    def run(
        self,
        duration_s: Optional[float] = None,
        on_tick: Optional[Callable[[WatchTick], None]] = None,
        should_stop: Optional[Callable[[], bool]] = None,
    ) -> dict[str, Any]:
        """Sample every ``interval`` s until ``duration_s`` passed (None: until should_stop / Ctrl-C);
        returns ``summary()``. Ticks are not kept: a day at 1 s would be 86,400 of them."""
        start = time.monotonic()
        nxt = start
        try:
            while True:
                tick = self.sample_once()
                if on_tick:
                    on_tick(tick)
                if should_stop and should_stop():
                    break
                nxt += self.interval
                if duration_s is not None and nxt - start > duration_s:
                    break
                time.sleep(max(0.0, nxt - time.monotonic()))
        finally:
            self.close()
        return self.summary()

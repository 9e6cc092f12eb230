"""Live engine stats: scrape /metrics on an interval, store samples in batches, raise stall alerts.

The stall verdict is triage.stall.StallDetector (the one rule), fed one EngineSample per engine
label and scrape (per-step progress: KV usage, prefix-cache queries, finished prompts). Rates come
from counter deltas (a drop = server restart, counted from 0); latency quantiles from the
histogram deltas over ``window_s``; both go to the sample's ``extra``. When the server listens on
this host, the CPU time of its processes (psutil) rides along as evidence. The server's version
(GET /version, read once at the first scrape) decides whether a stall can be the pooling livelock
(triage.catalogue.explain_stall); the catalogue words its finding (``word_stall``). One Watcher serves
the CLI (`python -m triage watch`) and the dashboard (call ``sample_once()`` on a timer).

The Watcher yields the run's events (triage.events) to an observer: its samples in batches, its alerts,
the findings they make, and — when ``run()`` drives it — the run's start, summary and end. It writes
nothing itself; the CLI hands it a Recorder (the only writer), the dashboard's live view none.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional
from collections.abc import Callable

from triage import events as ev_
from triage.http import VllmClient
from triage.events import AlertEvent, Observer, RunEvent
from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS, explain_episodes, explain_stall, word_stall
from triage.catalogue.stalls import stall_name as catalogue_stall_name
from triage.recurrence import ONGOING, Span, ended_by, headline, summarize
from triage.findings import Finding, Status
from triage.sample import EngineSample, frozen_extra, observer_gap
from triage.series import WindowedHistogram, counter_rate
from triage.stall import DEFAULT_STALL_S, LIVELOCK, StallDetector, StallState
from triage.target import Target
from triage.vllm import metrics as vm

__all__ = ["AlertEvent", "Watcher", "WatchTick", "ScrapeError", "alert_message", "hhmmss", "state_label", "stall_name"]

DEFAULT_INTERVAL_S = 0.5
RECURRING_CHECK = "watch-episodes-recurring"
QUANTILES = {"e2e": vm.E2E_LATENCY, "queue": vm.QUEUE_TIME, "prefill": vm.PREFILL_TIME}


def hhmmss(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S")


@dataclass
class WatchTick:
    """One scrape: the samples written (one per engine), the stall state, and any alert event."""

    ts: float
    sample: Optional[EngineSample]
    state: StallState
    alert_event: Optional[AlertEvent] = None
    samples: list[EngineSample] = field(default_factory=list)
    events: list[AlertEvent] = field(default_factory=list)
    error: Optional[str] = None


def alert_message(
    kind: str,
    since: float,
    now: float,
    running: Optional[float],
    waiting: Optional[float],
    version: Any = None,
    expected_step_s: Optional[float] = None,
) -> str:
    r, w = _n(running), _n(waiting)
    mode = explain_stall(kind, version)
    head = "ENGINE STALLED" if kind == LIVELOCK else "REQUESTS STUCK WAITING"
    step = f" (one engine step should take ~{expected_step_s:.1f}s)" if (expected_step_s or 0) >= 0.5 else ""
    ver = f", vLLM {version}" if version else ", vLLM version unknown"
    return (  # named as the finding names it (catalogue.stall_name): one wording of a stall
        f"{head} since {hhmmss(since)}: {catalogue_stall_name(mode, version)}: running={r} waiting={w}, no progress "
        f"for {now - since:.0f}s{step}{ver} — {mode.now} {mode.fix()} ({', '.join(mode.refs[:2]) or mode.id})"
    )


def _n(v: Optional[float]) -> str:
    return "?" if v is None or not math.isfinite(v) else str(int(v))


STEP_IN_PROGRESS = "step in progress"


def stall_name(kind: str, version: Any = None) -> str:
    """A confirmed stall's name in the catalogue's terms: 'livelock' only where the version can have it."""
    return explain_stall(kind, version).id


def state_label(state: StallState, version: Any = None) -> str:
    """What a sample line says of an engine: '' (idle or moving), 'cannot judge' in a window that starts after the
    watcher's own gap, 'step in progress since …' while no verdict (inside the window the stall rule expects a step
    to need), the catalogue mode once confirmed."""
    if state.kind is None or state.since is None:
        return ""
    if state.cannot_judge:  # the window starts after this watcher's own hole (triage.sample.observer_gap)
        return f"cannot judge: this watcher's own {state.observer_gap_s:.0f}s gap; watching again since " \
               f"{hhmmss(state.since)}"
    if not state.stalled:
        step = f", one step ~{state.expected_step_s:.0f}s" if state.expected_step_s else ""
        return f"{STEP_IN_PROGRESS} since {hhmmss(state.since)}{step}"
    return f"{stall_name(state.kind, version)} since {hhmmss(state.since)}"


def _local_server_process(url: str) -> Any:
    """psutil.Process listening on the URL's port when the URL is this host's loopback, else None."""
    from urllib.parse import urlsplit

    from triage.sources.process import listening_process  # the one listener lookup (psutil)

    u = urlsplit(url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1") or u.port is None:
        return None
    return listening_process(u.port)


class _EngineState:
    def __init__(self, stall_s: float, window_s: float) -> None:
        self.det = StallDetector(stall_s, learn_steps=True)
        self.prev: Optional[EngineSample] = None
        self.prev_ts: Optional[float] = None
        self.hists = {k: WindowedHistogram(window_s) for k in QUANTILES}
        self.alert: Optional[dict[str, Any]] = None  # the open alert window
        self.noted_since: Optional[float] = None  # the no-progress window already reported as undecided
        self.noted_gap: Optional[float] = None  # the window after an observer's hole already reported as not judged
        self.recurring_said = False  # the episodes' pattern (the livelock with client time-outs) was announced


class ScrapeError(RuntimeError):
    """/metrics could not be read (transport failure, HTTP error, over the size cap or the deadline)."""


class Watcher:
    """Scrape one server's /metrics; ``sample_once()`` -> WatchTick; ``run()`` loops for a duration."""

    def __init__(
        self,
        url: str,
        observer: Optional[Observer] = None,
        interval: float = DEFAULT_INTERVAL_S,
        stall_s: float = DEFAULT_STALL_S,
        api_key: Optional[str] = None,
        *,
        window_s: float = 60.0,
        batch_size: int = 30,
        timeout_s: float = 5.0,
        verify_tls: bool = True,
        client: Optional[VllmClient] = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url.rstrip("/")
        self.observer = observer  # saving is an observer: samples, alerts and their findings go to it, when given
        self.interval, self.stall_s, self.window_s = interval, stall_s, window_s
        self.batch_size = batch_size
        self._target = Target(url=self.url, api_key=api_key)  # the run's target; its key only to redact
        self.vllm_version: Optional[str] = None  # when known, a stall is attributed by the catalogue
        # the one HTTP client: auth, TLS, no redirects, a total deadline per scrape, a capped body
        self._own_client = not isinstance(client, VllmClient)
        self._client: VllmClient = (
            client if isinstance(client, VllmClient)
            else VllmClient(self.url, api_key=api_key, verify_tls=verify_tls, timeout_s=timeout_s)
        )
        self._timeout_s = timeout_s
        self._until: Optional[float] = None  # monotonic end of run(duration_s): no scrape outlives it
        self._clock = clock
        self._engines: dict[str, _EngineState] = {}
        self._buffer: list[EngineSample] = []
        self._version_read = False
        self._proc: Any = None  # psutil.Process of the local server, when found
        self.alerts: list[dict[str, Any]] = []  # closed and open alert windows, for charts and JSON
        self.ticks = 0
        self.errors = 0
        self.n_gaps = 0  # the observer's own holes (EngineSample.observer_gap_s): how many, the longest
        self.longest_gap_s: Optional[float] = None
        self._agg: dict[str, dict[str, Any]] = {}  # per engine: maxima, means, last values (bounded)

    # -- scraping --------------------------------------------------------------------------------
    def _call_timeout(self) -> float:
        if self._until is None:
            return self._timeout_s
        return max(0.2, min(self._timeout_s, self._until - time.monotonic()))

    def fetch(self) -> str:
        """The /metrics page, or ScrapeError saying why not (within the scrape's total deadline)."""
        text, why = self._client.metrics(self._call_timeout())
        if text is None:
            raise ScrapeError(why or "no answer")
        return text

    def read_version(self) -> Optional[str]:
        """GET /version once (`{"version": "0.31.0"}`); None when the server does not say."""
        self._version_read = True
        r = self._client.get("/version", self._call_timeout())
        body = r.json() if r.ok else None
        v = body.get("version") if isinstance(body, dict) else None
        if isinstance(v, str) and v:
            self.vllm_version = v[:100]
        return self.vllm_version

    def _server_cpu_s(self) -> Optional[float]:
        """CPU seconds of the server's process tree when it listens on this host (evidence only)."""
        if self._proc is False:
            return None
        try:
            from triage.sources.process import tree_cpu_seconds  # psutil: loaded when a local server is watched

            if self._proc is None:
                self._proc = _local_server_process(self.url) or False
                if self._proc is False:
                    return None
            return tree_cpu_seconds(self._proc)
        except Exception:  # noqa: BLE001 - no psutil, the process went away: the evidence is optional
            self._proc = False
            return None

    def sample_once(self) -> WatchTick:
        if not self._version_read and self.vllm_version is None:
            self.read_version()
        ts = self._clock()
        try:
            text = self.fetch()
        except ScrapeError as e:
            self.ticks += 1
            self.errors += 1
            return WatchTick(ts=ts, sample=None, state=self._worst_state(), error=str(e))
        return self.observe(text, ts, cpu_s=self._server_cpu_s(), took_s=self._clock() - ts)

    def observe(self, text: str, ts: float, cpu_s: Optional[float] = None, took_s: float = 0.0) -> WatchTick:
        """Fold one /metrics page taken at ``ts`` (its scrape took ``took_s``) into the series and the stall state."""
        self.ticks += 1
        try:
            page = vm.parse_metrics(text, ts)
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
            if cpu_s is not None and len(page.engines) == 1:
                snap = snap.with_(process_cpu_seconds_total=cpu_s)
            row = self._row(label, snap, es, ts)
            gap = observer_gap(es.prev_ts, ts, self.interval, took_s)
            if gap is not None:  # this watcher's own hole (Ctrl-Z, a starved host): the stall rule judges no window
                row = row.with_(observer_gap_s=gap)  # across it, the charts draw it
                self.n_gaps += 1
                self.longest_gap_s = max(gap, self.longest_gap_s or 0.0)
            tick.samples.append(row)
            state = es.det.update(row)
            ev = self._alert_transition(label, es, state, ts, row)
            if ev:
                tick.events.append(ev)
                if ev.event == "cleared":
                    again = self._recurring_event(label, es, ts)
                    if again:
                        tick.events.append(again)
            if state.stalled or tick.sample is None:
                tick.sample, tick.state = row, state
            es.prev, es.prev_ts = snap, ts
        tick.alert_event = tick.events[0] if tick.events else None
        self._buffer.extend(tick.samples)
        if len(self._buffer) >= self.batch_size or tick.events:
            self.flush()  # the samples an alert is about are written before it
        for ev in tick.events:
            self._emit(RunEvent(ev_.ALERT, alert=ev))
        return tick

    def _emit(self, ev: RunEvent) -> None:
        if self.observer is not None:
            self.observer(ev)

    def _row(self, label: str, snap: EngineSample, es: _EngineState, ts: float) -> EngineSample:
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
            if (
                snap.prompt_tokens_total is not None
                and prev.prompt_tokens_total is not None
                and snap.prompt_tokens_total < prev.prompt_tokens_total
            ):
                extra["counter_reset"] = True
            extra["server_cpu_cores"] = counter_rate(
                prev.process_cpu_seconds_total, es.prev_ts, snap.process_cpu_seconds_total, ts
            )
        for key, name in QUANTILES.items():
            h = snap.histograms.get(name)
            if h:
                es.hists[key].add(ts, h)
                for q in (0.5, 0.95):
                    v = es.hists[key].quantile(q)
                    if v is not None:
                        extra[f"{key}_p{int(q * 100)}"] = round(v, 6)
        self._aggregate(label, snap, prompt_rate, ts)
        return snap.with_(
            engine=label,
            prompt_throughput=prompt_rate,
            extra=frozen_extra({k: v for k, v in extra.items() if v is not None}),
        )

    def _aggregate(self, label: str, snap: EngineSample, prompt_rate: Optional[float], ts: float) -> None:
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
            "episodes": {label: self.recurrence(label) for label in self._engines},
            "observer_gaps": {"count": self.n_gaps, "longest_s": self.longest_gap_s},
        }

    def _alert_transition(self, label: str, es: _EngineState, state: StallState, ts: float,
                          row: Optional[EngineSample] = None) -> Optional[AlertEvent]:
        if state.cannot_judge and es.alert is None and es.noted_gap != state.since:
            # the window starts after this watcher's own hole: say that nothing is known of it, never a stall
            assert state.since is not None and state.kind is not None and state.observer_gap_s is not None
            es.noted_gap = state.since
            msg = (
                f"cannot judge {hhmmss(ts - state.observer_gap_s)}-{hhmmss(ts)}: this watcher's sample came "
                f"{state.observer_gap_s:.0f}s after the one before (interval {self.interval:g}s): it, or the host it "
                f"shares, was held up, and a late sample says nothing about the server. running={_n(state.running)} "
                f"waiting={_n(state.waiting)} now; the no-progress window starts again at {hhmmss(ts)}"
            )
            return AlertEvent("undecided", label, state.kind, state.since, ts, state.running, state.waiting, 0.0,
                              msg)
        if state.waiting_for_step and es.alert is None and es.noted_since != state.since:
            # past the threshold, inside the step the measured prefill rate predicts: say what is known
            assert state.since is not None and state.kind is not None and state.window_s is not None
            es.noted_since = state.since
            msg = (
                f"{STEP_IN_PROGRESS}: no progress for {ts - state.since:.0f}s with running={_n(state.running)} "
                f"waiting={_n(state.waiting)}, but one engine step should take ~{state.expected_step_s:.1f}s at "
                f"this server's measured prefill rate (vLLM {self.vllm_version or 'version unknown'}): not a stall "
                "yet; a stall if nothing moves (KV cache usage, finished prompts) by "
                f"{hhmmss(state.since + state.window_s)}"
            )
            return AlertEvent(
                "undecided", label, state.kind, state.since, ts, state.running, state.waiting, ts - state.since, msg
            )
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
                "vllm_version": self.vllm_version,
                "window_s": state.window_s,
                "expected_step_s": state.expected_step_s,
                "last_progress": state.last_progress,
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
                alert_message(
                    state.kind, state.since, ts, state.running, state.waiting, self.vllm_version, state.expected_step_s
                ),
            )
        if es.alert is not None and not state.stalled:
            a, es.alert = es.alert, None
            a["cleared_at"] = ts
            a["ended"] = ended_by(es.prev, row) if row is not None else ONGOING
            self._record_finding(a)
            msg = (
                f"cleared at {hhmmss(ts)}: {stall_name(a['kind'], a.get('vllm_version'))} since {hhmmss(a['since'])} "
                f"ended after "
                f"{ts - a['since']:.0f}s; now running={_n(state.running)} waiting={_n(state.waiting)}"
            )
            msg += f" ({a['ended']})"
            return AlertEvent(
                "cleared", label, a["kind"], a["since"], ts, state.running, state.waiting, ts - a["since"], msg
            )
        return None

    def recurrence(self, label: str) -> dict[str, Any]:
        """One engine's closed livelock alerts as production sees them (triage.recurrence)."""
        return summarize([Span(a["since"], a["cleared_at"], a.get("ended", ONGOING), a["kind"]) for a in self.alerts
                          if a["engine"] == label and a["kind"] == LIVELOCK and a["cleared_at"] is not None])

    def _recurring_event(self, label: str, es: _EngineState, ts: float) -> Optional[AlertEvent]:
        """Once per engine: the alerts recur, each ended: the catalogue's verdict for the series, with what the
        client should change meanwhile (its time-out, retries, truncation)."""
        if es.recurring_said:
            return None
        rec = self.recurrence(label)
        mode = explain_episodes(LIVELOCK, self.vllm_version, rec["recurring"])
        if mode is not POOLING_LIVELOCK_CLIENT_TIMEOUTS:
            return None
        es.recurring_said = True
        words = word_stall("watch", LIVELOCK, self.vllm_version, subject=f"Engine {label}", recurring=True,
                           seen=f" ({headline(rec)})")
        self._emit(RunEvent(ev_.FINDING, finding=Finding(
            status=Status.FAIL, evidence={"engine": label, "vllm_version": self.vllm_version, "recurrence": rec,
                                          "url": self.url, "source": "scrape",
                                          "facts": {"vllm.version": self.vllm_version, "stall.recurring": True}},
            **words.finding_args())))
        last = rec["spans"][-1]
        return AlertEvent("recurring", label, LIVELOCK, rec["spans"][0]["start"], ts, None, None,
                          last["duration_s"], f"{mode.title}: {headline(rec)}. {mode.fix(now=True)}")

    def _record_finding(self, a: dict[str, Any]) -> None:
        end = a["cleared_at"]
        # never "livelocked" on a release with the fix: the catalogue words it by version
        words = word_stall("watch", a["kind"], self.vllm_version, subject=f"Engine {a['engine']}",
                           seen=f"; from {hhmmss(a['since'])}"
                           + (f" to {hhmmss(end)}" if end else " (still stalled when watch ended)"))
        self._emit(RunEvent(ev_.FINDING, finding=Finding(
            status=Status.FAIL, evidence={**a, "stall_threshold_s": self.stall_s, "interval_s": self.interval,
                                          "source": "scrape", "url": self.url,
                                          "facts": {"vllm.version": self.vllm_version, "stall.kind": a["kind"]}},
            **words.finding_args())))

    def _worst_state(self) -> StallState:
        for es in self._engines.values():
            if es.det.state.stalled:
                return es.det.state
        return next(iter(self._engines.values())).det.state if self._engines else StallState()

    # -- storage ---------------------------------------------------------------------------------
    def flush(self) -> int:
        rows, self._buffer = self._buffer, []
        if rows:
            self._emit(RunEvent(ev_.SAMPLES, samples=tuple(rows)))
        return len(rows)

    def close(self) -> None:
        """Flush, record alerts still open as findings, close the HTTP client."""
        self.flush()
        for es in self._engines.values():
            if es.alert is not None:
                self._record_finding(es.alert)
        if self._own_client:
            self._client.close()

    def start(self, duration_s: Optional[float] = None) -> None:
        """The run's first event: a watch of this URL with its settings (no API key)."""
        self._emit(RunEvent(ev_.STARTED, run_kind="watch", target=self._target,
                            meta={"interval_s": self.interval, "stall_s": self.stall_s, "duration_s": duration_s,
                                  "window_s": self.window_s}))

    def finish(self) -> dict[str, Any]:
        """The run's last events: what the watch saw (meta) and its end; returns ``summary()``."""
        summary = self.summary()
        self._emit(RunEvent(ev_.META, meta={"summary": summary}))
        self._emit(RunEvent(ev_.DONE, summary=f"{len(summary['alerts'])} stall alert(s), {summary['ticks']} samples"))
        return summary

    def run(
        self,
        duration_s: Optional[float] = None,
        on_tick: Optional[Callable[[WatchTick], None]] = None,
        should_stop: Optional[Callable[[], bool]] = None,
    ) -> dict[str, Any]:
        """A whole watch run: ``start``, a sample every ``interval`` s until ``duration_s`` passed (None: until
        should_stop / Ctrl-C), ``finish``; returns ``summary()``. An exception (Ctrl-C included) leaves the run
        to the caller, after the samples and open alerts were flushed (``close``): it may still ``finish()``.
        Ticks are not kept: a day at 1 s would be 86,400 of them."""
        self.start(duration_s)
        self._loop(duration_s, on_tick, should_stop)
        return self.finish()

    def _loop(self, duration_s: Optional[float], on_tick: Optional[Callable[[WatchTick], None]],
              should_stop: Optional[Callable[[], bool]]) -> None:
        start = time.monotonic()
        nxt = start
        self._until = None if duration_s is None else start + duration_s
        try:
            while True:
                tick = self.sample_once()
                if on_tick:
                    on_tick(tick)
                if should_stop and should_stop():
                    break
                now = time.monotonic()
                while nxt <= now:  # the next regular tick (a slow scrape skips ticks, never bursts)
                    nxt += self.interval
                if duration_s is not None and (nxt - start > duration_s or now >= self._until):
                    break  # wall time: slow scrapes do not stretch --duration
                # or sooner, right when an engine's no-progress window closes: the alert then comes one
                # scrape after the window, not up to one interval later
                clock = self._clock()
                ends = [es.det.state.window_end for es in self._engines.values()]
                soonest = min((e for e in ends if e is not None and e > clock), default=None)
                wake = nxt if soonest is None else min(nxt, now + soonest - clock + 0.01)  # just past it
                time.sleep(max(0.0, wake - time.monotonic()))
        finally:
            self.close()

"""The watch loop: scrape one server's /metrics on an interval, fold each page into per-engine samples and stall
states, hand the samples (in batches) and alerts to an observer. ``Watcher.sample_once()`` is one scrape (the
dashboard calls it on a timer), ``run()`` a whole run (the CLI)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Callable

from triage import events as ev_
from triage.http import VllmClient
from triage.events import AlertEvent, Observer, RunEvent
from triage.episode import Episode
from triage.sample import EngineSample, observer_gap
from triage.stall import DEFAULT_STALL_S, StallState
from triage.target import Target
from triage.vllm import metrics as vm
from triage.watch.engines import EngineState, Tally, derive
from triage.watch.episodes import Episodes, alert_dict

DEFAULT_INTERVAL_S = 0.5


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


def _local_server_process(url: str) -> Any:
    """psutil.Process listening on the URL's port when the URL is this host's loopback, else None."""
    from urllib.parse import urlsplit

    from triage.sources.process import listening_process  # the one listener lookup (psutil)

    u = urlsplit(url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1") or u.port is None:
        return None
    return listening_process(u.port)



class ScrapeError(RuntimeError):
    """/metrics could not be read (transport failure, HTTP error, over the size cap or the deadline)."""


class Watcher(Episodes):
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
        self.max_model_len: Optional[int] = None  # when known (/v1/models), the alert's fix carries the numbers
        # the one HTTP client: auth, TLS, no redirects, a total deadline per scrape, a capped body
        self._own_client = not isinstance(client, VllmClient)
        self._client: VllmClient = (
            client if isinstance(client, VllmClient)
            else VllmClient(self.url, api_key=api_key, verify_tls=verify_tls, timeout_s=timeout_s)
        )
        self._timeout_s = timeout_s
        self._until: Optional[float] = None  # monotonic end of run(duration_s): no scrape outlives it
        self._clock = clock
        self._engines: dict[str, EngineState] = {}
        self._buffer: list[EngineSample] = []
        self._version_read = False
        self._proc: Any = None  # psutil.Process of the local server, when found
        self.alerts: list[Episode] = []  # closed and open alert windows (stall episodes), for charts and JSON
        self.ticks = 0
        self.errors = 0
        self.n_gaps = 0  # the observer's own holes (EngineSample.observer_gap_s): how many, the longest
        self.longest_gap_s: Optional[float] = None
        self._tally = Tally()  # per engine: maxima, means, the last reading (bounded)

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
        self._read_max_model_len()
        return self.vllm_version

    def _read_max_model_len(self) -> None:
        """The served model's max_model_len from /v1/models (vLLM lists it per model), once, beside /version: the
        stall alert's fix then says the number to send ("truncate_prompt_tokens = 255"), not a formula."""
        try:
            r = self._client.get("/v1/models", self._call_timeout())
            data = r.json().get("data") if r.ok else None
            first = data[0] if isinstance(data, list) and data else None
            mml = first.get("max_model_len") if isinstance(first, dict) else None
        except Exception:  # noqa: BLE001 - optional: the alert then words the fix with the formula
            return
        if isinstance(mml, int) and not isinstance(mml, bool) and 0 < mml < 1 << 31:
            self.max_model_len = mml

    @property
    def facts(self) -> dict[str, Any]:
        """What the watcher knows of the server, as a config the catalogue's fix reads (``FailureMode.fix(cfg)``)."""
        return {k: v for k, v in (("vllm_version", self.vllm_version), ("max_model_len", self.max_model_len))
                if v is not None}

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
                es = self._engines[label] = EngineState(self.stall_s, self.window_s)
            if cpu_s is not None and len(page.engines) == 1:
                snap = snap.with_(process_cpu_seconds_total=cpu_s)
            row = derive(label, snap, es, ts)
            self._tally.add(label, row, ts)
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

    def summary(self) -> dict[str, Any]:
        """What the watch saw, bounded whatever its length: per engine maxima/means, alerts, counts."""
        return {
            "url": self.url,
            "ticks": self.ticks,
            "errors": self.errors,
            "interval_s": self.interval,
            "stall_threshold_s": self.stall_s,
            "engines": self._tally.engines(),
            "alerts": [alert_dict(a) for a in self.alerts],
            "episodes": {label: self.recurrence(label) for label in self._engines},
            "observer_gaps": {"count": self.n_gaps, "longest_s": self.longest_gap_s},
        }

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

"""Run one probe under watch: send, scrape /metrics while it is in flight, classify, abort, recover.

Outcomes: ok, http-error (status and body kept), livelock and stuck-waiting (the one stall rule
of triage/stall.py over the scraped samples), slow (no stall verdict but past the deadline),
unreachable (no connection), proxy-error (a proxy in front of the server answered instead of it, e.g. nginx's
504 when its proxy_read_timeout ran out: the request's fate in the engine is unknown, triage.http.proxy_of).
A stalled or slow probe is aborted by cancelling its request
task, which closes its own connection; vLLM then cancels the request in the engine. Recovery
is verified after every abort: gauges back to 0, then a fresh salted SHORT request answers 200.
Every wait here is bounded: by the deadline, the stall threshold, or the recovery timeout.

The gauges are the server's, not the probe's: on a busy server other clients' progress keeps
resetting the stall window, so a hang there ends as "slow" at the deadline (still aborted and
checked for recovery). Before sending, the runner waits (bounded) for an idle engine.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from triage import events as ev_
from triage.http import EMBEDDINGS_PATH, ProbeClient, Reply, trim_for_storage
from triage.events import RunEvent
from triage.episode import PROBE, Episode, of_window
from triage.sample import EngineSample, ProbeSeries, observer_gap, server_sample
from triage.stall import DEFAULT_STALL_S, LIVELOCK, STUCK_WAITING, StallDetector

OK = "ok"
HTTP_ERROR = "http-error"
SLOW = "slow"
UNREACHABLE = "unreachable"
SKIPPED = "skipped"
PROXY_ERROR = "proxy-error"
OUTCOMES = (OK, HTTP_ERROR, LIVELOCK, STUCK_WAITING, SLOW, UNREACHABLE, SKIPPED, PROXY_ERROR)
STALLS = (LIVELOCK, STUCK_WAITING)


@dataclass(frozen=True)
class MonitorConfig:
    # the stall threshold: with 0.5 s scrapes a livelock's verdict lands ~2.5 s after send (per-step
    # progress evidence, triage/stall.py; longer only where the measured prefill rate says one step
    # may take longer)
    stall_s: float = DEFAULT_STALL_S
    deadline_s: float = 30.0  # a probe still unanswered (and not stalled) by then is "slow"
    scrape_s: float = 0.5
    idle_wait_s: float = 10.0  # wait this long for an idle engine before sending
    recovery_timeout_s: float = 15.0


# The runner's progress travels as run events (triage.events): probe-started, sample (the EngineSample of one
# scrape), aborted, verdict; the probe run adds started, finding, probe and done.
ProbeEvent = RunEvent
EventSink = Callable[[RunEvent], object]


@dataclass
class ProbeOutcome:
    probe: str
    set: str
    outcome: str
    description: str = ""
    duration_s: Optional[float] = None
    time_to_verdict_s: Optional[float] = None
    http_status: Optional[int] = None
    request: dict[str, Any] = field(default_factory=dict)
    response: Optional[dict[str, Any]] = None
    samples: list[EngineSample] = field(default_factory=list)  # the scrapes while it ran (ts = s since sent)
    episode: Optional[Episode] = None  # the stall (livelock, stuck-waiting) or the window a "slow" deadline cut
    recovery: Optional[dict[str, Any]] = None
    extra: dict[str, Any] = field(default_factory=dict)
    exchanges: list[Reply] = field(default_factory=list)  # full answers, for evaluators; not stored

    def sample_dicts(self) -> list[dict[str, Any]]:
        """The samples as stored: ``EngineSample.to_dict()`` each (the one sample shape, field names kept)."""
        return [s.to_dict() for s in self.samples]

    def detail(self) -> dict[str, Any]:
        """The stored shape of docs/CONTRACTS.md (request, response, samples, recovery) plus extras."""
        return {"request": self.request, "response": self.response, "samples": self.sample_dicts(),
                "recovery": self.recovery, **self.extra}

    def series(self) -> ProbeSeries:
        """What a probe timeline chart reads of this probe."""
        return ProbeSeries(self.probe, self.outcome, tuple(self.samples), self.time_to_verdict_s,
                           (self.recovery or {}).get("aborted_at_s"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProbeOutcome:
        """A ``to_dict()`` back to an outcome (a recording; exchanges are not kept)."""
        det = dict(d.get("detail") or {})
        return cls(probe=d["probe"], set=d.get("set", ""), outcome=d["outcome"], description=d.get("description", ""),
                   duration_s=d.get("duration_s"), time_to_verdict_s=d.get("time_to_verdict_s"),
                   http_status=d.get("http_status"), request=det.pop("request", {}) or {},
                   response=det.pop("response", None),
                   samples=[EngineSample.from_dict(r) for r in det.pop("samples", None) or []],
                   recovery=det.pop("recovery", None), extra=det)

    def to_dict(self) -> dict[str, Any]:
        return {"probe": self.probe, "set": self.set, "outcome": self.outcome, "description": self.description,
                "duration_s": self.duration_s, "time_to_verdict_s": self.time_to_verdict_s,
                "http_status": self.http_status, "detail": self.detail()}


def outcome_of(exchanges: list[Reply]) -> tuple[str, Optional[int]]:
    """ok / http-error / proxy-error / unreachable / slow from finished requests, with the first bad status."""
    for ex in exchanges:
        if ex.status is None:
            return (UNREACHABLE if ex.error and "Connect" in ex.error else SLOW), None
    for ex in exchanges:
        if ex.proxy:  # a proxy's answer says nothing of what the server did with the request
            return PROXY_ERROR, ex.status
    for ex in exchanges:
        if not ex.ok:
            return HTTP_ERROR, ex.status
    return OK, (exchanges[0].status if exchanges else None)


def _idle(s: EngineSample) -> bool:
    return not s.num_requests_running and not s.num_requests_waiting


def _busy(s: EngineSample) -> float:
    return (s.num_requests_running or 0) + (s.num_requests_waiting or 0)


async def _scrape_sample(pc: ProbeClient, t0: float, timeout_s: float) -> Optional[EngineSample]:
    page = await pc.scrape(timeout_s=timeout_s)
    return server_sample(page, round(time.monotonic() - t0, 3)) if page is not None else None


async def wait_idle(pc: ProbeClient, within_s: float) -> tuple[Optional[EngineSample], bool]:
    """Baseline before sending: the last sample and whether the engine was idle (bounded wait)."""
    t0 = time.monotonic()
    last = None
    while True:
        last = await _scrape_sample(pc, t0, 2.0)
        if last is None or _idle(last) or time.monotonic() - t0 >= within_s:
            return last, last is None or _idle(last)
        await asyncio.sleep(0.5)


async def verify_recovery(pc: ProbeClient, t0: float, aborted_at_s: float, short_body: dict[str, Any],
                          timeout_s: float, ours: int = 1, busy_at_verdict: float | None = None,
                          path: str = EMBEDDINGS_PATH) -> dict[str, Any]:
    """After an abort: poll until running == waiting == 0, then a salted SHORT must answer 200.

    On a shared server another client's request may still be in the engine: when the gauges
    dropped by at least our aborted requests and the SHORT answers, that counts as recovered,
    with ``others_in_flight`` saying the gauges never reached 0.
    """
    gauges_zero_at = None
    end = time.monotonic() + timeout_s
    polls: list[EngineSample] = []
    while time.monotonic() < end:
        s = await _scrape_sample(pc, t0, 2.0)
        if s is not None:
            polls.append(s)
            if _idle(s):
                gauges_zero_at = s.ts
                break
            left = _busy(s)
            if busy_at_verdict is not None and busy_at_verdict - left >= ours and s.ts - aborted_at_s > 3.0:
                break  # ours are gone; the rest is another client's
        await asyncio.sleep(0.25)
    ex = await pc.embed(short_body, path=path, timeout_s=max(2.0, end - time.monotonic()))
    now = round(time.monotonic() - t0, 3)
    others = None
    if gauges_zero_at is None and polls and busy_at_verdict is not None:
        left = _busy(polls[-1])
        others = busy_at_verdict - left >= ours  # ours left; what remains belongs to another client
    ok = ex.ok and (gauges_zero_at is not None or bool(others))
    return {"aborted_at_s": aborted_at_s, "gauges_zero_at_s": gauges_zero_at, "others_in_flight": others,
            "short_request_ok": ex.ok,
            "short_request_status": ex.status,
            "short_request_error": ex.error or (ex.error_message() if not ex.ok else None),
            "recovered": ok, "recovered_s": now if ok else None,
            "recovered_after_abort_s": round(now - aborted_at_s, 3) if ok else None,
            "polls": [p.to_dict() for p in polls[-5:]]}


async def observe(pc: ProbeClient, probe: str, set_name: str, bodies: list[dict[str, Any]], cfg: MonitorConfig,
                  short_body: Callable[[], dict[str, Any]], on_event: EventSink | None = None,
                  description: str = "", recover: bool = True, path: str = EMBEDDINGS_PATH) -> ProbeOutcome:
    """Send bodies concurrently and watch /metrics until they answer, stall, or pass the deadline.

    ``path``: the pooling endpoint the bodies (and the recovery request) go to; /rerank and /score run on
    the same pooling runner as /v1/embeddings (issue 25)."""
    emit = on_event or (lambda e: None)
    baseline, idle_at_start = await wait_idle(pc, cfg.idle_wait_s)
    det = StallDetector(cfg.stall_s, learn_steps=True)
    samples: list[EngineSample] = []
    t0 = time.monotonic()
    if baseline is not None:
        baseline = baseline.with_(ts=0.0)
        det.update(baseline)
    det.note_sent(0.0)
    last_ts = 0.0  # the last sample's time: a sample far later came late (the observer's own hole, not the server's)
    gaps: list[float] = []
    emit(RunEvent(ev_.PROBE_STARTED, probe=probe,
                  data={"set": set_name, "description": description, "n_requests": len(bodies)}))
    tasks = [asyncio.create_task(pc.embed_isolated(b, cfg.deadline_s + 5, path)) for b in bodies]
    pending: set[asyncio.Task[Reply]] = set(tasks)
    verdict: Optional[str] = None
    verdict_at: Optional[float] = None
    episode: Optional[Episode] = None  # the no-progress window the stall rule saw last (a stall, or one cut short)
    k = 1
    window_end: Optional[float] = None  # when the current no-progress window closes (s since send)
    while pending:
        # scrape on the regular tick, or right when the window closes if that comes first: a verdict
        # then lands one scrape after the window, not up to one tick later
        wake = t0 + (k * cfg.scrape_s if window_end is None else min(k * cfg.scrape_s, window_end))
        done, pending = await asyncio.wait(pending, timeout=max(0.0, wake - time.monotonic()))
        if not pending:
            break
        if window_end is None or k * cfg.scrape_s <= window_end:  # the regular tick: move to the next one
            k = max(k + 1, int((time.monotonic() - t0) / cfg.scrape_s) + 1)
        asked = time.monotonic() - t0
        s = await _scrape_sample(pc, t0, min(2.0, 2 * cfg.scrape_s))
        window_end = None
        if s is not None:
            gap = observer_gap(last_ts, s.ts, cfg.scrape_s, s.ts - asked)
            if gap is not None:
                s = s.with_(observer_gap_s=gap)
                gaps.append(gap)
            last_ts = s.ts
            samples.append(s)
            emit(RunEvent(ev_.PROBE_SAMPLE, probe=probe, samples=(s,)))
            st = det.update(s)
            window_end = st.window_end
            if st.kind is not None:
                episode = of_window(st, PROBE, s.engine)  # what is known so far, also when the deadline ends it
            if st.stalled:
                verdict, verdict_at = st.kind, s.ts
                break
        if time.monotonic() - t0 >= cfg.deadline_s:
            verdict, verdict_at = SLOW, round(time.monotonic() - t0, 3)
            break
    extra: dict[str, Any] = {"baseline": baseline.to_dict() if baseline is not None else None,
                             "idle_at_start": idle_at_start}
    if gaps:  # the observer's own holes: no stall window was judged across them (triage.stall)
        extra["observer_gaps"] = {"count": len(gaps), "longest_s": max(gaps), "scrape_s": cfg.scrape_s}
    if episode is not None and verdict in (*STALLS, SLOW):
        extra["stall"] = dict(episode.detail)  # its stored shape: the rule's reading (StallState.evidence())
    else:
        episode = None
    recovery = None
    if pending:  # stalled or slow: take the evidence, then abort
        if verdict in STALLS:
            h = await pc.health()
            extra["health_during_stall"] = {"status": h.status, "error": h.error}
        ours = len(pending)
        busy = _busy(samples[-1]) if samples else None
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        aborted_at = round(time.monotonic() - t0, 3)
        emit(RunEvent(ev_.PROBE_ABORTED, probe=probe, data={"aborted_at_s": aborted_at, "verdict": verdict}))
        if recover:
            # an engine mid-way through a long step (a slow device) frees the aborted request only when the
            # step ends: wait up to three expected steps, never past the probe's deadline
            step = episode.detail.get("expected_step_s") if episode is not None else None
            rt = max(cfg.recovery_timeout_s, min(3 * step, cfg.deadline_s)) if step else cfg.recovery_timeout_s
            recovery = await verify_recovery(pc, t0, aborted_at, short_body(), rt, ours, busy, path)
    finished = [t.result() for t in tasks if t.done() and not t.cancelled()]
    duration = round(time.monotonic() - t0, 3)
    if verdict is None:
        verdict, status = outcome_of(finished)
        verdict_at = round(max((ex.elapsed_s or 0.0) for ex in finished), 3) if finished else duration
        after = await _scrape_sample(pc, t0, 2.0)
        if after is not None:
            samples.append(after)
    else:
        status = None
    out = ProbeOutcome(probe=probe, set=set_name, outcome=verdict, description=description, duration_s=duration,
                       time_to_verdict_s=verdict_at, http_status=status,
                       samples=samples, recovery=recovery, episode=episode,
                       extra=extra, exchanges=finished,
                       request={"method": "POST", "path": path, "concurrency": len(bodies),
                                "body": trim_for_storage(bodies[0]) if bodies else None},
                       response=_response(finished))
    emit(RunEvent(ev_.PROBE_VERDICT, probe=probe,
                  data={"outcome": out.outcome, "time_to_verdict_s": out.time_to_verdict_s,
                        "http_status": out.http_status, "recovery": recovery}))
    return out


def _response(finished: list[Reply]) -> Optional[dict[str, Any]]:
    if not finished:
        return None
    bad = [ex for ex in finished if not ex.ok]
    first = (bad or finished)[0].to_dict()
    first.pop("request", None)
    if len(finished) > 1:
        first["statuses"] = [ex.status for ex in finished]
    return first

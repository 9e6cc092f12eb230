"""Stall episodes as watch sees them: each engine's alert opens when the stall rule confirms a stall, says what is
not known yet (a step in progress, the watcher's own gap), clears with how it ended (triage.recurrence), becomes a
finding worded by the catalogue (``word_stall``), and, once per engine, the recurring pattern of livelocks that
clients' time-outs end."""
from __future__ import annotations

from typing import Any, Optional

from triage import events as ev_
from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS, explain_episodes, explain_stall, word_stall
from triage.events import AlertEvent, RunEvent
from triage.findings import Finding, Status
from triage.episode import WATCH, Episode, of_window
from triage.recurrence import ONGOING, ended_by, headline, summarize
from triage.sample import EngineSample
from triage.stall import LIVELOCK, StallState
from triage.watch.engines import EngineState
from triage.watch.words import STEP_IN_PROGRESS, alert_message, count_text, hhmmss, stall_name

RECURRING_CHECK = "watch-episodes-recurring"


class Episodes:
    """The Watcher's alert windows and the findings they make (a mixin: it reads the watcher's settings and emits
    through its observer)."""

    url: str
    interval: float
    stall_s: float
    vllm_version: Optional[str]
    alerts: list[Episode]

    def _emit(self, ev: RunEvent) -> None:
        raise NotImplementedError

    @staticmethod
    def _undecided(label: str, state: StallState, ts: float, held_s: float, msg: str) -> AlertEvent:
        """An "undecided" alert: the window is past the threshold, but what is known says it is no stall yet."""
        assert state.since is not None and state.kind is not None
        return AlertEvent("undecided", label, state.kind, state.since, ts, state.running, state.waiting, held_s, msg)

    def _alert_transition(self, label: str, es: EngineState, state: StallState, ts: float,
                          row: Optional[EngineSample] = None) -> Optional[AlertEvent]:
        if state.cannot_judge and es.alert is None and es.noted_gap != state.since:
            # the window starts after this watcher's own hole: say that nothing is known of it, never a stall
            assert state.observer_gap_s is not None
            es.noted_gap = state.since
            return self._undecided(label, state, ts, 0.0, (
                f"cannot judge {hhmmss(ts - state.observer_gap_s)}-{hhmmss(ts)}: this watcher's sample came "
                f"{state.observer_gap_s:.0f}s after the one before (interval {self.interval:g}s): it, or the host it "
                f"shares, was held up, and a late sample says nothing about the server. "
                f"running={count_text(state.running)} waiting={count_text(state.waiting)} now; "
                f"the no-progress window starts again at {hhmmss(ts)}"
            ))
        if state.waiting_for_step and es.alert is None and es.noted_since != state.since:
            # past the threshold, inside the step the measured prefill rate predicts: say what is known
            assert state.since is not None and state.window_s is not None
            es.noted_since = state.since
            return self._undecided(label, state, ts, ts - state.since, (
                f"{STEP_IN_PROGRESS}: no progress for {ts - state.since:.0f}s with "
                f"running={count_text(state.running)} waiting={count_text(state.waiting)}, "
                f"but one engine step should take ~{state.expected_step_s:.1f}s at "
                f"this server's measured prefill rate (vLLM {self.vllm_version or 'version unknown'}): not a stall "
                "yet; a stall if nothing moves (KV cache usage, finished prompts) by "
                f"{hhmmss(state.since + state.window_s)}"
            ))
        if state.stalled and es.alert is None:
            assert state.since is not None and state.kind is not None
            opened = of_window(state, WATCH, label)
            assert opened is not None
            es.alert = opened.with_(confirmed_at=ts, mode=explain_stall(state.kind, self.vllm_version).id, detail={
                "vllm_version": self.vllm_version, "window_s": state.window_s,
                "expected_step_s": state.expected_step_s, "last_progress": state.last_progress})
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
                    state.kind, state.since, ts, state.running, state.waiting, self.vllm_version, state.expected_step_s,
                    self.facts,
                ),
            )
        if es.alert is not None and not state.stalled:
            a = es.alert.with_(end=ts, ended=ended_by(es.prev, row) if row is not None else ONGOING)
            self.alerts[next(i for i, x in enumerate(self.alerts) if x is es.alert)] = a
            es.alert = None
            self._record_finding(a)
            assert a.start is not None
            msg = (
                f"cleared at {hhmmss(ts)}: {stall_name(a.kind, a.detail.get('vllm_version'))} since {hhmmss(a.start)} "
                f"ended after "
                f"{ts - a.start:.0f}s; now running={count_text(state.running)} waiting={count_text(state.waiting)}"
            )
            msg += f" ({a.ended})"
            return AlertEvent(
                "cleared", label, a.kind, a.start, ts, state.running, state.waiting, ts - a.start, msg
            )
        return None

    def recurrence(self, label: str) -> dict[str, Any]:
        """One engine's closed livelock alerts as production sees them (triage.recurrence)."""
        return summarize([a.span() for a in self.alerts if a.engine == label and a.kind == LIVELOCK and not a.open])

    def _recurring_event(self, label: str, es: EngineState, ts: float) -> Optional[AlertEvent]:
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

    def _record_finding(self, a: Episode) -> None:
        end = a.end
        assert a.start is not None
        # never "livelocked" on a release with the fix: the catalogue words it by version
        words = word_stall("watch", a.kind, self.vllm_version, subject=f"Engine {a.engine}",
                           seen=f"; from {hhmmss(a.start)}"
                           + (f" to {hhmmss(end)}" if end else " (still stalled when watch ended)"))
        self._emit(RunEvent(ev_.FINDING, finding=Finding(
            status=Status.FAIL, evidence={**alert_dict(a), "stall_threshold_s": self.stall_s,
                                          "interval_s": self.interval, "source": "scrape", "url": self.url,
                                          "facts": {"vllm.version": self.vllm_version, "stall.kind": a.kind}},
            **words.finding_args())))


def alert_dict(a: Episode) -> dict[str, Any]:
    """Watch's stored alert shape (a run's summary and findings; ``triage.episode.from_stored`` reads it back):
    ``ended`` only once it cleared."""
    d: dict[str, Any] = {"engine": a.engine, "kind": a.kind, "since": a.start, "confirmed_at": a.confirmed_at,
                         "cleared_at": a.end, "running": a.running[1], "waiting": a.waiting[1],
                         **{k: a.detail.get(k) for k in ("vllm_version", "window_s", "expected_step_s",
                                                         "last_progress")}}
    if not a.open:
        d["ended"] = a.ended
    return d


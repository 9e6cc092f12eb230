"""The engine right now: the live stall rule over a few /metrics samples, and a stall so seen as a finding of the run.

The checklist's evidence is the set-up, which reads the same on an idle and on a hung server (issue 32). So before
a run's end, ``with_live_state`` watches /metrics just past the stall window (a ``Watcher``, the one stall rule)
and, when the engine is stalled while the run goes, adds the stall as a finding of that run: a ``finding`` event
like every other, worded by the catalogue record of the stall (``word_stall``, version-gated), so the Recorder
stores it and History and every export show it. The run's summary is then said again from all its findings (a
summary agrees with its status). The verdict ("stalled" | "not stalled" | "cannot judge") and its words travel in
a ``meta`` event (``live``) the faces show.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any, Optional

from triage import events as ev_
from triage.catalogue import word_stall
from triage.events import RunEvent
from triage.findings import Finding, Status, worst
from triage.episode import WATCH, Episode, of_window
from triage.stall import DEFAULT_STALL_S
from triage.target import Target

STALLED, NOT_STALLED, CANNOT_JUDGE = "stalled", "not stalled", "cannot judge"
META_KEY = "live"  # the run's meta: {"verdict", "message", "samples", "watched_s"}
SEEN = "stalled now, seen while the checklist ran"


@dataclass(frozen=True)
class LiveVerdict:
    """What a few /metrics samples said of the engine at one moment; ``finding``: the stall, when one."""

    verdict: str
    message: str
    samples: int = 0
    watched_s: float = 0.0
    finding: Optional[Finding] = None

    def meta(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("finding")
        return d


def _n(v: Any) -> str:
    return "?" if v is None else str(int(v))


def watch_now(target: Target, *, watch_s: float = DEFAULT_STALL_S + 1.5, every_s: float = 0.5,
              stall_s: float = DEFAULT_STALL_S, client: Any = None, clock: Callable[[], float] = time.time,
              sleep: Callable[[float], None] = time.sleep, seen: str = SEEN) -> LiveVerdict:
    """Is the engine stalled now? /metrics scraped every ``every_s`` for ``watch_s`` (just past the stall window),
    stopping at a confirmed stall. ``client``/``clock``/``sleep``: a recorded transport and a clock for tests."""
    from triage import watch

    if not target.url:
        return LiveVerdict(CANNOT_JUDGE, "no server URL: only the set-up was read")
    w = watch.Watcher(target.url, stall_s=float(stall_s), api_key=target.api_key or None, interval=every_s,
                      timeout_s=max(every_s * 4, 2.0), client=client, clock=clock)
    samples, errors, last, state, ts = 0, [], None, None, 0.0
    t0 = clock()
    try:
        while True:
            tick = w.sample_once()
            if tick.error:
                errors.append(tick.error)
            else:
                samples += 1
                last = tick.sample
            if tick.state.kind and tick.state.confirmed_at is not None:
                state, ts = tick.state, tick.ts
                break
            if clock() - t0 >= watch_s:
                break
            sleep(every_s)
    except Exception as e:  # noqa: BLE001 - the live state is extra: it says it could not judge
        return LiveVerdict(CANNOT_JUDGE, f"/metrics could not be read: {type(e).__name__}: {e}", samples)
    finally:
        with contextlib.suppress(Exception):
            w.close()
    watched = clock() - t0
    if state is not None:
        # the stall episode watch opened on that scrape (its alert), else the rule's window as one
        ep = next((a for a in reversed(w.alerts) if a.kind == state.kind and a.open), None) \
            or of_window(state, WATCH)
        assert ep is not None
        ep = ep.with_(confirmed_at=ts)
        message = watch.alert_message(ep.kind, ep.start or ts, ts, ep.running[1], ep.waiting[1], w.vllm_version,
                                      state.expected_step_s, w.facts)
        return LiveVerdict(STALLED, message, samples, watched, stall_finding(w, ep, samples, watched, seen))
    if samples < 2:
        why = errors[-1] if errors else "too few samples"
        return LiveVerdict(CANNOT_JUDGE, f"no /metrics samples to judge by ({why})", samples, watched)
    now = (f"running {_n(last.num_requests_running)}, waiting {_n(last.num_requests_waiting)}"
           if last is not None else "")
    return LiveVerdict(NOT_STALLED, f"{samples} /metrics samples over {watched:.1f} s: {now}", samples, watched)


def stall_finding(w: Any, ep: Episode, samples: int, watched_s: float, seen: str = SEEN) -> Finding:
    """The stall episode the watch confirmed, as the run's finding: the catalogue's words for a watched stall."""
    from triage.watch import hhmmss

    ts = ep.confirmed_at if ep.confirmed_at is not None else 0.0
    since = ep.start if ep.start is not None else ts
    words = word_stall("watch", ep.kind, w.vllm_version, subject=f"Engine {ep.engine}",
                       seen=f"; {seen} (no progress since {hhmmss(since)}, {ts - since:.0f}s)")
    evidence = {"engine": ep.engine, "kind": ep.kind, "since": since, "confirmed_at": ts,
                "running": ep.running[1], "waiting": ep.waiting[1], "samples": samples,
                "watched_s": round(watched_s, 1), "url": w.url, "source": "scrape", "vllm_version": w.vllm_version,
                "facts": {"vllm.version": w.vllm_version, "stall.kind": ep.kind}}
    return Finding(status=Status.FAIL, evidence=evidence, **words.finding_args())


def with_live_state(events: Iterable[RunEvent], target: Target,
                    look: Callable[[Target], LiveVerdict] = watch_now) -> Iterator[RunEvent]:
    """A run's events with the live state added before its ``done``: looked at only when the server answered
    (the run's config says so); a stall is one more finding and the summary is said again from all of them."""
    from triage.checklist import run_summary

    findings: list[Finding] = []
    answered = False
    for ev in events:
        if ev.kind == ev_.FINDING and ev.finding is not None:
            findings.append(ev.finding)
        elif ev.kind == ev_.CONFIG:
            answered = ((ev.stored or {}).get("sources") or {}).get("server") == "ok"
        elif ev.kind == ev_.DONE and answered and target.url:
            yield RunEvent(ev_.SOURCE, source=META_KEY, message="/metrics for a few seconds: is the engine stalled?")
            live = look(target)
            yield RunEvent(ev_.META, meta={META_KEY: live.meta()}, message=f"live: {live.verdict}")
            if live.finding is not None:
                findings.append(live.finding)
                yield RunEvent(ev_.FINDING, finding=live.finding)
                ev = replace(ev, message=f"status {worst(f.status for f in findings).value}",
                             summary=run_summary(findings))
        yield ev


def live_of(meta: Optional[dict[str, Any]]) -> Optional[LiveVerdict]:
    """The live state a run's meta holds (``with_live_state``), or None."""
    d = (meta or {}).get(META_KEY)
    if not isinstance(d, dict) or "verdict" not in d:
        return None
    return LiveVerdict(str(d["verdict"]), str(d.get("message") or ""), int(d.get("samples") or 0),
                       float(d.get("watched_s") or 0.0))

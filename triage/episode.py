"""`Episode`: one stall episode (livelock or stuck-waiting), whoever saw it: the log post-mortem, watch, the fleet
scan or a probe (issue 44: "one stall-episode value").

Every reader of the one stall rule (triage.stall) turns what it saw into this value: where the no-progress window
started, when the rule confirmed it, where it ended (``None`` while it is open), the running/waiting counts seen,
how it ended (triage.recurrence), the catalogue's failure-mode id once a verdict named it, and its evidence: the log
lines or the engine samples. What only one source can say (a log's line numbers and stats interval, watch's
expected step, a probe's window evidence) rides in ``detail``, a read-only mapping under that source's own keys.

``end`` is where the source can place the end: the log's next sign of life (its next stats line, the end of the
log), the scrape that cleared watch's alert, the fleet's last stalled Prometheus step (a step between two scrapes
is no observation of the server, so a fleet episode ends at its last stalled one: its stored shape since issue 21).
``last_seen`` is the last observation that still showed the stall; ``until`` is ``end``, or ``last_seen`` while
open: how long the stall is known to have lasted.

Stored shapes stay those each source wrote (a log episode's ``start_ts``/``start_line``…, watch's alert ``since``/
``cleared_at``…, the fleet's ``start``/``end``/``ongoing``…): each source converts at its storage edge, and
``from_stored`` reads any of them back (old runs, exported JSON) into this one value.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Optional

from triage.recurrence import ONGOING, Span
from triage.sample import EngineSample
from triage.stall import StallState

# who saw it (the source of an episode; an EngineSample's own source says how a sample was read)
LOG = "log"
WATCH = "watch"
FLEET = "fleet"
PROBE = "probe"
SOURCES = (LOG, WATCH, FLEET, PROBE)

_NONE: Mapping[str, Any] = MappingProxyType({})


def frozen(d: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A read-only copy for ``Episode.detail`` (empty ones share one instance)."""
    return MappingProxyType(dict(d)) if d else _NONE


@dataclass(frozen=True)
class Episode:
    """One stall episode, from any source: a frozen value (``with_`` gives a changed copy)."""

    kind: str  # livelock | stuck-waiting (triage.stall)
    source: str  # log | watch | fleet | probe (SOURCES)
    start: Optional[float]  # where the no-progress window started (None: a log without timestamps)
    end: Optional[float] = None  # where it ended as the source can place it; None while open
    confirmed_at: Optional[float] = None  # when the rule's window was crossed; None: not confirmed (a log's silence)
    last_seen: Optional[float] = None  # the last observation that still showed it
    engine: str = "0"
    running: tuple[Optional[float], Optional[float]] = (None, None)  # at its first and last observation
    waiting: tuple[Optional[float], Optional[float]] = (None, None)
    max_running: float = 0.0
    max_waiting: float = 0.0
    n_seen: int = 0  # observations that showed it (samples, a log's stats lines)
    ended: Optional[str] = None  # how it ended (triage.recurrence: client abort | recovered | …); None: not read
    mode: Optional[str] = None  # the catalogue's failure-mode id, once a verdict named it
    lines: tuple[tuple[int, str], ...] = ()  # evidence: (line number, text) of a log
    samples: tuple[EngineSample, ...] = ()  # evidence: the engine samples that showed it (bounded by the source)
    detail: Mapping[str, Any] = field(default_factory=lambda: _NONE)  # what only its source says, its own keys

    def __post_init__(self) -> None:
        if not isinstance(self.detail, MappingProxyType):
            object.__setattr__(self, "detail", frozen(self.detail))

    @property
    def open(self) -> bool:
        return self.end is None

    @property
    def confirmed(self) -> bool:
        return self.confirmed_at is not None

    @property
    def until(self) -> Optional[float]:
        """How far it is known to have lasted: its end, or the last observation while open."""
        return self.end if self.end is not None else self.last_seen

    @property
    def duration_s(self) -> Optional[float]:
        u = self.until
        return None if self.start is None or u is None else max(0.0, u - self.start)

    def with_(self, **changes: Any) -> Episode:
        return replace(self, **changes)

    def seen(self, running: Optional[float], waiting: Optional[float], ts: Optional[float] = None) -> Episode:
        """This episode after one more observation that showed it."""
        first_r, _ = self.running
        first_w, _ = self.waiting
        first = self.n_seen == 0
        return replace(self, running=(running if first else first_r, running),
                       waiting=(waiting if first else first_w, waiting),
                       max_running=max(self.max_running, float(running or 0)),
                       max_waiting=max(self.max_waiting, float(waiting or 0)),
                       n_seen=self.n_seen + 1, last_seen=ts if ts is not None else self.last_seen)

    def span(self) -> Span:
        """The episode as triage.recurrence reads a series of them."""
        assert self.start is not None
        u = self.until
        return Span(self.start, self.start if u is None else u, self.ended or ONGOING, self.kind)


def of_window(state: StallState, source: str, engine: str = "0", keep: int = 2) -> Optional[Episode]:
    """The no-progress window the stall rule holds open (``StallDetector.state``) as an episode of ``source``:
    None while the gauges have no stall shape. Its evidence: the window's first and last ``keep`` samples, the
    rule's own reading (``StallState.evidence()``) as ``detail``."""
    if state.kind is None or not state.samples:
        return None
    first, last = state.samples[0], state.samples[-1]
    kept = tuple(state.samples) if len(state.samples) <= 2 * keep else (*state.samples[:keep], *state.samples[-keep:])
    return Episode(kind=state.kind, source=source, start=state.since, confirmed_at=state.confirmed_at,
                   last_seen=last.ts, engine=engine, running=(first.num_requests_running, state.running),
                   waiting=(first.num_requests_waiting, state.waiting),
                   max_running=max(float(x.num_requests_running or 0) for x in state.samples),
                   max_waiting=max(float(x.num_requests_waiting or 0) for x in state.samples),
                   n_seen=len(state.samples), samples=kept, detail=state.evidence())


def from_stored(d: Mapping[str, Any] | Episode, source: Optional[str] = None) -> Episode:
    """Any stored episode shape back as the value: a log episode (``start_ts``…), a watch alert (``since``/
    ``cleared_at``…), a fleet episode (``start``/``end``/``ongoing``…) or an ``Episode`` itself (returned as is)."""
    if isinstance(d, Episode):
        return d
    if "start_ts" in d or "start_line" in d:  # the log post-mortem's (triage.logs.episodes.episode_dict)
        # its stored shape says whether the rule confirmed it, not when: its start stands for the time
        return Episode(kind=str(d.get("kind")), source=source or LOG, start=d.get("start_ts"), end=d.get("end_ts"),
                       confirmed_at=d.get("start_ts") if d.get("confirmed") else None, last_seen=d.get("last_stall_ts"),
                       engine=str(d.get("engine", "0")), max_running=float(d.get("max_running") or 0),
                       max_waiting=float(d.get("max_waiting") or 0), n_seen=int(d.get("n_stats_lines") or 0),
                       ended=d.get("ended"),
                       lines=tuple((int(x["line"]), str(x["text"])) for x in d.get("lines") or ()),
                       detail={k: d[k] for k in ("start_line", "last_stall_line", "end_line", "ended_by", "silent",
                                                 "interval_s", "held") if k in d})
    if "since" in d:  # watch's alert (triage.watch.episodes.alert_dict); a probe's extra["stall"] has these keys too
        r, w = d.get("running"), d.get("waiting")
        return Episode(kind=str(d.get("kind")), source=source or WATCH, start=d["since"], end=d.get("cleared_at"),
                       confirmed_at=d.get("confirmed_at"), last_seen=d.get("cleared_at") or d.get("confirmed_at"),
                       engine=str(d.get("engine", "0")), running=(r, r), waiting=(w, w),
                       ended=d.get("ended"), mode=d.get("mode"),
                       detail={k: d[k] for k in ("vllm_version", "window_s", "expected_step_s", "last_progress")
                               if k in d})
    # the fleet's (triage.fleet.replicas.episode_dict)
    ev = d.get("evidence") or {}
    rr, ww = ev.get("num_requests_running") or [None, None], ev.get("num_requests_waiting") or [None, None]
    ongoing = bool(d.get("ongoing"))
    return Episode(kind=str(d.get("kind")), source=source or FLEET, start=d.get("start"),
                   end=None if ongoing else d.get("end"), confirmed_at=d.get("confirmed_at"), last_seen=d.get("end"),
                   running=(rr[0], rr[-1]), waiting=(ww[0], ww[-1]), n_seen=int(d.get("samples") or 0),
                   ended=d.get("ended"), mode=d.get("mode"), detail=ev)

"""Stall episodes in a log's stats lines: the shared stall rule plus the silence rule.

The verdict per stats line comes from triage.stall.StallDetector (the one rule). On top of it a
log has one more signal the detector cannot see: *silence*. vLLM demotes the stats line to DEBUG
once two intervals in a row had zero throughput (vllm/v1/metrics/loggers.py ``engine_is_idle``,
0.8 … 0.32), so a livelocked engine prints one `Running: 1 reqs … 0.0 tokens/s` line and then
nothing. A stall-shaped line followed by no further stats line (to the end of the log, or for a
gap of more than 1.5 intervals: at least one line was demoted, so at least two intervals had zero
throughput) is therefore an episode too. Progress from *other* requests can come after it (the
livelock does not block them), so the gap is judged before the next line's throughput.

A request *held* beside traffic (issue 21, `triage.stall.held` on log lines): with normal requests finishing
next to a request held by the pooling livelock the line's throughput is theirs, while `Running:` stays >= 1 and
the KV usage stays at the held request's blocks; such a line is no progress. A line whose KV usage moved (a
chunk's blocks) restarts the window without closing the episode. Both only on a log whose stats lines come less
than ``FINE_INTERVAL_S`` apart: 10 s apart, an equal KV usage can be two different requests under steady traffic.
The threshold is two stats intervals (``STALL_INTERVALS``) of the log's own interval when that is shorter than
the default (VLLM_LOG_STATS_INTERVAL=1 resolves a 5 s hang ended by a client's time-out; the default 10 s cannot:
`triage.logs.episode_endings.resolution`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.episode import LOG, Episode
from triage.stall import StallDetector, held_gauges, queue_served_gauges

DEFAULT_STATS_INTERVAL_S = 10.0  # VLLM_LOG_STATS_INTERVAL default (0.8 … 0.32)
# Two stats intervals: one interval of zero throughput with a request running is normal for a long
# pooling prompt (its prompt tokens are counted only when it finishes).
LOG_STALL_S = 2 * DEFAULT_STATS_INTERVAL_S
MIN_INTERVAL_S = 0.5  # VLLM_LOG_STATS_INTERVAL=1 lines read 0.9-1.1 s apart
FINE_INTERVAL_S = 5.0  # the held rule and KV moves need stats lines at least this close
STALL_INTERVALS = 2  # the threshold in the log's own stats intervals
EVIDENCE_LINES = 5  # lines kept per error kind / per episode
MAX_EPISODES = 50


@dataclass
class StatsWindow:
    """The stats lines of the stall a track has open (its builder, line by line); closed, it is an ``Episode``."""

    kind: str  # livelock | stuck-waiting
    start_ts: Optional[float]
    start_line: int
    last_stall_line: int
    last_stall_ts: Optional[float]
    interval_s: float = DEFAULT_STATS_INTERVAL_S  # the log's stats interval when it opened
    # the busy stats lines just before it (line, prompt tokens/s): what the stuck request computed
    before: list[tuple[int, float]] = field(default_factory=list)
    held: bool = False  # opened on a request held beside others' throughput (KV usage unchanged)
    confirmed_at: Optional[float] = None  # the line's time where the detector crossed its threshold
    first_counts: Optional[tuple[int, int]] = None  # (running, waiting) on its first line
    last_counts: Optional[tuple[int, int]] = None
    max_running: int = 0
    max_waiting: int = 0
    n_lines: int = 0
    lines: list[tuple[int, str]] = field(default_factory=list)
    # the last stalled line's (running, KV usage 0-1, prompt tokens/s): how it ended
    last_values: Optional[tuple[int, Optional[float], float]] = None

    def closed(self, engine: str, ended_by: str, end_ts: Optional[float], end_line: Optional[int],
               end_values: Optional[tuple[int, Optional[float], float]]) -> Episode:
        """The episode (source log): the log's own facts (line numbers, interval, how its lines ended it) in
        ``detail`` under their stored names."""
        r0, w0 = self.first_counts or (None, None)
        r1, w1 = self.last_counts or (None, None)
        return Episode(kind=self.kind, source=LOG, start=self.start_ts, end=end_ts, confirmed_at=self.confirmed_at,
                       last_seen=self.last_stall_ts, engine=engine, running=(r0, r1), waiting=(w0, w1),
                       max_running=self.max_running, max_waiting=self.max_waiting, n_seen=self.n_lines,
                       lines=tuple(self.lines),
                       detail={"start_line": self.start_line, "last_stall_line": self.last_stall_line,
                               "end_line": end_line, "ended_by": ended_by,
                               "silent": ended_by in ("silence-to-end", "silence-gap"), "interval_s": self.interval_s,
                               "before": tuple(self.before), "held": self.held, "last_values": self.last_values,
                               "end_values": end_values})


def possible_duration_s(ep: Episode) -> Optional[tuple[float, float]]:
    """How long a log's stall could have lasted: the line's own zero-throughput interval at least; at most from one
    interval before the line to the next sign of life (next stats line, end of log)."""
    d = ep.duration_s
    if d is None:
        return None
    interval = ep.detail["interval_s"]
    return (interval, d + interval)


def prompt_tokens_before(ep: Episode) -> list[tuple[int, float, int]]:
    """Token arithmetic: prompt tokens/s x the interval = tokens computed in each busy interval before the stall."""
    interval = ep.detail["interval_s"]
    return [(n, tp, round(tp * interval)) for n, tp in ep.detail["before"]]


def episode_dict(ep: Episode) -> dict[str, Any]:
    """A log episode's stored shape, its keys in the stored order (the goldens under tests/logs/goldens hold it;
    ``triage.episode.from_stored`` reads it back), the evidence lines as {line, text}; the busy lines before it and
    the values around its end (``detail``: before, last_values, end_values) are not stored."""
    d = ep.detail
    return {"kind": ep.kind, "engine": ep.engine, "start_ts": ep.start, "start_line": d["start_line"],
            "last_stall_line": d["last_stall_line"], "last_stall_ts": ep.last_seen, "end_ts": ep.end,
            "end_line": d["end_line"], "ended_by": d["ended_by"], "confirmed": ep.confirmed_at is not None,
            "silent": d["silent"], "duration_s": ep.duration_s, "max_running": ep.max_running,
            "max_waiting": ep.max_waiting, "n_stats_lines": ep.n_seen,
            "lines": [{"line": n, "text": t} for n, t in ep.lines], "interval_s": d["interval_s"],
            "possible_duration_s": possible_duration_s(ep), "held": d["held"]}


class EngineTrack:
    """Per-engine stall tracking: the shared detector plus the silence rule."""

    def __init__(self, engine: str, threshold_s: float) -> None:
        self.engine = engine
        self.threshold_s = threshold_s
        self.det = StallDetector(threshold_s)
        self.open: Optional[StatsWindow] = None
        self.episodes: list[Episode] = []
        self.dropped = 0
        self.n = 0
        self.last_ts: Optional[float] = None
        self.min_gap: Optional[float] = None
        self._busy: deque[tuple[int, float]] = deque(maxlen=8)  # busy lines since the engine was last idle
        self._prev: Optional[tuple[int, Optional[float], Any]] = None  # the last line's (running, KV usage, waiting)
        self._idle = False  # the last line the detector was given was idle (no request running or waiting)

    def interval(self) -> float:
        return self.min_gap if self.min_gap else DEFAULT_STATS_INTERVAL_S

    def _close(self, ended_by: str, end_ts: Optional[float], end_line: Optional[int],
               values: Optional[tuple[int, Optional[float], float]] = None) -> None:
        w = self.open
        self.open = None
        if w is None:
            return
        ep = w.closed(self.engine, ended_by, end_ts, end_line, values)
        if ep.confirmed_at is not None or ep.detail["silent"]:
            if len(self.episodes) < MAX_EPISODES:
                self.episodes.append(ep)
            else:
                self.dropped += 1

    def add_values(self, ts: Optional[float], line: int, running: int, waiting: int, prompt: float, gen: float,
                   kv: Optional[float] = None) -> None:
        """One stats line, given as its values: the stall rule (StallDetector.update_gauges), the silence rule and
        the open episode. The log post-mortem's hot path (one call per stats line): the interval is read once per
        line, and the held rule is asked only with a request running (it needs one)."""
        self.n += 1
        gap = None
        prev_ts = self.last_ts
        min_gap = self.min_gap
        if ts is not None and prev_ts is not None:
            gap = ts - prev_ts
            # vLLM's own timestamps have 1 s resolution (two lines in one second: a gap of 0); a collector's are
            # exact, and a line read late makes the next gap short: the shortest gap of half a second or more
            if gap >= MIN_INTERVAL_S and (min_gap is None or gap < min_gap):
                self.min_gap = min_gap = gap
                if gap < FINE_INTERVAL_S:
                    self.det.threshold_s = min(self.threshold_s, STALL_INTERVALS * gap)
        interval = min_gap if min_gap else DEFAULT_STATS_INTERVAL_S  # self.interval()
        t = ts if ts is not None else self.n * DEFAULT_STATS_INTERVAL_S
        if not running and not waiting and self.open is None:
            # an idle engine with no episode open (most lines of a quiet server): the detector's window restarts,
            # no episode opens and none closes; what the full path below would do, without its questions
            self._prev = (running, kv, waiting)
            if not self._idle:
                # the detector's window restarts; after an idle line it is restarted already: its kind None, and
                # the start of a window is read only once a line of some kind starts one again
                self.det.update_gauges(t, running, waiting, False)
                self._idle = True
            if ts is not None:
                self.last_ts = ts
            if self._busy:
                self._busy.clear()
            return
        if self.open is not None and gap is not None and gap > 1.5 * interval:
            self._close("silence-gap", ts, line, (running, kv, prompt))
            self.det = StallDetector(self.det.threshold_s)  # the silence broke the window
            self._prev = None
        prev, self._prev = self._prev, (running, kv, waiting)
        if interval >= FINE_INTERVAL_S:
            prev = None  # lines 10 s apart: equal KV usage may be two different requests (steady traffic)
        # a queue being served (waiting at both lines, prompts finishing) is no held request (triage.stall.held)
        held = prev is not None and bool(running) and held_gauges(prev[0], prev[1], running, kv) \
            and not queue_served_gauges(prev[2], waiting, bool(prompt))
        made_progress = (bool(prompt) or bool(gen)) and not held
        kv_moved = prev is not None and kv is not None and prev[1] is not None and kv != prev[1]
        kind, stalled = self.det.update_gauges(t, running, waiting, made_progress or kv_moved)
        self._idle = False
        ep = self.open
        if kind is None or made_progress:  # not stalled now
            if ep is not None:
                self._close("progress" if made_progress else "shape-change", ts, line, (running, kv, prompt))
        else:
            if ep is not None and kind != ep.kind:
                self._close("shape-change", ts, line, (running, kv, prompt))
                ep = None
            if ep is None:
                start = prev_ts if held and prev_ts is not None else ts  # held since the line before
                ep = self.open = StatsWindow(
                    kind=str(kind),
                    start_ts=start,
                    start_line=line or 0,
                    last_stall_line=line or 0,
                    last_stall_ts=ts,
                    interval_s=interval,
                    before=list(self._busy),
                    held=held,
                )
            ep.last_stall_line, ep.last_stall_ts = line or 0, ts
            ep.last_values = (running, kv, prompt)
            ep.n_lines += 1
            counts = (int(running or 0), int(waiting or 0))
            if ep.first_counts is None:
                ep.first_counts = counts
            ep.last_counts = counts
            ep.max_running = max(ep.max_running, counts[0])
            ep.max_waiting = max(ep.max_waiting, counts[1])
            if ep.confirmed_at is None and stalled and ts is not None:
                ep.confirmed_at = ts
        if ts is not None:
            self.last_ts = ts
        if not running and not waiting:
            if self._busy:
                self._busy.clear()
        elif made_progress and prompt:
            self._busy.append((line or 0, prompt))

    def add_line(self, n: int, text: str) -> None:
        if self.open is not None and len(self.open.lines) < EVIDENCE_LINES:
            self.open.lines.append((n, text))

    def finish(self, last_ts: Optional[float], last_line: int) -> None:
        self._close("silence-to-end", last_ts, last_line)

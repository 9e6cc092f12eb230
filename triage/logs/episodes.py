"""Stall episodes in a log's stats lines: the shared stall rule plus the silence rule.

The verdict per stats line comes from triage.stall.StallDetector (the one rule). On top of it a
log has one more signal the detector cannot see: *silence*. vLLM demotes the stats line to DEBUG
once two intervals in a row had zero throughput (vllm/v1/metrics/loggers.py ``engine_is_idle``,
0.8 … 0.32), so a livelocked engine prints one `Running: 1 reqs … 0.0 tokens/s` line and then
nothing. A stall-shaped line followed by no further stats line (to the end of the log, or for a
gap of more than 1.5 intervals: at least one line was demoted, so at least two intervals had zero
throughput) is therefore an episode too. Progress from *other* requests can come after it (the
livelock does not block them), so the gap is judged before the next line's throughput.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.stall import StallDetector

DEFAULT_STATS_INTERVAL_S = 10.0  # VLLM_LOG_STATS_INTERVAL default (0.8 … 0.32)
# Two stats intervals: one interval of zero throughput with a request running is normal for a long
# pooling prompt (its prompt tokens are counted only when it finishes).
LOG_STALL_S = 2 * DEFAULT_STATS_INTERVAL_S
EVIDENCE_LINES = 5  # lines kept per error kind / per episode
MAX_EPISODES = 50


@dataclass
class StallEpisode:
    """A window in which an engine's stats said 'stalled' (livelock or stuck-waiting)."""

    kind: str  # livelock | stuck-waiting
    engine: str
    start_ts: Optional[float]
    start_line: int
    last_stall_line: int
    last_stall_ts: Optional[float]
    end_ts: Optional[float] = None  # first sign of life after it (next stats line) or end of log
    end_line: Optional[int] = None
    ended_by: str = "silence-to-end"  # silence-to-end | silence-gap | progress | shape-change
    confirmed: bool = False  # the detector crossed its threshold on stats lines alone
    silent: bool = False  # stats lines stopped after the stall-shaped line
    max_running: int = 0
    max_waiting: int = 0
    n_lines: int = 0
    lines: list[tuple[int, str]] = field(default_factory=list)
    interval_s: float = DEFAULT_STATS_INTERVAL_S  # the log's stats interval when it opened
    # the busy stats lines just before it (line, prompt tokens/s): what the stuck request computed
    before: list[tuple[int, float]] = field(default_factory=list)

    @property
    def duration_s(self) -> Optional[float]:
        if self.start_ts is None or self.end_ts is None:
            return None
        return max(0.0, self.end_ts - self.start_ts)

    @property
    def possible_duration_s(self) -> Optional[tuple[float, float]]:
        """How long the stall could have lasted: the line's own zero-throughput interval at least; at
        most from one interval before the line to the next sign of life (next stats line, end of log)."""
        d = self.duration_s
        if d is None:
            return None
        return (self.interval_s, d + self.interval_s)

    def prompt_tokens_before(self) -> list[tuple[int, float, int]]:
        """Token arithmetic: prompt tokens/s x the interval = tokens computed in each busy interval."""
        return [(n, tp, round(tp * self.interval_s)) for n, tp in self.before]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "engine": self.engine,
            "start_ts": self.start_ts,
            "start_line": self.start_line,
            "last_stall_line": self.last_stall_line,
            "last_stall_ts": self.last_stall_ts,
            "end_ts": self.end_ts,
            "end_line": self.end_line,
            "ended_by": self.ended_by,
            "confirmed": self.confirmed,
            "silent": self.silent,
            "duration_s": self.duration_s,
            "max_running": self.max_running,
            "max_waiting": self.max_waiting,
            "n_stats_lines": self.n_lines,
            "lines": [{"line": n, "text": t} for n, t in self.lines],
            "interval_s": self.interval_s,
            "possible_duration_s": self.possible_duration_s,
        }


class EngineTrack:
    """Per-engine stall tracking: the shared detector plus the silence rule."""

    def __init__(self, engine: str, threshold_s: float) -> None:
        self.engine = engine
        self.det = StallDetector(threshold_s)
        self.open: Optional[StallEpisode] = None
        self.episodes: list[StallEpisode] = []
        self.dropped = 0
        self.n = 0
        self.last_ts: Optional[float] = None
        self.min_gap: Optional[float] = None
        self._busy: deque[tuple[int, float]] = deque(maxlen=8)  # busy lines since the engine was last idle

    def interval(self) -> float:
        return self.min_gap if self.min_gap and self.min_gap >= 1 else DEFAULT_STATS_INTERVAL_S

    def _close(self, ended_by: str, end_ts: Optional[float], end_line: Optional[int]) -> None:
        ep = self.open
        self.open = None
        if ep is None:
            return
        ep.ended_by, ep.end_ts, ep.end_line = ended_by, end_ts, end_line
        ep.silent = ended_by in ("silence-to-end", "silence-gap")
        if ep.confirmed or ep.silent:
            if len(self.episodes) < MAX_EPISODES:
                self.episodes.append(ep)
            else:
                self.dropped += 1

    def add_values(self, ts: Optional[float], line: int, running: int, waiting: int, prompt: float, gen: float) -> None:
        """One stats line, given as its values: the stall rule (StallDetector.update_gauges), the silence rule and
        the open episode."""
        self.n += 1
        gap = None
        if ts is not None and self.last_ts is not None:
            gap = ts - self.last_ts
            if gap > 0 and (self.min_gap is None or gap < self.min_gap):
                self.min_gap = gap
        t = ts if ts is not None else self.n * DEFAULT_STATS_INTERVAL_S
        if self.open is not None and gap is not None and gap > 1.5 * self.interval():
            self._close("silence-gap", ts, line)
            self.det = StallDetector(self.det.threshold_s)  # the silence broke the window
        made_progress = bool(prompt) or bool(gen)
        kind, stalled = self.det.update_gauges(t, running, waiting, made_progress)
        stalled_now = kind is not None and not made_progress
        ep = self.open
        if ep is not None and (not stalled_now or kind != ep.kind):
            self._close("progress" if made_progress else "shape-change", ts, line)
            ep = None
        if stalled_now:
            if ep is None:
                ep = self.open = StallEpisode(
                    kind=str(kind),
                    engine=self.engine,
                    start_ts=ts,
                    start_line=line or 0,
                    last_stall_line=line or 0,
                    last_stall_ts=ts,
                    interval_s=self.interval(),
                    before=list(self._busy),
                )
            ep.last_stall_line, ep.last_stall_ts = line or 0, ts
            ep.n_lines += 1
            ep.max_running = max(ep.max_running, int(running or 0))
            ep.max_waiting = max(ep.max_waiting, int(waiting or 0))
            ep.confirmed = ep.confirmed or (stalled and ts is not None)
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

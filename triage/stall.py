"""The one stall rule, shared by probes, ``watch`` and the log post-mortem.

livelock:      running >= 1 and no progress for >= threshold seconds; waiting is 0 in the
               plain #55427 signature (a pooling request stuck at max_model_len - 1 tokens)
               and >= 1 when later requests queue behind the stuck one.
stuck-waiting: waiting >= 1, running == 0, and no progress for >= threshold seconds
               (a prompt the scheduler can never admit, e.g. BERT with chunked prefill forced
               off and a budget below the prompt length, or #39734 KV capacity).
Progress means prompt_tokens_total or request_success_total moved (from /metrics), or a
non-zero prompt/generation throughput (from a log stats line). The iteration-count histogram
is deliberately not used: an engine that schedules zero tokens may still step.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

LIVELOCK = "livelock"
STUCK_WAITING = "stuck-waiting"


@dataclass(frozen=True)
class StallSample:
    ts: float
    running: Optional[float]
    waiting: Optional[float]
    counters: Optional[tuple[Optional[float], ...]] = None  # cumulative counters; change = progress
    made_progress: Optional[bool] = None  # when known directly (log throughput > 0)


@dataclass
class StallState:
    kind: Optional[str] = None  # None | livelock | stuck-waiting
    since: Optional[float] = None  # first sample of the no-progress window
    confirmed_at: Optional[float] = None  # when the threshold was crossed
    running: Optional[float] = None
    waiting: Optional[float] = None
    samples: list[StallSample] = field(default_factory=list)

    @property
    def stalled(self) -> bool:
        return self.kind is not None and self.confirmed_at is not None


def _shape(s: StallSample) -> Optional[str]:
    r, w = s.running or 0, s.waiting or 0
    if s.running is None and s.waiting is None:
        return None
    if r >= 1:
        # waiting >= 1 beside it is #55427 under load: later requests queued behind the stuck one
        return LIVELOCK
    if w >= 1 and r == 0:
        return STUCK_WAITING
    return None


class StallDetector:
    """Feed samples in time order; ``state`` says whether the engine is stalled and since when."""

    def __init__(self, threshold_s: float = 5.0) -> None:
        self.threshold_s = threshold_s
        self.state = StallState()
        self._prev: Optional[StallSample] = None

    def _progressed(self, s: StallSample) -> bool:
        if s.made_progress is not None:
            return s.made_progress
        prev = self._prev
        if prev is None or prev.counters is None or s.counters is None:
            return False
        return any(a != b for a, b in zip(prev.counters, s.counters, strict=False))

    def update(self, s: StallSample) -> StallState:
        shape = _shape(s)
        progressed = self._progressed(s)
        self._prev = s
        st = self.state
        if shape is None or progressed or shape != st.kind:
            # (re)start a window: only a sample whose shape holds and shows no progress opens one
            self.state = st = StallState()
            if shape is not None and not progressed:
                st.kind, st.since = shape, s.ts
                st.samples.append(s)
            elif shape is not None:
                # progress right now: the window can start at this sample, not before it
                st.kind, st.since = shape, s.ts
                st.samples.append(s)
            st.running, st.waiting = s.running, s.waiting
            return st
        st.samples.append(s)
        st.running, st.waiting = s.running, s.waiting
        if st.since is not None and st.confirmed_at is None and s.ts - st.since >= self.threshold_s:
            st.confirmed_at = s.ts
        return st


def classify(samples: list[StallSample], threshold_s: float) -> StallState:
    """Run the detector over a finished series and return the last state."""
    det = StallDetector(threshold_s)
    for s in samples:
        det.update(s)
    return det.state

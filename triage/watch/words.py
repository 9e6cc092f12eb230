"""How watch words an engine's state and its stall alerts: one line per sample, the alert's message (the stall named
as the catalogue names it, ``catalogue.stall_name``), the time of day."""
from __future__ import annotations

import math
from datetime import datetime
from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue import explain_stall
from triage.catalogue.stalls import stall_name as catalogue_stall_name
from triage.stall import LIVELOCK, StallState

STEP_IN_PROGRESS = "step in progress"


def hhmmss(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S")


def count_text(v: Optional[float]) -> str:
    """A gauge for a message: its whole number, or '?' when not known."""
    return "?" if v is None or not math.isfinite(v) else str(int(v))


def alert_message(
    kind: str,
    since: float,
    now: float,
    running: Optional[float],
    waiting: Optional[float],
    version: Any = None,
    expected_step_s: Optional[float] = None,
    facts: Optional[Mapping[str, Any]] = None,
) -> str:
    """The stall's one-line alert; ``facts`` (the watcher's: vllm_version, max_model_len) fill its fix's numbers."""
    r, w = count_text(running), count_text(waiting)
    mode = explain_stall(kind, version)
    head = "ENGINE STALLED" if kind == LIVELOCK else "REQUESTS STUCK WAITING"
    step = f" (one engine step should take ~{expected_step_s:.1f}s)" if (expected_step_s or 0) >= 0.5 else ""
    ver = f", vLLM {version}" if version else ", vLLM version unknown"
    fix = mode.fix(dict(facts or {}))
    return (  # named as the finding names it (catalogue.stall_name): one wording of a stall
        f"{head} since {hhmmss(since)}: {catalogue_stall_name(mode, version)}: running={r} waiting={w}, no progress "
        f"for {now - since:.0f}s{step}{ver} — {mode.now} {fix} ({', '.join(mode.refs[:2]) or mode.id})"
    )


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

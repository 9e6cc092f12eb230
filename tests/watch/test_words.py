"""triage/watch/words.py: a sample line's state and a stall alert in the catalogue's words."""
from __future__ import annotations

from triage.catalogue import explain_stall
from triage.stall import LIVELOCK, StallState, STUCK_WAITING
from triage.watch.words import STEP_IN_PROGRESS, alert_message, count_text, state_label, stall_name


def test_count_text() -> None:
    assert (count_text(None), count_text(float("nan")), count_text(2.0)) == ("?", "?", "2")


def test_the_name_follows_the_version() -> None:
    assert stall_name(LIVELOCK, "0.31.0") == explain_stall(LIVELOCK, "0.31.0").id
    assert stall_name(STUCK_WAITING) == explain_stall(STUCK_WAITING, None).id


def test_state_labels() -> None:
    assert state_label(StallState()) == ""
    waiting = StallState(kind=LIVELOCK, since=100.0, running=1, waiting=0, expected_step_s=8.0, window_s=16.0,
                         no_progress_s=3.0, threshold_s=2.0)
    assert state_label(waiting).startswith(STEP_IN_PROGRESS)


def test_the_alert_names_the_mode_the_fix_and_the_gauges() -> None:
    msg = alert_message(LIVELOCK, 100.0, 110.0, 1.0, 0.0, "0.31.0", 2.0)
    mode = explain_stall(LIVELOCK, "0.31.0")
    assert msg.startswith("ENGINE STALLED since ") and "running=1 waiting=0" in msg and "for 10s" in msg
    assert mode.fix() in msg and "vLLM 0.31.0" in msg and "~2.0s" in msg
    assert alert_message(STUCK_WAITING, 100.0, 104.0, None, 1.0).startswith("REQUESTS STUCK WAITING")

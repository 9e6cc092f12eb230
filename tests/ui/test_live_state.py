"""The checklist's "stalled now": the live stall rule over a few /metrics samples, on recorded real pages.

The pages are the lab's 0.31.0 livelock server's, recorded (tests/fixtures/real/0.31.0-tiny-qwen3-livelock:
metrics-idle.txt on an idle server, metrics-livelock-9s.txt 9 s into a livelock), replayed through the one
HTTP client; the clock is the test's, so a 3.5 s watch takes no time.
"""
from __future__ import annotations

import pytest

from tests.sources import replay
from triage.http import VllmClient
from ui.services import Services, Target

URL = "http://vllm.test:8000"


def _live(metrics: str | None, temp_db: str):  # type: ignore[no-untyped-def]
    t = replay.livelock_metrics(metrics)
    clock = replay.Clock()
    return Services(temp_db).live_state(Target(URL, "m", 256), client=VllmClient(URL, transport=t), clock=clock,
                                        sleep=clock.sleep)


@pytest.mark.parametrize("metrics, verdict, words", [
    pytest.param("metrics-livelock-9s.txt", "stalled", "ENGINE STALLED", id="hung-0.31.0"),
    pytest.param("metrics-idle.txt", "not stalled", "running 0, waiting 0", id="idle"),
    pytest.param(None, "cannot judge", "no /metrics samples to judge by", id="metrics-refused"),
])
def test_live_state(metrics, verdict, words, temp_db) -> None:  # type: ignore[no-untyped-def]
    got = _live(metrics, temp_db)
    assert got.verdict == verdict, got
    assert words in got.message, got.message


def test_no_url_cannot_judge(temp_db) -> None:  # type: ignore[no-untyped-def]
    got = Services(temp_db).live_state(Target(cmdline="vllm serve m"))
    assert got.verdict == "cannot judge" and "no server URL" in got.message

"""The checklist's "stalled now": the live stall rule over a few /metrics samples, on recorded real pages.

The pages are the lab's 0.31.0 livelock server's, recorded (tests/fixtures/real/0.31.0-tiny-qwen3-livelock:
metrics-idle.txt on an idle server, metrics-livelock-9s.txt 9 s into a livelock), replayed through the one
HTTP client; the clock is the test's, so a 3.5 s watch takes no time.
"""
from __future__ import annotations

import httpx
import pytest

from tests.sources import replay
from triage.http import VllmClient
from ui.services import Services, Target

URL = "http://vllm.test:8000"


class Clock:
    def __init__(self) -> None:
        self.t = 1_795_986_000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


def _live(metrics: str | None, temp_db: str):  # type: ignore[no-untyped-def]
    overrides = {} if metrics else {("GET", "/metrics"): httpx.Response(503, text="Service Unavailable")}
    t = replay.transport("0.31.0-tiny-qwen3-livelock", metrics or "metrics-idle.txt", overrides=overrides)
    clock = Clock()
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

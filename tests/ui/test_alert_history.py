"""The Engine stats page's alert history, fed by the real Watcher on /metrics pages recorded from the 0.31.0
livelock server (tests/fixtures/real/0.31.0-tiny-qwen3-livelock/metrics-*.txt): an episode stays listed after
it clears, with its end, how it ended and the samples around it."""
from __future__ import annotations

from pathlib import Path

import httpx

from triage.recurrence import CLIENT_ABORT, ended_words
from triage.watch import Watcher
from ui.services.stats import HISTORY_KEY, _episode_history

D031 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"


def test_an_episode_stays_listed_after_it_clears() -> None:
    w = Watcher("http://127.0.0.1:9", interval=1.0, stall_s=5.0, client=httpx.Client())
    session: dict = {}
    samples: list = []
    seq = ["after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6 + ["after-abort"] + ["idle"] * 20
    seen = []
    for i, name in enumerate(seq):
        tick = w.observe((D031 / f"metrics-{name}.txt").read_text(), 1000.0 + i)
        samples.extend(tick.samples)
        del samples[:-15]  # the live series scrolls on (the page keeps 900)
        seen.append([dict(e) for e in _episode_history(session, list(w.alerts), samples, tick.ts)])
    w.close()
    assert seen[5] == [] and seen[6][0]["end"] is None and seen[6][0]["ended"] == ended_words(None)
    [ep] = seen[-1]  # twenty ticks after it cleared, and its samples long scrolled out of the series
    assert (ep["kind"], ep["start"], ep["confirmed"], ep["end"]) == ("livelock", 1001.0, 1006.0, 1010.0)
    assert ep["ended"] == ended_words(CLIENT_ABORT)  # the watcher's reading (recurrence.ended_by), in its words
    assert ep["evidence"] and all(991.0 <= r["time"].timestamp() <= 1013.0 for r in ep["evidence"])
    assert 1 in [r["running"] for r in ep["evidence"]]  # the stalled request is in its evidence
    assert HISTORY_KEY in session

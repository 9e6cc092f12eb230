"""Issue 33 (deliver 6): no stall verdict from the observer's own gaps. A sample that came late
(``EngineSample.observer_gap_s``, from ``triage.sample.observer_gap``) says nothing about the server: the stall
rule starts its window afresh there, watch says "cannot judge", and a stall on on-time samples is still found.

Pages: recorded from the real 0.32.0 BERT server whose long prompt waits for ever
(tests/fixtures/real/0.32.0-minilm-bert-waiting: metrics-after-requests.txt, metrics-stuck-waiting-4s.txt). The
recorded incident (a watcher starved ~90 s by a loaded host, then two samples 6 s apart) is replayed on their
clock: the pages are real, the times are the incident's.
"""
from __future__ import annotations

from pathlib import Path

import httpx

from triage.sample import EngineSample, observer_gap, server_sample
from triage.stall import STUCK_WAITING, StallDetector
from triage.store import sample_columns
from triage.vllm.metrics import parse_metrics
from triage.watch import Watcher, state_label

BERT = Path(__file__).parent / "fixtures" / "real" / "0.32.0-minilm-bert-waiting"


def page(name: str) -> str:
    return (BERT / f"metrics-{name}.txt").read_text()


def _sample(name: str, ts: float, gap: float | None = None) -> EngineSample:
    return server_sample(parse_metrics(page(name)), ts).with_(observer_gap_s=gap)


def test_observer_gap_is_late_only_past_intervals() -> None:
    assert observer_gap(10.0, 10.6, 0.5) is None
    assert observer_gap(10.0, 12.4, 0.5) is None  # a failed 1 s scrape between two is no freeze
    assert observer_gap(10.0, 100.0, 0.5) == 90.0
    assert observer_gap(10.0, 10.5, 0.5, took_s=30.0) == 30.0  # the scrape itself held up that long
    assert observer_gap(10.0, 100.0, None) is None  # no interval known (a log, a Prometheus range): not judged here
    assert observer_gap(0.0, 7.9, 2.0) is None and observer_gap(0.0, 8.5, 2.0) == 8.5


def test_two_samples_around_a_freeze_are_no_stall() -> None:
    """Without the gaps the same samples are a stuck-waiting verdict (the bug); with them, none."""
    seq = [("after-requests", 0.0, None), ("after-requests", 0.5, None), ("stuck-waiting-4s", 91.0, 90.5),
           ("stuck-waiting-4s", 97.0, 6.0)]
    blind, aware = StallDetector(2.0, learn_steps=True), StallDetector(2.0, learn_steps=True)
    for name, t, gap in seq:
        b = blind.update(_sample(name, t))
        a = aware.update(_sample(name, t, gap))
    assert b.stalled and b.kind == STUCK_WAITING  # what the observer freeze produced before
    assert not a.stalled and a.cannot_judge and a.observer_gap_s == 6.0
    assert a.evidence()["observer_gap_s"] == 6.0
    # the same stuck prompt, now sampled on time for a whole window: the stall is found
    for i in range(1, 6):
        a = aware.update(_sample("stuck-waiting-4s", 97.0 + 0.5 * i))
    assert a.stalled and a.kind == STUCK_WAITING and a.since == 97.0 and not a.cannot_judge


def test_no_step_is_learned_across_a_hole() -> None:
    det = StallDetector(2.0, learn_steps=True)
    det.note_sent(0.0)
    det.update(_sample("stuck-waiting-4s", 0.5))
    det.update(_sample("after-requests", 90.0, 89.5))  # progress, seen only after the observer's hole
    assert det.gap_step_s is None  # a 90 s "step" would stretch every later window to 180 s


def test_watch_says_cannot_judge_not_stuck_waiting() -> None:
    w = Watcher("http://127.0.0.1:9", interval=0.5, stall_s=2.0, client=httpx.Client())
    events = []
    for name, t in (("after-requests", 1000.0), ("after-requests", 1000.5), ("stuck-waiting-4s", 1091.0),
                    ("stuck-waiting-4s", 1097.0)):
        events += w.observe(page(name), t).events
    assert not any(e.event == "stalled" for e in events), [e.message for e in events]
    said = [e for e in events if e.event == "undecided"]
    assert said and "cannot judge" in said[-1].message and "6s" in said[-1].message
    assert w.summary()["observer_gaps"] == {"count": 2, "longest_s": 90.5}
    assert state_label(w._engines["0"].det.state).startswith("cannot judge")  # the sample line says so too
    # a stall sampled on time after the hole is still one
    for i in range(1, 6):
        events += w.observe(page("stuck-waiting-4s"), 1097.0 + 0.5 * i).events
    assert [e.kind for e in events if e.event == "stalled"] == [STUCK_WAITING]


def test_the_gap_survives_the_store_and_the_probe_detail() -> None:
    from triage.store.samples import sample_of

    s = _sample("stuck-waiting-4s", 5.0, 90.5)
    stored = sample_columns(s)
    assert "observer_gap_s" in stored["extra_json"]
    back = sample_of(stored)
    assert back.observer_gap_s == 90.5 and "observer_gap_s" not in back.extra and back == s
    assert EngineSample.from_dict(s.to_dict()).observer_gap_s == 90.5
    assert EngineSample.from_dict({"t": 5.0, "running": 1, "observer_gap_s": 90.5}).observer_gap_s == 90.5


QUEUE = Path(__file__).parent / "fixtures" / "real" / "queue-bound" / "0.32.0-tiny-qwen3"


def test_a_healthy_queue_bound_server_is_not_held() -> None:
    """Recorded on a real 0.32.0 lab server under 12 clients (tests/fixtures/real/queue-bound): running 1, ~35
    waiting, one request's KV blocks at every sample while thousands finish. The gauges alone read as a held
    request (the rule of issue 21); the queue being served says it is not: no alert, in watch or in the rule."""
    import json

    from triage.stall import held_gauges

    rows = [json.loads(ln) for ln in (QUEUE / "metrics.jsonl").read_text().splitlines()]
    samples = [server_sample(parse_metrics(r["page"]), r["t"]) for r in rows]
    gauges_held = sum(held_gauges(a.num_requests_running, a.kv_cache_usage_perc, b.num_requests_running,
                                  b.kv_cache_usage_perc) for a, b in zip(samples, samples[1:], strict=False))
    assert gauges_held > len(samples) // 2  # what misled the rule: the same two gauges, sample after sample
    det = StallDetector(2.0, learn_steps=True)
    assert not any(det.update(s).stalled for s in samples)
    w = Watcher("http://127.0.0.1:9", interval=0.5, stall_s=2.0, client=httpx.Client())
    events = [e for r in rows for e in w.observe(r["page"], r["t"]).events]
    assert not any(e.event == "stalled" for e in events), [e.message for e in events]
    assert json.loads((QUEUE / "traffic.json").read_text())["status_200"] > 1000  # a healthy server

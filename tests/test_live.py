"""triage.live: "stalled now" while a checklist runs is a finding of the run, stored and exported (issue 32).

The /metrics pages are the lab's 0.31.0 livelock server's, recorded (tests/fixtures/real/0.31.0-tiny-qwen3-livelock:
metrics-livelock-9s.txt 9 s into a livelock, metrics-idle.txt idle), replayed through the one HTTP client; the
clock is the test's, so the few-second watch takes no time. The checklist around it is a short run of events.
"""
from __future__ import annotations

import json

import pytest

from tests.sources import replay
from triage import events as ev_
from triage.catalogue import POOLING_LIVELOCK
from triage.http import VllmClient
from triage.events import RunEvent
from triage.export import render
from triage.findings import Finding, Status
from triage.live import CANNOT_JUDGE, NOT_STALLED, STALLED, live_of, watch_now, with_live_state
from triage.recorder import Recorder, save
from triage.store import Store
from triage.target import Target

URL = "http://vllm.test:8000"


def _look(metrics: str | None):  # type: ignore[no-untyped-def]
    def look(target: Target):  # type: ignore[no-untyped-def]
        t = replay.livelock_metrics(metrics)
        clock = replay.Clock()
        return watch_now(target, client=VllmClient(URL, transport=t), clock=clock, sleep=clock.sleep)
    return look


def _checklist(answered: bool = True) -> list[RunEvent]:
    """A checklist run's shape: started, its config (the server answered or not), a finding, done."""
    target = Target(URL, "m", 256)
    server = "ok" if answered else "error"
    return [RunEvent(ev_.STARTED, run_kind="check", target=target, meta=target.describe()),
            RunEvent(ev_.CONFIG, config={}, stored={"values": {}, "sources": {"server": server}}),
            RunEvent(ev_.FINDING, finding=Finding("server-health", Status.PASS, "/health answered 200")),
            RunEvent(ev_.DONE, message="status pass", summary="pass: /health answered 200")]


@pytest.mark.parametrize("metrics, verdict, words", [
    pytest.param("metrics-livelock-9s.txt", STALLED, "ENGINE STALLED", id="hung-0.31.0"),
    pytest.param("metrics-idle.txt", NOT_STALLED, "running 0, waiting 0", id="idle"),
    pytest.param(None, CANNOT_JUDGE, "no /metrics samples to judge by", id="metrics-refused"),
])
def test_watch_now(metrics, verdict, words) -> None:  # type: ignore[no-untyped-def]
    got = _look(metrics)(Target(URL, "m", 256))
    assert got.verdict == verdict and words in got.message, got
    assert (got.finding is not None) == (verdict == STALLED)


def test_a_stall_while_the_checklist_runs_is_a_stored_finding_in_history_and_every_export(tmp_path) -> None:
    store = Store(str(tmp_path / "t.db"))
    run_id = save(with_live_state(_checklist(), Target(URL, "m", 256), look=_look("metrics-livelock-9s.txt")),
                  Recorder(store))
    rec = store.get_run(run_id)
    stall = [f for f in rec.findings if f.check == "watch-engine-stalled"]
    assert len(stall) == 1, [f.check for f in rec.findings]
    f = stall[0]
    # the catalogue record's words (the version-gated livelock on 0.31.0), not a sentence of this module's
    assert f.status == Status.FAIL and f.failure_mode == POOLING_LIVELOCK.id
    assert POOLING_LIVELOCK.refs[0] in f.title and "stalled now, seen while the checklist ran" in f.title
    assert f.fix == POOLING_LIVELOCK.fix(None, now=True) and list(f.refs) == list(POOLING_LIVELOCK.refs)
    assert f.evidence["facts"]["vllm.version"] == "0.31.0"
    # the run's status and summary say it (a summary agrees with its status)
    assert rec.run.status == "fail" and rec.run.summary.startswith("fail: "), rec.run.summary
    assert live_of(rec.run.meta).verdict == STALLED
    for fmt in ("md", "html"):
        text = render(rec, fmt).decode()
        assert POOLING_LIVELOCK.refs[0] in text and "stalled now, seen while the checklist ran" in text, fmt
    doc = json.loads(render(rec, "json"))
    assert any(x["check"] == "watch-engine-stalled" and x["failure_mode"] == POOLING_LIVELOCK.id
               for x in doc["findings"])


@pytest.mark.parametrize("metrics, answered", [
    pytest.param("metrics-idle.txt", True, id="idle-server"),
    pytest.param("metrics-livelock-9s.txt", False, id="server-did-not-answer"),
])
def test_no_stall_no_finding(tmp_path, metrics, answered) -> None:  # type: ignore[no-untyped-def]
    store = Store(str(tmp_path / "t.db"))
    run_id = save(with_live_state(_checklist(answered), Target(URL, "m", 256), look=_look(metrics)), Recorder(store))
    rec = store.get_run(run_id)
    assert [f.check for f in rec.findings] == ["server-health"]
    assert rec.run.status == "pass" and rec.run.summary == "pass: /health answered 200"
    live = live_of(rec.run.meta)
    assert (live.verdict if live else None) == (NOT_STALLED if answered else None)

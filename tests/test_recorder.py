"""Saving is an observer: the Recorder writes what the engine yields, and an interrupted run keeps its past."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.engine import CheckEvent
from triage.findings import Finding, Status
from triage.recorder import Recorder, record
from triage.store import Store
from triage.target import Target


def test_record_stamps_writes_and_closes(tmp_path: Path):
    store = Store(str(tmp_path / "t.db"))
    key = "sk-abcdefgh-0123456789"
    target = Target("http://h:1", "m", 256, api_key=key)
    f = Finding("x", Status.WARN, f"saw {key}")
    events = [CheckEvent("started", target=target, meta=target.describe()), CheckEvent("finding", finding=f),
              CheckEvent("config", config={}, stored={"values": {}}), CheckEvent("done", summary="s")]
    out = list(record(events, Recorder(store)))
    assert {e.run_id for e in out} == {out[0].run_id} and out[0].run_id is not None
    rec = store.get_run(out[0].run_id)
    assert rec.run.status == "warn" and rec.run.summary == "s" and rec.target.truncation == target.truncation
    assert key not in rec.findings[0].title  # the target's key is a secret for every write


def test_an_engine_exception_closes_the_run_with_what_came_before(tmp_path: Path):
    store = Store(str(tmp_path / "t.db"))

    def engine():
        yield CheckEvent("started", target=Target(cmdline="vllm serve m"))
        yield CheckEvent("finding", finding=Finding("a", Status.FAIL, "first"))
        raise RuntimeError("source crashed")

    seen = []
    with pytest.raises(RuntimeError):
        for ev in record(engine(), Recorder(store)):
            seen.append(ev)
    rec = store.get_run(seen[0].run_id)
    assert [f.title for f in rec.findings] == ["first"] and rec.run.status == "fail"
    assert rec.run.summary.startswith("interrupted: RuntimeError") and rec.run.finished_at is not None

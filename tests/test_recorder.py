"""Saving is an observer: the Recorder writes what the engine yields, and an interrupted run keeps its past."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.checklist import CheckEvent
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
    assert [f.title for f in rec.findings] == ["first"]  # what came before stays …
    assert rec.run.status == "interrupted"  # … but an unfinished run has no verdict (issue 32: never PASS)
    assert rec.run.summary.startswith("interrupted: RuntimeError") and rec.run.finished_at is not None


def test_a_page_stopped_mid_run_closes_it_as_interrupted_not_pass(tmp_path: Path):
    """A dashboard page stopped while it walks the checklist closes the stream (GeneratorExit at the page's
    ``for``): the run is interrupted, not left running and not PASS for what passed before the stop."""
    store = Store(str(tmp_path / "t.db"))

    def engine():
        yield CheckEvent("started", target=Target(cmdline="vllm serve m"))
        yield CheckEvent("finding", finding=Finding("a", Status.PASS, "first"))
        yield CheckEvent("finding", finding=Finding("b", Status.FAIL, "never seen"))
        yield CheckEvent("done", summary="pass: first")

    stream = record(engine(), Recorder(store))
    run_id = next(stream).run_id
    next(stream)
    stream.close()  # what Python does to the page's generator when Streamlit stops the script
    rec = store.get_run(run_id)
    assert rec.run.status == "interrupted" and rec.run.finished_at is not None
    assert [f.title for f in rec.findings] == ["first"] and rec.run.summary.startswith("stopped before the end")


def test_a_consumer_closing_after_done_keeps_the_verdict(tmp_path: Path):
    store = Store(str(tmp_path / "t.db"))
    events = [CheckEvent("started", target=Target(cmdline="vllm serve m")),
              CheckEvent("finding", finding=Finding("a", Status.WARN, "w")), CheckEvent("done", summary="warn: w")]
    stream = record(events, Recorder(store))
    run_id = [next(stream) for _ in range(3)][0].run_id
    stream.close()
    rec = store.get_run(run_id)
    assert rec.run.status == "warn" and rec.run.summary == "warn: w"

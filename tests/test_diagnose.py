"""One Diagnose = one run: the checklist (on recorded real responses) and the log post-mortem of the same server's
recorded log, folded into one run with one verdict; nothing reported twice, one started and one done."""
from __future__ import annotations

from pathlib import Path

from tests.sources import replay
from triage import events as ev_
from triage.diagnose import diagnose_events
from triage.checklist import CheckOptions
from triage.recorder import Recorder, save
from triage.store import Store
from triage.target import Target

LOG = (replay.REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log").read_text()


def test_checklist_and_post_mortem_are_one_run(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    target = Target(url="http://vllm.test:8000", log_text=LOG, truncation=256)
    events = list(diagnose_events(target, options=CheckOptions(local_gpu=False),
                                  transport=replay.transport("0.31.0-tiny-qwen3-livelock")))
    kinds = [e.kind for e in events]
    assert kinds.count(ev_.STARTED) == 1 and kinds[0] == ev_.STARTED and kinds[-1] == ev_.DONE
    assert kinds.count(ev_.DONE) == 1 and events[0].run_kind == "diagnose"
    checks = [(e.finding.check, e.finding.title) for e in events if e.finding is not None]
    assert len(checks) == len(set(checks))  # nothing twice
    names = {c for c, _ in checks}
    assert "pooling-livelock-risk" in names  # the checklist's
    assert any(c.startswith("log-") for c in names)  # the post-mortem's
    assert any(e.kind == ev_.SAMPLES for e in events)  # the log's stats series

    run_id = save(iter(events), Recorder(store))
    rec = store.get_run(run_id or 0)
    assert rec is not None and rec.run.kind == "diagnose" and rec.run.status == "fail"
    assert rec.run.summary.startswith("fail: ")
    assert len(rec.findings) == len(checks)


def test_a_blocking_cores_events_come_as_they_come() -> None:
    """The probes' events reach the face while the probe run goes (issue 32: they came all at the end): the core
    below waits until the consumer has seen its first event, which it could not if events were held to the end."""
    import threading

    from triage.diagnose import _streamed
    from triage.events import RunEvent

    seen_first = threading.Event()

    def core(*, on_event) -> None:  # type: ignore[no-untyped-def]
        on_event(RunEvent(ev_.PROBE_STARTED, probe="conformance/one"))
        assert seen_first.wait(10), "the first event was not delivered while the core ran"
        on_event(RunEvent(ev_.PROBE_VERDICT, probe="conformance/one", data={"outcome": "ok", "time_to_verdict_s": 0.2}))

    it = _streamed(core)
    first = next(it)
    assert first.kind == ev_.PROBE_STARTED
    seen_first.set()
    assert [e.kind for e in it] == [ev_.PROBE_VERDICT]


def test_a_cores_failure_comes_after_its_events() -> None:
    from triage.diagnose import _streamed
    from triage.events import RunEvent

    def core(*, on_event) -> None:  # type: ignore[no-untyped-def]
        on_event(RunEvent(ev_.PROBE_STARTED, probe="p"))
        raise RuntimeError("server went away")

    got = []
    try:
        for ev in _streamed(core):
            got.append(ev.kind)
    except RuntimeError as e:
        assert "went away" in str(e)
    else:
        raise AssertionError("no error")
    assert got == [ev_.PROBE_STARTED]


def test_progress_lines() -> None:
    from triage.diagnose import progress_line
    from triage.events import RunEvent
    from triage.findings import Finding, Status

    assert progress_line(RunEvent(ev_.PROBE_STARTED, probe="vectors/x")) == "probe vectors/x started"
    assert progress_line(RunEvent(ev_.PROBE_VERDICT, probe="vectors/x",
                                  data={"outcome": "ok", "time_to_verdict_s": 1.25})) == "probe vectors/x: ok (1.2 s)"
    assert progress_line(RunEvent(ev_.FINDING, finding=Finding("x", Status.FAIL, "bad"))) == "FAIL: bad"
    assert progress_line(RunEvent(ev_.PROBE_SAMPLE, probe="p")) is None


def test_cli_diagnose_gives_the_stored_runs_verdict(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """`python -m triage diagnose URL --log-file F`: one stored run of kind diagnose, progress as it comes, and the
    verdict and fix the report (and the page) give for that run. The server's answers are the recorded 0.31.0
    livelock server's (no live look, no probes: a replayed checklist has no engine behind it)."""
    import json

    import triage.diagnose as diagnose
    from triage import cli
    from triage.catalogue import POOLING_LIVELOCK
    from triage.export import render

    real = diagnose.diagnose_events

    def replayed(target, **kw):  # type: ignore[no-untyped-def]
        return real(target, options=CheckOptions(local_gpu=False),
                    transport=replay.transport("0.31.0-tiny-qwen3-livelock"), **kw)

    monkeypatch.setattr(diagnose, "diagnose_events", replayed)
    log = tmp_path / "server.log"
    log.write_text(LOG)
    db = str(tmp_path / "t.db")
    code = cli.main(["diagnose", "http://vllm.test:8000", "--log-file", str(log), "--truncate", "256",
                     "--db", db, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "fail"
    rec = Store(db).get_run(doc["run_id"])
    assert rec.run.kind == "diagnose" and Store(db).count_runs() == 1
    from triage.export.json_ import to_document
    from triage.headline import document_verdict, record_verdict

    want = record_verdict(rec)  # the one verdict: the stored run's and its report document's are the same
    report = document_verdict(to_document(rec))
    assert (want.status, want.headline, want.fix, want.blocks) == (report.status, report.headline, report.fix,
                                                                   report.blocks)
    assert doc["verdict"] == {"status": want.status, "headline": want.headline, "fix": want.fix}
    assert POOLING_LIVELOCK.refs[0] in doc["verdict"]["headline"]
    md = render(rec, "md").decode()
    assert "**Verdict: FAIL**" in md and want.headline.replace("`", "")[:60] in md.replace("\\", "")
    assert [b["code"] for b in doc["fix_blocks"]] == [b.code for b in want.blocks]

    code = cli.main(["diagnose", "http://vllm.test:8000", "--log-file", str(log), "--db", db])
    out = capsys.readouterr().out
    assert code == 1 and out.index("-- ") < out.index("verdict: FAIL: ")  # progress first, then the verdict
    assert f"run {doc['run_id'] + 1}: fail" in out

"""The probe runner without a database, and the Recorder as its observer (an unreachable target: no server needed)."""
from __future__ import annotations

from triage.probes import PROBE_SETS, SETS, outcome_status, run_probes
from triage.store import Store
from triage.target import Target
from triage.lab.server import free_port


def test_runs_without_a_store():
    res = run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0), "conformance")
    assert res.run_id is None and [f.check for f in res.findings] == ["probe-target"]


def test_a_store_records_the_run(tmp_path):
    store = Store(str(tmp_path / "t.db"))
    res = run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0), "conformance", store=store)
    rec = store.get_run(res.run_id)
    assert rec.run.kind == "probe" and rec.run.status == "error" and rec.run.finished_at is not None
    assert [f.check for f in rec.findings] == ["probe-target"] and rec.target.truncation.tokens == 256


def test_registries_agree():
    assert {p.id for p in PROBE_SETS} == set(SETS)
    assert [p.id for p in PROBE_SETS if p.can_hang] == ["rerank-seed", "seed"]
    assert outcome_status("livelock") == "fail" and outcome_status("ok") == "pass"
    assert outcome_status("never-seen") == "unknown"

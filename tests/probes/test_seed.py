"""The seed matrix: its cases, and its findings from probe outcomes recorded on real servers."""
from __future__ import annotations

import copy

from triage.catalogue import ENGINE_STALL, POOLING_LIVELOCK, STUCK_WAITING
from triage.catalogue.stalls import stall_name
from triage.findings import Status
from triage.probes.seed import matrix_finding, seed_cases, seed_findings

from .recorded import outcome_from_record, probe_record


def test_matrix_cases() -> None:
    cases = seed_cases(256)
    names = [c.name for c in cases]
    assert len(cases) == 13 and len(set(names)) == 13
    assert "seed-short-long-t256" in names and "seed-short-long-t255" in names and "seed-long-t-1" in names
    conc = [c for c in cases if c.concurrency > 1]
    assert len(conc) == 1 and conc[0].inputs == ("SHORT", "LONG") and conc[0].truncate_prompt_tokens == 256
    assert [c.name for c in seed_cases(256, only=["*-t255"])] == [n for n in names if n.endswith("-t255")]


def _rec(name: str, trunc: int = 256):
    o = outcome_from_record(probe_record(name))
    o.extra["truncate_prompt_tokens"] = trunc
    return o


def test_livelock_findings_cite_55427_with_evidence() -> None:
    lock, ok = _rec("livelock-031-short-long-t256"), _rec("ok-032-short-long-t256", 255)
    fs = seed_findings([lock, ok], 256, "0.31.0")
    by = {f.check: f for f in fs}
    live = by["probe-livelock"]
    assert live.status == Status.FAIL and live.refs == list(POOLING_LIVELOCK.refs)
    assert live.evidence["samples"] and live.evidence["time_to_verdict_s"] <= 10
    assert live.evidence["recovery"]["recovered"] is True
    assert "0.32.0" in live.fix and "max_model_len - 1" in live.fix
    assert by["probe-recovery"].status == Status.PASS
    m = by["probe-matrix"]
    assert m.status == Status.FAIL and m.evidence["workaround_ok"] is True and "passes" in m.title


def test_a_stall_on_a_version_with_the_fix_is_not_55427() -> None:
    lock = _rec("livelock-031-short-long-t256")
    [live] = [f for f in seed_findings([lock], 256, "0.32.0") if f.check == "probe-livelock"]
    assert live.failure_mode == ENGINE_STALL.id and live.refs == list(ENGINE_STALL.refs)
    assert POOLING_LIVELOCK.refs[0] not in live.refs and live.fix == ENGINE_STALL.fix(now=True)


def test_stuck_waiting_is_not_blamed_on_55427() -> None:
    stuck = _rec("stuck-waiting-032-bert-long-t256")
    fs = seed_findings([stuck], 256, "0.32.0")
    checks = {f.check: f for f in fs}
    assert "probe-stuck-waiting" in checks and checks["probe-stuck-waiting"].status == Status.FAIL
    assert stall_name(STUCK_WAITING) in checks["probe-stuck-waiting"].title  # the catalogue's words: not the livelock
    assert checks["probe-livelock"].status == Status.PASS  # no livelock claimed
    assert POOLING_LIVELOCK.refs[0] not in checks["probe-stuck-waiting"].refs


def test_all_ok_matrix_passes() -> None:
    ok = _rec("ok-032-short-long-t256")
    fs = seed_findings([ok], 256, "0.32.0")
    assert {f.check: f.status for f in fs} == {"probe-livelock": Status.PASS, "probe-matrix": Status.PASS}


def test_failed_recovery_is_its_own_finding() -> None:
    lock = _rec("livelock-031-short-long-t256")
    lock.recovery = copy.deepcopy(lock.recovery)
    lock.recovery.update(recovered=False, gauges_zero_at_s=None)
    fs = seed_findings([lock], 256, "0.31.0")
    rec = [f for f in fs if f.check == "probe-recovery"]
    assert len(rec) == 1 and rec[0].status == Status.FAIL


def test_workaround_hang_is_reported() -> None:
    lock = _rec("livelock-031-short-long-t256", 255)
    f = matrix_finding([lock], 256, "0.31.0")
    assert f.evidence["workaround_ok"] is False and "does NOT pass" in f.title


def test_client_truncation_adds_its_row() -> None:
    names = [c.name for c in seed_cases(256, client_truncation=200)]
    assert len(names) == 17 and "seed-short-long-t200" in names
    assert len(seed_cases(256, client_truncation=255)) == 13  # already a row
    assert len(seed_cases(256, client_truncation=300)) == 13  # > max_model_len: the server rejects it anyway

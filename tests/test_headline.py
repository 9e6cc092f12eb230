"""triage.headline: the one run headline that the exports' verdict and the dashboard's banner both read."""
from __future__ import annotations

from triage.findings import Finding, Status
from triage.headline import run_headline


def _f(check: str, status: Status) -> Finding:
    return Finding(check, status, f"{check} title")


def test_no_findings_leave_the_status_to_the_caller() -> None:
    h = run_headline([])
    assert (h.status, h.counts, h.diagnosis, h.worst_needing_attention, h.tally) == ("", {}, None, None, "")


def test_worst_status_tally_most_severe_first_and_the_first_worst_finding() -> None:
    fs = [_f("a", Status.PASS), _f("b", Status.WARN), _f("c", Status.FAIL), _f("d", Status.FAIL)]
    h = run_headline(fs)
    assert h.status == "fail"
    assert list(h.counts.items()) == [("fail", 2), ("warn", 1), ("pass", 1)]
    assert h.tally == "2 fail · 1 warn · 1 pass"
    assert [f.check for f in h.needs_attention] == ["c", "d", "b"]
    assert h.worst_needing_attention is fs[2] and h.diagnosis is None


def test_the_differential_leads_and_dicts_read_the_same() -> None:
    fs = [_f("vllm-version", Status.FAIL), _f("diagnosis-hang-running", Status.WARN), _f("x", Status.PASS)]
    for given in (fs, [f.to_dict() for f in fs]):
        h = run_headline(given)
        lead = h.diagnosis
        assert lead is not None
        assert (lead.check if isinstance(lead, Finding) else lead["check"]) == "diagnosis-hang-running"
        assert h.status == "fail"


def test_a_passing_diagnosis_does_not_lead() -> None:
    assert run_headline([_f("diagnosis-hang-running", Status.PASS)]).diagnosis is None

"""The differential's naming rule (triage.differential.judge), as a table, and diagnose() end to end.

The rule's table weighs invented candidates (records made here with fixed clues): the rule is a pure function
of the weights, so a recorded server adds nothing to it; the recorded real cases are in
tests/catalogue/test_diagnosis_cases.py.
"""
from __future__ import annotations

import pytest

from triage.catalogue import FailureMode
from triage.catalogue.symptoms import Case, Clue, Weight
from triage.differential import Weighed, diagnose, judge, merged_facts, shown_symptoms
from triage.findings import Finding, Status

FOR, FOR_D = Weight("for", "for"), Weight("for", "for!", decisive=True)
AG, AG_D = Weight("against", "against"), Weight("against", "against!", decisive=True)


def _w(mid: str, *ws: Weight) -> Weighed:
    return Weighed(FailureMode(id=mid, title=mid.upper(), mechanism=""), ws)


@pytest.mark.parametrize("cands, named, standing, out", [
    pytest.param([_w("a", FOR_D), _w("b", AG_D)], "a", ["a"], ["b"], id="proven-and-other-ruled-out"),
    pytest.param([_w("a", FOR_D), _w("b")], "a", ["a", "b"], [], id="proven-beside-one-nothing-speaks-for"),
    pytest.param([_w("a", FOR_D), _w("b", AG)], "a", ["a", "b"], [], id="proven-beside-one-only-weighed-against"),
    pytest.param([_w("a", FOR_D), _w("b", FOR)], None, ["a", "b"], [], id="proven-beside-one-with-a-for"),
    pytest.param([_w("a", FOR_D), _w("b", FOR_D)], None, ["a", "b"], [], id="two-proven"),
    pytest.param([_w("a", FOR_D, AG_D), _w("b", FOR)], None, ["b"], ["a"], id="proven-and-ruled-out-is-out"),
    pytest.param([_w("a", FOR), _w("b", AG_D)], None, ["a"], ["b"], id="only-one-left-but-not-proven"),
    pytest.param([_w("a"), _w("b")], None, ["a", "b"], [], id="no-evidence-one-of"),
    pytest.param([_w("a", AG_D), _w("b", AG_D)], None, [], ["a", "b"], id="all-ruled-out"),
    pytest.param([_w("a", FOR_D)], "a", ["a"], [], id="single-candidate-proven"),
    pytest.param([_w("a", FOR)], None, ["a"], [], id="single-candidate-not-proven"),
    pytest.param([_w("a"), _w("b", FOR), _w("c", FOR_D, FOR)], None, ["c", "b", "a"], [], id="order-for-first"),
])
def test_naming_rule(cands: list[Weighed], named: str | None, standing: list[str], out: list[str]) -> None:
    j = judge(cands)
    assert (j.named.mode.id if j.named else None) == named
    assert [c.mode.id for c in j.standing] == standing
    assert [c.mode.id for c in j.ruled_out] == out


def test_merged_facts_later_wins_and_none_is_missing() -> None:
    fs = [Finding("probe-livelock", Status.FAIL, "x", {"facts": {"a": 1, "b": 2}}),
          {"check": "log-oom", "status": "fail", "evidence": {"facts": {"a": 3, "b": None}}}]
    assert merged_facts(fs, {"c": 4}) == {"a": 3, "b": 2, "c": 4}


def test_pass_findings_and_diagnoses_show_no_symptom() -> None:
    fs = [Finding("probe-livelock", Status.PASS, "no livelock", failure_mode="pooling-livelock"),
          Finding("diagnosis-hang-running", Status.FAIL, "x", failure_mode="pooling-livelock")]
    assert shown_symptoms(fs, {}) == {}
    assert diagnose(fs, {}) == []


def test_malformed_clue_says_nothing() -> None:
    def boom(case: Case) -> Weight | None:
        raise TypeError("bad evidence")
    m = FailureMode(id="x", title="X", mechanism="", clues=(Clue("boom", boom),))
    from triage.differential import weigh
    assert weigh(m, Case()).weights == ()


def _doc(findings: list[Finding]) -> dict:
    return {"run": {"finished_at": "2026-12-01T00:00:00", "status": "fail", "summary": "13 probes"},
            "findings": [f.to_dict() for f in findings]}


def test_report_headline_is_the_diagnosis_and_a_one_of_shows_its_experiments() -> None:
    """The recorded 0.31.0 hang of one case (tests/fixtures/real/probes/) through the seed set's findings."""
    from tests.catalogue.test_diagnosis_cases import _matrix_outcomes, _recorded_probe
    from triage.export.view import verdict
    from triage.probes.seed import matrix_finding, seed_findings

    fs = seed_findings([_recorded_probe("livelock-031-short-long-t256", 256)], 256, "0.31.0")
    one_of = diagnose(fs, {})
    head = verdict(_doc([*fs, *one_of])).headline
    assert head.startswith(one_of[0].title) and "To tell them apart: " in head and "Upgrade" not in head
    named = diagnose([*fs, matrix_finding(_matrix_outcomes("0.31.0"), 256, "0.31.0")], {})
    assert verdict(_doc([*fs, *named])).headline == named[0].title
    assert verdict(_doc(fs)).headline == "13 probes"  # a run stored before the differential reads as it did


# -- a cause a text reader named is not re-listed as "one of" every record of its symptom (issue 42) -------------
OVERLONG_400 = ("openai.BadRequestError: Error code: 400 - {'error': {'message': \"This model's maximum context "
                "length is 8192 tokens. However, you requested 20673 tokens in the input for embedding generation. "
                "Please reduce the length of the input.\", 'type': 'BadRequestError', 'param': None, 'code': 400}}\n")


def test_a_request_time_400_read_from_a_paste_is_no_start_up_refusal_and_no_long_one_of() -> None:
    """The reader names max_model_len from vLLM's own words: no "one of <18>" for rejected, no start-up refusal."""
    from triage.logs import analyze_log

    fs = analyze_log(OVERLONG_400).findings
    assert any(f.check == "log-max-context-length" and f.status == Status.WARN for f in fs)
    got = {d.check for d in diagnose(fs, {})}
    assert "diagnosis-startup-refusal" not in got and "diagnosis-rejected" not in got


def test_a_text_reader_keeps_the_diagnosis_when_another_record_is_weighed() -> None:
    """The rule only drops a "one of" nothing weighed: where a clue reads something the judge's answer stands."""
    f = Finding("log-max-context-length", Status.WARN, "refused", {"symptoms": ["rejected"]},
                failure_mode="max-model-len-vs-model")
    facts = {"reject.status": 400, "reject.message": "This model's maximum context length is 8192 tokens."}
    d = {x.check: x for x in diagnose([f], {}, facts)}["diagnosis-rejected"]
    listed = {c["mode"] for c in d.evidence["candidates"] if c["verdict"] != "ruled out"}
    assert "max-model-len-vs-model" in listed and "removed-flag" not in listed


def test_a_probe_finding_keeps_the_whole_one_of() -> None:
    """A probe saw the symptom; its record is the builder's first guess: every candidate stays in the "one of"."""
    f = Finding("probe-stuck-waiting", Status.FAIL, "waits", {"symptoms": ["waiting-forever"]},
                failure_mode="stuck-waiting")
    d = {x.check: x for x in diagnose([f], {})}["diagnosis-waiting-forever"]
    assert d.failure_mode == "" and {e["mode"] for e in d.evidence["experiments"]} >= {"stuck-waiting",
                                                                                         "kv-cache-too-small"}

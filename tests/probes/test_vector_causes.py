"""Wrong-vector causes told apart on responses recorded from real lab servers (issue 29; README in
tests/fixtures/real/vectors/): each recorded case names the right record, or passes when the server is healthy,
and the records' clues read the facts the findings carry (evidence["facts"]) as the differential will.
"""
from __future__ import annotations

from typing import Any

import pytest

from triage.catalogue import get
from triage.catalogue import vector_causes as vcs
from triage.catalogue.symptoms import Case
from triage.findings import Finding, Status
from triage.probes import vector_findings as vc
from triage.probes import vector_reference as vr
from triage.probes.server_facts import resolved_facts
from triage.sources.model_files import ModelPooling

from .recorded import VECTORS, recording, reply_of

JUDGED = ("vectors-dimension", "vectors-norm", "vectors-model-pooling", "vectors-reference")


def judge(name: str) -> dict[str, Finding]:
    """The vectors set's verdicts on one recording, wired as triage/probes/vectors.py wires them."""
    rec = recording(VECTORS / name / "vectors.json")
    files = ModelPooling.from_dict(rec["model_files"])
    pooling, source = rec["server_pooling"]
    resolved: dict[str, Any] = rec.get("server_resolved") or {}
    ua = (resolved.get(vcs.SERVER_USE_ACTIVATION), resolved.get(vcs.SERVER_USE_ACTIVATION_SOURCE, ""))
    return {
        "vectors-dimension": vc.check_dimension([reply_of(d) for d in rec["dimension"]], files.dimension,
                                                files.source, files=files),
        "vectors-norm": vc.check_norm(reply_of(rec["norm"]), files.normalize, files.source, ua),
        "vectors-model-pooling": vc.check_model_pooling(files, pooling, source, files.path),
        "vectors-reference": vr.check_reference(reply_of(rec["reference_server"]), rec["reference"], files,
                                                pooling, "", "py", resolved),
    }


def case_of(findings: dict[str, Finding]) -> Case:
    facts: dict[str, Any] = {}
    for f in findings.values():
        facts.update(f.evidence.get("facts") or {})
    return Case(findings=tuple(findings.values()), facts=facts)


# (recording, {check: (status, record)}) — a check not named must PASS.
CASES = [
    pytest.param("0.32.0-tiny-qwen3-st-dense-st-dense", {}, id="st-dense-applied-healthy"),
    pytest.param("0.32.0-tiny-qwen3-st-dense-leaky-st-dense-leaky",
                 {"vectors-dimension": (Status.FAIL, "st-dense-not-applied"),
                  "vectors-reference": (Status.FAIL, "st-dense-not-applied")}, id="st-dense-not-applied"),
    pytest.param("0.32.0-tiny-qwen2-bidir-bidir", {}, id="bidirectional-healthy"),
    pytest.param("0.32.0-tiny-qwen2-bidir-bidir-causal",
                 {"vectors-reference": (Status.WARN, "causal-attention-mismatch")}, id="served-causal"),
    pytest.param("0.32.0-tiny-qwen3-normalize-off", {"vectors-norm": (Status.FAIL, "pooler-normalize-off")},
                 id="normalize-off"),
    pytest.param("0.32.0-tiny-qwen3-pooling-mean", {"vectors-model-pooling": (Status.FAIL, "pooling-mismatch"),
                                                    "vectors-reference": (Status.FAIL, "pooling-mismatch")},
                 id="pooling-mean"),
    pytest.param("0.32.0-tiny-qwen3-livelock", {}, id="tiny-qwen3-healthy"),
]


@pytest.mark.parametrize(("name", "expect"), CASES)
def test_each_recorded_case_names_its_record(name: str, expect: dict[str, tuple[Status, str]]) -> None:
    got = judge(name)
    for check in JUDGED:
        f = got[check]
        status, mode = expect.get(check, (Status.PASS, f.failure_mode))
        assert (f.status, f.failure_mode) == (status, mode), (check, f.title)
        if status != Status.PASS:
            assert f.fix == get(mode).fix(_fix_cfg(f)) and f.refs == list(get(mode).refs)


def _fix_cfg(f: Finding) -> dict[str, Any]:
    facts = f.evidence.get("facts") or {}
    if f.failure_mode == "pooling-mismatch":
        return {"model_pooling": facts.get(vcs.MODEL_POOLING), "server_pooling": facts.get(vcs.SERVER_POOLING)}
    if f.failure_mode == "causal-attention-mismatch":
        return {"server_is_causal": facts.get(vcs.SERVER_IS_CAUSAL)}
    if f.failure_mode == "st-dense-not-applied" and f.check == "vectors-reference":
        return {"why": "the start-up log says 'ST projector loading failed'"}
    return {}


def _weights(mode: str, case: Case) -> list[tuple[str, bool]]:
    return [(w.direction, w.decisive) for c in get(mode).clues if (w := c.read(case)) is not None]


# (recording, the record its clues single out, records of the same symptoms their clues rule out)
CLUES = [
    pytest.param("0.32.0-tiny-qwen3-st-dense-leaky-st-dense-leaky", "st-dense-not-applied",
                 ("dimensions-not-matryoshka", "pooling-mismatch", "causal-attention-mismatch"), id="dense"),
    pytest.param("0.32.0-tiny-qwen2-bidir-bidir-causal", "causal-attention-mismatch",
                 ("pooling-mismatch", "st-dense-not-applied"), id="attention"),
    pytest.param("0.32.0-tiny-qwen3-normalize-off", "pooler-normalize-off", ("pooling-mismatch",), id="normalize"),
    pytest.param("0.32.0-tiny-qwen3-pooling-mean", "pooling-mismatch", ("causal-attention-mismatch",), id="pooling"),
]


@pytest.mark.parametrize(("name", "cause", "ruled_out"), CLUES)
def test_clues_single_out_the_cause(name: str, cause: str, ruled_out: tuple[str, ...]) -> None:
    case = case_of(judge(name))
    assert ("for", True) in _weights(cause, case), _weights(cause, case)
    for other in ruled_out:
        w = _weights(other, case)
        assert ("for", True) not in w and any(d == "against" for d, _ in w), (other, w)


@pytest.mark.parametrize("name", ["0.32.0-tiny-qwen3-st-dense-st-dense", "0.32.0-tiny-qwen2-bidir-bidir"])
def test_healthy_cases_rule_out_every_vector_cause(name: str) -> None:
    case = case_of(judge(name))
    for mode in ("st-dense-not-applied", "causal-attention-mismatch", "pooling-mismatch"):
        w = _weights(mode, case)
        assert ("against", True) in w and ("for", True) not in w, (mode, w)  # ruled out (a prior may lean for)


def test_records_declare_symptoms_clues_and_experiments() -> None:
    for mode in ("st-dense-not-applied", "causal-attention-mismatch", "pooler-normalize-off", "pooling-mismatch",
                 "nan-vectors", "missing-eos", "dimensions-not-matryoshka", "unstable-vectors"):
        m = get(mode)
        assert m.symptoms and m.clues and m.experiment and m.experiment_probe == "vectors", mode
    assert get("pooler-normalize-off").edits({"pooler_config": {"use_activation": False}})[0].serve == {
        "pooler_config": None}
    assert get("pooler-normalize-off").edits({"pooler_config": {"use_activation": False, "pooling_type": "MEAN"}})[
        0].serve == {"pooler_config": {"pooling_type": "MEAN"}}


def test_resolved_facts_from_recorded_logs_and_a_command_line() -> None:
    log = VECTORS / "0.32.0-tiny-qwen3-normalize-off" / "server.log"
    if not log.exists():
        pytest.skip("no recorded log")
    got = resolved_facts(log.read_text(), None, "log")
    assert got[vcs.SERVER_USE_ACTIVATION] is False and "source=user" in got[vcs.SERVER_USE_ACTIVATION_SOURCE]
    bidir = resolved_facts((VECTORS / "0.32.0-tiny-qwen2-bidir-bidir-causal" / "server.log").read_text(), None)
    assert bidir[vcs.SERVER_IS_CAUSAL] is True
    leaky = resolved_facts((VECTORS / "0.32.0-tiny-qwen3-st-dense-leaky-st-dense-leaky" / "server.log").read_text(),
                           None)
    assert leaky[vcs.SERVER_ST_PROJECTOR_FAILED] is True
    cmd = resolved_facts(None, "vllm serve m --pooler-config '{\"use_activation\": false}' "
                               "--hf-overrides '{\"is_causal\": true}'")
    assert cmd[vcs.SERVER_USE_ACTIVATION] is False and cmd[vcs.SERVER_IS_CAUSAL] is True
    assert resolved_facts(None, "vllm serve m --pooler-config 'not json'") == {}


# (recording, the record every diagnosis names; None: healthy, no diagnosis at all)
DIAGNOSES = [
    pytest.param("0.32.0-tiny-qwen3-st-dense-st-dense", None, id="st-dense-applied-healthy"),
    pytest.param("0.32.0-tiny-qwen3-st-dense-leaky-st-dense-leaky", "st-dense-not-applied", id="st-dense-dropped"),
    pytest.param("0.32.0-tiny-qwen2-bidir-bidir", None, id="bidirectional-healthy"),
    pytest.param("0.32.0-tiny-qwen2-bidir-bidir-causal", "causal-attention-mismatch", id="served-causal"),
    pytest.param("0.32.0-tiny-qwen3-normalize-off", "pooler-normalize-off", id="normalize-off"),
    pytest.param("0.32.0-tiny-qwen3-pooling-mean", "pooling-mismatch", id="pooling-mean"),
    pytest.param("0.32.0-tiny-qwen3-livelock", None, id="tiny-qwen3-healthy"),
]


@pytest.mark.parametrize(("name", "cause"), DIAGNOSES)
def test_the_differential_names_the_recorded_cause(name: str, cause: str | None) -> None:
    from triage.differential import diagnose
    got = diagnose(list(judge(name).values()))
    assert [d.failure_mode for d in got] == ([cause] * len(got) if cause else []), [(d.check, d.title) for d in got]
    assert bool(got) == bool(cause)

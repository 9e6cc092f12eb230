"""Finding.of: the one way a catalogue record becomes a finding (refs always; fix and mechanism when it is bad)."""
from __future__ import annotations

import pytest

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING, get
from triage.findings import Finding, Status


@pytest.mark.parametrize(("status", "told"), [
    pytest.param(Status.FAIL, True, id="fail-tells-the-fix"),
    pytest.param(Status.WARN, True, id="warn-tells-the-fix"),
    pytest.param(Status.PASS, False, id="pass-no-fix"),
    pytest.param(Status.UNKNOWN, False, id="unknown-no-fix"),
    pytest.param(Status.ERROR, False, id="error-no-fix"),
])
def test_the_record_gives_refs_always_and_fix_and_mechanism_when_bad(status: Status, told: bool) -> None:
    cfg = {"max_model_len": 256, "max_num_batched_tokens": 128}
    f = Finding.of(STUCK_WAITING, "budget-below-max-model-len", status, "t", {"a": 1}, cfg=cfg)
    assert f.refs == list(STUCK_WAITING.refs)
    assert f.fix == (STUCK_WAITING.fix(cfg) if told else "")
    assert f.explanation == (STUCK_WAITING.mechanism if told else "")
    assert f.failure_mode == STUCK_WAITING.id
    assert (f.check, f.status, f.title, f.evidence) == ("budget-below-max-model-len", status, "t", {"a": 1})


def test_a_verdict_may_say_more_than_the_record() -> None:
    f = Finding.of(POOLING_LIVELOCK, "pooling-livelock-risk", Status.PASS, "t", fix="do this", explanation="why")
    assert (f.fix, f.explanation, f.evidence) == ("do this", "why", {})
    f = Finding.of(POOLING_LIVELOCK, "pooling-livelock-risk", Status.FAIL, "t", explanation="")
    assert f.explanation == "" and f.fix == POOLING_LIVELOCK.fix({})


def test_failure_mode_blank_leaves_it_to_the_id_declaration() -> None:
    mode = get("reranker-overrides-missing")
    assert Finding.of(mode, "vllm-version", Status.WARN, "t", failure_mode="").failure_mode == ""  # declares none
    assert Finding.of(mode, "rerank-deployment", Status.WARN, "t", failure_mode="").failure_mode == mode.id


def test_the_evidence_is_the_callers_own() -> None:
    ev = {"x": 1}
    assert Finding.of(STUCK_WAITING, "log-stuck-waiting", Status.FAIL, "t", ev).evidence is ev

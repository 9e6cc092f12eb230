"""The classify set's verdict on /classify answers recorded from real 0.32.0 lab servers of the tiny 3-label
classifier (tests/fixtures/real/rerank/README.md, 'Score semantics'): softmax probabilities pass; raw logits
(the server's default use_activation false) warn scores-are-logits with its fix."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage import differential as dx
from triage.catalogue import get
from triage.catalogue import rerank_clues as k
from triage.http import Reply
from triage.findings import Status
from triage.probes.classify import check_classify
from triage.probes.rerank import log_facts

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"


def ex(folder: str, name: str) -> Reply:
    d = json.loads((REC / folder / f"{name}.json").read_text())
    return Reply(d["request"]["method"], d["request"]["path"], d["request"]["body"], d["status"], d["body"])


def verdict(folder: str):
    return check_classify(*(ex(folder, f"classify-{v}") for v in ("default", "false", "true", "activation-false")))


def test_healthy_classifier_probs_are_softmax() -> None:
    f = verdict("0.32.0-classify")
    assert f.status == Status.PASS and "softmax" in f.title
    facts = f.evidence["facts"]
    assert facts[k.CLS_USE_ACTIVATION] is True and facts[k.CLS_NUM] == 3 and facts[k.CLS_SUM_ERROR] < k.SUM_TOL
    assert f.evidence["activation_false_ignored"] is True  # the old spelling is not read by 0.32.0
    assert dx.diagnose([f]) == []  # nothing shown on a healthy server


@pytest.mark.parametrize("folder", [pytest.param("0.32.0-classify-logits", id="pooler-config-use-activation-false")])
def test_logits_by_default_name_scores_are_logits(folder: str) -> None:
    if not (REC / folder).exists():
        pytest.skip(f"{folder} not recorded")
    f = verdict(folder)
    assert f.status == Status.WARN and f.failure_mode == "scores-are-logits"
    assert f.evidence["facts"][k.CLS_USE_ACTIVATION] is False
    assert f.fix == get("scores-are-logits").fix({"num_classes": 3})
    assert log_facts((REC / folder / "server.log").read_text())[k.POOLER_ACTIVATION_SOURCE] == "user"
    d = dx.diagnose([f])
    assert [x.failure_mode for x in d] == ["scores-are-logits"]


def test_not_a_classifier_is_unknown_not_a_verdict() -> None:
    nf = Reply("POST", "/classify", {}, 404, {"detail": "Not Found"})
    f = check_classify(nf, nf, nf)
    assert f.status == Status.UNKNOWN and f.evidence["facts"][k.CLASSIFY_OK] is False


def test_recorded_cli_documents_of_both_profiles() -> None:
    """What `triage probe --set classify --format json` printed against each real server (this branch's code)."""
    def by(folder: str) -> dict:
        doc = json.loads((REC / folder / "probe-classify.json").read_text())
        return {f["check"]: f for f in doc["findings"]}
    healthy, logits = by("0.32.0-classify"), by("0.32.0-classify-logits")
    assert healthy["classify-semantics"]["status"] == "pass" and not any(c.startswith("diagnosis-") for c in healthy)
    assert logits["classify-semantics"]["status"] == "warn"
    assert logits["diagnosis-scores-not-probabilities"]["failure_mode"] == "scores-are-logits"

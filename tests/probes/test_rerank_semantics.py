"""Score semantics on answers recorded from real 0.32.0 lab servers (issue 29; tests/fixtures/real/rerank/README.md).

Each recorded case names its record: flat scores with the overrides given are rerank-scores-flat (not
reranker-overrides-missing), cosines of a reranker served without overrides are reranker-overrides-missing,
a healthy reranker passes; without the facts that tell them apart the finding says "one of", and the
experiment (the same pairs with use_activation false) run on the recording names the right one.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from triage.catalogue import get
from triage.catalogue import rerank_clues as k
from triage.catalogue.symptoms import SCORES_FLAT, Case
from triage.http import Reply
from triage.findings import Status
from triage.lab.rerank_models import RANKING_CASES
from triage.probes import rerank_findings as rc
from triage.probes.rerank import log_facts

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"


def ex(folder: str, name: str) -> Reply:
    d = json.loads((REC / folder / f"{name}.json").read_text())
    return Reply(d["request"]["method"], d["request"]["path"], d["request"]["body"], d["status"], d["body"])


def scores(folder: str, name: str) -> Optional[list[float]]:
    x = ex(folder, name)
    sc = rc.rerank_scores(x)
    return [sc[i] for i in range(len(x.request["documents"]))] if sc else None  # type: ignore[index]


def ranking_cases(folder: str) -> list[dict[str, Any]]:
    """The recorded ranking-<i>-default answers as the ranking probe's cases (relevant document first)."""
    return [{"query": q, "documents": [rel, *others], "scores": scores(folder, f"ranking-{i}-default"), "error": None}
            for i, (q, rel, others) in enumerate(RANKING_CASES)]


def log_of(folder: str) -> dict[str, Any]:
    return log_facts((REC / folder / "server.log").read_text())


def test_flat_scores_with_the_overrides_are_the_zero_head_not_the_missing_overrides() -> None:
    folder = "0.32.0-rerank-flat"
    n = len(RANKING_CASES)
    act = rc.check_activation([scores(folder, f"ranking-{i}-default") for i in range(n)],
                              [scores(folder, f"ranking-{i}-false") for i in range(n)],
                              [scores(folder, f"ranking-{i}-true") for i in range(n)])
    assert act.status == Status.PASS  # sigmoid applied: 0.5 is a probability, of a zero logit
    facts = {**log_of(folder), **act.evidence["facts"], k.SERVED_TASK: "classify"}
    assert facts[k.OVERRIDES]["classifier_from_token"] == ["No", "Yes"]
    assert facts[k.RAW_RANGE] == [0.0, 0.0] and facts[k.USE_ACTIVATION] is True
    f = rc.check_ranking(ranking_cases(folder), None, True, facts)
    assert f.status == Status.FAIL and f.failure_mode == "rerank-scores-flat"
    assert f.fix == get("rerank-scores-flat").fix({"hf_overrides": facts[k.OVERRIDES]})
    assert "['No', 'Yes']" in f.fix


def test_cosines_without_overrides_are_the_missing_overrides() -> None:
    folder = "0.32.0-rerank-no-overrides"
    full = ex(folder, "rerank")
    sc = rc.rerank_scores(full)
    assert sc is not None
    facts = log_of(folder)
    assert facts[k.OVERRIDES] == {}
    case = {"query": full.request["query"], "documents": [full.request["documents"][i] for i in (1, 0, 2)],
            "scores": [sc[i] for i in (1, 0, 2)]}
    f = rc.check_ranking([case], None, False, facts)
    assert f.status == Status.FAIL and f.failure_mode == "reranker-overrides-missing"


def test_healthy_reranker_passes_with_its_log_facts() -> None:
    folder = "0.32.0-rerank"
    full = ex(folder, "rerank")
    sc = rc.rerank_scores(full)
    assert sc is not None
    case = {"query": full.request["query"], "documents": [full.request["documents"][i] for i in (1, 0, 2)],
            "scores": [sc[i] for i in (1, 0, 2)]}
    facts = log_of(folder)
    assert facts[k.POOLER_ACTIVATION] is True and facts[k.POOLER_ACTIVATION_SOURCE] == "pooler_default"
    assert rc.check_ranking([case], None, True, facts).status == Status.PASS


def test_without_the_telling_facts_it_is_one_of_and_the_experiment_names_it() -> None:
    folder = "0.32.0-rerank-flat"
    cases = ranking_cases(folder)
    f = rc.check_ranking(cases, None, None, {})
    assert f.status == Status.FAIL and f.failure_mode == "" and "one of" in f.title
    assert set(f.evidence["candidates"]) >= {"reranker-overrides-missing", "rerank-scores-flat"}
    raw = rc.score_facts([scores(folder, f"ranking-{i}-false") for i in range(len(RANKING_CASES))], "raw")
    assert rc.check_ranking(cases, None, None, raw).failure_mode == "rerank-scores-flat"


@pytest.mark.parametrize("folder, facts, names", [
    pytest.param("0.32.0-rerank-flat", {k.SERVED_TASK: "classify"}, "rerank-scores-flat", id="flat-head"),
    pytest.param("0.32.0-rerank-no-overrides", {k.SERVED_TASK: "embed"}, "reranker-overrides-missing",
                 id="no-overrides"),
])
def test_each_record_of_scores_flat_weighs_the_recorded_case(folder: str, facts: dict, names: str) -> None:
    """The records that declare scores-flat, read on each recorded case: only the right one is not ruled out."""
    case = Case(facts={**log_of(folder), **facts})
    ids = ("reranker-overrides-missing", "rerank-scores-flat")
    flat = [m for m in (get(i) for i in ids) if SCORES_FLAT in m.symptoms]
    assert len(flat) == 2
    standing = [m.id for m in flat
                if not any(w and w.decisive and w.direction == "against" for w in (c.read(case) for c in m.clues))]
    assert standing == [names]


def test_logits_by_default_warn_scores_are_logits() -> None:
    """A table of the three answers: the default equal to use_activation false is the logits record."""
    logits, probs = [[2.1, -0.4, 0.3]], [[0.89, 0.4, 0.57]]
    f = rc.check_activation(logits, logits, probs)
    assert f.status == Status.WARN and f.failure_mode == "scores-are-logits"
    assert f.evidence["facts"][k.USE_ACTIVATION] is False
    assert rc.check_activation(probs, logits, probs).status == Status.PASS


def test_a_three_label_classifier_is_not_a_reranker_without_a_score_head() -> None:
    """The score paths' 404s (recorded on convert-classify) beside a healthy 3-label /classify: no verdict."""
    exs = {p: ex("0.32.0-rerank-convert-classify", n) for p, n in (("/rerank", "rerank"), ("/score", "score"))}
    f = rc.check_paths(exs, "http://127.0.0.1:8000", ex("0.32.0-classify", "classify-default"))
    assert f.status == Status.UNKNOWN and f.failure_mode == ""
    two = rc.check_paths(exs, "http://127.0.0.1:8000", ex("0.32.0-rerank-convert-classify", "classify"))
    assert two.status == Status.FAIL and two.failure_mode == "classify-without-score-head"

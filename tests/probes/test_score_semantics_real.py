"""Score semantics on real 0.32.0 lab servers (issue 29): flat scores with the overrides given name the zero score
head, not the overrides; the tiny 3-label classifier answers probabilities (healthy: nothing to diagnose) or, with
--pooler-config use_activation false, logits (scores-are-logits). One server per configuration, class-scoped (a
class's server stops when its tests end, so one runs at a time): three starts of ~45 s on an idle box; the probes
take seconds. Recordings of the same servers: tests/fixtures/real/rerank/0.32.0-{rerank-flat,classify,
classify-logits}/.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from lab_servers import serve
from triage.findings import Status
from triage.lab import LabServer
from triage.probes import run_probes
from triage.target import Target

pytestmark = pytest.mark.real_server
V = "0.32.0"


def _findings(srv: LabServer, sets: list[str], only: list[str] | None = None) -> dict:
    target = Target(url=srv.url, model=srv.served_model, timeout_s=60.0, log_text=srv.log_text())  # the log, given
    res = run_probes(target, sets, deadline_s=60.0, only=only)
    return {f.check: f for f in res.findings}


class TestFlatHead:
    @pytest.fixture(scope="class")
    def flat(self) -> Iterator[LabServer]:
        yield from serve(V, "tiny-qwen3-reranker", "rerank-flat", install_missing=False)

    def test_flat_scores_with_the_overrides_name_the_zero_head(self, flat: LabServer) -> None:
        f = _findings(flat, ["rerank"],
                      only=["rerank-paths", "rerank-served-task", "rerank-activation", "rerank-ranking"])
        assert f["rerank-served-task"].status == Status.PASS  # a score head serves: the overrides are there
        assert f["rerank-activation"].evidence["facts"]["rerank.raw_range"] == [0.0, 0.0]
        assert f["rerank-ranking"].status == Status.FAIL
        assert f["rerank-ranking"].failure_mode == "rerank-scores-flat", f["rerank-ranking"].title
        assert f["diagnosis-scores-flat"].failure_mode == "rerank-scores-flat"
        assert all(x.failure_mode != "reranker-overrides-missing" for x in f.values() if x.status == Status.FAIL)


class TestClassifier:
    @pytest.fixture(scope="class")
    def classifier(self) -> Iterator[LabServer]:
        yield from serve(V, "tiny-classifier", "classify", install_missing=False)

    def test_healthy_classifier_answers_probabilities_and_is_not_a_reranker(self, classifier: LabServer) -> None:
        f = _findings(classifier, ["classify", "rerank"])
        assert f["classify-semantics"].status == Status.PASS and "softmax" in f["classify-semantics"].title
        assert f["rerank-paths"].status == Status.UNKNOWN  # no score API on a 3-label head: not a verdict
        bad = [(x.check, x.status) for x in f.values() if x.status in (Status.FAIL, Status.WARN)]
        assert bad == []


class TestClassifierLogits:
    @pytest.fixture(scope="class")
    def classifier_logits(self) -> Iterator[LabServer]:
        yield from serve(V, "tiny-classifier", "classify-logits", install_missing=False)

    def test_classifier_without_activation_answers_logits(self, classifier_logits: LabServer) -> None:
        f = _findings(classifier_logits, ["classify"])
        assert f["classify-semantics"].status == Status.WARN
        assert f["classify-semantics"].evidence["facts"]["classify.use_activation"] is False
        assert f["diagnosis-scores-not-probabilities"].failure_mode == "scores-are-logits"

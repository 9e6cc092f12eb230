"""Wrong-vector causes on real 0.32.0 lab servers (issue 29): a sentence-transformers Dense layer applied (PASS)
and dropped (st-dense-not-applied), and a bidirectional decoder served causal with normalization off
(causal-attention-mismatch, pooler-normalize-off) — one server per class, stopped by PID before the next.
Only the four checks that judge these run (the healthy sweep is test_vectors_real.py's).
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from lab_servers import serve
from triage.findings import Finding, Status
from triage.lab import LabServer
from triage.probes.api import run_probes
from triage.target import Target

pytestmark = pytest.mark.real_server
ONLY = ["vectors-dimension", "vectors-norm", "vectors-model-pooling", "vectors-reference"]


def _findings(srv: LabServer) -> dict[str, Finding]:
    res = run_probes(Target(url=srv.url, model=srv.served_model, timeout_s=120.0), sets="vectors", deadline_s=120.0,
                     only=ONLY)
    return {f.check: f for f in res.findings if f.check in ONLY}


class TestDenseApplied:
    @pytest.fixture(scope="class")
    def srv(self) -> Iterator[LabServer]:
        yield from serve("0.32.0", "tiny-qwen3-st-dense", "st-dense", install_missing=False)

    def test_healthy_server_with_a_dense_layer_passes(self, srv: LabServer) -> None:
        by = _findings(srv)
        assert {c: f.status for c, f in by.items()} == dict.fromkeys(ONLY, Status.PASS), {c: f.title for c, f in
                                                                                           by.items()}
        assert by["vectors-dimension"].evidence["facts"]["vectors.dim"] == 64


class TestDenseDropped:
    @pytest.fixture(scope="class")
    def srv(self) -> Iterator[LabServer]:
        yield from serve("0.32.0", "tiny-qwen3-st-dense-leaky", "st-dense-leaky", install_missing=False)

    def test_dropped_dense_layer_is_named(self, srv: LabServer) -> None:
        by = _findings(srv)
        for check in ("vectors-dimension", "vectors-reference"):
            assert (by[check].status, by[check].failure_mode) == (Status.FAIL, "st-dense-not-applied"), by[check].title
        assert by["vectors-model-pooling"].status == Status.PASS and by["vectors-norm"].status == Status.PASS


class TestServedCausalUnnormalized:
    @pytest.fixture(scope="class")
    def srv(self) -> Iterator[LabServer]:
        yield from serve("0.32.0", "tiny-qwen2-bidir", "bidir-causal",
                         extra=["--pooler-config", '{"use_activation": false}'], install_missing=False)

    def test_attention_and_normalization_are_named(self, srv: LabServer) -> None:
        by = _findings(srv)
        ref, norm = by["vectors-reference"], by["vectors-norm"]
        assert (ref.status, ref.failure_mode) == (Status.WARN, "causal-attention-mismatch"), ref.title
        assert (norm.status, norm.failure_mode) == (Status.FAIL, "pooler-normalize-off"), norm.title
        assert by["vectors-model-pooling"].status == Status.PASS

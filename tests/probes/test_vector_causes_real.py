"""Wrong-vector causes on real 0.32.0 lab servers (issue 29): a sentence-transformers Dense layer applied (PASS)
and dropped (st-dense-not-applied), and a bidirectional decoder served causal with normalization off
(causal-attention-mismatch, pooler-normalize-off). One server per configuration (a module fixture parametrized by
configuration: pytest stops one, by PID, before it starts the next). Only the four checks that judge these run
(the healthy sweep is test_vectors_real.py's).
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
PASS = (Status.PASS, None)

# (model, profile, extra args) -> {check: (status, record or None for any)}
CONFIGS = {
    ("tiny-qwen3-st-dense", "st-dense", ()): dict.fromkeys(ONLY, PASS),
    ("tiny-qwen3-st-dense-leaky", "st-dense-leaky", ()): {
        "vectors-dimension": (Status.FAIL, "st-dense-not-applied"), "vectors-norm": PASS,
        "vectors-model-pooling": PASS, "vectors-reference": (Status.FAIL, "st-dense-not-applied")},
    ("tiny-qwen2-bidir", "bidir-causal", ("--pooler-config", '{"use_activation": false}')): {
        "vectors-dimension": PASS, "vectors-norm": (Status.FAIL, "pooler-normalize-off"),
        "vectors-model-pooling": PASS, "vectors-reference": (Status.WARN, "causal-attention-mismatch")},
}


@pytest.fixture(scope="module", params=list(CONFIGS), ids=lambda c: c[1] + ("+normalize-off" if c[2] else ""))
def config(request: pytest.FixtureRequest) -> Iterator[tuple[tuple, LabServer]]:
    model, profile, extra = request.param
    for srv in serve("0.32.0", model, profile, extra=list(extra), install_missing=False):
        yield request.param, srv


def _findings(srv: LabServer) -> dict[str, Finding]:
    target = Target(url=srv.url, model=srv.served_model, timeout_s=120.0, log_text=srv.log_text())  # the log, given
    res = run_probes(target, sets="vectors", deadline_s=120.0, only=ONLY)
    return {f.check: f for f in res.findings if f.check in ONLY}


def test_each_configuration_names_its_cause(config: tuple[tuple, LabServer]) -> None:
    key, srv = config
    by = _findings(srv)
    for check, (status, mode) in CONFIGS[key].items():
        f = by[check]
        assert f.status == status and (mode is None or f.failure_mode == mode), (check, f.status, f.title)

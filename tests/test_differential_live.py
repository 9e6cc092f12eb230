"""The experiment, run, on a real lab server (marker real_server, issue 29).

0.31.0 tiny Qwen3, livelock profile (max_model_len 256, budget 128, chunked prefill on: the session fixture
``server_031_livelock``). One seed case alone (a [SHORT, LONG] of exactly max_model_len tokens) hangs it, but a
probe cannot see chunked prefill, so the diagnosis is "one of"; with ``run_experiments`` the runner runs the
seed matrix's [SHORT, LONG] at max_model_len, max_model_len - 1 and -1 (allowed to hang) and the conformance set
(safe), and the diagnosis made again names the livelock. Without ``allow_hang`` the seed experiment is refused.
"""
from __future__ import annotations

import pytest

from triage.lab import LabServer
from triage.probes import run_probes
from triage.target import Target

pytestmark = pytest.mark.real_server


def _diag(findings: list, symptom: str = "hang-running"):  # noqa: ANN001, ANN202
    [d] = [f for f in findings if f.check == f"diagnosis-{symptom}"]
    return d


def test_one_hang_then_the_experiments_name_the_livelock(server_031_livelock: LabServer) -> None:
    res = run_probes(Target(url=server_031_livelock.url), ["seed"], allow_hang=True, stall_s=2.0, deadline_s=30.0,
                     only=["seed-short-long-t256"], run_experiments=True)
    d = _diag(res.findings)
    assert d.failure_mode == "pooling-livelock", d.evidence
    assert d.evidence["experiments_run"][0] == "seed" and "one of" in d.evidence["before_experiments"]
    ran = {o.probe: o.outcome for o in res.outcomes if o.set == "seed"}
    assert ran["seed-short-long-t255"] == "ok" and ran["seed-short-long-t256"] == "livelock"
    assert [f.check for f in res.findings][-1] == "diagnosis-hang-running"  # after the sets' own findings

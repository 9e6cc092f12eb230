"""The probe run's text output keeps the server's strings on one line (issue 22's forged-line case)."""
from __future__ import annotations

from triage.cli.probe import to_text
from triage.findings import Finding, Status
from triage.probes.api import ProbeRunResult
from triage.probes.runner import ProbeOutcome


def test_server_text_cannot_forge_a_line() -> None:
    forged = "bad\n[PASS   ] server-ok: all good\r\x1b[2J"
    result = ProbeRunResult(
        run_id=3,
        outcomes=[ProbeOutcome(probe=f"p{forged}", set="conformance", outcome="fail", time_to_verdict_s=0.1)],
        findings=[Finding(check="conformance-array-input", status=Status.FAIL, title=f"answer {forged}",
                          fix=f"do {forged}")],
        target={"url": "http://127.0.0.1:1", "model": f"m{forged}", "vllm_version": "0.31.0\n[PASS] x",
                "max_model_len": 256},
    )
    text = to_text(result)
    lines = text.splitlines()
    assert not any(ln.lstrip().startswith("[PASS") for ln in lines)
    assert "\x1b" not in text and "\r" not in text
    assert sum(1 for ln in lines if ln.startswith("[FAIL")) == 1 and text.endswith("status: fail")

"""The probe run's text output keeps the server's strings on one line (issue 22's forged-line case)."""
from __future__ import annotations

from triage.cli.probe import to_text
from triage.probes.throughput_verdict import ceiling_note
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


def test_the_sweep_prints_bench_s_units_and_the_client_s_ceiling() -> None:
    """Each step as `vllm bench serve` states it (req/s, tok/s, p50/p90/p99 ms, errors), then the ceiling line."""
    rows = [{"concurrency": 16, "requests_per_s": 396.33, "tokens_per_s": 12612.38, "p50_s": 0.0401, "p90_s": 0.0503,
             "p99_s": 0.0601, "errors": 0, "processes": 1},
            {"concurrency": 64, "requests_per_s": 509.82, "tokens_per_s": 16185.55, "p50_s": 0.1248, "p90_s": 0.1452,
             "p99_s": 0.1558, "errors": 2, "processes": 4}]
    ceiling = {"requests_per_s": 17470.7, "concurrency": 64, "processes": 4, "answer_bytes": 2955}
    ceiling["note"] = ceiling_note(ceiling)
    result = ProbeRunResult(run_id=1, outcomes=[], target={"url": "http://127.0.0.1:1", "model": "m"}, findings=[
        Finding(check="throughput", status=Status.PASS, title="up to 509.82 requests/s",
                evidence={"rows": rows, "client_ceiling": ceiling})])
    lines = [ln.strip() for ln in to_text(result).splitlines()]
    assert "C=16: 396.33 req/s, 12612.38 tok/s, p50/p90/p99 40.1/50.3/60.1 ms, errors 0" in lines
    assert "C=64: 509.82 req/s, 16185.55 tok/s, p50/p90/p99 124.8/145.2/155.8 ms, errors 2 (4 processes)" in lines
    [note] = [ln for ln in lines if "client ceiling" in ln]
    assert note.startswith("client ceiling ~17471 req/s") and "figures above 13977 req/s (0.8·N)" in note

"""The recorded log of four seed-matrix runs on a 0.31.0 livelock server (many short hangs, one at concurrency 4)."""
from __future__ import annotations

from triage.findings import Status, worst
from triage.logs import analyze_log

from tests.logs.real_logs import LOGS

SEED_MATRICES = LOGS / "0.31.0-tiny-qwen3-livelock-seed-matrices.log"


def test_many_aborted_hangs_leave_a_suspect_and_never_pass() -> None:
    a = analyze_log(SEED_MATRICES, year=2026)
    by = {f.check: f for f in a.findings}
    f = by["log-livelock-suspect"]
    assert f.status == Status.FAIL and f.evidence["preconditions_in_log"]["budget_chunks_max_model_len"] is True
    assert f.evidence["possible_duration_s"]["at_least"] == 10.0
    assert worst([x.status for x in a.findings]) == Status.FAIL
    # the concurrent hang: three running, two queued behind them (the short inputs' tokens still counted)
    assert any(s.num_requests_running == 3 and s.num_requests_waiting == 2 for s in a.samples)


def test_defaults_server_with_an_aborted_minus_1_request_is_livelock_prone_not_pass() -> None:
    """0.31.0 defaults, a -1 request aborted after 6 s: the hang left no stall-shaped line; the start-up
    lines (affected version, pooling, chunked prefill, CPU budget 2048 <= 4096) still make it a warning."""
    a = analyze_log(LOGS / "0.31.0-tiny-qwen3-defaults-defaults-031-t-1.log", year=2026)
    by = {f.check: f for f in a.findings}
    prone = by["log-livelock-prone-config"]
    pre = prone.evidence["preconditions_in_log"]
    assert (pre["max_model_len"], pre["max_num_batched_tokens"]) == (4096, 2048)
    assert pre["max_num_batched_tokens_from"].startswith("default rule")
    assert worst([f.status for f in a.findings]) == Status.WARN

"""Stall findings of the log post-mortem (issue 12), on the recorded 0.31.0 livelock log and edits of it.

The edited logs keep the recorded start-up lines and stats-line format; only the stats lines'
numbers (or the version) are changed, to state one case each.
"""
from __future__ import annotations

from triage.catalogue import ENGINE_STALL, POOLING_LIVELOCK
from triage.findings import Status, worst
from triage.logs import analyze_log

from tests.logs.real_logs import LIVELOCK_031, lines_of

STARTUP = [ln for ln in lines_of(LIVELOCK_031)[:122] if "throughput" not in ln]
STATS = ("(APIServer pid=5804) INFO 11-29 21:{m:02d}:{s:02d} [loggers.py:320] Engine 000: Avg prompt throughput: "
         "{tp} tokens/s, Avg generation throughput: 0.0 tokens/s, Running: {r} reqs, Waiting: 0 reqs, "
         "CPU KV cache usage: 0.2%, Prefix cache hit rate: 0.0%\n")


def _stats(m: int, s: int, tp: float, r: int) -> str:
    return STATS.format(m=m, s=s, tp=tp, r=r)


def _by_check(text: str) -> dict:
    a = analyze_log(text, year=2026)
    return {f.check: f for f in a.findings}


def test_single_stall_line_with_preconditions_is_a_suspect_with_its_possible_duration() -> None:
    text = "".join(STARTUP) + _stats(10, 0, 12.0, 1) + _stats(10, 10, 0.0, 1) + (
        "(APIServer pid=5804) INFO 11-29 21:11:40 [launcher.py:47] Shutting down FastAPI HTTP server.\n")
    f = _by_check(text)["log-livelock-suspect"]
    assert f.status == Status.FAIL  # the start-up lines prove every precondition
    span = f.evidence["possible_duration_s"]
    assert span == {"at_least": 10.0, "at_most": 100.0}  # 21:10:10 - 10 s .. 21:11:40
    assert "could have lasted 10-100 s" in f.title and f.refs == list(POOLING_LIVELOCK.refs)


def test_token_arithmetic_fingerprint_max_model_len_minus_1() -> None:
    # 25.5 tokens/s x 10 s = 255 = max_model_len (256) - 1: the stuck request computed all but its last token
    text = "".join(STARTUP) + _stats(10, 0, 25.5, 1) + _stats(10, 10, 0.0, 1)
    ev = _by_check(text)["log-livelock-suspect"].evidence
    assert ev["token_arithmetic"]["sum"] == 255 and ev["token_arithmetic"]["max_model_len_minus_1"] == 255
    other = "".join(STARTUP) + _stats(10, 0, 12.0, 1) + _stats(10, 10, 0.0, 1)
    assert "token_arithmetic" not in _by_check(other)["log-livelock-suspect"].evidence


def test_livelock_prone_configuration_never_passes_even_without_a_hang() -> None:
    text = "".join(STARTUP) + _stats(10, 0, 12.0, 1) + _stats(10, 10, 1.2, 0)
    a = analyze_log(text, year=2026)
    by = {f.check: f for f in a.findings}
    assert "log-livelock-suspect" not in by
    prone = by["log-livelock-prone-config"]
    assert prone.status == Status.WARN and worst([f.status for f in a.findings]) != Status.PASS
    pre = prone.evidence["preconditions_in_log"]
    assert (pre["max_model_len"], pre["max_num_batched_tokens"], pre["budget_chunks_max_model_len"]) == (256, 128, True)
    assert prone.fix == POOLING_LIVELOCK.fix(a.config)


def test_stall_on_a_version_with_the_fix_is_not_55427() -> None:
    text = "".join(STARTUP).replace("0.31.0", "0.32.0") + _stats(10, 0, 12.0, 1) + _stats(10, 10, 0.0, 1)
    by = _by_check(text)
    f = by["log-livelock-suspect"]
    assert f.failure_mode == ENGINE_STALL.id and f.refs == list(ENGINE_STALL.refs)
    assert "log-livelock-prone-config" not in by

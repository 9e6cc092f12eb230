"""Post-mortem findings from the recorded real logs (and the issue's two seed lines)."""

from __future__ import annotations

import io
import tracemalloc
from datetime import datetime, UTC

import pytest

from tests.logs.real_logs import (
    HANG_FROM_IDLE_031,
    KV_TOO_SMALL_032,
    LIVELOCK_031,
    SEED_LINES,
    STARTUP_032,
    STARTUP_BERT,
    WAITING_BERT,
)
from triage.catalogue import POOLING_LIVELOCK
from triage.findings import Status
from triage.logs import analyze_log


def _by_check(a):  # noqa: ANN001, ANN202
    return {f.check: f for f in a.findings}


def test_seed_lines_alone_give_a_livelock_suspect() -> None:
    a = analyze_log("\n".join(SEED_LINES))
    f = _by_check(a)["log-livelock-suspect"]
    assert f.status == Status.WARN  # no timestamps, no start-up lines: a suspect, not proof
    assert [x["line"] for x in f.evidence["lines"]] == [1, 2]
    assert f.evidence["lines"][1]["text"] == SEED_LINES[1]
    assert f.evidence["max_running"] == 4 and f.evidence["window"]["timestamps"] is False
    assert f.refs == list(POOLING_LIVELOCK.refs)
    assert f.fix == POOLING_LIVELOCK.fix(a.config, now=True)  # the catalogue's fix, "now" step first


def test_one_seed_line_is_enough() -> None:
    a = analyze_log(SEED_LINES[0])
    assert _by_check(a)["log-livelock-suspect"].status == Status.WARN


def test_recorded_031_livelock_log() -> None:
    a = analyze_log(LIVELOCK_031, year=2026)
    f = _by_check(a)["log-livelock-suspect"]
    # the log's own start-up lines show 0.31.0, pooling, chunked prefill: every #55427 precondition
    assert f.status == Status.FAIL
    w = f.evidence["window"]
    assert w["start"] == "2026-11-29 21:09:07" and w["ended_by"] == "silence-gap" and w["duration_s"] == 20.0
    assert f.evidence["preconditions_in_log"]["version_affected"] is True
    assert "21:09:07" in f.evidence["lines"][0]["text"] or f.evidence["first_line"] > 0
    assert a.config["vllm_version"] == "0.31.0" and a.config["max_num_batched_tokens"] == 128
    assert "log-stuck-waiting" not in _by_check(a)
    assert a.summary["access"]["by_status"]["200"] >= 5


def test_the_same_stall_line_without_startup_lines_is_a_warning() -> None:
    text = LIVELOCK_031.read_text()
    stats_part = "".join(line for line in text.splitlines(keepends=True) if "Engine 000:" in line)
    assert _by_check(analyze_log(stats_part, year=2026))["log-livelock-suspect"].status == Status.WARN


def test_recorded_bert_stuck_waiting_log() -> None:
    a = analyze_log(WAITING_BERT, year=2026)
    checks = _by_check(a)
    assert "log-livelock-suspect" not in checks
    f = checks["log-stuck-waiting"]
    assert f.status == Status.FAIL  # chunked prefill disabled and budget 128 < max_model_len 256 in the log
    assert f.evidence["window"]["start"] == "2026-11-29 21:10:15" and f.evidence["max_waiting"] == 1
    assert POOLING_LIVELOCK.refs[0] not in f.refs
    assert a.config["enable_chunked_prefill"] is False and a.config["pooling_type"] == "MEAN"


def test_hang_from_idle_leaves_no_stats_line() -> None:
    """Recorded limit: a livelock on an idle engine never logs a stats line at INFO."""
    a = analyze_log(HANG_FROM_IDLE_031, year=2026)
    f = _by_check(a)["log-engine-stats"]
    assert f.status == Status.PASS and "idle engine" in f.explanation


@pytest.mark.parametrize("path", [STARTUP_032, STARTUP_BERT], ids=["0.32.0", "bert"])
def test_healthy_startup_logs_have_no_stall(path) -> None:  # noqa: ANN001
    a = analyze_log(path, year=2026)
    stall_checks = {f.check for f in a.findings} - {"log-pooling-overrides"}  # BERT: chunked prefill asked, engine off
    assert stall_checks == {"log-engine-stats"}


def test_kv_cache_too_small_startup_error() -> None:
    if not KV_TOO_SMALL_032.exists():
        pytest.skip("recording missing")
    a = analyze_log(KV_TOO_SMALL_032, year=2026)
    f = _by_check(a)["log-kv-cache-too-small"]
    assert f.status == Status.FAIL and f.evidence["max_len"] == "4096" and f.evidence["est"] == "1920"
    assert "max-model-len" in f.fix and "1920" in f.fix
    dead = _by_check(a)["log-engine-dead"]
    assert dead.title == "EngineCore failed to start (root cause: log-kv-cache-too-small)"


def test_series_timestamps_and_units() -> None:
    a = analyze_log(LIVELOCK_031, year=2026)
    stall = next(p for p in a.samples if p.num_requests_running == 1 and not p.throughput_progress)
    assert stall.ts == datetime(2026, 11, 29, 21, 9, 7, tzinfo=UTC).timestamp()
    assert stall.kv_cache_usage_perc == pytest.approx(0.002)


def test_multi_megabyte_stream_stays_bounded() -> None:
    """The real log repeated to ~5 MB, streamed: memory does not grow with it (bench/bench_logs.py: 100 MB)."""
    text = LIVELOCK_031.read_text()
    reps = 5_000_000 // len(text)

    def lines():  # noqa: ANN202
        for _ in range(reps):
            yield from io.StringIO(text)

    tracemalloc.start()
    a = analyze_log(lines(), year=2026, max_samples=500)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert a.summary["lines"] == reps * len(text.splitlines())
    assert len(a.samples) <= 500
    assert peak < 20_000_000
    assert _by_check(a)["log-livelock-suspect"].evidence["episodes"] >= 1


def test_startup_killed_is_engine_failed_to_start() -> None:
    from tests.logs.real_logs import LOGS

    a = analyze_log(LOGS / "0.32.0-tiny-qwen3-startup-killed.log", year=2026)
    f = _by_check(a)["log-engine-dead"]
    assert f.status == Status.FAIL and f.title.startswith("EngineCore failed to start (stopped by SIGTERM")
    assert f.evidence["signal"]["name"] == "SIGTERM" and "timeout" in f.fix
    assert "log-engine-stats" not in _by_check(a)  # a server that never started: the cause, not "no stats lines"


def test_a_clean_sigterm_stop_of_a_server_that_served_is_not_an_engine_death() -> None:
    """Recorded on 0.30.0 (the release matrix): the stop logs EngineDeadError after the SIGTERM line."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "matrix" / "0.30.0" / "server.log"
    f = _by_check(analyze_log(log, year=2026))["log-engine-dead"]
    assert f.status == Status.PASS and "stopped by SIGTERM" in f.title and f.evidence["shutdown"] is True
    assert "not a failure" in f.title and not f.fix


def test_head_dim_16_crash_on_first_request() -> None:
    from tests.logs.real_logs import LOGS

    a = analyze_log(LOGS / "0.32.0-tiny-qwen3-head-dim-16.log", year=2026)
    checks = _by_check(a)
    hd = checks["log-unsupported-head-dim"]
    assert hd.status == Status.FAIL and hd.evidence["hd"] == "16" and "(16)" in hd.title
    dead = checks["log-engine-dead"]
    assert dead.title.startswith("EngineCore died") and dead.evidence["root_cause_findings"] == [
        "log-unsupported-head-dim"
    ]
    assert checks["log-http-5xx"].evidence["count"] == 1

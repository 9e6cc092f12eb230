"""Issue 21, the log post-mortem on recorded real traffic (tests/fixtures/real/client-timeouts): a production log as
collected (`docker logs -t` read times, VLLM_LOG_STATS_INTERVAL=1, --enable-log-requests) finds the episodes watch
and fleet find, names the client aborts and gives the catalogue's "#55427 with client time-outs"; on 0.32.0
nothing; at vLLM's default 10 s stats interval it says the log is too coarse and how to fix that. vLLM's long-step
line (rendered from the 0.32.0 source, tests/fixtures/source/0.32.0-shm-long-step) is a step in progress."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_watch_episodes import _fleet, _watch
from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS as MODE
from triage.findings import Status
from triage.logs import analyze_log
from triage.logs.episode_endings import RECURRING_CHECK
from triage.recurrence import CLIENT_ABORT

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CT = FIX / "real" / "client-timeouts"
V031, V032 = CT / "0.31.0-tiny-qwen3-livelock", CT / "0.32.0-tiny-qwen3-livelock"
LONG_STEP = FIX / "source" / "0.32.0-shm-long-step" / "long-step.log"


def _by_check(path: Path) -> dict[str, object]:
    return {f.check: f for f in analyze_log(path).findings}


def _watch_and_fleet(d: Path) -> tuple[int, int]:
    w, _, _ = _watch(d)
    return w.summary()["episodes"]["0"]["episodes"], _fleet(d).replicas[0].recurrence("livelock")["episodes"]


def test_031_log_finds_the_episodes_watch_and_fleet_find() -> None:
    found = _by_check(V031 / "server.log")
    f = found[RECURRING_CHECK]
    rec = f.evidence["recurrence"]  # type: ignore[attr-defined]
    n_watch, n_fleet = _watch_and_fleet(V031)
    assert abs(rec["episodes"] - n_watch) <= 1 and abs(rec["episodes"] - n_fleet) <= 1, (rec["episodes"], n_watch,
                                                                                         n_fleet)
    assert f.status == Status.FAIL and f.failure_mode == MODE.id  # type: ignore[attr-defined]
    assert f.fix == MODE.fix(now=True) and f.refs == list(MODE.refs)  # type: ignore[attr-defined]
    assert MODE.title in f.title  # type: ignore[attr-defined]
    # the client aborts are named: the requests vLLM logged as aborted, held for the client's 5 s time-out
    assert rec["client_aborts"] >= rec["episodes"] - 1 and rec["retries"] >= 5
    aborted = f.evidence["aborted_requests"]  # type: ignore[attr-defined]
    assert aborted and all(a["id"].startswith("embd-") for a in aborted)
    assert all(a["held_s"] == pytest.approx(5.0, abs=0.6) for a in aborted)
    assert all(s["ended"] == CLIENT_ABORT for s in rec["spans"])
    assert found["log-livelock-suspect"].status == Status.FAIL  # type: ignore[attr-defined]


def test_032_same_traffic_nothing() -> None:
    found = _by_check(V032 / "server.log")
    assert RECURRING_CHECK not in found and "log-livelock-suspect" not in found
    assert found["log-engine-stats"].status == Status.PASS  # type: ignore[attr-defined]


def test_the_same_hangs_at_the_default_stats_interval_say_the_log_is_too_coarse() -> None:
    """The first recording's log (tests/fixtures/real/client-timeouts/default-interval): stats every 10 s, no
    timestamps, no request lines. It cannot show a 5 s hang: the finding says so, with the fix."""
    found = _by_check(CT / "default-interval" / "0.31.0-server.log")
    assert RECURRING_CHECK not in found
    f = found["log-engine-stats"]
    assert "too coarse" in f.title  # type: ignore[attr-defined]
    assert "VLLM_LOG_STATS_INTERVAL=1" in f.fix and "docker logs -t" in f.fix  # type: ignore[attr-defined]
    assert f.evidence["resolution"]["stats_interval_s"] == 10.0  # type: ignore[attr-defined]


def test_vllm_long_step_line_is_a_step_in_progress_never_a_stall() -> None:
    found = _by_check(LONG_STEP)
    assert "log-livelock-suspect" not in found and found["log-long-step"].status == Status.PASS  # type: ignore
    assert "60 s" in found["log-long-step"].title  # type: ignore[attr-defined]
    # the same log without vLLM's line: the silence after a stall-shaped line is a suspect
    text = "".join(ln for ln in LONG_STEP.read_text().splitlines(keepends=True) if "shm_broadcast" not in ln)
    assert "log-livelock-suspect" in {f.check for f in analyze_log(text).findings}


def _without_request_lines(text: str) -> str:
    return "".join(ln for ln in text.splitlines(keepends=True) if "Added request" not in ln
                   and "Aborted request" not in ln and "Received request" not in ln and " aborted." not in ln)


@pytest.mark.parametrize("strip_prefix", [False, True], ids=["docker-timestamps", "vllm-timestamps"])
def test_031_stats_lines_alone_at_one_second_find_the_episodes(strip_prefix: bool) -> None:
    """The same log without --enable-log-requests (and without the collector's prefix: vLLM's own 1 s timestamps):
    the 1 s stats lines alone give the episodes; how each ended comes from the stats around its end."""
    import re

    text = _without_request_lines((V031 / "server.log").read_text())
    if strip_prefix:
        text = re.sub(r"(?m)^\S+Z ", "", text)
    found = {f.check: f for f in analyze_log(text, year=2026).findings}
    rec = found[RECURRING_CHECK].evidence["recurrence"]
    full = _by_check(V031 / "server.log")[RECURRING_CHECK].evidence["recurrence"]  # type: ignore[attr-defined]
    assert abs(rec["episodes"] - full["episodes"]) <= 1 and rec["client_aborts"] >= rec["episodes"] - 2
    assert found[RECURRING_CHECK].evidence["aborted_requests"] == []


def test_request_lines_read_the_same_by_the_chunked_scan_and_line_by_line(tmp_path: Path) -> None:
    """The recording without the collector's prefix (vLLM's own records, which the chunked scan reads in bulk):
    the chunked scan and the per-line reading note the same aborted requests and give the same verdicts."""
    import re

    from tests.logs.test_fast_paths import _two

    path = tmp_path / "server.log"
    path.write_text(re.sub(r"(?m)^\S+Z ", "", (V031 / "server.log").read_text()))
    chunked, by_line = _two(path)
    assert chunked == by_line
    assert chunked["summary"]["requests"]["aborted"] == 15
    assert RECURRING_CHECK in {f["check"] for f in chunked["findings"]}

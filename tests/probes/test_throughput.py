"""The throughput load test's figures and verdict, from responses recorded on a real server.

The sweep itself runs live in tests/probes/test_live.py; its recorded output beside `vllm bench serve`
is tests/fixtures/real/throughput/ (capture_throughput.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.catalogue.startup import THROUGHPUT_BOTTLENECK
from triage.findings import Status
from triage.load_client import LoadReply, Tally, prompt_tokens_of
from triage.probes.throughput import CONCURRENCY, judge, min_requests, percentile, summarize, throughput_finding

from .recorded import DIRS, reply

ROW_KEYS = {"concurrency", "requests_per_s", "tokens_per_s", "p50_s", "p95_s", "p99_s"}


def _tally(*replies: LoadReply) -> Tally:
    """A tally as the load connection fills it."""
    t = Tally()
    for r in replies:
        if r.ok:
            t.latencies.append(r.elapsed_s)
            t.tokens += r.prompt_tokens
        else:
            t.fail(r)
    return t
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "throughput"


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([0.3, 0.1, 0.2], 50) == 0.2
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


def test_defaults_are_the_issue_sweep() -> None:
    assert CONCURRENCY == (1, 4, 16, 64)
    assert min_requests(1) >= 40 and min_requests(64) >= 64 * 4


def _answer_bytes(body: dict, compact: bool) -> bytes:
    """A recorded answer as the server's bytes: FastAPI writes compact JSON; a proxy may re-indent it."""
    return json.dumps(body, separators=(",", ":") if compact else None).encode()


@pytest.mark.parametrize("compact", [True, False], ids=["server-bytes", "spaced"])
@pytest.mark.parametrize("server", DIRS)
def test_prompt_tokens_read_from_the_answer_bytes(server: str, compact: bool) -> None:
    body = reply(server, "embed-single").body
    assert prompt_tokens_of(_answer_bytes(body, compact)) == body["usage"]["prompt_tokens"] > 0
    lst = reply(server, "embed-list").body
    assert prompt_tokens_of(_answer_bytes(lst, compact)) == lst["usage"]["prompt_tokens"]
    assert prompt_tokens_of(b'{"object":"error","message":"x"}') == 0


def test_summarize_recorded_single_inputs() -> None:
    body = reply(DIRS[1], "embed-single").body
    r = LoadReply(200, 0.05, prompt_tokens_of(_answer_bytes(body, True)))
    row = summarize(4, _tally(*[r] * 4), 0.1, client_cpu_s=0.02, client_wait_s=0.01)
    assert ROW_KEYS | {"p90_s", "errors"} <= set(row) and row["errors"] == 0
    assert row["requests_per_s"] == 40.0 and row["inputs_per_s"] == 40.0 and row["ok"] == 4
    assert row["tokens_per_s"] == body["usage"]["prompt_tokens"] * 4 / 0.1
    assert row["p50_s"] == row["p90_s"] == row["p95_s"] == row["p99_s"] == 0.05
    assert row["client_cpu_percent"] == 20.0 and row["client_cpu_ms_per_request"] == 5.0
    assert row["client_busy_percent"] == 30.0


def test_summarize_counts_failures_apart() -> None:
    t = _tally(LoadReply(200, 0.1, 8), LoadReply(None, 30.0, error_kind="timeout"), LoadReply(503, 0.2))
    rows = summarize(2, t, 1.0)
    assert (rows["requests"], rows["ok"], rows["errors"], rows["tokens_per_s"], rows["p99_s"]) == (3, 1, 2, 8.0, 0.1)
    assert rows["failed"] == {"timeout": 1, "503": 1} and t.first_failure is not None
    assert t.first_failure.error_kind == "timeout"


def test_tallies_merge_over_the_wire() -> None:
    """What a worker process sends back and the parent merges: latencies, tokens, failures, the first failure."""
    a = _tally(LoadReply(200, 0.1, 8), LoadReply(200, 0.3, 9))
    b = _tally(LoadReply(200, 0.2, 7), LoadReply(500, 0.05, 0, b'{"object":"error"}'))
    merged = Tally()
    for t in (a, b):
        merged.merge(Tally.from_wire(t.to_wire()))
    assert sorted(merged.latencies) == [0.1, 0.2, 0.3] and merged.tokens == 24
    assert merged.failed == {"500": 1} and merged.requests == 4 and merged.ok == 3
    assert merged.first_failure == LoadReply(500, 0.05, 0, b'{"object":"error"}')


def _row(c: int, rps: float, **ctx: float) -> dict:
    return {"concurrency": c, "requests": 10, "ok": 10, "requests_per_s": rps, "tokens_per_s": rps * 32,
            "p50_s": 0.1, "p95_s": 0.2, "p99_s": 0.3, **ctx}


@pytest.mark.parametrize(
    "rows,status,cause",
    [
        pytest.param([_row(1, 50), _row(4, 150)], Status.PASS, None, id="still-scaling"),
        pytest.param([_row(16, 400), _row(64, 410, api_server_cpu_percent=99, engine_cpu_percent=40)],
                     Status.WARN, "api-server", id="api-server-bound-cpu"),
        pytest.param([_row(16, 400), _row(64, 410, api_server_cpu_percent=97, gpu_utilization_percent=20)],
                     Status.WARN, "api-server", id="api-server-bound-gpu-idle"),
        pytest.param([_row(16, 400), _row(64, 410, api_server_cpu_percent=60, engine_cpu_percent=100)],
                     Status.PASS, None, id="engine-bound"),
        pytest.param([_row(16, 400), _row(64, 410)], Status.PASS, None, id="flat-no-context"),
        pytest.param([_row(16, 400), _row(64, 410, api_server_cpu_percent=40, engine_cpu_percent=100,
                                              max_engine_waiting=12)], Status.WARN, "budget", id="budget-bound"),
    ],
)
def test_judge_mode_8(rows: list, status: Status, cause: str | None) -> None:
    got, why, c = judge(rows)
    assert (got, c) == (status, cause), why
    f = throughput_finding(rows)
    assert f.status == status
    if cause:
        assert f.fix == THROUGHPUT_BOTTLENECK.fix({"cause": cause})
        assert ("--api-server-count" if cause == "api-server" else "--max-num-seqs") in f.fix
        assert f.refs == list(THROUGHPUT_BOTTLENECK.refs)
        assert f.evidence["facts"] == {"throughput.cause": cause}


@pytest.mark.parametrize(
    "last",
    [
        pytest.param(_row(64, 410, client_cpu_percent=60, client_busy_percent=99, api_server_cpu_percent=30,
                          engine_cpu_percent=20), id="client-busy-server-idle"),
        # what used to read as a saturated front-end: the client's own ceiling comes first, the server is not blamed
        pytest.param(_row(64, 410, client_cpu_percent=97, api_server_cpu_percent=99, engine_cpu_percent=40),
                     id="client-and-api-server-busy"),
        pytest.param(_row(64, 900, client_cpu_percent=95, max_engine_waiting=12), id="client-busy-still-scaling"),
    ],
)
def test_a_saturated_client_is_named_never_the_server(last: dict) -> None:
    rows = [_row(16, 400), last]
    status, why, cause = judge(rows)
    assert (status, cause) == (Status.UNKNOWN, "client"), why
    assert "client was the limit" in why and "concurrency 64" in why
    f = throughput_finding(rows)
    assert f.status == Status.UNKNOWN and "client was the limit" in f.title
    assert f.fix == THROUGHPUT_BOTTLENECK.fix({"cause": "client"}) != THROUGHPUT_BOTTLENECK.fix({"cause": "api-server"})
    assert "--api-server-count" not in f.fix and "--max-num-seqs" not in f.fix and f.refs == []


def test_a_client_below_a_core_changes_nothing() -> None:
    rows = [_row(16, 400), _row(64, 410, client_cpu_percent=12, client_busy_percent=30, api_server_cpu_percent=99,
                                engine_cpu_percent=40)]
    assert judge(rows)[2] == "api-server"


def test_a_rate_near_the_client_ceiling_is_the_clients() -> None:
    """Above 0.8 of what the same client sends to a trivial local server, the figure is the client's: unknown, the
    server never blamed, the ceiling named; below it the server's own verdict stands."""
    rows = [_row(16, 400), _row(64, 410, client_cpu_percent=40, api_server_cpu_percent=99, engine_cpu_percent=40)]
    ceiling = {"requests_per_s": 500.0, "processes": 1, "concurrency": 64}
    status, why, cause = judge(rows, ceiling)
    assert (status, cause) == (Status.UNKNOWN, "client"), why
    assert "500.0 requests/s" in why and THROUGHPUT_BOTTLENECK.evidence["probe-client"] in why
    f = throughput_finding(rows, {"client_ceiling": ceiling})
    assert f.status == Status.UNKNOWN and f.refs == [] and "--api-server-count" not in f.fix
    assert f.evidence["client_ceiling"] == ceiling and "(client ceiling ~500 requests/s)" in f.title
    assert judge(rows, {**ceiling, "requests_per_s": 2000.0})[2] == "api-server"
    assert judge(rows, {"note": "client ceiling not measured: OSError: x"})[2] == "api-server"


def test_a_spread_step_is_judged_per_process() -> None:
    """Two worker processes at 120 % CPU together are 60 % each: not a saturated client."""
    rows = [_row(16, 400), _row(64, 410, client_cpu_percent=120, processes=2, api_server_cpu_percent=99,
                                engine_cpu_percent=40)]
    assert judge(rows)[2] == "api-server"
    rows[-1]["client_cpu_percent"] = 190
    assert judge(rows)[2] == "client"


def test_recorded_sweep_has_the_contract_rows() -> None:
    """The probe's finding recorded on a real 0.31.0 lab server (capture_throughput.py)."""
    p = RECORDED / "0.31.0-tiny-qwen3" / "probe.json"
    if not p.exists():
        pytest.skip("no recorded sweep")
    f = json.loads(p.read_text())
    rows = f["evidence"]["rows"]
    assert [r["concurrency"] for r in rows] == list(CONCURRENCY)
    assert all(ROW_KEYS <= set(r) and r["ok"] == r["requests"] and r["requests_per_s"] > 0 for r in rows)
    assert all(r["elapsed_s"] <= 12.0 + 30 for r in rows)
    assert "api_server_cpu_percent" in rows[-1]  # psutil context on a local server


def test_recorded_sweep_matches_vllm_bench_within_20_percent() -> None:
    """Same server, same minute: the probe's row for C against `vllm bench serve --max-concurrency C`."""
    d = RECORDED / "0.31.0-tiny-qwen3"
    if not (d / "bench-summary.json").exists():
        pytest.skip("no recorded bench run")
    rows = {r["concurrency"]: r for r in json.loads((d / "probe.json").read_text())["evidence"]["rows"]}
    bench = json.loads((d / "bench-summary.json").read_text())
    assert bench, "bench ran"
    for c, b in bench.items():
        assert b["rc"] == 0 and b["completed"] == b["num_prompts"]
        ratio = rows[int(c)]["requests_per_s"] / b["request_throughput"]
        assert 0.8 <= ratio <= 1.2, (c, ratio)

"""The throughput probe's own client, slowed on purpose: the finding names the client as the limit, not the server.

The server here is a test double: a child process replaying answers recorded from the real 0.31.0 server
(tests/fixtures/real/0.31.0-tiny-qwen3-livelock/: embed-single for POST /v1/embeddings, tokenize for /tokenize,
metrics-after-requests for /metrics) over keep-alive HTTP/1.1. Why not a real vLLM server: the behaviour under test
is the client's (a CPU-bound hook in the probe's loop saturates the client's thread while the server idles), which
needs a server that costs next to nothing per request; a real one on this 2-core box competes for the same CPU and
the test would need the heavy lock. The same probe against real servers: tests/probes/test_live.py and
bench/bench_throughput.py. It is a child process, so psutil measures its CPU apart from the client's.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from triage.catalogue.startup import THROUGHPUT_BOTTLENECK
from triage.http import ProbeClient
from triage.findings import Finding, Status
from triage import load_gen
from triage.load_client import LoadConnection, LoadTarget
from triage.probes import throughput
from triage.probes.context import ProbeContext
from triage.probes.runner import MonitorConfig

REC = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"

REPLAY = r"""
import asyncio, json, sys
rec = sys.argv[1]
def answer(name):
    body = json.dumps(json.load(open(f"{rec}/{name}.json"))["body"], separators=(",", ":")).encode()
    return (b"HTTP/1.1 200 OK\r\nserver: uvicorn\r\ncontent-length: %d\r\ncontent-type: application/json\r\n\r\n"
            % len(body) + body)
metrics = open(f"{rec}/metrics-after-requests.txt", "rb").read()
routes = {b"/v1/embeddings": answer("embed-single"), b"/tokenize": answer("tokenize"),
          b"/metrics": b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\ncontent-type: text/plain\r\n\r\n" % len(metrics)
          + metrics}
class Replay(asyncio.Protocol):
    def connection_made(self, t):
        self.t, self.buf = t, b""
    def data_received(self, d):
        self.buf += d
        while (i := self.buf.find(b"\r\n\r\n")) >= 0:
            head = self.buf[:i]
            n = next((int(h.split(b":")[1]) for h in head.lower().split(b"\r\n")
                      if h.startswith(b"content-length:")), 0)
            if len(self.buf) < i + 4 + n:
                return
            self.buf = self.buf[i + 4 + n:]
            self.t.write(routes.get(head.split(b" ")[1], b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"))
async def main():
    srv = await asyncio.get_running_loop().create_server(Replay, "127.0.0.1", 0)
    print(srv.sockets[0].getsockname()[1], flush=True)
    await srv.serve_forever()
asyncio.run(main())
"""


_replay_pid: list[int] = []


@pytest.fixture(scope="module")
def replay_url() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-c", REPLAY, str(REC)], stdout=subprocess.PIPE, text=True)
    _replay_pid[:] = [proc.pid]
    try:
        port = int(proc.stdout.readline())  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _burn(seconds: float) -> None:
    """``seconds`` of the thread's own CPU (not wall time: on a busy box the hook still costs what it says)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def _sweep(url: str, client_work: object = None, concurrency: tuple[int, ...] = (1, 4),
                 processes: int | None = None, with_ceiling: bool = True) -> Finding:
    async with ProbeClient(url) as pc:
        ctx = ProbeContext(pc, "/root/.cache/vllm-triage/lab/models/tiny-qwen3", 256, "0.31.0", MonitorConfig())
        got = [x async for x in throughput.run(ctx, concurrency=concurrency, client_work=client_work,  # type: ignore[arg-type]
                                               processes=processes, with_ceiling=with_ceiling)]
    return next(x for x in got if isinstance(x, Finding))


def test_a_slowed_client_is_named_as_the_limit(replay_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throughput, "MIN_STEP_S", 0.5)
    # 10 ms of CPU in the loop after each answer, 16 in flight: answers always wait for the client, even when the
    # replaying server is descheduled for a while on a busy box
    f = asyncio.run(_sweep(replay_url, lambda: _burn(0.01), (1, 16)))
    rows = f.evidence["rows"]
    assert all(r["ok"] == r["requests"] > 0 for r in rows)
    assert rows[-1]["client_cpu_ms_per_request"] >= 10.0  # the hook's CPU is the client's and is counted
    assert rows[-1].get("client_busy_percent", rows[-1]["client_cpu_percent"]) >= throughput.BUSY_CPU_PERCENT
    assert rows[-1]["api_server_cpu_percent"] < throughput.BUSY_CPU_PERCENT  # the replaying server idles
    assert f.status == Status.UNKNOWN and f.evidence["facts"] == {"throughput.cause": "client"}
    # the verdict's words are the catalogue record's (its evidence for a client-limited sweep), its fix the record's
    # fix for cause "client"; no server fix, no refs, and the server's own causes are not named
    assert THROUGHPUT_BOTTLENECK.evidence["probe-client"] in f.evidence["verdict"]
    assert f.explanation == f.evidence["verdict"] and "client was the limit" in f.title
    assert f.fix == THROUGHPUT_BOTTLENECK.fix({"cause": "client"}) and f.refs == []
    for cause in ("api-server", "budget"):
        assert THROUGHPUT_BOTTLENECK.fix({"cause": cause}) not in f.fix + f.explanation
    assert "front-end is the bottleneck" not in f.explanation and "batch budget" not in f.explanation


def test_rows_carry_the_recorded_answers_figures(replay_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throughput, "MIN_STEP_S", 0.2)
    f = asyncio.run(_sweep(replay_url, with_ceiling=False))
    tokens = json.loads((REC / "embed-single.json").read_text())["body"]["usage"]["prompt_tokens"]
    for r in f.evidence["rows"]:
        assert r["ok"] == r["requests"] and r["mean_input_tokens"] == tokens
        assert {"client_cpu_percent", "client_cpu_ms_per_request"} <= set(r)


def test_load_connection_caps_and_deadline(replay_url: str) -> None:
    async def go() -> tuple:
        pc = ProbeClient(replay_url, max_body_bytes=100)  # the recorded answer is ~3 kB
        small = LoadConnection(pc)
        capped = await small.post("/v1/embeddings", b"{}", 5.0)
        ok = LoadConnection(ProbeClient(replay_url))
        fine = await ok.post("/v1/embeddings", b"{}", 5.0, keep_body=True)
        again = await ok.post("/v1/embeddings", b"{}", 5.0)  # the same kept-alive connection
        missing = await ok.post("/nowhere", b"{}", 5.0)
        late = await ok.post("/v1/embeddings", b"{}", 0.0)
        ok.close()
        refused = await LoadConnection(ProbeClient("http://127.0.0.1:9")).post("/v1/embeddings", b"{}", 5.0)
        return capped, fine, again, missing, late, refused

    capped, fine, again, missing, late, refused = asyncio.run(go())
    assert capped.status is None and capped.error_kind == "too-large"
    assert fine.ok and json.loads(fine.body)["usage"]["prompt_tokens"] == fine.prompt_tokens > 0
    assert again.ok and again.body == b""  # nothing kept unless asked
    assert missing.status == 404 and not missing.ok
    assert late.status is None and late.error_kind == "timeout"
    assert refused.status is None and refused.error_kind == "refused"


def test_a_spread_step_merges_its_worker_processes(replay_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two worker processes share C=8; one merged row (every request counted once, the recorded answer's tokens),
    the client's ceiling beside the sweep, and no process left behind (the workers and the echo server)."""
    import psutil

    monkeypatch.setattr(throughput, "MIN_STEP_S", 0.3)
    monkeypatch.setattr(load_gen, "CEILING_S", 0.3)
    before = set(psutil.Process().children(recursive=True))  # the session's lab servers may already be running
    f = asyncio.run(_sweep(replay_url, concurrency=(8,), processes=2))
    (row,) = f.evidence["rows"]
    tokens = json.loads((REC / "embed-single.json").read_text())["body"]["usage"]["prompt_tokens"]
    assert row["processes"] == 2 and row["ok"] == row["requests"] >= throughput.min_requests(8)
    assert row["errors"] == 0 and row["mean_input_tokens"] == tokens
    assert row["p50_s"] <= row["p90_s"] <= row["p99_s"] and row["client_cpu_ms_per_request"] > 0
    c = f.evidence["client_ceiling"]
    assert c["processes"] == 2 and c["concurrency"] == 8 and c["failed"] == 0 and c["requests_per_s"] > 0
    assert c["answer_bytes"] == len(json.dumps(json.loads((REC / "embed-single.json").read_text())["body"],
                                               separators=(",", ":")))
    assert c["note"].startswith("client ceiling") and "are the client's" in c["note"]
    left = set(psutil.Process().children(recursive=True)) - before  # the workers and the echo server are gone
    assert not left and psutil.Process(_replay_pid[0]) in before


def test_a_failing_server_stops_every_worker_and_keeps_the_first_failure(replay_url: str) -> None:
    """A 404 on every request: each process stops at its first failure; the tally counts them by status."""
    spec = load_gen.LoadSpec(LoadTarget(replay_url), "/nowhere", b'{"input": ', 4, 5.0, 10_000, 30.0, 30.0)
    for n in (1, 2):
        r = asyncio.run(load_gen.run_load(spec, 4, n))
        assert r.processes == n and r.tally.ok == 0
        assert r.tally.failed == {"404": r.tally.requests} and 1 <= r.tally.requests <= 4
        assert r.tally.first_failure is not None and r.tally.first_failure.status == 404


def test_small_concurrency_runs_in_process() -> None:
    """No worker process below PROCESS_MIN_CONCURRENCY or on a box of few CPUs."""
    assert load_gen.processes_for(16, cpus=64) == 1
    assert load_gen.processes_for(64, cpus=2) == 1
    assert load_gen.processes_for(64, cpus=16) == 4
    assert load_gen.processes_for(1024, cpus=256) == load_gen.MAX_PROCESSES


def test_the_echo_server_answers_the_given_bytes_on_keep_alive() -> None:
    """triage.load_echo: the answer it was given, every time, on one connection; /__cpu its own CPU seconds."""
    body = (REC / "embed-single.json").read_bytes()
    echo = subprocess.Popen([sys.executable, "-m", "triage.load_echo"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert echo.stdin is not None and echo.stdout is not None
        echo.stdin.write(body)
        echo.stdin.close()
        url = f"http://127.0.0.1:{int(echo.stdout.readline())}"

        async def go() -> tuple:
            conn = LoadConnection(LoadTarget(url))
            got = [await conn.post("/v1/embeddings", b'{"input": "x"}', 5.0, keep_body=True) for _ in range(3)]
            cpu = await conn.post("/__cpu", b"", 5.0, keep_body=True)
            conn.close()
            return got, cpu

        got, cpu = asyncio.run(go())
    finally:
        echo.terminate()
        echo.wait(10)
    assert all(r.ok and r.body == body for r in got)
    assert cpu.ok and float(cpu.body) > 0

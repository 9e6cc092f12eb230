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
from triage.load_client import LoadConnection
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


@pytest.fixture(scope="module")
def replay_url() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-c", REPLAY, str(REC)], stdout=subprocess.PIPE, text=True)
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


async def _sweep(url: str, client_work: object = None, concurrency: tuple[int, ...] = (1, 4)) -> Finding:
    async with ProbeClient(url) as pc:
        ctx = ProbeContext(pc, "/root/.cache/vllm-triage/lab/models/tiny-qwen3", 256, "0.31.0", MonitorConfig())
        got = [x async for x in throughput.run(ctx, concurrency=concurrency, client_work=client_work)]  # type: ignore[arg-type]
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
    f = asyncio.run(_sweep(replay_url))
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

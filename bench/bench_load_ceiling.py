"""The load generator alone: its ceiling against a trivial local server, per concurrency and worker processes.

For each C (default 16, 64, 256) and each process count (default 1, 2, 4 and what ``processes_for(C)`` picks on this
box) it runs ``triage.load_gen.ceiling``: the throughput probe's load (closed loop, keep-alive connections, ~32-token
bodies) for --seconds against ``triage.load_echo`` answering a real 0.31.0 answer (tests/fixtures/real/
0.31.0-tiny-qwen3-livelock/embed-single.json, 2.9 kB; --answer-bytes pads its vector list to a larger size, as a
4096-dimension model's answer is ~80 kB), started and stopped by PID. Per line: req/s, the client's CPU per request,
the echo server's CPU (near 100 %: it, not the client, was the limit) and the load average.

    PYTHONPATH=. python bench/bench_load_ceiling.py [--c 16 64 256] [--processes 1 2 4] [--seconds 2]
        [--answer-bytes N]

No server, no network: loopback only. On a box of few cores the client and the echo server share them (and other
work's load moves the figures): the load average is printed beside each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage.load_client import LoadTarget  # noqa: E402
from triage.load_gen import LoadSpec, ceiling, processes_for  # noqa: E402
from triage.probes.throughput_verdict import ceiling_note  # noqa: E402

ANSWER = Path(__file__).resolve().parents[1] / "tests/fixtures/real/0.31.0-tiny-qwen3-livelock/embed-single.json"


def answer(size: int | None) -> bytes:
    """The recorded answer's bytes, its vector repeated to about ``size`` bytes when asked."""
    body = json.loads(ANSWER.read_text())["body"]
    raw = json.dumps(body, separators=(",", ":")).encode()
    if size and size > len(raw):
        vec = body["data"][0]["embedding"]
        extra = (size - len(raw)) // (len(json.dumps(vec[0])) + 1)
        body["data"][0]["embedding"] = (vec * (extra // len(vec) + 2))[: len(vec) + extra]
        raw = json.dumps(body, separators=(",", ":")).encode()
    return raw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--answer-bytes", type=int)
    a = ap.parse_args()
    body = answer(a.answer_bytes)
    spec = LoadSpec(LoadTarget("http://127.0.0.1"), "/v1/embeddings", b'{"model": "m", "input": ', 24, 30.0, 0,
                    a.seconds, a.seconds)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{cpus} CPUs; answer {len(body)} bytes; {a.seconds:g} s per figure; load average {os.getloadavg()[0]:.2f}")
    for c in a.c:
        chosen = processes_for(c)
        for n in sorted({*a.processes, chosen}):
            if n > c:
                continue
            r = asyncio.run(ceiling(spec, body, c, n, a.seconds))
            print(f"C={c:<4} processes {n}{'*' if n == chosen else ' '} {r['requests_per_s']:8.0f} req/s  client "
                  f"{r['client_cpu_ms_per_request']} ms CPU/request  echo server {r.get('echo_server_cpu_percent')} % "
                  f"CPU  failed {r['failed']}  load average {os.getloadavg()[0]:.2f}", flush=True)
        print(f"  (* processes_for({c}) on this box); {ceiling_note(r)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The load generator of the throughput probe: C requests in flight in a closed loop, each worker on a keep-alive
connection of its own (``triage.load_client``), in this process or spread over worker processes whose tallies
merge into one; and the generator's own ceiling, measured against a trivial local server (``triage.load_echo``).

Per request the loop builds the body (a prepared prefix, one text from one generator) and the connection adds the
latency and prompt tokens to a ``Tally`` (an array of floats, no object per request); a step stops when
``want`` requests completed and ``min_s`` passed, at ``budget_s``, or at its first failure.

Worker processes: one Python process sends a few thousand requests a second at most (its loop and the interpreter
lock are one core; measured 0.16 ms of CPU per request on the 2-core dev box against ``triage.load_echo``). A
server faster than that is measured with ``processes_for(C)`` processes, each with its share of the connections,
started (``python -m triage.load_gen``: the spec comes on stdin, so the API key is on no command line) and ready
before the clock starts, released together, their tallies merged; the step's time runs from the first worker's
start to the last one's end (CLOCK_MONOTONIC is one clock for all processes). A small concurrency, or a box without
cores to spare, stays in this process: no process start at all.

``ceiling`` is the generator alone: the same load (C, processes) for ``CEILING_S`` against ``triage.load_echo``
answering the server's own answer bytes, started and stopped by PID. Rates above ``CLIENT_SHARE`` of it
(triage.probes.throughput_verdict) are the client's, not the server's.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Optional

from triage.load_client import LoadConnection, LoadTarget, Tally

CEILING_S = 1.0  # the ceiling's load lasts this long
PROCESS_MIN_CONCURRENCY = 32  # below this a step always runs in this process
CONNECTIONS_PER_PROCESS = 16
MAX_PROCESSES = 8


def processes_for(concurrency: int, cpus: Optional[int] = None) -> int:
    """Worker processes for a step at ``concurrency``: 1 (this process) below PROCESS_MIN_CONCURRENCY or on a box of
    fewer than 4 CPUs (the server or its neighbours need the others: a second client process would take from them),
    else one per CONNECTIONS_PER_PROCESS connections, at most a quarter of the CPUs and MAX_PROCESSES."""
    cpus = cpus if cpus is not None else len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    if concurrency < PROCESS_MIN_CONCURRENCY or cpus < 4:
        return 1
    return max(1, min(concurrency // CONNECTIONS_PER_PROCESS, cpus // 4, MAX_PROCESSES))


def client_clock() -> tuple[float, float | None]:
    """(CPU seconds, seconds runnable but waiting for a core) of this process's threads so far: the client is the
    whole process (its threads share one interpreter lock: an NVML sampler or a dashboard's other work slows the
    probe's loop as its own work does). The wait is None where the kernel does not say (Linux:
    /proc/self/task/*/schedstat); then the CPU is the process's."""
    cpu = wait = 0
    try:
        for task in os.scandir("/proc/self/task"):
            try:
                with open(f"{task.path}/schedstat", "rb") as f:
                    c, w = f.read().split()[:2]
            except FileNotFoundError:  # a thread that ended meanwhile
                continue
            cpu += int(c)
            wait += int(w)
    except (OSError, ValueError):
        return time.process_time(), None
    return cpu / 1e9, wait / 1e9


@dataclass(frozen=True)
class LoadSpec:
    """One step's load: where, what (``head`` + a JSON string + ``}`` is a body; ``words`` per text) and its bounds."""

    target: LoadTarget
    path: str
    head: bytes
    words: int
    deadline_s: float
    want: int
    min_s: float
    budget_s: float

    def to_wire(self) -> dict[str, Any]:
        d = asdict(self)
        d["head"] = self.head.decode("utf-8")
        return d

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> LoadSpec:
        return cls(**{**d, "target": LoadTarget(**d["target"]), "head": d["head"].encode("utf-8")})


@dataclass
class LoadResult:
    """A step's merged tally, its wall time, the CPU (and wait for a core) its worker processes spent (0 / None when
    it ran in this process: the caller's own clock has it) and how many processes sent."""

    tally: Tally
    elapsed_s: float
    processes: int = 1
    worker_cpu_s: float = 0.0
    worker_wait_s: Optional[float] = None


async def run_here(spec: LoadSpec, concurrency: int, client_work: Callable[[], object] | None = None) -> LoadResult:
    """The step in this process: ``concurrency`` workers on one event loop. ``client_work`` runs after each answer
    (tests slow the client with it)."""
    from triage.load_texts import unique_texts

    tally, t0, end = await _load(spec, concurrency, unique_texts(spec.words), client_work)
    return LoadResult(tally, end - t0)


async def _load(spec: LoadSpec, concurrency: int, texts: Any,
                client_work: Callable[[], object] | None = None) -> tuple[Tally, float, float]:
    """(tally, start, end) of ``concurrency`` closed-loop workers (time.monotonic)."""
    tally = Tally()
    path, head, deadline, want, min_s, budget = (spec.path, spec.head, spec.deadline_s, spec.want, spec.min_s,
                                                 spec.budget_s)
    dumps, clock = json.dumps, time.monotonic
    stop = False
    conns = [LoadConnection(spec.target) for _ in range(concurrency)]

    async def worker(conn: LoadConnection) -> None:
        nonlocal stop
        send = conn.send
        while not stop:
            ok = await send(path, head + dumps(next(texts)).encode() + b"}", deadline, tally)
            if client_work is not None:
                client_work()
            elapsed = clock() - t0
            if not ok or elapsed >= budget or (elapsed >= min_s and len(tally.latencies) >= want):
                stop = True

    t0 = clock()
    try:
        await asyncio.gather(*(worker(c) for c in conns))
        end = clock()
    finally:
        for c in conns:
            c.close()
    return tally, t0, end


class _Workers:
    """``n`` worker processes with their share of the connections, started and ready (imports done) before ``go``."""

    def __init__(self, spec: LoadSpec, concurrency: int, n: int) -> None:
        shares = [concurrency // n + (1 if i < concurrency % n else 0) for i in range(n)]
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            for c in shares:
                p = subprocess.Popen([sys.executable, "-m", "triage.load_gen"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
                self.procs.append(p)
                want = math.ceil(spec.want * c / concurrency)
                assert p.stdin is not None
                p.stdin.write(json.dumps({"spec": {**spec.to_wire(), "want": want}, "concurrency": c}).encode()
                              + b"\n")
                p.stdin.flush()
            for p in self.procs:
                assert p.stdout is not None
                if p.stdout.readline().strip() != b"ready":
                    raise RuntimeError(f"load worker pid {p.pid} did not start (exit {p.wait(10)})")
        except BaseException:
            self.stop()
            raise

    def go(self) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write(b"go\n")
            p.stdin.flush()

    def results(self) -> list[dict[str, Any]]:
        out = []
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            p.wait(30)
            if not line:
                raise RuntimeError(f"load worker pid {p.pid} ended without a result (exit {p.returncode})")
            out.append(json.loads(line))
        return out

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


async def run_spread(spec: LoadSpec, concurrency: int, processes: int) -> LoadResult:
    """The step over ``processes`` worker processes; one merged tally."""
    workers = await asyncio.to_thread(_Workers, spec, concurrency, processes)
    try:
        workers.go()
        got = await asyncio.to_thread(workers.results)
    finally:
        workers.stop()
    tally = Tally()
    for g in got:
        tally.merge(Tally.from_wire(g["tally"]))
    waits = [g["wait_s"] for g in got]
    return LoadResult(tally, max(g["end"] for g in got) - min(g["start"] for g in got), processes,
                      sum(g["cpu_s"] for g in got), None if None in waits else sum(waits))


async def run_load(spec: LoadSpec, concurrency: int, processes: int = 1,
                   client_work: Callable[[], object] | None = None) -> LoadResult:
    """The step, in this process (``processes`` 1) or spread over worker processes."""
    if processes <= 1 or client_work is not None:
        return await run_here(spec, concurrency, client_work)
    return await run_spread(spec, concurrency, processes)


async def ceiling(spec: LoadSpec, answer: bytes, concurrency: int, processes: int = 1,
                  seconds: float = CEILING_S) -> dict[str, Any]:
    """The generator alone: ``spec``'s load at ``concurrency`` over ``processes`` for ``seconds`` against
    ``triage.load_echo`` answering ``answer`` (the body of one of the server's own answers) with as many processes
    as the client has, started here and stopped by PID (its forked children end with it). The figures: its
    requests/s, CPU per request, and the echo server's own CPU % (near 100: it, not the client, was the limit, and
    the ceiling is at least the figure; with several echo processes, the one that answered the CPU requests)."""
    echo = subprocess.Popen([sys.executable, "-m", "triage.load_echo", str(max(1, processes))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                p for p in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                            os.environ.get("PYTHONPATH")) if p)})
    try:
        assert echo.stdin is not None and echo.stdout is not None
        echo.stdin.write(answer)
        echo.stdin.close()
        port = int(echo.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        s = LoadSpec(LoadTarget(url, {}, True, spec.target.max_body_bytes), spec.path, spec.head, spec.words,
                     spec.deadline_s, 0, seconds, seconds)
        probe = LoadConnection(s.target)
        cpu0 = await _echo_cpu(probe)
        c0, w0 = client_clock()
        r = await run_load(s, concurrency, processes)
        c1, w1 = client_clock()
        cpu1 = await _echo_cpu(probe)
        probe.close()
    finally:
        echo.terminate()
        echo.wait(10)
    cpu = c1 - c0 + r.worker_cpu_s
    out: dict[str, Any] = {
        "requests_per_s": round(r.tally.ok / r.elapsed_s, 1) if r.elapsed_s > 0 else None,
        "concurrency": concurrency, "processes": processes, "answer_bytes": len(answer),
        "requests": r.tally.requests, "failed": r.tally.requests - r.tally.ok,
        "client_cpu_ms_per_request": round(1000 * cpu / r.tally.requests, 3) if r.tally.requests else None,
        "seconds": round(r.elapsed_s, 2),
    }
    if cpu0 is not None and cpu1 is not None and r.elapsed_s > 0:
        out["echo_server_cpu_percent"] = round(100 * (cpu1 - cpu0) / r.elapsed_s, 1)
    return out


async def _echo_cpu(conn: LoadConnection) -> Optional[float]:
    r = await conn.post("/__cpu", b"", 5.0, keep_body=True)
    try:
        return float(r.body) if r.ok else None
    except ValueError:
        return None


def _worker_main() -> int:
    """A worker process: spec on stdin, 'ready', wait for 'go', run, one JSON result line on stdout."""
    from triage.load_texts import unique_texts

    msg = json.loads(sys.stdin.buffer.readline())
    spec, concurrency = LoadSpec.from_wire(msg["spec"]), msg["concurrency"]
    texts = unique_texts(spec.words)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    if sys.stdin.buffer.readline().strip() != b"go":
        return 1
    c0, w0 = client_clock()
    tally, start, end = asyncio.run(_load(spec, concurrency, texts))
    c1, w1 = client_clock()
    sys.stdout.write(json.dumps({"tally": tally.to_wire(), "start": start, "end": end, "cpu_s": c1 - c0,
                                 "wait_s": None if w0 is None or w1 is None else w1 - w0}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main())

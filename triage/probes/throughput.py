"""The throughput set: a load test. A concurrency sweep (1, 4, 16, 64) of single-input requests, with
sustained load at each step, and the process-CPU and NVML context that says what capped it.

Each step keeps ``C`` requests in flight (closed loop: a worker sends its next request when the last
returns) until ``min_requests(C)`` have completed and at least ``MIN_STEP_S`` passed, or ``STEP_BUDGET_S``
ran out: enough requests for a stable rate, bounded in time. Inputs are unique (a salt per request, so the
prefix cache does not flatter the figures) and about ``INPUT_TOKENS`` tokens long, calibrated once with
the server's own token count, so a row for C compares with `vllm bench serve --backend openai-embeddings
--random-input-len 32 --max-concurrency C`.

The client measures, so it must cost the server as little as possible (on a small box they share the CPU): each
worker sends on a keep-alive connection of its own (``triage.load_client``: no httpx, no JSON decoding of the
vectors, the client's deadline and body cap kept), bodies are spliced from a prepared prefix and a text drawn from
one generator, and a request keeps only (status, latency, prompt tokens); one answer's bytes are decoded after the
step for the record. What the client still spent is in each row, so a client that capped the rate says so.

Beside `vllm bench serve` (read in vLLM 0.31.0's vllm/benchmarks/serve.py and lib/endpoint_request_func.py; bench/
bench_throughput.py runs the two interleaved on one server): the same request (one ~32-token input per POST
/v1/embeddings: the server's own usage counts are 31-33 per request on both sides), the same load (C in flight: bench
queues every request at once behind a semaphore of C, the probe keeps C workers in a closed loop), the same figure
(successful requests over the wall time from the first send to the last answer: connection set-up, ramp-up and the
draining tail inside on both sides, failures not counted; neither times its one set-up request: bench's test
request, the probe's /tokenize). What differs is the client's own CPU per request: bench's aiohttp client decodes
every answer's JSON (the whole vector) and builds a result per request, 0.6-0.9 ms at C >= 16 on the 2-core dev box,
the probe 0.1-0.2 ms. Where client and server share the cores, what a client spends the server does not get, so on
such a box the probe reads above bench by the ratio of the box's CPU per request under each (measured: 1.38x at C=16
and 1.37x at C=64 with box CPU ratios that account for them to within 2-4 %); with the server on a core of its own
(bench_throughput.py --pin: the server on CPU 0, both clients on CPU 1) the two read alike: 1.14x at C=16 and
0.98x at C=64, each within ±6 % over the pairs (2026-12-02, load average 6-7 from other work); with the
load machinery of issue 45, pinned, three interleaved rounds on a quiet box: median 1.07x at C=16 and 1.11x at C=64,
the client's ceiling 29x and 25x the server's figure (2026-12-05, bench/README.md).

Rows (the `throughput` finding's evidence ``rows``): concurrency, requests, ok, elapsed_s,
requests_per_s, inputs_per_s, tokens_per_s, p50_s, p95_s, p99_s, client_cpu_percent,
client_cpu_ms_per_request and client_busy_percent (the probe's own process), plus api_server_cpu_percent /
engine_cpu_percent (psutil, when the server runs on this host), gpu_utilization_percent (NVML, when a
GPU is visible here) and max_engine_waiting (/metrics num_requests_waiting sampled each second).
The verdict on them is catalogue mode `throughput-bottleneck` (its evidence also says when the client, not the
server, was the limit).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import urlparse

from triage.http import EMBEDDINGS_PATH, trim_for_storage
from triage.findings import Finding
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome
from triage.probes.throughput_verdict import (  # noqa: F401 - the sweep's figures and verdict, named here too
    BUSY_CPU_PERCENT,
    CONCURRENCY,
    INPUT_TOKENS,
    MIN_REQUESTS,
    MIN_STEP_S,
    PLATEAU_GAIN,
    REQUESTS_PER_WORKER,
    STEP_BUDGET_S,
    ceiling_note,
    client_limited,
    judge,
    min_requests,
    percentile,
    summarize,
    throughput_finding,
)

if TYPE_CHECKING:  # the load machinery (triage.load_gen, triage.load_client) loads when a sweep runs
    from triage.load_client import LoadReply, Tally

SET = "throughput"


class _Procs:
    """CPU of the server's processes (API server and its children) when it listens on this host."""

    def __init__(self, url: str) -> None:
        self.api: Any = None
        self.children: list[Any] = []
        self.why: str | None = None
        try:
            import psutil
        except ImportError:
            self.why = "psutil not installed"
            return
        u = urlparse(url)
        if u.hostname not in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
            self.why = "server is not on this host"
            return
        port = u.port or (443 if u.scheme == "https" else 80)
        from triage.sources.process import listening_process  # the one listener lookup (psutil)

        self.api = listening_process(port)
        if self.api is None:
            self.why = f"no local process listening on port {port}"
            return
        try:
            self.children = self.api.children(recursive=True)
        except psutil.Error as e:
            self.why = f"cannot list the children of pid {self.api.pid} ({type(e).__name__})"

    def start(self) -> None:
        for p in [self.api, *self.children]:
            if p is not None:
                try:
                    p.cpu_percent(None)
                except Exception:
                    pass

    def read(self) -> dict[str, Any]:
        if self.api is None:
            return {}
        out: dict[str, Any] = {}
        try:
            out["api_server_cpu_percent"] = round(self.api.cpu_percent(None), 1)
        except Exception:
            return {}
        eng = []
        for p in self.children:
            try:
                eng.append(p.cpu_percent(None))
            except Exception:
                pass
        if eng:
            out["engine_cpu_percent"] = round(max(eng), 1)  # the busiest of EngineCore / Worker
        return out


def _gpu_utilization() -> Optional[int]:
    try:
        from triage.sources.nvml import read_nvml

        return read_nvml()["gpus"][0].get("utilization_gpu")
    except Exception:  # no driver, no library: the context says "no GPU visible"
        return None


async def _calibrate(ctx: ProbeContext, words: int) -> int:
    """Words per text so that one input is about INPUT_TOKENS tokens for this model."""
    from triage.probes.inputs import new_salt, salted_words

    s = new_salt()
    try:
        n = await ctx.pc.token_count(ctx.model, f"{s} {salted_words(s, words)}")
    except Exception:
        return words
    if not n:
        return words
    return max(1, round(words * INPUT_TOKENS / n))


async def _step(
    ctx: ProbeContext, concurrency: int, words: int, procs: _Procs, client_work: Callable[[], object] | None = None,
    processes: int | None = None,
) -> tuple[dict[str, Any], Tally, dict[str, Any], LoadReply]:
    """One step: ``concurrency`` workers, each on a keep-alive connection of its own, send prepared bodies until the
    step's bounds (``triage.load_gen``: in this process, or over ``processes`` worker processes, by default
    ``processes_for(concurrency)``); per request only its latency and prompt tokens are kept (a failure whole).
    One answer is fetched whole before the clock starts, for the record (and the client's ceiling). ``client_work``
    runs in the loop after each answer (tests slow the client with it; the step then runs in this process)."""
    from triage.load_client import LoadConnection, LoadTarget
    from triage.load_gen import LoadSpec, client_clock, processes_for, run_load
    from triage.probes.inputs import unique_texts

    head = (json.dumps({"model": ctx.model})[:-1] + ', "input": ').encode()
    deadline = ctx.cfg.deadline_s
    text = next(unique_texts(words))
    first_request = ctx.body(text)
    one = LoadConnection(ctx.pc)
    sample = await one.post(EMBEDDINGS_PATH, head + json.dumps(text).encode() + b"}", deadline, keep_body=True)
    one.close()
    spec = LoadSpec(LoadTarget.of(ctx.pc), EMBEDDINGS_PATH, head, words, deadline, min_requests(concurrency),
                    MIN_STEP_S, STEP_BUDGET_S)
    n = processes if processes is not None else processes_for(concurrency)
    stop = False
    gpu: list[int] = []

    async def sample_gpu() -> None:
        while not stop:
            u = await asyncio.to_thread(_gpu_utilization)
            if u is None:
                return
            gpu.append(u)
            await asyncio.sleep(0.5)

    waiting: list[float] = []

    async def sample_queue() -> None:
        """The engine's own queue (/metrics num_requests_waiting): > 0 at saturation = the batch budget."""
        from triage.vllm.metrics import parse_metrics

        while not stop:
            try:
                page = parse_metrics(await ctx.pc.metrics_text())
                waiting.extend(e.num_requests_waiting or 0.0 for e in page.engines.values())
            except Exception:  # no /metrics (or --disable-log-stats: no vllm series): no queue figure
                return
            if not page.engines:
                return
            await asyncio.sleep(1.0)

    procs.start()
    cpu0, wait0 = client_clock()  # the client's own CPU (the samplers' parsing included)
    samplers = [asyncio.create_task(sample_gpu()), asyncio.create_task(sample_queue())]
    try:
        # the step ends with its last answer, not when a sampler wakes from its sleep (up to a second later)
        res = await run_load(spec, concurrency, n, client_work)
        cpu1, wait1 = client_clock()
        server = procs.read()
    finally:
        stop = True
        for task in samplers:
            task.cancel()
        await asyncio.gather(*samplers, return_exceptions=True)
    wait = (wait1 - wait0 + (res.worker_wait_s if res.processes > 1 else 0)
            if wait0 is not None and wait1 is not None and (res.processes == 1 or res.worker_wait_s is not None)
            else None)
    row = summarize(concurrency, res.tally, res.elapsed_s, cpu1 - cpu0 + res.worker_cpu_s, wait,
                    processes=res.processes)
    row.update(server)
    if gpu:
        row["gpu_utilization_percent"] = round(sum(gpu) / len(gpu), 1)
    if waiting:
        row["max_engine_waiting"] = max(waiting)
    return row, res.tally, first_request, sample


def _stored(reply: LoadReply) -> dict[str, Any]:
    """The record of one answer: its status and body (JSON when it parses, vectors trimmed), decoded after the
    measurement."""
    out: dict[str, Any] = {"status": reply.status}
    if reply.error:
        out["error"] = reply.error
    if reply.body:
        text = reply.body.decode("utf-8", "replace")
        try:
            out["body"] = trim_for_storage(json.loads(text))
        except (ValueError, RecursionError):
            out["body"] = trim_for_storage(text)
    return out


async def run(
    ctx: ProbeContext, only: Iterable[str] | None = None, concurrency: tuple[int, ...] = CONCURRENCY,
    client_work: Callable[[], object] | None = None, processes: int | None = None, with_ceiling: bool = True,
) -> AsyncIterator[ProbeOutcome | Finding]:
    """The sweep, then (``with_ceiling``) the client's own ceiling at the sweep's highest step: its load against a
    trivial local server answering this server's own answer (``triage.load_gen.ceiling``), in the finding's
    evidence beside the rows, and a rate above ``CLIENT_SHARE`` of it makes the verdict the client's."""
    procs = _Procs(ctx.pc.url)
    words = await _calibrate(ctx, 24)
    rows = []
    sample: LoadReply | None = None
    spec_of_top: tuple[int, int] | None = None
    for c in concurrency:
        row, tally, request, first = await _step(ctx, c, words, procs, client_work, processes)
        rows.append(row)
        if first.ok:
            sample = first
        if spec_of_top is None or c >= spec_of_top[0]:
            spec_of_top = (c, row["processes"])
        bad = tally.first_failure
        shown = bad or first
        yield ProbeOutcome(
            probe=f"throughput-c{c}",
            set=SET,
            outcome=OK if bad is None else HTTP_ERROR,
            description=f"{row['requests']} single-input requests, {c} in flight"
            + (f" from {row['processes']} processes" if row["processes"] > 1 else ""),
            duration_s=row["elapsed_s"],
            time_to_verdict_s=row["p50_s"],
            http_status=shown.status,
            request={"method": "POST", "path": EMBEDDINGS_PATH, "body": trim_for_storage(request)},
            response=_stored(shown),
            extra={"figures": row},
        )
        if bad is not None:
            break
    ceiling: dict[str, Any] | None = None
    if with_ceiling and sample is not None and spec_of_top is not None and client_work is None:
        ceiling = await client_ceiling(ctx, words, sample.body, *spec_of_top)
    gpu_ctx = "NVML: GPU utilization sampled every 0.5 s" if any("gpu_utilization_percent" in r for r in rows) else (
        "NVML: no GPU visible on this host"
    )
    context: dict[str, Any] = {
        "process_cpu": "psutil: API server and busiest child, % of one core over each step"
        if procs.api is not None
        else f"not measured: {procs.why}",
        "client_cpu": "the probe's process (its threads share one interpreter lock) and its worker processes: CPU "
        "% of one core over each step and ms per request; busy % adds their threads' time waiting for a core "
        "(Linux schedstat)",
        "gpu": gpu_ctx,
        "words_per_input": words,
    }
    if ceiling is not None:
        context["client_ceiling"] = ceiling
    yield throughput_finding(rows, context)


async def client_ceiling(ctx: ProbeContext, words: int, answer: bytes, concurrency: int,
                         processes: int) -> dict[str, Any]:
    """The load generator alone at ``concurrency`` over ``processes``, against a trivial local server answering
    ``answer`` (one of the server's own answers): its figures and the line that goes beside the sweep."""
    from triage.load_client import LoadTarget
    from triage.load_gen import CEILING_S, LoadSpec, ceiling

    head = (json.dumps({"model": ctx.model})[:-1] + ', "input": ').encode()
    spec = LoadSpec(LoadTarget.of(ctx.pc), EMBEDDINGS_PATH, head, words, ctx.cfg.deadline_s, 0, CEILING_S,
                    CEILING_S)
    try:
        c = await ceiling(spec, answer, concurrency, processes)
    except (OSError, RuntimeError, ValueError) as e:  # no local process could be started: said, not guessed
        return {"note": f"client ceiling not measured: {type(e).__name__}: {e}"}
    c["note"] = ceiling_note(c)
    return c

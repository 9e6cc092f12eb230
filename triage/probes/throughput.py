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
import math
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, Optional
from urllib.parse import urlparse

from triage.catalogue.startup import THROUGHPUT_BOTTLENECK
from triage.client import EMBEDDINGS_PATH, trim_for_storage
from triage.findings import Finding, Status
from triage.load_client import LoadConnection, LoadReply
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome

SET = "throughput"
CONCURRENCY = (1, 4, 16, 64)
INPUT_TOKENS = 32
MIN_STEP_S = 3.0  # at least this long at each step, so a step is not one burst
STEP_BUDGET_S = 12.0  # and never longer
MIN_REQUESTS = 40
REQUESTS_PER_WORKER = 8
PLATEAU_GAIN = 1.2  # less than +20 % requests/s for 4x the concurrency: saturated
BUSY_CPU_PERCENT = 85.0  # one process near a full core


def min_requests(concurrency: int) -> int:
    """Completed requests a step wants before it may stop (more workers, more requests)."""
    return max(MIN_REQUESTS, REQUESTS_PER_WORKER * concurrency)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def summarize(concurrency: int, replies: list[LoadReply], elapsed_s: float, client_cpu_s: float | None = None,
              client_wait_s: float | None = None, inputs_per_request: int = 1) -> dict[str, Any]:
    """Pure: one step's row from its replies, wall time and the client's own CPU seconds over the step (and its
    seconds runnable but waiting for a core, where known)."""
    ok = [x for x in replies if x.ok]
    lat = [x.elapsed_s for x in ok]
    tokens = sum(x.prompt_tokens for x in ok)
    inputs = inputs_per_request * len(ok)

    def rate(n: float) -> float | None:
        return round(n / elapsed_s, 2) if elapsed_s > 0 else None

    def p(q: float) -> float | None:
        v = percentile(lat, q)
        return round(v, 4) if v is not None else None

    row: dict[str, Any] = {
        "concurrency": concurrency,
        "requests": len(replies),
        "ok": len(ok),
        "elapsed_s": round(elapsed_s, 3),
        "requests_per_s": rate(len(ok)),
        "inputs_per_s": rate(inputs),
        "tokens_per_s": rate(tokens),
        "mean_input_tokens": round(tokens / len(ok), 1) if ok else None,
        "p50_s": p(50),
        "p95_s": p(95),
        "p99_s": p(99),
    }
    if client_cpu_s is not None and elapsed_s > 0:
        row["client_cpu_percent"] = round(100 * client_cpu_s / elapsed_s, 1)
        if replies:
            row["client_cpu_ms_per_request"] = round(1000 * client_cpu_s / len(replies), 3)
        if client_wait_s is not None:
            row["client_busy_percent"] = round(100 * (client_cpu_s + client_wait_s) / elapsed_s, 1)
    return row


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


def client_limited(row: dict[str, Any]) -> bool:
    """The probe's own client (its process: one interpreter lock) near a full core over the step: the rate is the
    client's.
    Its demand is read where the row has it (CPU plus time runnable but waiting for a core: on a box busy with other
    work the client's thread waits, and what it waits for delays each next request as its own CPU would)."""
    c = row.get("client_busy_percent", row.get("client_cpu_percent"))
    return c is not None and c >= BUSY_CPU_PERCENT


def judge(rows: list[dict[str, Any]]) -> tuple[Status, str, Optional[str]]:
    """Mode 8 from the sweep: (status, why, cause) with cause 'client' | 'api-server' | 'budget' | None.

    First the measurement itself: the probe's client near a full core at the last step means the figures are the
    client's ceiling, not the server's: UNKNOWN, cause 'client', and the server is never blamed (whatever its
    processes did, one saturated client thread caps what it can send). Else saturated = the last step's requests/s
    grew less than PLATEAU_GAIN over the step before. Then the API server process near a full core while the
    engine's processes are not (or the GPU is idle) is the front-end bottleneck; requests waiting in the engine's
    own queue with the front-end not saturated is the batch budget; the engine busy without a queue is the hardware's
    capacity (pass, with the figure).
    """
    good = [r for r in rows if r.get("requests_per_s")]
    if good and client_limited(good[-1]):
        last = good[-1]
        server = ", ".join(
            f"{k} {v:.0f} %" for k, v in (("API server CPU", last.get("api_server_cpu_percent")),
                                          ("engine CPU", last.get("engine_cpu_percent"))) if v is not None
        )
        return Status.UNKNOWN, (
            f"the probe's own client was the limit at concurrency {last['concurrency']}: it used "
            f"{last['client_cpu_percent']:.0f} % of one core ({last.get('client_cpu_ms_per_request')} ms per request)"
            + (f" and was busy or waiting for a core {last['client_busy_percent']:.0f} % of the step"
               if last.get("client_busy_percent") is not None else "")
            + (f" while the server's processes were at {server}" if server else "")
            + f"; {last['requests_per_s']} requests/s is what this client could send, not what the server can do"
        ), "client"
    if len(good) < 2:
        return Status.PASS, "too few steps to judge saturation", None
    prev, last = good[-2], good[-1]
    gain = last["requests_per_s"] / prev["requests_per_s"] if prev["requests_per_s"] else None
    if gain is None or gain >= PLATEAU_GAIN:
        grows = f"x{gain:.2f}" if gain else "no figure"
        return Status.PASS, f"requests/s still grows with concurrency ({grows} from {prev['concurrency']} to " \
            f"{last['concurrency']})", None
    api, eng, gpu = last.get("api_server_cpu_percent"), last.get("engine_cpu_percent"), last.get(
        "gpu_utilization_percent"
    )
    flat = (
        f"requests/s flat from concurrency {prev['concurrency']} to {last['concurrency']} "
        f"({prev['requests_per_s']} -> {last['requests_per_s']}, x{gain:.2f})"
    )
    if api is not None and api >= BUSY_CPU_PERCENT and (
        (gpu is not None and gpu < 50) or (eng is not None and eng < api * 0.7)
    ):
        ctx = f"API server process at {api:.0f} % CPU" + (f", engine {eng:.0f} %" if eng is not None else "") + (
            f", GPU {gpu:.0f} %" if gpu is not None else ""
        )
        return Status.WARN, f"{flat}: {ctx}: the front-end is the bottleneck", "api-server"
    queued = last.get("max_engine_waiting")
    if queued and queued > 0 and not (api is not None and api >= BUSY_CPU_PERCENT):
        return Status.WARN, f"{flat}: up to {queued:.0f} requests waited in the engine's queue: the batch " \
            "budget (max_num_seqs / max_num_batched_tokens) caps it", "budget"
    if api is None and gpu is None:
        return Status.PASS, f"{flat}: saturated; no process or GPU context here to say where", None
    ctx = ", ".join(
        f"{k} {v:.0f} %" for k, v in (("API server CPU", api), ("engine CPU", eng), ("GPU", gpu)) if v is not None
    )
    return Status.PASS, f"{flat}: the engine is saturated ({ctx}): the hardware's capacity", None


def throughput_finding(rows: list[dict[str, Any]], context: dict[str, Any] | None = None) -> Finding:
    """The `throughput` finding; a saturated front-end or batch budget makes it warn with the catalogue's fix, a
    saturated client makes it unknown with the record's word on the measurement (never a server fix or refs)."""
    bad = [r for r in rows if r["ok"] < r["requests"]]
    best = max(rows, key=lambda r: r["requests_per_s"] or 0) if rows else None
    title = (
        f"up to {best['requests_per_s']} requests/s, {best['tokens_per_s']} tokens/s at concurrency "
        f"{best['concurrency']} (p95 {best['p95_s']} s)"
        if best
        else "no throughput measured"
    )
    status, why, cause = judge(rows)
    if cause == "client":
        title += ": the probe's client was the limit"
    if bad:
        title += f"; {sum(r['requests'] - r['ok'] for r in bad)} requests failed"
        if status != Status.UNKNOWN:
            status = Status.WARN
    evidence = {
        "rows": rows,
        "verdict": why,
        "source": "live probe: closed-loop concurrency sweep of single-input POST /v1/embeddings",
        "bounds": {"min_step_s": MIN_STEP_S, "step_budget_s": STEP_BUDGET_S, "min_requests": MIN_REQUESTS,
                   "requests_per_worker": REQUESTS_PER_WORKER, "input_tokens": INPUT_TOKENS},
        **(context or {}),
    }
    if cause:
        evidence["facts"] = {"throughput.cause": cause}
    server_cause = cause is not None and cause != "client"
    return Finding(
        "throughput",
        status,
        title,
        evidence,
        THROUGHPUT_BOTTLENECK.fix({"cause": cause}) if cause else "",
        list(THROUGHPUT_BOTTLENECK.refs) if server_cause else [],
        why if cause else "",
    )


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
    ctx: ProbeContext, concurrency: int, words: int, procs: _Procs, client_work: Callable[[], object] | None = None
) -> tuple[dict[str, Any], list[LoadReply], dict[str, Any], LoadReply]:
    """One step: ``concurrency`` workers, each on a keep-alive connection of its own, send prepared bodies until the
    step's bounds; per request only (status, latency, prompt tokens) is kept, one answer's bytes for the record.
    ``client_work`` runs in the loop after each answer (tests slow the client with it)."""
    from triage.probes.inputs import unique_texts

    texts = unique_texts(words)
    head = (json.dumps({"model": ctx.model})[:-1] + ', "input": ').encode()
    deadline = ctx.cfg.deadline_s
    replies: list[LoadReply] = []
    want = min_requests(concurrency)
    stop = False
    kept: list[LoadReply] = []
    first_request: dict[str, Any] = {}
    gpu: list[int] = []
    conns = [LoadConnection(ctx.pc) for _ in range(concurrency)]

    async def worker(conn: LoadConnection) -> None:
        nonlocal stop
        while not stop:
            text = next(texts)
            keep = not first_request
            if keep:
                first_request.update(ctx.body(text))
            r = await conn.post(EMBEDDINGS_PATH, head + json.dumps(text).encode() + b"}", deadline, keep_body=keep)
            replies.append(r)
            if keep:
                kept.append(r)
            if client_work is not None:
                client_work()
            elapsed = time.monotonic() - t0
            if not r.ok or elapsed >= STEP_BUDGET_S or (len(replies) >= want and elapsed >= MIN_STEP_S):
                stop = True

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
    t0 = time.monotonic()
    cpu0, wait0 = client_clock()  # the client's own CPU (the samplers' parsing included)
    try:
        await asyncio.gather(*(worker(c) for c in conns), sample_gpu(), sample_queue())
    finally:
        for c in conns:
            c.close()
    elapsed = time.monotonic() - t0
    cpu1, wait1 = client_clock()
    row = summarize(concurrency, replies, elapsed, cpu1 - cpu0,
                    wait1 - wait0 if wait0 is not None and wait1 is not None else None)
    row.update(procs.read())
    if gpu:
        row["gpu_utilization_percent"] = round(sum(gpu) / len(gpu), 1)
    if waiting:
        row["max_engine_waiting"] = max(waiting)
    return row, replies, first_request, kept[0]


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
    client_work: Callable[[], object] | None = None,
) -> AsyncIterator[ProbeOutcome | Finding]:
    procs = _Procs(ctx.pc.url)
    words = await _calibrate(ctx, 24)
    rows = []
    for c in concurrency:
        row, replies, request, sample = await _step(ctx, c, words, procs, client_work)
        rows.append(row)
        bad = next((x for x in replies if not x.ok), None)
        shown = bad or sample
        yield ProbeOutcome(
            probe=f"throughput-c{c}",
            set=SET,
            outcome=OK if bad is None else HTTP_ERROR,
            description=f"{row['requests']} single-input requests, {c} in flight",
            duration_s=row["elapsed_s"],
            time_to_verdict_s=row["p50_s"],
            http_status=shown.status,
            request={"method": "POST", "path": EMBEDDINGS_PATH, "body": trim_for_storage(request)},
            response=_stored(shown),
            extra={"figures": row},
        )
        if bad is not None:
            break
    gpu_ctx = "NVML: GPU utilization sampled every 0.5 s" if any("gpu_utilization_percent" in r for r in rows) else (
        "NVML: no GPU visible on this host"
    )
    yield throughput_finding(
        rows,
        {
            "process_cpu": "psutil: API server and busiest child, % of one core over each step"
            if procs.api is not None
            else f"not measured: {procs.why}",
            "client_cpu": "the probe's process (its threads share one interpreter lock): CPU % of one core over each "
            "step and ms per request; busy % adds its threads' time waiting for a core (Linux schedstat)",
            "gpu": gpu_ctx,
            "words_per_input": words,
        },
    )

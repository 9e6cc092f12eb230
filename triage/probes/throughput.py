"""The throughput set: a load test. A concurrency sweep (1, 4, 16, 64) of single-input requests, with
sustained load at each step, and the process-CPU and NVML context that says what capped it.

Each step keeps ``C`` requests in flight (closed loop: a worker sends its next request when the last
returns) until ``min_requests(C)`` have completed and at least ``MIN_STEP_S`` passed, or ``STEP_BUDGET_S``
ran out: enough requests for a stable rate, bounded in time. Inputs are unique (a salt per request, so the
prefix cache does not flatter the figures) and about ``INPUT_TOKENS`` tokens long, calibrated once with
the server's own token count, so a row for C compares with `vllm bench serve --backend openai-embeddings
--random-input-len 32 --max-concurrency C`.

Rows (the `throughput` finding's evidence ``rows``): concurrency, requests, ok, elapsed_s,
requests_per_s, inputs_per_s, tokens_per_s, p50_s, p95_s, p99_s, plus api_server_cpu_percent /
engine_cpu_percent (psutil, when the server runs on this host), gpu_utilization_percent (NVML, when a
GPU is visible here) and max_engine_waiting (/metrics num_requests_waiting sampled each second).
The verdict on them is catalogue mode `throughput-bottleneck`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any, Optional
from urllib.parse import urlparse

from triage.catalogue.startup import THROUGHPUT_BOTTLENECK
from triage.client import Exchange, trim_for_storage
from triage.findings import Finding, Status
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


def summarize(concurrency: int, exchanges: list[Exchange], elapsed_s: float) -> dict[str, Any]:
    """Pure: one step's row from its exchanges and wall time."""
    ok = [x for x in exchanges if x.ok]
    lat = [x.elapsed_s or 0.0 for x in ok]
    tokens = sum(((x.body or {}).get("usage") or {}).get("prompt_tokens", 0) for x in ok)
    inputs = sum(len((x.body or {}).get("data") or []) for x in ok)

    def rate(n: float) -> float | None:
        return round(n / elapsed_s, 2) if elapsed_s > 0 else None

    def p(q: float) -> float | None:
        v = percentile(lat, q)
        return round(v, 4) if v is not None else None

    return {
        "concurrency": concurrency,
        "requests": len(exchanges),
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


def judge(rows: list[dict[str, Any]]) -> tuple[Status, str, Optional[str]]:
    """Mode 8 from the sweep: (status, why, cause) with cause 'api-server' | 'budget' | None.

    Saturated = the last step's requests/s grew less than PLATEAU_GAIN over the step before. Then the
    API server process near a full core while the engine's processes are not (or the GPU is idle) is the
    front-end bottleneck; requests waiting in the engine's own queue with the front-end not saturated is
    the batch budget; the engine busy without a queue is the hardware's capacity (pass, with the figure).
    """
    good = [r for r in rows if r.get("requests_per_s")]
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
    """The `throughput` finding; a saturated front-end makes it warn with the catalogue's fix."""
    bad = [r for r in rows if r["ok"] < r["requests"]]
    best = max(rows, key=lambda r: r["requests_per_s"] or 0) if rows else None
    title = (
        f"up to {best['requests_per_s']} requests/s, {best['tokens_per_s']} tokens/s at concurrency "
        f"{best['concurrency']} (p95 {best['p95_s']} s)"
        if best
        else "no throughput measured"
    )
    status, why, cause = judge(rows)
    if bad:
        title += f"; {sum(r['requests'] - r['ok'] for r in bad)} requests failed"
        status = Status.WARN
    evidence = {
        "rows": rows,
        "verdict": why,
        "source": "live probe: closed-loop concurrency sweep of single-input POST /v1/embeddings",
        "bounds": {"min_step_s": MIN_STEP_S, "step_budget_s": STEP_BUDGET_S, "min_requests": MIN_REQUESTS,
                   "requests_per_worker": REQUESTS_PER_WORKER, "input_tokens": INPUT_TOKENS},
        **(context or {}),
    }
    return Finding(
        "throughput",
        status,
        title,
        evidence,
        THROUGHPUT_BOTTLENECK.fix({"cause": cause}) if cause else "",
        list(THROUGHPUT_BOTTLENECK.refs) if cause else [],
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
    ctx: ProbeContext, concurrency: int, words: int, procs: _Procs
) -> tuple[dict[str, Any], list[Exchange]]:
    from triage.probes.inputs import new_salt, salted_words

    exchanges: list[Exchange] = []
    want = min_requests(concurrency)
    t0 = time.monotonic()
    stop = False
    gpu: list[int] = []

    async def worker() -> None:
        nonlocal stop
        while not stop:
            s = new_salt()
            ex = await ctx.pc.embed(ctx.body(f"{s} {salted_words(s, words)}"), timeout_s=ctx.cfg.deadline_s)
            exchanges.append(ex)
            elapsed = time.monotonic() - t0
            if not ex.ok or elapsed >= STEP_BUDGET_S or (len(exchanges) >= want and elapsed >= MIN_STEP_S):
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
    await asyncio.gather(*(worker() for _ in range(concurrency)), sample_gpu(), sample_queue())
    elapsed = time.monotonic() - t0
    row = summarize(concurrency, exchanges, elapsed)
    row.update(procs.read())
    if gpu:
        row["gpu_utilization_percent"] = round(sum(gpu) / len(gpu), 1)
    if waiting:
        row["max_engine_waiting"] = max(waiting)
    return row, exchanges


async def run(
    ctx: ProbeContext, only: Iterable[str] | None = None, concurrency: tuple[int, ...] = CONCURRENCY
) -> AsyncIterator[ProbeOutcome | Finding]:
    procs = _Procs(ctx.pc.url)
    words = await _calibrate(ctx, 24)
    rows = []
    for c in concurrency:
        row, exchanges = await _step(ctx, c, words, procs)
        rows.append(row)
        bad = next((x for x in exchanges if not x.ok), None)
        first = bad or exchanges[0]
        yield ProbeOutcome(
            probe=f"throughput-c{c}",
            set=SET,
            outcome=OK if bad is None else HTTP_ERROR,
            description=f"{row['requests']} single-input requests, {c} in flight",
            duration_s=row["elapsed_s"],
            time_to_verdict_s=row["p50_s"],
            http_status=first.status,
            request={"method": "POST", "path": "/v1/embeddings", "body": trim_for_storage(exchanges[0].request)},
            response={"status": first.status, "body": trim_for_storage(first.body)},
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
            "gpu": gpu_ctx,
            "words_per_input": words,
        },
    )

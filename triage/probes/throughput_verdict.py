"""The throughput sweep's figures and verdict, pure: a step's row from its replies, mode 8 (`throughput-bottleneck`)
from the rows, and the `throughput` finding. The sweep itself (connections, samplers) is triage.probes.throughput.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

from triage.catalogue.startup import THROUGHPUT_BOTTLENECK
from triage.findings import Finding, Status

if TYPE_CHECKING:  # the load machinery loads only when a sweep runs (a one-probe check never reads it)
    from triage.load_client import Tally

CONCURRENCY = (1, 4, 16, 64)
INPUT_TOKENS = 32
MIN_STEP_S = 3.0  # at least this long at each step, so a step is not one burst
STEP_BUDGET_S = 12.0  # and never longer
MIN_REQUESTS = 40
REQUESTS_PER_WORKER = 8
PLATEAU_GAIN = 1.2  # less than +20 % requests/s for 4x the concurrency: saturated
BUSY_CPU_PERCENT = 85.0  # one process near a full core
CLIENT_SHARE = 0.8  # a rate above this share of the client's ceiling (triage.load_gen.ceiling) is the client's
# the record's own word on a sweep whose client was the limit: every such verdict quotes it (a test reads it there)
CLIENT_LIMIT = THROUGHPUT_BOTTLENECK.evidence["probe-client"]


def min_requests(concurrency: int) -> int:
    """Completed requests a step wants before it may stop (more workers, more requests)."""
    return max(MIN_REQUESTS, REQUESTS_PER_WORKER * concurrency)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    return _nearest_rank(sorted(values), q)


def _nearest_rank(s: list[float], q: float) -> float | None:
    if not s:
        return None
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))]


def summarize(concurrency: int, tally: Tally, elapsed_s: float, client_cpu_s: float | None = None,
              client_wait_s: float | None = None, inputs_per_request: int = 1, processes: int = 1) -> dict[str, Any]:
    """Pure: one step's row from its tally, wall time and the client's own CPU seconds over the step (and its
    seconds runnable but waiting for a core, where known). The figures in `vllm bench serve`'s units: requests/s,
    tokens/s (the server's own prompt token counts), latency percentiles (seconds here, ms in bench's printout),
    errors (requests that got no 200)."""
    lat = sorted(tally.latencies)
    ok, requests = len(lat), tally.requests
    inputs = inputs_per_request * ok

    def rate(n: float) -> float | None:
        return round(n / elapsed_s, 2) if elapsed_s > 0 else None

    def p(q: float) -> float | None:
        v = _nearest_rank(lat, q)
        return round(v, 4) if v is not None else None

    row: dict[str, Any] = {
        "concurrency": concurrency,
        "requests": requests,
        "ok": ok,
        "errors": requests - ok,
        "elapsed_s": round(elapsed_s, 3),
        "requests_per_s": rate(ok),
        "inputs_per_s": rate(inputs),
        "tokens_per_s": rate(tally.tokens),
        "mean_input_tokens": round(tally.tokens / ok, 1) if ok else None,
        "p50_s": p(50),
        "p90_s": p(90),
        "p95_s": p(95),
        "p99_s": p(99),
        "processes": processes,
    }
    if tally.failed:
        row["failed"] = dict(tally.failed)
    if client_cpu_s is not None and elapsed_s > 0:
        row["client_cpu_percent"] = round(100 * client_cpu_s / elapsed_s, 1)
        if requests:
            row["client_cpu_ms_per_request"] = round(1000 * client_cpu_s / requests, 3)
        if client_wait_s is not None:
            row["client_busy_percent"] = round(100 * (client_cpu_s + client_wait_s) / elapsed_s, 1)
    return row


def client_limited(row: dict[str, Any]) -> bool:
    """The probe's own client (its process: one interpreter lock) near a full core over the step: the rate is the
    client's. A step spread over worker processes is judged per process (their CPU over their number).
    Its demand is read where the row has it (CPU plus time runnable but waiting for a core: on a box busy with other
    work the client's thread waits, and what it waits for delays each next request as its own CPU would)."""
    c = row.get("client_busy_percent", row.get("client_cpu_percent"))
    return c is not None and c / max(1, row.get("processes") or 1) >= BUSY_CPU_PERCENT


def above_ceiling(row: dict[str, Any], ceiling: dict[str, Any] | None) -> bool:
    """The step's rate above CLIENT_SHARE of what the same client sends to a trivial local server: the client's."""
    n = (ceiling or {}).get("requests_per_s")
    return bool(n) and (row.get("requests_per_s") or 0) > CLIENT_SHARE * n


def ceiling_note(c: dict[str, Any]) -> str:
    """The line printed beside a sweep: the client's ceiling (``triage.load_gen.ceiling``'s figures) and what it
    means for the rows."""
    n = c.get("requests_per_s")
    if not n:
        return "client ceiling not measured"
    echo = c.get("echo_server_cpu_percent")
    at_least = echo is not None and echo >= BUSY_CPU_PERCENT  # the trivial server, not the client, was near a core
    procs = c.get("processes", 1)
    return (f"client ceiling {'at least ' if at_least else '~'}{n:.0f} req/s (C={c.get('concurrency')}, {procs} "
            f"process{'es' if procs > 1 else ''}, against a trivial local server answering {c.get('answer_bytes')} "
            f"bytes): figures above {CLIENT_SHARE * n:.0f} req/s ({CLIENT_SHARE:g}·N) are the client's")


def judge(rows: list[dict[str, Any]], ceiling: dict[str, Any] | None = None) -> tuple[Status, str, Optional[str]]:
    """Mode 8 from the sweep: (status, why, cause) with cause 'client' | 'api-server' | 'budget' | None.

    First the measurement itself: a rate above CLIENT_SHARE of the client's ceiling (``ceiling``: the same load
    against a trivial local server), or the probe's client near a full core at the last step means the figures are the
    client's ceiling, not the server's: UNKNOWN, cause 'client', and the server is never blamed (whatever its
    processes did, one saturated client thread caps what it can send). Else saturated = the last step's requests/s
    grew less than PLATEAU_GAIN over the step before. Then the API server process near a full core while the
    engine's processes are not (or the GPU is idle) is the front-end bottleneck; requests waiting in the engine's
    own queue with the front-end not saturated is the batch budget; the engine busy without a queue is the hardware's
    capacity (pass, with the figure).
    """
    good = [r for r in rows if r.get("requests_per_s")]
    if good and ceiling and above_ceiling(good[-1], ceiling):
        last = good[-1]
        return Status.UNKNOWN, (
            f"the probe's own client was the limit at concurrency {last['concurrency']}: "
            f"{last['requests_per_s']} requests/s is above {CLIENT_SHARE:g} of what this client sends to a trivial "
            f"local server ({ceiling['requests_per_s']} requests/s with {ceiling.get('processes', 1)} "
            f"process{'es' if ceiling.get('processes', 1) > 1 else ''}): it is what this client could send, not what "
            f"the server can do ({CLIENT_LIMIT})"
        ), "client"
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
            + f" ({CLIENT_LIMIT})"
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
    ceiling = (context or {}).get("client_ceiling")
    status, why, cause = judge(rows, ceiling)
    if cause == "client":
        title += ": the probe's client was the limit"
    if ceiling and ceiling.get("requests_per_s"):  # beside every sweep: what the client itself can send
        title += f" (client ceiling ~{ceiling['requests_per_s']:.0f} requests/s)"
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
    fix = THROUGHPUT_BOTTLENECK.fix({"cause": cause}) if cause else ""
    if not server_cause:  # no cause, or the client's own: the record's refs are not this finding's
        return Finding("throughput", status, title, evidence, fix, [], why if cause else "")
    return Finding.of(THROUGHPUT_BOTTLENECK, "throughput", status, title, evidence, fix=fix, explanation=why,
                      failure_mode="")

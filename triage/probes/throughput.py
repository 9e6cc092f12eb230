"""The throughput set (safe, bounded): embeddings/s and tokens/s at batch sizes 1, 4, 16, 64.

Each batch size runs sequential requests for at most ``BUDGET_S`` seconds and ``MAX_REQUESTS``
requests, with unique salted texts (so the prefix cache does not flatter the numbers).
"""
from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from triage.findings import Finding, Status
from triage.client import Exchange, trim_for_storage
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, ProbeOutcome

SET = "throughput"
BATCH_SIZES = (1, 4, 16, 64)
BUDGET_S = 4.0
MAX_REQUESTS = 20
WORDS_PER_TEXT = 24


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of a small sample."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


def summarize(batch: int, exchanges: list[Exchange], elapsed_s: float) -> dict[str, Any]:
    """Pure: figures for one batch size from its exchanges."""
    ok = [x for x in exchanges if x.ok]
    lat = [x.elapsed_s or 0.0 for x in ok]
    tokens = sum(((x.body or {}).get("usage") or {}).get("prompt_tokens", 0) for x in ok)
    n_emb = sum(len((x.body or {}).get("data") or []) for x in ok)
    return {"batch_size": batch, "requests": len(exchanges), "ok": len(ok), "elapsed_s": round(elapsed_s, 3),
            "embeddings_per_s": round(n_emb / elapsed_s, 2) if elapsed_s else None,
            "tokens_per_s": round(tokens / elapsed_s, 1) if elapsed_s else None,
            "latency_p50_s": percentile(lat, 50), "latency_p90_s": percentile(lat, 90),
            "latency_p99_s": percentile(lat, 99)}


def throughput_finding(rows: list[dict[str, Any]]) -> Finding:
    bad = [r for r in rows if r["ok"] < r["requests"]]
    best = max(rows, key=lambda r: r["embeddings_per_s"] or 0) if rows else None
    title = (f"up to {best['embeddings_per_s']} embeddings/s, {best['tokens_per_s']} tokens/s "
             f"(batch {best['batch_size']})" if best else "no throughput measured")
    if bad:
        title += f"; {sum(r['requests'] - r['ok'] for r in bad)} requests failed"
    return Finding("throughput", Status.WARN if bad else Status.PASS, title,
                   {"rows": rows, "source": "live probe: sequential POST /v1/embeddings per batch size",
                    "bounds": {"budget_s_per_batch": BUDGET_S, "max_requests_per_batch": MAX_REQUESTS}})


async def run(ctx: ProbeContext, only: Iterable[str] | None = None,
              batch_sizes: tuple[int, ...] = BATCH_SIZES) -> AsyncIterator[ProbeOutcome | Finding]:
    from triage.probes.inputs import new_salt, salted_words
    rows = []
    for bs in batch_sizes:
        exchanges: list[Exchange] = []
        t0 = time.monotonic()
        while len(exchanges) < MAX_REQUESTS and time.monotonic() - t0 < BUDGET_S:
            texts = [f"{(s := new_salt())} {salted_words(s, WORDS_PER_TEXT)}" for _ in range(bs)]
            ex = await ctx.pc.embed(ctx.body(texts), timeout_s=ctx.cfg.deadline_s)
            exchanges.append(ex)
            if not ex.ok:
                break
        row = summarize(bs, exchanges, time.monotonic() - t0)
        rows.append(row)
        bad = next((x for x in exchanges if not x.ok), None)
        yield ProbeOutcome(probe=f"throughput-batch{bs}", set=SET, outcome=OK if bad is None else HTTP_ERROR,
                           description=f"{row['requests']} requests of {bs} inputs", duration_s=row["elapsed_s"],
                           time_to_verdict_s=row["latency_p50_s"], http_status=(bad or exchanges[0]).status,
                           request={"method": "POST", "path": "/v1/embeddings",
                                    "body": trim_for_storage(exchanges[0].request)},
                           response={"status": (bad or exchanges[0]).status,
                                     "body": trim_for_storage((bad or exchanges[0]).body)},
                           extra={"figures": row})
    yield throughput_finding(rows)

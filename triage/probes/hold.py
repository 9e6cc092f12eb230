"""One held hang on a server, for ``lab matrix``: the probes' [SHORT, LONG] request truncated to max_model_len,
aborted after a hold, then a small request that says whether the server recovered. Here (not in triage.lab)
because it sends the probes' inputs: the lab imports no probe, the CLI hands this to ``triage.lab.matrix``."""
from __future__ import annotations

import asyncio
import time
from typing import Any

from triage.http import ProbeClient
from triage.probes.inputs import long_text, new_salt, short_text

AFTER_TIMEOUT_S = 30.0  # the recovery request's total deadline


def hold_hang(url: str, hold_s: float, page_at_s: float) -> dict[str, Any]:
    """Send [SHORT, LONG] truncated to max_model_len, close the connection after ``hold_s`` (the abort), record
    /metrics ``page_at_s`` into the hold (``hang_page``), then send a 2-token request: did the server answer it
    (recovery)? ``after_status`` is its HTTP status, else the transport error's name."""

    async def go() -> dict[str, Any]:
        async with ProbeClient(url) as pc:
            model = (await pc.models()).body["data"][0]
            mml = int(model.get("max_model_len") or 256)
            lt = await long_text(lambda t: pc.token_count(model["id"], t), mml, salt=new_salt())
            body = {"model": model["id"], "input": [short_text(), lt.text], "truncate_prompt_tokens": mml}
            t0 = time.time()
            task = asyncio.create_task(pc.embed_isolated(body, hold_s))  # the client closes after hold_s: the abort
            await asyncio.sleep(page_at_s)
            hang_page = await pc.metrics_text(timeout_s=5.0) if not task.done() else None
            ex = await task
            held = round(time.time() - t0, 1)
            answered = ex.status
        async with ProbeClient(url, timeout_s=AFTER_TIMEOUT_S) as pc:
            t1 = time.time()
            r = await pc.embed({"model": model["id"], "input": "ok"})
            after: int | str = r.status if r.status is not None else (r.error or "no answer").split(":")[0]
        return {"held_s": held, "status_within_hold": answered, "after_status": after,
                "after_s": round(time.time() - t1, 2), "hang_page": hang_page}

    return asyncio.run(go())

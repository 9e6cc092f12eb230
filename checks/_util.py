"""Small helpers shared by the checks: evidence rows and the livelock fix text."""

from __future__ import annotations

from typing import Any

from triage.config import EffectiveConfig
from triage.catalogue.versions import Version, parse_version

QUESTIONS = {
    "vllm_version": "Which vLLM version does the server run? (GET /version, the log's first lines, or the image tag)",
    "device": "Which backend does it run on: CUDA, ROCm or CPU? (the start-up log's device_config=…)",
    "runner": "Is the model served with --runner pooling? (the command line or the log's non-default args)",
    "enable_chunked_prefill": "Is chunked prefill on? (the log's 'enable_chunked_prefill=' in the engine config "
    "line, or pass the command line)",
    "max_model_len": "What is max_model_len? (GET /v1/models, or the log's 'Using max model len N')",
    "max_num_batched_tokens": "What is max_num_batched_tokens? (the log's 'Chunked prefill is enabled with "
    "max_num_batched_tokens=N.', or --max-num-batched-tokens on the command line)",
    "truncate_prompt_tokens": "What truncate_prompt_tokens does your client send with /v1/embeddings? "
    "(--truncate N, -1, or none)",
    "gpu_memory_total_bytes": "Which GPU does the server run on, and how much memory has it? "
    "(run triage on the server host, or pass the NVML record)",
}


def ev(cfg: EffectiveConfig, *keys: str) -> dict[str, Any]:
    return cfg.evidence(*keys)


def version_of(cfg: EffectiveConfig) -> Version | None:
    return parse_version(cfg.get("vllm_version"))


def questions(missing: list[str]) -> list[str]:
    return [QUESTIONS.get(k, f"What is {k}?") for k in missing]


def truncate_state(cfg: EffectiveConfig) -> str:
    """'unknown' | 'none' (client sends no truncation) | 'int'."""
    t = cfg.get("truncate_prompt_tokens", "unknown")
    if t == "unknown":
        return "unknown"
    if t is None or (isinstance(t, str) and t.lower() == "none"):
        return "none"
    return "int"

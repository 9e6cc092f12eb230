"""Small helpers shared by the checks: evidence rows and the questions that missing evidence asks.

A question carries the canonical config key(s) whose answer settles it (``{"key", "keys", "text"}``);
the CLI's ``--answer KEY=VALUE`` and the Checklist page's inputs answer by those keys (triage.answers).
"""

from __future__ import annotations

from typing import Any

from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.target import Truncation
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
    "(a number of tokens, -1 for max_model_len, or none)",
    "gpu_memory_total_bytes": "Which GPU does the server run on, and how much memory has it? "
    "(run triage on the server host, pass the NVML record, or state the card and its memory)",
}


def ev(cfg: EffectiveConfig, *keys: str) -> dict[str, Any]:
    return cfg.evidence(*keys)


def version_of(cfg: EffectiveConfig) -> Version | None:
    return parse_version(cfg.get("vllm_version"))


# a question answered by more than its own key: which GPU decides the memory and vLLM's batch-budget tier
ANSWER_KEYS: dict[str, tuple[str, ...]] = {
    "gpu_memory_total_bytes": ("gpu_name", "gpu_memory_total_bytes"),
}


def question(key: str) -> dict[str, Any]:
    """{"key": the key it asks for, "keys": every key that answers it, "text": the question}."""
    return {"key": key, "keys": list(ANSWER_KEYS.get(key, (key,))), "text": QUESTIONS.get(key, f"What is {key}?")}


def questions(missing: list[str]) -> list[dict[str, Any]]:
    return [question(k) for k in missing]


def unknown(check_id: str, title: str, evidence: dict[str, Any], key: str, fix: str, mode: str = "") -> Finding:
    """An UNKNOWN finding whose evidence asks the question that settles ``key`` (``mode``: the record it would
    report, for an id declared with several)."""
    return Finding(check_id, Status.UNKNOWN, title, {**evidence, "questions": questions([key])}, fix,
                   failure_mode=mode)


def truncate_state(cfg: EffectiveConfig) -> str:
    """'unknown' | 'none' (client sends no truncation) | 'int' (N tokens, or -1 = max_model_len)."""
    try:
        kind = Truncation.parse(cfg.get("truncate_prompt_tokens")).kind  # the one parser: triage.target
    except ValueError:
        return "int"  # a number the server will judge (e.g. 0): the checks compare it as one
    return {"tokens": "int", "max_model_len": "int"}.get(kind, kind)

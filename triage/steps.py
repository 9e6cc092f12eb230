"""The checklist's steps and which step each check id belongs to: the registry the faces read.

``STEPS`` is the design card's order (with a leading "server" step: a 401 or a wrong URL is the
first thing a user must see). ``CHECK_STEPS`` names the ids the checks and sources really emit
(checks/*.py ``CHECK_ID`` and their extra ids, triage/sources/server*.py, the engine's own);
``tests/test_steps.py`` keeps it honest against a real run. Families by prefix catch new ids of a
known family; anything else lands in "flags".
"""
from __future__ import annotations

from dataclasses import dataclass

from checks import backend, chunked_prefill, flags, gpu_memory, livelock, truncation, version


@dataclass(frozen=True)
class Step:
    """One step of the guided checklist."""

    id: str
    title: str
    question: str  # what to answer (or paste) when the evidence for this step is missing


STEPS: tuple[Step, ...] = (
    Step("server", "Server reachable", "Is the URL the server's root (http://host:port), is it up, and does it "
         "need an API key (`vllm serve --api-key`)?"),
    Step("version", "vLLM version", "Which vLLM version does the server run? (`GET /version`, or `pip show vllm`)"),
    Step("backend", "Backend and runner",
         "Is the server on GPU, ROCm or CPU, and is it started with `--runner pooling`?"),
    Step("gpu-memory", "GPU memory and KV cache",
         "Which GPU and how much memory? Paste `nvidia-smi` or the start-up log's KV cache lines."),
    Step("flags", "Serve flags", "Paste the exact `vllm serve …` command line on the Target page."),
    Step("chunked-prefill", "Chunked prefill and batch budget",
         "Is chunked prefill on, and what is max_num_batched_tokens? Paste the start-up log on the Target page."),
    Step("truncation", "max_model_len vs truncate_prompt_tokens",
         "What truncate_prompt_tokens does your client send? Enter it on the Target page."),
)

CONFIG_CONFLICT = "config-conflict"  # the engine's: sources disagree on a config key
NO_EVIDENCE = "evidence"  # the engine's: nothing to triage was given
BUDGET_BELOW_MAX_MODEL_LEN = "budget-below-max-model-len"  # checks/chunked_prefill.py's second id

CHECK_STEPS: dict[str, str] = {
    version.CHECK_ID: "version",
    backend.CHECK_ID: "backend",
    gpu_memory.CHECK_ID: "gpu-memory",
    flags.CHECK_ID: "flags",
    CONFIG_CONFLICT: "flags",
    NO_EVIDENCE: "flags",
    chunked_prefill.CHECK_ID: "chunked-prefill",
    BUDGET_BELOW_MAX_MODEL_LEN: "chunked-prefill",
    truncation.CHECK_ID: "truncation",
    livelock.CHECK_ID: "truncation",
}
# Families by prefix: server-* and metrics-* (the live source), flags-* (checks/flags.py).
CHECK_PREFIXES: dict[str, str] = {"server-": "server", "metrics-": "server", "flags-": "flags",
                                   "gpu-memory-": "gpu-memory"}  # gpu-memory-shared (issue 14)
FALLBACK_STEP = "flags"


def step_of(check_id: str) -> str:
    """Which checklist step a finding of ``check_id`` belongs to."""
    if check_id in CHECK_STEPS:
        return CHECK_STEPS[check_id]
    return next((s for p, s in CHECK_PREFIXES.items() if check_id.startswith(p)), FALLBACK_STEP)


def step_index(step_id: str) -> int:
    """1-based position of a step (0 when unknown)."""
    return next((i for i, s in enumerate(STEPS, 1) if s.id == step_id), 0)

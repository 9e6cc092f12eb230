"""The checklist's steps and which step each check id belongs to: the registry the faces read.

``STEPS`` is the design card's order (with a leading "server" step: a 401 or a wrong URL is the
first thing a user must see). Which step shows a check id is declared with the id itself
(``triage.catalogue.check_ids``); ``tests/test_steps.py`` keeps it honest against a real run. An id
no step names (a log finding in a checklist run) lands in "flags".
"""
from __future__ import annotations

from dataclasses import dataclass

from triage.catalogue.check_ids import step_table


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

CHECK_STEPS: dict[str, str] = step_table()
FALLBACK_STEP = "flags"


def step_of(check_id: str) -> str:
    """Which checklist step a finding of ``check_id`` belongs to."""
    return CHECK_STEPS.get(check_id, FALLBACK_STEP)


def step_index(step_id: str) -> int:
    """1-based position of a step (0 when unknown)."""
    return next((i for i, s in enumerate(STEPS, 1) if s.id == step_id), 0)

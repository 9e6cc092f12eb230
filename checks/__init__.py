"""The checklist: one module per check, each a pure function of the effective config; the registry.

A check returns one Finding or a list of them (status pass|warn|fail|unknown); "could not tell"
is `unknown` with the question that would settle it in the evidence, never a guess.
Order is the design card's: version, backend, GPU memory, flags, chunked prefill, truncation, livelock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union
from collections.abc import Callable

from triage.config import EffectiveConfig
from triage.findings import Finding

CheckResult = Union[Finding, list[Finding]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    run: Callable[[EffectiveConfig], CheckResult]


def registry() -> list[Check]:
    from checks import backend, chunked_prefill, flags, gpu_memory, livelock, liveness, rerank, truncation, version
    from triage.catalogue import POOLING_LIVELOCK

    return [
        Check(version.CHECK_ID, "vLLM version against known pooling bugs", version.check),
        Check(backend.CHECK_ID, "Backend (CUDA/ROCm/CPU) and driver", backend.check),
        Check(gpu_memory.CHECK_ID, "GPU memory: weights + one max-length sequence + headroom", gpu_memory.check),
        Check(flags.CHECK_ID, "Flags: runner/convert, guide myths, settings known to OOM", flags.check),
        Check(chunked_prefill.CHECK_ID, "Chunked prefill: effective state and batch budget", chunked_prefill.check),
        Check(truncation.CHECK_ID, "max_model_len vs the client's truncate_prompt_tokens", truncation.check),
        Check(livelock.CHECK_ID, f"Pooling livelock risk ({POOLING_LIVELOCK.refs[0]})", livelock.check),
        # after the design card's steps: only a reranker deployment gets findings (issue 25)
        Check(rerank.CHECK_ID, "Reranker deployment: served task, overrides, template", rerank.check),
        # only a deployment whose liveness probe is known gets a finding (issue 31)
        Check(liveness.CHECK_ID, "Liveness probe against the hang it should catch", liveness.check),
    ]


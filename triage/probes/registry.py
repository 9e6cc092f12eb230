"""The probe sets as the faces offer them, and how an outcome is graded: registries read without the runner.

``PROBE_SETS`` (the dashboard's and the CLI's list), ``SETS`` (their ids in run order), ``resolve_sets``, the
refusal of a set that can hang (``HANG_REASON``, ``HangNotAllowed``) and ``OUTCOME_STATUS`` (an outcome's status
in every report and page). Apart from triage.probes.api so that the CLI reads its choices without loading the
probes, their clients and httpx (bench/bench_cli.py: a usage error under 0.3 s).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from triage.catalogue import POOLING_LIVELOCK

SETS = ("seed", "conformance", "throughput", "vectors", "clients", "rerank", "rerank-seed", "classify")
DEFAULT_SETS = ("conformance",)
HANG_REASON = (f"the seed matrix sends requests that livelock vLLM {POOLING_LIVELOCK.affected_text} "
               f"({POOLING_LIVELOCK.refs[0]}): each hang holds "
               "a request slot and burns a CPU core until the probe aborts it (after the stall threshold). "
               "Run it only against a server you may disturb, and pass --allow-hang (allow_hang=True).")


@dataclass(frozen=True)
class ProbeSet:
    """One probe set as the faces offer it; ``default``: ticked on the dashboard, ``can_hang``: asks first."""

    id: str
    title: str
    default: bool
    can_hang: bool
    description: str


PROBE_SETS: tuple[ProbeSet, ...] = (
    ProbeSet("conformance", "Conformance", True, False,
             "Does /v1/embeddings accept what clients send: lists, token ids, dimensions, truncation, errors."),
    ProbeSet("throughput", "Throughput", True, False,
             "Load test: concurrency sweep 1/4/16/64, requests/s, tokens/s, p50/p95/p99."),
    ProbeSet("vectors", "Vectors", True, False,  # safe and bounded: on by default (issue 13)
             "Are the vectors the model's: dimensions, norms, determinism, batching, pooling, reference vectors."),
    ProbeSet("clients", "Client libraries", False, False,
             "The server through the OpenAI SDK, LangChain and LiteLLM: each vector against a plain request's."),
    ProbeSet("rerank", "Reranking (/score, /rerank)", False, False,  # issue 25: for reranker deployments
             "/score and /rerank: paths, shapes, top_n, long documents and truncation, the task that scores, a "
             "ranking sanity check, and the Cohere SDK / LangChain CohereRerank against the server."),
    ProbeSet("classify", "Classification (/classify)", False, False,  # issue 29: for classifier deployments
             "/classify with and without use_activation: are the probs probabilities or raw logits."),
    ProbeSet("rerank-seed", f"Rerank livelock ({POOLING_LIVELOCK.refs[0]} through /rerank)", False, True,
             "[SHORT, LONG] documents through /rerank with truncate_prompt_tokens = max_model_len, -1 and "
             f"max_model_len - 1 ({POOLING_LIVELOCK.refs[0]}): on an affected server this hangs until aborted."),
    ProbeSet("seed", "Seed matrix (livelock reproduction)", False, True,
             "[SHORT] · [LONG] · [LONG, SHORT] · [SHORT, LONG] with a prompt of exactly max_model_len tokens "
             f"({POOLING_LIVELOCK.refs[0]}). On an affected server this hangs the engine until the probe aborts it."),
)

# A probe outcome as a verdict status: what every report and page colours it by.
OUTCOME_STATUS: dict[str, str] = {
    "ok": "pass", "slow": "warn", "skipped": "unknown", "livelock": "fail", "stuck-waiting": "fail",
    "http-error": "warn", "unreachable": "error", "error": "error", "proxy-error": "unknown"}


def outcome_status(outcome: str) -> str:
    return OUTCOME_STATUS.get(outcome, "unknown")


class HangNotAllowed(ValueError):
    """The seed matrix was asked for without allow_hang."""


def resolve_sets(sets: str | Iterable[str] | None) -> list[str]:
    if sets is None:
        return list(DEFAULT_SETS)
    names = [sets] if isinstance(sets, str) else list(sets)
    out: list[str] = []
    for n in names:
        for x in (SETS if n == "all" else [n]):
            if x not in SETS:
                raise ValueError(f"unknown probe set {x!r}: choose from {', '.join(SETS)} or all")
            if x not in out:
                out.append(x)
    return out

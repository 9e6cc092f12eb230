"""vLLM version against the known pooling bugs and their version ranges (triage/vllm/versions.py)."""

from __future__ import annotations

from checks._util import ev, questions, version_of
from triage.config import EffectiveConfig
from triage.findings import Finding, Status
from triage.vllm.versions import LIVELOCK_FIRST_AFFECTED, LIVELOCK_FIXED_IN, REPORTED, bugs_affecting, fmt

CHECK_ID = "vllm-version"


def check(cfg: EffectiveConfig) -> Finding:
    v = version_of(cfg)
    evidence = ev(cfg, "vllm_version")
    if v is None:
        return Finding(
            CHECK_ID,
            Status.UNKNOWN,
            "vLLM version unknown",
            {**evidence, "question": questions(["vllm_version"])[0]},
            "Give the server URL, the start-up log or the command line (docker image tag).",
        )
    bugs = bugs_affecting(v)
    if bugs:
        b = bugs[0]
        return Finding(
            CHECK_ID,
            Status.WARN,
            f"vLLM {fmt(v)} carries the pooling livelock bug (vllm#{b.id})",
            {
                **evidence,
                "affected_range": f">= {fmt(LIVELOCK_FIRST_AFFECTED)}, < {fmt(LIVELOCK_FIXED_IN)}",
                "fixed_in": fmt(LIVELOCK_FIXED_IN),
                "reported_related": [f"{r} ({d}{', seen on ' + s if s else ''})" for r, s, d in REPORTED],
            },
            f"Upgrade to vLLM >= {fmt(LIVELOCK_FIXED_IN)}. Whether this deployment can hit the bug is the "
            "pooling-livelock-risk verdict.",
            list(b.refs),
            explanation=f"{b.title}; {b.note}.",
        )
    if v < LIVELOCK_FIRST_AFFECTED:
        return Finding(
            CHECK_ID,
            Status.WARN,
            f"vLLM {fmt(v)} is older than any release these checks were read from",
            evidence,
            f"Upgrade to vLLM >= {fmt(LIVELOCK_FIXED_IN)}.",
            ["vllm#48039"],
        )
    return Finding(
        CHECK_ID,
        Status.PASS,
        f"vLLM {fmt(v)} carries the pooling livelock fix (vllm#48039)",
        {**evidence, "fixed_in": fmt(LIVELOCK_FIXED_IN)},
        refs=["vllm#48039", "vllm#55427"],
    )

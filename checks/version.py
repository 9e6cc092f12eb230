"""vLLM version against the catalogue's version-bound failure modes (triage.catalogue)."""

from __future__ import annotations

from checks._util import ev, unknown, version_of
from triage.catalogue import MODES, POOLING_LIVELOCK, RELATED_REPORTS, fmt
from triage.catalogue.pooling_support import vendor_build
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

CHECK_ID = "vllm-version"


def check(cfg: EffectiveConfig) -> Finding:
    """The release's verdict; a vendor's build (NGC's '+….nv26.01') is named as such first: its errors may be its
    own (triage/catalogue/pooling_support.toml `vendor`)."""
    found = _release(cfg)
    vendor = vendor_build(cfg.get("vllm_build") or cfg.get("vllm_version"))
    if vendor is None:
        return found
    name, image, ref = vendor
    build = cfg.get("vllm_build") or cfg.get("vllm_version")
    title = (f"vLLM {build} is {name} ({image}), not an upstream release: an error seen on it may be the build's "
             f"own ({ref}); {found.title}")
    fix = (f"Compare with upstream: the same command on upstream vLLM (pip install vllm, or the vllm/vllm-openai "
           f"image of the same or a newer release) or a newer {image.split(':')[0]} image; an error only the vendor "
           f"build shows is the vendor's to fix. {found.fix}")
    return Finding(CHECK_ID, Status.WARN if found.status in (Status.PASS, Status.UNKNOWN) else found.status, title,
                   {**found.evidence, "vllm_build": build}, fix, [ref, *found.refs], explanation=found.explanation,
                   failure_mode="")


def _release(cfg: EffectiveConfig) -> Finding:
    v = version_of(cfg)
    evidence = ev(cfg, "vllm_version")
    if v is None:
        return unknown(CHECK_ID, "vLLM version unknown", evidence, "vllm_version",
            "Give the server URL, the start-up log or the command line (docker image tag).")
    bound = [m for m in MODES.values() if m.version_bound]
    hits = [m for m in bound if m.version_status(v) == "affected"]
    unsure = [m for m in bound if m.version_status(v) == "unknown"]
    if hits:
        m = hits[0]
        return Finding.of(
            m,
            CHECK_ID,
            Status.WARN,
            f"vLLM {fmt(v)} carries the pooling livelock bug ({m.refs[0]})"
            if m is POOLING_LIVELOCK
            else f"vLLM {fmt(v)} is affected by: {m.title} ({m.refs[0] if m.refs else m.id})",
            {
                **evidence,
                "affected_range": m.affected_text,
                "fixed_in": fmt(m.fixed_in),
                "failure_modes": [h.id for h in hits],
                "reported_related": [f"{r} ({d}{', seen on ' + s if s else ''})" for r, s, d in RELATED_REPORTS],
            },
            fix=m.release_fix("pooling-livelock-risk"),
            explanation=f"{m.title}. {m.mechanism}",
            failure_mode="",  # the release's verdict: the risk verdict reports the record
        )
    if unsure:
        m = unsure[0]
        return Finding.of(
            m,
            CHECK_ID,
            Status.UNKNOWN,
            f"vLLM {m.version_note(v)}",
            {**evidence, "affected_range": m.affected_text, "fixed_in": fmt(m.fixed_in)},
            fix=f"Check the build's commit against {m.fix_ref}, or upgrade to a release: {m.fixed_text}.",
            failure_mode="",
        )
    if POOLING_LIVELOCK.version_status(v) == "older":
        return Finding(
            CHECK_ID,
            Status.WARN,
            f"vLLM {fmt(v)} is older than any release these checks were read from",
            evidence,
            POOLING_LIVELOCK.release_fix(),
            [POOLING_LIVELOCK.fix_ref or ""],
        )
    return Finding(
        CHECK_ID,
        Status.PASS,
        f"vLLM {fmt(v)} carries the pooling livelock fix ({POOLING_LIVELOCK.fix_ref})",
        {**evidence, "fixed_in": fmt(POOLING_LIVELOCK.fixed_in)},
        refs=[POOLING_LIVELOCK.fix_ref or "", POOLING_LIVELOCK.refs[0]],
    )

"""The seed matrix of the pooling livelock (opt-in: it can hang a server of an affected release until aborted).

Cases: [SHORT], [LONG], [LONG, SHORT], [SHORT, LONG] with truncate_prompt_tokens =
max_model_len (the report's setting), max_model_len - 1 (the workaround: must pass) and -1
(maps to max_model_len for pooling), plus a concurrent variant (several [SHORT, LONG] at once,
so in-flight tokens approach the batch budget). Facts: shared/reference/vllm-embedding-facts.md §1.

A case is judged only on the server's own answer or a stall seen on on-time samples: one a proxy cut (its 502/504,
outcome proxy-error) or one that ran out its deadline across the observer's own gaps is "unknown" (``unjudged``),
never counted as passing or failing; the matrix names those cases and why.
"""
from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING as STUCK_MODE, explain_stall, word_stall
from triage.catalogue.records import NO_RECOVERY_AFTER_ABORT
from triage.findings import Finding, Status
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, PROXY_ERROR, SLOW, UNREACHABLE, ProbeOutcome
from triage.stall import LIVELOCK, STUCK_WAITING

SET = "seed"
CONCURRENCY = 4
# a heavier concurrent case, run only when named exactly (the lab twin does): at a budget equal to max_model_len the
# hang needs a short and a long input admitted in one scheduler step, which more requests in flight make likely on a
# fast box where four may each be served alone
STRESS_CONCURRENCY = 16
# the seed's load test, run only when named exactly (``verify``, the twin's fix checks): LOAD_CONCURRENCY requests at
# once, each a batch of LOAD_BATCH long documents sorted longest first (the longest truncated to the case's
# truncation, the others cut to 3/4, 1/2, 1/4 of it): in-flight tokens well past any default batch budget, the
# length-sorted batching under which one long document alone hangs an affected release
LOAD_CONCURRENCY = 8
LOAD_BATCH = 4


def load_case_name(truncation: int) -> str:
    return f"seed-load{LOAD_CONCURRENCY}x{LOAD_BATCH}-t{truncation}"


@dataclass(frozen=True)
class SeedCase:
    name: str
    inputs: tuple[str, ...]
    truncate_prompt_tokens: int
    concurrency: int = 1
    sorted_lengths: bool = False  # the load test: each batch's documents cut longest first

    @property
    def description(self) -> str:
        docs = (f"{len(self.inputs)} long documents sorted longest first" if self.sorted_lengths
                else ", ".join(self.inputs))
        base = f"[{docs}] truncate_prompt_tokens={self.truncate_prompt_tokens}"
        return f"{self.concurrency} x {base} at once" if self.concurrency > 1 else base


def seed_cases(max_model_len: int, only: Iterable[str] | None = None,
               client_truncation: int | None = None) -> list[SeedCase]:
    """The matrix for this max_model_len; ``only`` keeps names matching any glob pattern.

    ``client_truncation`` (the target's own truncate_prompt_tokens) adds its row when it is not
    already one of max_model_len, max_model_len - 1, -1: "does my client's setting hang?".
    """
    cases = []
    truncs = [max_model_len, max_model_len - 1, -1]
    if client_truncation is not None and client_truncation not in truncs and 0 < client_truncation <= max_model_len:
        truncs.append(client_truncation)
    for trunc in truncs:
        for inputs in (("SHORT",), ("LONG",), ("LONG", "SHORT"), ("SHORT", "LONG")):
            cases.append(SeedCase(f"seed-{'-'.join(i.lower() for i in inputs)}-t{trunc}", inputs, trunc))
    cases.append(SeedCase(f"seed-concurrent{CONCURRENCY}-short-long-t{max_model_len}", ("SHORT", "LONG"),
                          max_model_len, CONCURRENCY))
    pats = list(only or [])
    stress = SeedCase(f"seed-concurrent{STRESS_CONCURRENCY}-short-long-t{max_model_len}", ("SHORT", "LONG"),
                      max_model_len, STRESS_CONCURRENCY)
    named = [stress] + [SeedCase(load_case_name(t), ("LONG",) * LOAD_BATCH, t, LOAD_CONCURRENCY, True)
                        for t in truncs]
    return ([c for c in cases if not pats or any(fnmatch.fnmatch(c.name, p) for p in pats)]
            + [c for c in named if c.name in pats])


def _sorted_lengths(texts: list[str]) -> list[str]:
    """The load test's batch: the first text whole, each next one cut to a smaller share of its words."""
    out = []
    for i, t in enumerate(texts):
        words = t.split()
        out.append(" ".join(words[: max(1, len(words) * (len(texts) - i) // len(texts))]))
    return out


async def run(ctx: ProbeContext, only: Iterable[str] | None = None) -> AsyncIterator[ProbeOutcome | Finding]:
    outcomes: list[ProbeOutcome] = []
    for case in seed_cases(ctx.max_model_len, only, ctx.client_truncation):
        bodies, tokens = [], []
        for _ in range(case.concurrency):
            texts, counts = await ctx.texts(case.inputs)
            if case.sorted_lengths:
                texts = _sorted_lengths(texts)
            bodies.append(ctx.body(texts, truncate_prompt_tokens=case.truncate_prompt_tokens))
            tokens.append(counts)
        out = await ctx.monitored(case.name, SET, bodies, case.description)
        out.extra.update({"inputs": list(case.inputs), "truncate_prompt_tokens": case.truncate_prompt_tokens,
                          "concurrency": case.concurrency, "input_tokens_before_truncation": tokens[0]})
        outcomes.append(out)
        yield out
    for f in seed_findings(outcomes, ctx.max_model_len, ctx.vllm_version):
        yield f


def held_tokens(o: ProbeOutcome, max_model_len: int) -> int | None:
    """The prompt tokens of the case's longest input after truncation (-1 is max_model_len); None when unknown."""
    counts = [n for n in (o.extra.get("input_tokens_before_truncation") or []) if isinstance(n, int)]
    trunc = o.extra.get("truncate_prompt_tokens")
    if not counts or not isinstance(trunc, int):
        return None
    cap = max_model_len if trunc == -1 else trunc
    return min(max(counts), cap, max_model_len)


def _facts(o: ProbeOutcome, max_model_len: int, version: str | None) -> dict[str, Any]:
    """What the differential reads of one case (triage.catalogue.engine_clues names the keys)."""
    return {"vllm.version": version, "engine.max_model_len": max_model_len,
            "request.prompt_tokens": held_tokens(o, max_model_len), "stall.kind": o.outcome}


def _evidence(o: ProbeOutcome, max_model_len: int, version: str | None) -> dict[str, Any]:
    return {"facts": _facts(o, max_model_len, version), "probe": o.probe, "case": o.description,
            "outcome": o.outcome, "time_to_verdict_s": o.time_to_verdict_s,
            "samples": o.sample_dicts(), "recovery": o.recovery,
            "health_during_stall": o.extra.get("health_during_stall"),
            "truncate_prompt_tokens": o.extra.get("truncate_prompt_tokens"), "max_model_len": max_model_len,
            "vllm_version": version, "source": "live probe: POST /v1/embeddings while scraping GET /metrics"}


def unjudged(o: ProbeOutcome) -> str | None:
    """Why a case's outcome says nothing about the server (a proxy cut it; its deadline ran out across the
    observer's own gaps), else None."""
    if o.outcome == PROXY_ERROR:
        cut = (o.response or {}).get("proxy") or next((x.proxy for x in o.exchanges if x.proxy), None)
        return f"cut by {cut or 'a proxy'}"
    gaps = o.extra.get("observer_gaps")
    if o.outcome == SLOW and isinstance(gaps, dict):
        return f"not judged: the observer's own samples came up to {gaps.get('longest_s')} s late"
    return None


def _window(o: ProbeOutcome) -> dict[str, Any] | None:
    """The stall rule's reading of the probe's episode (its stored shape: a probe read back has it in ``extra``)."""
    return dict(o.episode.detail) if o.episode is not None else o.extra.get("stall")


def seed_findings(outcomes: list[ProbeOutcome], max_model_len: int, version: str | None) -> list[Finding]:
    """Pure: findings from the matrix outcomes (probe-livelock, probe-stuck-waiting, probe-recovery, probe-matrix)."""
    out: list[Finding] = []
    ran = [o for o in outcomes if o.outcome != "skipped"]
    livelocks = [o for o in ran if o.outcome == LIVELOCK]
    stuck = [o for o in ran if o.outcome == STUCK_WAITING]
    for o in livelocks + stuck:  # the catalogue words it; a version with the fix is never the pooling livelock
        words = word_stall("probe", o.outcome, version, subject=o.description,
                           seen=f"; verdict after {o.time_to_verdict_s} s",
                           cfg={"max_model_len": max_model_len,
                                "truncate_prompt_tokens": o.extra.get("truncate_prompt_tokens")})
        out.append(Finding(status=Status.FAIL, evidence={**_evidence(o, max_model_len, version),
                                                         "stall": _window(o)}, **words.finding_args()))
    cut = {o.probe: why for o in ran if (why := unjudged(o))}
    if not livelocks and ran:
        judged = len(ran) - len(cut)
        out.append(Finding("probe-livelock", Status.UNKNOWN if cut else Status.PASS,
                           f"no livelock in {judged} seed probes" + (f"; {len(cut)} unknown ({_cut_text(cut)})"
                                                                     if cut else ""),
                           {"cases": {o.probe: o.outcome for o in ran}, "unjudged": cut, "vllm_version": version,
                            "max_model_len": max_model_len}, refs=[POOLING_LIVELOCK.refs[0]],
                           failure_mode=POOLING_LIVELOCK.id))
    aborted = [o for o in ran if o.recovery is not None]
    failed = [o for o in aborted if not o.recovery.get("recovered")]  # type: ignore[union-attr]
    for o in failed:
        out.append(Finding.of(NO_RECOVERY_AFTER_ABORT, "probe-recovery", Status.FAIL,
                              f"{o.probe}: the server did not recover after the abort",
                              {"probe": o.probe, "recovery": o.recovery, "outcome": o.outcome}))
    if aborted and not failed:
        times = [o.recovery["recovered_after_abort_s"] for o in aborted]  # type: ignore[index]
        out.append(Finding("probe-recovery", Status.PASS,
                           f"recovered after every abort ({len(aborted)}), within {max(times)} s",
                           {"recoveries": {o.probe: o.recovery for o in aborted},
                            "guide_claim": "`nvidia-smi --gpu-reset` as a fix", "verdict": "refuted",
                            "why": "closing the client connection alone freed the engine"}))
    out.append(matrix_finding(ran, max_model_len, version))
    return out


def _cut_text(cut: dict[str, str]) -> str:
    whys = sorted(set(cut.values()))
    return ", ".join(sorted(cut)[:6]) + (f" and {len(cut) - 6} more" if len(cut) > 6 else "") + ": " + "; ".join(
        whys[:3])


def matrix_finding(ran: list[ProbeOutcome], max_model_len: int, version: str | None) -> Finding:
    cut = {o.probe: why for o in ran if (why := unjudged(o))}
    cases = {o.probe: {"case": o.description, "outcome": o.outcome, "time_to_verdict_s": o.time_to_verdict_s,
                       "http_status": o.http_status, **({"unknown": cut[o.probe]} if o.probe in cut else {})}
             for o in ran}
    workaround = [o for o in ran if o.extra.get("truncate_prompt_tokens") == max_model_len - 1]
    hangs = [o for o in ran if o.outcome in (LIVELOCK, STUCK_WAITING)]
    # a hang is evidence whatever else happened; a case a proxy cut (or not judged) is neither a pass nor a failure
    workaround_ok: bool | None = None
    if any(o in hangs for o in workaround):
        workaround_ok = False
    elif workaround and not any(o.probe in cut for o in workaround):
        workaround_ok = all(o.outcome == OK for o in workaround)
    soft = [o for o in ran if o.outcome in (HTTP_ERROR, SLOW, UNREACHABLE) and o.probe not in cut]
    status = Status.FAIL if hangs else Status.WARN if soft else Status.UNKNOWN if cut else Status.PASS
    kinds = sorted({o.outcome for o in hangs})
    title = (f"seed matrix: {len(hangs)} of {len(ran)} cases hang ({', '.join(kinds)})" if hangs
             else f"seed matrix: {len(ran) - len(soft) - len(cut)} of {len(ran)} cases ok")
    if cut:
        title += f"; {len(cut)} unknown ({_cut_text(cut)})"
    if workaround_ok is not None:
        title += "; truncate to max_model_len - 1 " + ("passes" if workaround_ok else "does NOT pass")
    elif workaround:
        title += "; truncate to max_model_len - 1: unknown (its cases were not judged)"
    at_max = [o for o in ran if held_tokens(o, max_model_len) == max_model_len]
    facts = {"vllm.version": version, "engine.max_model_len": max_model_len, "matrix.workaround_ok": workaround_ok,
             "matrix.hangs_at_max_model_len": any(o.outcome == LIVELOCK for o in at_max) if at_max else None}
    return Finding("probe-matrix", status, title,
                   {"facts": facts, "cases": cases, "workaround_ok": workaround_ok, "max_model_len": max_model_len,
                    "vllm_version": version, "unjudged": cut},
                   _livelock_fix(max_model_len, max_model_len) if any(o.outcome == LIVELOCK for o in hangs)
                   else (STUCK_MODE.fix(now=True) if hangs else ""),
                   [POOLING_LIVELOCK.refs[0]], failure_mode=_matrix_mode(hangs, version))


def _matrix_mode(hangs: list[ProbeOutcome], version: str | None) -> str:
    """The record the matrix reports: the stall its hangs are (version-gated), else the livelock it looked for."""
    if any(o.outcome == LIVELOCK for o in hangs):
        return explain_stall(LIVELOCK, version).id
    return STUCK_MODE.id if hangs else POOLING_LIVELOCK.id


def _livelock_fix(max_model_len: int, truncate_prompt_tokens: Any) -> str:
    return POOLING_LIVELOCK.fix({"max_model_len": max_model_len, "truncate_prompt_tokens": truncate_prompt_tokens},
                                now=True)

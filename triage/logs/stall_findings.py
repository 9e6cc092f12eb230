"""Stall findings of the log post-mortem: livelock suspect, stuck-waiting, livelock-prone configuration.

log-livelock-suspect status, and why:
- fail when the stats lines alone cross the stall threshold (DEBUG logging keeps printing the
  zero-throughput lines), or when the log goes silent after the stall-shaped line AND the same
  log's start-up lines show every precondition of the pooling livelock (affected version, pooling runner, chunked
  prefill on). vLLM writes a stats line only while the engine is busy, so one such line before the
  log goes quiet is the whole trace of a hang: the finding says how long it could have lasted.
- warn otherwise. Silence after `Running: N reqs, Waiting: 0 reqs` at 0.0 tokens/s is exactly
  what the livelock leaves (the INFO line is demoted to DEBUG), but a server stopped or a log cut
  at that moment looks the same, so a log alone is a suspect: `probe` or `watch` confirms it.
- the catalogue words the finding (``word_stall``): on a version that carries the fix the stall is never the
  pooling livelock.
Token arithmetic: prompt tokens/s x the stats interval = tokens computed in that interval; busy
intervals before the stall summing to exactly max_model_len - 1 is the pooling livelock's fingerprint (the
stuck request computed all but its last token), shown in the evidence when it holds.
log-livelock-prone-config: a log whose start-up lines prove the preconditions (affected version,
pooling, chunked prefill on, budget <= max_model_len) never passes overall, hang or not.
"""

from __future__ import annotations

from typing import Any, Optional

from triage.catalogue import POOLING_LIVELOCK, word_stall
from triage.catalogue.records import pooling_livelock_grade
from triage.display import utc_text
from triage.findings import Finding, Status
from triage.episode import Episode
from triage.logs.episodes import possible_duration_s, prompt_tokens_before
from triage.logs.episode_endings import resolution
from triage.vllm.defaults import max_num_batched_tokens_default


def livelock_preconditions(config: dict[str, Any]) -> dict[str, Any]:
    """Which preconditions of the pooling livelock the log's own start-up lines show (None = not in the log)."""
    affected = POOLING_LIVELOCK.affects(config.get("vllm_version"))
    runner = config.get("runner")
    pooling = (
        None
        if runner is None and config.get("pooling_type") is None
        else (runner == "pooling" or config.get("pooling_type") is not None)
    )
    budget, budget_from = config.get("max_num_batched_tokens"), "log"
    if budget is None and config.get("enable_chunked_prefill"):
        rule = max_num_batched_tokens_default(device=config.get("device"), gpu_name=config.get("gpu_name"),
                                              release=config.get("vllm_version"))
        if rule is not None and isinstance(rule.value, int):
            budget, budget_from = rule.value, "default rule (not set in the log)"
    mml = config.get("max_model_len")
    return {
        "vllm_version": config.get("vllm_version"),
        "version_affected": affected,
        "pooling": pooling,
        "enable_chunked_prefill": config.get("enable_chunked_prefill"),
        "max_model_len": mml,
        "max_num_batched_tokens": budget,
        "max_num_batched_tokens_from": budget_from if budget is not None else None,
        "budget_chunks_max_model_len": (pooling_livelock_grade(budget, mml).status == Status.FAIL)
        if isinstance(budget, int) and isinstance(mml, int)
        else None,
    }


def livelock_prone(pre: dict[str, Any]) -> bool:
    """Every precondition proven by the log itself: a max_model_len prompt will hang this server."""
    return bool(pre["version_affected"] and pre["pooling"] and pre["enable_chunked_prefill"]
                and pre["budget_chunks_max_model_len"])


def token_arithmetic(ep: Episode, max_model_len: Any) -> Optional[dict[str, Any]]:
    """The pooling livelock's fingerprint in the stats lines before the stall: busy intervals whose prompt tokens
    (throughput x interval) sum to exactly max_model_len - 1 (the last one alone, or all of them)."""
    if not isinstance(max_model_len, int) or not ep.detail["before"]:
        return None
    rows = prompt_tokens_before(ep)
    want = max_model_len - 1
    for k in range(1, len(rows) + 1):
        tail = rows[-k:]
        total = sum(t for _n, _tp, t in tail)
        if abs(total - want) <= k:  # the line prints tokens/s to 0.1: +-0.5 token per interval
            return {
                "interval_s": ep.detail["interval_s"],
                "lines": [{"line": n, "prompt_tokens_per_s": tp, "tokens": t} for n, tp, t in tail],
                "sum": total,
                "max_model_len_minus_1": want,
                "holds": True,
            }
    return None


def _episode_evidence(ep: Episode) -> dict[str, Any]:
    return {
        "engine": ep.engine or "(unlabelled)",
        "window": {
            "start": utc_text(ep.start),
            "last_stall_line_at": utc_text(ep.last_seen),
            "end": utc_text(ep.end),
            "duration_s": ep.duration_s,
            "ended_by": ep.detail["ended_by"],
            "timestamps": ep.start is not None,
        },
        "lines": [{"line": n, "text": t} for n, t in ep.lines],
        "first_line": ep.detail["start_line"],
        "last_stall_line": ep.detail["last_stall_line"],
        "max_running": ep.max_running,
        "max_waiting": ep.max_waiting,
        "confirmed_by_stats_lines": ep.confirmed,
        "silent_after": ep.detail["silent"],
        "stats_interval_s": ep.detail["interval_s"],
        "possible_duration_s": None
        if possible_duration_s(ep) is None
        else {"at_least": possible_duration_s(ep)[0], "at_most": round(possible_duration_s(ep)[1], 1)},
        "source": "log",
    }


def _stall_facts(config: dict[str, Any], kind: str, held_max: bool = False) -> dict[str, Any]:
    """What the differential reads of a log's stall (triage.catalogue.engine_clues names the keys); the held prompt
    is max_model_len tokens when the busy intervals before the stall computed max_model_len - 1 of them."""
    mml = config.get("max_model_len")
    return {"vllm.version": config.get("vllm_version"), "engine.max_model_len": mml,
            "engine.max_num_batched_tokens": config.get("max_num_batched_tokens"),
            "engine.chunked_prefill": config.get("enable_chunked_prefill"),
            "engine.kv_cache_tokens": config.get("kv_cache_size_tokens"), "stall.kind": kind,
            "request.prompt_tokens": mml if held_max and isinstance(mml, int) else None}


def livelock_finding(eps: list[Episode], config: dict[str, Any]) -> Finding:
    pre = livelock_preconditions(config)
    all_pre = bool(pre["version_affected"] and pre["pooling"] and pre["enable_chunked_prefill"])
    worst = max(eps, key=lambda e: (e.confirmed, e.duration_s or 0, e.max_running))
    status = Status.FAIL if any(e.confirmed for e in eps) or all_pre else Status.WARN
    ev = _episode_evidence(worst)
    ev.update({"episodes": len(eps), "preconditions_in_log": pre})
    coarse = resolution({worst.engine: worst.detail["interval_s"]})
    if coarse is not None and worst.detail["held"]:
        ev["resolution"] = dict(coarse, note="one stats line per interval: held windows of several shorter hangs "
                                             "(each ended by a client) can read as one")
    arith = token_arithmetic(worst, pre["max_model_len"])
    if arith is not None:
        ev["token_arithmetic"] = arith
    ev["facts"] = _stall_facts(config, "livelock", arith is not None)
    if len(eps) > 1:
        ev["other_windows"] = [
            {"start": utc_text(e.start), "end": utc_text(e.end), "line": e.detail["start_line"]}
            for e in eps
            if e is not worst
        ][:10]
    when = f" from {ev['window']['start']}" if worst.start is not None else f" at line {worst.detail['start_line']}"
    why = (
        "the stats lines kept showing it past the stall threshold"
        if worst.confirmed
        else "then the stats lines stop (vLLM demotes the line to DEBUG after two zero-throughput intervals)"
    )
    span = possible_duration_s(worst)
    lasted = f" (could have lasted {span[0]:.0f}-{span[1]:.0f} s)" if span and not worst.confirmed else ""
    if arith is not None:
        why += (f"; the busy intervals before it computed {arith['sum']} prompt tokens = max_model_len - 1, "
                "the stuck request's fingerprint")
    note = f"A stats line shows requests running, none waiting and zero prompt and generation throughput; {why}."
    if POOLING_LIVELOCK.affects(config.get("vllm_version")) is not False:
        note += (" The log's start-up lines show every precondition (affected version, pooling runner, chunked "
                 "prefill on)." if all_pre else " A log alone cannot tell this from a server stopped at that "
                 "moment; confirm with `probe` or `watch`.")
    words = word_stall("log", "livelock", config.get("vllm_version"), subject=f"Engine{when}", cfg=config,
                       suspect=not worst.confirmed, note=note,
                       seen=f"; the stats lines: Running {worst.max_running}, "
                       + ("KV cache usage held while other requests finished" if worst.detail["held"]
                          else "Waiting 0, 0.0 tokens/s")
                       + ("" if worst.confirmed else f", then silence{lasted}"))
    return Finding(status=status, evidence=ev, **words.finding_args())


def livelock_prone_finding(config: dict[str, Any]) -> Optional[Finding]:
    """A server configured to hang on a max_model_len prompt, proven by its own start-up lines."""
    pre = livelock_preconditions(config)
    if not livelock_prone(pre):
        return None
    return Finding.of(
        POOLING_LIVELOCK,
        check="log-livelock-prone-config",
        status=Status.WARN,
        title=f"Configured to hang on a max_model_len prompt: vLLM {pre['vllm_version']}, pooling, chunked prefill "
        f"on, budget {pre['max_num_batched_tokens']} <= max_model_len {pre['max_model_len']}",
        evidence={"preconditions_in_log": pre, "source": "log"},
        cfg=config,
        explanation=(
            "No hang has to be in the log for this: every precondition of "
            f"{POOLING_LIVELOCK.refs[0]} is in its start-up lines, so the first request of exactly max_model_len "
            f"tokens (truncate_prompt_tokens = max_model_len or -1) will hang. {POOLING_LIVELOCK.mechanism}"
        ),
        failure_mode="",  # a risk read from the config: the id is declared with no record
    )


def stuck_waiting_finding(eps: list[Episode], config: dict[str, Any]) -> Finding:
    worst = max(eps, key=lambda e: (e.confirmed, e.duration_s or 0, e.max_waiting))
    ev = _episode_evidence(worst)
    ev.update(
        {
            "episodes": len(eps),
            "enable_chunked_prefill": config.get("enable_chunked_prefill"),
            "max_num_batched_tokens": config.get("max_num_batched_tokens"),
            "max_model_len": config.get("max_model_len"),
        }
    )
    when = f" from {ev['window']['start']}" if worst.start is not None else f" at line {worst.detail['start_line']}"
    budget, max_len = config.get("max_num_batched_tokens"), config.get("max_model_len")
    # chunked prefill off and a budget below max_model_len: a prompt longer than the budget can never be
    # scheduled (seen on 0.32.0 BERT with --enable-chunked-prefill --max-num-batched-tokens 128)
    unadmittable = config.get("enable_chunked_prefill") is False and bool(budget and max_len and budget < max_len)
    ev["prompt_longer_than_budget_never_admitted"] = unadmittable
    ev["facts"] = _stall_facts(config, "stuck-waiting")
    words = word_stall("log", "stuck-waiting", config.get("vllm_version"), subject=f"Engine{when}",
                       suspect=not (worst.confirmed or unadmittable),
                       seen=f"; the stats lines: Running 0, Waiting {worst.max_waiting}, 0.0 tokens/s"
                       + ("" if worst.confirmed else ", then silence"))
    return Finding(status=Status.FAIL if worst.confirmed or unadmittable else Status.WARN, evidence=ev,
                   **words.finding_args())

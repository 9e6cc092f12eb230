"""Post-mortem findings from what one pass over a log saw (pure: no I/O).

log-livelock-suspect status, and why:
- fail when the stats lines alone cross the stall threshold (DEBUG logging keeps printing the
  zero-throughput lines), or when the log goes silent after the stall-shaped line AND the same
  log's start-up lines show every #55427 precondition (vLLM ≤ 0.31.0, pooling runner, chunked
  prefill on).
- warn otherwise. Silence after `Running: N reqs, Waiting: 0 reqs` at 0.0 tokens/s is exactly
  what the livelock leaves (the INFO line is demoted to DEBUG), but a server stopped or a log cut
  at that moment looks the same, so a log alone is a suspect: `probe` or `watch` confirms it.
  This is what the issue's two seed lines give: warn, with the lines and the fixes.
"""

from __future__ import annotations

from datetime import datetime, UTC
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Sequence

from triage.findings import Finding, Status

if TYPE_CHECKING:
    from triage.logs.analyze import ErrorHits
    from triage.logs.episodes import StallEpisode

LIVELOCK_REFS = [
    "vllm#55427",
    "vllm#48039 (fix, in 0.32.0)",
    "affected: 0.25.1–0.31.0 (and 0.10.2–0.23.0)",
    "vllm#29496",
    "vllm#47971",
]
LIVELOCK_FIX = (
    "Now: abort the oldest in-flight request (close its client connection) — the engine frees at once. "
    "Then one of: upgrade to vLLM ≥ 0.32.0 (fix PR #48039); or make clients truncate to max_model_len − 1 "
    "tokens (truncate_prompt_tokens = max_model_len − 1, never −1 or max_model_len); or disable chunked prefill "
    "(--no-enable-chunked-prefill; vLLM then raises max_num_batched_tokens to max_model_len, which costs memory)."
)
STUCK_WAITING_FIX = (
    "Now: abort the waiting request (close its client connection). Then make every prompt admissible: with chunked "
    "prefill off (encoder-only models: 'Disabling chunked prefill for model without KVCache') a prompt longer than "
    "max_num_batched_tokens is never scheduled — raise --max-num-batched-tokens to ≥ max_model_len or drop the "
    "flag; a prompt larger than the KV cache (vllm#39734) needs a bigger KV cache or a smaller max_model_len."
)


def _fmt_ts(ts: Optional[float]) -> Optional[str]:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _version_tuple(v: Any) -> Optional[tuple[int, ...]]:
    try:
        return tuple(int(x) for x in str(v).split("+")[0].split(".")[:3])
    except ValueError:
        return None


def livelock_preconditions(config: dict[str, Any]) -> dict[str, Any]:
    """Which #55427 preconditions the log's own start-up lines show (None = not in the log)."""
    ver = _version_tuple(config.get("vllm_version")) if config.get("vllm_version") else None
    affected = None if ver is None else ((0, 25, 1) <= ver <= (0, 31, 99) or (0, 10, 2) <= ver <= (0, 23, 99))
    runner = config.get("runner")
    pooling = (
        None
        if runner is None and config.get("pooling_type") is None
        else (runner == "pooling" or config.get("pooling_type") is not None)
    )
    return {
        "vllm_version": config.get("vllm_version"),
        "version_affected": affected,
        "pooling": pooling,
        "enable_chunked_prefill": config.get("enable_chunked_prefill"),
        "max_model_len": config.get("max_model_len"),
        "max_num_batched_tokens": config.get("max_num_batched_tokens"),
    }


def _episode_evidence(ep: StallEpisode) -> dict[str, Any]:
    return {
        "engine": ep.engine or "(unlabelled)",
        "window": {
            "start": _fmt_ts(ep.start_ts),
            "last_stall_line_at": _fmt_ts(ep.last_stall_ts),
            "end": _fmt_ts(ep.end_ts),
            "duration_s": ep.duration_s,
            "ended_by": ep.ended_by,
            "timestamps": ep.start_ts is not None,
        },
        "lines": [{"line": n, "text": t} for n, t in ep.lines],
        "first_line": ep.start_line,
        "last_stall_line": ep.last_stall_line,
        "max_running": ep.max_running,
        "max_waiting": ep.max_waiting,
        "confirmed_by_stats_lines": ep.confirmed,
        "silent_after": ep.silent,
        "source": "log",
    }


def _livelock(eps: list[StallEpisode], config: dict[str, Any]) -> Finding:
    pre = livelock_preconditions(config)
    all_pre = bool(pre["version_affected"] and pre["pooling"] and pre["enable_chunked_prefill"])
    worst = max(eps, key=lambda e: (e.confirmed, e.duration_s or 0, e.max_running))
    status = Status.FAIL if any(e.confirmed for e in eps) or all_pre else Status.WARN
    ev = _episode_evidence(worst)
    ev.update({"episodes": len(eps), "preconditions_in_log": pre})
    if len(eps) > 1:
        ev["other_windows"] = [
            {"start": _fmt_ts(e.start_ts), "end": _fmt_ts(e.end_ts), "line": e.start_line}
            for e in eps
            if e is not worst
        ][:10]
    when = f" from {ev['window']['start']}" if worst.start_ts is not None else f" at line {worst.start_line}"
    why = (
        "the stats lines kept showing it past the stall threshold"
        if worst.confirmed
        else "then the stats lines stop (vLLM demotes the line to DEBUG after two zero-throughput intervals)"
    )
    return Finding(
        check="log-livelock-suspect",
        status=status,
        title=f"Engine livelock suspect{when}: Running {worst.max_running}, Waiting 0, 0.0 tokens/s, then silence"
        if not worst.confirmed
        else f"Engine livelocked{when}: Running {worst.max_running}, Waiting 0, 0.0 tokens/s",
        evidence=ev,
        fix=LIVELOCK_FIX,
        refs=list(LIVELOCK_REFS),
        explanation=(
            "A stats line shows requests running, none waiting and zero prompt and generation throughput; "
            f"{why}. That is the pooling livelock of vllm #55427 (≤ 0.31.0): a prompt of exactly "
            "max_model_len tokens admitted as a partial chunk stops at max_model_len − 1 and is given 0 "
            "tokens every step. "
            + (
                "The log's start-up lines show every precondition (affected version, "
                "pooling runner, chunked prefill on)."
                if all_pre
                else "A log alone cannot tell this from a server stopped at that moment; "
                "confirm with `probe` or `watch`."
            )
        ),
    )


def _stuck_waiting(eps: list[StallEpisode], config: dict[str, Any]) -> Finding:
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
    when = f" from {ev['window']['start']}" if worst.start_ts is not None else f" at line {worst.start_line}"
    budget, max_len = config.get("max_num_batched_tokens"), config.get("max_model_len")
    # chunked prefill off and a budget below max_model_len: a prompt longer than the budget can never be
    # scheduled (seen on 0.32.0 BERT with --enable-chunked-prefill --max-num-batched-tokens 128)
    unadmittable = config.get("enable_chunked_prefill") is False and bool(budget and max_len and budget < max_len)
    ev["prompt_longer_than_budget_never_admitted"] = unadmittable
    return Finding(
        check="log-stuck-waiting",
        status=Status.FAIL if worst.confirmed or unadmittable else Status.WARN,
        title=f"Request stuck in WAITING{when}: Running 0, Waiting {worst.max_waiting}, 0.0 tokens/s"
        + ("" if worst.confirmed else ", then silence"),
        evidence=ev,
        fix=STUCK_WAITING_FIX,
        refs=["vllm#39734"],
        explanation=(
            "Requests wait, none runs, and nothing is computed: the scheduler cannot admit the head "
            "request. This is not the #55427 livelock (that one shows Running ≥ 1, Waiting 0)."
        ),
    )


def _error_finding(hit: ErrorHits, config: dict[str, Any], root_causes: Sequence[str] = ()) -> Finding:
    lines = [{"line": n, "text": t} for n, t in hit.lines]
    ev: dict[str, Any] = {"count": hit.count, "lines": lines, "first_at": _fmt_ts(hit.first_ts), "source": "log"}
    ev.update(hit.groups)
    if hit.check == "log-kv-cache-too-small":
        est = hit.groups.get("est")
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title=f"Start-up refused: one max_model_len ({hit.groups.get('max_len')}) sequence needs "
            f"{hit.groups.get('need')} GiB KV cache, only {hit.groups.get('avail')} GiB available",
            evidence=ev,
            refs=["vllm/v1/core/kv_cache_utils.py (0.8–0.32)"],
            fix=(f"Lower --max-model-len (vLLM estimates {est} fits)" if est else "Lower --max-model-len")
            + ", or give the KV cache more memory (--gpu-memory-utilization; on CPU --kv-cache-memory-bytes or "
            "VLLM_CPU_KVCACHE_SPACE), or shard the model (--tensor-parallel-size).",
            explanation="vLLM checks at start-up that one sequence of max_model_len tokens fits the KV cache.",
        )
    if hit.check == "log-unsupported-head-dim":
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title="The attention backend does not support this model's head_dim"
            + (f" ({hit.groups['hd']})" if hit.groups.get("hd") else ""),
            evidence=ev,
            refs=["vllm/v1/attention/backends/cpu_attn.py get_supported_head_sizes (0.31/0.32)"],
            fix=(
                "Serve a model whose head_dim the backend supports (CPU: 32, 64, 80, 96, 112, 128, 160, 192, 224, "
                "256, 512), or pick another attention backend (VLLM_ATTENTION_BACKEND) on GPU."
            ),
            explanation="The server may start and then fail on the first request with HTTP 500.",
        )
    if hit.check == "log-oom":
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title="Out of memory",
            evidence=ev,
            fix=(
                "Lower --gpu-memory-utilization headroom use, --max-num-batched-tokens, --max-num-seqs or "
                "--max-model-len; on CPU set --kv-cache-memory-bytes / VLLM_CPU_KVCACHE_SPACE to what the host has. "
                "Raising max_num_batched_tokens to dodge #55427 OOMs small cards: prefer truncating to "
                "max_model_len − 1 or upgrading."
            ),
            refs=["vllm#55427 (report: 24576/65536 OOMed on 12 GiB)"],
        )
    at_start = "start" in hit.groups.get("matched", "") or "initialization" in hit.groups.get("matched", "")
    if root_causes:
        ev["root_cause_findings"] = list(root_causes)
    cause = f" (root cause: {', '.join(root_causes)})" if root_causes else ""
    return Finding(
        check="log-engine-dead",
        status=Status.FAIL,
        title=(
            "EngineCore failed to start" if at_start else "EngineCore died: the server answers 500/503 until restarted"
        )
        + cause,
        evidence=ev,
        refs=["vllm/v1/engine/exceptions.py EngineDeadError, core.py (0.8–0.32)"],
        fix=(
            "Fix the root cause shown by the other findings, then restart the server."
            if root_causes
            else "Read the stack trace above the first EngineCore error line for the root cause (often OOM or an "
            "unsupported head_dim), fix it, restart the server. /health answers 503 once the engine is dead."
        ),
        explanation="An EngineCore that failed or died does not recover: every later request fails.",
    )


def _stopped_by_signal(dead: Finding, sig: ErrorHits, summary: dict[str, Any]) -> Finding:
    """An engine failure right after an outside stop request: a supervisor gave up on the start-up."""
    name = sig.groups.get("sig", "a signal")
    ev = dict(dead.evidence)
    ev["signal"] = {"name": name, "line": sig.lines[0][0] if sig.lines else None, "at": _fmt_ts(sig.first_ts)}
    started = summary.get("first_ts")
    after = f" {sig.first_ts - started:.0f} s after the log began" if started and sig.first_ts else ""
    if after:
        ev["signal"]["seconds_after_log_start"] = round(sig.first_ts - started, 1)  # type: ignore[operator]
    return Finding(
        check=dead.check,
        status=dead.status,
        title=f"{dead.title} (stopped by {name}{after})",
        evidence=ev,
        refs=dead.refs,
        fix=(
            f"Something outside vLLM sent {name} while it was starting: a start-up or liveness timeout (Kubernetes "
            "probes, systemd TimeoutStartSec, a `timeout` wrapper) shorter than the start-up. Give start-up more "
            "time (model load, profiling and torch.compile; --enforce-eager skips the compile) and retry."
        ),
        explanation=dead.explanation,
    )


def build_findings(
    config: dict[str, Any], episodes: list[StallEpisode], errors: dict[str, ErrorHits], summary: dict[str, Any]
) -> list[Finding]:
    out: list[Finding] = []
    live = [e for e in episodes if e.kind == "livelock"]
    wait = [e for e in episodes if e.kind == "stuck-waiting"]
    if live:
        out.append(_livelock(live, config))
    if wait:
        out.append(_stuck_waiting(wait, config))
    causes = [c for c in ("log-kv-cache-too-small", "log-unsupported-head-dim", "log-oom") if c in errors]
    for check in causes:
        out.append(_error_finding(errors[check], config))
    if "log-engine-dead" in errors:
        dead = _error_finding(errors["log-engine-dead"], config, causes)
        sig = errors.get("signal")
        if sig is not None and not causes:
            dead = _stopped_by_signal(dead, sig, summary)
        out.append(dead)
    by_status = summary["access"]["by_status"]
    n5 = sum(n for st, n in by_status.items() if st.startswith("5"))
    if n5:
        top5 = [t for t in summary["access"]["top"] if str(t["status"]).startswith("5")]
        out.append(
            Finding(
                check="log-http-5xx",
                status=Status.WARN,
                title=f"{n5} server errors (HTTP 5xx) in the access log",
                evidence={"count": n5, "by_status": by_status, "top": top5, "source": "log"},
                fix="Look for 'EngineCore encountered' / out-of-memory lines before the first 5xx.",
            )
        )
    stats = summary["stats"]
    if not episodes:
        if stats["lines"]:
            out.append(
                Finding(
                    check="log-engine-stats",
                    status=Status.PASS,
                    title=f"No stall in {stats['lines']} engine stats lines",
                    evidence={
                        "stats": {k: stats[k] for k in ("lines", "engines", "max_running", "max_waiting")},
                        "source": "log",
                    },
                    explanation=(
                        "Limit: a livelock that starts on an idle engine leaves no stats line at "
                        "all (a pooling request's prompt tokens are counted only when it "
                        "finishes, so every interval is zero and the line stays at DEBUG). "
                        "A quiet log is not proof of health: use `probe` or `watch`."
                    ),
                )
            )
        else:
            out.append(
                Finding(
                    check="log-engine-stats",
                    status=Status.UNKNOWN,
                    title="No engine stats lines in this log: stalls cannot be judged from it",
                    evidence={"lines": summary["lines"], "source": "log"},
                    fix="Include the periodic 'Engine 000: Avg prompt throughput …' lines "
                    "(INFO level, every VLLM_LOG_STATS_INTERVAL s; not with --disable-log-stats).",
                )
            )
    return out

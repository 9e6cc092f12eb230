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

from triage.catalogue import ENGINE_DEAD, KV_CACHE_TOO_SMALL, OOM, POOLING_LIVELOCK, STUCK_WAITING, UNSUPPORTED_HEAD_DIM
from triage.findings import Finding, Status

from triage.logs.hits import ErrorHits
from triage.logs.startup import StartupEvents
from triage.logs.startup_verdicts import never_started as never_started_finding
from triage.logs.startup_verdicts import startup_findings, startup_oom, stats_disabled

if TYPE_CHECKING:
    from triage.logs.episodes import StallEpisode

def _fmt_ts(ts: Optional[float]) -> Optional[str]:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


def livelock_preconditions(config: dict[str, Any]) -> dict[str, Any]:
    """Which #55427 preconditions the log's own start-up lines show (None = not in the log)."""
    affected = POOLING_LIVELOCK.affects(config.get("vllm_version"))
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
        fix=POOLING_LIVELOCK.fix(config, now=True),
        refs=list(POOLING_LIVELOCK.refs),
        explanation=(
            "A stats line shows requests running, none waiting and zero prompt and generation throughput; "
            f"{why}. That is the pooling livelock of {POOLING_LIVELOCK.refs[0]} "
            f"({POOLING_LIVELOCK.affected_text}): {POOLING_LIVELOCK.mechanism} "
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
        fix=STUCK_WAITING.fix(now=True),
        refs=list(STUCK_WAITING.refs),
        explanation=STUCK_WAITING.mechanism,
    )


def _error_finding(hit: ErrorHits, config: dict[str, Any], root_causes: Sequence[str] = ()) -> Finding:
    lines = [{"line": n, "text": t} for n, t in hit.lines]
    ev: dict[str, Any] = {"count": hit.count, "lines": lines, "first_at": _fmt_ts(hit.first_ts), "source": "log"}
    ev.update(hit.groups)
    if hit.check == "log-kv-cache-too-small":
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title=f"Start-up refused: one max_model_len ({hit.groups.get('max_len')}) sequence needs "
            f"{hit.groups.get('need')} GiB KV cache, only {hit.groups.get('avail')} GiB available",
            evidence=ev,
            refs=list(KV_CACHE_TOO_SMALL.refs),
            fix=KV_CACHE_TOO_SMALL.fix(hit.groups),
            explanation=KV_CACHE_TOO_SMALL.mechanism,
        )
    if hit.check == "log-unsupported-head-dim":
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title="The attention backend does not support this model's head_dim"
            + (f" ({hit.groups['hd']})" if hit.groups.get("hd") else ""),
            evidence=ev,
            refs=list(UNSUPPORTED_HEAD_DIM.refs),
            fix=UNSUPPORTED_HEAD_DIM.fix(),
            explanation=UNSUPPORTED_HEAD_DIM.mechanism,
        )
    if hit.check == "log-oom":
        return Finding(
            check=hit.check,
            status=Status.FAIL,
            title=OOM.title,
            evidence=ev,
            fix=OOM.fix(),
            refs=list(OOM.refs),
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
        refs=list(ENGINE_DEAD.refs),
        fix=(
            "Fix the root cause shown by the other findings, then restart the server."
            if root_causes
            else ENGINE_DEAD.fix()
        ),
        explanation=ENGINE_DEAD.mechanism,
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
    config: dict[str, Any],
    episodes: list[StallEpisode],
    errors: dict[str, ErrorHits],
    summary: dict[str, Any],
    startup: Optional[StartupEvents] = None,
) -> list[Finding]:
    out: list[Finding] = []
    live = [e for e in episodes if e.kind == "livelock"]
    wait = [e for e in episodes if e.kind == "stuck-waiting"]
    if live:
        out.append(_livelock(live, config))
    if wait:
        out.append(_stuck_waiting(wait, config))
    # start-up part (issue 14): refusals and overrides; an OOM before the server listened is the start-up OOM
    started = startup.started if startup is not None else None
    never_started = startup is not None and started is None and not summary["access"]["total"] and not (
        summary["stats"]["lines"]
    )
    first_start = startup_findings(config, startup) if startup is not None else []
    out.extend(first_start)
    causes = [c for c in ("log-kv-cache-too-small", "log-unsupported-head-dim", "log-oom") if c in errors]
    for check in causes:
        f = _error_finding(errors[check], config)
        out.append(startup_oom(f, config) if check == "log-oom" and never_started else f)
    if any(f.status == Status.FAIL for f in first_start):
        causes.extend(f.check for f in first_start if f.status == Status.FAIL)
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
    if config.get("disable_log_stats") is True:
        out.append(stats_disabled(config, stats["lines"]))
    elif never_started and (config or errors or first_start):
        # a server that never started has no stats lines by nature: say why it did not start instead
        if not causes and "log-engine-dead" not in errors:
            out.append(never_started_finding(startup))  # type: ignore[arg-type]
    elif not episodes:
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

"""Post-mortem findings from what one pass over a log saw (pure: no I/O).

The stall findings (log-livelock-suspect, log-stuck-waiting, log-livelock-prone-config) live in
triage.logs.stall_findings; start-up refusals in triage.logs.startup_findings; this module adds the
error lines and the engine-stats summary and orders them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Sequence

from triage.catalogue import ENGINE_DEAD, KV_CACHE_TOO_SMALL, OOM, UNSUPPORTED_HEAD_DIM, get
from triage.catalogue.crashes import ARCHITECTURE_UNSUPPORTED
from triage.display import utc_text
from triage.catalogue.records import REQUEST_REFUSED, SERVER_ERRORS, refusal_candidates
from triage.findings import Finding, Status

from triage.logs.hits import ErrorHits
from triage.logs.episode_endings import RequestNotes, recurring_finding, resolution
from triage.logs.stall_findings import livelock_finding, livelock_prone_finding, stuck_waiting_finding
from triage.logs.startup_events import StartupEvents
from triage.logs.crash_findings import client_findings, traceback_findings
from triage.logs.tracebacks import Trace
from triage.catalogue.symptoms import REJECTED, STARTUP_REFUSAL
from triage.logs.startup_findings import never_started as never_started_finding
from triage.logs.startup_findings import startup_findings, startup_oom, stats_disabled

if TYPE_CHECKING:
    from triage.episode import Episode

def _error_finding(hit: ErrorHits, config: dict[str, Any], root_causes: Sequence[str] = ()) -> Finding:
    lines = [{"line": n, "text": t} for n, t in hit.lines]
    ev: dict[str, Any] = {"count": hit.count, "lines": lines, "first_at": utc_text(hit.first_ts), "source": "log"}
    ev.update(hit.groups)
    if hit.check == "log-kv-cache-too-small":
        return Finding.of(
            KV_CACHE_TOO_SMALL,
            check=hit.check,
            status=Status.FAIL,
            title=f"Start-up refused: one max_model_len ({hit.groups.get('max_len')}) sequence needs "
            f"{hit.groups.get('need')} GiB KV cache, only {hit.groups.get('avail')} GiB available",
            evidence=ev,
            cfg=hit.groups,
        )
    if hit.check == "log-unsupported-head-dim":
        return Finding.of(
            UNSUPPORTED_HEAD_DIM,
            check=hit.check,
            status=Status.FAIL,
            title="The attention backend does not support this model's head_dim"
            + (f" ({hit.groups['hd']})" if hit.groups.get("hd") else ""),
            evidence=ev,
        )
    if hit.check == "log-architecture-unsupported":
        archs = hit.groups.get("archs")
        said = (f"{archs}: not in this release's registry" if archs else
                "the paste quotes the registry's supported-architectures list, which vLLM prints when it refuses the "
                "model's architecture (the line that names it is not in the paste: the model's config.json does)")
        return Finding.of(ARCHITECTURE_UNSUPPORTED, hit.check, Status.FAIL if archs else Status.WARN,
                          f"The model's architecture is not supported by this vLLM release — {said}",
                          {**ev, "symptoms": []}, cfg=config)
    if hit.check == "log-oom":
        return Finding.of(OOM, hit.check, Status.FAIL, OOM.title, ev, explanation="")
    at_start = "start" in hit.groups.get("matched", "") or "initialization" in hit.groups.get("matched", "")
    if root_causes:
        ev["root_cause_findings"] = list(root_causes)
    cause = f" (root cause: {', '.join(root_causes)})" if root_causes else ""
    return Finding.of(
        ENGINE_DEAD,
        check="log-engine-dead",
        status=Status.FAIL,
        title=(
            "EngineCore failed to start" if at_start else "EngineCore died: the server answers 500/503 until restarted"
        )
        + cause,
        evidence=ev,
        fix=(
            "Fix the root cause shown by the other findings, then restart the server."
            if root_causes
            else ENGINE_DEAD.fix()
        ),
    )


def _stopped_by_signal(dead: Finding, sig: ErrorHits, summary: dict[str, Any]) -> Finding:
    """An engine failure right after an outside stop request: a supervisor gave up on the start-up."""
    name = sig.groups.get("sig", "a signal")
    ev = dict(dead.evidence)
    ev["signal"] = {"name": name, "line": sig.lines[0][0] if sig.lines else None, "at": utc_text(sig.first_ts)}
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


def _before(a: ErrorHits, b: ErrorHits) -> bool:
    """Did ``a``'s first line come before ``b``'s first line?"""
    return bool(a.lines and b.lines) and a.lines[0][0] < b.lines[0][0]


def _shut_down(dead: Finding, sig: ErrorHits) -> Finding:
    """A server that had started, then was told to stop: the EngineDeadError lines after the signal are the
    stop itself (0.30.0 logs one on a clean SIGTERM), not a failure."""
    name = sig.groups.get("sig", "a signal")
    ev = dict(dead.evidence)
    ev["signal"] = {"name": name, "line": sig.lines[0][0] if sig.lines else None, "at": utc_text(sig.first_ts)}
    ev["shutdown"] = True
    return Finding(
        check=dead.check,
        status=Status.PASS,
        title=f"Server stopped by {name} at {utc_text(sig.first_ts) or 'line ' + str(ev['signal']['line'])}: "
              "the engine errors after it are the shutdown, not a failure",
        evidence=ev,
        refs=dead.refs,
        explanation=f"The {name} line comes before the first engine error line: the engine was stopped on request.",
    )


def build_findings(
    config: dict[str, Any],
    episodes: list[Episode],
    errors: dict[str, ErrorHits],
    summary: dict[str, Any],
    startup: Optional[StartupEvents] = None,
    notes: Optional[RequestNotes] = None,
    traces: Sequence[Trace] = (),
) -> list[Finding]:
    """Every finding of one pass over a log, in the order a reader wants them: the stalls, the start-up, the
    engine failures and their root causes, long steps, HTTP 5xx, then what the stats lines allow to judge."""
    notes = notes if notes is not None else RequestNotes()
    out = _stall_findings(config, episodes, notes)
    # start-up part (issue 14): refusals and overrides; an OOM before the server listened is the start-up OOM
    started = startup.started if startup is not None else None
    served = started is not None or summary["access"]["total"] > 0
    never_started = startup is not None and started is None and not summary["access"]["total"] and not (
        summary["stats"]["lines"]
    )
    first_start = startup_findings(config, startup) if startup is not None else []
    out.extend(first_start)
    # tracebacks and client error lines (issue 42): a record matched by frames and exception, a quoted vLLM body
    known = any(c in errors for c in ("log-kv-cache-too-small", "log-unsupported-head-dim", "log-oom")) or any(
        f.status == Status.FAIL for f in first_start)
    crashes, crash_cause = traceback_findings(traces, config, known)
    clients = client_findings(errors, config, traces)
    failures, causes = _engine_failures(config, errors, summary, first_start, never_started, served,
                                        crashes, crash_cause)
    out.extend(crashes)
    out.extend(clients)
    out.extend(failures)
    # a paste a reader named (a crash record, a client's error text): no "never started" / "no stats lines" beside it
    pasted = bool(clients) or any(f.status != Status.UNKNOWN for f in crashes)
    if notes.long_steps:
        out.append(_long_step(notes.long_steps))
    if (http := _http_5xx(summary["access"])) is not None:
        out.append(http)
    # a pasted refusal line, not one 400 among a whole server log's routine answers, nor the failing requests after
    # an engine failure the paste shows (a traceback, EngineCore's death: those name the cause)
    lone = started is None and not config and not traces and not any(c.startswith("log-") for c in errors)
    if lone and (refused := _http_4xx(summary["access"], out)) is not None:
        out.append(refused)
    if config.get("disable_log_stats") is True:
        out.append(stats_disabled(config, summary["stats"]["lines"]))
    elif never_started and (config or any(f.status == Status.FAIL for f in first_start)):
        # a start-up began in the paste (its config lines, or a refusal): a lone error text is no server log (a
        # client's relayed "does not support matryoshka" ValueError said "the server never started")
        # a server that never started has no stats lines by nature: say why it did not start instead
        if not causes and "log-engine-dead" not in errors and not pasted:
            out.append(never_started_finding(startup))  # type: ignore[arg-type]
    elif not episodes and not (pasted and not summary["stats"]["lines"]):
        out.append(_engine_stats(summary))
    _say_symptoms(out, served)
    return out


def _stall_findings(config: dict[str, Any], episodes: list[Episode], notes: RequestNotes) -> list[Finding]:
    """The livelock (and whether it recurs, or the config that would hang) and the stuck-waiting episodes."""
    out: list[Finding] = []
    live = [e for e in episodes if e.kind == "livelock"]
    wait = [e for e in episodes if e.kind == "stuck-waiting"]
    if live:
        out.append(livelock_finding(live, config))
        if (rec := recurring_finding(live, config, notes)) is not None:
            out.append(rec)
    elif (prone := livelock_prone_finding(config)) is not None:
        out.append(prone)  # configured to hang on a max_model_len prompt: never PASS overall
    if wait:
        out.append(stuck_waiting_finding(wait, config))
    return out


def _engine_failures(config: dict[str, Any], errors: dict[str, ErrorHits], summary: dict[str, Any],
                     first_start: list[Finding], never_started: bool, served: bool,
                     crashes: Sequence[Finding] = (), crash_cause: Optional[Trace] = None,
                     ) -> tuple[list[Finding], list[str]]:
    """The error lines' findings and the checks that are root causes of an EngineCore failure; the engine's
    death itself names them, or the signal that stopped it (a supervisor's, or a clean shutdown)."""
    out: list[Finding] = []
    causes = [c for c in ("log-kv-cache-too-small", "log-unsupported-head-dim", "log-oom",
                          "log-architecture-unsupported") if c in errors]
    for check in causes:
        f = _error_finding(errors[check], config)
        out.append(startup_oom(f, config) if check == "log-oom" and never_started else f)
    # a start-up refusal is the root cause of the EngineCore failure that follows it (a generator is not)
    causes.extend(f.check for f in first_start if f.status == Status.FAIL and f.check != "log-generate-runner")
    if any(f.status in (Status.FAIL, Status.WARN) for f in crashes):
        causes.append("log-traceback")  # a crash record the traceback matched is the engine's failure
    if "log-engine-dead" in errors:
        dead = _error_finding(errors["log-engine-dead"], config, causes)
        if crash_cause is not None:  # the traceback's own exception: the cause as vLLM printed it
            dead = _with_cause(dead, crash_cause)
        sig = errors.get("signal")
        if sig is not None and not causes:
            dead = _shut_down(dead, sig) if served and _before(sig, errors["log-engine-dead"]) else (
                _stopped_by_signal(dead, sig, summary))
        out.append(dead)
    return out, causes


def _with_cause(dead: Finding, cause: Trace) -> Finding:
    """The engine failure with the exception its traceback shows (and where in vLLM it was raised)."""
    inner = cause.innermost_vllm
    where = f" in vllm/{inner.vllm_module} {inner.func}" if inner is not None else ""
    ev = dict(dead.evidence)
    ev["cause_traceback"] = cause.to_dict()
    said = f"{cause.exception_text()[:160]}{where}"
    title = dead.title if "root cause" in dead.title else f"{dead.title} (the traceback's cause: {said})"
    return Finding(check=dead.check, status=dead.status, title=title, evidence=ev, refs=dead.refs, fix=dead.fix,
                   explanation=dead.explanation, failure_mode=dead.failure_mode)


def _long_step(long_steps: list[dict[str, Any]]) -> Finding:
    """vLLM's workers waited on a step still being computed: a step in progress, not a stall."""
    first = long_steps[0]
    return Finding(
        check="log-long-step",
        status=Status.PASS,
        title=f"The engine computed a step of more than {first['waited_s']} s"
        + (f" at {utc_text(first['ts'])}" if first["ts"] is not None else f" (line {first['line']})")
        + ": a step in progress, not a stall",
        evidence={"long_steps": long_steps[:20], "source": "log"},
        explanation=("vLLM's workers logged 'No available shared memory broadcast block found in "
                     f"{first['waited_s']} seconds' (shm_broadcast.py): they waited on a step the engine was still "
                     "computing. Quiet stats lines around it are that step, never a stall."),
    )


def _http_5xx(access: dict[str, Any]) -> Optional[Finding]:
    """Server errors in the access log, with the most frequent ones (None when there are none)."""
    by_status = access["by_status"]
    n5 = sum(n for st, n in by_status.items() if st.startswith("5"))
    if not n5:
        return None
    top5 = [t for t in access["top"] if str(t["status"]).startswith("5")]
    return Finding.of(
        SERVER_ERRORS,
        check="log-http-5xx",
        status=Status.WARN,
        title=f"{n5} server errors (HTTP 5xx) in the access log",
        evidence={"count": n5, "by_status": by_status, "top": top5, "source": "log"},
    )


_POOLING_PATH_WORDS = ("embeddings", "pooling", "rerank", "score", "classify")
# findings that already read a refusal's message: a bare 400 beside them is theirs
_REFUSAL_READERS = ("log-max-context-length", "log-matryoshka", "log-client-error")


def _http_4xx(access: dict[str, Any], said: list[Finding]) -> Optional[Finding]:
    """400/422 answers on a pooling path with no message of vLLM's read beside them: "one of" the records each
    path's message can name (triage.catalogue.records.REFUSAL_CANDIDATES), the message being what tells them.
    Asked only of a paste without a start-up (the user pasted the refusal they point at): in a whole server log a
    400 among its answers is routine client traffic (a probe's deliberate over-long input), not a finding."""
    if any(f.check in _REFUSAL_READERS and f.status in (Status.WARN, Status.FAIL) for f in said):
        return None
    refused = [t for t in access["top"] if t["status"] in (400, 422)
               and any(w in str(t["path"]) for w in _POOLING_PATH_WORDS)]
    if not refused:
        return None
    top = max(refused, key=lambda t: t["count"])
    n = sum(t["count"] for t in refused)
    names = [f"{get(m).title} (the message says {what})" for what, m in refusal_candidates(str(top["path"]))]
    return Finding.of(
        REQUEST_REFUSED, check="log-http-4xx", status=Status.WARN,
        title=f"{n} request(s) refused with {top['status']} on {top['path']} and no message of vLLM's in the paste — "
              f"one of: {'; '.join(names)}; to tell: the 400's message",
        evidence={"count": n, "top": refused, "source": "log", "symptoms": []},
        cfg={"path": top["path"]},
    )


def _engine_stats(summary: dict[str, Any]) -> Finding:
    """No stall episode: what the stats lines can say (a pass, with how coarse they are), or that there are none."""
    stats = summary["stats"]
    if not stats["lines"]:
        return Finding(
            check="log-engine-stats",
            status=Status.UNKNOWN,
            title="No engine stats lines in this log: stalls cannot be judged from it",
            evidence={"lines": summary["lines"], "source": "log"},
            fix="Include the periodic 'Engine 000: Avg prompt throughput …' lines "
            "(INFO level, every VLLM_LOG_STATS_INTERVAL s; not with --disable-log-stats).",
        )
    coarse = resolution(stats.get("interval_s") or {})
    ev = {"stats": {k: stats[k] for k in ("lines", "engines", "max_running", "max_waiting")}, "source": "log"}
    limit = ""
    if coarse is not None:
        ev["resolution"] = coarse
        limit = (f" A stats line every {coarse['stats_interval_s']:g} s shows no hang shorter than "
                 f"~{coarse['shortest_hang_seen_s']:g} s: hangs that a client's time-out ends (seconds) "
                 f"cannot show here; to see them, {coarse['fix']}.")
    return Finding(
        check="log-engine-stats",
        status=Status.PASS,
        title=f"No stall in {stats['lines']} engine stats lines"
        + (f" (one every {coarse['stats_interval_s']:g} s: too coarse for hangs of seconds)" if coarse else ""),
        evidence=ev,
        fix=coarse["fix"][0].upper() + coarse["fix"][1:] + "." if coarse else "",
        explanation=(
            "Limit: a livelock that starts on an idle engine leaves no stats line at "
            "all (a pooling request's prompt tokens are counted only when it "
            "finishes, so every interval is zero and the line stays at DEBUG). "
            "A quiet log is not proof of health: use `probe` or `watch`." + limit
        ),
    )


def _say_symptoms(findings: list[Finding], served: bool) -> None:
    """Which of its record's symptoms an engine failure shows here (the differential reads ``evidence["symptoms"]``):
    a refusal of the start-up when the server never served, rejected requests once it had."""
    for f in findings:
        if f.check == "log-kv-cache-too-small":
            f.evidence["symptoms"] = [STARTUP_REFUSAL]
        elif f.check in ("log-unsupported-head-dim", "log-oom", "log-engine-dead"):
            f.evidence["symptoms"] = [REJECTED if served else STARTUP_REFUSAL]

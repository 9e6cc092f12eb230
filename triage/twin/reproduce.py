"""Reproduce a deployment's symptom on its lab twin, then verify each fix of the record on a twin with it applied.

``reproduce(plan)`` starts the planned server (``triage.lab``), runs each candidate's probes (``run_probes``), and
for a reproduced candidate applies each of its record's edits to the twin's own scaled config: a request edit
reruns the probes on the same server with the new truncation, a serve edit restarts the twin with the edited
options, an upgrade serves the fixed release (or the nearest installed one that agrees). Every server this started
is stopped by PID in ``finally``; one already running with the same options (a test's) is reused and left alone.
Yields nothing to a database: ``on_event`` gets run events (a Recorder among its observers saves them).

The livelock is a race where the budget equals max_model_len: it needs the short and the long input admitted in one
scheduler step, which a fast box may not give on one try. So a seed candidate is tried up to ``SEED_ROUNDS`` times
(fresh texts each time; a round that shows nothing costs well under a second) and a fix counts as verified only when
every round stays clear: a fix is never "verified" by one lucky round, and a deployment is never called safe by one.
"""
from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from triage import events as ev_
from triage.catalogue import get
from triage.events import RunEvent
from triage.findings import Finding, Status
from triage.stall import LIVELOCK, STUCK_WAITING
from triage.target import Target
from triage.twin.plan import SEED_ROUNDS, Candidate, ServerSpec, TwinPlan, choose_release, seed_only, server_args
from triage.vllm import knowledge

Progress = Callable[[str], None]


@dataclass
class ReproduceResult:
    plan: TwinPlan
    reproduced: bool = False
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # mode -> probe outcomes
    fixes: list[dict[str, Any]] = field(default_factory=list)
    elapsed_s: float = 0.0
    error: Optional[str] = None  # the twin could not run (an option it refuses, a start that failed): why

    def to_dict(self) -> dict[str, Any]:
        return {"reproduced": self.reproduced, "fixes": self.fixes, "cases": self.cases,
                "plan": self.plan.to_dict(), "elapsed_s": round(self.elapsed_s, 1), "error": self.error}


# the twin's carried options that must be whole numbers above 0 (vLLM's parser and its config refuse anything else)
_WHOLE = ("max_model_len", "max_num_batched_tokens", "max_num_seqs")
_BOOL = ("enable_chunked_prefill", "enable_prefix_caching")


def refused_option(config: dict[str, Any]) -> Optional[str]:
    """Why vLLM would refuse the twin's options before it starts (the user's own value, carried): a count that is no
    whole number above 0, a switch that is no boolean, a pooler config that is no JSON object; else None. Said before
    anything starts (issue 43: the twin failed a minute later and the verdict read "reproduced: False")."""
    for k in _WHOLE:
        v = config.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            return f"--{k.replace('_', '-')} {str(v)[:60]!r} is not a whole number above 0: vLLM refuses to start " \
                   "with it (your deployment too): fix it in your command line first"
    for k in _BOOL:
        v = config.get(k)
        if v is not None and not isinstance(v, bool):
            return f"--{k.replace('_', '-')} {str(v)[:60]!r} is not on or off: fix it in your command line first"
    pc = config.get("pooler_config")
    if pc is not None and not isinstance(pc, dict):
        return f"--pooler-config {str(pc)[:60]!r} is not a JSON object: fix it in your command line first"
    return None


def start_failure(err: BaseException) -> str:
    """The reason a twin did not start, in one line: vLLM's own error line from the log's tail, else the first."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    errs = [ln for ln in lines[1:] if re.search(r"(?i)\b(?:error|exception)\b", ln)]
    return (errs[-1] if errs else lines[0] if lines else type(err).__name__)[:300]


def _shown(res: Any, cand: Candidate) -> tuple[bool, list[dict[str, Any]]]:
    rows = [{"probe": o.probe, "outcome": o.outcome, "time_to_verdict_s": o.time_to_verdict_s,
             "recovery": o.recovery} for o in res.outcomes]
    if "seed" in cand.sets:
        return any(o.outcome in (LIVELOCK, STUCK_WAITING) for o in res.outcomes), rows
    bad = [f for f in res.findings if f.status == Status.FAIL and f.failure_mode == cand.mode]
    return bool(bad), rows + [{"check": f.check, "status": f.status.value, "title": f.title} for f in bad]


def reproduce(plan: TwinPlan, installed: list[str], on_event: Optional[Callable[[RunEvent], object]] = None,
              progress: Progress = lambda _: None) -> ReproduceResult:
    from triage.lab import LabError, ensure, release
    from triage.probes import run_probes

    emit = on_event or (lambda _e: None)
    t0 = time.monotonic()
    out = ReproduceResult(plan)
    started: list[Any] = []  # the servers this run started: released (stopped, or kept by a keeping session)

    def serve(spec: ServerSpec) -> Any:
        progress(f"starting twin: vLLM {spec.version} {spec.model} {' '.join(spec.extra_args)}")
        srv, new = ensure(spec.version, spec.model, "defaults", extra_args=list(spec.extra_args))
        if new:
            started.append(srv)
        progress(f"twin ready: {srv.url}")
        return srv

    def probe(srv: Any, cand: Candidate, truncation: Optional[int], only: tuple[str, ...],
              until_seen: bool = True) -> tuple[bool, list]:
        """The candidate's probes on ``srv``: a seed candidate up to SEED_ROUNDS rounds (stop at the first round
        that shows the symptom when reproducing; all rounds when verifying a fix, ``until_seen=False``, so a
        verified fix held every round)."""
        rounds = SEED_ROUNDS if "seed" in cand.sets else 1
        seen_any, rows = False, []
        for n in range(1, rounds + 1):
            progress(f"probing {srv.url}: {', '.join(cand.sets)} {' '.join(only)}"
                     + (f" (round {n} of {rounds})" if rounds > 1 else ""))
            res = run_probes(Target(url=srv.url, model=srv.served_model, truncation=truncation,
                                    log_text=srv.log_text()), list(cand.sets),
                             allow_hang=True, deadline_s=60.0, only=list(only))
            seen, got = _shown(res, cand)
            rows += [dict(r, round=n) for r in got] if rounds > 1 else got
            seen_any = seen_any or seen
            if seen and until_seen:
                break
        return seen_any, rows

    def startup(spec: ServerSpec, cand: Candidate) -> tuple[bool, list, Any]:
        """A start-up candidate: does the twin refuse to start with the record's own log line? (shown, rows, the
        server when it started)."""
        try:
            srv = serve(spec)
        except LabError as e:
            seen, rows = _refusal(e, cand)
            return seen, rows, None
        return False, [{"probe": "start-up", "outcome": "started", "url": srv.url}], srv

    emit(RunEvent(ev_.STARTED, run_kind="reproduce", meta={"plan": plan.to_dict()}))
    try:
        base, base_error = None, None
        out.error = refused_option(plan.config)
        if out.error is not None:  # nothing started: the user's own option is what vLLM refuses
            emit(_could_not_run(out.error, plan))
            return out
        try:
            base = serve(plan.server)
        except LabError as e:  # a refusal to start is itself the evidence of a start-up candidate
            base_error = e
            progress(f"the twin did not start: {str(e).splitlines()[0][:300]}")
        for cand in plan.candidates:
            if "startup" in cand.sets:
                seen, rows = _refusal(base_error, cand) if base_error is not None else (
                    False, [{"probe": "start-up", "outcome": "started", "url": base.url if base else None}])
            elif base is None:  # no verdict: the twin never ran its probes (said once, below)
                out.cases[cand.mode] = [{"probe": "start-up", "outcome": "refused", "error": str(base_error)[:500]}]
                continue
            else:
                seen, rows = probe(base, cand, cand.truncation, cand.only)
            out.cases[cand.mode] = rows
            mode = get(cand.mode)
            emit(RunEvent(ev_.FINDING, finding=Finding(
                "twin-reproduce", Status.FAIL if seen else Status.PASS,
                f"{mode.id} {'reproduced' if seen else 'not reproduced'}"
                f"{f' in {SEED_ROUNDS} rounds' if not seen and 'seed' in cand.sets else ''} on the twin "
                f"(vLLM {plan.server.version}, {plan.server.model})", {"cases": rows, "release": vars(plan.release)},
                failure_mode=mode.id)))
            if not seen:
                continue
            out.reproduced = True
            for e in (mode.edits(plan.config) if mode.edits else []):
                fix: dict[str, Any] = {"fix": e.why, "serve": dict(e.serve), "request": dict(e.request),
                                       "upgrade": e.upgrade}
                srv = base
                if e.request.get("truncate_prompt_tokens") is not None:
                    t = int(e.request["truncate_prompt_tokens"])
                    again, rows2 = probe(base, cand, t, seed_only(t, int(plan.config["max_model_len"])), False)
                elif e.serve or e.upgrade:
                    spec = _fixed_spec(plan, e, installed, fix)
                    if "startup" in cand.sets:
                        again, rows2, srv = startup(spec, cand)
                    else:
                        srv = serve(spec)
                        again, rows2 = probe(srv, cand, cand.truncation, cand.only, False)
                else:
                    continue
                if srv is not None and srv is not base and srv in started:  # one fix twin at a time
                    release(srv)
                    started.remove(srv)
                fix.update(verified=not again, cases=rows2)
                out.fixes.append(fix)
                emit(RunEvent(ev_.FINDING, finding=Finding(
                    "twin-fix", Status.PASS if not again else Status.FAIL,
                    f"fix {'verified' if not again else 'NOT verified'} on the twin: {e.why}", fix,
                    failure_mode=mode.id)))
        if base_error is not None and not out.reproduced:  # the refusal showed no candidate: the twin could not run
            out.error = start_failure(base_error)
            emit(_could_not_run(out.error, plan))
    finally:
        for srv in started:
            release(srv)
        out.elapsed_s = time.monotonic() - t0
        emit(RunEvent(ev_.DONE, summary=f"reproduced: {out.reproduced}; fixes verified: "
                      f"{sum(f.get('verified', False) for f in out.fixes)} of {len(out.fixes)}"))
    return out


def _could_not_run(reason: str, plan: TwinPlan) -> RunEvent:
    return RunEvent(ev_.FINDING, finding=Finding(
        "twin-reproduce", Status.ERROR, f"could not run the twin: {reason}",
        {"server": {"version": plan.server.version, "model": plan.server.model, "args": list(plan.server.extra_args)}},
        "Nothing was reproduced or ruled out: fix what the title says and run reproduce again."))


def _fixed_spec(plan: TwinPlan, e: Any, installed: list[str], fix: dict[str, Any]) -> ServerSpec:
    """The twin with a serve edit applied to its own options, or the release an upgrade names (the nearest
    installed one that agrees; ``fix["release"]`` says which)."""
    if e.upgrade:
        rc = choose_release(e.upgrade, installed)
        fix["release"] = rc.chosen
        return ServerSpec(rc.chosen, plan.server.model, tuple(server_args(plan.config, rc.chosen)))
    from triage.fixblocks import apply_serve

    rel = knowledge.release(knowledge.for_version(plan.server.version).release)
    return ServerSpec(plan.server.version, plan.server.model,
                      tuple(apply_serve(list(plan.server.extra_args), e.serve, rel)))


_LOG_PATH = re.compile(r"Log (/\S+?\.log)")


def _refusal(err: Optional[BaseException], cand: Candidate) -> tuple[bool, list[dict[str, Any]]]:
    """Did the twin refuse to start the way ``cand``'s record says? The start-up log read by the post-mortem: a
    finding of that record in it. (shown, rows)"""
    if err is None:
        return False, [{"probe": "start-up", "outcome": "started"}]
    from triage.logs import analyze_log

    m = _LOG_PATH.search(str(err))
    text = str(err)
    if m:
        try:
            with open(m.group(1), encoding="utf-8", errors="replace") as f:
                text = f.read(4 << 20)
        except OSError:
            pass
    found = [f for f in analyze_log(io.StringIO(text)).findings
             if f.failure_mode == cand.mode and f.status != Status.PASS]
    return bool(found), [{"probe": "start-up", "outcome": "refused", "log": m.group(1) if m else None,
                          "findings": [f.title for f in found][:5]}]

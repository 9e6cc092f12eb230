"""``run_probes``: discover the target, run the chosen probe sets, yield every outcome and finding as it comes.

The sets are async generators of ProbeOutcome and Finding values (seed, conformance,
throughput); the run turns them into run events (triage.events: started, the runner's progress,
finding, probe, done) for one observer and writes nothing itself. Saving is an observer
(``triage.recorder.Recorder``): the faces compose it with their progress (``events.observers``);
``store=`` is the same composition done here, so the runner runs without a database in tests.
The target is the one ``triage.target.Target``. The registries (``PROBE_SETS``, ``OUTCOME_STATUS``, …) live in
triage.probes.registry and are re-exported here. The API key is sent, never stored: the recorder gets it as a
secret.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Optional

from triage import events as ev_
from triage.events import RunEvent, observers
from triage.differential import diagnose
from triage.findings import Finding, Status
from triage.probes import classify, client_libraries, conformance, rerank, seed, throughput, vectors
from triage.http import ProbeClient
from triage.probes.context import ProbeContext
from triage.probes.experiments import EXPERIMENT_ONLY, ExperimentPlan, experiment_sets
from triage.probes.registry import (DEFAULT_SETS, HANG_REASON, OUTCOME_STATUS, PROBE_SETS, SETS, HangNotAllowed,
                                    ProbeSet, outcome_status, resolve_sets)
from triage.probes.runner import EventSink, MonitorConfig, ProbeOutcome
from triage.target import Target

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import Store

__all__ = ["DEFAULT_SETS", "HANG_REASON", "OUTCOME_STATUS", "PROBE_SETS", "SETS", "HangNotAllowed", "ProbeRunResult",
           "ProbeSet", "outcome_status", "resolve_sets", "run_probes", "run_probes_async"]

_SET_RUNNERS: dict[str, Callable[..., AsyncIterator[ProbeOutcome | Finding]]] = {
    "seed": seed.run, "conformance": conformance.run, "throughput": throughput.run,
    "vectors": vectors.run, "clients": client_libraries.run, "rerank": rerank.run, "rerank-seed": rerank.run_seed,
    "classify": classify.run}



@dataclass
class ProbeRunResult:
    run_id: Optional[int]
    outcomes: list[ProbeOutcome] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    target: dict[str, Any] = field(default_factory=dict)  # url, model, max_model_len, vllm_version

    @property
    def status(self) -> Status:
        from triage.findings import worst
        return worst(f.status for f in self.findings)


def run_probes(spec: Target, sets: str | Iterable[str] | None = DEFAULT_SETS, allow_hang: bool = False,
               stall_s: float = 2.0, deadline_s: float = 30.0, store: Store | None = None,
               on_event: EventSink | None = None, *, scrape_s: float = 0.5,
               only: Iterable[str] | None = None, run_experiments: bool = False,
               prior: Iterable[Finding] = (), prior_config: Optional[dict[str, Any]] = None) -> ProbeRunResult:
    """Synchronous entry point (CLI, dashboard): runs the async probes in their own event loop.

    Called from a thread that already runs a loop (a notebook), it runs them in a worker thread.
    ``run_experiments``: after the sets, run the probe sets an ambiguous diagnosis asks for (triage.probes.experiments;
    a hang-capable one only with ``allow_hang``) and diagnose again. ``prior``: findings of another run of the same
    target (a checklist) that the diagnosis weighs too (with ``prior_config``, its effective config); they are not
    this run's, so they are not emitted.
    """
    coro = run_probes_async(spec, sets, allow_hang, stall_s, deadline_s, store, on_event, scrape_s=scrape_s,
                            only=only, run_experiments=run_experiments, prior=prior,
                            prior_config=prior_config)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _discover(pc: ProbeClient, model: str | None) -> tuple[dict[str, Any], Optional[Finding]]:
    ex = await pc.models()
    if not ex.ok or not isinstance(ex.body, dict):
        why = ex.error or f"HTTP {ex.status}: {ex.error_message()[:300]}"
        hint = " (an API key is required: pass --api-key-env)" if ex.status == 401 else ""
        return {}, Finding("probe-target", Status.ERROR, f"GET /v1/models failed: {why}{hint}",
                           {"url": pc.url, "status": ex.status, "error": ex.error, "body": ex.body})
    raw = ex.body.get("data")
    # only well-formed entries count: {"data": ["m"]}, ids that are not strings, a numeric root are a bad answer
    data = [d for d in raw if isinstance(d, dict) and isinstance(d.get("id"), str)] if isinstance(raw, list) else []
    if not data:
        return {}, Finding("probe-target", Status.ERROR, "GET /v1/models lists no model in the OpenAI shape "
                           '({"data": [{"id": …}]})', {"url": pc.url, "body": ex.body})
    entry = next((d for d in data if d.get("id") == model), None) if model else data[0]
    if entry is None:
        return {}, Finding("probe-target", Status.ERROR, f"model {model!r} is not served here",
                           {"served": [d.get("id") for d in data]})
    mml = entry.get("max_model_len")
    if not isinstance(mml, int) or isinstance(mml, bool) or mml < 1:
        return {}, Finding("probe-target", Status.ERROR, "/v1/models gives no usable max_model_len "
                           f"({str(mml)[:40]})", {"entry": entry})
    root = entry.get("root")
    return {"url": pc.url, "model": entry["id"], "model_root": root if isinstance(root, str) else None,
            "max_model_len": mml, "vllm_version": await pc.version()}, None


async def run_probes_async(spec: Target, sets: str | Iterable[str] | None = DEFAULT_SETS, allow_hang: bool = False,
                           stall_s: float = 2.0, deadline_s: float = 30.0, store: Store | None = None,
                           on_event: EventSink | None = None, *, scrape_s: float = 0.5,
                           only: Iterable[str] | None = None, run_experiments: bool = False,
                           prior: Iterable[Finding] = (),
                           prior_config: Optional[dict[str, Any]] = None) -> ProbeRunResult:
    """The probe run: every event to ``on_event`` (a Recorder's ``observe`` among them saves it).

    ``store``: compose a Recorder in front of ``on_event`` here; a run that an exception ends is closed with
    it (what came before stays)."""
    names = resolve_sets(sets)
    if any(p.can_hang and p.id in names for p in PROBE_SETS) and not allow_hang:
        raise HangNotAllowed(HANG_REASON)
    plan = _Plan(run_experiments, tuple(prior), prior_config)
    if store is None:
        return await _run(spec, names, allow_hang, stall_s, deadline_s, on_event, scrape_s, only, plan)
    from triage.recorder import Recorder

    recorder = Recorder(store)
    with recorder.guard():
        return await _run(spec, names, allow_hang, stall_s, deadline_s, observers(recorder, on_event), scrape_s,
                          only, plan)


@dataclass(frozen=True)
class _Plan:
    """What follows the sets: the experiments (or not), and another run's findings to weigh beside this one's."""

    run_experiments: bool = False
    prior: tuple[Finding, ...] = ()
    config: Optional[dict[str, Any]] = None  # the prior run's effective config (a checklist's), read by the clues


async def _run(spec: Target, names: list[str], allow_hang: bool, stall_s: float, deadline_s: float,
               on_event: EventSink | None, scrape_s: float, only: Iterable[str] | None,
               plan: _Plan = _Plan()) -> ProbeRunResult:
    def emit(ev: RunEvent) -> RunEvent:
        out = on_event(ev) if on_event is not None else None
        return out if isinstance(out, RunEvent) else ev

    cfg = MonitorConfig(stall_s=stall_s, deadline_s=deadline_s, scrape_s=scrape_s)
    result = ProbeRunResult(run_id=None)
    async with ProbeClient(spec.url or "", spec.api_key, spec.verify_tls, spec.timeout_s or 10.0) as pc:
        info, problem = await _discover(pc, spec.model)
        result.target = info or {"url": pc.url, "model": spec.model}
        meta = {"sets": names, "allow_hang": allow_hang, "stall_s": stall_s, "deadline_s": deadline_s,
                "scrape_s": scrape_s, "only": list(only or []), **{k: v for k, v in info.items() if k != "url"}}
        started = emit(RunEvent(ev_.STARTED, run_kind="probe", meta=meta,
                                target=spec.with_(url=pc.url, model=result.target.get("model"), cmdline=None,
                                                  label=None),
                                data={"sets": names, **result.target}))
        result.run_id = started.run_id

        def keep(item: ProbeOutcome | Finding) -> None:
            if isinstance(item, Finding):
                result.findings.append(item)
                emit(RunEvent(ev_.FINDING, finding=item, probe=item.check))
                return
            result.outcomes.append(item)
            emit(RunEvent(ev_.PROBE, outcome=item, probe=item.probe))

        t_start = time.monotonic()
        if problem is not None:
            keep(problem)
        else:
            ctx = ProbeContext(pc, info["model"], info["max_model_len"], info["vllm_version"], cfg, emit,
                               model_root=info.get("model_root"),
                               client_truncation=spec.truncation.request_value(), log_text=spec.log_text,
                               cmdline=spec.cmdline, cmdline_file=spec.cmdline_file, model_path=spec.model_path)
            async def run_set(name: str, only_: Iterable[str] | None) -> None:
                try:
                    async for item in _SET_RUNNERS[name](ctx, only=only_):
                        keep(item)
                except Exception as e:  # "could not run" is a finding: setup, transport, or a malformed answer
                    keep(Finding("probe-setup", Status.ERROR, f"the {name} set could not run: {e}",
                                 {"set": name, "error": f"{type(e).__name__}: {e}"}))

            for name in names:
                await run_set(name, only)
            facts = {"vllm.version": info["vllm_version"], "engine.max_model_len": info["max_model_len"]}
            config = {**(plan.config or {}), "max_model_len": info["max_model_len"]}
            config["vllm_version"] = info["vllm_version"] or config.get("vllm_version")
            diagnoses = diagnose([*plan.prior, *result.findings], config, facts)
            if plan.run_experiments and diagnoses:
                exp = experiment_sets(diagnoses, () if only else names, allow_hang)  # --only: run in part
                before = {f.check: f.title for f in diagnoses}
                for name in exp.run:
                    await run_set(name, EXPERIMENT_ONLY.get(name))
                diagnoses = [_after_experiments(d, exp, before) for d in
                             diagnose([*plan.prior, *result.findings], config, facts)]
            for d in diagnoses:  # after the sets' own findings (issue 29)
                keep(d)
        summary = _summary(result, time.monotonic() - t_start)
        emit(RunEvent(ev_.DONE, summary=summary, data={"status": result.status.value}))
    return result


def _after_experiments(d: Finding, exp: ExperimentPlan, before: dict[str, str]) -> Finding:
    """A diagnosis made again after the experiments ran: which ran, which were refused and why, what it said before."""
    ev = {**d.evidence, "experiments_run": list(exp.run), "experiments_refused": dict(exp.refused)}
    if d.check in before and before[d.check] != d.title:
        ev["before_experiments"] = before[d.check]
    return replace(d, evidence=ev)


def _summary(result: ProbeRunResult, elapsed_s: float) -> str:
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.outcome] = counts.get(o.outcome, 0) + 1
    outs = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no probes"
    bad = sum(1 for f in result.findings if f.status in (Status.FAIL, Status.ERROR))
    return (f"{len(result.outcomes)} probes ({outs}); {len(result.findings)} findings, {bad} fail/error; "
            f"{elapsed_s:.1f} s")

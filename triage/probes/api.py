"""``run_probes``: discover the target, run the chosen probe sets, store every outcome and finding as it comes.

The sets are async generators of ProbeOutcome and Finding values (seed, conformance,
throughput); this module is the only one that talks to the Store, so the sets stay testable.
``spec`` is any object with .url, .model, .api_key, .verify_tls, .timeout_s (the engine's
TargetSpec, or ProbeTarget below). The API key is sent, never stored: captures get it as a secret.
"""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

import httpx

from triage.catalogue import POOLING_LIVELOCK
from triage.findings import Finding, Status
from triage.probes import conformance, seed, throughput
from triage.client import ProbeClient, ProbeSetupError
from triage.probes.context import ProbeContext
from triage.probes.runner import EventSink, MonitorConfig, ProbeEvent, ProbeOutcome
from triage.store import Store

SETS = ("seed", "conformance", "throughput")
DEFAULT_SETS = ("conformance",)
HANG_REASON = (f"the seed matrix sends requests that livelock vLLM {POOLING_LIVELOCK.affected_text} "
               f"({POOLING_LIVELOCK.refs[0]}): each hang holds "
               "a request slot and burns a CPU core until the probe aborts it (after the stall threshold). "
               "Run it only against a server you may disturb, and pass --allow-hang (allow_hang=True).")
_SET_RUNNERS: dict[str, Callable[..., AsyncIterator[ProbeOutcome | Finding]]] = {
    "seed": seed.run, "conformance": conformance.run, "throughput": throughput.run}


class HangNotAllowed(ValueError):
    """The seed matrix was asked for without allow_hang."""


@dataclass(frozen=True)
class ProbeTarget:
    url: str
    model: Optional[str] = None
    truncate_prompt_tokens: Optional[int] = None  # the client's setting: adds its row to the seed matrix
    api_key: Optional[str] = field(default=None, repr=False)
    verify_tls: bool = True
    timeout_s: float = 10.0


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


def run_probes(spec: Any, sets: str | Iterable[str] | None = DEFAULT_SETS, allow_hang: bool = False,
               stall_s: float = 2.0, deadline_s: float = 30.0, store: Store | None = None,
               on_event: EventSink | None = None, *, scrape_s: float = 0.5,
               only: Iterable[str] | None = None) -> ProbeRunResult:
    """Synchronous entry point (CLI, dashboard): runs the async probes in their own event loop.

    Called from a thread that already runs a loop (a notebook), it runs them in a worker thread.
    """
    coro = run_probes_async(spec, sets, allow_hang, stall_s, deadline_s, store, on_event, scrape_s=scrape_s,
                            only=only)
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
    data = ex.body.get("data") or []
    entry = next((d for d in data if d.get("id") == model), None) if model else (data[0] if data else None)
    if entry is None:
        return {}, Finding("probe-target", Status.ERROR, f"model {model!r} is not served here",
                           {"served": [d.get("id") for d in data]})
    mml = entry.get("max_model_len")
    if not isinstance(mml, int):
        return {}, Finding("probe-target", Status.ERROR, "/v1/models gives no max_model_len", {"entry": entry})
    return {"url": pc.url, "model": entry["id"], "model_root": entry.get("root"), "max_model_len": mml,
            "vllm_version": await pc.version()}, None


async def run_probes_async(spec: Any, sets: str | Iterable[str] | None = DEFAULT_SETS, allow_hang: bool = False,
                           stall_s: float = 2.0, deadline_s: float = 30.0, store: Store | None = None,
                           on_event: EventSink | None = None, *, scrape_s: float = 0.5,
                           only: Iterable[str] | None = None) -> ProbeRunResult:
    names = resolve_sets(sets)
    if "seed" in names and not allow_hang:
        raise HangNotAllowed(HANG_REASON)
    emit = on_event or (lambda e: None)
    api_key = getattr(spec, "api_key", None)
    secrets = (api_key,) if api_key else ()
    cfg = MonitorConfig(stall_s=stall_s, deadline_s=deadline_s, scrape_s=scrape_s)
    result = ProbeRunResult(run_id=None)
    async with ProbeClient(spec.url, api_key, getattr(spec, "verify_tls", True),
                           getattr(spec, "timeout_s", 10.0) or 10.0) as pc:
        info, problem = await _discover(pc, getattr(spec, "model", None))
        result.target = info or {"url": pc.url, "model": getattr(spec, "model", None)}
        if store is not None:
            t = store.find_or_add_target(pc.url, result.target.get("model"),
                                         getattr(spec, "truncate_prompt_tokens", None))
            meta = {"sets": names, "allow_hang": allow_hang, "stall_s": stall_s, "deadline_s": deadline_s,
                    "scrape_s": scrape_s, "only": list(only or []), **{k: v for k, v in info.items() if k != "url"}}
            result.run_id = store.start_run(t.id, "probe", meta).id
        emit(ProbeEvent("run-started", None, {"run_id": result.run_id, "sets": names, **result.target}))

        def keep(item: ProbeOutcome | Finding) -> None:
            if isinstance(item, Finding):
                result.findings.append(item)
                if store is not None and result.run_id is not None:
                    store.add_finding(result.run_id, item)
                emit(ProbeEvent("finding", getattr(item, "check", None), item.to_dict()))
                return
            result.outcomes.append(item)
            if store is not None and result.run_id is not None:
                store.add_probe_result(result.run_id, item.probe, item.outcome, duration_s=item.duration_s,
                                       time_to_verdict_s=item.time_to_verdict_s, http_status=item.http_status,
                                       detail=item.detail())
                store.add_capture(result.run_id, "probe-request", json.dumps(item.request, default=str),
                                  name=item.probe, secrets=secrets)
                if item.response is not None:
                    store.add_capture(result.run_id, "probe-response", json.dumps(item.response, default=str),
                                      name=item.probe, secrets=secrets)

        t_start = time.monotonic()
        if problem is not None:
            keep(problem)
        else:
            ctx = ProbeContext(pc, info["model"], info["max_model_len"], info["vllm_version"], cfg, on_event,
                               model_root=info.get("model_root"),
                               client_truncation=getattr(spec, "truncate_prompt_tokens", None))
            for name in names:
                try:
                    async for item in _SET_RUNNERS[name](ctx, only=only):
                        keep(item)
                except (ProbeSetupError, httpx.HTTPError, ValueError) as e:  # "could not run" is a finding
                    keep(Finding("probe-setup", Status.ERROR, f"the {name} set could not run: {e}",
                                 {"set": name, "error": f"{type(e).__name__}: {e}"}))
        summary = _summary(result, time.monotonic() - t_start)
        if store is not None and result.run_id is not None:
            store.finish_run(result.run_id, summary)
        emit(ProbeEvent("run-finished", None, {"run_id": result.run_id, "status": result.status.value,
                                               "summary": summary}))
    return result


def _summary(result: ProbeRunResult, elapsed_s: float) -> str:
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.outcome] = counts.get(o.outcome, 0) + 1
    outs = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no probes"
    bad = sum(1 for f in result.findings if f.status in (Status.FAIL, Status.ERROR))
    return (f"{len(result.outcomes)} probes ({outs}); {len(result.findings)} findings, {bad} fail/error; "
            f"{elapsed_s:.1f} s")

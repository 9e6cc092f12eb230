"""The checklist runner: gather evidence, merge the effective config, run the checks; yield events.

``checklist_events`` is a pure iterator of run events (triage.events) and needs no database: the dashboard shows
progress from them, the CLI prints them, tests read them. Saving is an observer
(``triage.recorder``): ``iter_checklist(target, store)`` passes every event through a Recorder,
which commits it before the consumer sees it, so a crash or an interrupted page loses nothing
already seen. The API key lives only in the Target (memory).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import checks
from checks.livelock import CHECK_ID as LIVELOCK_CHECK
from triage.http import Transport
from triage import events as ev_
from triage.events import RunEvent
from triage.config import EffectiveConfig, merge
from triage.differential import diagnose, is_diagnosis
from triage.findings import Finding, Status, worst
from triage.sources import SourceInput, SourceResult
from triage.sources.checklist_sources import SOURCES
from triage.steps import CONFIG_CONFLICT, NO_EVIDENCE
from triage.target import Target

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import Store


@dataclass(frozen=True)
class CheckOptions:
    """How to gather evidence for a checklist run (not part of what the target is)."""

    nvml_recorded: dict[str, Any] | None = None  # a recorded NVML dict (tests, or another host's)
    local_gpu: bool | None = None  # None: read local GPUs only when the server is on this host
    local_process: bool | None = None  # None: read the server's process only when it is on this host
    embed_probe: bool = True  # one 2-token /v1/embeddings request (shows the pooling runner)


# A checklist run's events are the run event stream's (triage.events): started | source | finding | config | done.
CheckEvent = RunEvent  # the name the checklist's callers know


@dataclass
class ChecklistResult:
    run_id: int | None
    config: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)

    @property
    def status(self) -> Status:
        return worst(f.status for f in self.findings)


def _is_local(url: str | None) -> bool:
    if not url:
        return False
    host = urlsplit(url).hostname or ""
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _user_facts(target: Target) -> dict[str, Any]:
    user: dict[str, Any] = {}
    if target.truncation.known:
        user["truncate_prompt_tokens"] = target.truncation.config_value()
    if target.model:
        user["served_model_name"] = target.model
    return user


def _release_hint(results: list[SourceResult], target: Target) -> object:
    """The deployment's vLLM release from the evidence gathered so far (server, then log), else the user's answer."""
    for source in ("server", "log"):
        for r in results:
            f = r.facts.get("vllm_version") if r.source == source else None
            if f is not None and f.value:
                return f.value
    return (target.answers or {}).get("vllm_version")


def _gather(target: Target, opts: CheckOptions, transport: Transport | None) -> Iterator[SourceResult]:
    """Every source the target gives something to read (``triage.sources.checklist_sources.SOURCES``, in order),
    each told the release read so far (its spellings mean what they mean there)."""
    local = _is_local(target.url)
    given = SourceInput(target, local_process=opts.local_process if opts.local_process is not None else local,
                        local_gpu=opts.local_gpu if opts.local_gpu is not None else
                        (local or opts.nvml_recorded is not None),
                        embed_probe=opts.embed_probe, nvml_recorded=opts.nvml_recorded, transport=transport)
    seen: list[SourceResult] = []
    for source in SOURCES:
        if source.wanted(given):
            seen.append(source.collect(replace(given, release=_release_hint(seen, target))))
            yield seen[-1]


def _conflict_findings(cfg: EffectiveConfig) -> list[Finding]:
    out = []
    for c in cfg.conflicts:
        vals = ", ".join(f"{o.source} says {o.value!r}" for o in c.others)
        if any(o.source == "user" for o in c.others):  # an answer overridden by stronger evidence
            fix = f"Your answer for {c.key} was overridden by the {c.chosen.source} evidence; correct the answer."
        else:
            fix = (
                "The running server wins; the pasted command line or log may be from another start. "
                "Re-paste the current ones."
            )
        out.append(
            Finding(
                CONFIG_CONFLICT,
                Status.WARN,
                f"Sources disagree on {c.key}: {c.chosen.source} says {c.chosen.value!r}, {vals}",
                c.to_dict(),
                fix,
            )
        )
    return out


def checklist_events(target: Target, options: CheckOptions | None = None, *,
                     transport: Transport | None = None) -> Iterator[RunEvent]:
    """Run the checklist and yield an event per step; no store (see ``iter_checklist``).

    `transport` replaces the network (tests replay recorded responses through it)."""
    opts = options or CheckOptions()
    yield RunEvent(ev_.STARTED, run_kind="check", target=target, meta=target.describe(), message="checklist started")
    findings: list[Finding] = []

    def emit(f: Finding) -> RunEvent:
        findings.append(f)
        return RunEvent(ev_.FINDING, finding=f)

    results: list[SourceResult] = []
    for res in _gather(target, opts, transport):
        results.append(res)
        yield RunEvent(ev_.SOURCE, source=res.source, message=res.unavailable or f"{len(res.facts)} facts",
                         captures=tuple(res.captures))
        for f in res.findings:
            yield emit(f)
    if not target.url and not target.cmdline and not target.log_text and not target.kube:
        yield emit(
            Finding(NO_EVIDENCE, Status.ERROR, "No evidence given", {},
                    "Give the server URL, the vllm serve command line or the start-up log.")
        )
    cfg = merge(results, _user_facts(target), target.answers)
    config = cfg.to_dict()
    stored = {
        "values": config,
        "conflicts": [c.to_dict() for c in cfg.conflicts],
        "sources": cfg.sources,
        "stated_args": sorted(cfg.stated_args) if cfg.stated_args is not None else None,
    }
    yield RunEvent(ev_.CONFIG, config=config, stored=stored)
    for f in _conflict_findings(cfg):
        yield emit(f)
    for check in checks.registry():
        try:
            out = check.run(cfg)
            produced = out if isinstance(out, list) else [out]
        except Exception as e:  # a check bug must not lose the run: it becomes an error finding
            produced = [
                Finding(
                    check.id, Status.ERROR, f"Check {check.id} crashed: {type(e).__name__}: {e}", {"error": repr(e)}
                )
            ]
        for f in produced:
            yield emit(f)
    for f in diagnose(findings, cfg):  # the differential after the checks' own findings (issue 29)
        yield emit(f)
    status = worst(f.status for f in findings)
    yield RunEvent(ev_.DONE, message=f"status {status.value}", summary=run_summary(findings))


def run_summary(findings: list[Finding]) -> str:
    """'<the run's status>: <the finding that gives it>': the status word is the run's own (the worst finding's),
    never a passing finding's beside an UNKNOWN run; among the worst, a diagnosis, then the livelock check."""
    if not findings:
        return ""
    top = worst(f.status for f in findings)
    at_top = [f for f in findings if f.status == top]
    lead = (next((f for f in at_top if is_diagnosis(f)), None)
            or next((f for f in at_top if f.check == LIVELOCK_CHECK), None) or at_top[0])
    more = f" (+{len(at_top) - 1} more {top.value})" if len(at_top) > 1 and top != Status.PASS else ""
    return f"{top.value}: {lead.title}{more}"


def iter_checklist(target: Target, store: Store | None = None, options: CheckOptions | None = None, *,
                   transport: Transport | None = None) -> Iterator[RunEvent]:
    """``checklist_events``, recorded into ``store`` when one is given (each event written before it is seen)."""
    events = checklist_events(target, options, transport=transport)
    if store is None:
        return events
    from triage.recorder import Recorder, record

    return record(events, Recorder(store))


def run_checklist(
    target: Target,
    store: Store | None = None,
    on_event: Callable[[RunEvent], object] | None = None,
    *,
    options: CheckOptions | None = None,
    transport: Transport | None = None,
) -> ChecklistResult:
    """Run to the end; `on_event` sees each event as it happens (``events.observers(Recorder(store), progress)``
    saves it as the CLI does; ``store`` is the same composition done here)."""
    result = ChecklistResult(None, {})
    for ev in iter_checklist(target, store, options, transport=transport):
        if on_event is not None:
            out = on_event(ev)  # an observer may stamp it (a Recorder composed by the caller: the run id)
            ev = out if isinstance(out, RunEvent) else ev
        result.run_id = ev.run_id if ev.run_id is not None else result.run_id
        if ev.finding is not None:
            result.findings.append(ev.finding)
        if ev.config is not None:
            result.config = ev.config
    return result

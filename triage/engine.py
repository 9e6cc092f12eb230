"""The checklist engine: gather evidence, merge the effective config, run the checks, store as it goes.

`iter_checklist` is a pure iterator of CheckEvents (the dashboard shows progress from them, the CLI
prints them); every finding is committed to the store before its event is yielded, so a crash or
an interrupted page loses nothing already seen. The API key lives only in TargetSpec (memory).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import httpx

import checks
from triage.client import VllmClient
from triage.config import EffectiveConfig, merge
from triage.findings import Finding, Status, worst
from triage.sources import SourceResult, cmdline, nvml, process, server, startup_log
from triage.store import Store

OFFLINE_URL = "offline"
LIVELOCK_CHECK = "pooling-livelock-risk"


@dataclass(frozen=True)
class TargetSpec:
    """What to triage. `truncate_prompt_tokens`: int, -1, "none" (client sends none) or None (not stated)."""

    url: str | None = None
    model: str | None = None
    truncate_prompt_tokens: int | str | None = None
    cmdline: str | None = None
    log_text: str | None = None
    api_key: str | None = field(default=None, repr=False)
    verify_tls: bool = True
    timeout_s: float = 10.0
    nvml_recorded: dict[str, Any] | None = None  # a recorded NVML dict (tests, or another host's)
    local_gpu: bool | None = None  # None: read local GPUs only when the server is on this host
    local_process: bool | None = None  # None: read the server's /proc cmdline when it is on this host
    embed_probe: bool = True  # one 2-token /v1/embeddings request (shows the pooling runner)
    label: str | None = None
    answers: dict[str, Any] | None = None  # the user's answers, typed by triage.answers (facts "stated by user")


@dataclass(frozen=True)
class CheckEvent:
    """One step of a checklist run: started | source | finding | config | done."""

    kind: str
    run_id: int
    finding: Finding | None = None
    source: str | None = None
    message: str = ""
    config: dict[str, Any] | None = None


@dataclass
class ChecklistResult:
    run_id: int
    config: dict[str, Any]
    findings: list[Finding]

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


def _user_facts(spec: TargetSpec) -> dict[str, Any]:
    user: dict[str, Any] = {}
    if spec.truncate_prompt_tokens is not None:
        t = spec.truncate_prompt_tokens
        user["truncate_prompt_tokens"] = "none" if isinstance(t, str) and t.lower() == "none" else int(t)
    if spec.model:
        user["served_model_name"] = spec.model
    return user


def _gather(spec: TargetSpec, transport: httpx.BaseTransport | None) -> Iterator[SourceResult]:
    if spec.url:
        client = VllmClient(
            spec.url, api_key=spec.api_key, verify_tls=spec.verify_tls, timeout_s=spec.timeout_s, transport=transport
        )
        try:
            yield server.collect(client, model=spec.model, embed_probe=spec.embed_probe)
        finally:
            client.close()
    if spec.url and (spec.local_process if spec.local_process is not None else _is_local(spec.url)):
        port = urlsplit(spec.url).port or (443 if spec.url.startswith("https") else 80)
        yield process.collect(port)
    if spec.cmdline:
        yield cmdline.collect(spec.cmdline)
    if spec.log_text:
        yield startup_log.collect(spec.log_text)
    use_gpu = spec.local_gpu if spec.local_gpu is not None else (_is_local(spec.url) or spec.nvml_recorded is not None)
    if use_gpu:
        yield nvml.collect(spec.nvml_recorded)


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
                "config-conflict",
                Status.WARN,
                f"Sources disagree on {c.key}: {c.chosen.source} says {c.chosen.value!r}, {vals}",
                c.to_dict(),
                fix,
            )
        )
    return out


def iter_checklist(
    spec: TargetSpec, store: Store, *, transport: httpx.BaseTransport | None = None
) -> Iterator[CheckEvent]:
    """Run the checklist, storing each finding as it is produced, and yield an event per step.

    `transport` replaces the network (tests replay recorded responses through it)."""
    secrets = (spec.api_key,) if spec.api_key else ()
    target = store.find_or_add_target(
        spec.url or OFFLINE_URL,
        spec.model,
        spec.truncate_prompt_tokens if isinstance(spec.truncate_prompt_tokens, int) else None,
        spec.cmdline,
        spec.label,
    )
    run = store.start_run(
        target.id,
        "check",
        {
            "url": spec.url,
            "model": spec.model,
            "truncate_prompt_tokens": spec.truncate_prompt_tokens,
            "api_key_given": bool(spec.api_key),
            "verify_tls": spec.verify_tls,
            "timeout_s": spec.timeout_s,
            "has_cmdline": bool(spec.cmdline),
            "has_log": bool(spec.log_text),
            "answers": dict(spec.answers or {}),
        },
    )
    run_id = int(run.id)  # type: ignore[arg-type]
    yield CheckEvent("started", run_id, message=f"run {run_id}")

    def emit(f: Finding) -> CheckEvent:
        store.add_finding(run_id, f)
        return CheckEvent("finding", run_id, finding=f)

    results: list[SourceResult] = []
    for res in _gather(spec, transport):
        results.append(res)
        for cap in res.captures:
            store.add_capture(run_id, cap.kind, cap.content, cap.name, secrets)
        yield CheckEvent("source", run_id, source=res.source, message=res.unavailable or f"{len(res.facts)} facts")
        for f in res.findings:
            yield emit(f)
    if not spec.url and not spec.cmdline and not spec.log_text:
        yield emit(
            Finding("evidence", Status.ERROR, "No evidence given", {}, "Give --url, --cmdline-file or --log-file.")
        )
    cfg = merge(results, _user_facts(spec), spec.answers)
    config = cfg.to_dict()
    store.set_config(
        run_id,
        {
            "values": config,
            "conflicts": [c.to_dict() for c in cfg.conflicts],
            "sources": cfg.sources,
            "stated_args": sorted(cfg.stated_args) if cfg.stated_args is not None else None,
        },
    )
    yield CheckEvent("config", run_id, config=config)
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
    done = store.finish_run(run_id, summary=_summary(store, run_id))
    yield CheckEvent("done", run_id, message=f"status {done.status}")


def _summary(store: Store, run_id: int) -> str:
    rec = store.get_run(run_id, with_samples=False)
    if rec is None:
        return ""
    live = next((f for f in rec.findings if f.check == LIVELOCK_CHECK), None)
    return f"{live.status.value}: {live.title}" if live else ""


def run_checklist(
    spec: TargetSpec,
    store: Store,
    on_event: Callable[[CheckEvent], None] | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
) -> ChecklistResult:
    """Run to the end; `on_event` sees each event as it happens."""
    findings: list[Finding] = []
    config: dict[str, Any] = {}
    run_id = -1
    for ev in iter_checklist(spec, store, transport=transport):
        run_id = ev.run_id
        if ev.finding is not None:
            findings.append(ev.finding)
        if ev.config is not None:
            config = ev.config
        if on_event is not None:
            on_event(ev)
    return ChecklistResult(run_id, config, findings)

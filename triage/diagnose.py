"""One "Diagnose": the checklist, the safe probes and the log post-mortem of one target as ONE run.

The three cores keep their own runs elsewhere (Checklist, Probes, Logs); here their events are folded
into one run of kind ``diagnose`` with one verdict: each core's own ``started``/``done`` is dropped
and one pair wraps them. The probes' differential diagnosis weighs the checklist's findings
(``run_probes(prior=…)``), so the checklist's own diagnosis is held back when the probes ran and
theirs is the run's; a finding two cores both report (a start-up line the checklist's log source and
the post-mortem both read) is kept once. The probes run only against a server that answered the
checklist, and only the sets that cannot hang it. Their events are yielded when the probe run ends
(``run_probes`` is a blocking call with an observer), the checklist's and the log's as they come.
"""
from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any, Optional

from triage import events as ev_
from triage.differential import is_diagnosis
from triage.checklist import CheckOptions, checklist_events, run_summary
from triage.events import RunEvent
from triage.findings import Finding
from triage.http import Transport
from triage.target import Target

SAFE_SETS = ("conformance", "vectors")  # real requests that never hang a server and put no load on it
_WRAPPERS = (ev_.STARTED, ev_.DONE)


def diagnose_events(target: Target, *, sets: Iterable[str] = SAFE_SETS, options: Optional[CheckOptions] = None,
                    transport: Optional[Transport] = None, stall_s: Optional[float] = None,
                    deadline_s: float = 30.0) -> Iterator[RunEvent]:
    """The events of one diagnose run (``Recorder.observe`` saves them as one run)."""
    from triage.probes import PROBE_SETS, run_probes
    from triage.stall import DEFAULT_STALL_S

    safe = [s for s in sets if any(p.id == s and not p.can_hang for p in PROBE_SETS)]
    yield RunEvent(ev_.STARTED, run_kind="diagnose", target=target,
                   meta={**target.describe(), "sets": safe, "parts": ["checklist", "probes", "log"]},
                   message="diagnose started")
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def keep(f: Finding) -> bool:
        key = (f.check, f.title)
        if key in seen:
            return False
        seen.add(key)
        findings.append(f)
        return True

    held: list[Finding] = []  # the checklist's own diagnosis, until it is known whether the probes re-diagnose
    stored: dict[str, Any] | None = None
    for ev in checklist_events(target, options, transport=transport):
        if ev.kind in _WRAPPERS:
            continue
        if ev.kind == ev_.FINDING and ev.finding is not None:
            if is_diagnosis(ev.finding):
                held.append(ev.finding)
                continue
            if not keep(ev.finding):
                continue
        if ev.kind == ev_.CONFIG:
            stored = ev.stored
        yield ev
    answered = ((stored or {}).get("sources") or {}).get("server") == "ok"
    if target.url and answered and safe and transport is None:  # a replayed checklist has no server to probe
        got: list[RunEvent] = []
        yield RunEvent(ev_.SOURCE, source="probes", message=f"probe sets {', '.join(safe)}")
        run_probes(target, safe, stall_s=stall_s or DEFAULT_STALL_S, deadline_s=deadline_s, on_event=got.append,
                   prior=list(findings), prior_config=(stored or {}).get("values"))
        held = []  # the probes' diagnosis weighed the checklist's findings too: it is the run's
        for ev in got:
            if ev.kind in _WRAPPERS or (ev.kind == ev_.FINDING and ev.finding is not None and not keep(ev.finding)):
                continue
            yield ev
    for f in held:
        if keep(f):
            yield RunEvent(ev_.FINDING, finding=f)
    if target.log_text:
        yield from _post_mortem(target.log_text, keep)
    yield RunEvent(ev_.DONE, message="diagnose finished", summary=run_summary(findings))


def _post_mortem(text: str, keep: Any) -> Iterator[RunEvent]:
    """The log post-mortem's findings and samples (its config is the checklist's log source already)."""
    from triage.logs import analyze_log, log_events

    analysis = analyze_log(io.StringIO(text))  # a file object: pasted text is never taken for a path
    for ev in log_events(analysis):
        if ev.kind in _WRAPPERS or ev.kind == ev_.CONFIG:
            continue
        if ev.kind == ev_.FINDING and ev.finding is not None and not keep(ev.finding):
            continue
        yield ev

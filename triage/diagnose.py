"""One "Diagnose": the checklist, the safe probes and the log post-mortem of one target as ONE run.

The three cores keep their own runs elsewhere (Checklist, Probes, Logs); here their events are folded
into one run of kind ``diagnose`` with one verdict: each core's own ``started``/``done`` is dropped
and one pair wraps them. The probes' differential diagnosis weighs the checklist's findings
(``run_probes(prior=…)``), so the checklist's own diagnosis is held back when the probes ran and
theirs is the run's; a finding two cores both report (a start-up line the checklist's log source and
the post-mortem both read) is kept once. The probes run only against a server that answered the
checklist, and only the sets that cannot hang it. Every core's events are yielded as they come: the probe run
(``run_probes``, a blocking call with an observer) goes on in a worker thread whose events cross a queue, so a
face shows each probe as it starts and ends (``progress_line``) and the consumer's Recorder writes them in order.
"""
from __future__ import annotations

import io
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional

from triage import events as ev_
from triage import live as live_
from triage.differential import is_diagnosis
from triage.checklist import CheckOptions, checklist_events, run_summary
from triage.events import RunEvent
from triage.findings import Finding
from triage.http import Transport
from triage.live import LiveVerdict
from triage.target import Target

SAFE_SETS = ("conformance", "vectors")  # real requests that never hang a server and put no load on it
_WRAPPERS = (ev_.STARTED, ev_.DONE)


def diagnose_events(target: Target, *, sets: Iterable[str] = SAFE_SETS, options: Optional[CheckOptions] = None,
                    transport: Optional[Transport] = None, stall_s: Optional[float] = None,
                    deadline_s: float = 30.0, look: Optional[Callable[[Target], LiveVerdict]] = None
                    ) -> Iterator[RunEvent]:
    """The events of one diagnose run (``Recorder.observe`` saves them as one run).

    Between the checklist and the probes the engine is looked at (``look``, default ``triage.live.watch_now``):
    a stall now is a finding of the run, and the probes are not sent to an engine that cannot answer them."""
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
    if target.url and answered and transport is None:  # a replayed checklist has no engine to look at
        yield RunEvent(ev_.SOURCE, source=live_.META_KEY, message="/metrics for a few seconds: is the engine stalled?")
        live = (look or _look)(target)
        yield RunEvent(ev_.META, meta={live_.META_KEY: live.meta()}, message=f"live: {live.verdict}")
        if live.finding is not None and keep(live.finding):
            yield RunEvent(ev_.FINDING, finding=live.finding)
            yield RunEvent(ev_.SOURCE, source="probes", message="not sent: the engine is stalled now, they would wait "
                                                                "on it")
            safe = []
    if target.url and answered and safe and transport is None:  # a replayed checklist has no server to probe
        yield RunEvent(ev_.SOURCE, source="probes", message=f"probe sets {', '.join(safe)}")
        probes = _streamed(run_probes, target, safe, stall_s=stall_s or DEFAULT_STALL_S, deadline_s=deadline_s,
                           prior=list(findings), prior_config=(stored or {}).get("values"))
        held = []  # the probes' diagnosis weighed the checklist's findings too: it is the run's
        for ev in probes:
            if ev.kind in _WRAPPERS or (ev.kind == ev_.FINDING and ev.finding is not None and not keep(ev.finding)):
                continue
            yield ev
    for f in held:
        if keep(f):
            yield RunEvent(ev_.FINDING, finding=f)
    if target.log_text:
        yield from _post_mortem(target.log_text, keep)
    yield RunEvent(ev_.DONE, message="diagnose finished", summary=run_summary(findings))


def _look(target: Target) -> LiveVerdict:
    return live_.watch_now(target, seen="stalled now, seen while the diagnosis ran")


_END = object()


def _streamed(run: Any, *args: Any, **kwargs: Any) -> Iterator[RunEvent]:
    """The events a blocking core (``run(*args, on_event=…, **kwargs)``) emits, yielded as they come: the core runs
    in a worker thread; its exception is raised here, after the events before it."""
    box: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        try:
            run(*args, on_event=box.put, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer's thread
            box.put(e)
        finally:
            box.put(_END)

    worker = threading.Thread(target=work, name="diagnose-probes", daemon=True)
    worker.start()
    while (item := box.get()) is not _END:
        if isinstance(item, BaseException):
            raise item
        yield item
    worker.join()


def progress_line(ev: RunEvent) -> Optional[str]:
    """One line of progress for a diagnose event, as the page and the CLI show it (None: nothing to say)."""
    d = dict(ev.data or {})
    if ev.kind == ev_.FINDING and ev.finding is not None:
        return f"{ev.finding.status.value.upper()}: {ev.finding.title}"
    if ev.kind == ev_.PROBE_STARTED:
        return f"probe {ev.probe} started"
    if ev.kind == ev_.PROBE_VERDICT:
        took = d.get("time_to_verdict_s")
        return f"probe {ev.probe}: {d.get('outcome')}" + (f" ({took:.1f} s)" if isinstance(took, (int, float)) else "")
    if ev.kind == ev_.SOURCE:
        return f"reading {ev.source}: {ev.message}" if ev.source else ev.message or None
    if ev.kind == ev_.DONE:
        return ev.summary or ev.message or "done"
    return None


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

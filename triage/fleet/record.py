"""A fleet scan as a run's events (kind ``fleet``, the Prometheus target): its findings and per-replica summary.

Nothing here writes: the faces pass ``fleet_events`` through a Recorder (triage.recorder, the only writer).
"""
from __future__ import annotations

from collections.abc import Iterator

from triage import events as ev_
from triage.events import RunEvent
from triage.findings import Finding
from triage.fleet.scan import FleetScan, findings, summary
from triage.target import Target


def fleet_events(res: FleetScan, found: list[Finding] | None = None) -> Iterator[RunEvent]:
    """started (the Prometheus target, the range), each finding, the summary (meta), done."""
    found = findings(res) if found is None else found
    yield RunEvent(ev_.STARTED, run_kind="fleet", target=Target(url=res.prometheus, label="prometheus"),
                   meta={"match": res.match, "start": res.start, "end": res.end, "step": res.step,
                         "stall_threshold_s": res.threshold_s})
    for f in found:
        yield RunEvent(ev_.FINDING, finding=f)
    yield RunEvent(ev_.META, meta={"fleet": summary(res)})
    stalled = sum(1 for r in res.replicas if r.episodes)
    yield RunEvent(ev_.DONE, summary=f"{len(res.replicas)} replicas, {stalled} with a stall")

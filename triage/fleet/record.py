"""A fleet scan stored as a Run (kind ``fleet``) of the Prometheus target, with its findings."""
from __future__ import annotations

from typing import Any

from triage.findings import Finding
from triage.fleet.scan import FleetScan, findings, summary
from triage.recorder import Recorder
from triage.target import Target


def record(store: Any, res: FleetScan, found: list[Finding] | None = None) -> int:
    """Write the scan through a Recorder (Run + findings + the per-replica summary in meta); returns the run id."""
    found = findings(res) if found is None else found
    rec = Recorder(store)
    run_id = rec.start("fleet", Target(url=res.prometheus, label="prometheus"),
                       {"match": res.match, "start": res.start, "end": res.end, "step": res.step,
                        "stall_threshold_s": res.threshold_s})
    for f in found:
        rec.finding(f)
    rec.meta({"fleet": summary(res)})
    stalled = sum(1 for r in res.replicas if r.episodes)
    rec.finish(f"{len(res.replicas)} replicas, {stalled} with a stall")
    return run_id

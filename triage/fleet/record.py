"""A fleet scan stored as a Run (kind ``fleet``) of the Prometheus target, with its findings."""
from __future__ import annotations

from typing import Any

from triage.findings import Finding
from triage.fleet.scan import FleetScan, findings, summary


def record(store: Any, res: FleetScan, found: list[Finding] | None = None) -> int:
    """Write the scan through the store (Run + findings + the per-replica summary in meta); returns the run id."""
    found = findings(res) if found is None else found
    target = store.find_or_add_target(res.prometheus, label="prometheus")
    run = store.start_run(target.id, "fleet", {"match": res.match, "start": res.start, "end": res.end,
                                              "step": res.step, "stall_threshold_s": res.threshold_s})
    assert run.id is not None
    for f in found:
        store.add_finding(run.id, f)
    store.update_meta(run.id, {"fleet": summary(res)})
    stalled = sum(1 for r in res.replicas if r.episodes)
    store.finish_run(run.id, summary=f"{len(res.replicas)} replicas, {stalled} with a stall")
    return run.id

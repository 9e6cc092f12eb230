"""The Fleet page's service: scan the replicas a Prometheus scrapes, record the scan as a run, open one replica."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from triage.fleet import findings, scan, summary
from triage.fleet.record import fleet_events
from triage.fleet.replicas import DEFAULT_STALL_S
from triage.recorder import Recorder, save
from triage.target import Target
from ui.errors import ServiceError
from ui.services.base import ServiceBase
from ui.services.target import check_url


@dataclass(frozen=True)
class FleetView:
    """One scan as the page shows it: the Prometheus that answered, the summary document, the findings as dicts.

    ``problem``: the URL was no Prometheus (nothing was stored); ``store_error``: scanned, but the run could not be
    stored."""

    prometheus: str
    doc: dict[str, Any] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    run_id: int | None = None
    problem: str = ""
    store_error: str = ""


class FleetService(ServiceBase):
    """Fleet page."""

    def scan_fleet(self, prometheus: str, start: float, end: float, *, step: float | None = None, match: str = "",
                   stall_s: float = DEFAULT_STALL_S) -> FleetView:
        """Query Prometheus for ``start``..``end``, judge every replica with the stall rule, record it as a run.

        A bad URL raises a ServiceError; a URL that does not answer as a Prometheus is ``problem`` (no ERROR
        run is stored for a failed set-up)."""
        url, _note = check_url(prometheus)
        res = scan(url.strip(), start, end, step=step, match=match.strip(), threshold_s=float(stall_s))
        found = findings(res)
        if res.errors and not res.replicas:
            return FleetView(url, problem=res.errors[0].message)
        run_id, store_error = None, ""
        try:
            run_id = save(fleet_events(res, found), Recorder(self.store))  # the Recorder writes the run
        except ServiceError as e:
            store_error = str(e)
        return FleetView(url, summary(res), [f.to_dict() for f in found], run_id, store_error=store_error)

    def figure(self, doc: dict[str, Any]) -> Any:
        """Every replica on one time axis with its stall episodes (triage.fleet.chart)."""
        from triage.fleet.chart import fleet_figure

        return fleet_figure(doc)

    def replica_target(self, instance: str) -> Target:
        """The target a replica's ``instance`` label names (host:port, or a URL), for the Target page to open."""
        return Target(url=instance if "://" in instance else f"http://{instance}")

"""The History page's service: stored runs paged, one run opened (grouped, with its one verdict), two runs compared."""
from __future__ import annotations

from dataclasses import replace

from triage import fixblocks
from triage.export.groups import groups
from triage.headline import record_verdict
from ui.adapters import diff_runs, iso, run_detail
from ui.errors import ServiceError
from ui.services.base import ServiceBase, guard
from ui.values import RunDetail, RunDiff, RunPage, RunRow


class HistoryService(ServiceBase):
    """History page (and every page that opens a stored run: Diagnose, Report)."""

    @guard("History")
    def list_runs(self, *, target_id: int | None = None, status: str | None = None,
                  limit: int = 25, offset: int = 0) -> RunPage:
        """One page of runs, newest first (LIMIT/OFFSET in SQL; the count is one SQL COUNT)."""
        st = self.store
        rows = [RunRow(r.id, r.kind, r.status, iso(r.started_at), iso(r.finished_at) or None,
                       (t.label or t.url) if t else "—", t.model if t else None, r.summary)
                for r, t in st.list_runs(target_id=target_id, status=status or None, limit=limit, offset=offset)]
        total = st.count_runs(target_id=target_id, status=status or None)
        return RunPage(rows, total, limit, offset)

    @guard("History")
    def count_runs(self, *, target_id: int | None = None, status: str | None = None) -> int:
        return self.store.count_runs(target_id=target_id, status=status or None)

    @guard("Opening the run")
    def get_run(self, run_id: int) -> RunDetail | None:
        rec = self.store.get_run(run_id, with_samples=True)
        if rec is None:
            return None
        config = fixblocks.run_config({"config": rec.config, "meta": rec.meta})  # as the exports read it
        grouped, rest = groups(rec.findings, config)
        return replace(run_detail(rec), groups=tuple(grouped), ungrouped=tuple(rest), verdict=record_verdict(rec))

    @guard("Comparing runs")
    def compare_runs(self, left_id: int, right_id: int) -> RunDiff:
        a, b = self.get_run(left_id), self.get_run(right_id)
        if a is None or b is None:
            raise ServiceError(f"Run {left_id if a is None else right_id} does not exist.")
        return diff_runs(a, b)

    def latest_run_id(self) -> int | None:
        return self.store.latest_run_id()

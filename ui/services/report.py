"""The Report page's service: a stored run exported in each format, and its lab twin (triage.twin)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triage import export
from triage.events import observers
from triage.export import EXPORT_FORMATS, ExportFormat
from triage.recorder import Recorder
from ui.adapters import plain_error
from ui.errors import ServiceError
from ui.services.base import ServiceBase, guard


class ReportService(ServiceBase):
    """Report page (exports, also offered by History's run view) and the twin button."""

    def export_formats(self) -> tuple[ExportFormat, ...]:
        return EXPORT_FORMATS

    def export_name(self, run_id: int, fmt: str) -> tuple[str, str]:
        """(file name, MIME type) of a run's export, without rendering it."""
        return export.default_filename(run_id, fmt), export.MEDIA_TYPES.get(fmt, "application/octet-stream")

    @guard("Export")
    def export(self, run_id: int, fmt: str, secrets: tuple[str, ...] = ()) -> tuple[bytes, str, str]:
        """The run rendered by the report engine: (bytes, file name, MIME type)."""
        rec = self.store.get_run(run_id)
        if rec is None:
            raise ServiceError(f"Run {run_id} does not exist.")
        data = export.render(rec, fmt, secrets=tuple(x for x in secrets if x))
        name, mime = self.export_name(run_id, fmt)
        return data, name, mime


    def twin_plan(self, run_id: int) -> tuple[Any, str]:
        """(the twin's plan, "") or (None, why no twin can be planned) for a stored run; never raises."""
        from triage.lab.install import installed_releases
        from triage.twin.plan import PlanError, facts_of_run, plan_twin

        try:
            rec = self.store.get_run(run_id, with_samples=False)
            if rec is None:
                return None, f"Run {run_id} does not exist."
            vals, trunc, modes = facts_of_run(rec)
            return plan_twin(vals, trunc, installed_releases(), modes), ""
        except PlanError as e:
            return None, str(e)
        except Exception as e:  # a broken lab or store: said, never a traceback
            return None, f"No twin: {plain_error(e)}"

    @guard("Reproduce on a lab twin")
    def reproduce_run(self, run_id: int, progress: Callable[[str], None]) -> dict[str, Any]:
        """Reproduce run ``run_id``'s deployment on a lab twin and verify each fix there (stored as its own run)."""
        from triage.lab.install import installed_releases
        from triage.twin.reproduce import reproduce

        plan, why = self.twin_plan(run_id)
        if plan is None:
            raise ServiceError(why)
        rec = Recorder(self.store)
        res = reproduce(plan, installed_releases(), observers(rec), progress=progress)
        return {"run_id": rec.run_id, **res.to_dict()}

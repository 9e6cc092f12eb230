"""The Diagnose page's service: one click runs the checklist, the safe probes and the log post-mortem as one run."""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Optional

from triage import recorder as recorder_
from triage.recorder import Recorder
from triage.target import Target
from ui.adapters import plain_error
from ui.errors import ServiceError
from ui.services.history import HistoryService
from ui.values import RunDetail


class DiagnoseService(HistoryService):
    """Diagnose page (the run it stores is shown as History shows it)."""

    def diagnose(self, form: Target, on_event: Callable[[str], None] | None = None) -> RunDetail | None:
        """One click: the checklist, the safe probes and the log post-mortem as one stored run
        (triage.diagnose); progress lines go to ``on_event``; returns the run as History shows it."""
        from triage.diagnose import diagnose_events, progress_line

        run_id: Optional[int] = None
        try:
            for ev in recorder_.record(diagnose_events(form), Recorder(self.store)):
                run_id = ev.run_id or run_id
                line = progress_line(ev) if on_event is not None else None  # each probe as it starts and ends
                if line:
                    with contextlib.suppress(Exception):
                        on_event(line)
        except Exception as e:
            raise ServiceError(f"Diagnose: {plain_error(e)}") from e
        return self.get_run(run_id) if run_id is not None else None

"""The one seam between dashboard pages and the engine: plain values in, plain values out.

One module per page (or group of pages), each a service class over the shared base (``base.ServiceBase``:
the store, the error guard): ``target`` (Target page, the sidebar's target), ``checklist``, ``headline`` (the
banner every verdict page shows), ``diagnose``, ``probes`` (Probes, Vectors, Rerank), ``stats``, ``logs``,
``history``, ``report`` (exports, the lab twin), ``fleet``. ``Services`` joins them into the one object a page
gets from ``services.get()``, over one store; a page calls only its own service's methods.

No module here imports Streamlit; each calls the engine directly (the one Target type, the engine's registries of
steps, probe sets, outcome grading and export formats) and turns every engine exception into a ``ServiceError``
whose text is a plain message for the page (never a traceback).

Tests replace the whole object at this seam with ``override(fake)``; nothing deeper is faked.
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from triage.charts import gap_text
from triage.export import EXPORT_FORMATS, ExportFormat
from triage.probes import OUTCOME_STATUS, PROBE_SETS, ProbeSet
from triage.steps import STEPS, Step
from triage.store import DB_ENV, to_url
from triage.target import Target, Truncation
from ui.adapters import diff_runs, effective_config, plain_error, step_of
from ui.errors import ServiceError
from ui.services.checklist import ChecklistService
from ui.services.diagnose import DiagnoseService
from ui.services.fleet import FleetService, FleetView
from ui.services.headline import HeadlineService
from ui.services.logs import LogsService, log_server_target
from ui.services.probes import ProbesService
from ui.services.report import ReportService
from ui.services.stats import EVIDENCE_AFTER_S, EVIDENCE_BEFORE_S, HISTORY_KEY, StatsService
from ui.services.target import TargetService
from ui.values import (  # re-exported: pages import one module
    ChecklistEvent,
    DiffRow,
    Headline,
    LiveState,
    LogView,
    ModelInfo,
    ProbeProgress,
    ProbeRunView,
    ProbeView,
    RunDetail,
    RunDiff,
    RunPage,
    RunRow,
    SavedTarget,
    StatsView,
)

__all__ = ["EVIDENCE_AFTER_S", "EVIDENCE_BEFORE_S", "EXPORT_FORMATS", "HISTORY_KEY", "OUTCOME_STATUS", "PROBE_SETS",
           "STEPS", "ChecklistEvent", "DiffRow", "ExportFormat", "FleetView", "Headline", "LiveState", "LogView",
           "ModelInfo", "ProbeProgress", "ProbeRunView", "ProbeSet", "ProbeView", "RunDetail", "RunDiff", "RunPage",
           "RunRow", "SavedTarget", "ServiceError", "Services", "StatsView", "Step", "Target", "Truncation",
           "diff_runs", "effective_config", "gap_text", "get", "log_server_target", "override", "plain_error",
           "set_override", "step_of"]


class Services(TargetService, ChecklistService, HeadlineService, DiagnoseService, ProbesService, StatsService,
               LogsService, ReportService, FleetService):
    """Every page's service over one store (``ServiceBase``): what ``get()`` returns and a fake replaces."""


# -- which implementation pages get --------------------------------------------------------

_override: Any = None
_default: Services | None = None
_default_key: str | None = None
_default_lock = threading.Lock()


def get() -> Services:
    """The services object pages use: the test override when set, else one per database."""
    global _default, _default_key
    if _override is not None:
        return _override  # type: ignore[no-any-return]
    key = to_url(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else "default"
    with _default_lock:
        if _default is None or _default_key != key:
            _default, _default_key = Services(os.environ.get(DB_ENV) or None), key
        return _default


def set_override(svc: Any) -> None:
    global _override
    _override = svc


@contextlib.contextmanager
def override(svc: Any) -> Iterator[Any]:
    """Replace the services for the duration (tests: a fake at this seam and nowhere deeper)."""
    prev = _override
    set_override(svc)
    try:
        yield svc
    finally:
        set_override(prev)

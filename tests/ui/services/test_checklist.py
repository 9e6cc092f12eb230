"""ui.services.checklist against the real checklist runner: progress events, an engine failure as an event."""
from __future__ import annotations

from pathlib import Path


import triage.checklist
from triage.findings import Status
from ui import services
from triage.target import Target
from ui.services import Services
from triage.lab.server import free_port

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_checklist_unreachable_is_a_finding_not_a_crash(temp_db):
    evs = list(Services(temp_db).iter_checklist(Target(f"http://127.0.0.1:{free_port()}", "m", 256)))
    assert evs[-1].kind == "done"
    first = next(e.finding for e in evs if e.kind == "finding")
    assert services.step_of(first.check) == "server" and first.status in (Status.ERROR, Status.FAIL)


def test_an_engine_failure_is_an_error_event(temp_db, monkeypatch):
    def broken(*a, **kw):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(triage.checklist, "checklist_events", broken)
    evs = list(Services(temp_db).iter_checklist(Target("http://x", "m", 256)))
    assert [e.kind for e in evs] == ["error"] and "engine bug" in evs[0].message

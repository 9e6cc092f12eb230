"""ui.services.diagnose: one click against a server that is not there is one stored run, progress relayed."""
from __future__ import annotations

from triage.lab.server import free_port
from triage.target import Target
from ui.services import Services


def test_one_stored_run_and_progress_lines(temp_db):
    svc, lines = Services(temp_db), []
    detail = svc.diagnose(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0), on_event=lines.append)
    assert detail is not None and detail.kind == "diagnose" and svc.count_runs() == 1
    assert lines and any(line.startswith(("ERROR", "FAIL")) for line in lines)

"""ui.services.probes against the real probe runner and Store: one recorded run, progress relayed."""
from __future__ import annotations

from pathlib import Path


from triage.findings import Finding, Status
from triage.target import Target
from ui.services import Services
from triage.lab.server import free_port

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_a_probe_run_is_recorded_as_it_goes_and_progress_is_relayed(temp_db):
    """The page's probe run: the engine's events through a Recorder (the run stored) and on to the page's lines."""
    lines = []
    view = Services(temp_db).run_probes(Target(f"http://127.0.0.1:{free_port()}", "m", 256, timeout_s=2.0),
                                        ["conformance"], allow_hang=False, on_event=lines.append)
    assert view.run_id is not None and [f.check for f in view.findings] == ["probe-target"]
    assert [(e.probe, e.state) for e in lines if e.probe == "run"] == [("run", "run-started"), ("run", "run-finished")]
    assert any(e.probe == "finding probe-target" for e in lines)
    rec = Services(temp_db).store.get_run(view.run_id, with_samples=False)
    assert rec.run.kind == "probe" and rec.run.finished_at is not None and rec.run.status == "error"


def test_the_vectors_page_parts_go_through_the_service(temp_db):
    svc = Services(temp_db)
    rows = svc.cosine_rows([Finding("vectors-repeat", Status.PASS, "same text twice", {"cosine": 1.0})])
    assert [r["cosine"] for r in rows] == [1.0]
    f, env = svc.openwebui_check(f"http://127.0.0.1:{free_port()}/v1", None, "m", 1, None)
    assert f.status in (Status.ERROR, Status.FAIL, Status.UNKNOWN) and "RAG_OPENAI_API_BASE_URL" in env

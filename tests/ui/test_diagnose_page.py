"""Diagnose page: one click from a URL (and a log) to one stored run with one verdict (real Services, temp DB).

The server is a 127.0.0.1 port where nothing listens (the checklist says so; no probe can run) and the log is the
lab's recorded 0.31.0 livelock log: its post-mortem joins the same run.
"""
from __future__ import annotations

import socket

from tests.sources import replay
from ui.components import session
from ui.services import Services
from ui_apptest import no_exception, page

LOG = (replay.REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log").read_text()


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_one_click_from_a_url_and_a_log_to_one_run(use_services, temp_db):
    svc = use_services(Services(temp_db))
    at = page("diagnose", timeout=120).run()
    no_exception(at)
    assert any("press **Diagnose**" in i.value for i in at.info)
    url = _dead_url()
    at.text_input(key="diagnose.url").set_value(url)
    at.text_area(key="diagnose.log").set_value(LOG)
    at.button(key="diagnose.go").click().run()
    no_exception(at)
    run_id = at.session_state[session.OPEN_RUN_KEY]
    rec = svc.store.get_run(run_id)
    assert rec.run.kind == "diagnose" and svc.count_runs() == 1  # one run, not three
    checks = {f.check for f in rec.findings}
    assert "server-reachable" in checks or any("listening" in f.title for f in rec.findings)
    assert any(c.startswith("log-") for c in checks)  # the post-mortem is in the same run
    banner = next(e.value for e in at.error if f"Run #{run_id} · diagnose" in e.value)
    assert banner.startswith(f"**{rec.run.status.upper()}** — ") and f" · {rec.run.status}\\: " in banner

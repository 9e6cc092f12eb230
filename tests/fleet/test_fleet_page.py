"""The Fleet page on the backfilled real Prometheus (tests/fleet/conftest.py), real services on a temp DB."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from triage.catalogue import POOLING_LIVELOCK
from triage.store import Store
from ui import services

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "fleet_page.py")


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    db = str(tmp_path / "triage.db")
    monkeypatch.setenv("VLLM_TRIAGE_DB", db)
    services.set_override(services.Services(db))
    try:
        yield AppTest.from_file(PAGE, default_timeout=120), db
    finally:
        services.set_override(None)


def test_empty_state(page: Any) -> None:
    at, _ = page
    at.run()
    assert not at.exception
    assert any("No scan yet" in i.value for i in at.info)


def test_scan_marks_episodes_and_opens_a_replica(page: Any, backfilled: Any) -> None:
    at, db = page
    at.run()
    at.text_input(key="fleet.prometheus").input(backfilled.prom.url)
    at.selectbox(key="fleet.since").select("24 h")
    at.run()
    at.button(key="fleet.scan").click()
    at.run()
    assert not at.exception
    planted = {p.replica for p in backfilled.fleet.planted}
    assert at.metric[0].value == f"{len(planted)} of {backfilled.fleet.replicas}"
    chart = at.get("plotly_chart")[0].proto.spec
    assert "livelock" in chart and "stuck-waiting" in chart
    titles = [e.label.replace("\\", "") for e in at.expander]  # labels are Markdown-escaped (issue 23)
    assert any(f"livelock ({POOLING_LIVELOCK.refs[0]})" in t for t in titles)  # the catalogue's words (word_stall)
    rec = Store(db).get_run(Store(db).latest_run_id())
    assert rec is not None and rec.run.kind == "fleet"
    at.button(key="fleet.open.0").click()
    at.run()
    assert at.session_state["target.url"].startswith("http://10.0.")

"""A real 0.31.0 livelock server: a checklist run and a probe run exported in every format.

The runs come from the engine (issue 3) and the probes (issue 4) against the lab server; the
HTML is opened offline in headless Chromium (screenshot under test-output/export/) and the JSON
goes through import into a fresh database and back.
"""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_html import CHARTS_DRAWN, browser, open_offline, wait_until  # noqa: F401  (browser: fixture)

from triage.target import Target
from triage.export import FORMATS, render
from triage.export.json_ import comparable, import_run
from triage.store import RunRecord, Store

checklist = pytest.importorskip("triage.checklist")
probes = pytest.importorskip("triage.probes")

pytestmark = pytest.mark.real_server


@pytest.fixture(scope="module")
def runs(server_031_livelock: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, int, int]:
    """(store, checklist run id, probe run id) against the 0.31.0 livelock server."""
    store = Store(str(tmp_path_factory.mktemp("real") / "triage.db"))
    spec = Target(url=server_031_livelock.url, model=server_031_livelock.served_model,
                  truncation=256, log_text=server_031_livelock.log_text())
    result = checklist.run_checklist(spec, store)
    probe_run = probes.run_probes(spec, "seed", allow_hang=True, stall_s=5.0, deadline_s=30.0, store=store,
                                  only=["seed-short-long-t256"])
    assert probe_run.run_id is not None
    return store, result.run_id, probe_run.run_id


def _record(store: Store, run_id: int) -> RunRecord:
    rec = store.get_run(run_id)
    assert rec is not None
    return rec


@pytest.mark.parametrize("which", ["checklist", "probe"])
def test_every_format_and_round_trip(runs: tuple[Store, int, int], which: str, tmp_path: Path,
                                     test_output: Path) -> None:
    store, checklist_id, probe_id = runs
    rec = _record(store, checklist_id if which == "checklist" else probe_id)
    out = {fmt: render(rec, fmt) for fmt in FORMATS}
    for fmt, data in out.items():
        (test_output / f"real-031-{which}.{'zip' if fmt == 'bundle' else fmt}").write_bytes(data)
    doc = json.loads(out["json"])
    assert doc["run"]["status"] == "fail"
    md = out["md"].decode()
    assert "**Verdict: FAIL**" in md and "`0.31.0`" in md
    if which == "checklist":
        live = next(f for f in doc["findings"] if f["check"] == "pooling-livelock-risk")
        assert live["status"] == "fail" and "pooling-livelock-risk" in md
        assert doc["run"]["config"]["values"]["max_model_len"]["value"] == 256
        assert "| `max_model_len` | `256` | `server` |" in md
    else:
        assert doc["probes"][0]["outcome"] == "livelock"
        assert any(f["check"] == "probe-livelock" and f["status"] == "fail" for f in doc["findings"])
        assert "| `seed-short-long-t256` | `livelock` |" in md
    with zipfile.ZipFile(io.BytesIO(out["bundle"])) as zf:
        names = [n.split("/", 1)[1] for n in zf.namelist()]
        assert {"report.md", "report.html", "run.json", "manifest.json"} <= set(names)
        assert len([n for n in names if n.startswith("raw/")]) == len(doc["captures"]) > 0
    fresh = Store(str(tmp_path / "fresh.db"))
    again = json.loads(render(_record(fresh, import_run(fresh, doc)), "json"))
    assert comparable(again) == comparable(doc)


def test_probe_run_html_renders_charts_offline(runs: tuple[Store, int, int], browser: Any,  # noqa: F811
                                               tmp_path: Path, test_output: Path) -> None:
    store, _, probe_id = runs
    path = tmp_path / "probe.html"
    path.write_bytes(render(_record(store, probe_id), "html"))
    page, seen = open_offline(browser, path)
    drawn = ("document.querySelectorAll('.js-plotly-plot').length >= 1 && Array.from(document.querySelectorAll("
             "'.js-plotly-plot')).every(d => d.querySelectorAll('.scatterlayer .trace').length > 0)")
    wait_until(page, drawn)
    page.screenshot(path=str(test_output / "real-031-probe.png"), full_page=True)
    assert seen == {"blocked": [], "errors": [], "csp": []}
    assert "seed-short-long-t256" in page.inner_text("body")

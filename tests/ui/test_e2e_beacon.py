"""In real Chromium: a server's, an error's and an imported document's strings are text, never Markdown (issue 33).

An image beacon ``![t](http://127.0.0.1:PORT/live.png)`` (and a link, and raw HTML) in a model id, a server's
error body and every field of an imported run: the browser must never fetch ``/live.png`` and the page shows the
characters literally. The server is tests/hardening/hostile.py's look-alike (a test double on purpose: no real
vLLM serves such ids); it records every path asked for, which is how the test sees a fetch. The dashboard is
`streamlit run app.py` with a database the imported run was written into first. Heavy (Chromium): run it under
the shared lock, alone.
"""
from __future__ import annotations

import copy
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_e2e_browser import CHROMIUM, SLOW, browser, expect, nav, page, running_dashboard, shot  # noqa: F401 - fixtures
from triage.export import render
from triage.export.json_ import import_run
from triage.store import Store
from ui_apptest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "hardening"))
sys.path.insert(0, str(ROOT / "tests" / "export"))
import export_runs  # noqa: E402
from hostile import Behaviour, HostileServer  # noqa: E402

pytestmark = [pytest.mark.real_server,  # heavy: Chromium and a dashboard process (no vLLM server)
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")]


def beacon(url: str, what: str) -> str:
    """An image beacon, a link and an HTML image, naming ``what`` carried it."""
    return f"{what} ![t]({url}/live.png) [click]({url}/link) <img src={url}/live.png>"


def hostile_import(url: str) -> dict[str, Any]:
    """A real run document (tests/export/export_runs.py, rendered by the JSON exporter) with a beacon in every
    string a page shows: target, model, summary, each finding's title, explanation, fix, evidence, question,
    the group's title and fix, a probe's outcome."""
    with tempfile.TemporaryDirectory() as d:
        store = Store(str(Path(d) / "src.db"))
        record = store.get_run(export_runs.build(store))
        assert record is not None
        doc = json.loads(render(record, "json"))
    doc["target"]["url"] = url + "/?imported=![t](" + url + "/live.png)"
    doc["target"]["model"] = beacon(url, "model")
    doc["run"]["summary"] = beacon(url, "summary")
    for i, f in enumerate(doc["findings"]):
        f["title"] = beacon(url, f"title{i}")
        f["explanation"] = beacon(url, f"explanation{i}") + "\n# not a heading\n- not a list"
        f["fix"] = beacon(url, f"fix{i}")
        f["evidence"]["injected"] = beacon(url, f"evidence{i}")
    unknown = copy.deepcopy(doc["findings"][0])
    unknown.update(status="unknown", check="gpu-memory")
    unknown["evidence"]["questions"] = [{"text": beacon(url, "question"), "keys": []}]
    doc["findings"].append(unknown)
    for g in doc["groups"]:
        g["title"], g["fix"] = beacon(url, "group-title"), beacon(url, "group-fix")
    for p in doc["probes"]:
        p["outcome"] = beacon(url, "outcome")
    return doc


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with HostileServer(Behaviour()) as s:
        s.b.bodies["/v1/models"] = {"object": "list", "data": [
            {"id": beacon(s.url, "model-id"), "object": "model", "max_model_len": 256}]}
        s.b.bodies["/live.png"] = b"\x89PNG"
        yield s


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory, server: HostileServer) -> Iterator[str]:
    d = tmp_path_factory.mktemp("beacon-dashboard")
    import_run(Store(str(d / "triage.db")), hostile_import(server.url))
    with running_dashboard(d) as url:
        yield url


def assert_no_beacon(pg, server: HostileServer) -> None:  # type: ignore[no-untyped-def]
    """Nothing fetched from the beacon server by the browser, no image or link to it in the page."""
    pg.wait_for_timeout(1500)  # an image the page did render would be fetched by now
    assert "/live.png" not in server.b.seen, server.b.seen
    assert pg.locator("img[src*='live.png']").count() == 0
    assert pg.locator(f"a[href^='{server.url}']").count() == 0


def text_of(pg) -> str:  # type: ignore[no-untyped-def]
    return str(pg.locator("[data-testid=stMain]").inner_text())


def test_model_id_from_the_server_is_text(page, server) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.get_by_label("Server URL").fill(server.url)
    page.get_by_role("button", name="Fetch models").click()
    expect(page.get_by_role("combobox", name="Model (from /v1/models)")).to_be_visible(timeout=SLOW)
    page.get_by_role("button", name="Use this target").click()
    target_line = page.get_by_test_id("stAlertContentSuccess").filter(has_text="Target:")
    expect(target_line).to_contain_text("model-id ![t](", timeout=SLOW)
    assert beacon(server.url, "model-id") in text_of(page)  # literally, brackets, parentheses and tag
    nav(page, "Checklist")
    page.get_by_role("button", name="Run checklist").click()
    expect(page.get_by_text("Checklist finished")).to_be_visible(timeout=SLOW)
    shot(page, "beacon-checklist")
    assert "model-id ![t](" in page.locator("body").inner_text()  # the sidebar's target line, at least
    assert_no_beacon(page, server)


def test_a_servers_error_body_is_text(page, server) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    server.b.status["/v1/models"] = 500
    try:
        page.get_by_label("Server URL").fill(server.url)
        page.get_by_role("button", name="Fetch models").click()
        expect(page.get_by_test_id("stAlertContentError").first).to_be_visible(timeout=SLOW)
        assert_no_beacon(page, server)
    finally:
        del server.b.status["/v1/models"]


def test_an_imported_run_is_text_in_history(page, server) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    nav(page, "History")
    box = page.get_by_role("combobox", name="Run", exact=True)
    box.click()  # the imported run is #1 (written before the dashboard started); others may come after it
    # its option by name: typing "#1 · " filters fuzzily and matched "#2 · … 00:38:15 · …" first (CI, 2026-12-06)
    page.get_by_role("option", name=re.compile(r"^#1 · ")).click()
    expect(box).to_have_value(re.compile(r"^#1 · "), timeout=SLOW)
    page.get_by_role("button", name="Open run").click()
    expect(page.get_by_text(re.compile(r"summary !\[t\]\(")).first).to_be_visible(timeout=SLOW)
    for ex in page.get_by_test_id("stExpander").all():  # every finding card open: its explanation, fix, question
        # only a closed one is clicked: a card open by default (a FAIL's) closed under a blind click (CI, 2026-12-06)
        ex.evaluate("e => { const d = e.tagName === 'DETAILS' ? e : e.querySelector('details');"
                    " if (d && !d.open) d.querySelector('summary').click(); }")
    expect(page.get_by_text(re.compile(r"explanation0 !\[t\]\(")).first).to_be_visible(timeout=SLOW)
    shot(page, "beacon-history")
    shown = text_of(page)
    # (a group's heading and mechanism are the catalogue's own: the document's group title is not shown)
    for what in ("summary", "title0", "explanation0", "fix0", "fix1", "question"):
        assert beacon(server.url, what) in shown, what
    assert "# not a heading" in shown and "- not a list" in shown
    assert_no_beacon(page, server)

"""The JSON document carries the run's one verdict (issue 44): what the Markdown and HTML reports and the CLI show,
computed once by ``triage.headline`` from the run recorded against the real server (tests/export/export_runs.py)."""
from __future__ import annotations

import json
from pathlib import Path

import export_runs
from triage.export import render
from triage.export.json_ import import_run
from triage.headline import document_verdict, record_verdict
from triage.store import Store


def test_the_document_carries_the_verdict_every_face_shows(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    record = store.get_run(export_runs.build(store))
    assert record is not None
    doc = json.loads(render(record, "json"))
    v = doc["verdict"]
    assert v == record_verdict(record).to_dict()  # the same verdict the CLI's diagnose and the pages give
    assert v["status"] == "fail" and v["mode"] == "pooling-livelock" and v["fix"] and v["blocks"], v
    assert all(b["code"] for b in v["blocks"])
    md = render(record, "md").decode()
    assert v["headline"] in md  # the report lays out this verdict, it computes none


def test_an_import_ignores_the_verdict_and_derives_it_again(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    record = store.get_run(export_runs.build(store))
    assert record is not None
    doc = json.loads(render(record, "json"))
    forged = dict(doc, verdict={"status": "pass", "headline": "all good"})
    again = store.get_run(import_run(store, forged))
    assert again is not None
    assert json.loads(render(again, "json"))["verdict"] == doc["verdict"] == document_verdict(doc).to_dict()

"""The versioned run document: contents, round trip through import, and refusal of foreign files."""
from __future__ import annotations

import json
from pathlib import Path

import export_runs
import pytest

from triage.export import render
from triage.export.json_ import RUN_FORMAT, SCHEMA, ImportError_, comparable, import_run, to_document, validate
from triage.store import RunRecord, Store


def test_document_holds_everything_in_the_run(record: RunRecord) -> None:
    doc = json.loads(render(record, "json"))
    assert (doc["schema"], doc["document"], doc["run_format"]) == (SCHEMA, "run", RUN_FORMAT)
    assert doc["run"]["status"] == "fail" and doc["run"]["kind"] == "probe"
    assert [f["check"] for f in doc["findings"]] == [f.check for f in record.findings]
    assert doc["run"]["config"]["max_model_len"] == {"value": 256, "source": "server", "detail": "GET /v1/models"}
    assert doc["run"]["config"]["vllm_version"]["value"] == "0.31.0"
    assert doc["probes"][0]["outcome"] == "livelock"
    assert doc["probes"][0]["detail"]["recovery"]["short_request_ok"] is True
    assert [s["num_requests_running"] for s in doc["samples"]] == [0.0, 1.0, 1.0, 0.0]
    assert {c["kind"] for c in doc["captures"]} == {"metrics-page", "log", "cmdline"}
    assert doc["captures"][0]["content"] == export_runs.raw("metrics-after-requests.txt")
    assert doc["target"]["model"] == export_runs.served_model()
    assert doc["run"]["started_at"].endswith("+00:00")


def test_json_round_trips_through_a_fresh_database(record: RunRecord, tmp_path: Path) -> None:
    first = json.loads(render(record, "json"))
    fresh = Store(str(tmp_path / "fresh.db"))
    new_id = import_run(fresh, first)
    again = fresh.get_run(new_id)
    assert again is not None
    second = json.loads(render(again, "json"))
    assert comparable(second) == comparable(first)
    assert second["run"]["id"] == new_id
    assert len(second["samples"]) == len(first["samples"]) == 4


def test_import_into_the_same_database_reuses_the_identical_target(record: RunRecord, store: Store) -> None:
    doc = to_document(record)
    new_id = import_run(store, doc)
    again = store.get_run(new_id)
    assert again is not None and new_id != record.run.id
    assert again.run.target_id == record.run.target_id
    assert comparable(to_document(again)) == comparable(doc)


@pytest.mark.parametrize("mutate, message", [
    pytest.param(lambda d: d.update(document="bundle-manifest"), "not a vllm-triage run document", id="wrong-document"),
    pytest.param(lambda d: d.update(schema="vllm-triage/0"), "schema", id="old-schema"),
    pytest.param(lambda d: d.update(run_format=RUN_FORMAT + 1), "run_format", id="future-format"),
    pytest.param(lambda d: d.pop("run"), "no run", id="no-run"),
])
def test_foreign_documents_are_refused(record: RunRecord, mutate, message: str) -> None:
    doc = to_document(record)
    mutate(doc)
    with pytest.raises(ImportError_, match=message):
        validate(doc)


def test_a_failed_import_writes_nothing(record: RunRecord, tmp_path: Path) -> None:
    doc = to_document(record)
    doc["probes"][0].pop("outcome")  # the whole document is validated before any row is written
    fresh = Store(str(tmp_path / "fresh.db"))
    with pytest.raises(ImportError_, match="probes.0.outcome"):
        import_run(fresh, doc)
    assert fresh.count_runs() == 0 and fresh.list_targets() == []


def test_long_watch_run_round_trips_one_line_per_sample(store: Store, record: RunRecord, tmp_path: Path) -> None:
    """Synthetic counts on top of the recorded run: 5,000 samples of 1 s with a latency extra."""
    from triage.sample import EngineSample
    t0 = export_runs.T0 + 100
    store.add_samples((EngineSample(engine="0", ts=t0 + i, num_requests_running=float(i % 2),
                                    num_requests_waiting=0.0, prompt_tokens_total=float(i),
                                    extra={"e2e_p95": 0.01 * i})
                       for i in range(5000)), run_id=record.run.id)
    rec = store.get_run(record.run.id)
    assert rec is not None
    text = render(rec, "json").decode()
    assert text.count('\n    {"engine": "0", "extra": ') == 5004
    fresh = Store(str(tmp_path / "fresh.db"))
    again = fresh.get_run(import_run(fresh, json.loads(text)))
    assert again is not None
    assert comparable(json.loads(render(again, "json"))) == comparable(json.loads(text))


def test_a_string_where_a_number_belongs_is_refused(record: RunRecord, tmp_path: Path) -> None:
    doc = to_document(record)
    doc["samples"][0]["ts"] = "sk-not-a-number"
    with pytest.raises(ValueError):
        import_run(Store(str(tmp_path / "fresh.db")), doc)

"""ui.services.logs against the real log analysis and Store: a log stored as a run, never read as a path."""
from __future__ import annotations

from pathlib import Path

import pytest

from ui.services import ServiceError, Services

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_analyze_log_stores_a_run_and_never_reads_a_path(temp_db, tmp_path):
    svc = Services(temp_db)
    log = (FIXTURES / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
    on_disk = tmp_path / "server.log"
    on_disk.write_text(log)
    with pytest.raises(ServiceError, match="does not look like a vLLM log"):
        svc.analyze_log(str(on_disk))  # a pasted one-liner that happens to be a path: text, never opened
    view = svc.analyze_log(log)
    assert view.config.get("max_model_len", {}).get("value") == 256
    assert svc.get_run(view.run_id).kind == "logs"


def test_analyze_empty_log_is_a_message(temp_db):
    with pytest.raises(ServiceError, match="empty"):
        Services(temp_db).analyze_log("  \n")


def test_not_a_vllm_log_is_a_message(temp_db):
    svc = Services(temp_db)
    with pytest.raises(ServiceError, match="does not look like a vLLM log"):
        svc.analyze_log("hello world\nthis is a shopping list\n")
    assert svc.count_runs() == 0

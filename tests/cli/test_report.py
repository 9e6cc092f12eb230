"""``python -m triage report``: every format to a file or stdout, 'latest', exit codes."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
import export_runs  # noqa: E402

from triage.cli import main  # noqa: E402
from triage.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path: Path) -> tuple[str, int]:
    path = str(tmp_path / "triage.db")
    return path, export_runs.build(Store(path), hostile=True)


@pytest.mark.parametrize("fmt, magic", [
    pytest.param("md", b"# vLLM embedding triage", id="md"),
    pytest.param("html", b"<!DOCTYPE html>", id="html"),
    pytest.param("json", b"{", id="json"),
    pytest.param("bundle", b"PK\x03\x04", id="bundle"),
])
def test_report_writes_each_format(db: tuple[str, int], tmp_path: Path, fmt: str, magic: bytes) -> None:
    path, run_id = db
    out = tmp_path / "out" / f"report.{fmt}"
    assert main(["report", str(run_id), "--format", fmt, "-o", str(out), "--db", path]) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    assert export_runs.API_KEY.encode() not in data


def test_latest_to_stdout_and_redact_option(db: tuple[str, int], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path, run_id = db
    assert main(["report", "latest", "--format", "json", "--db", path, "--redact", "tiny-qwen3"]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    assert doc["run"]["id"] == run_id and doc["schema"] == "vllm-triage/1"
    assert "tiny-qwen3" not in json.dumps(doc)


@pytest.mark.parametrize("argv, code", [
    pytest.param(["report", "999"], 2, id="no-such-run"),
    pytest.param(["report", "abc"], 2, id="not-an-id"),
    pytest.param(["report", "latest", "--format", "pdf"], 2, id="unknown-format"),
    pytest.param(["report", "latest", "--format", "md", "-o", "/proc/nope/x.md"], 2, id="unwritable"),
    pytest.param(["report", "latest", "--format", "md", "-o", "-", "--fail-on", "fail"], 1, id="fail-on-fail"),
    pytest.param(["report", "latest", "--format", "md", "-o", "-", "--fail-on", "warn"], 1, id="fail-on-warn"),
])
def test_exit_codes(db: tuple[str, int], argv: list[str], code: int) -> None:
    assert main([*argv, "--db", db[0]]) == code


def test_empty_database_has_no_latest(tmp_path: Path) -> None:
    assert main(["report", "latest", "--db", str(tmp_path / "empty.db")]) == 2


def test_module_entry_point_writes_a_bundle(db: tuple[str, int], tmp_path: Path) -> None:
    path, run_id = db
    out = tmp_path / "b.zip"
    proc = subprocess.run([sys.executable, "-m", "triage", "report", str(run_id), "--format", "bundle",
                           "-o", str(out), "--db", path], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stderr
    with zipfile.ZipFile(io.BytesIO(out.read_bytes())) as zf:
        assert f"triage-run-{run_id}/manifest.json" in zf.namelist()


@pytest.mark.real_server
def test_check_then_report_then_import_on_031(server_031_livelock: object, tmp_path: Path) -> None:
    """The headless path an SRE takes: check a real server, export the run, import it elsewhere."""
    db, db2 = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    assert main(["check", "--url", server_031_livelock.url, "--truncate", "256", "--db", db]) == 1  # type: ignore[attr-defined]
    bundle, first, again = tmp_path / "r.zip", tmp_path / "r.json", tmp_path / "r2.json"
    assert main(["report", "latest", "--format", "bundle", "-o", str(bundle), "--db", db]) == 0
    assert main(["report", "latest", "--format", "json", "-o", str(first), "--db", db]) == 0
    assert main(["import", str(bundle), "--db", db2]) == 0
    assert main(["report", "latest", "--format", "json", "-o", str(again), "--db", db2, "--fail-on", "fail"]) == 1
    from triage.export.json_ import comparable
    doc = json.loads(first.read_bytes())
    assert comparable(json.loads(again.read_bytes())) == comparable(doc)
    assert any(f["check"] == "pooling-livelock-risk" and f["status"] == "fail" for f in doc["findings"])


def test_an_interrupted_run_never_passes_a_gate(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Issue 32: an interrupted run has no verdict; `report --fail-on` does not let it through as a PASS."""
    from triage.findings import Finding, Status

    path = str(tmp_path / "t.db")
    store = Store(path)
    run = store.start_run(store.add_target("http://127.0.0.1:8000", "m", 256).id, "probe", {})
    store.add_finding(run.id, Finding("probe-target", Status.PASS, "the server answers"))
    store.finish_run(run.id, "interrupted: StopException", "interrupted")
    assert main(["report", str(run.id), "--format", "md", "-o", "-", "--fail-on", "fail", "--db", path]) == 1
    assert b"**Verdict: INTERRUPTED**" in capsysbinary.readouterr().out

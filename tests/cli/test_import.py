"""``python -m triage import FILE``: JSON and bundles back into a database, round-trip equal."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
import export_runs  # noqa: E402

from triage.cli import main  # noqa: E402
from triage.export import render  # noqa: E402
from triage.export.json_ import comparable  # noqa: E402
from triage.store import Store  # noqa: E402


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path, dict]:
    store = Store(str(tmp_path / "src.db"))
    record = store.get_run(export_runs.build(store))
    assert record is not None
    js, zp = tmp_path / "run.json", tmp_path / "run.zip"
    js.write_bytes(render(record, "json"))
    zp.write_bytes(render(record, "bundle"))
    return js, zp, json.loads(js.read_bytes())


@pytest.mark.parametrize("which", ["json", "bundle"])
def test_import_round_trips(exported: tuple[Path, Path, dict], tmp_path: Path, which: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    js, zp, original = exported
    db = str(tmp_path / "dest.db")
    assert main(["import", str(js if which == "json" else zp), "--db", db, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "vllm-triage/1"
    again = tmp_path / "again.json"
    assert main(["report", str(out["run_id"]), "--format", "json", "-o", str(again), "--db", db]) == 0
    assert comparable(json.loads(again.read_bytes())) == comparable(original)


@pytest.mark.parametrize("content", [
    pytest.param(b"not json", id="garbage"),
    pytest.param(b'{"schema": "vllm-triage/1", "document": "run", "run_format": 99, "run": {}}', id="future"),
    pytest.param(b"PK\x05\x06" + b"\x00" * 18, id="zip-without-run-json"),
])
def test_bad_files_exit_2_and_write_nothing(tmp_path: Path, content: bytes,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    bad.write_bytes(content)
    db = str(tmp_path / "dest.db")
    assert main(["import", str(bad), "--db", db]) == 2
    assert "cannot import" in capsys.readouterr().err
    assert Store(db).count_runs() == 0


def test_missing_file_exits_2(tmp_path: Path) -> None:
    assert main(["import", str(tmp_path / "nope.json"), "--db", str(tmp_path / "d.db")]) == 2

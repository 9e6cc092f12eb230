"""Issue 33, exposure: the database and exports are created 0600 (the default folder 0700), and the
dashboard binds 127.0.0.1 unless --address is given."""
from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
from pathlib import Path

from triage import store
from triage.cli import dashboard


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_default_database_folder_and_file_are_private(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(store.DB_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    old = os.umask(0o022)
    try:
        url = store.default_db_url()
    finally:
        os.umask(old)
    db = Path(url.removeprefix("sqlite:///"))
    assert _mode(db.parent) == 0o700 and _mode(db) == 0o600, (oct(_mode(db.parent)), oct(_mode(db)))


def test_a_given_database_path_and_an_export_are_created_0600(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    r = subprocess.run([sys.executable, "-c", "import os; os.umask(0o022); import runpy, sys; sys.argv = "
                        f"['triage', 'check', '--cmdline', 'vllm serve m --runner pooling', '--db', {str(db)!r}]; "
                        "runpy.run_module('triage', run_name='__main__')"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert db.exists(), r.stderr
    assert _mode(db) == 0o600
    out = tmp_path / "run.md"
    r = subprocess.run([sys.executable, "-c", "import os; os.umask(0o022); import runpy, sys; sys.argv = "
                        f"['triage', 'report', 'latest', '--format', 'md', '-o', {str(out)!r}, '--db', {str(db)!r}]; "
                        "runpy.run_module('triage', run_name='__main__')"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _mode(out) == 0o600


def _cmd(address: str | None) -> list[str]:
    return dashboard.command(argparse.Namespace(port=None, address=address, streamlit_args=[]))


def test_dashboard_binds_loopback_unless_address_given() -> None:
    cmd = _cmd(None)
    addresses = [cmd[i + 1] for i, f in enumerate(cmd) if f == "--server.address"]
    assert addresses and set(addresses) == {"127.0.0.1"}
    cmd = _cmd("0.0.0.0")
    addresses = [cmd[i + 1] for i, f in enumerate(cmd) if f == "--server.address"]
    assert addresses == ["0.0.0.0"]

"""The store a child process writes is the one the test reads, in both modes (issue 15).

With VLLM_TRIAGE_TEST_DB set (PG mode) a ``--db PATH`` handed to ``python -m triage`` in a child must
land in PostgreSQL, in the database tests/pgmode/mapping.py maps PATH to, with no SQLite file written;
without it, in that SQLite file. The child is a real ``python -m triage check`` on a recorded log.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from pgmode import mapping
from triage.store import Store

ROOT = Path(__file__).resolve().parents[1]
LOG_031 = ROOT / "tests" / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock" / "server.log"
PG_MODE = bool(os.environ.get("VLLM_TRIAGE_TEST_DB"))


def _child(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_a_child_process_writes_the_store_this_process_reads(tmp_path: Path) -> None:
    db = tmp_path / "child.db"
    p = _child("-m", "triage", "check", "--log-file", str(LOG_031), "--truncate", "256", "--format", "json",
               "--db", str(db))
    assert p.returncode == 1, p.stderr  # the livelock log: a failing check
    run_id = json.loads(p.stdout)["run_id"]
    st = Store(str(db))  # the mapped URL in PG mode
    rec = st.get_run(run_id)
    assert rec is not None and rec.findings
    if not PG_MODE:
        assert st.url.startswith("sqlite") and db.exists()
        return
    assert st.url.startswith("postgresql") and not db.exists(), st.url  # nothing went to a SQLite file
    u = make_url(st.url)
    assert u.database == mapping.database_name(str(db))
    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname=u.database) as c:  # not via triage
        n = c.execute("select count(*) from finding where run_id = %s", (run_id,)).fetchone()
    assert n is not None and n[0] == len(rec.findings) > 0


def test_ui_services_in_a_child_maps_like_this_process(tmp_path: Path) -> None:
    """The dashboard's seam imports ``to_url`` by name: in a child it must be the mapped one as well."""
    path = str(tmp_path / "dash.db")
    p = _child("-c", "import sys; from ui import services; print(services.to_url(sys.argv[1]))", path)
    assert p.returncode == 0, p.stderr
    import triage.store

    assert p.stdout.strip() == triage.store.to_url(path)
    assert p.stdout.strip().startswith("postgresql" if PG_MODE else "sqlite")

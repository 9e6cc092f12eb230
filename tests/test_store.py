"""Store on a real SQLite file: WAL, findings committed one by one, paging in SQL, no secrets."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from triage.findings import Finding, Status
from triage.sample import EngineSample
from triage.store import Store


def test_wal_and_incremental_findings(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    st = Store(str(db))
    t = st.add_target("http://127.0.0.1:1", "m", 256, cmdline="vllm serve m --api-key sk-secretsecret")
    run = st.start_run(t.id, "check", {"api_key": "sk-secretsecret", "url": "http://127.0.0.1:1"})
    st.add_finding(run.id, Finding("a", Status.PASS, "ok"))
    # a second connection sees the first finding before the run ends (committed as produced)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT count(*) FROM finding").fetchone()[0] == 1
    st.add_finding(run.id, Finding("b", Status.FAIL, "bad", {"Authorization": "Bearer sk-secretsecret"}))
    assert st.finish_run(run.id).status == "fail"
    dump = "\n".join(con.iterdump())
    assert "sk-secretsecret" not in dump


def test_list_runs_pages_newest_first(tmp_path: Path) -> None:
    st = Store(str(tmp_path / "t.db"))
    t = st.add_target("http://x")
    ids = [st.start_run(t.id, "check").id for _ in range(7)]
    page = st.list_runs(limit=3, offset=3)
    assert [r.id for r, _ in page] == ids[::-1][3:6]
    assert st.count_runs() == 7 and st.latest_run_id() == ids[-1]


def test_retention_can_be_limited_to_one_target(tmp_path: Path) -> None:
    st = Store(str(tmp_path / "t.db"))
    st.add_samples([EngineSample(ts=1.0)], target_id=1)
    st.add_samples([EngineSample(ts=1.0, engine="other")], target_id=2)
    st.add_samples([EngineSample(ts=100.0)], target_id=1)
    assert st.delete_samples_before(50.0, target_id=1) == 1
    assert [s.engine for s in st.samples_for(target_id=2)] == ["other"]
    assert [s.ts for s in st.samples_for(target_id=1)] == [100.0]

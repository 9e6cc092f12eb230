"""ui.services.history against the real Store: paging in SQL, run diffs, findings grouped by root cause."""
from __future__ import annotations

from pathlib import Path


from triage.findings import Finding, Status
from triage.store import Store
from ui import services
from ui.services import RunDetail, Services

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real"


def test_list_runs_pages_in_sql_and_counts(temp_db):
    st = Store(temp_db)
    t = st.add_target("http://h:1", "m", 256)
    for i in range(30):
        r = st.start_run(t.id, "check")
        st.add_finding(r.id, Finding("x", Status.FAIL if i % 3 == 0 else Status.PASS, "t"))
        st.finish_run(r.id)
    svc = Services(temp_db)
    page = svc.list_runs(limit=25, offset=25)
    assert page.total == 30 and [r.id for r in page.rows] == [5, 4, 3, 2, 1]
    assert svc.count_runs(status="fail") == 10
    assert svc.list_runs(status="fail", limit=3).rows[0].status == "fail"


def _detail(run_id: int, version: str, status: str, nested: bool) -> RunDetail:
    cfg = {"vllm_version": {"value": version, "source": "server"}, "max_model_len": {"value": 256, "source": "server"}}
    stored = {"values": cfg, "conflicts": []} if nested else cfg
    return RunDetail(run_id, "check", status, "", "u", "m", "", services.effective_config(stored), {},
                     [Finding("pooling-livelock-risk", Status(status), "t")], [], 0)


def test_diff_runs_shows_what_changed():
    d = services.diff_runs(_detail(1, "0.31.0", "fail", True), _detail(2, "0.32.0", "pass", False))
    assert [(r.key, r.left, r.right) for r in d.config if r.changed] == [("vllm_version", "0.31.0", "0.32.0")]
    assert [(r.key, r.left, r.right) for r in d.verdicts] == [("pooling-livelock-risk", "fail", "pass")]


def test_run_detail_groups_findings_by_root_cause(temp_db):
    from triage.catalogue import POOLING_LIVELOCK

    st = Store(temp_db)
    run = st.start_run(st.add_target("http://h:1", "m", 256).id, "probe")
    for i in range(3):
        st.add_finding(run.id, Finding("probe-livelock", Status.FAIL, f"case {i}", {}, "the one fix",
                                       failure_mode=POOLING_LIVELOCK.id))
    st.add_finding(run.id, Finding("server-reachable", Status.PASS, "answers"))
    st.finish_run(run.id)
    d = Services(temp_db).get_run(run.id)
    assert [(g.mode.id, g.count, g.fix) for g in d.groups] == [(POOLING_LIVELOCK.id, 3, "the one fix")]
    assert d.ungrouped == (3,)

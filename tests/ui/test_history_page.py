"""History page: runs per target paged in SQL, filter by status, open one, compare two.

These tests use the real Services on a temp SQLite file (the Store is real; no engine is needed).
"""
from __future__ import annotations

import re

from triage.findings import Finding, Status
from triage.store import Store
from ui.components import session
from ui.services import Services
from ui_apptest import no_exception, page
from ui_fakes import FakeServices


def _fill(db: str, n: int) -> Store:
    st = Store(db)
    t1 = st.add_target("http://127.0.0.1:1", "m", 256, label="lab 0.31")
    t2 = st.add_target("http://127.0.0.1:2", "m", 256, label="lab 0.32")
    for i in range(n):
        fail = i % 2 == 0
        r = st.start_run(t1.id if fail else t2.id, "check", {})
        st.set_config(r.id, {"vllm_version": {"value": "0.31.0" if fail else "0.32.0", "source": "server"},
                             "max_model_len": {"value": 256, "source": "server"}})
        st.add_finding(r.id, Finding("pooling-livelock-risk", Status.FAIL if fail else Status.PASS,
                                     "livelock risk" if fail else "no livelock risk"))
        st.finish_run(r.id)
    return st


def test_empty(use_services, temp_db):
    use_services(Services(temp_db))
    at = page("history").run()
    no_exception(at)
    assert any("No runs yet" in i.value for i in at.info)


def test_pages_filter_open(use_services, temp_db):
    _fill(temp_db, 60)
    use_services(Services(temp_db))
    at = page("history").run()
    no_exception(at)
    assert len(at.dataframe[0].value) == 25
    assert "Page 1 of 3 · 60 runs" in [c.value for c in at.caption]
    at.button(key="history.pager.next").click().run()
    assert at.dataframe[0].value["run"].tolist()[0] == 35
    at.selectbox(key="history.status").set_value("pass").run()
    assert "Page 1 of 2 · 30 runs" in [c.value for c in at.caption]  # the filter resets paging
    assert set(at.dataframe[0].value["status"]) == {"PASS"}
    at.selectbox(key="history.target").set_value(at.selectbox(key="history.target").options[1]).run()
    no_exception(at)
    at.selectbox(key="history.open").set_value(60).run()
    at.button(key="history.open_btn").click().run()
    assert at.session_state[session.OPEN_RUN_KEY] == 60
    assert any("Run #60" in s.value for s in at.success)


def _compared(use_services, temp_db):
    """The History page of two stored runs after pressing Compare on #1 vs #2."""
    _fill(temp_db, 2)
    use_services(Services(temp_db))
    at = page("history").run()
    at.selectbox(key="history.left").set_value(1)
    at.selectbox(key="history.right").set_value(2)
    return at.button(key="history.compare").click().run()


def test_compare_two_runs(use_services, temp_db):
    at = _compared(use_services, temp_db)
    no_exception(at)
    verdicts, config = at.dataframe[-2].value, at.dataframe[-1].value
    assert verdicts.iloc[0]["check"] == "pooling-livelock-risk"
    assert "FAIL" in verdicts.iloc[0]["#1"] and "PASS" in verdicts.iloc[0]["#2"]
    assert config.to_dict("records") == [{"key": "vllm_version", "#1": "0.31.0", "#2": "0.32.0", "changed": "●"}]


def test_runs_are_picked_by_what_they_are_not_bare_numbers(use_services):
    use_services(FakeServices(n_runs=3))
    at = page("history").run()
    no_exception(at)
    for key in ("history.open", "history.left", "history.right"):
        opts = at.selectbox(key=key).options
        assert opts and all(re.match(r"#\d+ · checklist · (FAIL|PASS) · 2026-", o) for o in opts), opts


def test_comparison_survives_a_rerun(use_services, temp_db):
    """The side-by-side stays when another widget reruns the page (it used to vanish)."""
    at = _compared(use_services, temp_db)
    n = len(at.dataframe)
    at.toggle(key="history.only_changed").set_value(False).run()
    no_exception(at)
    assert len(at.dataframe) == n


def test_an_opened_verify_run_shows_its_before_and_after(use_services, temp_db):
    """issue 30: a run stored by ``verify --run N`` carries the pair; History shows it as the reports do."""
    from triage.twin.verify import _probe_bad, compare

    st = _fill(temp_db, 1)
    rows, ok = compare({"seed-short-long-t256": "livelock"}, {"seed-short-long-t256": "ok"}, _probe_bad)
    r = st.start_run(None, "probe", {"verifies": 1, "verification": {"before": 1, "after": 2, "verified": ok,
                                                                      "pairs": rows, "skipped": []}})
    st.finish_run(r.id)
    use_services(Services(temp_db))
    at = page("history").run()
    at.selectbox(key="history.open").set_value(r.id).run()
    at.button(key="history.open_btn").click().run()
    no_exception(at)
    said = [m.value.replace("\\", "") for m in at.markdown]  # md.text escapes Markdown's specials
    assert any("This run verifies run 1: fix VERIFIED" in m for m in said), said
    assert any(list(d.value["result"]) == ["cleared"] for d in at.dataframe if "result" in d.value)


def test_an_imported_question_that_is_a_number_opens(use_services, temp_db):
    """main: a valid import with ``questions: [{"text": 5}]`` put a TypeError traceback on History (issue 33)."""
    import sys
    from pathlib import Path

    from triage.export.json_ import import_run

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
    import export_runs
    from triage.export import render

    src = Store(str(Path(temp_db).with_name("src.db")))
    doc = __import__("json").loads(render(src.get_run(export_runs.build(src)), "json"))
    doc["findings"][0].update(status="unknown")
    doc["findings"][0]["evidence"]["questions"] = [{"text": 5}, {"text": None}, 7]
    run_id = import_run(Store(temp_db), doc)
    use_services(Services(temp_db))
    at = page("history").run()
    at.button(key="history.open_btn").click().run()
    no_exception(at)
    assert at.session_state[session.OPEN_RUN_KEY] == run_id
    assert any("To decide this:** 5" in i.value and "7" in i.value for i in at.info)
    assert not [e for e in at.error if "could not be shown" in e.value]


def _run_that_breaks() -> None:
    from ui.components import run_view

    class Broken:
        id, status, kind, target, model, started_at, summary = 3, "fail", "import", "t", "m", "x", ""

        @property
        def findings(self) -> list:
            raise KeyError("a field no writer of ours leaves out")

    run_view.show(Broken())


def test_a_stored_run_that_cannot_be_drawn_is_a_message():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_run_that_breaks).run()
    no_exception(at)
    assert any("Run #3 could not be shown in full" in e.value and "KeyError" in e.value for e in at.error)


def test_a_link_with_run_opens_that_run(use_services, temp_db):
    """Issue 32: /history?run=7 fell back to the root page. ?run=N opens run N, even one on another page of
    the list, and the address names the run shown after "Open run"."""
    _fill(temp_db, 60)
    use_services(Services(temp_db))
    at = page("history")
    at.query_params["run"] = "7"
    at.run()
    no_exception(at)
    assert at.session_state[session.OPEN_RUN_KEY] == 7
    assert any(s.value.startswith("**FAIL** — Run #7 ") for s in at.error)  # run 7 is on page 3 of the list
    assert "Link to this run: `/history?run=7`" in [c.value for c in at.caption]
    at.selectbox(key="history.open").set_value(60).run()
    at.button(key="history.open_btn").click().run()  # a click is not undone by the link it came from
    assert at.session_state[session.OPEN_RUN_KEY] == 60 and at.query_params["run"] == "60"


def test_a_link_to_no_run_says_so(use_services, temp_db):
    _fill(temp_db, 2)
    use_services(Services(temp_db))
    for raw, words in (("99", "Run #99 is not in this database."), ("seven", "?run=seven is not a run number")):
        at = page("history")
        at.query_params["run"] = raw
        at.run()
        no_exception(at)
        assert any(words in w.value.replace("\\", "") for w in at.warning), [w.value for w in at.warning]

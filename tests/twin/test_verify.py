"""``verify`` (issue 30, Deliver 4): the before/after comparison, the rerun plan read from a stored run, and the pair
in the Markdown and HTML reports. The stored runs here are our own rows (probe names, outcomes, the set), written
through the real Store on a real SQLite file; the real-server round trip is tests/twin/test_verify_real.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.cli import main
from triage.export import render
from triage.store import Store
from triage.twin.verify import _probe_bad, _probe_plan, compare, pair_rows


@pytest.mark.parametrize("before,after,verified,results", [
    pytest.param({"a": "livelock", "b": "ok"}, {"a": "ok", "b": "ok"}, True, ["cleared", "ok"], id="cleared"),
    pytest.param({"a": "livelock"}, {"a": "livelock"}, False, ["still failing"], id="still-failing"),
    pytest.param({"a": "livelock", "b": "ok"}, {"a": "ok", "b": "http-error"}, False, ["cleared", "new failure"],
                 id="cleared-but-new-failure"),
    pytest.param({"a": "livelock"}, {"a": "ok", "load": "livelock"}, False, ["cleared", "fails"],
                 id="load-test-hangs-after"),
    pytest.param({"a": "ok"}, {"a": "ok"}, None, ["ok"], id="nothing-was-bad"),
    pytest.param({"a": "livelock"}, {}, None, ["not rerun"], id="not-rerun"),
])
def test_compare(before, after, verified, results) -> None:
    rows, got = compare(before, after, _probe_bad)
    assert got is verified
    assert [r["result"] for r in rows] == results


def _probe_run(store: Store, outcomes: dict[str, str]) -> int:
    tid = store.add_target("http://127.0.0.1:1", model="m", truncate_prompt_tokens=256).id
    run = store.start_run(tid, "probe", {"max_model_len": 256, "sets": ["seed", "conformance"]})
    for name, outcome in outcomes.items():
        s = "seed" if name.startswith("seed-") else "conformance"
        store.add_probe_result(run.id, name, outcome, detail={"set": s, "truncate_prompt_tokens": 256})
    store.finish_run(run.id)
    return run.id


def test_plan_reruns_the_same_probes_and_adds_the_load_test(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    rid = _probe_run(store, {"seed-short-long-t256": "livelock", "seed-short-t255": "ok",
                             "conformance-array-input": "ok"})
    sets, names, skipped = _probe_plan(store.get_run(rid), allow_hang=True)
    assert set(sets) == {"seed", "conformance"} and skipped == []
    assert names[-1] == "seed-load8x4-t256" and "seed-short-long-t256" in names


def test_plan_without_allow_hang_skips_the_seed_and_says_why(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    rid = _probe_run(store, {"seed-short-long-t256": "livelock", "conformance-array-input": "http-error"})
    sets, names, skipped = _probe_plan(store.get_run(rid), allow_hang=False)
    assert sets == ["conformance"] and names == ["conformance-array-input"]
    assert skipped and "--allow-hang" in skipped[0] and "seed-short-long-t256" in skipped[0]


def test_verify_of_a_missing_run_or_a_run_without_url_is_exit_2(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "t.db")
    assert main(["verify", "--run", "7", "--db", db]) == 2
    assert "no run 7" in capsys.readouterr().err
    store = Store(db)
    run = store.start_run(None, "logs", {})
    store.finish_run(run.id)
    assert main(["verify", "--run", str(run.id), "--db", db]) == 2
    assert "--url" in capsys.readouterr().err


def test_reports_show_the_pair(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    before = _probe_run(store, {"seed-short-long-t256": "livelock"})
    after = _probe_run(store, {"seed-short-long-t256": "ok"})
    rows, ok = compare({"seed-short-long-t256": "livelock"}, {"seed-short-long-t256": "ok"}, _probe_bad)
    store.update_meta(after, {"verifies": before, "verification": {"before": before, "after": after,
                                                                   "verified": ok, "pairs": rows, "skipped": []}})
    store.update_meta(before, {"verified_by": after})
    assert pair_rows(store.get_run(after).meta)[0]["result"] == "cleared"
    md = render(store.get_run(after), "md").decode()
    assert f"This run verifies run {before}: fix VERIFIED" in md and "| `livelock` | `ok` | cleared |" in md
    html = render(store.get_run(after), "html").decode()
    assert "Before and after" in html and "<td>cleared</td>" in html
    assert f"verified against this run by run {after}" in render(store.get_run(before), "md").decode()


def test_plan_of_a_run_stored_before_the_set_was_kept(tmp_path: Path) -> None:
    """Older runs have no "set" in a probe's detail: the run's own sets (meta) and the probe's name tell it."""
    store = Store(str(tmp_path / "t.db"))
    run = store.start_run(None, "probe", {"max_model_len": 256, "sets": ["rerank", "rerank-seed", "seed"]})
    store.add_probe_result(run.id, "rerank-seed-short-long-t256", "livelock", detail={})
    store.add_probe_result(run.id, "seed-short-t255", "ok", detail={})
    store.add_probe_result(run.id, "mystery", "ok", detail={})
    sets, names, skipped = _probe_plan(store.get_run(run.id), allow_hang=True)
    assert sets == ["rerank-seed", "seed"] and names[:2] == ["rerank-seed-short-long-t256", "seed-short-t255"]
    assert skipped == ["mystery (its probe set is not stored)"]

"""``verify --run N`` on real lab servers (issue 30, done-when): a probe run on the 0.31.0 livelock server shows the
hang; verifying it on the same server (no fix applied) says NOT verified, and on the upgraded server (0.32.0, same
options: the user's fix) says VERIFIED with the seed's load test clear; the pair is stored and the HTML report shows
it. Shares the suite's session servers (tests/conftest.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.cli import main
from triage.export import render
from triage.lab import LabServer
from triage.probes import run_probes
from triage.stall import LIVELOCK
from triage.store import Store
from triage.target import Target
from triage.twin.verify import verify

pytestmark = pytest.mark.real_server
HANGS = "seed-short-long-t256"


def test_verify_before_and_after_the_fix(server_031_livelock: LabServer, server_032_livelock: LabServer,
                                         tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "t.db")
    store = Store(db)
    old, new = server_031_livelock, server_032_livelock
    before = run_probes(Target(url=old.url, model=old.served_model, truncation=256), "seed", allow_hang=True,
                        store=store, only=[HANGS, "seed-short-t255"])
    assert {o.probe: o.outcome for o in before.outcomes}[HANGS] == LIVELOCK

    same = verify(store, before.run_id, allow_hang=True)
    assert same.verified is False, same.pairs
    assert {r["item"]: r["result"] for r in same.pairs}[HANGS] == "still failing"

    rc = main(["verify", "--run", str(before.run_id), "--url", new.url, "--allow-hang", "--db", db])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("VERIFIED"), out
    after = store.get_run(before.run_id).meta["verified_by"]
    rows = {r["item"]: r for r in store.get_run(after).meta["verification"]["pairs"]}
    assert rows[HANGS]["result"] == "cleared" and rows["seed-load8x4-t256"]["after"] == "ok"
    html = render(store.get_run(after), "html").decode()
    assert f"This run verifies run {before.run_id}: fix VERIFIED" in html and "<td>cleared</td>" in html


def test_without_allow_hang_the_seed_is_not_rerun_and_nothing_is_claimed(server_031_livelock: LabServer,
                                                                         tmp_path: Path) -> None:
    store = Store(str(tmp_path / "t.db"))
    srv = server_031_livelock
    before = run_probes(Target(url=srv.url, model=srv.served_model), "seed", allow_hang=True, store=store,
                        only=["seed-short-t255"])
    res = verify(store, before.run_id)
    assert res.verified is None and res.after is None and "--allow-hang" in res.skipped[0]

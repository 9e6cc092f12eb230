"""A budget equal to max_model_len on a real vLLM 0.31.0 (lab profile ``budget-equals-len``: 256 = 256).

The checklist grades it FAIL from the catalogue record's rule, and the probe runner's seed case
``seed-concurrent4-short-long-t256`` (four [SHORT, LONG] at once, truncate_prompt_tokens 256) shows it
hang: bounded by the runner's stall window and deadline, the stuck requests always aborted and the engine
seen to recover. No hang loop of its own: the seed machinery (triage.probes.seed) does it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import POOLING_LIVELOCK
from triage.catalogue.records import pooling_livelock_grade
from triage.checklist import run_checklist
from triage.findings import Status
from triage.lab import LabServer
from triage.probes import run_probes
from triage.stall import LIVELOCK
from triage.store import Store
from triage.target import Target

pytestmark = pytest.mark.real_server

CONCURRENT = "seed-concurrent4-short-long-t256"


def test_checklist_grades_budget_equal_to_len_fail(server_031_budget_equals_len: LabServer, tmp_path: Path) -> None:
    srv = server_031_budget_equals_len
    target = Target(url=srv.url, model=srv.served_model, truncation=256)
    res = run_checklist(target, Store(str(tmp_path / "t.db")))
    live = next(f for f in res.findings if f.check == "pooling-livelock-risk")
    grade = pooling_livelock_grade(256, 256)
    assert live.status == grade.status == Status.FAIL, live.title
    assert grade.reason in live.title and POOLING_LIVELOCK.refs[0] in live.title
    pre = live.evidence["preconditions"]
    assert pre["max_num_batched_tokens"]["value"] == 256 and pre["max_model_len"]["value"] == 256


def test_concurrent_short_long_hangs_and_is_aborted(server_031_budget_equals_len: LabServer, tmp_path: Path) -> None:
    srv = server_031_budget_equals_len
    res = run_probes(Target(url=srv.url, model=srv.served_model), "seed", allow_hang=True,
                     store=Store(str(tmp_path / "t.db")), only=[CONCURRENT, "seed-short-t255"])
    got = {o.probe: o for o in res.outcomes}
    hung = got[CONCURRENT]
    assert hung.outcome == LIVELOCK, (hung.outcome, hung.extra)
    assert hung.recovery and hung.recovery["recovered"] and hung.recovery["short_request_ok"], hung.recovery
    assert got["seed-short-t255"].outcome == "ok"
    live = [f for f in res.findings if f.check == "probe-livelock"]
    assert live and live[0].status == Status.FAIL

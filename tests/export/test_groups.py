"""Findings grouped by failure mode: one headline per root cause, the fix once, the findings beneath."""
from __future__ import annotations

import json
import re

import pytest

from triage.catalogue import POOLING_LIVELOCK, STUCK_WAITING, mode_for_check
from triage.export import render
from triage.export.groups import groups
from triage.findings import Finding, Status
from triage.store import Store

MML = 256
FIX = POOLING_LIVELOCK.fix({"max_model_len": MML, "truncate_prompt_tokens": MML})


def seed_matrix() -> list[Finding]:
    """Eight livelocked seed probes with the record's fix (what a seed report on 0.31.0 holds), two others."""
    out = [Finding("probe-livelock", Status.FAIL, f"case {i} never finished", {"case": i}, FIX,
                   list(POOLING_LIVELOCK.refs), failure_mode=POOLING_LIVELOCK.id) for i in range(8)]
    out.append(Finding("probe-stuck-waiting", Status.FAIL, "waits forever", {}, STUCK_WAITING.fix({})))
    out.append(Finding("server-reachable", Status.PASS, "answers", {}))
    return out


def test_one_group_per_root_cause():
    grouped, rest = groups(seed_matrix())
    assert [(g.mode.id, g.count, g.status) for g in grouped] == [
        (POOLING_LIVELOCK.id, 8, "fail"), (STUCK_WAITING.id, 1, "fail")]
    assert grouped[0].fix == FIX and rest == [9]


def test_a_pass_shows_no_root_cause():
    assert mode_for_check("pooling-livelock-risk") is POOLING_LIVELOCK
    grouped, rest = groups([Finding("pooling-livelock-risk", Status.PASS, "fine")])
    assert grouped == [] and rest == [0]


@pytest.fixture()
def run_id(tmp_path):
    store = Store(str(tmp_path / "t.db"))
    t = store.add_target("http://127.0.0.1:1", "m", MML)
    run = store.start_run(t.id, "probe", {"max_model_len": MML})
    for f in seed_matrix():
        store.add_finding(run.id, f)
    store.finish_run(run.id)
    return store, run.id


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_reports_say_the_fix_once(run_id, fmt):
    store, rid = run_id
    text = render(store.get_run(rid), fmt).decode()
    # vLLM refs are links in reports (issue 23): read the fix's words without the link markup
    text = re.sub(r"\[(vllm#\d+)\]\([^)]*\)|<a href=\"[^\"]*\">(vllm#\d+)</a>",
                  lambda m: m.group(1) or m.group(2), text)
    assert text.count(POOLING_LIVELOCK.title if fmt == "md" else POOLING_LIVELOCK.title.replace("<", "&lt;")) == 1
    fix = FIX if fmt == "md" else FIX.replace(">", "&gt;")
    assert text.replace("\\", "").count(fix.replace("\\", "")) == 1  # once, in the headline
    assert "shown by 8 finding(s)" in text


def test_json_document_carries_the_groups(run_id):
    store, rid = run_id
    doc = json.loads(render(store.get_run(rid), "json"))
    g = doc["groups"][0]
    assert (g["mode"], g["count"], g["fix"]) == (POOLING_LIVELOCK.id, 8, FIX)
    assert [doc["findings"][i]["check"] for i in g["findings"]] == ["probe-livelock"] * 8

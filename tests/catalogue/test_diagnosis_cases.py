"""The differential on recorded real cases (issue 29): for each pair of engine records sharing a symptom, a case
where the diagnosis names the right one, a case where the evidence cannot tell them apart ("one of", with the
experiment), and the experiment, run, naming the right one.

Every input is a recording of a real vLLM server (tests/fixtures/real/: the log post-mortem of recorded server
logs, probe outcomes recorded by capture_probes.py, the release matrix, /metrics pages replayed through the real
Watcher). Where a record has no real case of its own, the test says so in its docstring.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.probes.recorded import outcome_from_record, probe_record
from triage.differential import diagnose
from triage.events import RunEvent
from triage.findings import Finding
from triage.logs import analyze_log
from triage.probes.experiments import experiment_sets
from triage.probes.runner import ProbeOutcome
from triage.probes.seed import matrix_finding, seed_cases, seed_findings
from triage.watch import Watcher
from triage.catalogue import POOLING_LIVELOCK

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
LOGS = REAL / "logs"


def _diag(findings: list[Any], symptom: str) -> Finding:
    [d] = [f for f in findings if f.check == f"diagnosis-{symptom}"]
    return d


def _verdicts(d: Finding) -> dict[str, str]:
    return {c["mode"]: c["verdict"] for c in d.evidence["candidates"]}


def _log(name: str) -> Any:
    return analyze_log(LOGS / name if "/" not in name else REAL / name)


def _long_tokens(mml: int) -> int:
    """What the probe's LONG text has at least: max_model_len + max(8, max_model_len // 8) tokens, counted by the
    server's /tokenize when it was built (triage.probes.inputs.long_text)."""
    return mml + max(8, mml // 8)


def _recorded_probe(name: str, trunc: int, mml: int = 256) -> ProbeOutcome:
    o = outcome_from_record(probe_record(name))
    inputs = ["SHORT", "LONG"] if "short-long" in name else ["LONG"]
    o.extra.update({"truncate_prompt_tokens": trunc, "inputs": inputs,
                    "input_tokens_before_truncation": [None if i == "SHORT" else _long_tokens(mml) for i in inputs]})
    return o


def _matrix_outcomes(release: str, mml: int = 256) -> list[ProbeOutcome]:
    """The recorded release matrix's outcomes (tests/fixtures/real/matrix/matrix.json) as the seed set gives them."""
    row = json.loads((REAL / "matrix" / "matrix.json").read_text())[release]
    livelock, returned = set(row["livelock"]), set(row["returned"])
    out = []
    for case in seed_cases(mml):
        if case.name not in livelock | returned:
            continue
        o = ProbeOutcome(case.name, "seed", "livelock" if case.name in livelock else "ok", case.description)
        o.extra.update({"truncate_prompt_tokens": case.truncate_prompt_tokens, "inputs": list(case.inputs),
                        "input_tokens_before_truncation": [None if i == "SHORT" else _long_tokens(mml)
                                                           for i in case.inputs]})
        out.append(o)
    return out


# -- hang-running: pooling-livelock / pooling-livelock-client-timeouts / engine-stall / slow-step ---------------
def test_seed_matrix_on_0310_names_the_livelock() -> None:
    """The whole seed set as it ran on 0.31.0 (the recorded release matrix): max_model_len hangs and
    max_model_len - 1 returns singles the livelock out."""
    fs = seed_findings(_matrix_outcomes("0.31.0"), 256, "0.31.0")
    d = _diag(diagnose(fs, {}), "hang-running")
    assert d.failure_mode == "pooling-livelock" and d.status == "fail"
    v = _verdicts(d)
    assert v["engine-stall"] == "ruled out" and v["pooling-livelock-client-timeouts"] == "stands"
    assert any(POOLING_LIVELOCK.refs[0].removeprefix("vllm") in line for line in d.evidence["ruled_out"])
    assert d.fix.startswith("1) Upgrade to vLLM >= 0.32.0")  # the named record's own fix
    assert d.evidence["experiments"] == []


def test_one_probe_hang_on_0310_is_one_of_until_the_matrix_runs() -> None:
    """One recorded hang of a prompt of exactly max_model_len on 0.31.0: a probe cannot see whether chunked prefill
    is on (the livelock needs it), so the livelock is not singled out; the seed matrix, run, does."""
    fs = seed_findings([_recorded_probe("livelock-031-short-long-t256", 256)], 256, "0.31.0")
    d = _diag(diagnose(fs, {}), "hang-running")
    assert d.failure_mode == "" and d.title.endswith("engine-stall or slow-step")
    assert _verdicts(d)["pooling-livelock"] == "stands"
    named = _diag(diagnose([*fs, matrix_finding(_matrix_outcomes("0.31.0"), 256, "0.31.0")], {}), "hang-running")
    assert named.failure_mode == "pooling-livelock"
    # the checklist's config (chunked prefill on, read from the server's command line) singles it out as well
    cfg = {"enable_chunked_prefill": True, "max_model_len": 256, "vllm_version": "0.31.0"}
    assert _diag(diagnose(fs, cfg), "hang-running").failure_mode == "pooling-livelock"


def test_client_timeouts_log_on_0310_names_the_client_timeouts_form() -> None:
    d = _diag(_log("client-timeouts/0.31.0-tiny-qwen3-livelock/server.log").findings, "hang-running")
    assert d.failure_mode == "pooling-livelock-client-timeouts"
    assert _verdicts(d)["pooling-livelock"] == "ruled out"


def test_a_stall_on_a_release_with_the_fix_names_engine_stall() -> None:
    """No real release with the fix stalls here (0.32.0 returned every matrix case): the recorded 0.31.0 hang's
    shape is judged with 0.32.0 as its release, as tests/probes/test_seed.py does for the finding's words."""
    fs = seed_findings([_recorded_probe("livelock-031-short-long-t256", 256)], 256, "0.32.0")
    d = _diag(diagnose(fs, {}), "hang-running")
    assert d.failure_mode == "engine-stall"
    v = _verdicts(d)
    assert v["pooling-livelock"] == v["pooling-livelock-client-timeouts"] == "ruled out"


def test_log_hang_without_prompt_length_is_one_of_then_the_seed_matrix_names_the_livelock() -> None:
    """A log cannot say how long the held prompt was: the livelock and a stall of the engine's own stand, and the
    experiment is the seed matrix; run (recorded on 0.31.0), it names the livelock."""
    log = _log("0.31.0-tiny-qwen3-livelock-livelock-031.log")
    d = _diag(log.findings, "hang-running")
    assert d.failure_mode == "" and "one of pooling-livelock" in d.title and "engine-stall" in d.title
    assert {e["probe"] for e in d.evidence["experiments"]} >= {"seed", "conformance"}
    assert "seed matrix" in d.fix and "Upgrade" not in d.fix  # no single cause's fix while it is "one of"
    plan = experiment_sets([d], allow_hang=False)
    assert "seed" in plan.refused and "seed" not in plan.run  # hang-capable: only with --allow-hang
    assert "seed" in experiment_sets([d], allow_hang=True).run
    ran = _matrix_outcomes("0.31.0")
    again = _diag(diagnose([*log.findings, matrix_finding(ran, 256, "0.31.0")], log.config), "hang-running")
    assert again.failure_mode == "pooling-livelock"
    assert _verdicts(again)["engine-stall"] == "ruled out"


def test_watch_hang_without_version_is_one_of_and_the_safe_experiment_is_not_enough() -> None:
    """A hang seen by watch (recorded 0.31.0 /metrics pages through the real Watcher) with no version and no
    prompt length: "one of". The safe experiment (conformance: it reads the release) leaves 0.31.0 undecided
    between the livelock and the others; the seed matrix, run, names the livelock."""
    found: list[Finding] = []

    def keep(ev: RunEvent) -> None:
        if ev.finding is not None:
            found.append(ev.finding)

    w = Watcher("http://127.0.0.1:9", keep, interval=1.0, stall_s=5.0)
    pages = ["after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6 + ["after-abort"]
    for i, p in enumerate(pages):
        w.observe((REAL / "0.31.0-tiny-qwen3-livelock" / f"metrics-{p}.txt").read_text(), 1000.0 + i)
    w.close()
    d = _diag(diagnose(found, {}), "hang-running")
    assert d.failure_mode == "" and all(v == "stands" for v in _verdicts(d).values())
    assert "conformance" in experiment_sets([d]).run
    version = json.loads((REAL / "0.31.0-tiny-qwen3-livelock" / "version.json").read_text())["body"]["version"]
    safe = _diag(diagnose(found, {}, {"vllm.version": version, "engine.max_model_len": 256}), "hang-running")
    assert safe.failure_mode == "" and _verdicts(safe)["pooling-livelock"] == "stands"
    named = _diag(diagnose([*found, matrix_finding(_matrix_outcomes("0.31.0"), 256, version)], {}), "hang-running")
    assert named.failure_mode == "pooling-livelock"


def test_watch_hang_without_version_on_0320_the_safe_experiment_names_engine_stall() -> None:
    """The same recorded pages, the release read by the safe experiment being 0.32.0 (the recorded 0.32.0
    server's /version): the livelock is ruled out, a stall of the engine's own is named."""
    found: list[Finding] = []
    w = Watcher("http://127.0.0.1:9", lambda ev: found.append(ev.finding) if ev.finding else None, interval=1.0,
                stall_s=5.0)
    pages = ["after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6
    for i, p in enumerate(pages):
        w.observe((REAL / "0.31.0-tiny-qwen3-livelock" / f"metrics-{p}.txt").read_text(), 1000.0 + i)
    w.close()
    version = json.loads((REAL / "0.32.0-tiny-qwen3-livelock" / "version.json").read_text())["body"]["version"]
    d = _diag(diagnose(found, {}, {"vllm.version": version}), "hang-running")
    assert d.failure_mode == "engine-stall"


# -- waiting-forever: stuck-waiting / kv-cache-too-small ----------------------------------------------------------
def test_waiting_bert_log_names_stuck_waiting() -> None:
    d = _diag(_log("0.32.0-minilm-bert-waiting-waiting-bert.log").findings, "waiting-forever")
    assert d.failure_mode == "stuck-waiting"


def test_probe_waiting_without_config_is_one_of_then_the_log_names_stuck_waiting() -> None:
    """The probe sees a request waiting forever but not the engine's budget or chunking: stuck-waiting or a KV
    cache too small for the prompt. The experiment (the start-up log's config, recorded from the same server)
    names stuck-waiting."""
    fs = seed_findings([_recorded_probe("stuck-waiting-032-bert-long-t256", 256)], 256, "0.32.0")
    d = _diag(diagnose(fs, {}), "waiting-forever")
    assert d.failure_mode == "" and set(_verdicts(d)) == {"stuck-waiting", "kv-cache-too-small"}
    assert all(e["experiment"] for e in d.evidence["experiments"])
    config = analyze_log(REAL / "0.32.0-minilm-bert-waiting" / "server.log").config
    assert _diag(diagnose(fs, config), "waiting-forever").failure_mode == "stuck-waiting"


# -- startup-refusal and rejected: kv-cache-too-small / unsupported-head-dim / oom / engine-dead ------------------
@pytest.mark.parametrize("log, symptom, named, out", [
    pytest.param("0.32.0-tiny-qwen3-kv-too-small.log", "startup-refusal", "kv-cache-too-small", "engine-dead",
                 id="kv-too-small"),
    pytest.param("0.32.0-tiny-qwen3-startup-killed.log", "startup-refusal", "engine-dead", None, id="killed"),
    pytest.param("0.32.0-tiny-qwen3-head-dim-16.log", "rejected", "unsupported-head-dim", "engine-dead",
                 id="head-dim"),
])
def test_engine_failures_name_the_root_cause(log: str, symptom: str, named: str, out: str | None) -> None:
    fs = _log(log).findings
    d = _diag(fs, symptom)
    assert d.failure_mode == named
    if out:
        assert _verdicts(d)[out] == "ruled out"
    shown = {f.check for f in fs if f.check.startswith("diagnosis-")}
    assert shown == {f"diagnosis-{symptom}"}  # a refusal at start-up is no rejected request, and the reverse


# -- healthy servers: nothing to diagnose ------------------------------------------------------------------------
@pytest.mark.parametrize("log", ["client-timeouts/0.32.0-tiny-qwen3-livelock/server.log",
                                 "slow-steps/0.32.0-big-qwen3/server.log"])
def test_healthy_recordings_get_no_diagnosis(log: str) -> None:
    assert not [f for f in _log(log).findings if f.check.startswith("diagnosis-")]


def test_ok_probe_and_matrix_on_0320_get_no_diagnosis() -> None:
    fs = seed_findings([_recorded_probe("ok-032-short-long-t256", 255)], 256, "0.32.0")
    assert diagnose([*fs, matrix_finding(_matrix_outcomes("0.32.0"), 256, "0.32.0")], {}) == []

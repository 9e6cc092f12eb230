"""The engine end to end on recorded real material: events without a store, storage as an observer, no secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources import replay
from tests.stored import stored_bytes
from triage.checklist import CheckOptions, checklist_events, iter_checklist, run_checklist
from triage.target import Target
from triage.findings import Status
from triage.store import Store
from triage.catalogue import POOLING_LIVELOCK

LOG_031 = (replay.REAL / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
LOG_032 = (replay.REAL / "0.32.0-tiny-qwen3-livelock" / "server.log").read_text()
LOG_BERT = (replay.REAL / "0.32.0-minilm-bert-waiting" / "server.log").read_text()
CMD = (
    "vllm serve /root/.cache/vllm-triage/lab/models/tiny-qwen3 --runner pooling --convert embed "
    "--max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill --enforce-eager"
)


NO_GPU = CheckOptions(local_gpu=False)


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "t.db"))


def verdict(findings, check="pooling-livelock-risk"):
    return next(f for f in findings if f.check == check)


@pytest.mark.parametrize(
    "log,truncate,status",
    [
        pytest.param(LOG_031, 256, Status.FAIL, id="0.31-256-fail"),
        pytest.param(LOG_031, -1, Status.FAIL, id="0.31-minus-one-fail"),
        pytest.param(LOG_031, 255, Status.PASS, id="0.31-255-pass"),
        pytest.param(LOG_032, 256, Status.PASS, id="0.32-pass"),
        pytest.param(LOG_BERT, 256, Status.PASS, id="bert-pass"),
    ],
)
def test_offline_cmdline_and_log(store: Store, log: str, truncate: int, status: Status) -> None:
    cmd = CMD if log is not LOG_BERT else None
    res = run_checklist(Target(cmdline=cmd, log_text=log, truncation=truncate), store)
    assert verdict(res.findings).status == status
    rec = store.get_run(res.run_id)
    assert [f.check for f in rec.findings] == [f.check for f in res.findings]
    assert (
        rec.run.status
        == max(
            res.findings, key=lambda f: ["pass", "unknown", "warn", "error", "fail"].index(f.status.value)
        ).status.value
    )
    assert rec.config["values"]["max_model_len"]["value"] == 256
    assert {c.kind for c in rec.captures} >= {"log"}


def test_recorded_server_plus_log(store: Store) -> None:
    spec = Target(url="http://vllm.test:8000", log_text=LOG_031, truncation=256)
    res = run_checklist(spec, store, options=NO_GPU, transport=replay.transport("0.31.0-tiny-qwen3-livelock"))
    v = verdict(res.findings)
    assert v.status == Status.FAIL and POOLING_LIVELOCK.refs[0].removeprefix("vllm") in v.title
    assert v.evidence["preconditions"]["max_model_len"]["source"] == "server"
    assert res.config["vllm_version"]["source"] == "server"
    rec = store.get_run(res.run_id)
    assert any(c.kind == "metrics-page" for c in rec.captures)


def test_server_alone_asks_for_the_budget(store: Store) -> None:
    spec = Target(url="http://vllm.test:8000", truncation=256)
    res = run_checklist(spec, store, options=NO_GPU, transport=replay.transport("0.31.0-tiny-qwen3-livelock"))
    v = verdict(res.findings)
    assert v.status == Status.UNKNOWN
    assert any(q["key"] == "max_num_batched_tokens" for q in v.evidence["questions"])


def test_events_stream_in_order_and_each_finding_is_stored_first(store: Store) -> None:
    kinds = []
    for ev in iter_checklist(Target(cmdline=CMD, log_text=LOG_031, truncation=256), store):
        kinds.append(ev.kind)
        if ev.kind == "finding":
            rec = store.get_run(ev.run_id)
            assert rec.findings[-1].check == ev.finding.check  # committed before it was yielded
    assert kinds[0] == "started" and kinds[-1] == "done"
    assert kinds.index("config") < len(kinds) - 1 and kinds.count("source") == 2


def test_conflicting_sources_are_a_finding(store: Store) -> None:
    cmd = CMD.replace("--max-model-len 256", "--max-model-len 512")
    res = run_checklist(Target(cmdline=cmd, log_text=LOG_031, truncation=256), store)
    c = verdict(res.findings, "config-conflict")
    assert c.status == Status.WARN and "max_model_len" in c.title


def test_api_key_never_reaches_the_database(store: Store, tmp_path: Path) -> None:
    key = "sk-triage-test-0123456789"
    spec = Target(
        url="http://vllm.test:8000",
        api_key=key,
        truncation=256,
        cmdline=CMD + f" --api-key {key}",
    )
    seen: list[str] = []
    run_checklist(spec, store, options=NO_GPU, transport=replay.transport("0.32.0-tiny-qwen3-livelock", seen=seen))
    assert any(s.endswith("auth=True") for s in seen)
    assert key.encode() not in stored_bytes(tmp_path / "t.db")


def test_no_evidence_is_an_error_finding(store: Store) -> None:
    res = run_checklist(Target(), store)
    assert verdict(res.findings, "evidence").status == Status.ERROR


LOG_031_DEFAULTS = (replay.ENGINE / "0.31.0-tiny-qwen3-defaults" / "startup.log").read_text()


@pytest.mark.parametrize(
    "truncate,status",
    [
        pytest.param(4096, Status.FAIL, id="4096-hangs"),
        pytest.param(-1, Status.FAIL, id="minus-one-hangs"),
        pytest.param(4095, Status.PASS, id="4095-does-not"),
    ],
)
def test_031_defaults_log_uses_the_cpu_budget_rule(store: Store, truncate: int, status: Status) -> None:
    res = run_checklist(Target(log_text=LOG_031_DEFAULTS, truncation=truncate), store)
    v = verdict(res.findings)
    assert v.status == status
    budget = v.evidence["preconditions"]["max_num_batched_tokens"]
    assert budget["value"] == 2048 and budget["source"] == "default-rule" and "CPU" in budget["detail"]


def test_a_crashing_check_becomes_an_error_finding(store: Store, monkeypatch) -> None:
    import checks

    def boom(cfg):
        raise RuntimeError("bug in a check")

    real = checks.registry  # the backend check (a declared id) broken, the others as they are
    monkeypatch.setattr(checks, "registry", lambda: [c if c.id != "backend" else checks.Check(c.id, c.title, boom)
                                                     for c in real()])
    res = run_checklist(Target(log_text=LOG_031, truncation=256), store)
    f = verdict(res.findings, "backend")
    assert f.status == Status.ERROR and "bug in a check" in f.title
    assert verdict(res.findings).status == Status.FAIL  # the others still ran


def test_dev_mode_server_alone_knows_chunked_prefill_but_asks_for_the_budget(store: Store) -> None:
    spec = Target(url="http://vllm.test:8000", truncation=4096)
    devmode = replay.transport(replay.ENGINE / "0.31.0-tiny-qwen3-defaults-devmode")
    res = run_checklist(spec, store, options=NO_GPU, transport=devmode)
    v = verdict(res.findings)
    assert v.status == Status.UNKNOWN
    assert v.evidence["preconditions"]["enable_chunked_prefill"]["source"] == "server"
    assert v.evidence["if_left_default"] == {
        "max_num_batched_tokens": 2048,
        "rule": "CPU backend: 2048 for vllm serve (arg_utils.get_batch_defaults of vLLM 0.31.0)",
        "would_chunk": True,
    }


def test_the_engine_runs_without_a_store() -> None:
    events = list(checklist_events(Target(cmdline=CMD, log_text=LOG_031, truncation=256)))
    assert [e.kind for e in events][0] == "started" and events[-1].kind == "done"
    assert all(e.run_id is None for e in events)
    assert verdict([e.finding for e in events if e.finding]).status == Status.FAIL
    res = run_checklist(Target(cmdline=CMD, log_text=LOG_031, truncation=256))
    assert res.run_id is None and verdict(res.findings).status == Status.FAIL


def test_a_crash_mid_run_keeps_what_came_before(store: Store, monkeypatch) -> None:
    import checks

    def stop(cfg):
        raise KeyboardInterrupt  # not an Exception: no check catches it, the run is cut here

    monkeypatch.setattr(checks, "registry", lambda: [checks.Check("stop", "a cut run", stop)])
    seen = []
    with pytest.raises(KeyboardInterrupt):
        for ev in iter_checklist(Target(cmdline=CMD, log_text=LOG_031, truncation=256), store):
            seen.append(ev)
    rec = store.get_run(seen[0].run_id)
    assert rec is not None and rec.config["values"]["max_model_len"]["value"] == 256
    assert [f.check for f in rec.findings] == [e.finding.check for e in seen if e.finding]
    assert {c.kind for c in rec.captures} >= {"log", "cmdline"}


@pytest.mark.parametrize(
    "log,truncate",
    [
        pytest.param(LOG_031, 256, id="0.31-fail"),
        pytest.param(LOG_032, 256, id="0.32-pass"),
        pytest.param(LOG_032, None, id="0.32-truncation-not-stated-unknown"),
        pytest.param(LOG_031, None, id="0.31-truncation-not-stated"),
    ],
)
def test_a_runs_summary_agrees_with_its_status(store: Store, log: str, truncate: int | None) -> None:
    """Issue 32: run #9 was UNKNOWN with the summary "pass: vLLM 0.32.0 carries the fix" (the livelock check's
    own status). The summary starts with the run's status and names a finding that has it."""
    res = run_checklist(Target(cmdline=CMD, log_text=log, truncation=truncate), store)
    rec = store.get_run(res.run_id)
    status, _, title = rec.run.summary.partition(": ")
    assert status == rec.run.status, rec.run.summary
    assert any(f.status.value == status and title.startswith(f.title) for f in res.findings), rec.run.summary

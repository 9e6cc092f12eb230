"""pooling-livelock-risk as a table of effective configs (pure function, no server)."""

from __future__ import annotations

import pytest

from checks import livelock
from triage.catalogue import POOLING_LIVELOCK
from triage.catalogue.records import pooling_livelock_grade
from triage.config import EffectiveConfig
from triage.findings import Status

ISSUE = POOLING_LIVELOCK.refs[0].removeprefix("vllm")  # "#55427", read from the record
FIX_PR = (POOLING_LIVELOCK.fix_ref or "").removeprefix("vllm")

RISKY = {
    "vllm_version": "0.31.0",
    "runner": "pooling",
    "enable_chunked_prefill": True,
    "max_model_len": 256,
    "max_num_batched_tokens": 128,
    "truncate_prompt_tokens": 256,
    "truncate_effective": 256,
}


def cfg(**over) -> EffectiveConfig:
    d = {**RISKY, **over}
    if d.get("truncate_prompt_tokens") == -1 and "truncate_effective" not in over:
        d["truncate_effective"] = d.get("max_model_len")
    return EffectiveConfig.from_dict({k: v for k, v in d.items() if v is not ...})


@pytest.mark.parametrize(
    "over,status,words",
    [
        pytest.param({}, Status.FAIL, [ISSUE, "128 < 256"], id="lab-livelock-profile"),
        pytest.param({"truncate_prompt_tokens": -1}, Status.FAIL, [ISSUE], id="truncate-minus-one"),
        pytest.param({"vllm_version": "0.10.2"}, Status.FAIL, [], id="first-affected"),
        pytest.param({"vllm_version": "0.25.1"}, Status.FAIL, [], id="mid-range"),
        pytest.param(
            {
                "max_model_len": 4096,
                "max_num_batched_tokens": 2048,
                "truncate_prompt_tokens": 4096,
                "truncate_effective": 4096,
            },
            Status.FAIL,
            [],
            id="0.31-cpu-defaults",
        ),
        # the reported deployment (2048 = 2048): the record's grade is FAIL, not "timing-dependent"
        pytest.param(
            {"max_num_batched_tokens": 256}, Status.FAIL, ["#55427", "256 = max_model_len 256"], id="budget-equals-len"
        ),
        pytest.param({"max_num_batched_tokens": 257}, Status.WARN, ["under load"], id="budget-one-above-len"),
        pytest.param({"max_num_batched_tokens": 2048}, Status.WARN, ["under load"], id="budget-above-len"),
        pytest.param(
            {"truncate_prompt_tokens": "none", "truncate_effective": ...},
            Status.WARN,
            ["exactly 256"],
            id="no-truncation",
        ),
        pytest.param(
            {"truncate_prompt_tokens": 255, "truncate_effective": 255}, Status.PASS, ["workaround"], id="truncate-255"
        ),
        pytest.param({"vllm_version": "0.32.0"}, Status.PASS, [FIX_PR], id="fixed-0.32"),
        pytest.param({"vllm_version": "0.33.1"}, Status.PASS, ["fix"], id="later-release"),
        pytest.param({"enable_chunked_prefill": False}, Status.PASS, ["never split"], id="chunked-off"),
        pytest.param(
            {"enable_chunked_prefill": False, "encoder_only": True, "vllm_version": "0.32.0"},
            Status.PASS,
            ["encoder-only", "also vLLM 0.32.0"],
            id="bert-0.32",
        ),
        pytest.param({"runner": "generate"}, Status.PASS, ["not pooling"], id="generate-runner"),
        pytest.param(
            {"truncate_prompt_tokens": ..., "truncate_effective": ...},
            Status.UNKNOWN,
            ["truncate_prompt_tokens"],
            id="truncate-not-stated",
        ),
        pytest.param({"max_num_batched_tokens": ...}, Status.UNKNOWN, ["max_num_batched_tokens"], id="budget-unknown"),
        pytest.param({"enable_chunked_prefill": ...}, Status.UNKNOWN, ["enable_chunked_prefill"], id="chunked-unknown"),
        pytest.param({"vllm_version": ...}, Status.UNKNOWN, ["vllm_version"], id="version-unknown"),
        pytest.param({"vllm_version": "0.9.0"}, Status.UNKNOWN, ["older"], id="older-than-read"),
    ],
)
def test_verdicts(over: dict, status: Status, words: list[str]) -> None:
    f = livelock.check(cfg(**over))
    assert f.check == "pooling-livelock-risk"
    assert f.status == status, f.title
    text = f.title + " " + f.fix + " " + str(f.evidence)
    for w in words:
        assert w in text, (w, text)


def test_fail_names_the_three_fixes_and_preconditions() -> None:
    f = livelock.check(cfg())
    assert "0.32.0" in f.fix and "255" in f.fix and "--no-enable-chunked-prefill" in f.fix
    assert f.refs == list(POOLING_LIVELOCK.refs)  # the record's, whole
    pre = f.evidence["preconditions"]
    assert set(pre) == {
        "vllm_version",
        "runner",
        "enable_chunked_prefill",
        "truncate_prompt_tokens",
        "max_model_len",
        "max_num_batched_tokens",
    }
    assert all(row["source"] == "user" for row in pre.values())


def test_unknown_asks_the_question() -> None:
    f = livelock.check(cfg(truncate_prompt_tokens=..., truncate_effective=...))
    assert [q["key"] for q in f.evidence["questions"]] == ["truncate_prompt_tokens"]
    assert "truncate_prompt_tokens" in f.evidence["questions"][0]["text"]


def test_unknown_budget_asks_for_the_budget_or_the_gpu() -> None:
    f = livelock.check(cfg(max_num_batched_tokens=...))
    qs = {q["key"]: q["keys"] for q in f.evidence["questions"]}
    assert qs["max_num_batched_tokens"] == ["max_num_batched_tokens"]
    assert qs["device"] == ["device"]
    assert qs["gpu_memory_total_bytes"] == ["gpu_name", "gpu_memory_total_bytes"]


@pytest.mark.parametrize(
    "budget,mml",
    [
        pytest.param(128, 256, id="below"),
        pytest.param(256, 256, id="equal"),
        pytest.param(257, 256, id="above-by-one"),
        pytest.param(16384, 2048, id="far-above"),
    ],
)
def test_grade_is_the_records(budget: int, mml: int) -> None:
    """The check's status is the catalogue's grading rule, whatever the numbers."""
    grade = pooling_livelock_grade(budget, mml)
    assert grade.status == (Status.FAIL if budget <= mml else Status.WARN)
    c = cfg(max_model_len=mml, max_num_batched_tokens=budget, truncate_prompt_tokens=mml, truncate_effective=mml)
    f = livelock.check(c)
    assert f.status == grade.status
    assert f.evidence["grade"]["rule"] == grade.reason and grade.reason in f.title
    assert f.fix == POOLING_LIVELOCK.fix(c)

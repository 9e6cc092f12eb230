"""pooling-livelock-risk as a table of effective configs (pure function, no server)."""

from __future__ import annotations

import pytest

from checks import livelock
from triage.config import EffectiveConfig
from triage.findings import Status

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
        pytest.param({}, Status.FAIL, ["#55427", "128 < 256"], id="lab-livelock-profile"),
        pytest.param({"truncate_prompt_tokens": -1}, Status.FAIL, ["#55427"], id="truncate-minus-one"),
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
        pytest.param({"max_num_batched_tokens": 256}, Status.WARN, ["timing-dependent"], id="budget-equals-len"),
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
        pytest.param({"vllm_version": "0.32.0"}, Status.PASS, ["#48039"], id="fixed-0.32"),
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
    assert "vllm#55427" in f.refs and "vllm#48039" in f.refs
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
    assert any("truncate_prompt_tokens" in q for q in f.evidence["questions"])

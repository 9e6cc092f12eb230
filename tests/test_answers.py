"""triage.answers: the accepted keys and value forms, and answers as facts stated by user in the merge."""

from __future__ import annotations

import pytest

from triage import answers
from triage.answers import GiB, AnswerError, parse_answer, parse_answers, parse_bytes
from triage.config import merge
from triage.sources import SourceResult


@pytest.mark.parametrize(
    "text,expected",
    [
        pytest.param("12GiB", 12 * GiB, id="GiB"),
        pytest.param("12 GiB", 12 * GiB, id="GiB-space"),
        pytest.param("12gib", 12 * GiB, id="lowercase"),
        pytest.param("24 GB", 24 * 10**9, id="GB-is-decimal"),
        pytest.param("12288MiB", 12 * GiB, id="MiB"),
        pytest.param("12884901888", 12 * GiB, id="bytes"),
        pytest.param("80G", 80 * 10**9, id="G"),
        pytest.param("1.5TiB", int(1.5 * (1 << 40)), id="fraction"),
    ],
)
def test_sizes(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize(("text", "key", "value"), [
    pytest.param("vllm_version=v0.28.0", "vllm_version", "0.28.0", id="version-tag"),
    pytest.param("vllm_version=vllm/vllm-openai:v0.31.0", "vllm_version", "0.31.0", id="version-image"),
    pytest.param("gpu_name=NVIDIA GeForce RTX 3080 Ti", "gpu_name", "NVIDIA GeForce RTX 3080 Ti", id="gpu"),
    pytest.param("gpu_name='NVIDIA H200'", "gpu_name", "NVIDIA H200", id="gpu-quoted"),
    pytest.param("gpu_memory_total_bytes=12GiB", "gpu_memory_total_bytes", 12 * GiB, id="memory"),
    pytest.param("max_num_batched_tokens=2048", "max_num_batched_tokens", 2048, id="budget"),
    pytest.param("max_model_len=2_048", "max_model_len", 2048, id="underscore"),
    pytest.param("enable_chunked_prefill=off", "enable_chunked_prefill", False, id="bool-off"),
    pytest.param("enable_chunked_prefill=True", "enable_chunked_prefill", True, id="bool-true"),
    pytest.param("device=GPU", "device", "cuda", id="device-gpu"),
    pytest.param("device=cpu", "device", "cpu", id="device-cpu"),
    pytest.param("truncate_prompt_tokens=-1", "truncate_prompt_tokens", -1, id="truncate-minus-one"),
    pytest.param("truncate_prompt_tokens=none", "truncate_prompt_tokens", "none", id="truncate-none"),
])
def test_parse_answer(text: str, key: str, value: object) -> None:
    assert parse_answer(text) == (key, value)


@pytest.mark.parametrize(
    "text,words",
    [
        pytest.param("gpu_mem=12GiB", ["unknown answer key", "gpu_memory_total_bytes", "vllm_version"], id="key"),
        pytest.param("gpu_memory_total_bytes=twelve", ["malformed", "12GiB", "24 GB"], id="size"),
        pytest.param("max_num_batched_tokens=2k", ["malformed", "positive integer"], id="int"),
        pytest.param("max_model_len=0", ["malformed"], id="zero"),
        pytest.param("enable_chunked_prefill=maybe", ["true or false"], id="bool"),
        pytest.param("vllm_version=latest", ["a release"], id="version"),
        pytest.param("device=tpu-pod", ["cuda, rocm or cpu"], id="device"),
        pytest.param("no-equals-sign", ["KEY=VALUE"], id="form"),
    ],
)
def test_bad_answers_name_the_forms(text: str, words: list[str]) -> None:
    with pytest.raises(AnswerError) as e:
        parse_answer(text)
    for w in words:
        assert w in str(e.value)


def test_required_keys_are_accepted() -> None:
    for k in (
        "vllm_version",
        "gpu_name",
        "gpu_memory_total_bytes",
        "max_num_batched_tokens",
        "max_model_len",
        "enable_chunked_prefill",
        "device",
    ):
        assert k in answers.KEYS


def test_mapping_from_the_dashboard_skips_empty_and_types() -> None:
    got = parse_answers({"vllm_version": "0.28.0", "max_model_len": "", "gpu_memory_total_bytes": 12 * GiB})
    assert got == {"vllm_version": "0.28.0", "gpu_memory_total_bytes": 12 * GiB}


def test_a_common_card_implies_backend_and_its_only_memory() -> None:
    cfg = merge([], answers={"gpu_name": "RTX 3080 Ti"})
    assert cfg.get("device") == "cuda"
    assert cfg.get("gpu_memory_total_bytes") == 12 * GiB
    f = cfg.fact("gpu_memory_total_bytes")
    assert f.source == "user" and f.detail.startswith(answers.STATED)
    assert merge([], answers={"gpu_name": "AMD Instinct MI300X"}).get("device") == "rocm"
    # two sizes sold: the name alone does not say the memory
    assert merge([], answers={"gpu_name": "NVIDIA GeForce RTX 3080"}).get("gpu_memory_total_bytes") is None


def test_answers_are_facts_stated_by_user() -> None:
    cfg = merge([], answers={"vllm_version": "0.28.0", "max_num_batched_tokens": 2048})
    for k in ("vllm_version", "max_num_batched_tokens"):
        assert cfg.fact(k).source == "user" and cfg.fact(k).detail == answers.STATED


def _src(source: str, **facts: object) -> SourceResult:
    r = SourceResult(source)
    for k, v in facts.items():
        r.add(k, v, "test")
    return r


def test_stronger_evidence_overrides_an_answer_only_with_a_conflict() -> None:
    cfg = merge(
        [_src("server", vllm_version="0.31.0"), _src("nvml", gpu_name="NVIDIA H200", gpu_memory_total_bytes=141 * GiB)],
        answers={
            "vllm_version": "0.28.0",
            "gpu_name": "NVIDIA GeForce RTX 3080 Ti",
            "gpu_memory_total_bytes": 12 * GiB,
        },
    )
    assert cfg.get("vllm_version") == "0.31.0" and cfg.get("gpu_name") == "NVIDIA H200"
    conflicted = {c.key: c for c in cfg.conflicts}
    assert set(conflicted) >= {"vllm_version", "gpu_name", "gpu_memory_total_bytes"}
    assert conflicted["gpu_name"].others[0].source == "user"


def test_an_agreeing_answer_is_no_conflict() -> None:
    # NVML reports a 3080 Ti as 12288 MiB under its full name; "RTX 3080 Ti" + "12 GB" agree with it
    cfg = merge(
        [_src("nvml", gpu_name="NVIDIA GeForce RTX 3080 Ti", gpu_memory_total_bytes=12288 << 20)],
        answers={"gpu_name": "RTX 3080 Ti", "gpu_memory_total_bytes": 12 * 10**9},
    )
    assert cfg.conflicts == []
    assert cfg.fact("gpu_name").source == "nvml"

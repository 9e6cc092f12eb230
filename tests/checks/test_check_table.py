"""The other checks as tables of effective configs, and the registry's order."""

from __future__ import annotations

import pytest

import checks
from checks import backend, chunked_prefill, flags, gpu_memory, truncation, version
from triage.config import EffectiveConfig
from triage.findings import Status

GiB = 1 << 30


def C(**kw) -> EffectiveConfig:
    return EffectiveConfig.from_dict(kw)


def test_registry_order_is_the_design_cards() -> None:
    assert [c.id for c in checks.registry()] == [
        "vllm-version",
        "backend",
        "gpu-memory",
        "flags",
        "chunked-prefill",
        "truncate-vs-max-model-len",
        "pooling-livelock-risk",
        "rerank-deployment",  # issue 25: findings only for a reranker deployment
        "kube-liveness-blind",  # issue 31: findings only when the deployment's liveness probe is known
    ]


@pytest.mark.parametrize(
    "fn,config,status",
    [
        pytest.param(version.check, {"vllm_version": "0.31.0"}, Status.WARN, id="version-buggy"),
        pytest.param(version.check, {"vllm_version": "0.32.0"}, Status.PASS, id="version-fixed"),
        pytest.param(version.check, {}, Status.UNKNOWN, id="version-unknown"),
        pytest.param(backend.check, {"device": "cpu"}, Status.PASS, id="backend-cpu"),
        pytest.param(
            backend.check,
            {"device": "cuda", "driver_version": "580.159.04", "cuda_version": "13.0"},
            Status.PASS,
            id="backend-cuda",
        ),
        pytest.param(backend.check, {}, Status.UNKNOWN, id="backend-unknown"),
        pytest.param(gpu_memory.check, {"device": "cpu"}, Status.PASS, id="gpu-cpu"),
        pytest.param(
            gpu_memory.check,
            {"max_model_len": 256, "kv_cache_size_tokens": 131072},
            Status.PASS,
            id="gpu-kv-from-server",
        ),
        pytest.param(
            gpu_memory.check,
            {"max_model_len": 32768, "kv_cache_size_tokens": 20000},
            Status.FAIL,
            id="gpu-kv-too-small",
        ),
        pytest.param(
            gpu_memory.check,
            {
                "device": "cuda",
                "model": "Qwen/Qwen3-Embedding-4B",
                "max_model_len": 32768,
                "gpu_memory_total_bytes": 12 * GiB,
            },
            Status.FAIL,
            id="qwen3-4b-32k-on-12g",
        ),
        pytest.param(
            gpu_memory.check,
            {
                "device": "cuda",
                "model": "Qwen/Qwen3-Embedding-4B",
                "max_model_len": 32768,
                "gpu_memory_total_bytes": 150754820096,
            },
            Status.PASS,
            id="qwen3-4b-32k-on-h200",
        ),
        pytest.param(gpu_memory.check, {"device": "cuda"}, Status.UNKNOWN, id="gpu-unknown"),
        pytest.param(chunked_prefill.check, {"enable_chunked_prefill": True}, Status.PASS, id="chunked-on"),
        pytest.param(chunked_prefill.check, {}, Status.UNKNOWN, id="chunked-unknown"),
        pytest.param(
            truncation.check, {"truncate_prompt_tokens": 300, "max_model_len": 256}, Status.FAIL, id="truncate-above"
        ),
        pytest.param(
            truncation.check,
            {"truncate_prompt_tokens": 256, "max_model_len": 256, "vllm_version": "0.31.0"},
            Status.WARN,
            id="truncate-equal-buggy",
        ),
        pytest.param(
            truncation.check,
            {"truncate_prompt_tokens": 256, "max_model_len": 256, "vllm_version": "0.32.0"},
            Status.PASS,
            id="truncate-equal-fixed",
        ),
        pytest.param(
            truncation.check, {"truncate_prompt_tokens": "none", "max_model_len": 256}, Status.WARN, id="truncate-none"
        ),
        pytest.param(truncation.check, {"max_model_len": 256}, Status.UNKNOWN, id="truncate-unstated"),
    ],
)
def test_table(fn, config: dict, status: Status) -> None:
    out = fn(C(**config))
    first = out[0] if isinstance(out, list) else out
    assert first.status == status, first.title


def test_bert_budget_below_len_is_the_stuck_waiting_case() -> None:
    out = chunked_prefill.check(C(enable_chunked_prefill=False, max_num_batched_tokens=128, max_model_len=256))
    assert [f.check for f in out] == ["chunked-prefill", "budget-below-max-model-len"]
    assert out[1].status == Status.FAIL


def test_h200_tier_in_gpu_memory_evidence() -> None:
    f = gpu_memory.check(C(device="cuda", gpu_name="NVIDIA H200", gpu_memory_total_bytes=150754820096))
    assert f.evidence["default_budget_tier"]["max_num_batched_tokens"] == 8192


@pytest.mark.parametrize(
    "config,ids",
    [
        pytest.param(
            {"cmdline_unknown_flags": [{"option": "--embedding-batch-size", "why": "x"}]},
            ["flags-unknown"],
            id="unknown-flag",
        ),
        pytest.param(
            {"cmdline_myths": [{"token": "vllm-entrypoint", "why": "x"}]}, ["flags-unknown-command"], id="myth-command"
        ),
        pytest.param({"runner": "generate"}, ["flags-runner"], id="generate-runner"),
        pytest.param(
            {"max_num_batched_tokens": 65536, "device": "cuda", "gpu_memory_total_bytes": 12 * GiB},
            ["flags-oom-risk"],
            id="oom-budget",
        ),
        pytest.param({}, ["flags"], id="nothing-to-say"),
    ],
)
def test_flags(config: dict, ids: list[str]) -> None:
    assert [f.check for f in flags.check(C(**config))] == ids


def test_trust_remote_code_myth() -> None:
    out = flags.check(C(trust_remote_code=True, model="Qwen/Qwen3-Embedding-4B"))
    assert [f.check for f in out] == ["flags-trust-remote-code"]

"""vLLM's batch-budget default tiers (arg_utils.get_batch_defaults, identical in the 0.31.0 and 0.32.0 wheels)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.vllm.defaults import GiB, max_num_batched_tokens_default

H200 = json.loads((Path(__file__).parents[1] / "fixtures" / "nvml" / "h200.json").read_text())["gpus"][0]


@pytest.mark.parametrize("device, name, mem, usage, world, want", [
    pytest.param("cuda", "NVIDIA B200", 180 * GiB, "serve", 1, 16384, id="b200-160-tier-serve"),
    pytest.param("cuda", "NVIDIA B200", 180 * GiB, "offline", 1, 16384, id="b200-160-tier-offline"),
    pytest.param("cuda", H200["name"], H200["memory_total"], "serve", 1, 8192, id="recorded-h200-serve"),
    pytest.param("cuda", H200["name"], H200["memory_total"], "offline", 1, 16384, id="recorded-h200-offline"),
    pytest.param("cuda", "NVIDIA A100-SXM4-80GB", 80 * GiB, "serve", 1, 2048, id="a100-80g-excluded"),
    pytest.param("cuda", "NVIDIA A100-SXM4-80GB", 80 * GiB, "offline", 1, 8192, id="a100-80g-offline"),
    pytest.param("cuda", "NVIDIA GeForce RTX 3060", 12 * GiB, "serve", 1, 2048, id="12g-card"),
    pytest.param("cuda", "NVIDIA L40S", 48 * GiB, "serve", 1, 2048, id="48g-card"),
    pytest.param("cpu", None, None, "serve", 2, 4096, id="cpu-world-2"),
    pytest.param("cpu", None, None, "offline", 1, 4096, id="cpu-offline"),
])
def test_budget_tiers(device: str, name: str | None, mem: int | None, usage: str, world: int, want: int) -> None:
    rule = max_num_batched_tokens_default(device=device, gpu_name=name, gpu_memory_total_bytes=mem,
                                          world_size=world, usage=usage)
    assert rule is not None and rule.value == want, rule


@pytest.mark.parametrize("device, mem", [pytest.param(None, None, id="device-unknown"),
                                         pytest.param("cuda", None, id="gpu-memory-unknown")])
def test_unknown_tier_is_none_not_a_guess(device: str | None, mem: int | None) -> None:
    assert max_num_batched_tokens_default(device=device, gpu_memory_total_bytes=mem) is None

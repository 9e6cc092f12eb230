"""NVML source: the recorded H200 (tests/fixtures/nvml/h200.json) and 'no GPU visible' on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.sources import nvml

H200 = Path(__file__).resolve().parents[1] / "fixtures" / "nvml" / "h200.json"


@pytest.mark.skipif(not H200.exists(), reason="no recorded H200")
def test_recorded_h200() -> None:
    res = nvml.collect(json.loads(H200.read_text()))
    facts = {k: f.value for k, f in res.facts.items()}
    assert facts["gpu_name"] == "NVIDIA H200"
    assert facts["gpu_memory_total_bytes"] == 150754820096
    assert facts["driver_version"] and facts["cuda_version"]
    assert res.unavailable is None


def test_no_gpu_is_a_value_not_a_crash() -> None:
    res = nvml.collect()
    if res.unavailable is None:
        pytest.skip("this machine has a GPU")
    assert res.unavailable.startswith("no GPU visible")
    assert not res.facts


READ_NVML = H200.with_name("h200-read_nvml.json")


@pytest.mark.skipif(not READ_NVML.exists(), reason="no engine recording from the H200")
def test_engine_reader_output_from_the_real_h200_replays() -> None:
    raw = json.loads(READ_NVML.read_text())
    assert raw["backend"] == "cuda" and raw["gpus"][0]["name"] == "NVIDIA H200"
    res = nvml.collect(raw)
    assert res.facts["gpu_memory_total_bytes"].value == 150754820096
    assert res.facts["cuda_version"].value == "13.0"


SHARED = H200.with_name("h200-shared-gpu.json")


@pytest.mark.skipif(not SHARED.exists(), reason="no shared-GPU recording")
def test_shared_gpu_recorded_on_the_h200() -> None:
    """Mode 5 from NVML: a second process held 100 GiB of the real H200 (record_shared_gpu.py)."""
    from checks import gpu_memory
    from triage.catalogue.startup import SHARED_GPU_MEMORY
    from triage.config import merge
    from triage.findings import Status
    from triage.sources import cmdline

    rec = json.loads(SHARED.read_text())
    res = nvml.collect(rec["shared"])
    facts = {k: f.value for k, f in res.facts.items()}
    assert facts["gpu_processes"][0]["pid"] == rec["holder_pid"]
    assert facts["gpu_compute_capability"] == "9.0" and facts["gpu_utilization_percent"] == 0
    cfg = merge([res, cmdline.collect("vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed")])
    out = gpu_memory.check(cfg)
    shared = out[0] if isinstance(out, list) else out
    assert shared.check == "gpu-memory-shared" and shared.status == Status.FAIL
    assert shared.refs == list(SHARED_GPU_MEMORY.refs) and "--gpu-memory-utilization" in shared.fix
    # the same check run there gave the same verdict
    assert rec["gpu_memory_check"][0]["status"] == "fail"
    # alone on the card (after the holder exited) the share fits
    alone = gpu_memory.check(merge([nvml.collect(rec["after"]), cmdline.collect("vllm serve Qwen/Qwen3-Embedding-4B")]))
    assert alone[0].status == Status.PASS
    assert rec["torch"]["bf16_supported"] is True and max(rec["torch"]["utilization_under_matmul"]) > 50

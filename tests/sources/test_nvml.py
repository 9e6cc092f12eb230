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

"""Start-up config from the recorded start-up logs of the lab's real servers."""

from __future__ import annotations

import pytest

from tests.logs.real_logs import STARTUP_031, STARTUP_032, STARTUP_BERT, lines_of
from triage.logs import extract_startup_config

MODEL = "/root/.cache/vllm-triage/lab/models/tiny-qwen3"


@pytest.mark.parametrize(
    "path,expect",
    [
        pytest.param(
            STARTUP_031,
            {
                "vllm_version": "0.31.0",
                "device": "cpu",
                "dtype": "float16",
                "max_model_len": 256,
                "max_num_batched_tokens": 128,
                "enable_chunked_prefill": True,
                "enable_prefix_caching": True,
                "pooling_type": "LAST",
                "kv_cache_size_tokens": 131072,
                "runner": "pooling",
                "convert": "embed",
                "model": MODEL,
                "served_model_name": MODEL,
                "tensor_parallel_size": 1,
                "data_parallel_size": 1,
                "kv_cache_memory_bytes": 67108864,
            },
            id="0.31.0-qwen3-livelock",
        ),
        pytest.param(
            STARTUP_032,
            {
                "vllm_version": "0.32.0",
                "device": "cpu",
                "max_model_len": 256,
                "max_num_batched_tokens": 128,
                "enable_chunked_prefill": True,
                "pooling_type": "LAST",
            },
            id="0.32.0-qwen3-livelock",
        ),
        pytest.param(
            STARTUP_BERT,
            {
                "vllm_version": "0.32.0",
                "device": "cpu",
                "max_model_len": 256,
                "max_num_batched_tokens": 128,
                "enable_chunked_prefill": False,
                "enable_prefix_caching": False,
                "pooling_type": "MEAN",
                "runner": "pooling",
            },
            id="0.32.0-bert-chunked-prefill-disabled",
        ),
    ],
)
def test_recorded_startup_logs(path, expect) -> None:  # noqa: ANN001
    cfg = extract_startup_config(path.read_text())
    for k, v in expect.items():
        assert cfg.get(k) == v, k
    assert "enable_chunked_prefill" in cfg["non_default_args"]


def test_disabling_line_overrides_the_flag_asked_for() -> None:
    prov = extract_startup_config(STARTUP_BERT.read_text(), with_provenance=True)
    assert prov["non_default_args"]["value"]["enable_chunked_prefill"] is True  # what the user asked
    assert prov["enable_chunked_prefill"]["value"] is False
    assert "Disabling chunked prefill" in prov["enable_chunked_prefill"]["detail"]
    assert prov["max_model_len"]["source"] == "log" and prov["max_model_len"]["detail"].startswith("line ")


def test_lines_and_path_inputs_agree() -> None:
    assert extract_startup_config(lines_of(STARTUP_031)) == extract_startup_config(STARTUP_031)


def test_api_key_never_extracted() -> None:
    from pathlib import Path

    apikey = Path(STARTUP_031).parent.parent / "engine" / "0.32.0-tiny-qwen3-livelock-apikey"
    logs = sorted(apikey.glob("*.log"))
    if not logs:
        pytest.skip("no recorded api-key start-up log")
    cfg = extract_startup_config(logs[0].read_text())
    assert not any("api_key" in k for k in cfg["non_default_args"])

"""Start-up log source on real recorded logs (tests/fixtures/real/*/server.log)."""

from __future__ import annotations

import pytest

from tests.sources.replay import REAL
from triage.sources import startup_log


@pytest.mark.parametrize(
    "dirname,expect",
    [
        pytest.param(
            "0.31.0-tiny-qwen3-livelock",
            {
                "vllm_version": "0.31.0",
                "device": "cpu",
                "max_model_len": 256,
                "max_num_batched_tokens": 128,
                "enable_chunked_prefill": True,
                "enable_prefix_caching": True,
                "pooling_type": "LAST",
                "runner": "pooling",
                "convert": "embed",
                "dtype": "float16",
                "kv_cache_size_tokens": 131072,
            },
            id="qwen3-0.31",
        ),
        pytest.param(
            "0.32.0-minilm-bert-waiting",
            {
                "vllm_version": "0.32.0",
                "enable_chunked_prefill": False,
                "pooling_type": "MEAN",
                "max_num_batched_tokens": 128,
            },
            id="bert-0.32-chunked-disabled",
        ),
    ],
)
def test_log_facts(dirname: str, expect: dict) -> None:
    text = (REAL / dirname / "server.log").read_text()
    res = startup_log.collect(text)
    got = {k: f.value for k, f in res.facts.items()}
    assert all(f.source == "log" for f in res.facts.values())
    assert "max_model_len" in (res.stated_args or set())
    for k, v in expect.items():
        assert got.get(k) == v, (k, got.get(k))


def test_not_a_log() -> None:
    res = startup_log.collect("hello\nworld\n")
    assert res.unavailable and not res.facts

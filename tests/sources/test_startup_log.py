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


def test_pooling_answers_in_the_access_log() -> None:
    """2xx answers on pooling endpoints are read (issue 42 (c)); other paths and errors are not."""
    from triage.sources.startup_log import pooling_answers
    text = ('(APIServer pid=1) INFO:     127.0.0.1:51200 - "POST /v1/embeddings HTTP/1.1" 200 OK\n'
            '(APIServer pid=1) INFO:     127.0.0.1:51262 - "POST /v1/embeddings HTTP/1.1" 400 Bad Request\n'
            'INFO:     10.0.0.1:1 - "POST /rerank HTTP/1.1" 200 OK\n'
            'INFO:     10.0.0.1:1 - "GET /v1/models HTTP/1.1" 200 OK\n')
    assert pooling_answers(text) == {"/v1/embeddings": 1, "/rerank": 1}
    assert pooling_answers("no access lines") == {}

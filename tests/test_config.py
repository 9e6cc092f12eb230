"""Effective config: source priority, provenance, conflicts and vLLM's default rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sources.replay import REAL
from triage.config import merge
from triage.sources import SourceResult, cmdline, nvml, startup_log

H200 = json.loads((Path(__file__).parent / "fixtures" / "nvml" / "h200.json").read_text())


def src(name: str, **facts) -> SourceResult:
    r = SourceResult(name)
    for k, v in facts.items():
        r.add(k, v, "test")
    return r


def test_server_beats_log_beats_cmdline_and_conflicts_are_kept() -> None:
    cfg = merge([src("cmdline", max_model_len=512), src("log", max_model_len=256), src("server", max_model_len=256)])
    assert cfg.get("max_model_len") == 256 and cfg.fact("max_model_len").source == "server"
    assert [c.key for c in cfg.conflicts] == ["max_model_len"]
    assert cfg.conflicts[0].others[0].source == "cmdline"


def test_versions_compare_as_versions() -> None:
    cfg = merge([src("server", vllm_version="0.31.0"), src("cmdline", vllm_version="v0.31.0")])
    assert not cfg.conflicts


@pytest.mark.parametrize(
    "text,gpu,expect_budget,expect_chunked",
    [
        pytest.param(
            "vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed",
            H200,
            8192,
            True,
            id="qwen3-h200-serve-8192",
        ),
        pytest.param(
            "vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed --no-enable-chunked-prefill "
            "--max-model-len 32768",
            H200,
            32768,
            False,
            id="chunked-off-raises-budget",
        ),
        pytest.param(
            "vllm serve BAAI/bge-base-en --runner pooling --max-model-len 512",
            H200,
            8192,
            False,
            id="bert-chunked-off-by-default",
        ),
        pytest.param(
            "vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed --max-num-batched-tokens 4096",
            H200,
            4096,
            True,
            id="stated-budget-kept",
        ),
    ],
)
def test_default_rules(text: str, gpu: dict, expect_budget: int, expect_chunked: bool) -> None:
    cfg = merge([cmdline.collect(text), nvml.collect(gpu)])
    assert cfg.get("max_num_batched_tokens") == expect_budget
    assert cfg.get("enable_chunked_prefill") is expect_chunked
    if "--max-num-batched-tokens" not in text:
        assert cfg.fact("max_num_batched_tokens").source == "default-rule"


def test_no_default_without_knowing_what_was_stated() -> None:
    cfg = merge([src("server", max_model_len=256, vllm_version="0.31.0")])
    assert not cfg.has("max_num_batched_tokens") and not cfg.has("enable_chunked_prefill")


def test_cpu_default_from_log_device() -> None:
    log = (REAL / "0.31.0-tiny-qwen3-livelock" / "server.log").read_text()
    cfg = merge([startup_log.collect(log)], {"truncate_prompt_tokens": -1})
    assert cfg.get("truncate_effective") == 256
    assert cfg.fact("max_num_batched_tokens").source == "log"


def test_to_dict_round_trip() -> None:
    cfg = merge([src("server", max_model_len=256)], {"truncate_prompt_tokens": 255})
    d = cfg.to_dict()
    assert d["max_model_len"] == {"value": 256, "source": "server", "detail": "test"}
    assert d["truncate_prompt_tokens"]["source"] == "user"
    assert type(cfg).from_dict(d).get("max_model_len") == 256

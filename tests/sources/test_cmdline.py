"""Command-line parsing the way vLLM's FlexibleArgumentParser does, against each release's own parser."""

from __future__ import annotations

import pytest

from triage.sources import cmdline
from triage.vllm import flags


def facts(text: str) -> dict:
    return {k: f.value for k, f in cmdline.collect(text).facts.items()}


@pytest.mark.parametrize(
    "text,expect",
    [
        pytest.param(
            "vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed --max-model-len 32768",
            {"model": "Qwen/Qwen3-Embedding-4B", "runner": "pooling", "convert": "embed", "max_model_len": 32768},
            id="plain",
        ),
        pytest.param(
            "vllm serve m --max-model-len=32k --max_num_batched_tokens 2K",
            {"max_model_len": 32000, "max_num_batched_tokens": 2048},
            id="equals-underscores-human-ints",
        ),
        pytest.param(
            "vllm serve m --no-enable-chunked-prefill --enable-prefix-caching",
            {"enable_chunked_prefill": False, "enable_prefix_caching": True},
            id="booleans",
        ),
        pytest.param(
            "vllm serve m --hf-overrides '{\"is_matryoshka\": true}'",
            {"hf_overrides": {"is_matryoshka": True}, "is_matryoshka": True},
            id="json-value",
        ),
        pytest.param("vllm serve m --hf-overrides.is_matryoshka true", {"is_matryoshka": True}, id="dotted-json"),
        pytest.param(
            'vllm serve m --served-model-name a b -tp=2 --pooler-config \'{"pooling_type": "MEAN"}\'',
            {"served_model_name": "a", "tensor_parallel_size": 2, "pooling_type": "MEAN"},
            id="nargs-short",
        ),
        pytest.param(
            "vllm serve \\\n  m \\\n  --max-model-len 256  # comment\n",
            {"model": "m", "max_model_len": 256},
            id="continuations",
        ),
        pytest.param(
            "python -m vllm.entrypoints.openai.api_server --model /models/x --max-model-len 512",
            {"model": "/models/x", "max_model_len": 512},
            id="python-entrypoint",
        ),
        pytest.param(
            "docker run --gpus all -p 8000:8000 --ipc=host -e HF_TOKEN=hf_x vllm/vllm-openai:v0.31.0 "
            "--model Qwen/Qwen3-Embedding-4B --runner pooling",
            {
                "vllm_version": "0.31.0",
                "device": "cuda",
                "model": "Qwen/Qwen3-Embedding-4B",
                "docker_env": {"HF_TOKEN": "[REDACTED]"},
            },
            id="docker",
        ),
    ],
)
def test_parse(text: str, expect: dict) -> None:
    got = facts(text)
    for k, v in expect.items():
        assert got.get(k) == v, (k, got)


def test_api_key_value_never_kept() -> None:
    res = cmdline.collect("vllm serve m --api-key sk-secret-12345678")
    assert res.facts["api_key_required"].value is True
    assert "sk-secret-12345678" not in repr(res.facts)


def test_guide_myths_are_reported() -> None:
    got = facts("vllm-entrypoint api_server --model Qwen/Qwen3-Embedding-4B --embedding-batch-size 64 --task embed")
    assert [m["token"] for m in got["cmdline_myths"]] == ["vllm-entrypoint", "api_server"]
    opts = [u["option"] for u in got["cmdline_unknown_flags"]]
    assert opts == ["--embedding-batch-size", "--task"]
    assert got["model"] == "Qwen/Qwen3-Embedding-4B"


def test_stated_args_are_known() -> None:
    res = cmdline.collect("vllm serve m --max-model-len 256")
    assert res.stated_args == {"model", "max_model_len"}


def test_options_come_from_the_release_parser() -> None:
    from triage.vllm import knowledge

    res = knowledge.for_version("0.32.0")
    v = flags.judge("--no-enable-chunked-prefill", res)
    assert v.spec is not None and v.spec.dest == "enable_chunked_prefill" and v.sets is False
    assert not flags.judge("--embedding-batch-size", res).accepted
    grpc = flags.judge("--grpc-port", knowledge.for_version("0.31.0"))
    assert not grpc.accepted and grpc.added_in == "0.32.0"


def test_removed_and_renamed_options_are_facts() -> None:
    got = facts("vllm serve m --task embed --pooler-config '{\"normalize\": false, \"pooling_type\": \"MEAN\"}'")
    removed = {r["option"]: r["use"] for r in got["cmdline_removed_flags"]}
    assert "--runner pooling" in removed["--task"]
    assert removed["--pooler-config normalize"] == "--pooler-config use_activation"
    assert flags.replacement("--override_pooler_config").use.startswith("--pooler-config")
    assert flags.replacement("--max-model-len") is None

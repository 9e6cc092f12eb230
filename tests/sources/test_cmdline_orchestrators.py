"""Orchestrators and launchers around `vllm serve` (issue 42): the line inside a GPUStack log, KServe's
huggingfaceserver and Ray Serve named as launchers (their own options never judged as vllm serve's).

Fixtures: the lines as posted in gpustack/gpustack#3991 and kserve/kserve#5399 (tests/world/cases/, shown cases)."""
from __future__ import annotations

from pathlib import Path

from triage.sources import cmdline

GPUSTACK_LINE = (
    "2025-12-23 12:11:33.780286+08:00 - gpustack.worker.backends.vllm - INFO - With image: "
    "gpustack/runner:cuda12.8-vllm0.13.0, arguments: [vllm serve /data/gpustack_cache/huggingface/Qwen/"
    "Qwen3-Embedding-0.6B --max-model-len 8192 --task=embed --host 192.168.50.12 --port 42041 --served-model-name "
    "qwen3-embedding-0.6b-cuda12.8], ports: [42041], envs(inconsistent input items mean unchangeable):"
)


def test_gpustack_log_line_is_the_command_line() -> None:
    w = cmdline.in_log("2025-12-23 … - gpustack.worker.backends.base - INFO - Model files are ready.\n" + GPUSTACK_LINE)
    assert w is not None and w.who == "GPUStack" and w.line == 2
    assert w.text.startswith("vllm serve /data/") and w.text.endswith("qwen3-embedding-0.6b-cuda12.8")
    assert w.image == "gpustack/runner:cuda12.8-vllm0.13.0"


def test_gpustack_old_form_and_nothing() -> None:
    w = cmdline.in_log("2025-07-25 - gpustack.worker.backends.vllm - DEBUG - Run vLLM with arguments: serve /m "
                       "--max-model-len 8192")
    assert w is not None and w.text == "vllm serve /m --max-model-len 8192"
    assert cmdline.in_log("INFO 08-22 15:15:42 [api_server.py:1805] vLLM API server version 0.10.1.1") is None
    assert cmdline.in_log(None) is None


def test_wrapped_line_judged_against_the_runner_image_release() -> None:
    res = cmdline.collect_wrapped(cmdline.in_log(GPUSTACK_LINE))
    assert res.facts["vllm_version"].value == "0.13.0"
    assert res.facts["cmdline_checked_against"].value["release"] == "0.13.0"
    assert [r["option"] for r in res.facts["cmdline_removed_flags"].value] == ["--task"]
    assert res.facts["launcher"].value.startswith("GPUStack")
    assert res.facts["served_model_name"].value == "qwen3-embedding-0.6b-cuda12.8"


def test_kserve_huggingfaceserver_is_a_launcher_not_vllm_serve() -> None:
    res = cmdline.collect("uv run python -m huggingfaceserver --model_dir e5-small")
    assert res.facts["launcher"].value.startswith("KServe huggingfaceserver")
    assert "cmdline_unknown_flags" not in res.facts  # no "vllm serve has no option --model_dir"
    assert res.facts["model"].value == "e5-small"


def test_kserve_passes_the_rest_to_vllm_engine_args() -> None:
    res = cmdline.collect("python -m huggingfaceserver --model_id=BAAI/bge-m3 --backend vllm --task text_embedding "
                          "--max_model_len=8192 --gpu_memory_utilization 0.5 --return_probabilities --bogus-flag 3")
    assert res.facts["max_model_len"].value == 8192 and res.facts["gpu_memory_utilization"].value == 0.5
    assert res.facts["model"].value == "BAAI/bge-m3"
    assert [u["option"] for u in res.facts["cmdline_unknown_flags"].value] == ["--bogus-flag"]


def test_ray_serve_line_holds_no_vllm_option() -> None:
    res = cmdline.collect("serve run config.yaml")
    assert res.facts["launcher"].value.startswith("Ray Serve")
    assert res.facts["cmdline_args"].value == {} and "cmdline_unknown_flags" not in res.facts
    assert cmdline.collect("vllm serve BAAI/bge-m3").facts["launcher"].value == "vllm serve"


def test_image_tag_naming_vllm_inside() -> None:
    res = cmdline.collect("docker run --gpus all gpustack/runner:cuda12.9-vllm0.14.1 --model x")
    assert res.facts["vllm_version"].value == "0.14.1"


def test_ms_swift_line_maps_only_its_vllm_options() -> None:
    """ms-swift's `swift infer --infer_backend vllm` (modelscope/ms-swift#7065, as posted): its --vllm_* options are
    vLLM's engine arguments, every other option is ms-swift's own and never judged as vllm serve's."""
    text = (Path(__file__).resolve().parents[1] / "world" / "cases" / "msswift-7065-llmengine-no-encode"
            / "cmdline.txt").read_text()
    res = cmdline.collect(text)
    assert res.facts["launcher"].value.startswith("ms-swift")
    assert "cmdline_unknown_flags" not in res.facts  # no "vllm serve has no option --infer-backend"
    assert res.facts["gpu_memory_utilization"].value == 0.2


def test_ms_swift_flag_values_and_other_launchers() -> None:
    res = cmdline.collect("swift deploy --model Qwen/Qwen3-Embedding-0.6B --task_type embedding --infer_backend vllm "
                          "--vllm_max_model_len 8192 --vllm_enable_prefix_caching false --vllm_use_async_engine true")
    assert res.facts["model"].value == "Qwen/Qwen3-Embedding-0.6B" and res.facts["max_model_len"].value == 8192
    assert res.facts["enable_prefix_caching"].value is False and "cmdline_unknown_flags" not in res.facts
    lf = cmdline.collect("llamafactory-cli api --model_name_or_path m --infer_backend vllm --vllm_maxlen 4096")
    assert lf.facts["launcher"].value.startswith("LLaMA-Factory") and lf.facts["max_model_len"].value == 4096
    fc = cmdline.collect("python -m fastchat.serve.vllm_worker --model-path BAAI/bge-m3 --controller-address "
                         "http://c:21001 --gpu-memory-utilization 0.8")
    assert fc.facts["launcher"].value.startswith("FastChat vllm_worker") and "cmdline_unknown_flags" not in fc.facts
    for line, name in (("python3 -m sglang.launch_server --model-path m --is-embedding", "SGLang"),
                       ("text-embeddings-router --model-id BAAI/bge-m3 --port 8080", "Text Embeddings Inference"),
                       ("trl vllm-serve --model m --tensor_parallel_size 2", "TRL vllm-serve")):
        other = cmdline.collect(line)
        assert other.facts["launcher"].value.startswith(name) and "cmdline_unknown_flags" not in other.facts

"""Deployment files as the command-line source (issue 31): Kubernetes manifests, production-stack Helm values,
``helm template`` output, compose files and a KServe InferenceService (tests/fixtures/deploy, README there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from triage.cli import main
from triage.checklist import run_checklist
from triage.sources import cmdline, deploy, deploy_helm, deploy_read
from triage.target import Target
from triage.catalogue import POOLING_LIVELOCK

DEPLOY = Path(__file__).resolve().parents[1] / "fixtures" / "deploy"


def text(name: str) -> str:
    return (DEPLOY / name).read_text()


def statuses(t: Target) -> dict[str, str]:
    return {f.check: f.status.value for f in run_checklist(t).findings}


# file, target, the command line it renders to (the image as docker run's, so the release travels too), truncate
RENDERED = [
    pytest.param("seed-deployment.yaml", None,
                 "docker run --gpus all vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-0.6B --runner pooling "
                 "--max-model-len 2048 --max-num-batched-tokens 2048 --enable-chunked-prefill "
                 "--gpu-memory-utilization 0.85", "2048", "fail", id="k8s-deployment-seed"),
    pytest.param("production-stack-values.yaml", "qwen3-embed",
                 "docker run vllm/vllm-openai:v0.31.0 Qwen/Qwen3-Embedding-0.6B --host 0.0.0.0 --port 8000 "
                 "--no-enable-chunked-prefill --no-enable-prefix-caching --max-model-len 2048 "
                 "--gpu_memory_utilization 0.85 --runner pooling --convert embed --max-num-batched-tokens 2048",
                 "2048", "pass", id="helm-values"),
    pytest.param("helm-template-output.yaml", None,
                 "docker run vllm/vllm-openai:v0.31.0 Qwen/Qwen3-Embedding-0.6B --host 0.0.0.0 --port 8000 "
                 "--no-enable-chunked-prefill --no-enable-prefix-caching --max-model-len 2048 "
                 "--gpu_memory_utilization 0.85 --runner pooling --convert embed --max-num-batched-tokens 2048",
                 "2048", "pass", id="helm-template"),
    pytest.param("compose.yaml", None,
                 "docker run vllm/vllm-openai:v0.30.0 BAAI/bge-m3 --runner pooling --max-model-len 8192 "
                 "--max-num-batched-tokens 4096 --enable-chunked-prefill", "8192", None, id="compose"),
    pytest.param("statefulset-shell.yaml", None,
                 "python3 -m vllm.entrypoints.openai.api_server --model intfloat/e5-large-v2 --runner pooling "
                 "--max-model-len 512 --port 8000", "512", None, id="statefulset-shell"),
    pytest.param("kserve-inferenceservice.yaml", None,
                 "docker run vllm/vllm-openai:v0.32.0 --model Alibaba-NLP/gte-Qwen2-1.5B-instruct --runner pooling "
                 "--max-model-len 8192", "8192", "pass", id="kserve"),
]


@pytest.mark.parametrize("name,pick,line,truncate,livelock", RENDERED)
def test_same_verdicts_as_the_rendered_command_line(name: str, pick: str | None, line: str, truncate: str,
                                                    livelock: str | None) -> None:
    from_file = statuses(Target(cmdline=text(name), cmdline_file=name, deploy_target=pick, truncation=truncate))
    # the GPU a manifest asks for (nvidia.com/gpu) is the device a plain line cannot say: stated beside it
    answers = {"device": "cuda"} if name == "statefulset-shell.yaml" else None
    from_line = statuses(Target(cmdline=line, truncation=truncate, answers=answers))
    # a command line carries no liveness probe: that verdict is the file's own (checks/liveness.py, test_kube.py)
    from_file.pop("kube-liveness-blind", None)
    assert from_file == from_line
    if livelock:
        assert from_file["pooling-livelock-risk"] == livelock


def test_seed_deployment_is_the_livelock_with_runner_pooling() -> None:
    res = run_checklist(Target(cmdline=text("seed-deployment.yaml"), cmdline_file="deploy.yaml",
                               truncation="2048"))
    by = {f.check: f for f in res.findings}
    assert by["pooling-livelock-risk"].status.value == "fail"
    assert by["pooling-livelock-risk"].refs == list(POOLING_LIVELOCK.refs)
    assert by["flags"].status.value == "pass"  # no "--runner -": the YAML list is not text
    assert res.config["runner"]["value"] == "pooling"
    assert res.config["vllm_version"]["value"] == "0.28.0"
    # each fact says file, document and line
    assert res.config["runner"]["detail"] == "--runner (deploy.yaml, document 2, line 42)"
    assert "deploy.yaml, document 2, line 38" in res.config["vllm_version"]["detail"]
    assert res.config["gpu_count"]["value"] == 1 and res.config["gpu_name"]["value"] == "NVIDIA GeForce RTX 3080 Ti"
    assert res.config["log_stats_interval_s"]["value"] == 1.0
    lines = text("seed-deployment.yaml").splitlines()
    assert lines[42 - 1].strip() == "- --runner" and lines[38 - 1].strip() == "image: vllm/vllm-openai:v0.28.0"


def test_container_choice_is_said() -> None:
    res = cmdline.collect(text("seed-deployment.yaml"), file="deploy.yaml")
    d = res.facts["deploy_target"].value
    assert d["target"] == "Deployment/qwen3-embedding container vllm" and "vllm/vllm-openai" in d["picked"]
    assert any("log-shipper" in s and "busybox" in s for s in d["skipped"])
    assert res.facts["docker_env"].value["HF_TOKEN"] == "(from hf-token)"  # a secret reference, never a value


def test_values_chunked_prefill_off() -> None:
    res = cmdline.collect(text("production-stack-values.yaml"), pick="qwen3-embed", file="values.yaml")
    f = res.facts["enable_chunked_prefill"]
    assert f.value is False and "values.yaml, document 1, line 17" in f.detail
    assert res.facts["max_num_batched_tokens"].value == 2048  # extraArgs
    assert res.facts["gpu_name"].value == "NVIDIA L4" and res.facts["api_key_required"].value is True
    cfg = run_checklist(Target(cmdline=text("production-stack-values.yaml"), deploy_target="qwen3-embed")).config
    assert cfg["enable_chunked_prefill"]["value"] is False and cfg["enable_chunked_prefill"]["source"] == "cmdline"


@pytest.mark.parametrize("vllm_config,want", [
    pytest.param({"enableChunkedPrefill": False}, ["--no-enable-chunked-prefill", "--no-enable-prefix-caching"],
                 id="off"),
    pytest.param({"enableChunkedPrefill": True, "enablePrefixCaching": True},
                 ["--enable-chunked-prefill", "--enable-prefix-caching"], id="on"),
    pytest.param({"enableChunkedPrefill": "false"}, ["--enable-chunked-prefill", "--no-enable-prefix-caching"],
                 id="string-false-is-true-in-go"),
    pytest.param({}, [], id="empty-map-renders-nothing"),
    pytest.param(None, [], id="absent"),
    pytest.param({"maxModelLen": 8192, "gpuMemoryUtilization": 0.9, "extraArgs": ["--max-num-seqs", 64]},
                 ["--no-enable-prefix-caching", "--max-model-len", "8192", "--gpu_memory_utilization", "0.9",
                  "--max-num-seqs", "64"], id="values-and-extra"),
])
def test_chart_rendering(vllm_config: Any, want: list[str]) -> None:
    spec: dict[str, Any] = {"name": "m", "repository": "vllm/vllm-openai", "tag": "v0.31.0", "modelURL": "M"}
    if vllm_config is not None:
        spec["vllmConfig"] = vllm_config
    argv, _ = deploy_helm.render(spec, {}, None, ())
    assert argv == ["vllm", "serve", "M", "--host", "0.0.0.0", "--port", "8000", *want]


def test_several_targets_the_cli_asks_or_judges_all(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    f = str(DEPLOY / "production-stack-values.yaml")
    assert main(["check", "--cmdline-file", f, "--db", db, "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "modelSpec qwen3-embed" in err and "modelSpec llama3" in err and "--deploy-target" in err
    main(["check", "--cmdline-file", f, "--db", db, "--format", "json", "--deploy-target", "all",
          "--truncate", "2048"])
    doc = json.loads(capsys.readouterr().out)
    assert [r["target"]["deploy_target"] for r in doc["runs"]] == ["modelSpec qwen3-embed", "modelSpec llama3"]
    assert doc["runs"][0]["config"]["enable_chunked_prefill"]["value"] is False
    assert main(["check", "--cmdline-file", f, "--db", db, "--deploy-target", "llama3"]) in (0, 1)
    assert "config" not in capsys.readouterr().err


def test_plain_command_line_is_not_a_deployment() -> None:
    for line in ("vllm serve Qwen/Qwen3-Embedding-0.6B --runner pooling --max-model-len 2048",
                 "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.31.0 --model x --max-model-len 512",
                 'vllm serve m \\\n  --hf-overrides \'{"is_matryoshka": true}\''):
        assert deploy_read.read(line) is None


def test_bounds_and_no_vllm() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)) + "kind: Deployment\n"
    with pytest.raises(deploy.DeployError):
        deploy_read.read(bomb)
    assert cmdline.collect(bomb).unavailable
    with pytest.raises(deploy.DeployError):
        deploy_read.read("kind: Deployment\n" + "# x\n" * (deploy.MAX_BYTES // 4))
    res = cmdline.collect("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
                          "    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n")
    assert res.unavailable and "nginx" in res.unavailable
    with pytest.raises(deploy.DeployError, match="!!python tag"):  # the safe loader refuses; said (issue 43)
        deploy_read.read("!!python/object/apply:os.system ['echo hi']\nkind: Pod\n")


def test_fix_block_reads_the_manifest_argv_not_its_yaml_text() -> None:
    from triage import fixblocks

    res = run_checklist(Target(cmdline=text("seed-deployment.yaml"), truncation="2048"))
    blocks = fixblocks.blocks_for_findings(res.findings, res.config, cmdline=text("seed-deployment.yaml"))
    line = next(b for b in blocks if b.kind == "cmdline")
    assert line.code.startswith("vllm serve Qwen/Qwen3-Embedding-0.6B") and "apiVersion" not in line.code
    assert "Edited your command line" in line.note


@pytest.mark.parametrize("source", [
    pytest.param("seed-deployment.yaml", id="manifest-args"),
    pytest.param("values-on", id="chart-key"),
])
def test_fix_patch_applies_and_rechecks(source: str) -> None:
    import yaml

    from triage import deploy_patch, fixblocks

    if source == "values-on":
        body = text("production-stack-values.yaml").replace("enableChunkedPrefill: false", "enableChunkedPrefill: true")
    else:
        body = text(source)
    before = run_checklist(Target(cmdline=body, deploy_target=None, truncation="2048"))
    assert {f.check: f.status.value for f in before.findings}["pooling-livelock-risk"] == "fail"
    blocks = fixblocks.blocks_for_findings(before.findings, before.config, cmdline=body)
    patch = next(b for b in blocks if b.kind == "patch")
    ops = yaml.safe_load(patch.code)
    docs = list(yaml.safe_load_all(body))
    doc_i = int(patch.code.split("document ", 1)[1].split(":", 1)[0]) - 1
    docs[doc_i] = deploy_patch.apply(docs[doc_i], ops)
    fixed = yaml.safe_dump_all(docs, sort_keys=False)
    after = run_checklist(Target(cmdline=fixed, truncation="2048"))
    by = {f.check: f for f in after.findings}
    assert by["pooling-livelock-risk"].status.value == "pass"
    assert after.config["enable_chunked_prefill"]["value"] is False
    if source == "values-on":
        assert ops == [{"op": "add", "path": "/servingEngineSpec/modelSpec/0/vllmConfig/enableChunkedPrefill",
                        "value": False}]
    else:
        assert ops[0]["path"] == "/spec/template/spec/containers/1/args" and "--enable-chunked-prefill" not in \
            ops[0]["value"] and "--no-enable-chunked-prefill" in ops[0]["value"]

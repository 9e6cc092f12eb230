"""checks/rerank.py on start-up logs recorded from real 0.32.0 servers and on command lines (a table)."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import get
from triage.checklist import run_checklist
from triage.findings import Status
from triage.target import Target

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"
QWEN_OVERRIDES = ('\'{"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"], '
                  '"is_original_qwen3_reranker": true}\'')


def rerank_findings(target: Target) -> dict[str, tuple[Status, str]]:
    res = run_checklist(target)
    return {f.check: (f.status, f.fix) for f in res.findings if f.check.startswith(("rerank", "scores"))}


@pytest.mark.parametrize("folder, check, status, mode", [
    pytest.param("0.32.0-rerank", "rerank-deployment", Status.PASS, None, id="overrides"),
    # issue 29: flat scores with the overrides given: the overrides are not missing; issue 42: their
    # classifier_from_token ["No", "Yes"] are not the Qwen3-Reranker card's ["no", "yes"], and the config says so
    pytest.param("0.32.0-rerank-flat", "rerank-label-tokens", Status.FAIL, "reranker-label-tokens",
                 id="flat-head-tokens-not-the-cards"),
    pytest.param("0.32.0-rerank-no-overrides", "rerank-deployment", Status.FAIL, "reranker-overrides-missing",
                 id="no-overrides"),
    pytest.param("0.32.0-rerank-convert-classify", "rerank-convert-classify", Status.FAIL,
                 "classify-without-score-head", id="convert-classify"),
])
def test_from_startup_log(folder: str, check: str, status: Status, mode: str | None) -> None:
    got = rerank_findings(Target(log_text=(REC / folder / "server.log").read_text()))
    assert got[check][0] == status
    if mode:
        assert got[check][1] == get(mode).fix({"model": "/root/.cache/vllm-triage/lab/models/tiny-qwen3-reranker"}) \
            or "--hf-overrides" in got[check][1]


def test_classify_deployment_is_not_called_a_generator() -> None:
    res = run_checklist(Target(log_text=(REC / "0.32.0-rerank" / "server.log").read_text()))
    runner = [f for f in res.findings if f.check == "flags-runner"]
    assert not runner or runner[0].status != Status.FAIL


@pytest.mark.parametrize("cmdline, check, status", [
    pytest.param(f"vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling --hf-overrides {QWEN_OVERRIDES}",
                 "rerank-template", Status.WARN, id="overrides-no-template"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling --convert classify",
                 "rerank-convert-classify", Status.FAIL, id="convert-classify"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling", "rerank-deployment", Status.UNKNOWN,
                 id="asks-about-overrides"),
    # issue 29: the lab's classify-logits profile as a command line (its recording: 0.32.0-classify-logits)
    pytest.param("vllm serve /models/tiny-classifier --runner pooling --convert classify --pooler-config "
                 "'{\"use_activation\": false}'", "scores-activation", Status.WARN, id="classify-logits"),
    pytest.param("vllm serve /models/tiny-classifier --runner pooling --convert classify", "rerank-deployment",
                 Status.PASS, id="classify-healthy"),
])
def test_from_command_line(cmdline: str, check: str, status: Status) -> None:
    assert rerank_findings(Target(cmdline=cmdline))[check][0] == status


def test_embedding_deployment_gets_no_rerank_finding() -> None:
    cmd = "vllm serve Qwen/Qwen3-Embedding-0.6B --runner pooling --convert embed"
    assert rerank_findings(Target(cmdline=cmd)) == {}


def test_causal_reranker_without_overrides_from_process_evidence() -> None:
    """What the process source gives for a local server: its command line and the model's config.json."""
    from checks import rerank
    from triage.config import EffectiveConfig

    cfg = EffectiveConfig.from_dict({"model": "/models/Qwen3-Reranker-0.6B", "runner": "pooling",
                                     "architecture": "Qwen3ForCausalLM"})
    cfg.stated_args = {"model", "runner"}
    f = rerank.check(cfg)[0]
    assert f.status == Status.FAIL and f.fix == get("reranker-overrides-missing").fix(cfg)


def test_no_template_warning_on_a_release_before_score_templates() -> None:
    """Issue 42 (vllm#19260): on 0.7 … 0.10.1 (--task score) vLLM ships no score template: no rerank-template."""
    cmd = f"vllm serve Qwen/Qwen3-Reranker-0.6B --task score --hf-overrides {QWEN_OVERRIDES}"
    assert "rerank-template" not in rerank_findings(Target(cmdline=cmd, answers={"vllm_version": "0.9.2"}))


_VL = '\'{"architectures": ["Qwen3VLForSequenceClassification"], "classifier_from_token": ["no", "yes"], ' \
      '"is_original_qwen3_reranker": true}\''


def test_a_checkpoint_and_a_served_name_of_two_families_is_one_of_them() -> None:
    """A tutorial's command (vllm-ascend#13446): the VL reranker's checkpoint and class under the text reranker's
    name. Each family's own overrides in the fix; never an embedder's; the template waits for the family."""
    cmd = (f"vllm serve Qwen/Qwen3-VL-Reranker-2B --served-model-name Qwen/Qwen3-Reranker-0.6B --runner pooling "
           f"--hf-overrides {_VL}")
    got = rerank_findings(Target(cmdline=cmd))
    assert got["rerank-family-conflict"][0] == Status.WARN and "rerank-template" not in got
    from checks import rerank
    from triage.sources import cmdline as src
    from triage.config import merge

    f = next(f for f in rerank.check(merge([src.collect(cmd)])) if f.check == "rerank-family-conflict")
    assert "one of" in f.title and "Qwen3ForSequenceClassification" in f.fix
    assert "Qwen3VLForSequenceClassification" in f.fix and "--convert embed" not in f.fix


def test_one_family_under_its_own_name_is_no_conflict() -> None:
    cmd = (f"vllm serve Qwen/Qwen3-VL-Reranker-2B --served-model-name my-reranker --runner pooling "
           f"--hf-overrides {_VL}")
    assert "rerank-family-conflict" not in rerank_findings(Target(cmdline=cmd))

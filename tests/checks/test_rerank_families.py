"""checks/rerank.py and checks/flags.py per reranker family (issue 42): each family judged and fixed by its own card.

Command lines as users paste them (a table); the served tasks as a log's start-up config gives them (check_facts,
the log post-mortem's entry). The families' facts: triage/catalogue/families.toml.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from checks.rerank import check_facts
from triage.checklist import run_checklist
from triage.findings import Status
from triage.target import Target

QWEN = {"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"],
        "is_original_qwen3_reranker": True}
MXBAI = {"architectures": ["Qwen2ForSequenceClassification"], "classifier_from_token": ["0", "1"],
         "method": "from_2_way_softmax"}


def _ov(d: dict[str, Any]) -> str:
    return f"--hf-overrides '{json.dumps(d)}'"


def findings(cmdline: str, **answers: Any) -> dict[str, Any]:
    res = run_checklist(Target(cmdline=cmdline, answers=answers or None))
    return {f.check: f for f in res.findings}


@pytest.mark.parametrize("cmdline, check, status, fix_has, fix_lacks", [
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling "
                 f"{_ov({'architectures': QWEN['architectures']})}",
                 "rerank-overrides-partial", Status.FAIL, ["classifier_from_token:", "is_original_qwen3_reranker:"],
                 [], id="qwen-architectures-only"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling "
                 f"{_ov({k: v for k, v in QWEN.items() if k != 'is_original_qwen3_reranker'})}",
                 "rerank-overrides-partial", Status.FAIL, ["is_original_qwen3_reranker: the lm_head rows"],
                 ["architectures:"], id="qwen-no-original-flag"),
    pytest.param("vllm serve mixedbread-ai/mxbai-rerank-base-v2 --runner pooling "
                 f"{_ov({**MXBAI, 'classifier_from_token': ['no', 'yes']})}",
                 "rerank-label-tokens", Status.FAIL, ['["0", "1"]'], [], id="mxbai-given-qwen-tokens"),
    pytest.param(f"vllm serve mixedbread-ai/mxbai-rerank-base-v2 --runner pooling {_ov(QWEN)}",
                 "rerank-overrides-partial", Status.FAIL, ["Qwen2ForSequenceClassification", '"method"'],
                 ["Qwen3ForSequenceClassification"], id="mxbai-given-qwen-overrides"),
    pytest.param(f"vllm serve mixedbread-ai/mxbai-rerank-base-v2 --runner pooling {_ov(MXBAI)}",
                 "rerank-logit-bias", Status.WARN, ['"logit_bias": 4.5'], [], id="mxbai-base-no-logit-bias"),
    pytest.param(f"vllm serve mixedbread-ai/mxbai-rerank-large-v2 --runner pooling {_ov(MXBAI)}",
                 "rerank-logit-bias", Status.WARN, ['"logit_bias": 6.0'], [], id="mxbai-large-no-logit-bias"),
    pytest.param("vllm serve BAAI/bge-reranker-v2-m3 --runner pooling --convert embed", "rerank-served-as-embedder",
                 Status.FAIL, ["vllm serve BAAI/bge-reranker-v2-m3 --runner pooling;"], ["--hf-overrides"],
                 id="bge-convert-embed"),
    pytest.param("vllm serve jinaai/jina-reranker-v2-base-multilingual --runner pooling", "rerank-remote-code",
                 Status.UNKNOWN, ["--trust-remote-code"], [], id="jina-v2-no-remote-code"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --trust-remote-code", "flags-trust-remote-code", Status.PASS,
                 ["Qwen3-Reranker is served", "--convert classify"], ["Qwen3-Embedding"], id="trust-remote-code-qwen"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B", "flags-runner", Status.WARN,
                 ['"is_original_qwen3_reranker": true', "--convert classify"], [], id="qwen-reranker-no-runner"),
    pytest.param("vllm serve mixedbread-ai/mxbai-rerank-base-v2", "flags-runner", Status.WARN,
                 ['"classifier_from_token": ["0", "1"]'], ['"no", "yes"'], id="mxbai-no-runner"),
])
def test_family_verdicts(cmdline: str, check: str, status: Status, fix_has: list[str], fix_lacks: list[str]) -> None:
    f = findings(cmdline)[check]
    assert f.status == status, f.title
    assert all(w in f.fix for w in fix_has), f.fix
    assert not any(w in f.fix for w in fix_lacks), f.fix
    assert "--convert embed" not in f.fix and "--task embed" not in f.fix


@pytest.mark.parametrize("cmdline, answers, passes, absent", [
    pytest.param(f"vllm serve Qwen/Qwen3-Reranker-0.6B --runner pooling {_ov(QWEN)}", {}, "'no' / 'yes'",
                 ["rerank-overrides-partial", "rerank-label-tokens"], id="qwen-complete"),
    pytest.param(f"vllm serve mixedbread-ai/mxbai-rerank-base-v2 --runner pooling {_ov(MXBAI)} --pooler-config "
                 "'{\"logit_bias\": 4.5}'", {}, "'0' / '1'", ["rerank-logit-bias", "rerank-label-tokens"],
                 id="mxbai-complete-calibrated"),
    pytest.param("vllm serve BAAI/bge-reranker-v2-m3 --runner pooling", {}, "cross-encoder",
                 ["rerank-served-as-embedder", "rerank-convert-classify"], id="bge-pooling"),
    # a cross-encoder with --convert classify is already a classifier: not the no-score-head record (was FAIL)
    pytest.param("vllm serve BAAI/bge-reranker-v2-m3 --runner pooling --convert classify", {}, "bge-reranker",
                 ["rerank-convert-classify"], id="bge-convert-classify"),
    pytest.param("vllm serve jinaai/jina-reranker-v2-base-multilingual --runner pooling --trust-remote-code", {},
                 "jina-reranker-v2", ["rerank-remote-code", "flags-trust-remote-code"], id="jina-v2-remote-code"),
])
def test_healthy_family_deployments(cmdline: str, answers: dict[str, Any], passes: str, absent: list[str]) -> None:
    got = findings(cmdline, **answers)
    assert got["rerank-deployment"].status == Status.PASS and passes in got["rerank-deployment"].title
    assert not set(absent) & set(got)


@pytest.mark.parametrize("cmdline", [
    pytest.param("vllm serve Qwen/Qwen3-Embedding-0.6B --task embed", id="qwen3-embedding-task-embed"),
    pytest.param("vllm serve Qwen/Qwen3-Reranker-0.6B --task score", id="qwen3-reranker-task-score"),
])
def test_a_pooling_task_on_a_release_with_task_is_no_generator(cmdline: str) -> None:
    """`--task embed` / `score` on 0.9 (where --task exists) serves pooling: never 'vLLM serves it for generation'."""
    assert "flags-runner" not in findings(cmdline, vllm_version="0.9.2")


def test_old_release_gets_task_score_and_no_later_flags() -> None:
    f = findings("vllm serve mixedbread-ai/mxbai-rerank-base-v2", vllm_version="0.9.2")["flags-runner"]
    assert "--task score" in f.fix and "--pooler-config" not in f.fix and "--convert" not in f.fix.split("(")[0]


@pytest.mark.parametrize("facts, check, status", [
    pytest.param({"model": "Qwen/Qwen3-Reranker-8B", "supported_tasks": ["generate"]}, "rerank-deployment",
                 Status.FAIL, id="qwen-reranker-served-generate"),
    pytest.param({"model": "BAAI/bge-reranker-v2-m3", "supported_tasks": ["embed", "token_embed"]},
                 "rerank-served-as-embedder", Status.FAIL, id="bge-served-embed"),
    pytest.param({"model": "Qwen/Qwen3-Reranker-8B", "supported_tasks": ["embed", "token_embed"]},
                 "rerank-deployment", Status.FAIL, id="qwen-served-embed"),
    pytest.param({"model": "BAAI/bge-reranker-v2-m3", "supported_tasks": ["classify", "token_classify"]},
                 "rerank-deployment", Status.PASS, id="bge-served-classify"),
])
def test_served_tasks_from_a_log(facts: dict[str, Any], check: str, status: Status) -> None:
    got = {f.check: f for f in check_facts({k: {"value": v, "source": "log", "detail": "start-up log"}
                                            for k, v in facts.items()})}
    assert got[check].status == status
    assert "--convert embed" not in got[check].fix

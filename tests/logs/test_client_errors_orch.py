"""Client error texts that quote vLLM's answer, read to the record vLLM's message means (issue 42): a model name the
server does not serve (RAGFlow's '___VLLM' suffix), LiteLLM's encoding_format null, a wrapper's 'does not support
the … task'. Fixtures: the texts as posted in ragflow-plus#60, litellm#19174 and ray#61959 (tests/world/cases/)."""
from __future__ import annotations

from pathlib import Path

from triage.logs.crash_findings import pasted_findings

CASES = Path(__file__).resolve().parents[1] / "world" / "cases"


def _fail(text: str) -> list:
    return [f for f in pasted_findings(text, {}) if f.status.value in ("fail", "warn")]


def test_model_not_served_names_ragflow_suffix() -> None:
    text = (CASES / "ragflowplus-60-model-suffix-404" / "client_error.txt").read_text()
    got = _fail(text)
    assert [f.failure_mode for f in got] == ["model-name-not-served"]
    assert "___VLLM" in got[0].title and "RAGFlow" in got[0].title
    assert "/v1/models" in got[0].fix and "--runner" not in got[0].fix


def test_litellm_encoding_format_null_from_the_quoted_body() -> None:
    text = (CASES / "litellm-19174-encoding-format-null" / "client_error.txt").read_text()
    got = _fail(text)
    assert [f.failure_mode for f in got] == ["litellm-encoding-format-null"]
    assert "hosted_vllm" in got[0].fix
    assert got[0].evidence["symptoms"] == []  # vLLM's body names the cause: no differential over "rejected"


def test_wrapper_task_refusal_is_one_of() -> None:
    got = _fail("This model does not support the 'embed' task")
    assert len(got) == 1 and got[0].status.value == "warn" and "one of" in got[0].title
    assert got[0].failure_mode == "wrapper-vllm-method-removed"


def test_plain_vllm_embeddings_refusal_is_not_a_wrapper() -> None:
    """vLLM's own refusal is the embed-task record (tests/logs/test_client_causes.py), never the wrapper's."""
    got = _fail("The model does not support Embeddings API")
    assert [f.failure_mode for f in got] == ["embeddings-api-unsupported"]

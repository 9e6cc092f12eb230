"""Serving wrappers using vLLM API a release dropped, and uvicorn's HTTP upgrade warning (triage/logs/client_causes.py,
the world survey's third set). Fixtures: the texts as posted (tests/world/cases/<slug>/), plus one-line wordings of
the same exceptions for the general reading."""
from __future__ import annotations

from pathlib import Path

from triage.catalogue import get
from triage.logs.crash_findings import pasted_findings

CASES = Path(__file__).resolve().parents[1] / "world" / "cases"


def _said(text: str) -> list:
    return [f for f in pasted_findings(text, {}) if f.status.value in ("fail", "warn")]


def _case(slug: str, name: str) -> str:
    return (CASES / slug / name).read_text()


def test_a_wrapper_reading_a_removed_vllm_env_is_the_wrapper_named() -> None:
    got = _said(_case("xinference-4508-vllm-use-v1-removed", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("wrapper-vllm-method-removed", "fail")]
    assert "Xinference uses vllm.envs.VLLM_USE_V1" in got[0].title
    assert got[0].fix == get("wrapper-vllm-method-removed").fix_text.strip() or "wrapper release" in got[0].fix


def test_pooling_output_embedding_is_the_renamed_data_field() -> None:
    got = _said("AttributeError: 'PoolingOutput' object has no attribute 'embedding'")
    assert [f.failure_mode for f in got] == ["wrapper-vllm-method-removed"]
    assert "PoolingOutput.data" in got[0].title and "--runner" not in got[0].fix


def test_engine_args_task_kwarg_names_the_wrapper_when_its_lines_show() -> None:
    got = _said("xinference.core.supervisor ERROR Leave launch_builtin_model, error: "
                "EngineArgs.__init__() got an unexpected keyword argument 'task'")
    assert [(f.failure_mode, f.status.value) for f in got] == [("wrapper-vllm-method-removed", "fail")]
    assert "Xinference" in got[0].title


def test_engine_args_task_kwarg_alone_is_one_of_wrapper_or_own_code() -> None:
    got = _said("EngineArgs.__init__() got an unexpected keyword argument 'task'")
    assert [(f.failure_mode, f.status.value) for f in got] == [("wrapper-vllm-method-removed", "warn")]
    assert "one of" in got[0].title and 'runner="pooling"' in got[0].title
    assert "--convert embed" not in got[0].fix


def test_unsupported_upgrade_request_is_the_clients_http2_offer_not_a_400_menu() -> None:
    got = _said("WARNING:  Unsupported upgrade request.\n"
                'INFO:     10.0.0.1:5000 - "POST /v1/embeddings HTTP/1.1" 400 Bad Request')
    assert [(f.check, f.failure_mode) for f in got] == [("log-client-error", "http-upgrade-unsupported")]
    assert "HTTP/1.1" in got[0].fix

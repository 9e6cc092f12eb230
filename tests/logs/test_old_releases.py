"""Texts of releases before 0.10.2 read to their records (the world survey's third set): base64 refused by a release
before vllm#5935, an architecture refusal cut by a paste, the version-bound base64 float64 packing."""
from __future__ import annotations

from checks import version
from triage.config import EffectiveConfig
from triage.logs import analyze_log
from triage.logs.crash_findings import pasted_findings


def _said(text: str) -> list:
    return [f for f in pasted_findings(text, {}) if f.status.value in ("fail", "warn")]


def test_base64_refusal_of_an_old_release_is_the_clients_default_base64() -> None:
    got = _said("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'base64 encoding is not "
                "currently supported', 'type': 'BadRequestError', 'param': None, 'code': 400}")
    assert [(f.failure_mode, f.status.value) for f in got] == [("base64-old-release", "fail")]
    assert "encoding_format='float'" in got[0].fix and "--runner" not in got[0].fix


def test_an_architecture_refusal_cut_before_for_now_is_still_read() -> None:
    res = analyze_log("ValueError: Model architectures ['Qwen2ForSequenceClassification'] are not supported for no")
    assert "architecture-unsupported" in {f.failure_mode for f in res.findings}


def test_a_release_before_0_6_0_is_told_of_its_base64_packing() -> None:
    f = version.check(EffectiveConfig.from_dict({"vllm_version": "0.5.3.post1"}))
    assert f.status.value == "warn" and "float64" in f.title and "0.6.0" in f.fix


def test_a_vllm_request_class_without_a_field_is_that_releases_bug() -> None:
    got = _said("AttributeError: 'EmbeddingChatRequest' object has no attribute 'mm_processor_kwargs'")
    assert [(f.failure_mode, f.status.value) for f in got] == [("vllm-request-field-missing", "fail")]
    assert "0.8.0" in got[0].title and "0.8.0" in got[0].fix
    other = _said("AttributeError: 'ScoreRequest' object has no attribute 'something_new'")
    assert [(f.failure_mode, f.status.value) for f in other] == [("vllm-request-field-missing", "warn")]


def test_an_index_select_assert_is_one_of_the_token_id_causes() -> None:
    got = _said("../aten/src/ATen/native/cuda/Indexing.cu:1284: indexSelectLargeIndex: block: [983,0,0], thread: "
                "[28,0,0] Assertion `srcIndex < srcSelectDimSize` failed.")
    assert [(f.failure_mode, f.status.value) for f in got] == [("client-token-ids", "warn")]
    assert "one of" in got[0].title and "Send text" in got[0].fix


def test_vllms_v1_rerank_warning_is_the_clients_path_not_an_error() -> None:
    text = ("(APIServer pid=1) WARNING 09-26 10:22:08 [api_server.py:940] To indicate that the rerank API is not "
            "part of the standard OpenAI API, we have located it at `/rerank`. Please update your client "
            "accordingly. (Note: Conforms to JinaAI rerank API)")
    got = [f for f in pasted_findings(text, {}) if f.check == "log-client-error"]
    assert [(f.failure_mode, f.status.value) for f in got] == [("rerank-api-contract", "unknown")]
    assert "/rerank instead of /v1/rerank" in got[0].fix and "--convert" not in got[0].fix

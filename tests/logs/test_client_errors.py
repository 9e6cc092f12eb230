"""Client error texts that quote vLLM's body: the library, the status, vLLM's message, the record; on texts as posted
in public reports (tests/fixtures/public/README.md) and on real recorded server bodies (tests/fixtures/real/)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.logs import analyze_log
from triage.logs.client_errors import quoted_body, read

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PUBLIC = FIXTURES / "public"


def _findings(text: str) -> list:
    return [f for f in analyze_log(text if "\n" in text else text + "\n").findings if f.status.value != "pass"]


def test_milvus_field_required_model() -> None:
    """milvus#42551: pymilvus quoting vLLM 0.7.x's pydantic 400 — the body's `model` is required on that release."""
    text = (PUBLIC / "milvus-42551-field-required.txt").read_text(encoding="utf-8")
    got = read(text)
    assert got is not None and got.library == "Milvus" and got.status == 400
    assert "'loc': ('body', 'model')" in got.message
    f = next(f for f in _findings(text) if f.check == "log-client-error")
    assert f.failure_mode == "rerank-model-field-required" and f.status.value == "fail"
    assert "`model`" in f.fix
    assert not any(x.check in ("log-engine-stats", "log-server-start") for x in _findings(text))


def test_kserve_wrapper_attribute_error() -> None:
    """kserve#5399: the wrapper's AttributeError on a vLLM serving class: the wrapper, not vLLM's flags."""
    text = (PUBLIC / "kserve-5399-attribute-error.txt").read_text(encoding="utf-8")
    f = next(f for f in _findings(text) if f.check == "log-client-error")
    assert f.failure_mode == "wrapper-vllm-method-removed"
    assert "ServingEmbedding.create_embedding" in f.title and "no longer has" in f.title


def test_recorded_matryoshka_body_read_as_vllms() -> None:
    """A real 0.31.0 400 body (tests/fixtures/real/0.31.0-tiny-qwen3-livelock/dimensions-32.json): the body alone and
    as openai-python's exception line prints it (``openai.BadRequestError: Error code: 400 - `` then the body dict's
    repr: a test double of the client's output, built from the recorded body)."""
    rec = json.loads((FIXTURES / "real" / "0.31.0-tiny-qwen3-livelock" / "dimensions-32.json").read_text())
    body = json.dumps(rec["body"])
    assert quoted_body(body) == rec["body"]
    line = f"openai.BadRequestError: Error code: 400 - {rec['body']!r}"
    got = read(line)
    assert got is not None and got.status == 400 and got.library.startswith("openai-python")
    assert "does not support Matryoshka embeddings" in got.message
    checks = {f.check for f in _findings(line)}
    assert "log-matryoshka" in checks and "log-client-error" in checks
    assert "log-server-start" not in checks and "log-engine-stats" not in checks


def test_rerank_score_api_body_from_the_source() -> None:
    """vLLM's own 400 text for /rerank on a model without the score task (entrypoints/pooling/scoring/api_router.py,
    0.32.0 wheel: 'The model does not support Rerank (Score) API'), as its ErrorResponse JSON."""
    body = json.dumps({"object": "error", "message": "The model does not support Rerank (Score) API",
                       "type": "BadRequestError", "param": None, "code": 400})
    f = next(f for f in _findings(body) if f.check == "log-client-error")
    assert f.failure_mode == "rerank-api-unsupported" and "score" in f.fix


def test_unknown_quoted_body_is_still_read() -> None:
    """A body no record knows is said with its message (UNKNOWN), never dropped: the recorded 0.31.0 over-long
    refusal's body wrapped as LiteLLM prints it (a test double of LiteLLM's line around a recorded body)."""
    rec = json.loads((FIXTURES / "real" / "0.31.0-tiny-qwen3-livelock" / "dimensions-32.json").read_text())
    body = dict(rec["body"]["error"], message="You must pass at least one prompt")
    line = f"litellm.BadRequestError: OpenAIException - {json.dumps(body)}"
    f = next(f for f in _findings(line) if f.check == "log-client-error")
    assert f.status.value == "unknown" and "(LiteLLM)" in f.title and "at least one prompt" in f.title


@pytest.mark.parametrize(("text", "kind"), [
    ("嵌入失败:400 dimensions is currently not supported", "any-model"),
    ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'Model \"bge-m3\" does not support "
     "matryoshka representation, changing output dimensions will lead to poor results.', 'code': 400}",
     "not-matryoshka"),
    ("Error code: 400 — Model \"snowflake-arctic-embed-l-v2.0\" only supports [256] matryoshka dimensions, use other "
     "output dimensions will lead to poor results.", "size"),
    ("{'message': \"Model 'bge' only supports dimensions in range [1, 1024], got 2048.\"}", "size"),
])
def test_dimensions_refusal_in_every_release_s_words(text: str, kind: str) -> None:
    """vLLM's `dimensions` refusals as 0.7 (cherry-studio#8301), 0.8.4 … 0.10 and 0.31/0.32 word them."""
    from triage.catalogue.vector_causes import dimensions_fix

    got = [f for f in analyze_log(text + "\n").findings if f.check == "log-matryoshka"]
    assert [(f.failure_mode, f.status.value) for f in got] == [("dimensions-not-matryoshka", "warn")]
    assert got[0].fix == dimensions_fix({"dimensions_refusal": kind})

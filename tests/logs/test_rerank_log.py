"""The log post-mortem on start-up logs recorded from real reranker servers (tests/fixtures/real/rerank/, issue 25).

A classify deployment is not "served as a generator"; a reranker without its overrides, and --convert classify
without a score head, are reported with their catalogue records' fixes (checks/rerank.py's one rule).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import get
from triage.findings import Status
from triage.logs import analyze_log

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"


@pytest.mark.parametrize("folder, check, mode", [
    pytest.param("0.32.0-rerank", None, None, id="overrides"),
    pytest.param("0.32.0-cross-encoder", None, None, id="cross-encoder"),
    pytest.param("0.32.0-rerank-no-overrides", "rerank-deployment", "reranker-overrides-missing", id="no-overrides"),
    pytest.param("0.32.0-rerank-convert-classify", "rerank-convert-classify", "classify-without-score-head",
                 id="convert-classify"),
])
def test_reranker_logs(folder: str, check: str | None, mode: str | None) -> None:
    res = analyze_log(REC / folder / "server.log")
    got = {f.check: f for f in res.findings}
    assert "log-generate-runner" not in got
    rerank = {c: f for c, f in got.items() if c.startswith("rerank")}
    if check is None:
        assert rerank == {}
        return
    f = rerank[check]
    assert f.status == Status.FAIL and f.failure_mode == mode
    assert f.refs == list(get(mode).refs)


# -- a rerank request refused for length: the reranker's fix (issue 42; the texts as posted in ragflow#10283, and
# the same refusal through the plain OpenAI client) --------------------------------------------------------------
_REFUSAL = ("{'error': {'message': \"This model's maximum context length is 8192 tokens. However, you requested "
            "20673 tokens in the input for embedding generation. Please reduce the length of the input.\", "
            "'type': 'BadRequestError', 'param': None, 'code': 400}}")


@pytest.mark.parametrize("text, mode", [
    pytest.param(f"cohere.errors.bad_request_error.BadRequestError: status_code: 400, body: {_REFUSAL}\n",
                 "rerank-long-document", id="cohere-client"),
    pytest.param(f"POST /v1/rerank failed: Error code: 400 - {_REFUSAL}\n", "rerank-long-document", id="rerank-route"),
    pytest.param(f"openai.BadRequestError: Error code: 400 - {_REFUSAL}\n", "max-model-len-vs-model", id="embeddings"),
])
def test_a_length_refusal_is_named_for_the_identity_that_sent_it(text: str, mode: str) -> None:
    f = next(f for f in analyze_log(text).findings if f.check == "log-max-context-length")
    assert f.failure_mode == mode and f.status == Status.WARN
    assert "truncate_prompt_tokens" in f.fix
    if mode == "rerank-long-document":
        assert f.fix == get(mode).fix({"max_model_len": 8192}) and "--convert embed" not in f.fix
        assert "8191" in f.fix  # below max_model_len: exactly max_model_len is the #55427 length before 0.32.0


def test_a_length_refusal_on_a_served_reranker_is_the_rerankers() -> None:
    """No rerank word on the line, but the start-up config says the model is a reranker."""
    log = ("INFO 09-25 10:00:00 [api_server.py:1] non-default args: {'model': 'BAAI/bge-reranker-v2-m3'}\n"
           f"ERROR 09-25 10:00:05 [serving.py:1] Error code: 400 - {_REFUSAL}\n")
    f = next(f for f in analyze_log(log).findings if f.check == "log-max-context-length")
    assert f.failure_mode == "rerank-long-document"

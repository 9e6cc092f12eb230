"""Client texts read to the record they mean (triage/logs/client_causes.py, issue 42). Fixtures: the texts as posted
in gpustack#2171, gpustack#2193, vllm#20051, gpustack#4932, ragflow#8156, milvus-haystack#48, LightRAG#198 and
ray#64466 (tests/world/cases/<slug>/), plus the stores' own wordings (pgvector, Qdrant, Chroma) for the shared rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue import get
from triage.logs import analyze_log
from triage.logs.crash_findings import pasted_findings

CASES = Path(__file__).resolve().parents[1] / "world" / "cases"


def _said(text: str, config: dict | None = None) -> list:
    return [f for f in pasted_findings(text, config or {}) if f.status.value in ("fail", "warn")]


def _case(slug: str, name: str) -> str:
    return (CASES / slug / name).read_text()


def test_embeddings_refusal_is_no_embed_task_with_both_spellings() -> None:
    got = _said(_case("gpustack-2171-embeddings-api-unsupported", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("embeddings-api-unsupported", "fail")]
    assert "--task embed" in got[0].fix and "--runner pooling --convert embed" in got[0].fix
    assert "--task score" not in got[0].fix and "--convert classify" not in got[0].fix


@pytest.mark.parametrize(("version", "flag"), [("0.9.2", "--task embed"),
                                               ("0.32.0", "--runner pooling --convert embed")])
def test_embeddings_refusal_fix_is_spelled_by_the_release(version: str, flag: str) -> None:
    got = _said("The model does not support Embeddings API", {"vllm_version": version})
    assert flag in got[0].fix


def test_embeddings_refusal_on_a_reranker_never_converts_it_to_an_embedder() -> None:
    got = _said("The model does not support Embeddings API", {"model": "BAAI/bge-reranker-v2-m3"})
    assert "--convert embed" not in got[0].fix and "/rerank" in got[0].fix


@pytest.mark.parametrize(("slug", "name", "arch", "tokens"), [
    ("gpustack-2193-reranker-no-pooler", "client_error.txt", "Qwen3ForSequenceClassification", '["no", "yes"]'),
    ("vllm-20051-mxbai-rerank-no-pooler", "log.txt", "Qwen2ForSequenceClassification", '["0", "1"]'),
])
def test_no_pooler_on_a_causal_lm_is_its_reranker_family_without_overrides(slug: str, name: str, arch: str,
                                                                           tokens: str) -> None:
    got = [f for f in _said(_case(slug, name)) if f.check == "log-client-error"]
    assert [f.failure_mode for f in got] == ["reranker-overrides-missing"]
    assert got[0].status.value == "warn" and arch in got[0].fix and tokens in got[0].fix
    assert "--convert embed" not in got[0].fix
    assert got[0].evidence["symptoms"] == []  # the cause itself: no differential over the scores symptoms


def test_no_pooler_in_a_server_log_is_read_by_the_post_mortem() -> None:
    res = analyze_log(CASES / "vllm-20051-mxbai-rerank-no-pooler" / "log.txt")
    assert "reranker-overrides-missing" in {f.failure_mode for f in res.findings}


def test_a_serving_class_attribute_error_is_still_the_wrapper() -> None:
    got = _said("AttributeError: 'ServingEmbedding' object has no attribute 'create_embedding'")
    assert [f.failure_mode for f in got] == ["wrapper-vllm-method-removed"]


def test_route_not_found_is_one_of_gateway_or_task() -> None:
    got = _said(_case("gpustack-4932-score-404-proxy", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("route-not-found", "warn")]
    assert "one of" in got[0].title and "gateway" in got[0].title and "port" in got[0].fix


def test_ragflow_nonetype_is_one_of_error_body_or_answer_shape() -> None:
    got = _said(_case("ragflow-8156-rerank-nonetype", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("client-result-none", "warn")]
    assert "RAGFlow" in got[0].title and "one of" in got[0].title and "Cohere" in got[0].fix


def test_a_nonetype_without_rerank_context_is_not_read() -> None:
    assert _said("TypeError: 'NoneType' object is not iterable") == []


@pytest.mark.parametrize(("text", "got_dim", "want_dim"), [
    (_case("haystack-48-milvus-dim-mismatch", "client_error.txt"), "1536", "1024"),
    (_case("lightrag-198-embedding-dim-mismatch", "client_error.txt"), "3584", "768"),
    ("psycopg.errors.DataError: expected 1024 dimensions, not 1536", "1536", "1024"),
    ("qdrant_client.http.exceptions.UnexpectedResponse: Wrong input: Vector dimension error: expected dim: 768, "
     "got 1024",
     "1024", "768"),
    ("chromadb.errors.InvalidDimensionException: Embedding dimension 384 does not match collection dimensionality 768",
     "384", "768"),
])
def test_vector_store_dimension_mismatch_names_both_sizes(text: str, got_dim: str, want_dim: str) -> None:
    got = _said(text)
    assert [(f.failure_mode, f.status.value) for f in got] == [("vector-store-dimension-mismatch", "warn")]
    assert f"expects {want_dim} dimensions, the embeddings have {got_dim}" in got[0].title
    assert "one of" in got[0].title and "re-create" in got[0].fix
    assert got[0].fix == get("vector-store-dimension-mismatch").fix({"got_dim": got_dim, "store_dim": want_dim})


def test_unknown_engine_argument_task_is_the_removed_flag() -> None:
    got = _said(_case("ray-64466-engine-kwargs-task", "traceback.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("removed-flag", "fail")]
    assert 'runner="pooling"' in got[0].fix and "--convert classify" not in got[0].fix


def test_unknown_engine_argument_nobody_removed_is_unknown() -> None:
    got = [f for f in pasted_findings("ValueError: Unknown engine argument: foo_bar", {})
           if f.check == "log-client-error"]
    assert [f.status.value for f in got] == ["unknown"] and "--foo-bar" in got[0].fix


def test_a_v0_engine_traceback_asks_without_a_release_and_warns_on_010_and_later() -> None:
    """vllm#24827 (its compose log): a start-up traceback through MQLLMEngine. No release: a question with how to
    tell; 0.10.2: one of VLLM_USE_V1=0 or a fallback; 0.9.2 (V0 is the pooling path there): nothing."""
    text = _case("vllm-24827-v0-engine-qwen3-embedding", "log_2.txt")

    def v0(config: dict) -> list:
        return [f for f in pasted_findings(text, config) if f.failure_mode == "v0-engine-forced"]

    unknown = v0({})
    assert [f.status.value for f in unknown] == ["unknown"] and "VLLM_USE_V1" in unknown[0].title
    warn = v0({"vllm_version": "0.10.2"})
    assert [f.status.value for f in warn] == ["warn"] and "one of" in warn[0].title
    assert "VLLM_USE_V1=0" in warn[0].fix
    assert v0({"vllm_version": "0.9.2"}) == []


def test_a_prompt_longer_than_max_model_len_in_the_engine_s_words_is_the_max_context_refusal() -> None:
    """vllm#20744 (0.8.5.post1, LLM.encode): 'The decoder prompt (length 952) is longer than the maximum model length
    of 512.' is the same refusal as the server's 400 'maximum context length': its fix is truncate_prompt_tokens."""
    res = analyze_log("ValueError: The decoder prompt (length 952) is longer than the maximum model length of 512. "
                      "Make sure that `max_model_len` is no smaller than the number of text tokens.\n")
    got = [f for f in res.findings if f.check == "log-max-context-length"]
    assert len(got) == 1 and "512" in got[0].title and "truncate_prompt_tokens" in got[0].fix


@pytest.mark.parametrize("text, field, status", [
    pytest.param(_case("dify-14140-rerank-top-n-null", "client_error.txt"), "top_n", "warn", id="dify-prose"),
    pytest.param("openai.BadRequestError: Error code: 400 - {'detail': [{'type': 'int_type', 'loc': ('body', "
                 "'max_tokens_per_doc'), 'msg': 'Input should be a valid integer', 'input': None}]}",
                 "max_tokens_per_doc", "fail", id="pydantic-body"),
])
def test_a_rerank_field_sent_null_is_the_rerank_contract(text: str, field: str, status: str) -> None:
    got = _said(text)
    assert [(f.failure_mode, f.status.value) for f in got] == [("rerank-api-contract", status)]
    assert field in got[0].title and f"Send {field} as an integer" in got[0].fix
    assert "--convert" not in got[0].fix


def test_a_top_n_without_null_or_rerank_is_not_read() -> None:
    assert _said("rerank failed: top_n=5 returned 3 results; Error 500") == []
    assert _said("Error: top_n is None in my config") == []


def test_a_bare_400_on_embeddings_is_one_of_what_its_message_would_name() -> None:
    """An access line without vLLM's message (as MaxKB#5295 quotes it): one of the records a 400 there can be,
    each with its own record's fix, and the message as the way to tell."""
    from triage.catalogue.records import refusal_candidates

    got = [f for f in analyze_log('"POST /v1/embeddings HTTP/1.1" 400 Bad Request\n').findings
           if f.check == "log-http-4xx"]
    assert [(f.failure_mode, f.status.value) for f in got] == [("request-refused", "warn")]
    assert "one of" in got[0].title and "Matryoshka" in got[0].title
    for _said_words, mode in refusal_candidates("/v1/embeddings"):
        assert get(mode).fix({}) in got[0].fix


def test_a_400_whose_message_is_read_is_left_to_its_reader() -> None:
    log = ('INFO:     10.0.0.1:5000 - "POST /v1/embeddings HTTP/1.1" 400 Bad Request\n'
           "ERROR 09-25 10:00:05 [serving.py:1] This model's maximum context length is 512 tokens. However, you "
           "requested 900 tokens in the input for embedding generation.\n")
    checks = {f.check for f in analyze_log(log).findings}
    assert "log-max-context-length" in checks and "log-http-4xx" not in checks


def test_a_400_on_rerank_names_the_rerank_records() -> None:
    got = [f for f in analyze_log('INFO:     127.0.0.1:1 - "POST /v1/rerank HTTP/1.1" 400 Bad Request\n').findings
           if f.check == "log-http-4xx"]
    assert got and "rerank" in got[0].title.lower() and "Matryoshka" not in got[0].title
    assert "--convert embed" not in got[0].fix


def test_400s_after_an_engine_failure_in_the_paste_are_the_failures() -> None:
    log = ("(EngineCore_0 pid=1) Traceback (most recent call last):\n"
           '(EngineCore_0 pid=1)   File "/x/vllm/v1/worker/gpu_model_runner.py", line 1, in _prepare_inputs\n'
           "(EngineCore_0 pid=1) KeyError: None\n"
           '(APIServer pid=2) INFO:     127.0.0.1:51262 - "POST /v1/embeddings HTTP/1.1" 400 Bad Request\n')
    assert "log-http-4xx" not in {f.check for f in analyze_log(log).findings}


def test_llmengine_encode_is_ms_swift_calling_the_async_engine_s_method() -> None:
    """ms-swift#7065's traceback as posted: the wrapper named from its frames, its own switch as the fix."""
    got = _said(_case("msswift-7065-llmengine-no-encode", "traceback.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("wrapper-vllm-method-removed", "fail")]
    assert "ms-swift uses LLMEngine.encode" in got[0].title and "--vllm_use_async_engine true" in got[0].fix


@pytest.mark.parametrize(("slug", "mode", "words"), [
    ("aibrix-2443-gateway-multimodal-embed-400", "gateway-own-error", "AIBrix"),
    ("kubeai-608-rerank-route-404", "route-not-found", "Go net/http"),
    ("fastchat-3175-vllm-worker-embeddings-not-found", "gateway-own-error", "vllm_worker"),
    ("maxkb-3993-reranker-url-v1-404", "route-not-found", "Cohere-SDK"),
])
def test_a_gateway_s_own_answer_is_not_vllm_s(slug: str, mode: str, words: str) -> None:
    got = _said(_case(slug, "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [(mode, "warn")]
    assert words in got[0].title


def test_kubeai_route_fix_names_its_openai_prefix() -> None:
    got = _said(_case("kubeai-608-rerank-route-404", "client_error.txt"))
    assert "/openai/v1/rerank" in got[0].fix


@pytest.mark.parametrize("text", [
    "upstream connect error or disconnect/reset before headers. reset reason: connection failure",
    "<html><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center></body></html>",
    '{"message":"no Route matched with those values"}',
])
def test_proxies_own_pages(text: str) -> None:
    got = _said(text)
    assert [(f.failure_mode, f.status.value) for f in got] == [("gateway-own-error", "warn")]


def test_rerank_usage_total_only_needs_words_about_accounting() -> None:
    body = '{"id":"rerank-1","model":"m","usage":{"total_tokens":62},"results":[{"index":0,"relevance_score":0.2}]}'
    assert _said(body) == []  # a rerank answer alone: nothing wrong
    got = _said(_case("gpustack-5176-rerank-usage-total-only", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("rerank-usage-total-only", "warn")]


def test_llama_stack_store_default_size() -> None:
    got = _said(_case("ogx-5585-vector-store-default-768-dim", "client_error.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("vector-store-dimension-mismatch", "warn")]
    assert "one of" not in got[0].title and "embedding_dimension = 384" in got[0].fix


def test_same_text_drift_with_prefix_cache_on_a_plugin() -> None:
    got = _said(_case("vllmascend-5725-embedding-prefix-cache-drift", "log.txt"))
    assert [(f.failure_mode, f.status.value) for f in got] == [("unstable-vectors", "warn")]
    assert "vllm-ascend" in got[0].title and "--no-enable-prefix-caching" in got[0].fix
    # cosines of vLLM against another library's vectors, without words saying it is the same text twice: not this
    assert _said("vllm vs sentence-transformers\nCosine Similarity: 0.62") == []


@pytest.mark.parametrize(("text", "words"), [
    ("litellm.UnsupportedParamsError: hosted_vllm does not support parameters: {'dimensions': 1024}, for model=bge-m3. "
     "To drop these, set `litellm.drop_params=True`", "LiteLLM refused"),
    ('{"error":{"message":"Invalid model name passed in model=bge-m3. Call `/v1/models` to view available models"}}',
     "LiteLLM's router has no model named 'bge-m3'"),
    ('{"error":"Model with name bge-m3 does not exist."}', "KServe's model server"),
])
def test_a_gateway_s_own_refusal_of_a_request(text: str, words: str) -> None:
    got = _said(text)
    assert [(f.failure_mode, f.status.value) for f in got] == [("gateway-own-error", "warn")]
    assert words in got[0].title

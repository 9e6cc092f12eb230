"""Reranker and scoring failure modes (issue 25): the other half of the RAG stack on the same pooling runner.

Facts: vLLM 0.31.0/0.32.0 wheels (vllm/entrypoints/pooling/scoring/api_router.py, protocol.py,
io_processor.py; vllm/model_executor/models/config.py Qwen3ForSequenceClassificationConfig; adapters.py
as_seq_cls_model) and lab servers serving the tiny rerankers of triage/lab/rerank_models.py (recordings
under tests/fixtures/real/rerank/, README there). The probe set (triage/probes/rerank*.py), the checklist
(checks/rerank.py) and the log readers take wording, refs and fixes from here.
"""

from __future__ import annotations

from triage.catalogue.model import ConfigLike, FailureMode, modes_of

# The Qwen3-Reranker model card's flags (vllm#19260 explains them; vLLM's own pointer:
# examples/pooling/score/qwen3_reranker_offline.py).
QWEN3_RERANKER_OVERRIDES = ('--hf-overrides \'{"architectures": ["Qwen3ForSequenceClassification"], '
                            '"classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": true}\'')
QWEN3_RERANKER_TEMPLATE = "examples/pooling/score/template/qwen3_reranker.jinja"
RERANK_PATHS = ("/rerank", "/v1/rerank", "/v2/rerank")
SCORE_PATHS = ("/score", "/v1/score")


def _overrides_fix(cfg: ConfigLike) -> str:
    model = cfg.get("model") or "<the reranker>"
    return (f"Serve it with the overrides its model card asks for: vllm serve {model} --runner pooling "
            f"{QWEN3_RERANKER_OVERRIDES} (mxbai-rerank-v2 / bge-reranker-v2-gemma: their own classifier_from_token "
            "and method, see their cards). Then /score and /rerank return the 'yes' probability of a "
            "classifier, not an embedding cosine.")


RERANKER_OVERRIDES_MISSING = FailureMode(
    id="reranker-overrides-missing",
    title="An LLM reranker served without its --hf-overrides: 200 OK, scores that do not rank",
    mechanism=(
        "Qwen3-Reranker (and other LLM rerankers) ship as *ForCausalLM with no score head: the relevance score is "
        "the 'yes' minus 'no' logit of the last token. Served with --runner pooling and no overrides, vLLM "
        "resolves --convert auto to embed, and /score and /rerank answer 200 with cosine similarities of "
        "last-token embeddings of query and document, encoded apart: nothing fails, the order is noise."
    ),
    # vllm#19260: the support PR explaining the overrides; #20478, #21681: "ranking seems random" reports
    refs=("vllm#19260", "vllm#20478", "vllm#21681"),
    evidence={
        "cmdline": "a reranker checkpoint (a *ForCausalLM named …rerank…) without --hf-overrides "
        "is_original_qwen3_reranker / classifier_from_token",
        "log": "'Resolved `--convert auto` to `--convert embed`' and 'Supported tasks: [\\'embed\\', …]' for a "
        "reranker; with the overrides: 'Resolved architecture: Qwen3ForSequenceClassification', tasks classify",
        "api": "POST /v1/embeddings answers 200 on the reranker (an embed task); /score gives cosines (all near "
        "one value) and the relevant document does not come first",
    },
    fix_for=_overrides_fix,
)

CLASSIFY_WITHOUT_SCORE_HEAD = FailureMode(
    id="classify-without-score-head",
    title="--convert classify on a checkpoint without a score head (vllm#43062)",
    mechanism=(
        "--convert classify wraps a *ForCausalLM in a sequence-classification adapter whose `score` layer should "
        "come from the checkpoint. An LLM reranker has none (its score is derived from the lm_head rows of "
        "classifier_from_token, which only the overrides ask for). Seen on vLLM 0.32.0 (lab): the server starts "
        "without an error, 'Supported tasks: [token_classify, classify]', /classify answers 200 from a head that "
        "is not in the checkpoint (probs [0.0, 1.0] for any input, 2 labels), and /score, /rerank, /v1/rerank, "
        "/v2/rerank answer 404 (a 2-label classifier gets no score API)."
    ),
    refs=("vllm#43062",),
    evidence={
        "cmdline": "--convert classify for a *ForCausalLM reranker without classifier_from_token in --hf-overrides",
        "log": "'Resolved architecture: Qwen3ForCausalLM' with 'Supported tasks: [\'token_classify\', \'classify\']' "
        "for a reranker",
        "api": "/classify 200 with num_classes 2 while /score and /rerank answer 404 {'detail': 'Not Found'}",
    },
    fix_for=lambda cfg: ("Drop --convert classify and give the reranker's overrides instead: "
                         f"{QWEN3_RERANKER_OVERRIDES} (they name the classifier tokens, and vLLM builds the score "
                         "head from the lm_head); keep --convert classify only for a checkpoint that has a "
                         "one-label score head."),
)

def _api_fix(cfg: ConfigLike) -> str:
    base = cfg.get("base") or "http://<host>:<port>"
    if cfg.get("problem") == "null-max-tokens-per-doc":
        return ("LangChain CohereRerank.compress_documents passes max_tokens_per_doc=None, which the Cohere SDK sends "
                "as null and vLLM 0.31/0.32 refuse (400 'body.max_tokens_per_doc: Input should be a valid integer'): "
                "call CohereRerank.rerank(documents, query, max_tokens_per_doc=N) with N below max_model_len (vLLM "
                "refuses N >= max_model_len with 400), or a subclass whose "
                "compress_documents does), or call cohere.ClientV2(base_url=…).rerank directly.")
    return (f"Point the client at {base} + /rerank (Jina/Cohere style; Cohere's SDK calls /v2/rerank), or /score "
            "for pairwise scores. Send {model, query, documents, top_n}; read results[i].index for the document and "
            "relevance_score for its score (already sorted). top_n 0 returns all documents.")


RERANK_API_CONTRACT = FailureMode(
    id="rerank-api-contract",
    title="Reranking endpoint or payload confusion (/score, /rerank, /v1/rerank, /v2/rerank, top_n)",
    mechanism=(
        "vLLM serves the Jina/Cohere-style rerank API at /rerank, /v1/rerank and /v2/rerank ({query, documents, "
        "top_n} -> results sorted by relevance_score, each with its input index) and its own score API at /score "
        "({queries, documents} or {text_1, text_2} -> data in input order). /v1/score is deprecated (a warning "
        "per call); there is no /v1/reranking. top_n 0 (the default) returns every document; a client that reads "
        "results as input order, or /score data as sorted, ranks the wrong documents."
    ),
    refs=("vllm entrypoints/pooling/scoring/api_router.py (0.31/0.32)",),
    evidence={
        "api": "404 {'detail': 'Not Found'} on a path the client uses; 400/422 on the payload's field names; results "
        "count differs from top_n; results not sorted, or indices not the input's",
        "log": "'To indicate that Score API is not part of standard OpenAI API, we have moved it to `/score`'",
        "clients": "LangChain CohereRerank (langchain-cohere 0.6.0) -> 400 'body.max_tokens_per_doc: Input should be "
        "a valid integer' (it sends null) on vLLM 0.31.0 and 0.32.0; the Cohere SDK itself passes",
    },
    fix_for=_api_fix,
)


def _long_fix(cfg: ConfigLike) -> str:
    mml = cfg.get("max_model_len")
    n = f"{mml - 1}" if isinstance(mml, int) else "max_model_len - 1"
    return (f"Send truncate_prompt_tokens (it truncates the query+document pair; on vLLM < 0.32.0 use {n}, never "
            "max_model_len or -1, vllm#55427), or max_tokens_per_doc to cut each document; or chunk long documents "
            "before reranking. One over-long document fails the whole request with 400.")


RERANK_LONG_DOCUMENT = FailureMode(
    id="rerank-long-document",
    title="A document longer than max_model_len fails the whole rerank request",
    mechanism=(
        "Each query+document pair is one prompt of at most max_model_len tokens. Without truncation one long "
        "document makes vLLM answer 400 'This model's maximum context length is N tokens' for the whole batch; "
        "with truncate_prompt_tokens -1 (or = max_model_len) the pair is cut to exactly max_model_len, which is "
        "the #55427 length on affected releases."
    ),
    refs=("vllm#55427",),
    evidence={"api": "400 'maximum context length' for a rerank whose one document is long; 200 with "
                     "truncate_prompt_tokens"},
    fix_for=_long_fix,
)

RERANKER_TEMPLATE_MISSING = FailureMode(
    id="reranker-template-missing",
    title="An original Qwen3 reranker served without its prompt template (--chat-template)",
    mechanism=(
        "Qwen3-Reranker was trained on a fixed prompt (system 'Judge whether the Document meets the requirements "
        "…', <Instruct>/<Query>/<Document>, an empty think block). Without --chat-template vLLM scores the raw "
        "pair: 200 OK, scores less accurate. vLLM 0.32 warns once at start-up."
    ),
    refs=("vllm entrypoints/pooling/scoring/io_processor.py (0.32)", QWEN3_RERANKER_TEMPLATE,
          "QwenLM/Qwen3-Embedding#71"),
    evidence={
        "log": "'Serving an original Qwen3 reranker (…) without a --chat-template.'",
        "cmdline": "is_original_qwen3_reranker in --hf-overrides and no --chat-template",
    },
    fix_text=(f"Serve with --chat-template {QWEN3_RERANKER_TEMPLATE} (from the vLLM repository at your release's "
              "tag); pass the task instruction per request with 'instruction' (or chat_template_kwargs)."),
)

def _owui_fix(cfg: ConfigLike) -> str:
    base = (cfg.get("base") or "http://<host>:<port>").rstrip("/")
    problem = cfg.get("problem")
    if problem == "url":
        return (f"Set the external reranker URL (RAG_EXTERNAL_RERANKER_URL) to the whole endpoint, {base}/v1/rerank "
                "(or /rerank): Open WebUI posts to it as given and appends nothing, unlike the embedding base URL.")
    if problem == "model":
        return (f"Set the reranking model (RAG_RERANKING_MODEL) to the id on {base}/v1/models "
                f"({cfg.get('served') or 'see GET /v1/models'}), or serve with --served-model-name.")
    if problem == "api-key":
        return "Set RAG_EXTERNAL_RERANKER_API_KEY to the server's --api-key (vLLM answers 401 without it)."
    return ("RAG_RERANKING_ENGINE=external, RAG_EXTERNAL_RERANKER_URL=<server>/v1/rerank (the whole URL), "
            "RAG_RERANKING_MODEL=<the served id>, RAG_EXTERNAL_RERANKER_API_KEY=<the server's key>.")


OPENWEBUI_RERANKER_MISCONFIG = FailureMode(
    id="openwebui-reranker-misconfig",
    title="Open WebUI's external reranker does not reach the vLLM server (and Open WebUI does not say so)",
    mechanism=(
        "Open WebUI's external reranking engine POSTs {model, query, documents, top_n: len(documents)} to "
        "RAG_EXTERNAL_RERANKER_URL exactly as configured (no path appended) and reads results[].relevance_score by "
        "index. Any error (404 for a base URL without /v1/rerank, 404 for a model id the server does not list, 401 "
        "without the key) is logged and swallowed: retrieval goes on without reranking."
    ),
    refs=("open-webui backend/open_webui/retrieval/models/external.py",),
    evidence={"clients": "the request Open WebUI sends answers 404/401, or its scores differ from /rerank's"},
    fix_for=_owui_fix,
)

RERANK_MODES = modes_of(globals())

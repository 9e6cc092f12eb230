"""Reranker and scoring failure modes (issue 25): the other half of the RAG stack on the same pooling runner.

Facts: vLLM 0.31.0/0.32.0 wheels (vllm/entrypoints/pooling/scoring/api_router.py, protocol.py,
io_processor.py; vllm/model_executor/models/config.py Qwen3ForSequenceClassificationConfig; adapters.py
as_seq_cls_model) and lab servers serving the tiny rerankers of triage/lab/rerank_models.py (recordings
under tests/fixtures/real/rerank/, README there). The probe set (triage/probes/rerank*.py), the checklist
(checks/rerank.py) and the log readers take wording, refs and fixes from here.
"""

from __future__ import annotations

import json

from triage.catalogue import rerank_clues as rc
from triage.catalogue import symptoms as sy
from triage.catalogue.model import ConfigLike, Edit, FailureMode, modes_of

# The Qwen3-Reranker model card's flags (vllm#19260 explains them; vLLM's own pointer:
# examples/pooling/score/qwen3_reranker_offline.py).
QWEN3_RERANKER_OVERRIDES_VALUE = {"architectures": ["Qwen3ForSequenceClassification"],
                                  "classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": True}
QWEN3_RERANKER_OVERRIDES = f"--hf-overrides '{json.dumps(QWEN3_RERANKER_OVERRIDES_VALUE)}'"
QWEN3_RERANKER_TEMPLATE = "examples/pooling/score/template/qwen3_reranker.jinja"
RERANK_PATHS = ("/rerank", "/v1/rerank", "/v2/rerank")
SCORE_PATHS = ("/score", "/v1/score")


def _overrides_fix(cfg: ConfigLike) -> str:
    model = cfg.get("model") or "<the reranker>"
    return (f"Serve it with the overrides its model card asks for: vllm serve {model} --runner pooling "
            f"{QWEN3_RERANKER_OVERRIDES} (mxbai-rerank-v2 / bge-reranker-v2-gemma: their own classifier_from_token "
            "and method, see their cards). Then /score and /rerank return the 'yes' probability of a "
            "classifier, not an embedding cosine.")


def _overrides_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"runner": "pooling", "hf_overrides": QWEN3_RERANKER_OVERRIDES_VALUE},
                 why="the reranker's classifier head from its model card's overrides")]


def _classify_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"convert": None, "hf_overrides": QWEN3_RERANKER_OVERRIDES_VALUE},
                 why="no --convert classify; the overrides build the score head from the lm_head")]


def _classify_fix(cfg: ConfigLike) -> str:
    return ("Drop --convert classify and give the reranker's overrides instead: "
            f"{QWEN3_RERANKER_OVERRIDES} (they name the classifier tokens, and vLLM builds the score "
            "head from the lm_head); keep --convert classify only for a checkpoint that has a "
            "one-label score head.")


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
    edits=_overrides_edits,
    symptoms=(sy.SCORES_NOT_RANKING, sy.SCORES_FLAT),
    clues=rc.clues(rc.served_embed, rc.overrides_absent, rc.cosine_band),
    experiment="POST /v1/embeddings and /classify on the server: embeddings 200 and classify 404 is this record "
    "(task embed); classify 200 rules it out.",
    experiment_probe="rerank",
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
    symptoms=(sy.REJECTED, sy.SCORES_FLAT),
    clues=rc.clues(rc.score_paths_missing, rc.classify_constant),
    experiment="POST /score and /classify: /score 404 with /classify 200 is this record.",
    experiment_probe="rerank",
    edits=_classify_edits,
    fix_for=_classify_fix,
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
    symptoms=(sy.REJECTED, sy.CLIENT_ERROR, sy.SCORES_NOT_RANKING),
    clues=rc.clues(rc.finding_bad("rerank-paths", "a reranking path answers 404"),
                   rc.finding_bad("rerank-shape", "the /rerank answer is not the documented shape"),
                   rc.finding_bad("rerank-client-langchain", "LangChain CohereRerank is refused")),
    experiment="The rerank probe set sends one request to each of /rerank, /v1/rerank, /v2/rerank and /score and "
    "the clients' payloads: the path or field that fails is named.",
    experiment_probe="rerank",
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
    symptoms=(sy.REJECTED,),
    clues=rc.clues(rc.finding_bad("rerank-long-document", "one long document fails the whole rerank request")),
    experiment="POST /rerank with one document over max_model_len, then with truncate_prompt_tokens "
    "max_model_len - 1: 400 then 200 is this record.",
    experiment_probe="rerank",
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
    symptoms=(sy.SCORES_NOT_RANKING,),
    clues=rc.clues(rc.template_warned, rc.served_classify, rc.raw_logits_spread),
    experiment="Read the start-up log for 'without a --chat-template'; serve the lab twin with and without "
    "--chat-template and compare the ranking on the same pairs.",
    experiment_probe="rerank",
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
    symptoms=(sy.CLIENT_ERROR,),
    clues=rc.clues(rc.finding_bad("rerank-client-openwebui", "Open WebUI's request does not reach /rerank")),
    experiment="Send the request Open WebUI sends (its URL, model id and key) and a plain /rerank: only the first "
    "failing is this record.",
    experiment_probe="rerank",
)

def _flat_fix(cfg: ConfigLike) -> str:
    hf = cfg.get("hf_overrides")
    tokens = hf.get("classifier_from_token") if isinstance(hf, dict) else None
    named = f" ({tokens})" if tokens else ""
    return (f"The score head is zero. Check that each classifier_from_token{named} is one entry of the model's "
            "vocabulary, spelled and cased as the tokenizer's own (tokenizer.convert_tokens_to_ids must not give the "
            "unknown token's id: Qwen3-Reranker's are \"no\" and \"yes\"); for Qwen3-Reranker-8B (untied lm_head) on "
            "a vLLM build before vllm#28117 upgrade, or serve a converted *-seq-cls checkpoint without the overrides.")


RERANK_SCORES_FLAT = FailureMode(
    id="rerank-scores-flat",
    title="Reranker scores all 0.5 with its overrides given: the score head is zero",
    mechanism=(
        "With the overrides, vLLM builds the one-label score head from the lm_head: weight = lm_head[yes] - "
        "lm_head[no] for the two classifier_from_token tokens (vllm/model_executor/models/adapters.py "
        "load_weights_using_from_2_way_softmax, 0.31/0.32). When that difference is zero every pair's logit is 0 "
        "and every score sigmoid(0) = 0.5: tokens that are not entries of the vocabulary both resolve to the "
        "unknown token (0.32.0 lab: classifier_from_token [\"No\", \"Yes\"] on an uncased tokenizer), or the "
        "lm_head was never loaded (Qwen3-Reranker-8B, untied embeddings, vLLM 0.11.1rc4: vllm#27857, fixed by "
        "vllm#28117). The server starts with task classify, 200 OK everywhere; the overrides are not missing."
    ),
    refs=("vllm#27857", "vllm#28117"),
    fix_ref="vllm#28117",
    evidence={
        "api": "every /rerank relevance_score 0.5 and, with use_activation false, every raw logit 0.0; "
        "/classify answers (task classify)",
        "cmdline": "--hf-overrides with classifier_from_token (the overrides are there)",
        "log": "'Resolved architecture: Qwen3ForSequenceClassification', 'Supported tasks: [\'classify\', …]'",
    },
    fix_for=_flat_fix,
    symptoms=(sy.SCORES_FLAT, sy.SCORES_NOT_RANKING),
    clues=rc.clues(rc.served_classify, rc.overrides_present, rc.scores_at_half, rc.raw_logits_zero),
    experiment="POST /rerank with use_activation false: every raw logit 0 is this record (a zero score head); "
    "logits that spread rule it out.",
    experiment_probe="rerank",
)


def _logits_fix(cfg: ConfigLike) -> str:
    n = cfg.get("num_classes")
    act = "softmax over the labels" if isinstance(n, int) and n >= 2 else "sigmoid"
    where = ("drop use_activation false from --pooler-config" if cfg.get("use_activation_source") == "user"
             else "drop use_activation: false from the requests (or --pooler-config)")
    return (f"For probabilities, {where}: vLLM then applies the classifier's activation ({act}). To keep "
            f"logits (to calibrate thresholds), apply the {act} client-side before comparing to a probability "
            "threshold. vLLM 0.31/0.32 read only `use_activation` (per request, or --pooler-config as the default); "
            "`activation` and `softmax` are not that field.")


SCORES_ARE_LOGITS = FailureMode(
    id="scores-are-logits",
    title="Scores and class 'probs' are raw logits, not probabilities (use_activation false)",
    mechanism=(
        "vLLM applies a classifier's activation after its head: sigmoid for one label (a reranker's "
        "relevance_score, /score), softmax for two or more (/classify's probs), or what the config's problem_type "
        "or sentence-transformers activation_fn names (vllm/model_executor/layers/pooler/activations.py, "
        "0.31/0.32). use_activation false, per request or as the server's default (--pooler-config "
        "'{\"use_activation\": false}', logged as use_activation=False(source=user)), returns the logits in the "
        "same fields: scores below 0 or above 1, 'probs' that do not sum to 1. The order is the same; thresholds "
        "on a probability (0.5) and score fusion break. vllm#18727 / #18386 are the same question on older "
        "releases (softmax, then the pooler config's normalize/softmax fields)."
    ),
    refs=("vllm#18727", "vllm#18386", "vllm#20538"),
    evidence={
        "cmdline": "--pooler-config with use_activation false",
        "log": "'Resolved pooling config: … use_activation=False(source=user)'",
        "api": "/classify probs outside [0, 1] or not summing to 1; /rerank relevance_score below 0 or above 1; the "
        "answer without use_activation equals the one with use_activation false",
    },
    fix_for=_logits_fix,
    symptoms=(sy.SCORES_NOT_PROBABILITIES,),
    clues=rc.clues(rc.activation_off, rc.outside_unit, rc.probs_not_summing),
    experiment="POST /classify (or /rerank) with use_activation true and without it: equal answers rule this record "
    "out; the answer without it equal to use_activation false is this record.",
    experiment_probe="classify",
)

RERANK_MODES = modes_of(globals())

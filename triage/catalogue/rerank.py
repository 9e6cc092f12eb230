"""Reranker and scoring failure modes (issue 25): the other half of the RAG stack on the same pooling runner.

Facts: vLLM 0.31.0/0.32.0 wheels (vllm/entrypoints/pooling/scoring/api_router.py, protocol.py,
io_processor.py; vllm/model_executor/models/config.py Qwen3ForSequenceClassificationConfig; adapters.py
as_seq_cls_model) and lab servers serving the tiny rerankers of triage/lab/rerank_models.py (recordings
under tests/fixtures/real/rerank/, README there). The probe set (triage/probes/rerank*.py), the checklist
(checks/rerank.py) and the log readers take wording, refs and fixes from here.
"""

from __future__ import annotations

import json

from triage.catalogue.identity import (
    Family,
    ModelIdentity,
    family,
    identify,
    overrides_json,
    release_has_task,
    serve_flags,
)
from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit

# The Qwen3-Reranker model card's flags (vllm#19260 explains them; vLLM's own pointer:
# examples/pooling/score/qwen3_reranker_offline.py).
QWEN3_RERANKER_OVERRIDES_VALUE = {"architectures": ["Qwen3ForSequenceClassification"],
                                  "classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": True}
QWEN3_RERANKER_OVERRIDES = f"--hf-overrides '{json.dumps(QWEN3_RERANKER_OVERRIDES_VALUE)}'"
QWEN3_RERANKER_TEMPLATE = "examples/pooling/score/template/qwen3_reranker.jinja"
RERANK_PATHS = ("/rerank", "/v1/rerank", "/v2/rerank")
SCORE_PATHS = ("/score", "/v1/score")


def _family(cfg: ConfigLike) -> Family:
    """The LLM-reranker family the config names (issue 42), Qwen3-Reranker when it names none (this record's
    lab twin), so mxbai-rerank-v2 or bge-reranker-v2-gemma get their own overrides, never Qwen's."""
    who = identify(cfg)
    return who.family if who.family is not None and who.family.hf_overrides else family("qwen3-reranker")


def _overrides_fix(cfg: ConfigLike) -> str:
    model = cfg.get("model") or "<the reranker>"
    fam = _family(cfg)
    tokens = " / ".join(f'"{t}"' for t in fam.tokens)
    who = identify(cfg)
    who = who if who.family is fam else ModelIdentity("reranker", fam, fam.style, who.served_as, who.model)
    return (f"Serve it with the overrides its model card asks for: vllm serve {model} "
            f"{serve_flags(who, release_has_task(cfg))} ({fam.name}'s card; another LLM reranker "
            "has its own classifier_from_token and method, see its card). Then /score and /rerank return the "
            f"probability of its {tokens} classifier, not an embedding cosine.")


def _overrides_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"runner": "pooling", "convert": "classify", "hf_overrides": dict(_family(cfg).hf_overrides)},
                 why="the reranker's classifier head from its model card's overrides")]


def _classify_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"hf_overrides": dict(_family(cfg).hf_overrides)},
                 why="--convert classify needs the overrides: they build the score head from the lm_head")]


def _classify_fix(cfg: ConfigLike) -> str:
    fam = _family(cfg)
    return (f"Keep --convert classify and add the reranker's overrides: --hf-overrides '{overrides_json(fam)}' "
            f"({fam.name}'s card: they name the classifier tokens, and vLLM builds the score head from the "
            "lm_head rows; with them the architecture is already a classifier, so --convert classify changes "
            "nothing more). --convert classify alone only suits a checkpoint that has a one-label score head.")


def _api_fix(cfg: ConfigLike) -> str:
    base = cfg.get("base") or "http://<host>:<port>"
    if cfg.get("problem") == "null-max-tokens-per-doc":
        return ("LangChain CohereRerank.compress_documents passes max_tokens_per_doc=None, which the Cohere SDK sends "
                "as null and vLLM 0.31/0.32 refuse (400 'body.max_tokens_per_doc: Input should be a valid integer'): "
                "call CohereRerank.rerank(documents, query, max_tokens_per_doc=N) with N below max_model_len (vLLM "
                "refuses N >= max_model_len with 400), or a subclass whose "
                "compress_documents does), or call cohere.ClientV2(base_url=…).rerank directly.")
    if cfg.get("problem") == "v1-path":
        return (f"Nothing to change on the server: point the client at {base}/rerank instead of /v1/rerank (LiteLLM's "
                "hosted_vllm rerank provider built /v1/rerank until BerriAI/litellm#14938: upgrade LiteLLM); the "
                "warning stops and the answers stay the same.")
    if cfg.get("problem") == "null-field":
        field = cfg.get("field") or "top_n"
        what = ("how many results to return; 0 returns every document" if field == "top_n"
                else "the tokens kept per document, below max_model_len")
        return (f"Send {field} as an integer ({what}) or leave the field out: vLLM's rerank request refuses "
                f"{field}: null with 400. Clients known to send it: Dify's OpenAI-API-compatible rerank provider in "
                "its credential check (top_n; fixed in dify-official-plugins#362 — upgrade the plugin), LangChain "
                "CohereRerank.compress_documents (max_tokens_per_doc; call .rerank with max_tokens_per_doc=N).")
    return (f"Point the client at {base} + /rerank (Jina/Cohere style; Cohere's SDK calls /v2/rerank), or /score "
            "for pairwise scores. Send {model, query, documents, top_n}; read results[i].index for the document and "
            "relevance_score for its score (already sorted). top_n 0 returns all documents.")


def _long_fix(cfg: ConfigLike) -> str:
    mml = cfg.get("max_model_len")
    n = f"{mml - 1}" if isinstance(mml, int) else "max_model_len - 1"
    return (f"Send truncate_prompt_tokens (it truncates the query+document pair; on vLLM < 0.32.0 use {n}, never "
            "max_model_len or -1, vllm#55427), or max_tokens_per_doc to cut each document; or chunk long documents "
            "before reranking. One over-long document fails the whole request with 400. --max-model-len can be "
            "raised only up to the model's own maximum (its max_position_embeddings): a pair longer than that must "
            "be truncated or chunked.")


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


def _flat_fix(cfg: ConfigLike) -> str:
    hf = cfg.get("hf_overrides")
    tokens = hf.get("classifier_from_token") if isinstance(hf, dict) else None
    named = f" ({tokens})" if tokens else ""
    fam = _family(cfg)
    card = " and ".join(f'"{t}"' for t in fam.tokens)
    return (f"The score head is zero. Check that each classifier_from_token{named} is one entry of the model's "
            "vocabulary, spelled and cased as the tokenizer's own (tokenizer.convert_tokens_to_ids must not give the "
            f"unknown token's id: {fam.name}'s are {card}); for Qwen3-Reranker-8B (untied lm_head) on "
            "a vLLM build before vllm#28117 upgrade, or serve a converted *-seq-cls checkpoint without the overrides.")


def _logits_fix(cfg: ConfigLike) -> str:
    n = cfg.get("num_classes")
    act = "softmax over the labels" if isinstance(n, int) and n >= 2 else "sigmoid"
    where = ("drop use_activation false from --pooler-config" if cfg.get("use_activation_source") == "user"
             else "drop use_activation: false from the requests (or --pooler-config)")
    return (f"For probabilities, {where}: vLLM then applies the classifier's activation ({act}). To keep "
            f"logits (to calibrate thresholds), apply the {act} client-side before comparing to a probability "
            "threshold. vLLM 0.31/0.32 read only `use_activation` (per request, or --pooler-config as the default); "
            "`activation` and `softmax` are not that field.")


# The ranking probe's fix when its evidence singles out no record (triage/probes/rerank_findings.check_ranking): the
# experiment that tells the standing candidates apart, not one candidate's fix.
UNDECIDED_RANKING_FIX = ("Run the rerank probe set with the start-up log (--log-file, or the Target page's log) so "
                         "that the overrides, the template warning and the raw logits can tell them apart.")


RECORDS = load(__name__)  # triage/catalogue/data/rerank.toml
__getattr__, __dir__ = RECORDS.exports(globals())

RERANK_MODES = RECORDS.modes()

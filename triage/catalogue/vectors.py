"""Catalogue records for wrong vectors and client misconfiguration: "200 OK, but retrieval got worse".

Facts: shared/reference/clients.md (LangChain's token ids, measured against lab servers),
vllm-embedding-facts.md §3/§6 and real-vllm-on-cpu.md (what a server answers). The probes in
triage/probes/vectors.py, clients.py and openwebui.py read wording, refs and fixes from here.
"""

from __future__ import annotations

from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit

LANGCHAIN_SETTING = "check_embedding_ctx_length"


def _pooling_fix(cfg: ConfigLike) -> str:
    model = cfg.get("model_pooling")
    server = cfg.get("server_pooling")
    if not model:
        return ("Serve with the pooling the model was trained with: read its 1_Pooling/config.json (sentence-"
                "transformers) or model card, and pass it as --pooler-config '{\"pooling_type\": \"…\"}'.")
    said = f" instead of {server}" if server else ""
    return (f"Serve with the model's own pooling {model}{said}: drop the --pooler-config override, or pass "
            f"--pooler-config '{{\"pooling_type\": \"{model}\"}}' (vLLM 0.31/0.32; --override-pooler-config "
            "was its older name). Re-embed the corpus after the change: old and new vectors do not mix.")


def _openwebui_fix(cfg: ConfigLike) -> str:
    problem = cfg.get("problem")
    base = cfg.get("base_url") or "http://<host>:<port>"
    if problem == "missing-v1":
        return (f"Set the embedding Base URL (RAG_OPENAI_API_BASE_URL) to {base.rstrip('/')}/v1: Open WebUI "
                "appends /embeddings to it, and vLLM serves /v1/embeddings only.")
    if problem == "model-name":
        served = cfg.get("served") or []
        return (f"Set the embedding model (RAG_EMBEDDING_MODEL) to the id the server lists on /v1/models "
                f"({', '.join(map(str, served)) or 'see GET /v1/models'}), or serve with --served-model-name "
                f"{cfg.get('model') or '<the name Open WebUI sends>'}.")
    if problem == "api-key":
        return ("Set the embedding API key (RAG_OPENAI_API_KEY) to the server's --api-key (vLLM answers 401 "
                "without it).")
    if problem == "batch":
        return "Lower the embedding batch size in Open WebUI (RAG_EMBEDDING_BATCH_SIZE) to what the server takes."
    return ("Base URL ending in /v1, the served model id from /v1/models, the server's API key "
            "(RAG_OPENAI_API_BASE_URL, RAG_EMBEDDING_MODEL, RAG_OPENAI_API_KEY).")


def _pooling_edits(cfg: ConfigLike) -> list[Edit]:
    """Drop the override when the command line carries one (the fix the lab twin verifies): the model's own
    pooling comes back from its files."""
    if not cfg.get("pooler_config"):
        return []
    return [Edit(serve={"!--pooler-config": None},
                 why="the --pooler-config override removed: the model's own pooling")]


def _nan_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"dtype": "bfloat16"}, why="no float16 overflow")]


def _client_ids_fix(cfg: ConfigLike) -> str:
    if cfg.get("problem") == "out-of-vocabulary":  # seen as the engine's crash, the client not named
        return ("Send text (vLLM then tokenizes with the model's own tokenizer), or token ids from the served model's "
                f"own tokenizer, never another's (LangChain OpenAIEmbeddings: {LANGCHAIN_SETTING}=False); a server "
                "--tokenizer must be the model's own. Releases with vllm#9634 refuse an out-of-vocabulary id with 400 "
                "instead of crashing: upgrade, then restart the crashed server.")
    client = cfg.get("client") or "LangChain OpenAIEmbeddings"
    return (f"{client}: set {LANGCHAIN_SETTING}=False (it then sends text, and vLLM tokenizes with the model's "
            "own tokenizer); the client-side length check is tiktoken's, not the model's, so truncate on the "
            "server instead (truncate_prompt_tokens, via model_kwargs / extra_body). Re-embed what was embedded "
            "with token ids.")


RECORDS = load(__name__)  # triage/catalogue/data/vectors.toml
__getattr__, __dir__ = RECORDS.exports(globals())

VECTOR_MODES = RECORDS.modes()

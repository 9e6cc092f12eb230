"""One embedding call through a real client library, by the route its users configure for vLLM, recorded.

Each route is a function of (base URL with /v1, model, key, texts, an httpx client that records what the library
sends) returning the vectors as the library handed them back. The recorder hook keeps, per request, the URL,
whether the input was text or token ids, the model and what the body carried as encoding_format ("null" when the
key is there with null, "absent" when it is not: the difference is LiteLLM's bug). Libraries are imported here
only, lazily (the ``clients`` extra). Not tried: the LiteLLM proxy server (``litellm[proxy]`` pulls fastapi,
uvicorn and a dozen more): its embedding route calls the same ``litellm.embedding`` with the model's
litellm_params, so the openai/ route here is what a proxy with ``model: openai/<id>`` sends.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from triage.http import HttpClient, HttpRequest

CallFn = Callable[[str, str, str, list[str], HttpClient], list[Any]]
LIBRARY_DIST = {"openai": "openai", "langchain": "langchain-openai", "litellm": "litellm",
                "llamaindex": "llama-index-embeddings-openai", "llamaindex-like": "llama-index-embeddings-openai-like"}


def sent_record(req: HttpRequest) -> dict[str, Any]:
    """What one request of a library carried (the recorder hook's entry)."""
    try:
        body = json.loads(req.content or b"{}")
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    inp = body.get("input")
    kind = ("token ids" if isinstance(inp, list) and inp and isinstance(inp[0], (int, list)) and
            (isinstance(inp[0], int) or (inp[0] and isinstance(inp[0][0], int))) else "text")
    fmt = body.get("encoding_format")
    return {"url": str(req.url), "input_kind": kind, "encoding_format": fmt,
            "encoding_format_sent": "absent" if "encoding_format" not in body else (
                "null" if fmt is None else str(fmt)),
            "model": body.get("model"), "input_head": json.dumps(inp)[:200]}


def _openai(fmt: str | None) -> CallFn:
    def call(base: str, model: str, key: str, texts: list[str], http: HttpClient) -> list[Any]:
        from openai import OpenAI
        c = OpenAI(base_url=base, api_key=key, http_client=http, max_retries=0)
        kw = {"encoding_format": fmt} if fmt else {}
        return [d.embedding for d in c.embeddings.create(model=model, input=texts, **kw).data]  # type: ignore[arg-type]
    return call


def _langchain(ctx_check: bool, query: bool = False) -> CallFn:
    def call(base: str, model: str, key: str, texts: list[str], http: HttpClient) -> list[Any]:
        from langchain_openai import OpenAIEmbeddings
        e = OpenAIEmbeddings(model=model, base_url=base, api_key=key, http_client=http, max_retries=0,  # type: ignore[arg-type]
                             check_embedding_ctx_length=ctx_check)
        return [e.embed_query(texts[0])] if query else list(e.embed_documents(texts))
    return call


def _litellm_module() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the cost map
    import litellm
    litellm.telemetry = False
    litellm.suppress_debug_info = True  # else it prints "Give Feedback / Get Help" to stdout: not JSON
    return litellm


def _litellm(provider: str, fmt: str | None = None) -> CallFn:
    def call(base: str, model: str, key: str, texts: list[str], http: HttpClient) -> list[Any]:
        litellm = _litellm_module()
        if provider == "hosted_vllm":
            from litellm.llms.custom_httpx.http_handler import HTTPHandler
            client: Any = HTTPHandler(client=http)
        else:  # openai/: LiteLLM drives the OpenAI SDK; the client given is used as is
            from openai import OpenAI
            client = OpenAI(base_url=base, api_key=key, http_client=http, max_retries=0)
        kw = {"encoding_format": fmt} if fmt else {}
        r = litellm.embedding(model=f"{provider}/{model}", api_base=base, api_key=key, input=texts, client=client,
                              timeout=60.0, **kw)
        return [d["embedding"] for d in r.data]
    return call


def _llamaindex(how: str, query: bool = False) -> CallFn:
    def call(base: str, model: str, key: str, texts: list[str], http: HttpClient) -> list[Any]:
        common: dict[str, Any] = {"api_base": base, "api_key": key, "http_client": http, "max_retries": 0}
        if how == "openai-like":
            from llama_index.embeddings.openai_like import OpenAILikeEmbedding
            e: Any = OpenAILikeEmbedding(model_name=model, **common)
        else:
            from llama_index.embeddings.openai import OpenAIEmbedding
            named = {"model": {"model": model}, "model_name": {"model_name": model}}.get(how, {})
            e = OpenAIEmbedding(**named, **common)
        return [e.get_query_embedding(texts[0])] if query else list(e.get_text_embedding_batch(texts))
    return call


CALLS: dict[str, tuple[str, CallFn]] = {  # check id -> (library key of LIBRARY_DIST, the call)
    "clients-openai-float": ("openai", _openai("float")),
    "clients-openai-base64": ("openai", _openai("base64")),
    "clients-openai-default": ("openai", _openai(None)),
    "clients-langchain-defaults": ("langchain", _langchain(True)),
    "clients-langchain-no-ctx-check": ("langchain", _langchain(False)),
    "clients-litellm": ("litellm", _litellm("hosted_vllm")),
    "clients-litellm-openai": ("litellm", _litellm("openai")),
    "clients-litellm-openai-float": ("litellm", _litellm("openai", "float")),
    "clients-llamaindex-default": ("llamaindex", _llamaindex("default")),
    "clients-llamaindex-model": ("llamaindex", _llamaindex("model")),
    "clients-llamaindex-model-name": ("llamaindex", _llamaindex("model_name")),
    "clients-llamaindex-openai-like": ("llamaindex-like", _llamaindex("openai-like")),
    # the query side (a retriever's question): what each library sends for it, the Qwen3 query instruction's place
    "clients-langchain-query": ("langchain", _langchain(False, query=True)),
    "clients-llamaindex-query": ("llamaindex-like", _llamaindex("openai-like", query=True)),
}
QUERY_CHECKS = ("clients-langchain-query", "clients-llamaindex-query")  # one text: TEXTS[0], as a query


def library_version(check: str) -> str:
    """The installed release of the library a check calls ('' when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(LIBRARY_DIST[CALLS[check][0]])
    except (PackageNotFoundError, KeyError):
        return ""

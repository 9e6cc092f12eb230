"""More client error texts read to the record they mean (issue 42): the ones that are not vLLM's body alone.

A refusal of /v1/embeddings (the served model has no embed task), a causal-LM class asked for its pooler (an LLM
reranker without its overrides on a release that serves it unconverted), FastAPI's 404 ``{"detail": "Not Found"}``
(a route the answering server lacks: a gateway, or vLLM without that task), a client that iterates results the
answer lacks ('NoneType' object is not iterable), a vector store refusing vectors of another length, and an engine
argument a wrapper passes that the installed vLLM no longer has. Each names its record (triage/catalogue/data/
crashes.toml) with the status its evidence earns: a cause the text proves is FAIL, a text several causes give is
WARN "one of …; to tell: …". triage/logs/crash_findings.py client_findings calls `more_client_finding`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue.crashes import (
    VLLM_API_DRIFT,
    VLLM_REQUEST_CLASS_RE,
    VLLM_REQUEST_FIELDS_ADDED,
    VLLM_SERVING_CLASS_RE,
    WRAPPER_DRIFT_FIXES,
    wrapper_named,
)
from triage.catalogue.identity import identify, llm_rerankers_on
from triage.findings import Finding, Status
from triage.logs.client_errors import COHERE_SDK, ClientError
from triage.logs.hits import ErrorHits
from triage.logs.support_findings import (
    embedding_mode_off,
    generate_attr,
    pooler_missing,
    pooling_call_on_generator,
    task_refused,
)
from triage.vllm.flags import replacement

CHECK = "log-client-error"
MORE_CLIENT_RULES = ("client-embeddings-unsupported", "client-route-not-found", "client-gateway-error",
                     "client-gateway-named", "client-message-not-found", "client-rerank-usage-total",
                     "client-token-accounting", "client-cosine", "client-plugin-named", "client-repeat-words",
                     "client-reference-named",
                     "client-result-none",
                     "client-store-dimension", "client-unknown-engine-arg", "client-http-upgrade",
                     "client-engine-args-kwarg", "client-vllm-module-attr", "client-base64-unsupported",
                     "client-token-id-oov", "client-rerank-v1-path", "log-task-unsupported",
                     "client-pooling-generate-attr", "log-embedding-mode-off",
                     "log-pooling-call-on-generator")


def _said(got: Optional[ClientError]) -> str:
    if got is None:
        return ""
    who = f"{got.library} " if got.library else ""
    return f" ({who}quoting vLLM's {got.status or ''} body)".replace("  ", " ")


def _embeddings(hit: ErrorHits, got: Optional[ClientError], ev: dict[str, Any],
                config: Mapping[str, Any]) -> Finding:
    rec = get("embeddings-api-unsupported")
    return Finding.of(rec, CHECK, Status.FAIL, rec.title + _said(got), ev, cfg=config)


def _no_pooler(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Optional[Finding]:
    cls, attr = hit.groups.get("cls", ""), hit.groups.get("attr", "")
    if attr != "pooler" or not cls.endswith("ForCausalLM"):
        return None
    if identify(config).kind == "embedder":  # an embedder's causal class without a pooler: the release lacks it
        return pooler_missing(cls, ev, config)
    rec = get("reranker-overrides-missing")
    fams = llm_rerankers_on(cls)
    cfg = dict(config)
    if len(fams) == 1 and not identify(config).family:
        cfg.update(family=fams[0].id, family_why=f"the LLM reranker whose checkpoint is {cls}")
    who = identify(cfg)
    ev = {**ev, "symptoms": []}  # the cause itself, read from the text: no symptom for the differential to weigh
    name = who.family.name if who.family is not None else "an LLM reranker"
    return Finding.of(rec, CHECK, Status.WARN,
                      f"'{cls}' object has no attribute 'pooler': the causal LM was asked for scores unconverted — "
                      f"{name} (on {cls}) served without its --hf-overrides, on a release that serves it as it ships "
                      "(the record's refs: the conversion to a score head came with 0.9.2)", ev, cfg=cfg)


def _route(hit: ErrorHits, got: Optional[ClientError], ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    rec = get("route-not-found")
    text = hit.lines[0][1] if hit.lines else ""
    uvicorn = "'server': 'uvicorn'" in text or '"server": "uvicorn"' in text
    if got is not None and got.library == COHERE_SDK and uvicorn:
        # the Cohere SDK appends /v1/rerank (Client) or /v2/rerank (ClientV2) to its base_url itself; uvicorn is
        # vLLM's own HTTP server: no gateway in between, the path is the client's
        return Finding.of(rec, CHECK, Status.WARN,
                          "A Cohere-SDK rerank client got 404 {'detail': 'Not Found'} from uvicorn (vLLM's own HTTP "
                          "server, no gateway in between): the SDK appends /v1/rerank or /v2/rerank to its base URL "
                          "itself, so a base URL ending in /v1 asks for /v1/v1/rerank or /v1/v2/rerank, a path vLLM "
                          "has no route for", {**ev, "symptoms": []}, cfg={**config, "cohere_base_url": True})
    return Finding.of(rec, CHECK, Status.WARN,
                      f"{rec.title} — one of: a gateway or proxy in front of vLLM without this route (GPUStack, an "
                      "ingress, a LiteLLM proxy), vLLM without it for the served model's tasks, or a base URL with a "
                      "segment too many or too few; to tell: the same request to vLLM's own port", ev, cfg=config)


def _gateway(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any], product: str) -> Finding:
    """A gateway's or proxy's own error text: Go's plain 404 is a route the gateway lacks (route-not-found, with the
    named product's own routes), the others the gateway's refusal or its missing backend (gateway-own-error)."""
    g = hit.groups
    ev = {**ev, "symptoms": []}  # the answering server's own words: the cause's place, not a symptom to weigh
    relayed_404 = product == "not-found"
    product = "" if relayed_404 else product
    who = f"{product}'s gateway" if product else "a gateway or proxy in front of vLLM"
    if g.get("fastchat"):
        rec = get("gateway-own-error")
        code = g["fastchat"]
        worker = (" with the worker's 'Not Found': the model's worker has no route for the request — FastChat's "
                  "vllm_worker (and its other engine workers) implement no embeddings (worker_get_embeddings is "
                  "model_worker's), so /v1/embeddings fails for every model deployed with it" if relayed_404 else
                  ": it relays the failure of the worker that serves the model")
        return Finding.of(rec, CHECK, Status.WARN,
                          f"A FastChat OpenAI API server answered (FastChat error code {code}; vLLM's code is the HTTP "
                          f"status), not vLLM{worker}", ev,
                          cfg={**config, "gateway_kind": "fastchat-not-found" if relayed_404 else "fastchat"})
    if g.get("go404"):
        rec = get("route-not-found")
        return Finding.of(rec, CHECK, Status.WARN,
                          f"'404 page not found' is Go net/http's answer for a path with no route: {who} answered, "
                          "not vLLM (vLLM's server answers {\"detail\": \"Not Found\"}) — the gateway has no route "
                          "for this path", ev, cfg={**config, "gateway_product": product, "gateway_go404": True})
    rec = get("gateway-own-error")
    kind = next(k for k in ("aibrix", "envoy", "nginx", "kong", "litellm", "litellm_model", "kserve_model")
                if g.get(k))
    said = {"aibrix": f"400 'error processing request body' is {product or 'AIBrix'}'s gateway plugin refusing a body "
                      "it cannot parse against OpenAI's request types (an /v1/embeddings input of multimodal content "
                      "parts before aibrix#2443), before the request reaches vLLM",
            "envoy": f"'{g.get('envoy')}' is Envoy's own answer ({who}): no backend ready, or the connection to "
                     "vLLM dropped",
            "nginx": f"an error page of {g.get('nginx')}: the proxy or load balancer in front of vLLM answered, not "
                     "vLLM",
            "kong": "'no Route matched with those values' is Kong's own 404: the API gateway has no route for this "
                    "path",
            "litellm_model": f"LiteLLM's router has no model named '{g.get('litellm_model')}' (its own "
                             "'Invalid model name', not vLLM's 'The model … does not exist')",
            "kserve_model": f"KServe's model server has no model named '{g.get('kserve_model')}' (its own "
                            "ModelNotFound, not vLLM's 'The model … does not exist')",
            "litellm": f"LiteLLM refused {g.get('params', 'a parameter')} itself (UnsupportedParamsError for its "
                       f"{g.get('litellm')} provider) before calling vLLM"}[kind]
    shape = "; vLLM's own error is JSON" if kind in ("aibrix", "envoy", "nginx", "kong") else ""
    return Finding.of(rec, CHECK, Status.WARN, f"{said}{shape}", ev,
                      cfg={**config, "gateway_kind": kind, "gateway_product": product})


def _result_none(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    rec = get("client-result-none")
    model = hit.groups.get("model") or ""
    who = identify({**config, "model_id": model}) if model else identify(config)
    ragflow = (f"RAGFlow's model check ('Fail to access model({model[:120]})'): " if model else "")
    shape = ("RAGFlow's OpenAI-API-compatible rerank provider expects another answer than vLLM's Jina/Cohere-shaped "
             "/rerank" if model and who.kind == "reranker" else "the client's provider expects another answer shape")
    return Finding.of(rec, CHECK, Status.WARN,
                      f"{ragflow}{rec.title} — one of: the server answered an error body (no score task, a model "
                      f"name it does not serve, an input over max_model_len), or {shape}; to tell: POST the same "
                      "request to the server by hand", ev, cfg={**config, **({"model_id": model} if model else {})})


# sizes a store takes when it is created without the embedding model's own: OpenAI's ada-002 / 3-small (the default of
# many RAG apps' settings) and 768 (Llama Stack's vector stores before ogx#5590, EMBEDDING_DIMENSION; BERT-base size)
STORE_DEFAULT_DIMS: dict[str, str] = {
    "1536": "OpenAI text-embedding-ada-002 / 3-small's size, the default of many RAG apps' store settings",
    "768": "the default of stores created without an embedding dimension (Llama Stack / ogx vector stores before "
           "ogx#5590 took EMBEDDING_DIMENSION = 768 instead of the model's metadata)",
}


def _store_dimension(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    rec = get("vector-store-dimension-mismatch")
    got, want = hit.groups.get("got", "?"), hit.groups.get("want", "?")
    default = STORE_DEFAULT_DIMS.get(want)
    # the store holds a default size, not a model's: it was created without the size (not where the store's words say
    # its index was loaded from disk, built earlier: LightRAG's 'but loaded: N' is another model's index)
    # (only in the generic words of an app's own store, which it creates itself, often with its default size; a
    # database's own refusal — Milvus, Qdrant, Chroma, pgvector — stays "one of")
    if default and got != want and hit.groups.get("app_store") and "loaded" not in hit.groups.get("matched", ""):
        return Finding.of(rec, CHECK, Status.WARN,
                          f"The vector store expects {want} dimensions, the embeddings have {got}: {want} is "
                          f"{default} — the store was not created with this model's size (a default, or an earlier "
                          "model's: the fix is the same); vLLM returns the model's own size unless `dimensions` is "
                          "sent", ev,
                          cfg={**config, "got_dim": got, "store_dim": want, "store_default": True})
    return Finding.of(rec, CHECK, Status.WARN,
                      f"The vector store expects {want} dimensions, the embeddings have {got} — one of: the "
                      "collection (index) was built with another model (or another `dimensions`) than the one now "
                      "embedding, or the client now asks another model or `dimensions` than it was set up with; "
                      "vLLM returns the model's own size unless `dimensions` is sent; to tell: embed one text and "
                      "compare its length with the model's size", ev,
                      cfg={**config, "got_dim": got, "store_dim": want})


def _engine_arg(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    arg = hit.groups.get("arg", "")
    option = "--" + arg.replace("_", "-")
    rep = replacement(option)
    if rep is None:
        return Finding(CHECK, Status.UNKNOWN,
                       f"`{arg}` is not an engine argument of the installed vLLM (a wrapper's engine_kwargs pass it "
                       "through to AsyncEngineArgs)", ev,
                       fix=f"Check `{option}` against `vllm serve --help` of the installed release (its spelling, "
                           "or the release that removed it).")
    rec = get("removed-flag")
    use = rep.use
    ev = {**ev, "symptoms": []}  # the cause itself, read from the text: no symptom for the differential to weigh
    kwargs = ("; in engine_kwargs: runner=\"pooling\" (and convert=\"embed\" for a causal-LM embedder such as "
              "Qwen3-Embedding)" if option == "--task" else "")
    return Finding.of(rec, CHECK, Status.FAIL,
                      f"{rec.title}: `{arg}` is not an engine argument of the installed vLLM ({option} is gone: "
                      f"{use}{kwargs})", ev,
                      cfg={**config, "removed": [{"option": option, "use": use + kwargs}]})


def _http_upgrade(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    rec = get("http-upgrade-unsupported")
    ev = {**ev, "symptoms": []}  # the server's own words about the client: the cause, not a symptom to weigh
    return Finding.of(rec, CHECK, Status.WARN,
                      f"uvicorn's 'Unsupported upgrade request': {rec.title} — the client's HTTP/2 upgrade offer, "
                      "not vLLM (the same request over plain HTTP/1.1 is served)", ev, cfg=config)


def _wrapper_drift(hit: ErrorHits, owner: str, attr: str, ev: dict[str, Any],
                   config: Mapping[str, Any], context: str = "") -> Finding:
    """A wrapper (named when its own lines, or the traceback's frames in ``context``, show) using vLLM API the
    installed release dropped: the wrapper's fix."""
    rec = get("wrapper-vllm-method-removed")
    who = (wrapper_named(" ".join(t for _, t in hit.lines)) or wrapper_named(context)
           or "a serving wrapper (or code written for an older vLLM)")
    drift = VLLM_API_DRIFT.get((owner, attr))
    what = f" ({drift[0]}; {drift[1]})" if drift else ""
    ev = {**ev, "symptoms": [], **({"wrapper": who} if who[0].isupper() else {})}
    own = WRAPPER_DRIFT_FIXES.get((who, owner, attr))
    fix = (own + "; vLLM's own flags change nothing.") if own else None
    has = "does not have" if drift and "never" in drift[0] else "no longer has"
    return Finding.of(rec, CHECK, Status.FAIL,
                      f"{rec.title}: {who} uses {owner}.{attr}, which the installed vLLM {has}{what}; "
                      "vLLM itself is not at fault", ev, cfg=config, fix=fix)


def _engine_args_kwarg(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    """``EngineArgs.__init__() got an unexpected keyword argument``: Python code building the engine with an argument
    the release dropped — a wrapper's (its fix: the wrapper) or the user's own script (the replacement)."""
    arg = hit.groups.get("arg", "")
    who = wrapper_named(" ".join(t for _, t in hit.lines))
    if who:
        return _wrapper_drift(hit, "EngineArgs", arg, ev, config)
    rec = get("wrapper-vllm-method-removed")
    rep = replacement("--" + arg.replace("_", "-"))
    own = ("runner=\"pooling\" instead of task= (a causal-LM embedder also convert=\"embed\"; a reranker keeps its "
           "score head)" if arg == "task" else rep.use if rep is not None else f"drop {arg}=")
    return Finding.of(rec, CHECK, Status.WARN,
                      f"{hit.groups.get('cls', 'EngineArgs')}(…, {arg}=…) refused: the installed vLLM has no `{arg}` "
                      "engine argument — one of: a serving wrapper (Xinference, Ray Serve LLM, …) built for an older "
                      f"vLLM passes it, or your own code does (there: {own}); to tell: the traceback's outer frames",
                      {**ev, "symptoms": []}, cfg=config)


def _request_field(hit: ErrorHits, cls: str, attr: str, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    """vLLM's own request class without a field its code reads: the release's bug; proven where the catalogue
    knows the release that added it."""
    rec = get("vllm-request-field-missing")
    added = VLLM_REQUEST_FIELDS_ADDED.get((cls, attr))
    title = (f"{rec.title}: {cls} has no {attr}"
             + (f" before {added}" if added else " — a bug of the installed release, or a wrapper building that "
                "request from another release's fields; to tell: whose frames raise it"))
    return Finding.of(rec, CHECK, Status.FAIL if added else Status.WARN, title, {**ev, "symptoms": []}, cfg=config)


def _token_id_oov(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any]) -> Finding:
    rec = get("client-token-ids")
    return Finding.of(rec, CHECK, Status.WARN,
                      "The embedding lookup got a token id beyond the model's vocabulary (index_select out of range) "
                      "— one of: the client sends token ids from another tokenizer (LangChain's tiktoken, another "
                      "model's), or the server's --tokenizer is not the model's own; to tell: the request's input "
                      "(lists of ints are ids) and --tokenizer", {**ev, "symptoms": []},
                      cfg={**config, "problem": "out-of-vocabulary"})


def more_client_finding(check: str, hit: ErrorHits, got: Optional[ClientError], ev: dict[str, Any],
                        config: Mapping[str, Any], context: str = "", product: str = "") -> Optional[Finding]:
    """The finding of one of these client texts (None: the rule is not one of them, or the text means nothing here);
    ``context``: the paste's traceback frames (the files that name a wrapper); ``product``: a gateway product the
    paste names (KubeAI, AIBrix)."""
    if check == "client-gateway-error":
        return _gateway(hit, ev, config, product)
    if check == "client-rerank-usage-total":
        rec = get("rerank-usage-total-only")
        return Finding.of(rec, CHECK, Status.WARN,
                          f"vLLM's /rerank answer reports usage as total_tokens only ({hit.groups.get('total')}), no "
                          "prompt_tokens: token accounting that reads prompt/completion tokens (a gateway's metrics, "
                          "GPUStack, LiteLLM's spend logs) records zero for rerank calls — the metering's gap, not a "
                          "vLLM fault", {**ev, "symptoms": []}, cfg=config)
    if check == "client-message-not-found":  # alone: a 'Not Found' body of some server in front of vLLM, or a worker
        return _route(hit, got, ev, config)
    if check == "client-embeddings-unsupported":
        return _embeddings(hit, got, ev, config)
    if check == "log-task-unsupported":  # vLLM's own start-up refusal, read against the support table
        return task_refused(hit, ev, config)
    if check == "client-pooling-generate-attr":
        return generate_attr(hit, ev, config)
    if check == "log-pooling-call-on-generator":
        return pooling_call_on_generator(hit, ev, config)
    if check == "log-embedding-mode-off":  # a generator's routine start-up line: a finding only for a pooling model
        return embedding_mode_off(hit, ev, config)
    if check == "client-no-attribute":
        cls, attr = hit.groups.get("cls", ""), hit.groups.get("attr", "")
        if VLLM_SERVING_CLASS_RE.match(cls):
            return _wrapper_drift(hit, cls, attr, ev, config, context)
        if VLLM_REQUEST_CLASS_RE.match(cls):
            return _request_field(hit, cls, attr, ev, config)
        return _no_pooler(hit, ev, config)
    if check == "client-vllm-module-attr":
        return _wrapper_drift(hit, hit.groups.get("module", ""), hit.groups.get("attr", ""), ev, config, context)
    if check == "client-engine-args-kwarg":
        return _engine_args_kwarg(hit, ev, config)
    if check == "client-route-not-found":
        return _route(hit, got, ev, config)
    if check == "client-result-none":
        return _result_none(hit, ev, config)
    if check == "client-store-dimension":
        return _store_dimension(hit, ev, config)
    if check == "client-unknown-engine-arg":
        return _engine_arg(hit, ev, config)
    if check == "client-base64-unsupported":  # vLLM's own body: the old release's refusal, proven
        rec = get("base64-old-release")
        return Finding.of(rec, CHECK, Status.FAIL, f"{rec.title}: this server's vLLM refuses encoding_format=base64, "
                          "which the OpenAI SDK sends by default", {**ev, "symptoms": []}, cfg=config)
    if check == "client-rerank-v1-path":  # vLLM's own warning: the request was served; the client's path is not vLLM's
        if any(config.get(k) for k in ("model", "max_model_len", "runner", "task")):
            return None  # a whole server log (a probe tries every path): routine traffic, not the paste's point
        # a note, not a fault (UNKNOWN): beside a real cause it must not read as a second one
        return Finding.of(get("rerank-api-contract"), CHECK, Status.UNKNOWN,
                          "A client calls /v1/rerank: vLLM serves it but warns that its rerank API is at /rerank "
                          "(a note, not an error: the answers are right)", {**ev, "symptoms": []},
                          fix=get("rerank-api-contract").fix({**config, "problem": "v1-path"}))
    if check == "client-token-id-oov":
        return _token_id_oov(hit, ev, config)
    if check == "client-http-upgrade":
        return _http_upgrade(hit, ev, config)
    return None


SAME_VECTORS = 0.99  # two vectors of one text: below this cosine they are not the same vector (the vectors probe's)


def cosine_finding(hit: ErrorHits, ev: dict[str, Any], config: Mapping[str, Any],
                   context: Mapping[str, Mapping[str, str]]) -> Optional[Finding]:
    """A paste stating cosine similarities between vectors of the same text (its words say so, or a cache hit): the
    lowest below SAME_VECTORS is unstable-vectors; a cache hit names the prefix-cache path, a platform plugin its
    own attention path. None: no low cosine, or nothing says the texts were the same (a comparison with another
    library's vectors is pooling's question, not this one)."""
    from triage.vllm import logformats as lf  # noqa: PLC0415 - the pattern is the rule's own

    cosines = [float(m["cos"]) for _n, t in hit.lines for m in lf.COSINE_STATED_RE.finditer(t)]
    low = min(cosines, default=1.0)
    words = context.get("client-repeat-words", {})
    said = " ".join((*(c.get("_text", "") for c in context.values()), *(t for _n, t in hit.lines)))
    same = bool(words) or any(rx.search(said) for rx in lf.REPEAT_WORDS_RES)
    cache = bool(words.get("cache")) or any(k in said for k in ("缓存", "cache", "Cache", "prefix-cach"))
    other = "client-reference-named" in context or lf.REFERENCE_NAMED_RE.search(said) is not None
    if low >= SAME_VECTORS or not same or (other and not cache):
        return None  # vLLM against another library's vectors without a cache hit: pooling's question, not this one
    rec = get("unstable-vectors")
    plugin = context.get("client-plugin-named", {}).get("plugin", "")
    ascend = bool(plugin) and plugin.lower().replace("_", "-").replace(" ", "-") in (
        "vllm-ascend", "vllm-asend", "ascend", "npu", "vllmascend", "vllmasend")
    where = (" on vllm-ascend (its pooling attention path, npu_fusion_attention, reads no prefix cache, so a cached "
             "prefix leaves the pooler a partial forward)" if ascend else
             f" on the {plugin} platform plugin (its own attention path for pooling)" if plugin else "")
    why = ("with prefix caching in play: a repeat reuses the cached prefix (automatic prefix caching) and the pooled "
           f"vector changes{where}" if cache else f"between calls of the same text{where}")
    return Finding.of(rec, CHECK, Status.WARN,
                      f"The same text gets different vectors: cosine down to {low:.4f} {why}",
                      {**ev, "symptoms": [], "cosines": cosines[:10]},
                      cfg={**config, "drift_path": "prefix-cache" if cache else "", "plugin": "ascend" if ascend
                           else plugin})

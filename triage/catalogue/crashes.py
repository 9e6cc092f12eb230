"""Catalogue records for engine crashes read from a traceback and for client error texts that quote vLLM (issue 42).

The records are data (``triage/catalogue/data/crashes.toml``); here is what a reader needs to match them: each
crash record's signature (the exception, its message pattern, the vLLM frames or code lines that single it out),
written with the pattern names of triage/vllm/logformats.toml. triage/logs/crash_findings.py reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.catalogue.identity import ModelIdentity, identify, release_has_task, serve_fix
from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike
from triage.vllm import logformats as lf


@dataclass(frozen=True)
class Signature:
    """What a traceback shows for one record: the exception's class name, a pattern its message matches, and the
    frames (vLLM functions) or code lines of which one must be there; ``proven`` False: the match names the record
    among others ("one of"), as a CUDA fault has other causes."""

    record: str
    exceptions: tuple[str, ...]
    message: re.Pattern[str]
    functions: tuple[str, ...] = ()
    codes: tuple[re.Pattern[str], ...] = ()
    proven: bool = True
    reader: str = ""  # a finding of its own (triage/logs/support_findings.py) instead of the record's generic one


SIGNATURES: tuple[Signature, ...] = (
    Signature("pooling-chunked-prefill-keyerror", ("KeyError",), re.compile(r"^None$"),
              functions=("_prepare_inputs",), codes=(lf.NUM_SCHEDULED_NONE_CODE_RE,)),
    Signature("transformers-fallback-cannot-pool", ("ValueError",), lf.NO_MODULE_NAMED_RE),
    Signature("transformers-fallback-cannot-pool", ("ValueError",), lf.NO_VLLM_IMPL_RE),
    # a base-model (sentence-transformers) checkpoint loaded by the generator class: served for generation
    Signature("generate-runner", ("ValueError",), lf.GENERATOR_LOADS_BASE_RE),
    # an embeddings request's PoolingParams read as sampling parameters by the V0 generation runner (0.4 … 0.6): the
    # model runs as a text generator (a release without an embedding model for its architecture)
    Signature("generate-runner", ("AttributeError",), re.compile(r"^$|PoolingParams|'seed'"),
              codes=(lf.SAMPLING_SEED_CODE_RE,), reader="pooling-on-generator"),
    Signature("generate-runner", ("AttributeError",), re.compile(r"^'PoolingParams' object has no attribute 'seed'"),
              reader="pooling-on-generator"),
    Signature("pooling-chunked-prefill-race", ("RuntimeError", "AcceleratorError", "CudaError"), lf.CUDA_FAULT_RE,
              proven=False),
)
# A traceback cut before its exception line (a paste, a search index, a log tail): the innermost vLLM frame alone, where
# one check there raises nearly always, names that check's record among others ("one of"; the other causes are the
# second item). vllm/v1/worker/gpu_worker.py init_device (0.9 … 0.10.x; later releases moved the check to
# v1/worker/utils.py request_memory, called from init_device too): the 'Free memory on device … is less than desired
# GPU memory utilization' refusal, else a device that cannot be initialised.
CUT_TRACEBACK_FRAMES: dict[tuple[str, str], tuple[str, str]] = {
    ("v1/worker/gpu_worker.py", "init_device"): (
        "gpu-memory-shared",
        "a device that cannot be initialised (CUDA driver, CUDA_VISIBLE_DEVICES, a busy or missing GPU)"),
}
# serving classes of vLLM whose methods wrappers call (NO_ATTRIBUTE_RE's class): an AttributeError on one of them is
# a wrapper built for another release
VLLM_SERVING_CLASS_RE = re.compile(
    r"^(?:OpenAI)?Serving\w+$|^(?:Pooling|Embedding|Scoring|Classification)(?:Request)?Output$"
    r"|^(?:Async)?LLMEngine$|^AsyncLLM$|^(?:MQ)?LLMEngineClient$|^EngineCoreClient$")
# vLLM's protocol request classes: an AttributeError on one of them is that release's own bug (a field the shared
# code reads that the class lacks); the known ones -> the release that added it
VLLM_REQUEST_CLASS_RE = re.compile(r"^\w*(?:Completion|Chat|Embedding|Score|Rerank|Pooling|Classification)\w*Request$")
VLLM_REQUEST_FIELDS_ADDED: dict[tuple[str, str], str] = {("EmbeddingChatRequest", "mm_processor_kwargs"): "0.8.0"}
# vLLM API a wrapper still uses after a release dropped it: (class or module, attribute or engine argument) -> what
# replaced it and the change that dropped it (record wrapper-vllm-method-removed; its refs list the same changes)
VLLM_API_DRIFT: dict[tuple[str, str], tuple[str, str]] = {
    ("PoolingOutput", "embedding"): ("the pooled tensor is PoolingOutput.data", "vllm#18795"),
    ("vllm.envs", "VLLM_USE_V1"): ("V1 is the only engine: the variable is gone", "vllm#28204"),
    ("EngineArgs", "task"): ("runner=\"pooling\" (and convert=...) replace task, removed in 0.13.0", "vllm#21470"),
    # vLLM's synchronous engine never had encode (V0 vllm/engine/llm_engine.py, V1 vllm/v1/engine/llm_engine.py: a
    # pooling request goes through add_request with PoolingParams); encode is AsyncLLMEngine's / AsyncLLM's and LLM's
    ("LLMEngine", "encode"): ("the synchronous LLMEngine never had encode: pooling requests run on vLLM's async "
                              "engine (AsyncLLM.encode), or through LLMEngine.add_request with PoolingParams",
                              "modelscope/ms-swift#7301"),
}
# what a named wrapper's user does about one drift, where the wrapper has its own switch or release for it
WRAPPER_DRIFT_FIXES: dict[tuple[str, str, str], str] = {
    ("ms-swift", "LLMEngine", "encode"): (
        "ms-swift: run the pooling task (embedding, seq_cls, reranker) on vLLM's async engine — add "
        "--vllm_use_async_engine true to swift infer/deploy — or upgrade ms-swift to a release with "
        "modelscope/ms-swift#7301, which turns the async engine on for encode tasks"),
}
# serving wrappers whose own log names or module paths show in the lines that carry vLLM's error: the display name
WRAPPER_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bxinference\b", re.I), "Xinference"),
    (re.compile(r"\bray[./](?:serve|llm)\b|\bray\.serve\b|\bServeReplica\b"), "Ray Serve LLM"),
    (re.compile(r"\bkserve\b|\bhuggingfaceserver\b", re.I), "KServe huggingfaceserver"),
    (re.compile(r"\bgpustack\b", re.I), "GPUStack"),
    (re.compile(r"\bswift[/.](?:llm|megatron|trainers|infer)\b|\bms[-_]swift\b|\bswift (?:infer|deploy|rollout)\b"),
     "ms-swift"),
    (re.compile(r"\bllamafactory\b", re.I), "LLaMA-Factory"),
    (re.compile(r"\bfastchat\b", re.I), "FastChat"),
)


def wrapper_named(text: str) -> str:
    """The serving wrapper the text names ('' when none does)."""
    return next((name for pat, name in WRAPPER_NAMES if pat.search(text)), "")



def _embeddings_unsupported_fix(cfg: ConfigLike) -> str:
    """Serve the model for embedding, spelled by the release; a scoring model has no embed task at all."""
    who = identify(cfg)
    if who.scoring:
        return (f"{who.name} is a {who.kind}: it has no embed task, and no flag gives it one that ranks; call "
                "/rerank, /score or /classify for it, and serve an embedding model for /v1/embeddings.")
    if cfg.get("vllm_version"):
        return serve_fix(ModelIdentity("embedder", model=who.model), release_has_task=release_has_task(cfg))
    return ("Serve the embedding model for embedding, as its release spells the pooling task: vLLM >= 0.10.2 "
            "--runner pooling --convert embed (a causal-LM embedder such as Qwen3-Embedding resolves to generate "
            "without them); 0.7 … 0.10.1 --task embed (Qwen3-Embedding needs vLLM >= 0.8.5). The start-up log's "
            "'Supported tasks' must then list 'embed'. A reranker or classifier has no embed task: call /rerank or "
            "/classify for it. BGE-M3 served as BgeM3EmbeddingModel (a 501): pick its task with --pooler-config.")


def _arch_unsupported_fix(cfg: ConfigLike) -> str:
    """The family's release when the support table knows it (and the deployment's release is not newer), else any
    release whose registry lists the architecture."""
    from triage.catalogue.pooling_support import predates, support_of, upgrade_fix  # noqa: PLC0415 - import-light

    who = identify(cfg)
    sup = support_of(who)
    if sup is not None and sup.family and predates(cfg.get("vllm_version"), sup) is not False:
        return upgrade_fix(who, sup, cfg.get("vllm_version"))
    return ("None by flag: upgrade to a vLLM release whose registry lists the architecture (check one with "
            "`python -c \"from vllm import ModelRegistry; print(ModelRegistry.get_supported_archs())\"`, or its "
            "supported-models docs), or serve a model of an architecture this release lists.")


def _store_dimension_fix(cfg: ConfigLike) -> str:
    got, want = cfg.get("got_dim"), cfg.get("store_dim")
    dims = f" ({got} sent, {want} in the store)" if got and want else ""
    if cfg.get("store_default"):
        stack = (" (Llama Stack / ogx: pass embedding_dimension when creating the vector store, or upgrade to a "
                 "release with ogx#5590, which reads the model's metadata)" if want == "768" else
                 " (the app's embedding-dimension setting)")
        return (f"Re-create the vector store with the model's size, embedding_dimension = {got}{stack}, and "
                "re-ingest the documents with this model; vLLM needs no change.")
    return (f"Make the two agree{dims}. When the vectors are the model's own size (vLLM is fine): drop and re-create "
            "the collection (index) with that dimension and re-index the documents with this model (LightRAG: a "
            "new or cleared working directory, embedding_dim = the model's size). To keep the store's size on a "
            "Matryoshka model, send `dimensions` = the store's size. If the client now names another model than "
            "the one the store was built with, point it back at that model.")


# a gateway product's own routes (a 404 from its mux means the path is not one of them): the product -> what to call
GATEWAY_ROUTES: dict[str, str] = {
    "KubeAI": ("KubeAI serves the OpenAI API under /openai/v1/ (/openai/v1/embeddings, /openai/v1/rerank); its "
               "rerank route was registered as /vllm/v1/rerank and never mounted before kubeai-project/kubeai#609: "
               "upgrade KubeAI to a release with kubeai#609 and call /openai/v1/rerank (base URL "
               "http://<kubeai service>/openai/v1)"),
}


def _route_fix(cfg: ConfigLike) -> str:
    """Call a route the answering server has; a named gateway's own routes where the catalogue knows them."""
    generic = RECORDS["ROUTE_NOT_FOUND"].fix_text.strip()
    if cfg.get("cohere_base_url"):
        return ("Give the Cohere-SDK client the server's root as its base URL — http://host:port, without /v1 (MaxKB's "
                "vLLM rerank model, LangChain CohereRerank(base_url=…), Dify's Cohere-compatible provider); the "
                "embedding and chat models of the same app keep their /v1. If the 404 stays, the served model has no "
                "score task: serve the reranker as a reranker (its /rerank, /v1/rerank, /v2/rerank routes come with "
                "it).")
    own = GATEWAY_ROUTES.get(str(cfg.get("gateway_product") or ""))
    if own:
        return f"{own}. Otherwise: {generic[0].lower()}{generic[1:]}"
    if cfg.get("gateway_go404"):
        return ("The path is not a route of the Go gateway or proxy in front of vLLM: call the path its docs give "
                "(its OpenAI base URL), or vLLM's own port to test; vLLM itself needs no change. " + generic)
    return generic


_GATEWAY_FIXES: dict[str, str] = {
    "aibrix": ("Send the request to the vLLM service directly (bypass the AIBrix gateway) to confirm, and upgrade the "
               "AIBrix gateway to a build that parses this body (aibrix#2443: multimodal content-part inputs of "
               "/v1/embeddings); until then keep the body to OpenAI's shapes (input: a string or a list of "
               "strings/token ids) or route that model around the gateway"),
    "envoy": ("No backend was ready behind Envoy (or the connection to it dropped): check the vLLM pod's readiness "
              "and restarts (kubectl get pods, its log), the service's endpoints, and the gateway's timeout for long "
              "requests; vLLM's flags change nothing until it is reached"),
    "fastchat-not-found": (
        "FastChat: deploy the model that must embed with fastchat.serve.model_worker (the vllm_worker implements no "
        "embeddings), or serve the embedding model with vLLM itself (vllm serve with the pooling runner) and call its "
        "/v1/embeddings directly; vLLM needs no change"),
    "fastchat": ("Read the FastChat worker's own log for the failure it relayed (the controller's and the model "
                 "worker's), then call the worker's engine directly to tell FastChat's part from the engine's"),
    "nginx": ("The proxy or load balancer in front of vLLM answered (nginx, an ALB, …): check its upstream address, "
              "its read timeout (long embedding batches: nginx proxy_read_timeout, the ALB idle timeout) and its "
              "body size limit (client_max_body_size) against the request; then vLLM's own log"),
    "litellm": ("LiteLLM drops a parameter its provider route does not declare only when told to: set drop_params: "
                "true (litellm_settings, or drop_params=True on the call) to leave it out, or allowed_openai_params: "
                "['dimensions'] to pass it on (vLLM takes `dimensions` only for a Matryoshka model)"),
    "litellm_model": ("Use a model_name of the LiteLLM proxy's model_list (GET /v1/models on the proxy lists them), "
                      "or add one whose litellm_params.model is hosted_vllm/<vLLM's served name> with api_base = the "
                      "vLLM server's /v1"),
    "kserve_model": ("Call the model by the name KServe serves it under (the InferenceService's name, or "
                     "--model_name), in the path (/v1/models/<name>:predict) or the OpenAI body's model field"),
    "kong": ("Add a Kong route for this path (or call the path Kong routes) to the vLLM service; vLLM itself needs no "
             "change"),
}


def _gateway_fix(cfg: ConfigLike) -> str:
    kind = str(cfg.get("gateway_kind") or "")
    return _GATEWAY_FIXES.get(kind, "Send the same request to vLLM's own port, bypassing the gateway or proxy: the "
                              "gateway's configuration (routes, body validation, timeouts) is where the fix is") + "."


RECORDS = load(__name__)  # triage/catalogue/data/crashes.toml
__getattr__, __dir__ = RECORDS.exports(globals())

CRASH_MODES = RECORDS.modes()

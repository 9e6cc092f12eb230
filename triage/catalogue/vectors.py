"""Catalogue records for wrong vectors and client misconfiguration: "200 OK, but retrieval got worse".

Facts: shared/reference/clients.md (LangChain's token ids, measured against lab servers),
vllm-embedding-facts.md §3/§6 and real-vllm-on-cpu.md (what a server answers). The probes in
triage/probes/vectors.py, clients.py and openwebui.py read wording, refs and fixes from here.
"""

from __future__ import annotations

from triage.catalogue import vector_causes as vcs
from triage.catalogue.model import ConfigLike, Edit, FailureMode, modes_of
from triage.catalogue.symptoms import REJECTED, UNSTABLE, WRONG_DIMENSION, WRONG_DIRECTION, WRONG_NORM, Clue

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


def _client_ids_fix(cfg: ConfigLike) -> str:
    client = cfg.get("client") or "LangChain OpenAIEmbeddings"
    return (f"{client}: set {LANGCHAIN_SETTING}=False (it then sends text, and vLLM tokenizes with the model's "
            "own tokenizer); the client-side length check is tiktoken's, not the model's, so truncate on the "
            "server instead (truncate_prompt_tokens, via model_kwargs / extra_body). Re-embed what was embedded "
            "with token ids.")


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


from triage.catalogue import clients as _c  # noqa: E402  (the client records' clues and facts)
from triage.catalogue.symptoms import (  # noqa: E402
    CLIENT_ERROR as _CLIENT_ERROR, REJECTED as _REJECTED, WRONG_DIMENSION as _WRONG_DIMENSION,
    WRONG_DIRECTION as _WRONG_DIRECTION, Clue as _Clue)

CLIENT_TOKEN_IDS = FailureMode(
    id="client-token-ids",
    title="The client sends tiktoken token ids instead of text (LangChain check_embedding_ctx_length)",
    mechanism=(
        "LangChain's OpenAIEmbeddings pre-tokenizes every input with tiktoken (cl100k_base for a model it "
        "does not know) and sends OpenAI token ids. vLLM embeds them as ids of its own vocabulary: with a "
        "vocabulary smaller than cl100k's (~100k) it answers 400 'Token id … is out of vocabulary'; with a "
        "larger one (Qwen3: ~151k) it answers 200 with confident vectors of unrelated tokens (cosine ~0 with "
        "the text's own vector)."
    ),
    refs=("langchain-ai/langchain#12854",),
    evidence={
        "clients": "the client's vector for a text has cosine < 0.99 with a plain request's vector of the same "
        "text, or the client's request fails with 400 'out of vocabulary'",
        "log": "requests whose input is lists of integers from a client that was given text",
    },
    fix_for=_client_ids_fix,
    symptoms=(_CLIENT_ERROR, _REJECTED, _WRONG_DIRECTION),
    clues=(_Clue("token-ids-sent", _c.token_ids_sent), _Clue("plain-request", _c.plain_request_refused)),
    experiment=(f"Embed the same texts with {LANGCHAIN_SETTING}=False: text is sent, and the vectors match a plain "
                "request's (cosine >= 0.99)."),
    experiment_probe="clients",
)

def _pooling_edits(cfg: ConfigLike) -> list[Edit]:
    """Drop the override when the command line carries one (the fix the lab twin verifies): the model's own
    pooling comes back from its files."""
    if not cfg.get("pooler_config"):
        return []
    return [Edit(serve={"!--pooler-config": None},
                 why="the --pooler-config override removed: the model's own pooling")]


POOLING_MISMATCH = FailureMode(
    id="pooling-mismatch",
    edits=_pooling_edits,
    title="The server pools or normalizes differently from the model's own configuration",
    mechanism=(
        "An embedding model is trained with one pooling (sentence-transformers 1_Pooling/config.json: MEAN, "
        "CLS or last token) and usually L2 normalization. When vLLM resolves another one (a --pooler-config "
        "override, a checkpoint without its pooling files, an architecture default) every vector is still a "
        "vector of the right size: nothing fails, retrieval quality drops."
    ),
    refs=("vllm#15929", "vllm#16892", "vllm#45995"),
    evidence={
        "vectors": "the server's vector for a text differs (cosine < 0.99) from a reference computed with "
        "transformers and the model's own pooling; or the norm differs from what the pooling config says",
        "model-files": "modules.json / 1_Pooling/config.json / config.json name another pooling than the one "
        "the server resolved",
        "log": "'Resolved pooling config: pooling_type=X(source=…)' differs from the model's pooling",
        "cmdline": "--pooler-config '{\"pooling_type\": …}' other than the model's",
    },
    fix_for=_pooling_fix,
    symptoms=(WRONG_DIRECTION, WRONG_NORM),
    clues=(Clue("files-vs-resolved-pooling", vcs.pooling_files), Clue("reference-other-pooling", vcs.pooling_reference),
           Clue("norm-follows-use-activation", vcs.pooling_norm)),
    experiment=("Read the pooling the server resolved (start-up log 'Resolved pooling config', command line) "
                "against the model's files, and compare its vectors with each pooling of the model's pipeline."),
    experiment_probe="vectors",
)

def _nan_edits(cfg: ConfigLike) -> list[Edit]:
    return [Edit(serve={"dtype": "bfloat16"}, why="no float16 overflow")]


NAN_VECTORS = FailureMode(
    id="nan-vectors",
    edits=_nan_edits,
    title="NaN or infinite values in embeddings (fp16 overflow)",
    mechanism=(
        "Activations that overflow float16 become inf/NaN; JSON cannot carry them, so vLLM answers 500 "
        "'Out of range float values are not JSON compliant', or a base64 client receives NaN silently."
    ),
    refs=("vllm#16892",),
    evidence={"vectors": "a returned value is NaN/inf, or a 500 'Out of range float values'"},
    fix_text=("Serve in bfloat16 or float32 (--dtype bfloat16 / --dtype float32) instead of float16; keep inputs "
              "within max_model_len."),
    symptoms=(WRONG_NORM, REJECTED),
    clues=(Clue("non-finite-values", vcs.non_finite_clue),),
    experiment="Embed a few texts and count NaN/inf values (or a 500 'Out of range float values').",
    experiment_probe="vectors",
)

MISSING_EOS = FailureMode(
    id="missing-eos",
    title="LAST-token pooling without the EOS token at the end of the input",
    mechanism=(
        "Last-token pooling (Qwen3-Embedding) takes the hidden state of the final token; the model was trained "
        "with <|endoftext|> appended. A tokenizer (or an old tokenizer_config) that does not append it pools "
        "the last word instead: vectors are valid-looking and worse."
    ),
    refs=("vllm#16892", "QwenLM/Qwen3-Embedding#54", "QwenLM/Qwen3-Embedding#122"),
    evidence={"vectors": "/tokenize output does not end with the tokenizer's EOS id while pooling is LAST"},
    fix_text=("Use the model's current tokenizer files (they append EOS), or append the EOS text to every input "
              "on the client side; re-embed the corpus."),
    symptoms=(WRONG_DIRECTION,),
    clues=(Clue("tokenize-ends-with-eos", vcs.eos_clue),),
    experiment="POST /tokenize a text and an empty string: the last id must be the tokenizer's EOS for LAST pooling.",
    experiment_probe="vectors",
)

DIMENSIONS_NOT_MATRYOSHKA = FailureMode(
    id="dimensions-not-matryoshka",
    title="`dimensions` sent to a model that is not Matryoshka",
    mechanism=(
        "vLLM refuses `dimensions` (400 'does not support Matryoshka embeddings') unless the model declares "
        "Matryoshka support; forcing it with --hf-overrides '{\"is_matryoshka\": true}' on a model not trained "
        "that way returns truncated vectors of poor quality."
    ),
    evidence={"vectors": "the dimension differs from what the model declares",
              "clients": "a client setting `dimensions` gets 400"},
    fix_text=("Drop `dimensions` from the client (LangChain: dimensions=None; LiteLLM: no dimensions=) unless the "
              "model card says Matryoshka; then serve with --hf-overrides '{\"is_matryoshka\": true}'."),
    symptoms=(WRONG_DIMENSION,),
    clues=(Clue("dimension-vs-model", vcs.matryoshka_dim),),
    experiment=("Embed without `dimensions` and compare the length with the model's files (hidden size, Dense "
                "out_features, matryoshka_dimensions)."),
    experiment_probe="vectors",
)

BASE64_TRUNCATED = FailureMode(
    id="base64-truncated",
    title="base64 embeddings decoded with the wrong element type or cut by a proxy",
    mechanism=(
        "With encoding_format=base64 vLLM sends little-endian float32 bytes. A proxy or client that decodes "
        "them as another type, or re-encodes and cuts the string, hands the application a vector of the wrong "
        "length (a quarter, or a half) or of the wrong values."
    ),
    evidence={"clients": "the base64 vector's length or values differ from the float vector of the same text"},
    fix_text=("Decode base64 as little-endian float32 (numpy.frombuffer(b, dtype='<f4')), or ask for "
              "encoding_format='float' through proxies that rewrite bodies."),
    symptoms=(_WRONG_DIMENSION, _WRONG_DIRECTION, _CLIENT_ERROR),
    clues=(_Clue("base64-length", _c.base64_length),),
    experiment="Ask the same texts with encoding_format='float' and with 'base64' decoded as '<f4': they agree.",
    experiment_probe="clients",
)

UNSTABLE_VECTORS = FailureMode(
    id="unstable-vectors",
    title="The same text gets different vectors (repeat, batch or chunked-prefill path)",
    mechanism=(
        "A text's vector should not depend on when or with what it is sent: cosine >= 0.999 for the same text "
        "twice, >= 0.99 alone vs inside a batch (batch-invariance noise is expected below that), and a long "
        "input taking the chunked-prefill path twice must agree. Larger drift points at a numerics or "
        "scheduling bug (prefix cache, chunked prefill) in the serving stack."
    ),
    refs=("vllm#16892",),
    evidence={"vectors": "cosine below the threshold between two vectors of one text"},
    fix_text=("Capture both requests and the server's flags and report them; meanwhile serve with "
              "--no-enable-prefix-caching / --no-enable-chunked-prefill to see which path drifts, or in float32."),
    symptoms=(UNSTABLE,),
    clues=(Clue("same-text-twice", vcs.repeat_clue),),
    experiment="Embed one text twice, alone and in a batch, and a long input twice (the vectors probe's pairs).",
    experiment_probe="vectors",
)

OPENWEBUI_MISCONFIG = FailureMode(
    id="openwebui-misconfig",
    title="Open WebUI's embedding settings do not reach the vLLM server",
    mechanism=(
        "Open WebUI's OpenAI embedding engine POSTs {base}/embeddings with {model, input: [batch of texts]}. "
        "The deployment guide's base http://localhost:8000 (no /v1) gets 404 {'detail': 'Not Found'}; a model "
        "name other than the served id gets 404 'model does not exist'; a server with --api-key and no key in "
        "Open WebUI gets 401."
    ),
    evidence={"clients": "the same request Open WebUI sends answers 404/401"},
    fix_for=_openwebui_fix,
    symptoms=(_CLIENT_ERROR, _REJECTED),
    clues=(_Clue("openwebui-request", _c.openwebui_problem), _Clue("plain-request", _c.plain_request_refused)),
    experiment="Send Open WebUI's request with the settings it is given (RAG_OPENAI_API_BASE_URL, …): the clients set.",
    experiment_probe="clients",
)

VECTOR_MODES = modes_of(globals())

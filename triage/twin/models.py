"""The shape of the popular embedding and reranker models (architecture, pooling, attention, head, dtype), each
with where it was read, and the tiny lab model of the same shape that stands in for it on a twin.

Used when a run has no ``config.json`` / sentence-transformers files of the user's model: the twin needs the
shape, not the weights. When the model id is a local folder with a ``config.json`` (a served path, the lab's own
models), ``shape_from_files`` reads the shape from it. A model neither listed nor on disk gets no twin model:
``shape_of`` says so, and the twin reports it instead of guessing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

HF = "https://huggingface.co/"


@dataclass(frozen=True)
class ModelShape:
    """What a twin copies of a model: never its weights or its size."""

    architecture: str  # config.json "architectures"[0]
    pooling: str  # LAST | MEAN | CLS (sentence-transformers 1_Pooling/config.json, else the architecture's default)
    causal: bool  # attention direction the model was trained with
    head: str  # embed | rerank
    dtype: str  # config.json torch_dtype
    source: str  # where these facts were read
    lab_model: Optional[str]  # the tiny lab model of this shape (triage.lab.models), None when the lab has none

    @property
    def encoder_only(self) -> bool:
        return self.architecture.startswith(("Bert", "XLMRoberta", "Roberta", "NomicBert", "ModernBert"))


def _src(repo: str, files: str = "config.json, 1_Pooling/config.json") -> str:
    return f"{HF}{repo} ({files})"


_QWEN3_EMB = ("Qwen3ForCausalLM", "LAST", True, "embed", "bfloat16")
POPULAR: dict[str, ModelShape] = {
    **{f"Qwen/Qwen3-Embedding-{s}": ModelShape(*_QWEN3_EMB, _src(f"Qwen/Qwen3-Embedding-{s}"), "tiny-qwen3")
       for s in ("0.6B", "4B", "8B")},
    "intfloat/e5-mistral-7b-instruct": ModelShape("MistralModel", "LAST", True, "embed", "float16",
                                                  _src("intfloat/e5-mistral-7b-instruct"), "tiny-qwen3"),
    "Alibaba-NLP/gte-Qwen2-7B-instruct": ModelShape("Qwen2ForCausalLM", "LAST", False, "embed", "float32",
                                                    _src("Alibaba-NLP/gte-Qwen2-7B-instruct",
                                                         "config.json is_causal false, 1_Pooling/config.json"),
                                                    "tiny-qwen2-bidir"),
    "sentence-transformers/all-MiniLM-L6-v2": ModelShape("BertModel", "MEAN", False, "embed", "float32",
                                                         _src("sentence-transformers/all-MiniLM-L6-v2"), "minilm"),
    "BAAI/bge-base-en-v1.5": ModelShape("BertModel", "CLS", False, "embed", "float32",
                                        _src("BAAI/bge-base-en-v1.5"), None),
    "BAAI/bge-m3": ModelShape("XLMRobertaModel", "CLS", False, "embed", "float32", _src("BAAI/bge-m3"), None),
    "nomic-ai/nomic-embed-text-v1.5": ModelShape("NomicBertModel", "MEAN", False, "embed", "float32",
                                                 _src("nomic-ai/nomic-embed-text-v1.5"), None),
    **{f"Qwen/Qwen3-Reranker-{s}": ModelShape("Qwen3ForCausalLM", "LAST", True, "rerank", "bfloat16",
                                              _src(f"Qwen/Qwen3-Reranker-{s}", "config.json, model card"),
                                              "tiny-qwen3-reranker") for s in ("0.6B", "4B", "8B")},
}


def shape_of(model: Optional[str]) -> Optional[ModelShape]:
    """The listed shape of ``model`` (a hub id, or a path ending in one), case-insensitive; None if not listed."""
    if not model:
        return None
    m = model.strip().rstrip("/").lower()
    for name, shape in POPULAR.items():
        n = name.lower()
        if m == n or m.endswith("/" + n) or m.endswith("/" + n.split("/")[1]) or m == n.split("/")[1]:
            return shape
    return None


# the lab model that stands in for an architecture read from files (a decoder's attention direction decides too)
_LAB_FOR = {("Qwen3ForCausalLM", True): "tiny-qwen3", ("Qwen2ForCausalLM", True): "tiny-qwen3",
            ("MistralModel", True): "tiny-qwen3", ("LlamaModel", True): "tiny-qwen3",
            ("Qwen2ForCausalLM", False): "tiny-qwen2-bidir", ("BertModel", False): "minilm"}
_ENCODERS = ("Bert", "XLMRoberta", "Roberta", "NomicBert", "ModernBert")
_MAX_JSON = 1 << 20  # a config.json is a few KB: read no more than this of one


def _json(p: Path) -> dict[str, Any]:
    try:
        with p.open(encoding="utf-8", errors="replace") as f:
            v = json.loads(f.read(_MAX_JSON))
        return v if isinstance(v, dict) else {}
    except (OSError, ValueError, RecursionError):
        return {}


def _st_pooling(folder: Path) -> Optional[str]:
    """The sentence-transformers Pooling module's mode (modules.json names its folder), or None."""
    mods = []
    try:
        raw = json.loads((folder / "modules.json").read_text(encoding="utf-8", errors="replace")[:_MAX_JSON])
        mods = raw if isinstance(raw, list) else []
    except (OSError, ValueError, RecursionError):
        pass
    paths = [str(m.get("path") or "") for m in mods if isinstance(m, dict) and "Pooling" in str(m.get("type"))]
    for sub in paths or ["1_Pooling"]:
        cfg = _json(folder / sub / "config.json")
        for key, mode in (("pooling_mode_lasttoken", "LAST"), ("pooling_mode_cls_token", "CLS"),
                          ("pooling_mode_mean_tokens", "MEAN")):
            if cfg.get(key) is True:
                return mode
    return None


def shape_from_files(model: Optional[str]) -> Optional[ModelShape]:
    """The shape read from a local model folder's ``config.json`` (and its sentence-transformers Pooling config);
    None when ``model`` is not a folder with one. A folder named like a lab model stands for itself."""
    if not model:
        return None
    folder = Path(model)
    try:
        if not (folder / "config.json").is_file():
            return None
    except OSError:
        return None
    from triage.lab.models import MODEL_NAMES, RERANKER_NAMES

    cfg = _json(folder / "config.json")
    archs = cfg.get("architectures")
    arch = str(archs[0]) if isinstance(archs, list) and archs else "?"
    encoder = arch.startswith(_ENCODERS)
    causal = False if encoder else cfg.get("is_causal") is not False
    pooling = _st_pooling(folder) or ("CLS" if encoder else "LAST")
    head = "rerank" if arch.endswith("ForSequenceClassification") or "rerank" in folder.name.lower() else "embed"
    lab = folder.name if folder.name in (*MODEL_NAMES, *RERANKER_NAMES) else _LAB_FOR.get((arch, causal))
    return ModelShape(arch, pooling, causal, head, str(cfg.get("torch_dtype") or cfg.get("dtype") or "?"),
                      f"{folder / 'config.json'} (read from the served model's files)", lab)

"""The shape of the popular embedding and reranker models (architecture, pooling, attention, head, dtype), each
with where it was read, and the tiny lab model of the same shape that stands in for it on a twin.

Used when a run has no ``config.json`` / sentence-transformers files of the user's model: the twin needs the
shape, not the weights. A model not listed here (and without files) gets no twin model: ``shape_of`` says so,
and the twin reports it instead of guessing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

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

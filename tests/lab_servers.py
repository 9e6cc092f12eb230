"""A lab vLLM server for a fixture: a healthy one of the same configuration reused, else started and stopped by PID."""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from triage.lab import LabServer, down, ensure, install, is_installed


def serve(version: str, model: str, profile: str, extra: list[str] | None = None,
          install_missing: bool = True) -> Iterator[LabServer]:
    """Yield the server; skip under VLLM_TRIAGE_NO_REAL_SERVER=1, or when the release is not installed and
    ``install_missing`` is off (otherwise it is installed: a few minutes, once)."""
    if os.environ.get("VLLM_TRIAGE_NO_REAL_SERVER") == "1":
        pytest.skip("VLLM_TRIAGE_NO_REAL_SERVER=1")
    if not is_installed(version):
        if not install_missing:
            pytest.skip(f"vLLM {version} is not installed in the lab")
        install(version, progress=lambda m: print(f"[lab] {m}", flush=True))
    srv, started = ensure(version, model, profile, extra_args=extra)
    try:
        yield srv
    finally:
        if started:
            down(srv.pid)

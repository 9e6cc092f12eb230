"""Shared pytest fixtures: real vLLM servers from the lab (marker ``real_server``).

Each fixture reuses a healthy server of the same configuration if one is already running
(``python -m triage lab up …``), otherwise starts one and stops it by PID at session end,
also when tests fail. Set VLLM_TRIAGE_NO_REAL_SERVER=1 to skip real-server tests.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from triage.lab import LabServer, down, ensure, install, is_installed

collect_ignore_glob: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_server: needs a real vLLM server from the lab (slow)")


def _server(version: str, model: str, profile: str, extra: list[str] | None = None) -> Iterator[LabServer]:
    if os.environ.get("VLLM_TRIAGE_NO_REAL_SERVER") == "1":
        pytest.skip("VLLM_TRIAGE_NO_REAL_SERVER=1")
    if not is_installed(version):
        install(version, progress=lambda m: print(f"[lab] {m}", flush=True))  # a few minutes, once
    srv, started = ensure(version, model, profile, extra_args=extra)
    try:
        yield srv
    finally:
        if started:
            down(srv.pid)


@pytest.fixture(scope="session")
def server_031_livelock() -> Iterator[LabServer]:
    yield from _server("0.31.0", "tiny-qwen3", "livelock")


@pytest.fixture(scope="session")
def server_032_livelock() -> Iterator[LabServer]:
    yield from _server("0.32.0", "tiny-qwen3", "livelock")


@pytest.fixture(scope="session")
def server_031_budget_equals_len() -> Iterator[LabServer]:
    yield from _server("0.31.0", "tiny-qwen3", "budget-equals-len")


@pytest.fixture(scope="session")
def server_032_bert_waiting() -> Iterator[LabServer]:
    yield from _server("0.32.0", "minilm", "bert-waiting")


@pytest.fixture(scope="session")
def server_032_mrl() -> Iterator[LabServer]:
    yield from _server("0.32.0", "tiny-qwen3-mrl", "defaults", ["--max-model-len", "256"])


API_KEY = "test-key-123"


@pytest.fixture(scope="session")
def server_032_apikey() -> Iterator[LabServer]:
    yield from _server("0.32.0", "tiny-qwen3", "livelock", ["--api-key", API_KEY])

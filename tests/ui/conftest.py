"""Page tests: AppTest on each page file with ui.services replaced by a fake at its seam."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ui import services


@pytest.fixture
def use_services() -> Iterator[object]:
    """Install a services object for the test (fake or real-on-a-temp-DB); always restored."""
    installed: list[object] = []

    def install(svc: object) -> object:
        services.set_override(svc)
        installed.append(svc)
        return svc

    try:
        yield install
    finally:
        services.set_override(None)


@pytest.fixture
def temp_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh SQLite file for this test, also as $VLLM_TRIAGE_DB for anything that reads it."""
    db = str(tmp_path / "triage.db")
    monkeypatch.setenv("VLLM_TRIAGE_DB", db)
    return db


os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")

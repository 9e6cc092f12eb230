"""Fixtures for the exporter tests: a store holding runs built from recorded real material."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import export_runs
import pytest

from triage.store import RunRecord, Store

TEST_OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "export"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(str(tmp_path / "triage.db"))


@pytest.fixture
def record(store: Store) -> RunRecord:
    rec = store.get_run(export_runs.build(store))
    assert rec is not None
    return rec


@pytest.fixture
def hostile_record(store: Store) -> RunRecord:
    rec = store.get_run(export_runs.build(store, hostile=True))
    assert rec is not None
    return rec


@pytest.fixture(scope="session")
def test_output() -> Iterator[Path]:
    TEST_OUTPUT.mkdir(parents=True, exist_ok=True)
    yield TEST_OUTPUT

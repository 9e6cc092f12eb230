"""PostgreSQL test mode in child processes (issue 15); test machinery, never on a production path.

In PG mode (VLLM_TRIAGE_TEST_DB set) tests/conftest.py puts this directory first on PYTHONPATH and sets
$VLLM_TRIAGE_TEST_PG_SERVER for the whole session, so every child Python runs this file at start-up:
`python -m triage …`, the Streamlit server of the browser tests, the lab's vLLM servers. Once
``triage.store`` is imported, its ``to_url`` becomes mapping.mapped(...): each SQLite path is its own
database on that server, the same one the pytest process maps it to. ``ui.services`` imports ``to_url``
by name after ``triage.store`` has run, so it gets the mapped one too. Without the variable, or in a
process that never imports ``triage.store``, this only loads mapping.py (standard library). A
sitecustomize further on sys.path (e.g. a distribution's) still runs.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _MapStore(importlib.abc.MetaPathFinder):
    """Finds ``triage.store`` as usual and patches its ``to_url`` right after the module has run; then leaves."""

    def __init__(self, mapping: ModuleType, server_url: str) -> None:
        self.mapping, self.server_url = mapping, server_url

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "triage.store":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, mapping, server_url = spec.loader.exec_module, self.mapping, self.server_url

        def exec_module(module: ModuleType) -> None:
            run(module)
            module.to_url = mapping.mapped(module.to_url, server_url)  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _chain() -> None:
    """Run the next sitecustomize on sys.path, the one this file hides."""
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_mapping = _load("_triage_test_pgmode_mapping", os.path.join(_HERE, "mapping.py"))  # standard library only
if os.environ.get(_mapping.SERVER_ENV):
    sys.meta_path.insert(0, _MapStore(_mapping, os.environ[_mapping.SERVER_ENV]))
_chain()

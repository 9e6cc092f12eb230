"""The session fails when the engine builds a finding whose check id ``triage.catalogue.check_ids`` does not declare.

Every ``Finding`` built while the tests run is looked at where the engine (``triage``, ``checks``) built it:
an undeclared id, a failure mode its declaration does not list, or an id of several modes built without one
is remembered, and ``pytest_sessionfinish`` turns the session red with the list. Findings the tests build
themselves (invented ids) and those read back from a store or a document are not the engine's verdicts.
"""
from __future__ import annotations

import sys

import pytest

from triage.catalogue.check_ids import CHECKS
from triage.findings import Finding

UNDECLARED: dict[str, str] = {}  # what was wrong -> the module that built it
_THROUGH = frozenset({"triage.findings", "dataclasses"})  # Finding's own __init__, dataclasses.replace
_READ_BACK = frozenset({"triage.store.queries", "triage.export.json_"})  # rows and documents read back, not verdicts
_declared_post_init = Finding.__post_init__


def _builder() -> str:
    """The module that built the finding; '' for one read back (``from_dict``, the store, an imported document)."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__") in _THROUGH:
        if f.f_code.co_name == "from_dict":
            return ""
        f = f.f_back
    where = str(f.f_globals.get("__name__", "")) if f is not None else ""
    return "" if where in _READ_BACK else where


def _watched(self: Finding) -> None:
    _declared_post_init(self)
    where = _builder()
    if not where.startswith(("triage.", "checks.")):
        return
    d = CHECKS.get(self.check)
    if d is None:
        UNDECLARED.setdefault(f"{self.check}: not declared", where)
    elif d.modes and self.failure_mode not in d.modes:
        UNDECLARED.setdefault(f"{self.check}: built with mode {self.failure_mode!r}, declared {d.modes}", where)


Finding.__post_init__ = _watched  # type: ignore[method-assign]


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent without it (-p no:xdist)
def pytest_testnodedown(node: object, error: object) -> None:
    """xdist: a worker's findings reach the controller (``workeroutput``), whose session end judges them all."""
    UNDECLARED.update(getattr(node, "workeroutput", {}).get("undeclared_checks", {}))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    out = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker: the controller says it (pytest_testnodedown)
        out["undeclared_checks"] = dict(UNDECLARED)
        return
    if UNDECLARED:
        lines = "\n".join(f"  {what} (built in {where})" for what, where in sorted(UNDECLARED.items()))
        sys.stderr.write(f"\ncheck ids built but not declared in triage/catalogue/check_ids.py:\n{lines}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

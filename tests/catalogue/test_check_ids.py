"""Every check id is declared once (triage/catalogue/check_ids.py) and everything about it derives from there."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.logs.real_logs import LIVELOCK_031
from tests.probes.recorded import outcome_from_record, probe_record
from triage.catalogue import MODES, ENGINE_STALL, POOLING_LIVELOCK, STUCK_WAITING, mode_for_check, word_stall
from triage.catalogue.check_ids import CHECKS, STALL_MODES
from triage.catalogue.stalls import STALL_CHECKS, stall_name
from triage.findings import Finding, Status
from triage.logs import analyze_log
from triage.probes.seed import seed_findings
from triage.steps import CHECK_STEPS, STEPS, step_of

ROOT = Path(__file__).resolve().parents[2]
BUILDERS = {"Finding", "_finding", "_mode_finding", "unknown", "_simple", "_f"}


def _literal_ids() -> dict[str, str]:
    """Check ids written as literals where findings are built: a builder's first argument or ``check=``, and the
    ``CHECK*`` / ``*_CHECK`` constants (the runtime hook in tests/declared_checks.py catches the computed ones)."""
    found: dict[str, str] = {}
    for path in [*ROOT.joinpath("triage").rglob("*.py"), *ROOT.joinpath("checks").rglob("*.py")]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            args: list[ast.expr] = []
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in BUILDERS:
                    args = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "check")]
            elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and (t.id.startswith("CHECK") or t.id.endswith("_CHECK"))
                    for t in node.targets):
                args = [node.value]
            for a in args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    found.setdefault(a.value, str(path.relative_to(ROOT)))
    return found


def test_every_literal_check_id_is_declared() -> None:
    ids = _literal_ids()
    assert len(ids) > 60
    assert {i: p for i, p in ids.items() if i not in CHECKS} == {}


def test_declarations_name_real_records_and_steps() -> None:
    steps = {s.id for s in STEPS}
    for d in CHECKS.values():
        assert set(d.modes) - {""} <= set(MODES), d
        assert d.step is None or d.step in steps, d
        assert d.sources and set(d.sources) <= {"checklist", "probe", "watch", "log", "fleet"}, d


def test_the_step_table_and_the_finding_lists_derive_from_the_registry() -> None:
    assert CHECK_STEPS == {i: d.step for i, d in CHECKS.items() if d.step}
    assert step_of("gpu-memory-shared") == "gpu-memory" and step_of("log-oom") == "flags"
    for mode in MODES.values():
        for check in mode.findings:
            assert CHECKS[check].modes[0] == mode.id and mode_for_check(check) is mode
    assert {c for m in MODES.values() for c in m.findings} == {i for i, d in CHECKS.items() if d.modes and d.modes[0]}


def test_every_fleet_id_belongs_to_a_record() -> None:
    fleet = [d for d in CHECKS.values() if "fleet" in d.sources]
    assert len(fleet) >= 7 and all(d.modes and d.modes[0] for d in fleet)


@pytest.mark.parametrize("check", ["fleet-replica-stalled", "fleet-episodes-recurring", "watch-engine-stalled",
                                   "log-livelock-suspect", "probe-livelock"])
def test_every_stall_id_belongs_to_a_record(check: str) -> None:
    assert mode_for_check(check) is not None


def test_a_finding_carries_its_mode_and_keeps_it_through_a_dict() -> None:
    f = Finding("log-oom", Status.FAIL, "oom")
    assert f.failure_mode == "oom" and Finding.from_dict(f.to_dict()) == f
    stall = Finding("watch-engine-stalled", Status.FAIL, "x", failure_mode=ENGINE_STALL.id)
    assert Finding.from_dict(stall.to_dict()).failure_mode == ENGINE_STALL.id
    assert Finding("watch-engine-stalled", Status.FAIL, "x").failure_mode == ""  # several modes: its builder names one
    old = {k: v for k, v in stall.to_dict().items() if k != "failure_mode"}  # a document from before the field
    assert Finding.from_dict({**old, "evidence": {"mode": ENGINE_STALL.id}}).failure_mode == ENGINE_STALL.id
    assert Finding.from_dict(old).failure_mode == POOLING_LIVELOCK.id  # the first record its id is declared with


@pytest.mark.parametrize(("kind", "version", "mode"), [
    pytest.param("livelock", "0.31.0", POOLING_LIVELOCK, id="affected"),
    pytest.param("livelock", "0.32.0", ENGINE_STALL, id="fixed"),
    pytest.param("livelock", None, POOLING_LIVELOCK, id="unknown-version"),
    pytest.param("stuck-waiting", "0.31.0", STUCK_WAITING, id="stuck"),
])
def test_every_source_words_a_stall_the_same(kind: str, version: str | None, mode: object) -> None:
    words = {s: word_stall(s, kind, version, subject="X") for s in STALL_CHECKS}
    assert {w.mode.id for w in words.values()} == {mode.id}  # type: ignore[attr-defined]
    assert len({(w.title, w.fix, w.refs, w.explanation) for w in words.values()}) == 1
    assert all(w.mode.id in CHECKS[w.check].modes for w in words.values())
    assert all(set(CHECKS[w.check].modes) <= set(STALL_MODES) for w in words.values())


def test_recorded_stalls_use_the_catalogue_words() -> None:
    probe = outcome_from_record(probe_record("livelock-031-short-long-t256"))
    probe.extra["truncate_prompt_tokens"] = 256
    [p] = [f for f in seed_findings([probe], 256, "0.31.0") if f.check == "probe-livelock"]
    [lg] = [f for f in analyze_log(LIVELOCK_031, year=2026).findings if f.check == "log-livelock-suspect"]
    for f in (p, lg):
        assert f.failure_mode == POOLING_LIVELOCK.id and stall_name(POOLING_LIVELOCK, "0.31.0") in f.title
        assert f.refs == list(POOLING_LIVELOCK.refs)

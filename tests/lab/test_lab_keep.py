"""A keeping session ($VLLM_TRIAGE_LAB_KEEP): ``release`` leaves a server it kept running, stops one it did not;
the test session's pool stops the least recently used kept server past its cap. Real processes (``sleep`` in its
own session, as ``lab up`` starts vLLM) stand for the servers: what is tested is the PID bookkeeping, which a vLLM
start (~30 s) would only slow down."""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import lab_servers
from triage.lab.paths import LAB_DIR_ENV
from triage.lab.server import KEEP_ENV, LabServer, _pid_alive, _save, kept_by, release, status


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[subprocess.Popen[bytes]]]:
    monkeypatch.setenv(LAB_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(KEEP_ENV, "session-a")
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        p.kill()
        p.wait()


def _server(procs: list[subprocess.Popen[bytes]], name: str, kept: str, started_at: float = 0.0) -> LabServer:
    p = subprocess.Popen(["sleep", "300"], start_new_session=True)
    procs.append(p)
    srv = LabServer(name=name, pid=p.pid, port=1, version="0.32.0", model="tiny-qwen3", profile="defaults",
                    model_path="/m", log_path="/dev/null", started_at=started_at or time.time(), kept=kept)
    _save(srv)
    return srv


def _gone(srv: LabServer, procs: list[subprocess.Popen[bytes]]) -> bool:
    p = next(p for p in procs if p.pid == srv.pid)
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        return False
    return not _pid_alive(srv.pid)


def test_release_stops_what_no_session_keeps_and_leaves_what_one_keeps(lab: list) -> None:  # type: ignore[type-arg]
    own, kept = _server(lab, "own", ""), _server(lab, "kept", "session-a")
    release(own)
    release(kept)
    assert _gone(own, lab)
    assert _pid_alive(kept.pid) and [s.name for s in kept_by("session-a")] == ["kept"]
    assert kept_by("session-b") == [] and kept_by("") == []
    assert lab_servers.left_running(set()) == set()  # a kept server is not "left running"


def test_the_pool_stops_the_least_recently_used_idle_server_past_its_cap(lab: list) -> None:  # type: ignore[type-arg]
    now = time.time()
    old, held, new = (_server(lab, n, "session-a", now - age) for n, age in (("old", 30), ("held", 60), ("new", 1)))
    other = _server(lab, "other-session", "session-b", now - 90)
    lab_servers._in_use[held.pid] += 1  # a fixture holds the oldest one: never stopped under it
    try:
        lab_servers.evict(cap=2)
    finally:
        lab_servers._in_use[held.pid] -= 1
    assert _gone(old, lab)
    assert {s.name for s in status()} == {"held", "new", "other-session"}
    lab_servers.stop_kept()
    assert {s.name for s in status()} == {"other-session"} and _pid_alive(other.pid)


def test_the_pool_stops_pinned_configurations_last(lab: list) -> None:  # type: ignore[type-arg]
    """The two livelock servers most modules use stay while a module tries other configurations."""
    now = time.time()
    pin = _server(lab, "pin", "session-a", now - 90)
    object.__setattr__(pin, "profile", "livelock")
    _save(pin)  # the oldest, but a pinned configuration
    a, b = (_server(lab, n, "session-a", now - age) for n, age in (("a", 30), ("b", 1)))
    lab_servers.evict(cap=2)
    assert _gone(a, lab)
    assert {s.name for s in status()} == {"pin", "b"}
    lab_servers.evict(cap=1)  # still over the cap with only the pin and one other: the other goes
    assert _gone(b, lab) and {s.name for s in status()} == {"pin"}
    lab_servers.stop_kept()

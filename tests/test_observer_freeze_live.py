"""Issue 33 (deliver 6), real: the watcher frozen (SIGSTOP, FREEZE_S) during healthy queue-bound load on a real lab
server (0.32.0, tiny Qwen3 on the CPU backend) gives no stall and no stuck-waiting verdict; it says it could not
judge the hole and counts it (summary.observer_gaps). Run under the heavy-test lock (tests/README)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.real_server
ROOT = Path(__file__).resolve().parents[1]
# The clocks (issue 44: CI time): the freeze is 6x the stall window (triage.stall.DEFAULT_STALL_S, 2 s) and far past
# the observer-gap rule's lateness (sample.observer_gap: > interval + 2 s), so a watcher that took the hole for the
# engine's would raise a stall; the watch lasts WATCH_S from its first sample, the freeze falling inside it.
FREEZE_S = 12.0
WATCH_S = 45


def _load(url: str, model: str, stop: threading.Event, statuses: list[int]) -> None:
    with httpx.Client(timeout=60) as c:
        while not stop.is_set():
            texts = [f"{uuid.uuid4().hex} the harbor was quiet before the storm" for _ in range(4)]
            try:
                statuses.append(c.post(url + "/v1/embeddings", json={"model": model, "input": texts}).status_code)
            except httpx.HTTPError:
                statuses.append(0)


def _sampling(db: Path, watch: subprocess.Popen, limit_s: float = 120.0) -> None:  # type: ignore[type-arg]
    """Wait until the watcher has stored its first sample (the freeze must fall inside its watch)."""
    import sqlite3

    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s and watch.poll() is None:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
                if c.execute("SELECT count(*) FROM metricsample").fetchone()[0] > 0:
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.5)
    raise AssertionError(f"the watcher stored no sample within {limit_s:.0f} s")


@pytest.mark.quiet  # healthy load must be seen as load: never beside a server hung on the other lane (conftest)
@pytest.mark.timeout(600)
def test_a_frozen_watcher_sees_no_stall_under_healthy_load(server_032_livelock, tmp_path: Path) -> None:  # noqa: ANN001
    srv = server_032_livelock
    stop, statuses = threading.Event(), []  # type: ignore[var-annotated]
    workers = [threading.Thread(target=_load, args=(srv.url, srv.served_model, stop, statuses), daemon=True)
               for _ in range(12)]  # more than the engine runs at once: a queue forms (waiting >= 1 at times)
    for w in workers:
        w.start()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))}
    watch = subprocess.Popen([sys.executable, "-m", "triage", "watch", "--url", srv.url, "--interval", "0.5",
                              "--duration", str(WATCH_S), "--format", "json", "--db", str(tmp_path / "w.db")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT), env=env)
    try:
        _sampling(tmp_path / "w.db", watch)  # on a loaded box the watcher's own start-up can take 20 s and more
        time.sleep(5)
        os.kill(watch.pid, signal.SIGSTOP)  # the observer starved: no sample for FREEZE_S
        time.sleep(FREEZE_S)
        os.kill(watch.pid, signal.SIGCONT)
        out, err = watch.communicate(timeout=WATCH_S + 180)
    finally:
        if watch.poll() is None:
            os.kill(watch.pid, signal.SIGCONT)
            watch.kill()
        stop.set()
        for w in workers:
            w.join(timeout=70)
    (tmp_path / "watch.json").write_bytes(out)
    if os.environ.get("VLLM_TRIAGE_KEEP"):  # where a failing run's watch document is kept for reading
        Path(os.environ["VLLM_TRIAGE_KEEP"]).write_bytes(out)
    doc = json.loads(out)
    said = [e["message"] for e in doc["events"]]
    assert watch.returncode == 0, (watch.returncode, said, err.decode()[-2000:])
    assert statuses and statuses.count(200) > 0.95 * len(statuses), statuses[-20:]  # the load was healthy
    summary = doc["summary"]
    assert summary["alerts"] == [], summary["alerts"]  # no stall, no stuck-waiting verdict
    assert not any(e["event"] == "stalled" for e in doc["events"]), doc["events"]
    gaps = summary["observer_gaps"]
    assert gaps["count"] >= 1 and gaps["longest_s"] >= FREEZE_S - 5, gaps  # the hole was seen as the observer's
    busy = summary["engines"]["0"]
    # the server was under load while it was watched: a request seen running, or prompt tokens flowing (on a quiet,
    # fast box the tiny model's steps end between samples, so the running gauge can read 0 at every sample)
    assert (busy.get("max_running") or 0) >= 1 or (busy.get("max_prompt_tokens_per_s") or 0) > 0, busy

"""A real nginx (Debian package, tests/lab_nginx.py) with ``proxy_read_timeout 5s`` in front of the real vLLM 0.31.0
livelock server (issue 33, Deliver 6 / done-when): the seed matrix run through the proxy.

- With a stall window longer than the proxy's time-out, nginx's 504 arrives first: the case is ``proxy-error`` (named
  as nginx's), the matrix calls it unknown and never says the workaround does NOT pass because of it, and the
  workaround's own cases (judged on the server's answers) still pass. The proxy closing its upstream connection is
  the abort: the server answers a fresh request afterwards.
- With the default stall window the probe reads /metrics through the same proxy while the request is held and names
  the livelock before the proxy's 504 (the facts file: "unless they read /metrics").
"""
from __future__ import annotations

import shutil

import httpx
import pytest

import lab_nginx as nginx  # tests/lab_nginx.py (test-only)
from triage.lab import LabServer
from triage.probes import run_probes
from triage.stall import LIVELOCK
from triage.target import Target

pytestmark = [pytest.mark.real_server,
              pytest.mark.skipif(not (shutil.which("nginx") or __import__("os").path.exists("/usr/sbin/nginx")),
                                 reason="nginx missing (apt-get install nginx)")]
HANG, WORKAROUND = "seed-short-long-t256", ("seed-short-t255", "seed-short-long-t255")


@pytest.fixture
def proxy(server_031_livelock: LabServer):  # type: ignore[no-untyped-def]
    n = nginx.up(server_031_livelock.url, read_timeout_s=5)
    try:
        yield n
    finally:
        nginx.down(n.pid)


def test_a_case_the_proxy_cut_is_unknown_and_decides_nothing(proxy, server_031_livelock: LabServer) -> None:  # type: ignore[no-untyped-def]
    srv = server_031_livelock
    res = run_probes(Target(url=proxy.url, model=srv.served_model), "seed", allow_hang=True, stall_s=20.0,
                     deadline_s=30.0, only=[HANG, *WORKAROUND])
    got = {o.probe: o for o in res.outcomes}
    assert got[HANG].outcome == "proxy-error" and got[HANG].http_status == 504, (got[HANG].outcome, got[HANG].extra)
    assert all(got[w].outcome == "ok" for w in WORKAROUND), {w: got[w].outcome for w in WORKAROUND}
    matrix = next(f for f in res.findings if f.check == "probe-matrix")
    assert HANG in matrix.title and "unknown" in matrix.title and "nginx" in matrix.title, matrix.title
    assert "does NOT pass" not in matrix.title and "- 1 passes" in matrix.title, matrix.title
    assert matrix.status.value == "unknown", matrix.status
    # the proxy's closed upstream connection aborted the held request: the engine serves again
    r = httpx.post(f"{srv.url}/v1/embeddings", json={"model": srv.served_model, "input": "after"}, timeout=30)
    assert r.status_code == 200


def test_the_stall_seen_through_the_proxy_before_its_504(proxy, server_031_livelock: LabServer) -> None:  # type: ignore[no-untyped-def]
    srv = server_031_livelock
    res = run_probes(Target(url=proxy.url, model=srv.served_model), "seed", allow_hang=True, only=[HANG])
    assert res.outcomes[0].outcome == LIVELOCK, (res.outcomes[0].outcome, res.outcomes[0].extra)
    assert res.outcomes[0].recovery and res.outcomes[0].recovery["recovered"]

"""triage.http.transport: the client's rules under HTTP stacks it does not drive (client libraries, Open WebUI's
requests, Prometheus): the byte cap (a stated Content-Length refused before any body byte; a chunked body counted
as it comes), one total deadline shared by a library's retries, redirects not followed. The server is
tests/hardening/hostile.py on loopback."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))
from hostile import Behaviour, HostileServer  # noqa: E402

from triage.http.transport import CappedTransport, capped_client, service_client  # noqa: E402


@pytest.mark.timeout(30)
def test_a_stated_length_over_the_cap_is_refused_before_the_body() -> None:
    with HostileServer(Behaviour(huge={"/v1/embeddings": 64 << 20})) as s, \
            capped_client(10, max_body_bytes=1 << 20) as c:
        with pytest.raises(httpx.ReadError, match="over the 1048576 bytes cap"):
            c.post(f"{s.url}/v1/embeddings", json={"input": "x"})


@pytest.mark.timeout(30)
def test_an_endless_chunked_body_is_cut_at_the_cap() -> None:
    with HostileServer(Behaviour(endless_metrics=True)) as s, capped_client(20, max_body_bytes=1 << 20) as c:
        with pytest.raises(httpx.ReadError, match="byte cap"):
            c.get(f"{s.url}/metrics")


@pytest.mark.timeout(30)
def test_the_deadline_is_total_and_a_retry_past_it_is_not_sent() -> None:
    with HostileServer(Behaviour(slow=("/v1/models",))) as s:
        with capped_client(1.5) as c:
            t0 = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                c.get(f"{s.url}/v1/models")
            assert time.monotonic() - t0 < 8  # the trickle alone runs far longer
        seen = len(s.b.seen)
        with capped_client(10, until=time.monotonic() - 1) as c, pytest.raises(httpx.ReadTimeout):
            c.get(f"{s.url}/version")
        assert len(s.b.seen) == seen  # past the call's deadline: not sent at all


@pytest.mark.timeout(30)
def test_a_library_request_is_recorded_and_answered_within_the_caps() -> None:
    sent: list[str] = []
    hooks = {"request": [lambda req: sent.append(str(req.url))]}
    with HostileServer(Behaviour()) as s, capped_client(10, until=time.monotonic() + 10, event_hooks=hooks) as c:
        r = c.post(f"{s.url}/v1/embeddings", json={"input": "x"})
        assert r.status_code == 200 and r.json()["data"][0]["embedding"][:1] == [0.1]
    assert sent == [f"{s.url}/v1/embeddings"]
    assert isinstance(c._transport, CappedTransport) and not c.follow_redirects


def test_service_client_carries_its_own_headers_and_follows_no_redirect() -> None:
    with service_client({"Authorization": "Basic abc"}) as c:
        assert c.headers["authorization"] == "Basic abc" and not c.follow_redirects
        assert c.timeout.read == 5.0  # httpx's default: each call gives its own (limits.get_within)
    with service_client(None, 7.0) as c:
        assert c.timeout.read == 7.0 and "authorization" not in c.headers

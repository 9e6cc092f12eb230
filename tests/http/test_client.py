"""triage.http.client: the one client for a vLLM server, sync (VllmClient) and async (ProbeClient): a total deadline
per call, the byte cap while streaming, redirects reported and never followed (the key sent once), the exact secrets
registered, ``status_of``. The server is tests/hardening/hostile.py, a loopback test double (no real vLLM trickles
bytes or sends a redirect to steal a key), or a replayed answer (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))
from hostile import Behaviour, HostileServer  # noqa: E402

from triage.http import ProbeClient, ProbeSetupError, VllmClient, auth_headers, status_of  # noqa: E402
from triage.http.client import base_url_problem, origin_of, path_prefix_of  # noqa: E402
from triage.redact import REDACTED, redact_obj, redact_text  # noqa: E402


@pytest.mark.timeout(30)
def test_sync_deadline_is_total_not_per_read() -> None:
    with HostileServer(Behaviour(slow=("/metrics",))) as s, VllmClient(s.url, timeout_s=2) as c:
        t0 = time.monotonic()
        r = c.get("/metrics")
        assert time.monotonic() - t0 < 10  # deadline 2 s; the trickle alone would run far longer
        assert r.error_kind == "timeout" and "total deadline" in (r.error or "")


@pytest.mark.timeout(30)
def test_async_deadline_is_total_not_per_read() -> None:
    async def go(url: str) -> tuple[float, object]:
        async with ProbeClient(url, timeout_s=2) as pc:
            t0 = time.monotonic()
            ex = await pc.call("GET", "/metrics")
            return time.monotonic() - t0, ex

    with HostileServer(Behaviour(slow=("/metrics",))) as s:
        took, ex = asyncio.run(go(s.url))
    assert took < 10 and ex.status is None and ex.error_kind == "timeout"  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_bodies_are_capped_while_streaming() -> None:
    with HostileServer(Behaviour(endless_metrics=True)) as s:
        with VllmClient(s.url, timeout_s=20, max_body_bytes=1 << 20) as c:
            r = c.get("/metrics")
        assert r.error_kind == "too-large"

        async def go() -> object:
            async with ProbeClient(s.url, timeout_s=20, max_body_bytes=1 << 20) as pc:
                return await pc.scrape(timeout_s=20)

        assert asyncio.run(go()) is None


class _Redirect(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:
        _Redirect.seen.append(self.headers.get("Authorization") or "")
        self.send_response(302)
        self.send_header("Location", "http://127.0.0.1:1/steal")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a: object) -> None:
        pass


@pytest.mark.timeout(30)
def test_redirects_are_reported_not_followed_and_the_key_sent_once() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with VllmClient(f"http://127.0.0.1:{httpd.server_address[1]}", api_key="k-redirect-1234") as c:
            r = c.get("/v1/models")
        assert r.status == 302 and r.location == "http://127.0.0.1:1/steal"
        assert _Redirect.seen == ["Bearer k-redirect-1234"]
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert auth_headers("x")["Authorization"] == "Bearer x" and "Authorization" not in auth_headers(None)


def test_the_client_registers_its_exact_secrets() -> None:
    VllmClient("http://u:p4ssw0rd-xyz@127.0.0.1:1", api_key="plain-key-without-shape").close()
    text = 'model "plain-key-without-shape" at http://u:p4ssw0rd-xyz@h and %22plain-key-without-shape'
    out = redact_text(text)
    assert "plain-key-without-shape" not in out and "p4ssw0rd-xyz" not in out
    assert redact_obj({"plain-key-without-shape": 1}) == {REDACTED: 1}


def test_status_of_is_the_status_or_none() -> None:
    with HostileServer(Behaviour(status={"/health": 503})) as s:
        assert status_of(f"{s.url}/health", 5.0) == 503
        assert status_of(f"{s.url}/v1/models", 5.0) == 200
    assert status_of("http://127.0.0.1:1/health", 1.0) is None  # nothing listens on port 1


def test_a_replayed_server_answers_through_the_clients_rules() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"path": req.url.path, "key": req.headers.get("authorization")})

    with VllmClient("http://h:8000/", api_key="k-replay-1", transport=httpx.MockTransport(handler)) as c:
        r = c.post("/v1/embeddings", {"input": "x"})
        assert r.ok and r.json() == {"path": "/v1/embeddings", "key": "Bearer k-replay-1"}
        assert c.with_base("http://h:8000/prefix").get("/v1/models").json()["path"] == "/prefix/v1/models"


def test_base_url_helpers() -> None:
    assert origin_of("https://h:8443/a/b?x=1") == "https://h:8443"
    assert path_prefix_of("http://h/proxy/vllm/") == "/proxy/vllm"
    assert base_url_problem("http://h:8000") is None
    assert "query string" in (base_url_problem("http://h:8000/?x=1") or "")
    assert "fragment" in (base_url_problem("http://h:8000/#top") or "")


def test_probe_client_setup_failures_are_one_error() -> None:
    async def go(url: str) -> None:
        async with ProbeClient(url, timeout_s=2) as pc:
            with pytest.raises(ProbeSetupError, match="/tokenize failed"):
                await pc.token_count("m", "hello")

    with HostileServer(Behaviour(bodies={"/tokenize": {"count": -1}})) as s:
        asyncio.run(go(s.url))
    with pytest.raises(RuntimeError, match="async context manager"):
        _ = ProbeClient("http://127.0.0.1:1").client

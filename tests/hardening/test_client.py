"""The one HTTP client (triage.client) and the one redaction point (triage.redact), unit by unit.

The server is tests/hardening/hostile.py, a loopback test double (no real vLLM trickles bytes or
sends a redirect to steal a key)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import Behaviour, HostileServer  # noqa: E402

from triage import redact  # noqa: E402
from triage.http import ProbeClient, VllmClient, auth_headers, describe_failure, server_message  # noqa: E402
from triage.redact import REDACTED, SafeStream, dumps_json, redact_obj, redact_text  # noqa: E402


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
        assert r.status_code == 302 and r.location == "http://127.0.0.1:1/steal"
        assert _Redirect.seen == ["Bearer k-redirect-1234"]
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert auth_headers("x")["Authorization"] == "Bearer x" and "Authorization" not in auth_headers(None)


def test_failure_wording_is_written_once() -> None:
    assert "HTTP 401" in describe_failure("GET", "/v1/models", 401, None, {"error": "nope"})
    assert "--api-key-env" in describe_failure("GET", "/v1/models", 401, None, None)
    assert server_message({"detail": [{"loc": ["body"], "msg": "field required"}]}) == "field required"
    assert server_message({"error": {"message": "too long"}}) == "too long"
    assert describe_failure("GET", "/x", None, "ConnectError: refused") == "GET /x: ConnectError: refused"


def test_the_client_registers_its_exact_secrets() -> None:
    VllmClient("http://u:p4ssw0rd-xyz@127.0.0.1:1", api_key="plain-key-without-shape").close()
    text = 'model "plain-key-without-shape" at http://u:p4ssw0rd-xyz@h and %22plain-key-without-shape'
    out = redact_text(text)
    assert "plain-key-without-shape" not in out and "p4ssw0rd-xyz" not in out
    assert redact_obj({"plain-key-without-shape": 1}) == {REDACTED: 1}


@pytest.mark.parametrize("line", [
    'vllm serve m --api-key "two words"',
    "vllm serve m --api-key='quoted-val'",
    "vllm serve m --api-key=bare-val",
    "vllm serve m \\\n  --api-key \\\n  continued-val",
    "vllm serve m --api-key escaped\\ space",
    "curl -H 'Authorization: Bearer tok-abc-123' http://x",
    "error: invalid token Bearer tok-abc-123",
    'docker run -e VLLM_API_KEY="two words" img',
])
def test_pasted_command_lines_lose_their_keys(line: str) -> None:
    out = redact_text(line)
    for secret in ("two words", "words", "quoted-val", "bare-val", "continued-val", "escaped", "space",
                   "tok-abc-123"):
        assert secret not in out, out


def test_escapes_neutralised_and_json_stays_json() -> None:
    assert "\x1b" not in redact_text("id\x1b[2J\x1b]0;t\x07") and "\x07" not in redact_text("a\x07")
    assert redact_text("keep\ttabs\nand lines") == "keep\ttabs\nand lines"
    assert dumps_json({"a": float("inf"), "b": [float("nan")]}) == '{"a": null, "b": [null]}'


def test_safe_stream_catches_a_secret_split_over_writes() -> None:
    redact.add_secret("split-secret-42")

    class Sink:
        def __init__(self) -> None:
            self.text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    sink = Sink()
    s = SafeStream(sink)
    s.write("a split-sec")
    s.write("ret-42 b\n")
    s.flush()
    assert sink.text == f"a {REDACTED} b\n"


@pytest.mark.timeout(10)
def test_the_command_deadline_interrupts_a_blocked_main_thread() -> None:
    from triage.cli import DeadlineExceeded, command_deadline

    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within 0.5 s"), command_deadline(0.5, "check"):
        time.sleep(5)
    assert time.monotonic() - t0 < 2


def test_the_no_key_placeholder_survives_redaction_issue_32() -> None:
    """A snippet's api_key="EMPTY" (vLLM's documented no-key placeholder) stays runnable; real keys do not."""
    from triage.redact import redact_text

    line = 'OpenAI(base_url="http://h/v1", api_key="EMPTY")'
    assert redact_text(line) == line
    assert "EMPTYsecret" not in redact_text('api_key="EMPTYsecret"')
    assert "sk-live-1234" not in redact_text('api_key="sk-live-1234"')

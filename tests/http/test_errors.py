"""triage.http.errors: the error kinds, the client's own cuts and the wording of every failure (written once)."""
from __future__ import annotations

import ssl

import httpx
import pytest

from triage.http.errors import BodyTooLarge, Deadline, TooMany, cut_kind, cut_text, describe_failure
from triage.http.errors import proxy_of, server_message, transport_text


def test_failure_wording_is_written_once() -> None:
    assert "HTTP 401" in describe_failure("GET", "/v1/models", 401, None, {"error": "nope"})
    assert "--api-key-env" in describe_failure("GET", "/v1/models", 401, None, None)
    assert server_message({"detail": [{"loc": ["body"], "msg": "field required"}]}) == "field required"
    assert server_message({"error": {"message": "too long"}}) == "too long"
    assert describe_failure("GET", "/x", None, "ConnectError: refused") == "GET /x: ConnectError: refused"


@pytest.mark.parametrize("body, said", [
    pytest.param({"error": "plain"}, "plain", id="error-str"),
    pytest.param({"message": "m"}, "m", id="message"),
    pytest.param({"detail": "d"}, "d", id="detail-str"),
    pytest.param({"other": 1}, '{"other": 1}', id="other-dict"),
    pytest.param(None, "", id="none"),
    pytest.param("x" * 900, "x" * 500, id="long-text-cut"),
])
def test_server_message_finds_vllms_text_wherever_it_is(body: object, said: str) -> None:
    assert server_message(body) == said


def test_transport_text_fills_the_url_and_falls_back_to_protocol() -> None:
    head, fix = transport_text("refused", "http://h:1")
    assert "http://h:1" in head and "port" in fix
    assert transport_text(None, "u") == transport_text("protocol", "u")
    assert transport_text("no-such-kind", "u") == transport_text("protocol", "u")


@pytest.mark.parametrize("e, kind", [
    pytest.param(BodyTooLarge(10), "too-large", id="byte-cap"),
    pytest.param(TooMany("3 items"), "too-large", id="parsed-size-cap"),
    pytest.param(Deadline(2.0), "timeout", id="deadline"),
    pytest.param(httpx.ReadTimeout("slow"), "timeout", id="httpx-timeout"),
    pytest.param(TimeoutError(), "timeout", id="timeout-error"),
    pytest.param(ssl.SSLError("bad"), "tls", id="ssl"),
    pytest.param(httpx.ConnectError("[Errno -2] Name or service not known"), "dns", id="dns"),
    pytest.param(httpx.ConnectError("[Errno 111] Connection refused"), "refused", id="refused"),
    pytest.param(httpx.UnsupportedProtocol("ftp"), "invalid-url", id="invalid-url"),
    pytest.param(httpx.RemoteProtocolError("garbage"), "protocol", id="protocol"),
])
def test_every_failure_has_one_kind(e: BaseException, kind: str) -> None:
    assert cut_kind(e) == kind


def test_cut_text_names_the_cut() -> None:
    assert cut_text(Deadline(2.0)) == "ReadTimeout: no complete answer within 2 s (total deadline)"
    assert cut_text(Deadline()).startswith("ReadTimeout: no complete answer before the deadline")
    assert cut_text(TooMany("9 ids")) == "parsed-size cap: 9 ids"
    assert cut_text(BodyTooLarge(5)) == "BodyTooLarge: body over 5 bytes: not read further"
    assert len(cut_text(ValueError("x" * 2000))) == 500


@pytest.mark.parametrize("status, server, via, body, who", [
    pytest.param(504, "nginx/1.24.0", None, "", "nginx/1.24.0's 504 Gateway Timeout", id="nginx-504"),
    pytest.param(502, "", None, "", "a proxy's 502 Bad Gateway", id="unnamed-502"),
    pytest.param(503, "uvicorn", None, {"error": "busy"}, None, id="vllm-503"),
    pytest.param(503, "", None, {"error": "busy"}, None, id="bare-503"),
    pytest.param(503, "", "1.1 squid", "", "a proxy (Via: 1.1 squid)'s 503 Service Unavailable", id="via-503"),
    pytest.param(503, "", None, "<html>down</html>", "a proxy's 503 Service Unavailable", id="html-503"),
    pytest.param(200, "nginx", None, "", None, id="ok"),
])
def test_proxy_of_names_who_answered(status: int, server: str, via: str | None, body: object,
                                     who: str | None) -> None:
    assert proxy_of(status, server, via, body) == who

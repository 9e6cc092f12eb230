"""What a failed HTTP call is and how it is said: the error kinds (refused | timeout | tls | dns | protocol |
invalid-url | too-large), the client's own cuts (byte cap, parsed-size cap, total deadline), the wording of a
transport failure, an HTTP status and a server's error body, and who answered when a proxy did (``proxy_of``).
httpx's exception types are re-exported here for callers that catch them (no module outside triage.http imports
httpx)."""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx

HTTPError = httpx.HTTPError  # any transport failure or refused answer of httpx (a library's own client included)
ConnectError = httpx.ConnectError
TimeoutException = httpx.TimeoutException
HTTPStatusError = httpx.HTTPStatusError
ERROR_KINDS = ("refused", "timeout", "tls", "dns", "protocol", "invalid-url", "too-large")

# What a transport failure means and what to do, per error_kind ({url} is filled in).
TRANSPORT_TEXT = {
    "refused": (
        "Nothing is listening at {url} (connection refused).",
        "Check host and port (vllm serve defaults to port 8000), that the server process is up, and "
        "that a firewall or container port mapping (docker -p) exposes it.",
    ),
    "timeout": (
        "{url} did not answer within the timeout.",
        "Check the network path; a server still loading a model answers /health only after start-up "
        "(tens of seconds to minutes). Raise --timeout if the link is slow.",
    ),
    "tls": (
        "The TLS handshake with {url} failed (certificate or protocol).",
        "Use the right scheme (http:// for a plain vLLM server), install the CA, or pass --insecure to skip "
        "verification for a self-signed certificate.",
    ),
    "dns": ("The host name in {url} does not resolve.", "Check the host name."),
    "invalid-url": ("{url} is not a usable URL.", "Give a URL like http://host:8000."),
    "protocol": (
        "{url} answered with something that is not HTTP.",
        "Check the port: it may belong to another service.",
    ),
    "too-large": (
        "{url} sent an answer larger than the client accepts.",
        "Check that the URL points at a vLLM server; a proxy or another service may be answering.",
    ),
}

STATUS_HINT = {
    401: "an API key is required or was rejected: pass --api-key-env NAME where $NAME holds the server's --api-key",
    403: "the server (or a proxy in front of it) refuses this client",
    404: "no such route: check the URL (the vLLM API lives at the server root, no path)",
}


# What a proxy in front of vLLM answers when the server behind it is slow or down: uvicorn (vLLM's HTTP server)
# never sends 502 or 504 itself, and its 503s are vLLM's JSON errors with `Server: uvicorn`.
GATEWAY_TEXT = {502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}
PROXY_NAMES = ("nginx", "openresty", "envoy", "haproxy", "traefik", "caddy", "apache", "cloudflare", "istio",
               "awselb", "kong", "squid", "varnish")


def proxy_of(status: int | None, server: str | None = None, via: str | None = None, body: Any = None) -> str | None:
    """Who answered, when a proxy in front of the server did rather than vLLM: its name and status ("nginx/1.24.0's
    504 Gateway Timeout"), else None. A 502 or 504 is always a proxy's (uvicorn sends neither); a 503 when its
    ``Server:`` header names a proxy or its body is an HTML page. Such an answer says nothing about the request's fate
    in the engine: the proxy gave up waiting (proxy_read_timeout) or could not connect."""
    if status not in GATEWAY_TEXT:
        return None
    name = (server or "").strip()[:60]
    named = any(p in name.lower() for p in PROXY_NAMES)
    html = isinstance(body, str) and "<html" in body[:2000].lower()
    if name.lower().startswith("uvicorn") and not html:
        return None
    if status == 503 and not (named or html or via):
        return None
    who = name or (f"a proxy (Via: {via.strip()[:60]})" if via else "a proxy")
    return f"{who}'s {status} {GATEWAY_TEXT[status]}"


def transport_text(kind: str | None, url: str) -> tuple[str, str]:
    """(what happened, what to do) for a transport failure of ``kind`` at ``url``."""
    head, fix = TRANSPORT_TEXT.get(kind or "protocol", TRANSPORT_TEXT["protocol"])
    return head.format(url=url), fix


def server_message(body: Any, limit: int = 500) -> str:
    """The server's error text, wherever vLLM put it ({"error": {"message"}}, {"error": str}, {"detail"},
    {"message"}; FastAPI's 422 detail list), shortened; any other body as text."""
    msg: Any = body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and "message" in err:
            msg = err.get("message")
        elif isinstance(err, str):
            msg = err
        elif "detail" in body:
            msg = body["detail"]
            if isinstance(msg, list):  # FastAPI validation: [{"loc": [...], "msg": "..."}]
                msg = "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in msg[:5])
        elif "message" in body:
            msg = body["message"]
    if msg is None:
        return ""
    text = msg if isinstance(msg, str) else _short_repr(msg, limit)
    return text[:limit]


def _short_repr(v: Any, limit: int) -> str:
    try:
        return json.dumps(v, default=str)[:limit]
    except (ValueError, RecursionError, TypeError):
        return f"<{type(v).__name__}>"


def describe_failure(method: str, path: str, status: int | None, error: str | None, body: Any = None) -> str:
    """One line for a failed call: the transport error, or the HTTP status with the server's message and a hint."""
    if status is None:
        return f"{method} {path}: {error or 'no answer'}"
    msg = server_message(body, 300)
    hint = STATUS_HINT.get(status)
    return f"{method} {path}: HTTP {status}" + (f": {msg}" if msg else "") + (f" ({hint})" if hint else "")


def _classify(e: BaseException) -> str:
    text = f"{type(e).__name__} {e}".lower()
    if isinstance(e, (httpx.TimeoutException, TimeoutError)):
        return "timeout"
    if isinstance(e, ssl.SSLError) or "ssl" in text or "certificate" in text or "tls" in text:
        return "tls"
    if (
        "name or service not known" in text
        or "nodename nor servname" in text
        or "name resolution" in text
        or "getaddrinfo" in text
    ):
        return "dns"
    if isinstance(e, httpx.ConnectError):
        return "refused"
    if isinstance(e, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return "invalid-url"
    return "protocol"


class BodyTooLarge(Exception):
    """The byte cap: the body was not read further."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"body over {limit} bytes: not read further")


class Deadline(Exception):
    """The total deadline (connect, headers and every byte together) passed before the answer was whole."""

    def __init__(self, limit: float | None = None) -> None:
        super().__init__(f"no complete answer within {limit:g} s (total deadline)" if limit
                         else "no complete answer before the deadline (total, not per read)")


class TooMany(Exception):
    """A parsed-size cap: the answer is within the byte cap but holds too many items."""


def cut_kind(e: BaseException) -> str:
    """A failed call's ``error_kind`` (refused | timeout | tls | dns | protocol | invalid-url | too-large)."""
    if isinstance(e, (BodyTooLarge, TooMany)):
        return "too-large"
    if isinstance(e, Deadline):
        return "timeout"
    return _classify(e)


def cut_text(e: BaseException) -> str:
    """A failed call's error text, as a Reply says it."""
    if isinstance(e, Deadline):
        return f"ReadTimeout: {e}"
    if isinstance(e, TooMany):
        return f"parsed-size cap: {e}"
    return f"{type(e).__name__}: {e}"[:500]

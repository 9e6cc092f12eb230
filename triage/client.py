"""The one HTTP client for a vLLM server: API key, TLS verification, timeouts; answers, never raises.

Every call returns a ``Reply`` whose ``error_kind`` says what went wrong in the transport
(refused, timeout, tls, dns, protocol, invalid-url) so sources can turn it into a finding.
"""

from __future__ import annotations

import json
import ssl
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

MAX_BODY_CHARS = 2_000_000  # a /metrics page of a busy multi-engine server stays well under this


@dataclass(frozen=True)
class Reply:
    method: str
    url: str
    path: str
    status_code: int | None = None
    text: str = ""
    content_type: str = ""
    elapsed_s: float = 0.0
    error_kind: str | None = None  # refused | timeout | tls | dns | protocol | invalid-url
    error: str | None = None
    location: str | None = None  # where a redirect points (redirects are reported, not followed)

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def transport_failed(self) -> bool:
        return self.error_kind is not None

    def json(self) -> Any | None:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.text)
        except (ValueError, TypeError):
            return None

    def summary(self) -> str:
        if self.error_kind:
            return f"{self.method} {self.path}: {self.error_kind} ({self.error})"
        return f"{self.method} {self.path}: HTTP {self.status_code} in {self.elapsed_s * 1000:.0f} ms"


def _classify(e: Exception) -> str:
    text = f"{type(e).__name__} {e}".lower()
    if isinstance(e, httpx.TimeoutException):
        return "timeout"
    if isinstance(e, (ssl.SSLError,)) or "ssl" in text or "certificate" in text or "tls" in text:
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


def origin_of(url: str) -> str:
    """scheme://host:port of a URL (no path)."""
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def path_prefix_of(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


class VllmClient:
    """Thin httpx wrapper bound to one base URL; the API key travels only in the Authorization header."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        verify_tls: bool = True,
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        headers = {"User-Agent": "vllm-triage"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        kw: dict[str, Any] = {
            "headers": headers,
            "verify": verify_tls,
            "timeout": httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
            "follow_redirects": False,
        }
        if transport is not None:
            kw["transport"] = transport
        self._http = httpx.Client(**kw)

    def with_base(self, base_url: str) -> VllmClient:
        """The same settings pointed at another base URL (used when the path prefix was wrong)."""
        c = VllmClient.__new__(VllmClient)
        c.base_url = base_url.rstrip("/")
        c.api_key = self.api_key
        c._http = self._http
        return c

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> VllmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, json_body: Any = None, timeout_s: float | None = None) -> Reply:
        url = self.base_url + path
        t0 = time.monotonic()
        try:
            kw: dict[str, Any] = {}
            if json_body is not None:
                kw["json"] = json_body
            if timeout_s is not None:
                kw["timeout"] = timeout_s
            r = self._http.request(method, url, **kw)
            text = r.text[:MAX_BODY_CHARS]
            return Reply(
                method,
                url,
                path,
                r.status_code,
                text,
                r.headers.get("content-type", ""),
                time.monotonic() - t0,
                location=r.headers.get("location"),
            )
        except Exception as e:  # httpx.HTTPError, ssl errors, bad URLs: all become a value
            return Reply(
                method,
                url,
                path,
                elapsed_s=time.monotonic() - t0,
                error_kind=_classify(e),
                error=f"{type(e).__name__}: {e}"[:500],
            )

    def get(self, path: str, timeout_s: float | None = None) -> Reply:
        return self.request("GET", path, timeout_s=timeout_s)

    def post(self, path: str, body: Any, timeout_s: float | None = None) -> Reply:
        return self.request("POST", path, json_body=body, timeout_s=timeout_s)

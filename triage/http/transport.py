"""The one client's rules for HTTP stacks it does not drive itself: ``CappedTransport`` under a client library
(the OpenAI SDK, LangChain, LiteLLM, LlamaIndex, Cohere: they take an httpx client or transport), ``capped_client``
for a request that must be sent exactly as another program sends it (Open WebUI's URL as given) or handed to a
library, and ``service_client`` for a service that is not a vLLM server (Prometheus: its own headers, each read
bounded by ``limits.get_within``). The httpx types such callers name are aliased here (``HttpClient``,
``HttpRequest``, ``Transport``), so no module outside triage.http imports httpx."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import httpx

from triage.http.limits import MAX_BODY_BYTES, timeout_of

HttpClient = httpx.Client  # what capped_client and service_client return; what a library's http_client takes
HttpRequest = httpx.Request  # what a client's request hook sees (the recorded request of a library)
Transport = httpx.BaseTransport  # a replayed server (tests: httpx.MockTransport) under the checklist's client


class CappedTransport(httpx.HTTPTransport):
    """An httpx transport with this client's rules for libraries that bring their own HTTP stack (the OpenAI SDK,
    LangChain, LiteLLM in the clients set): each answer read within ``max_body_bytes`` and a total deadline of
    ``timeout_s`` (not per read), a stated Content-Length over the cap refused before any body byte."""

    def __init__(self, max_body_bytes: int = MAX_BODY_BYTES, timeout_s: float = 60.0, until: float | None = None,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.max_body_bytes, self.timeout_s = max_body_bytes, timeout_s
        self.until = until  # a monotonic time no request ends after (a library's retries share it), when given

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.timeout_s
        if self.until is not None:
            deadline = min(deadline, self.until)
            if time.monotonic() >= deadline:  # a retry after the call's total deadline: not sent
                raise httpx.ReadTimeout("no complete answer within the total deadline", request=request)
        resp = super().handle_request(request)
        try:
            stated = int(resp.headers.get("content-length") or 0)
        except ValueError:
            stated = 0
        if stated > self.max_body_bytes:
            resp.close()
            raise httpx.ReadError(f"answer of {stated} bytes: over the {self.max_body_bytes} bytes cap",
                                  request=request)
        return httpx.Response(resp.status_code, headers=resp.headers, extensions=resp.extensions, request=request,
                              stream=_CappedStream(resp.stream, self.max_body_bytes, deadline, request))


def capped_client(timeout_s: float, *, until: float | None = None, max_body_bytes: int = MAX_BODY_BYTES,
                  verify_tls: bool = True, event_hooks: dict[str, list[Any]] | None = None) -> httpx.Client:
    """A sync httpx client with this client's rules, for callers that must send a request exactly as another program
    does (Open WebUI's URL as given) or hand a client to a library (the Cohere SDK, the OpenAI SDK): every answer
    read within ``max_body_bytes`` and ``timeout_s`` (connect, headers and body together), never past ``until`` (a
    monotonic time: the call's total deadline, retries included), redirects not followed."""
    limit = timeout_s if until is None else max(0.01, min(timeout_s, until - time.monotonic()))
    return httpx.Client(timeout=timeout_of(limit), verify=verify_tls, follow_redirects=False,
                        event_hooks=event_hooks or {}, transport=CappedTransport(max_body_bytes, timeout_s, until))


class _CappedStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, limit: int, deadline: float, request: httpx.Request) -> None:
        self.inner, self.limit, self.deadline, self.request = inner, limit, deadline, request

    def __iter__(self) -> Any:
        n = 0
        for chunk in self.inner:
            n += len(chunk)
            if n > self.limit:
                raise httpx.ReadError(f"answer over {self.limit} bytes (byte cap): not read further",
                                      request=self.request)
            if time.monotonic() > self.deadline:
                raise httpx.ReadTimeout("no complete answer within the total deadline", request=self.request)
            yield chunk

    def close(self) -> None:
        self.inner.close()


def service_client(headers: Mapping[str, str] | None = None, timeout_s: float | None = None) -> httpx.Client:
    """A sync client for a service that is not a vLLM server (Prometheus' API): its own headers (its credentials,
    not a vLLM key), redirects not followed; each read is bounded by ``limits.get_within`` (deadline, byte cap).
    ``timeout_s``: httpx's per-phase timeout when a call gives none (httpx's default without it)."""
    kw: dict[str, Any] = {"headers": dict(headers or {}), "follow_redirects": False}
    if timeout_s is not None:
        kw["timeout"] = timeout_s
    return httpx.Client(**kw)

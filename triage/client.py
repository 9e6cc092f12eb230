"""The one HTTP client for a vLLM server, with a sync face (``VllmClient``) and an async one (``ProbeClient``).

Written once, here: the Authorization header (built from the API key once), TLS verification
(on; ``verify_tls=False`` is the --insecure opt-out), redirects (reported, never followed, so the
key does not travel), a total deadline per request (connect, headers and body together, not per
read: a server sending one byte a second cannot hold a call past it), a cap on every body
(streamed, never read whole first), and the wording of every failure (unreachable host, wrong
port, TLS, 401, 404, 400/422 bodies). Calls answer, never raise: the sync face returns a
``Reply``, the async face an ``Exchange``; both carry ``error_kind`` (refused | timeout | tls |
dns | protocol | invalid-url | too-large). The API key and a URL's password are handed to
``triage.redact`` as exact secrets the moment a client is built.

The same rules for callers that are not a vLLM base URL: ``capped_client`` (an httpx client over
``CappedTransport`` for the client libraries and Open WebUI's requests, one total deadline shared by a
library's retries), ``get_within`` (a GET with another service's headers and a larger cap: Prometheus),
``read_json`` (the parsed-size caps). ``proxy_of`` names an answer a proxy gave instead of the server
(``Exchange.proxy``). One file past ~350 lines on purpose: every byte that enters from the network
passes these few functions.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlsplit

import httpx

from triage import redact
from triage.vllm.metrics import MetricsPage, MetricsParseError, parse_metrics

MAX_BODY_BYTES = 32 * 1024 * 1024  # a busy /metrics page is ~2 MB; a 64-input embeddings answer ~10 MB
MAX_BODY_CHARS = 2_000_000  # what a Reply keeps as text (captures, findings)
# Parsed-size caps: within 32 MB, 10 million `{}` or token ids parse into gigabytes of objects
MAX_JSON_ITEMS = 2_000_000  # commas in a JSON answer, counted before it is parsed (64 inputs x 8192 dims: 524,288)
MAX_DIMENSIONS = 65_536  # one embedding vector (the largest models have a few thousand)
MAX_TOKENS = 1_000_000  # token ids in one /tokenize answer
EMBEDDINGS_PATH = "/v1/embeddings"

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


class _TooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"body over {limit} bytes: not read further")


class _Deadline(Exception):
    def __init__(self, limit: float | None = None) -> None:
        super().__init__(f"no complete answer within {limit:g} s (total deadline)" if limit
                         else "no complete answer before the deadline (total, not per read)")


def _error_text(e: BaseException) -> str:
    if isinstance(e, _Deadline):
        return f"ReadTimeout: {e}"
    if isinstance(e, _TooMany):
        return f"parsed-size cap: {e}"
    return f"{type(e).__name__}: {e}"[:500]


def _kind(e: BaseException) -> str:
    if isinstance(e, (_TooLarge, _TooMany)):
        return "too-large"
    if isinstance(e, _Deadline):
        return "timeout"
    return _classify(e)


def origin_of(url: str) -> str:
    """scheme://host:port of a URL (no path)."""
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a base URL that API paths are appended to (None when it can): a query string or a
    fragment would end up before the path (``http://h:8000/?x=1`` + ``/v1/models`` asked ``/?x=1/v1/models``,
    issue 33)."""
    p = urlsplit(url)
    if p.query or url.rstrip("/").endswith("?"):
        return f"it has a query string (?{p.query[:40]}): give the server's root, e.g. {p.scheme}://{p.netloc}"
    if p.fragment or "#" in url:
        return f"it has a fragment (#{p.fragment[:40]}): give the server's root, e.g. {p.scheme}://{p.netloc}"
    return None


def path_prefix_of(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The headers every request carries; the key travels only here."""
    h = {"User-Agent": "vllm-triage"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


def register_secrets(url: str, api_key: str | None) -> None:
    """The API key and every credential the URL carries (``user:pw@``, ``:pw@``, ``token@``, their Basic-auth
    encoding, ``?password=``) become exact secrets for redaction."""
    redact.add_secret(api_key)
    redact.add_url_secrets(url)


def _timeout(limit: float) -> httpx.Timeout:
    return httpx.Timeout(limit, connect=min(limit, 5.0))


def _decode(data: bytes, resp: httpx.Response) -> str:
    return data.decode(resp.charset_encoding or "utf-8", errors="replace")


class _TooMany(Exception):
    """A parsed-size cap: the answer is within the byte cap but holds too many items."""


def _json_or_text(data: bytes, resp: httpx.Response, limit: int = 4000) -> Any:
    n = data.count(b",")
    if n > MAX_JSON_ITEMS:
        raise _TooMany(f"{n:,} JSON items in the answer: more than the {MAX_JSON_ITEMS:,} items cap (not parsed)")
    text = _decode(data, resp)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        return text[:limit]


# -- the sync face ---------------------------------------------------------------------------------


def read_body(r: httpx.Response, deadline: float, max_bytes: int, limit: float | None = None) -> bytes:
    """A streamed answer's body read whole within ``deadline`` (a monotonic time: every byte, not per read) and
    ``max_bytes``; raises the client's own cut (``cut_kind`` names it: timeout, too-large) otherwise."""
    buf = bytearray()
    for chunk in r.iter_bytes():
        buf += chunk
        if len(buf) > max_bytes:
            raise _TooLarge(max_bytes)
        if time.monotonic() > deadline:
            raise _Deadline(limit)
    return bytes(buf)


def get_within(http: httpx.Client, url: str, params: Any, deadline: float, max_bytes: int) -> tuple[int, bytes]:
    """(status, body) of one GET with ``http`` (its headers: another service's credentials) read whole within
    ``deadline`` (a monotonic time: connect, headers and every byte together) and ``max_bytes``. Raises what
    ``cut_kind`` and ``cut_text`` read: the client's own cuts, or httpx's errors."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Deadline()
    with http.stream("GET", url, params=params, timeout=_timeout(left)) as r:
        return r.status_code, read_body(r, deadline, max_bytes, left)


def cut_kind(e: BaseException) -> str:
    """A failed call's ``error_kind`` (refused | timeout | tls | dns | protocol | invalid-url | too-large)."""
    return _kind(e)


def cut_text(e: BaseException) -> str:
    """A failed call's error text, as a Reply or an Exchange says it."""
    return _error_text(e)


@dataclass(frozen=True)
class Reply:
    method: str
    url: str
    path: str
    status_code: int | None = None
    text: str = ""
    content_type: str = ""
    elapsed_s: float = 0.0
    error_kind: str | None = None  # refused | timeout | tls | dns | protocol | invalid-url | too-large
    error: str | None = None
    location: str | None = None  # where a redirect points (redirects are reported, not followed)

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def transport_failed(self) -> bool:
        return self.error_kind is not None

    def json(self) -> Any | None:
        """The body as JSON, or None when it is not JSON (or nested too deep to read)."""
        try:
            return json.loads(self.text)
        except (ValueError, TypeError, RecursionError):
            return None

    def summary(self) -> str:
        if self.error_kind:
            return f"{self.method} {self.path}: {self.error_kind} ({self.error})"
        return f"{self.method} {self.path}: HTTP {self.status_code} in {self.elapsed_s * 1000:.0f} ms"

    def describe(self) -> str:
        return describe_failure(self.method, self.path, self.status_code, self.error, self.json() or self.text)


class VllmClient:
    """httpx bound to one base URL; ``timeout_s`` is each call's total deadline, ``max_body_bytes`` its cap."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        verify_tls: bool = True,
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_body_bytes = max_body_bytes
        register_secrets(base_url, api_key)
        kw: dict[str, Any] = {
            "headers": auth_headers(api_key),
            "verify": verify_tls,
            "timeout": _timeout(timeout_s),
            "follow_redirects": False,
        }
        if transport is not None:
            kw["transport"] = transport
        self._http = httpx.Client(**kw)

    def with_base(self, base_url: str) -> VllmClient:
        """The same settings pointed at another base URL (used when the path prefix was wrong)."""
        c = VllmClient.__new__(VllmClient)
        c.__dict__.update(self.__dict__)
        c.base_url = base_url.rstrip("/")
        return c

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> VllmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, json_body: Any = None, timeout_s: float | None = None) -> Reply:
        url = self.base_url + path
        limit = timeout_s if timeout_s is not None else self.timeout_s
        t0 = time.monotonic()
        try:
            kw: dict[str, Any] = {"timeout": _timeout(limit)}
            if json_body is not None:
                kw["json"] = json_body
            with self._http.stream(method, url, **kw) as r:
                data = self._read(r, t0, limit)
                return Reply(
                    method,
                    url,
                    path,
                    r.status_code,
                    _decode(data, r)[:MAX_BODY_CHARS],
                    r.headers.get("content-type", ""),
                    time.monotonic() - t0,
                    location=r.headers.get("location"),
                )
        except Exception as e:  # httpx.HTTPError, ssl errors, bad URLs, deadline, cap: all become a value
            return Reply(
                method, url, path, elapsed_s=time.monotonic() - t0, error_kind=_kind(e), error=_error_text(e)
            )

    def _read(self, r: httpx.Response, t0: float, limit: float) -> bytes:
        return read_body(r, t0 + limit, self.max_body_bytes, limit)

    def get(self, path: str, timeout_s: float | None = None) -> Reply:
        return self.request("GET", path, timeout_s=timeout_s)

    def post(self, path: str, body: Any, timeout_s: float | None = None) -> Reply:
        return self.request("POST", path, json_body=body, timeout_s=timeout_s)

    def metrics(self, timeout_s: float | None = None) -> tuple[str | None, str | None]:
        """(/metrics text, None) or (None, why it could not be read)."""
        r = self.get("/metrics", timeout_s)
        if r.ok:
            return r.text, None
        return None, r.error if r.transport_failed else f"HTTP {r.status_code} on GET /metrics"


# -- the async face --------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP request and what came back (status None: no answer; error says why)."""

    method: str
    path: str
    request: Optional[dict[str, Any]]
    status: Optional[int] = None
    body: Any = None
    error: Optional[str] = None
    elapsed_s: Optional[float] = None
    extra: dict[str, Any] = field(default_factory=dict)
    error_kind: Optional[str] = None
    proxy: Optional[str] = None  # a proxy answered, not the server (``proxy_of``): "nginx/1.24.0's 504 Gateway Timeout"

    @property
    def ok(self) -> bool:
        return self.status == 200

    def error_message(self) -> str:
        """The server's error text, wherever vLLM put it ({"error": {"message"}} or {"detail"})."""
        return server_message(self.body)

    def describe(self) -> str:
        if self.proxy:
            return f"{self.method} {self.path}: {self.proxy} (a proxy's answer, not the server's)"
        return describe_failure(self.method, self.path, self.status, self.error, self.body)

    def to_dict(self, trim_vectors: bool = True) -> dict[str, Any]:
        keep = trim_for_storage if trim_vectors else (lambda v: v)
        d = {"method": self.method, "path": self.path, "request": keep(self.request),
             "status": self.status, "body": keep(self.body),
             "error": self.error, "elapsed_s": self.elapsed_s}
        if self.proxy:
            d["proxy"] = self.proxy
        return d


STORED_LIST_ITEMS = 1000  # a list longer than this (no real answer of ours has one) is stored as its head
STORED_LIST_KEEP = 100


def trim_for_storage(v: Any, keep: int = 8, depth: int = 0) -> Any:
    """Shorten embedding vectors, huge strings and lists for storage: keep the head and the length."""
    if depth > 32:
        return "[nested too deep]"
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "embedding" and isinstance(x, list) and len(x) > keep:
                out[k] = x[:keep]
                out["embedding_len"] = len(x)
            elif k == "tokens" and isinstance(x, list) and len(x) > 64:
                out[k] = x[:64]
                out["tokens_len"] = len(x)
            else:
                out[k] = trim_for_storage(x, keep, depth + 1)
        return out
    if isinstance(v, list):
        if len(v) > STORED_LIST_ITEMS:  # 100,000 rerank results from a hostile server: the head and the count
            return [*(trim_for_storage(x, keep, depth + 1) for x in v[:STORED_LIST_KEEP]),
                    f"... and {len(v) - STORED_LIST_KEEP:,} more"]
        return [trim_for_storage(x, keep, depth + 1) for x in v]
    if isinstance(v, str) and len(v) > 4000:
        return v[:4000] + f"... [{len(v)} chars]"
    return v


def _check_sizes(body: Any) -> None:
    """Raise _TooMany for an embeddings answer whose vectors are longer than MAX_DIMENSIONS (float lists or base64)
    or a /tokenize answer with more than MAX_TOKENS ids."""
    if not isinstance(body, dict):
        return
    tokens = body.get("tokens")
    if isinstance(tokens, list) and len(tokens) > MAX_TOKENS:
        raise _TooMany(f"{len(tokens):,} token ids: more than the {MAX_TOKENS:,} tokens cap")
    data = body.get("data")
    if not isinstance(data, list):
        return
    for d in data:
        e = d.get("embedding") if isinstance(d, dict) else None
        dims = len(e) if isinstance(e, list) else len(e) * 3 // 16 if isinstance(e, str) else 0
        if dims > MAX_DIMENSIONS:
            raise _TooMany(f"a vector of {dims:,} dimensions: more than the {MAX_DIMENSIONS:,} dimensions cap")


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
    return httpx.Client(timeout=_timeout(limit), verify=verify_tls, follow_redirects=False,
                        event_hooks=event_hooks or {}, transport=CappedTransport(max_body_bytes, timeout_s, until))


def read_json(resp: httpx.Response, limit: int = 4000) -> Any:
    """A (capped) answer's body as JSON, else its text cut at ``limit``; the parsed-size caps apply (an answer of
    millions of items is refused unparsed: ``ValueError`` saying which cap)."""
    try:
        return _json_or_text(resp.content, resp, limit)
    except _TooMany as e:
        raise ValueError(f"parsed-size cap: {e}") from None


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


class ProbeSetupError(RuntimeError):
    """The target could not be prepared for probing (no model, no /tokenize, unreachable)."""


class ProbeClient:
    """Async access to one vLLM server; the API key is sent, never returned or logged.

    Each isolated embeddings request gets its own ``httpx.AsyncClient`` so that aborting it
    (cancelling the task) closes that connection, which is what makes vLLM cancel the request in
    the engine (``with_cancellation`` on /v1/embeddings). Scrapes and small calls share one client.
    """

    def __init__(self, url: str, api_key: str | None = None, verify_tls: bool = True, timeout_s: float = 10.0,
                 max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.verify_tls = verify_tls
        self.timeout_s = timeout_s
        self.max_body_bytes = max_body_bytes
        self.headers = auth_headers(api_key)
        register_secrets(url, api_key)
        self._client: Optional[httpx.AsyncClient] = None

    def new_client(self, timeout_s: float | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, verify=self.verify_tls,
                                 timeout=_timeout(timeout_s or self.timeout_s), follow_redirects=False)

    async def __aenter__(self) -> ProbeClient:
        self._client = self.new_client()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError("use ProbeClient as an async context manager")
        return self._client

    async def _fetch(self, c: httpx.AsyncClient, method: str, path: str, kw: dict[str, Any]) -> tuple[int, bytes,
                                                                                                       httpx.Response]:
        async with c.stream(method, path, **kw) as resp:
            buf = bytearray()
            async for chunk in resp.aiter_bytes():
                buf += chunk
                if len(buf) > self.max_body_bytes:
                    raise _TooLarge(self.max_body_bytes)
            return resp.status_code, bytes(buf), resp

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   client: httpx.AsyncClient | None = None, timeout_s: float | None = None,
                   as_text: bool = False) -> Exchange:
        """Send one request within a total deadline; failures become an Exchange with status None.
        The body is parsed JSON (else text, shortened), or with ``as_text`` the whole text."""
        c = client or self.client
        limit = timeout_s if timeout_s is not None else self.timeout_s
        t = time.monotonic()
        ex = Exchange(method=method, path=path, request=body)
        try:
            kw: dict[str, Any] = {"json": body} if body is not None else {}
            kw["timeout"] = _timeout(limit)
            try:
                status, data, resp = await asyncio.wait_for(self._fetch(c, method, path, kw), limit)
            except TimeoutError:
                raise _Deadline(limit) from None
            body_ = _decode(data, resp) if as_text else _json_or_text(data, resp)
            del data
            if not as_text:
                _check_sizes(body_)
            ex.status, ex.body = status, body_
            ex.proxy = proxy_of(status, resp.headers.get("server"), resp.headers.get("via"), body_)
        except (httpx.HTTPError, _TooLarge, _TooMany, _Deadline, ssl.SSLError, OSError, ValueError) as e:
            ex.error, ex.error_kind = _error_text(e), _kind(e)
        ex.elapsed_s = round(time.monotonic() - t, 4)
        return ex

    async def embed_isolated(self, body: dict[str, Any], timeout_s: float, path: str = EMBEDDINGS_PATH) -> Exchange:
        """POST /v1/embeddings (or another pooling path: /rerank, /score) on a connection of its own: cancelling
        this coroutine aborts it."""
        async with self.new_client(timeout_s) as c:
            return await self.call("POST", path, body, client=c, timeout_s=timeout_s)

    async def embed(self, body: dict[str, Any], path: str = EMBEDDINGS_PATH,
                    timeout_s: float | None = None) -> Exchange:
        return await self.call("POST", path, body, timeout_s=timeout_s)

    async def models(self) -> Exchange:
        return await self.call("GET", "/v1/models")

    async def version(self) -> Optional[str]:
        ex = await self.call("GET", "/version")
        v = ex.body.get("version") if ex.ok and isinstance(ex.body, dict) else None
        return v if isinstance(v, str) else None

    async def health(self, timeout_s: float = 3.0) -> Exchange:
        return await self.call("GET", "/health", timeout_s=timeout_s)

    async def tokenize(self, model: str, prompt: str) -> Exchange:
        return await self.call("POST", "/tokenize", {"model": model, "prompt": prompt})

    async def token_count(self, model: str, prompt: str) -> int:
        ex = await self.tokenize(model, prompt)
        count = ex.body.get("count") if ex.ok and isinstance(ex.body, dict) else None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            why = ex.describe() if not ex.ok else f"no token count in the answer: {str(ex.body)[:200]}"
            raise ProbeSetupError(f"/tokenize failed: {why}")
        return count

    async def metrics_text(self, timeout_s: float = 2.0) -> str:
        ex = await self.call("GET", "/metrics", timeout_s=timeout_s, as_text=True)
        if not ex.ok:
            raise ProbeSetupError(ex.describe())
        return str(ex.body)

    async def scrape(self, timeout_s: float = 2.0) -> Optional[MetricsPage]:
        """One /metrics page parsed, or None when it could not be read."""
        try:
            return parse_metrics(await self.metrics_text(timeout_s))
        except (ProbeSetupError, MetricsParseError, ValueError, OverflowError):
            return None

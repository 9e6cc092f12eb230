"""The one HTTP client for a vLLM server, with a sync face (``VllmClient``) and an async one (``ProbeClient``); both
answer a ``Reply`` (triage.http.reply).

Written once, here: the Authorization header (built from the API key once), TLS verification (on;
``verify_tls=False`` is the --insecure opt-out), redirects (reported, never followed, so the key does not
travel), and every call within the bounds of triage.http.limits (a total deadline, a streamed byte cap, the
parsed-size caps). Calls answer, never raise: failures are values whose ``error_kind`` and wording come from
triage.http.errors. The API key and a URL's password are handed to ``triage.redact`` as exact secrets the moment
a client is built. ``status_of`` is the one-line GET of a readiness route (the lab's daemons).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import Any, Optional
from urllib.parse import urlsplit

import httpx

from triage import redact
from triage.http.errors import BodyTooLarge, Deadline, TooMany, cut_kind, cut_text, proxy_of
from triage.http.limits import MAX_BODY_BYTES, MAX_BODY_CHARS, check_sizes, decode, json_or_text, read_body, timeout_of
from triage.http.reply import Reply
from triage.vllm.metrics import MetricsPage, MetricsParseError, parse_metrics

EMBEDDINGS_PATH = "/v1/embeddings"


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
            "timeout": timeout_of(timeout_s),
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
            kw: dict[str, Any] = {"timeout": timeout_of(limit)}
            if json_body is not None:
                kw["json"] = json_body
            with self._http.stream(method, url, **kw) as r:
                data = self._read(r, t0, limit)
                return Reply.of_text(
                    method,
                    path,
                    r.status_code,
                    decode(data, r)[:MAX_BODY_CHARS],
                    url=url,
                    content_type=r.headers.get("content-type", ""),
                    elapsed_s=time.monotonic() - t0,
                    location=r.headers.get("location"),
                )
        except Exception as e:  # httpx.HTTPError, ssl errors, bad URLs, deadline, cap: all become a value
            return Reply.of_text(
                method, path, None, url=url, elapsed_s=time.monotonic() - t0, error_kind=cut_kind(e), error=cut_text(e)
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
        return None, r.error if r.transport_failed else f"HTTP {r.status} on GET /metrics"

def status_of(url: str, timeout_s: float) -> int | None:
    """The HTTP status of one GET of ``url`` within ``timeout_s`` (total), or None when nothing answered."""
    with VllmClient(url, timeout_s=timeout_s) as c:
        return c.get("").status


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
                                 timeout=timeout_of(timeout_s or self.timeout_s), follow_redirects=False)

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
                    raise BodyTooLarge(self.max_body_bytes)
            return resp.status_code, bytes(buf), resp

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   client: httpx.AsyncClient | None = None, timeout_s: float | None = None,
                   as_text: bool = False) -> Reply:
        """Send one request within a total deadline; failures become a Reply with status None.
        The body is parsed JSON (else text, shortened), or with ``as_text`` the whole text."""
        c = client or self.client
        limit = timeout_s if timeout_s is not None else self.timeout_s
        t = time.monotonic()
        ex = Reply(method=method, path=path, request=body)
        try:
            kw: dict[str, Any] = {"json": body} if body is not None else {}
            kw["timeout"] = timeout_of(limit)
            try:
                status, data, resp = await asyncio.wait_for(self._fetch(c, method, path, kw), limit)
            except TimeoutError:
                raise Deadline(limit) from None
            body_ = decode(data, resp) if as_text else json_or_text(data, resp)
            del data
            if not as_text:
                check_sizes(body_)
            ex.status, ex.body = status, body_
            ex.proxy = proxy_of(status, resp.headers.get("server"), resp.headers.get("via"), body_)
        except (httpx.HTTPError, BodyTooLarge, TooMany, Deadline, ssl.SSLError, OSError, ValueError) as e:
            ex.error, ex.error_kind = cut_text(e), cut_kind(e)
        ex.elapsed_s = round(time.monotonic() - t, 4)
        return ex

    async def embed_isolated(self, body: dict[str, Any], timeout_s: float, path: str = EMBEDDINGS_PATH) -> Reply:
        """POST /v1/embeddings (or another pooling path: /rerank, /score) on a connection of its own: cancelling
        this coroutine aborts it."""
        async with self.new_client(timeout_s) as c:
            return await self.call("POST", path, body, client=c, timeout_s=timeout_s)

    async def embed(self, body: dict[str, Any], path: str = EMBEDDINGS_PATH,
                    timeout_s: float | None = None) -> Reply:
        return await self.call("POST", path, body, timeout_s=timeout_s)

    async def models(self) -> Reply:
        return await self.call("GET", "/v1/models")

    async def version(self) -> Optional[str]:
        ex = await self.call("GET", "/version")
        v = ex.body.get("version") if ex.ok and isinstance(ex.body, dict) else None
        return v if isinstance(v, str) else None

    async def health(self, timeout_s: float = 3.0) -> Reply:
        return await self.call("GET", "/health", timeout_s=timeout_s)

    async def tokenize(self, model: str, prompt: str) -> Reply:
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

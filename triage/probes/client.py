"""The probes' async HTTP client: one place that knows vLLM's endpoints, headers and timeouts.

Each embeddings request gets its own ``httpx.AsyncClient`` so that aborting it (cancelling
the task) closes that connection, which is what makes vLLM cancel the request in the engine
(``with_cancellation`` on /v1/embeddings). Scrapes and small calls share one client.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import httpx

from triage.vllm.metrics import MetricsPage, MetricsParseError, parse_metrics

EMBEDDINGS_PATH = "/v1/embeddings"


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

    @property
    def ok(self) -> bool:
        return self.status == 200

    def error_message(self) -> str:
        """The server's error text, wherever vLLM put it ({"error": {"message"}} or {"detail"})."""
        b = self.body
        if isinstance(b, dict):
            err = b.get("error")
            if isinstance(err, dict):
                return str(err.get("message", ""))
            if isinstance(err, str):
                return err
            if "detail" in b:
                return str(b["detail"])
            if "message" in b:
                return str(b["message"])
        return "" if b is None else str(b)[:500]

    def to_dict(self, trim_vectors: bool = True) -> dict[str, Any]:
        keep = trim_for_storage if trim_vectors else (lambda v: v)
        return {"method": self.method, "path": self.path, "request": keep(self.request),
                "status": self.status, "body": keep(self.body),
                "error": self.error, "elapsed_s": self.elapsed_s}


def trim_for_storage(v: Any, keep: int = 8) -> Any:
    """Shorten embedding vectors and huge strings for storage: keep the head and the length."""
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
                out[k] = trim_for_storage(x, keep)
        return out
    if isinstance(v, list):
        return [trim_for_storage(x, keep) for x in v]
    if isinstance(v, str) and len(v) > 4000:
        return v[:4000] + f"... [{len(v)} chars]"
    return v


def _body(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except (json.JSONDecodeError, ValueError):
        return resp.text[:4000]


class ProbeClient:
    """Async access to one vLLM server; the API key is sent, never returned or logged."""

    def __init__(self, url: str, api_key: str | None = None, verify_tls: bool = True, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.verify_tls = verify_tls
        self.timeout_s = timeout_s
        self._client: Optional[httpx.AsyncClient] = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def new_client(self, timeout_s: float | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, verify=self.verify_tls,
                                 timeout=httpx.Timeout(timeout_s or self.timeout_s))

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

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   client: httpx.AsyncClient | None = None, timeout_s: float | None = None) -> Exchange:
        """Send one request; connection errors and timeouts become an Exchange with status None."""
        c = client or self.client
        t = time.monotonic()
        ex = Exchange(method=method, path=path, request=body)
        try:
            kw: dict[str, Any] = {"json": body} if body is not None else {}
            if timeout_s is not None:
                kw["timeout"] = timeout_s
            resp = await c.request(method, path, **kw)
            ex.status, ex.body = resp.status_code, _body(resp)
        except httpx.HTTPError as e:
            ex.error = f"{type(e).__name__}: {e}"
        ex.elapsed_s = round(time.monotonic() - t, 4)
        return ex

    async def embed_isolated(self, body: dict[str, Any], timeout_s: float) -> Exchange:
        """POST /v1/embeddings on a connection of its own: cancelling this coroutine aborts it."""
        async with self.new_client(timeout_s) as c:
            return await self.call("POST", EMBEDDINGS_PATH, body, client=c)

    async def embed(self, body: dict[str, Any], path: str = EMBEDDINGS_PATH,
                    timeout_s: float | None = None) -> Exchange:
        return await self.call("POST", path, body, timeout_s=timeout_s)

    async def models(self) -> Exchange:
        return await self.call("GET", "/v1/models")

    async def version(self) -> Optional[str]:
        ex = await self.call("GET", "/version")
        return ex.body.get("version") if ex.ok and isinstance(ex.body, dict) else None

    async def health(self, timeout_s: float = 3.0) -> Exchange:
        return await self.call("GET", "/health", timeout_s=timeout_s)

    async def tokenize(self, model: str, prompt: str) -> Exchange:
        return await self.call("POST", "/tokenize", {"model": model, "prompt": prompt})

    async def token_count(self, model: str, prompt: str) -> int:
        ex = await self.tokenize(model, prompt)
        if not ex.ok or not isinstance(ex.body, dict) or "count" not in ex.body:
            raise ProbeSetupError(f"/tokenize failed ({ex.status or ex.error}): {ex.error_message()[:200]}")
        return int(ex.body["count"])

    async def metrics_text(self, timeout_s: float = 2.0) -> str:
        resp = await self.client.get("/metrics", timeout=timeout_s)
        resp.raise_for_status()
        return resp.text

    async def scrape(self, timeout_s: float = 2.0) -> Optional[MetricsPage]:
        """One /metrics page parsed, or None when it could not be read."""
        try:
            return parse_metrics(await self.metrics_text(timeout_s))
        except (httpx.HTTPError, MetricsParseError):
            return None


class ProbeSetupError(RuntimeError):
    """The target could not be prepared for probing (no model, no /tokenize, unreachable)."""

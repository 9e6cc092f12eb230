"""What came back from one HTTP call, as a value (calls answer, never raise): ``Reply`` for the sync client
(the body as text, for captures and findings), ``Exchange`` for the async one (the request sent and the body
parsed, stored with a probe's outcome: ``to_dict`` trims vectors and long lists with ``trim_for_storage``).
Both carry ``error_kind`` (triage.http.errors) and say a failure the same way (``describe``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.http.errors import describe_failure, server_message


@dataclass(frozen=True)
class Reply:
    """One call of the sync client and its answer (status_code None: no answer; error_kind and error say why)."""

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

"""What came back from one HTTP call, as a value (calls answer, never raise): one type, ``Reply``, for both
clients of triage.http. The async ``ProbeClient`` fills it as the call goes (the request sent, the body parsed,
``proxy`` when a proxy answered); the sync ``VllmClient`` builds it with ``Reply.of_text`` (the body as text, for
captures and findings, and parsed when it is JSON). One type, so a failure is said one way (``describe``,
``error_message``) and a caller does not have to know which client asked (issue 34). A probe's stored outcome
keeps ``to_dict``, trimmed with ``trim_for_storage`` (vectors and long lists shortened).

``LoadReply`` (triage.load_client) stays separate: the throughput probe's connection never decodes a body and keeps
the answer as bytes, because the load client's CPU per request is part of what a load test measures (issue 35)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from triage.http.errors import describe_failure, server_message


def _json_or_none(text: str) -> Any | None:
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None


@dataclass
class Reply:
    """One HTTP request and what came back (status None: no answer; ``error_kind`` and ``error`` say why).

    ``body`` is the answer parsed (JSON, else its text); ``text`` the answer as text, which only the sync client
    keeps (with ``url``, ``content_type`` and ``location``, where a redirect points: redirects are reported, not
    followed)."""

    method: str
    path: str
    request: dict[str, Any] | None = None
    status: int | None = None
    body: Any = None
    error: str | None = None
    elapsed_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error_kind: str | None = None  # refused | timeout | tls | dns | protocol | invalid-url | too-large
    proxy: str | None = None  # a proxy answered, not the server (``proxy_of``): "nginx/1.24.0's 504 Gateway Timeout"
    url: str = ""
    text: str = ""
    content_type: str = ""
    location: str | None = None

    @classmethod
    def of_text(cls, method: str, path: str, status: int | None, text: str = "", **kw: Any) -> Reply:
        """The sync client's reply: ``text`` as read, ``body`` the parsed JSON when the text is JSON, else the
        text (``elapsed_s`` 0.0 unless given)."""
        parsed = _json_or_none(text)
        kw.setdefault("elapsed_s", 0.0)
        return cls(method, path, status=status, body=text if parsed is None else parsed, text=text, **kw)

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return self.status is not None and 200 <= self.status < 300

    @property
    def transport_failed(self) -> bool:
        return self.error_kind is not None

    def json(self) -> Any | None:
        """The body as JSON, or None when it is not JSON (or nested too deep to read)."""
        if self.body is not None and not isinstance(self.body, str):
            return self.body
        return _json_or_none(self.text)

    def obj(self) -> dict[str, Any]:
        """The body when it is a JSON object, else {} (text, a list or no body has no field to read): what a
        verdict reads fields from, so a server's odd 2xx body is a missing field, never a crash."""
        return self.body if isinstance(self.body, dict) else {}

    def error_message(self) -> str:
        """The server's error text, wherever vLLM put it ({"error": {"message"}} or {"detail"})."""
        return server_message(self.body)

    def summary(self) -> str:
        if self.error_kind:
            return f"{self.method} {self.path}: {self.error_kind} ({self.error})"
        return f"{self.method} {self.path}: HTTP {self.status} in {(self.elapsed_s or 0.0) * 1000:.0f} ms"

    def describe(self) -> str:
        if self.proxy:
            return f"{self.method} {self.path}: {self.proxy} (a proxy's answer, not the server's)"
        return describe_failure(self.method, self.path, self.status, self.error, self.json() or self.text or self.body)

    def to_dict(self, trim_vectors: bool = True) -> dict[str, Any]:
        """What a probe's outcome stores of it (the sync client's text, url and headers are not stored)."""
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

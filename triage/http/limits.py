"""The bounds on what enters from the network: the byte cap (``MAX_BODY_BYTES``, streamed, never read whole
first), the total deadline of a call (connect, headers and every byte together, not per read: a server sending
one byte a second cannot hold a call past it), and the parsed-size caps (JSON items, vector dimensions, token
ids) checked before or right after a body is parsed. ``read_body`` and ``get_within`` are the one capped,
deadlined read: the vLLM client and Prometheus' range queries (a larger cap, as a parameter) both use it."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from triage.http.errors import BodyTooLarge, Deadline, TooMany

MAX_BODY_BYTES = 32 * 1024 * 1024  # a busy /metrics page is ~2 MB; a 64-input embeddings answer ~10 MB
MAX_BODY_CHARS = 2_000_000  # what a Reply keeps as text (captures, findings)
# Parsed-size caps: within 32 MB, 10 million `{}` or token ids parse into gigabytes of objects
MAX_JSON_ITEMS = 2_000_000  # commas in a JSON answer, counted before it is parsed (64 inputs x 8192 dims: 524,288)
MAX_DIMENSIONS = 65_536  # one embedding vector (the largest models have a few thousand)
MAX_TOKENS = 1_000_000  # token ids in one /tokenize answer


def timeout_of(limit: float) -> httpx.Timeout:
    """httpx's timeouts for a call whose total deadline is ``limit``: connect within at most 5 s of it."""
    return httpx.Timeout(limit, connect=min(limit, 5.0))


def decode(data: bytes, resp: httpx.Response) -> str:
    return data.decode(resp.charset_encoding or "utf-8", errors="replace")


def json_or_text(data: bytes, resp: httpx.Response, limit: int = 4000) -> Any:
    """The body parsed as JSON, else its text cut at ``limit``; raises TooMany past ``MAX_JSON_ITEMS`` (unparsed)."""
    n = data.count(b",")
    if n > MAX_JSON_ITEMS:
        raise TooMany(f"{n:,} JSON items in the answer: more than the {MAX_JSON_ITEMS:,} items cap (not parsed)")
    text = decode(data, resp)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        return text[:limit]


def read_body(r: httpx.Response, deadline: float, max_bytes: int, limit: float | None = None) -> bytes:
    """A streamed answer's body read whole within ``deadline`` (a monotonic time: every byte, not per read) and
    ``max_bytes``; raises the client's own cut (``cut_kind`` names it: timeout, too-large) otherwise."""
    buf = bytearray()
    for chunk in r.iter_bytes():
        buf += chunk
        if len(buf) > max_bytes:
            raise BodyTooLarge(max_bytes)
        if time.monotonic() > deadline:
            raise Deadline(limit)
    return bytes(buf)


def get_within(http: httpx.Client, url: str, params: Any, deadline: float, max_bytes: int) -> tuple[int, bytes]:
    """(status, body) of one GET with ``http`` (its headers: another service's credentials) read whole within
    ``deadline`` (a monotonic time: connect, headers and every byte together) and ``max_bytes``. Raises what
    ``cut_kind`` and ``cut_text`` read: the client's own cuts, or httpx's errors."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise Deadline()
    with http.stream("GET", url, params=params, timeout=timeout_of(left)) as r:
        return r.status_code, read_body(r, deadline, max_bytes, left)


def check_sizes(body: Any) -> None:
    """Raise TooMany for an embeddings answer whose vectors are longer than MAX_DIMENSIONS (float lists or base64)
    or a /tokenize answer with more than MAX_TOKENS ids."""
    if not isinstance(body, dict):
        return
    tokens = body.get("tokens")
    if isinstance(tokens, list) and len(tokens) > MAX_TOKENS:
        raise TooMany(f"{len(tokens):,} token ids: more than the {MAX_TOKENS:,} tokens cap")
    data = body.get("data")
    if not isinstance(data, list):
        return
    for d in data:
        e = d.get("embedding") if isinstance(d, dict) else None
        dims = len(e) if isinstance(e, list) else len(e) * 3 // 16 if isinstance(e, str) else 0
        if dims > MAX_DIMENSIONS:
            raise TooMany(f"a vector of {dims:,} dimensions: more than the {MAX_DIMENSIONS:,} dimensions cap")


def read_json(resp: httpx.Response, limit: int = 4000) -> Any:
    """A (capped) answer's body as JSON, else its text cut at ``limit``; the parsed-size caps apply (an answer of
    millions of items is refused unparsed: ``ValueError`` saying which cap)."""
    try:
        return json_or_text(resp.content, resp, limit)
    except TooMany as e:
        raise ValueError(f"parsed-size cap: {e}") from None

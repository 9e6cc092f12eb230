"""The load connection: one keep-alive HTTP/1.1 connection that sends prepared request bodies and reads only what a
load test reports (status, latency, prompt tokens), for the throughput probe.

Why not httpx (``triage.http``) here: measured on the 2-core dev box against a local server answering a recorded
vLLM embeddings response at 16 in flight, ``ProbeClient.embed`` spent 1.66 ms of client CPU per request (httpx's
async stack, a task per deadline, JSON decoding of the vectors), aiohttp (what ``vllm bench serve`` sends with) 0.18
ms, this connection 0.05 ms. A load test whose client shares the CPU with the server it measures must cost the server
as little as possible, or it measures itself.

The client's rules are kept (``triage.http`` owns their wording): the headers of ``auth_headers`` (the API key
travels only there), TLS verification unless ``verify_tls=False``, no redirect followed (a 3xx is a status like any
other), a total deadline per request (connect, send, headers and body together: past it the connection is closed,
which makes vLLM abort the request), a cap on every body (a stated Content-Length over it is refused before any body
byte; chunked and close-delimited bodies are counted as they come) and a cap on the header block. Failures are
values (``error_kind`` as in ``triage.http``), never raised. The body is never decoded: ``prompt_tokens`` is read
from the bytes of the ``usage`` object, and a failure's body keeps its first bytes for the message. Environment
proxies are not used (as ``vllm bench serve``'s aiohttp session does not): a load test talks to the server.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import time
from array import array
from dataclasses import dataclass, field
from typing import Optional, Protocol
from urllib.parse import urlsplit

from triage.http.errors import BodyTooLarge as _TooLarge
from triage.http.errors import cut_kind as _kind
from triage.http.errors import cut_text as _error_text

MAX_HEADER_BYTES = 65_536
KEEP_BODY = 4000  # bytes of a failed answer's body kept for its message
_PROMPT_TOKENS_RE = re.compile(rb'"prompt_tokens"\s*:\s*(\d+)')


@dataclass(frozen=True)
class LoadReply:
    """One request's result: status None when no answer came (``error_kind``, ``error`` say why)."""

    status: Optional[int]
    elapsed_s: float
    prompt_tokens: int = 0
    body: bytes = b""  # the whole answer with ``keep_body``; a failure's first KEEP_BODY bytes always
    error_kind: Optional[str] = None
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.status == 200


class Target(Protocol):
    """What a load connection needs of a client: a ``ProbeClient`` has it, and so does a ``LoadTarget`` (what a worker
    process gets)."""

    url: str
    headers: dict[str, str]
    verify_tls: bool
    max_body_bytes: int


@dataclass(frozen=True)
class LoadTarget:
    """A server to load, as plain values (a worker process is handed them on its stdin, never its command line: the
    headers carry the API key)."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    verify_tls: bool = True
    max_body_bytes: int = 1 << 24

    @classmethod
    def of(cls, t: Target) -> LoadTarget:
        return cls(t.url, dict(t.headers), t.verify_tls, t.max_body_bytes)


class Tally:
    """What a load test keeps of its requests, without an object per request: the latencies of the successful ones
    (one float each in an array), their count and prompt tokens, the failures' count per status or error kind, and
    the first failure whole (its message is the evidence). Tallies of several connections or worker processes merge
    into one (``merge``, ``to_wire`` / ``from_wire``)."""

    __slots__ = ("latencies", "tokens", "failed", "first_failure")

    def __init__(self) -> None:
        self.latencies = array("d")
        self.tokens = 0
        self.failed: dict[str, int] = {}
        self.first_failure: Optional[LoadReply] = None

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def requests(self) -> int:
        return len(self.latencies) + sum(self.failed.values())

    def fail(self, reply: LoadReply) -> None:
        key = str(reply.status) if reply.status is not None else (reply.error_kind or "error")
        self.failed[key] = self.failed.get(key, 0) + 1
        if self.first_failure is None:
            self.first_failure = reply

    def merge(self, other: Tally) -> None:
        self.latencies.extend(other.latencies)
        self.tokens += other.tokens
        for k, n in other.failed.items():
            self.failed[k] = self.failed.get(k, 0) + n
        if self.first_failure is None:
            self.first_failure = other.first_failure

    def to_wire(self) -> dict:
        """A JSON-able form (latencies as the array's bytes in hex: 8 bytes a request)."""
        f = self.first_failure
        return {"latencies": self.latencies.tobytes().hex(), "tokens": self.tokens, "failed": self.failed,
                "first_failure": None if f is None else {"status": f.status, "elapsed_s": f.elapsed_s,
                                                         "body": f.body.decode("latin-1"),
                                                         "error_kind": f.error_kind, "error": f.error}}

    @classmethod
    def from_wire(cls, d: dict) -> Tally:
        t = cls()
        t.latencies.frombytes(bytes.fromhex(d["latencies"]))
        t.tokens = d["tokens"]
        t.failed = dict(d["failed"])
        f = d.get("first_failure")
        if f is not None:
            t.first_failure = LoadReply(f["status"], f["elapsed_s"], 0, f["body"].encode("latin-1"),
                                        f["error_kind"], f["error"])
        return t


def prompt_tokens_of(body: bytes) -> int:
    """``usage.prompt_tokens`` of an embeddings answer, read from its bytes (the usage object closes the answer:
    searched from the end); 0 when absent."""
    i = body.rfind(b'"prompt_tokens"', max(0, len(body) - 512))  # vLLM's usage closes the answer
    if i < 0:
        i = body.rfind(b'"prompt_tokens"')
    if i < 0:
        return 0
    m = _PROMPT_TOKENS_RE.match(body, i)
    return int(m.group(1)) if m else 0


def _header(low: bytes, name: bytes) -> bytes:
    """The value of header ``name`` (b"\\r\\nname:", lowered) in a lowered header block; b"" when absent."""
    i = low.find(name)
    if i < 0:
        return b""
    i += len(name)
    return low[i:low.find(b"\r\n", i)]


def _header_int(low: bytes, name: bytes) -> Optional[int]:
    v = _header(low, name)
    return int(v) if v else None


def _kind_of(e: BaseException) -> str:
    """``triage.http``'s error kinds for the socket-level errors httpx would have wrapped."""
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, socket.gaierror):
        return "dns"
    return _kind(e)


class _HeaderTooLarge(_TooLarge):
    def __init__(self, limit: int) -> None:
        Exception.__init__(self, f"header block over {limit} bytes: not read further")


class LoadConnection:
    """One keep-alive connection to the server of a ``ProbeClient`` or ``LoadTarget`` (its URL, headers, TLS
    setting, body cap).

    ``post`` and ``send`` are not re-entrant: one request in flight per connection (a load test opens one per
    worker). The connection opens on first use and again after any failure or a ``Connection: close`` answer."""

    def __init__(self, pc: Target) -> None:
        u = urlsplit(pc.url)
        self.host = u.hostname or "127.0.0.1"
        self.tls = u.scheme == "https"
        self.port = u.port or (443 if self.tls else 80)
        self.prefix = u.path.rstrip("/")
        self.max_body_bytes = pc.max_body_bytes
        self._ssl: Optional[ssl.SSLContext] = None
        if self.tls:
            self._ssl = ssl.create_default_context()
            if not pc.verify_tls:
                self._ssl.check_hostname = False
                self._ssl.verify_mode = ssl.CERT_NONE
        extra = "".join(f"{k}: {v}\r\n" for k, v in pc.headers.items())
        self._headers = (f"Host: {u.netloc.rpartition('@')[2]}\r\n{extra}Content-Type: application/json\r\n"
                         "Accept: application/json\r\n").encode("latin-1")
        self._r: Optional[asyncio.StreamReader] = None
        self._w: Optional[asyncio.StreamWriter] = None

    def close(self) -> None:
        w, self._r, self._w = self._w, None, None
        if w is not None:
            w.close()  # a request in flight is aborted: vLLM cancels it when its connection closes

    async def send(self, path: str, body: bytes, deadline_s: float, tally: Tally) -> bool:
        """``post`` for a load test: a success adds its latency and prompt tokens to ``tally`` (no reply object),
        a failure its ``LoadReply``; True when it succeeded."""
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(deadline_s):
                status, data, close = await self._exchange(path, body)
        except (TimeoutError, _TooLarge, OSError, ValueError, ssl.SSLError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as e:
            tally.fail(self._failed(e, t0, deadline_s))
            return False
        elapsed = time.perf_counter() - t0
        if close:
            self.close()
        if status == 200:
            tally.latencies.append(elapsed)
            tally.tokens += prompt_tokens_of(data)
            return True
        tally.fail(LoadReply(status, elapsed, 0, data[:KEEP_BODY]))
        return False

    def _failed(self, e: BaseException, t0: float, deadline_s: float) -> LoadReply:
        """The reply of a request that got no answer (the connection is closed)."""
        self.close()
        if isinstance(e, TimeoutError):
            return LoadReply(None, time.perf_counter() - t0, error_kind="timeout",
                             error=f"ReadTimeout: no complete answer within {deadline_s:g} s (total deadline)")
        if isinstance(e, asyncio.LimitOverrunError):
            e = _HeaderTooLarge(MAX_HEADER_BYTES)
        return LoadReply(None, time.perf_counter() - t0, error_kind=_kind_of(e), error=_error_text(e))

    async def post(self, path: str, body: bytes, deadline_s: float, keep_body: bool = False) -> LoadReply:
        """POST ``body`` (JSON bytes) to ``path`` within ``deadline_s`` in all; with ``keep_body`` a successful
        answer's bytes are kept too (one sample for the record, decoded after the measurement)."""
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(deadline_s):
                status, data, close = await self._exchange(path, body)
        except (TimeoutError, _TooLarge, OSError, ValueError, ssl.SSLError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as e:
            return self._failed(e, t0, deadline_s)
        elapsed = time.perf_counter() - t0
        if close:
            self.close()
        if status == 200:
            return LoadReply(status, elapsed, prompt_tokens_of(data), data if keep_body else b"")
        return LoadReply(status, elapsed, 0, data[:KEEP_BODY])

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        self._r, self._w = await asyncio.open_connection(self.host, self.port, ssl=self._ssl, limit=MAX_HEADER_BYTES)
        return self._r, self._w

    async def _exchange(self, path: str, body: bytes) -> tuple[int, bytes, bool]:
        reused = self._w is not None
        r, w = (self._r, self._w) if reused else await self._open()
        assert r is not None and w is not None
        request = (b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s"
                   % ((self.prefix + path).encode("latin-1"), self._headers, len(body), body))
        w.write(request)
        try:
            head = await r.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionResetError) as e:
            # a kept-alive connection the server closed while idle answers nothing at all: the request was never
            # read, so it goes once more on a fresh connection (what HTTP clients do for a stale connection)
            if not reused or (isinstance(e, asyncio.IncompleteReadError) and e.partial):
                raise
            self.close()
            r, w = await self._open()
            w.write(request)
            head = await r.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1."):
            raise ValueError("not an HTTP/1.x answer")
        status = int(head[9:12])
        # the three headers a load test needs, found in the lowered block (no object per header line)
        low = head.lower()
        length = _header_int(low, b"\r\ncontent-length:")
        chunked = b"chunked" in _header(low, b"\r\ntransfer-encoding:")
        close = b"close" in _header(low, b"\r\nconnection:")
        cap = self.max_body_bytes
        if chunked:
            return status, await self._chunked(r, cap), close
        if length is not None:
            if length > cap:
                raise _TooLarge(cap)
            return status, await r.readexactly(length), close
        data = await r.read(cap + 1)  # no length: the body ends with the connection
        buf = bytearray(data)
        while data and len(buf) <= cap:
            data = await r.read(cap + 1 - len(buf))
            buf += data
        if len(buf) > cap:
            raise _TooLarge(cap)
        return status, bytes(buf), True

    async def _chunked(self, r: asyncio.StreamReader, cap: int) -> bytes:
        buf = bytearray()
        while True:
            size_line = await r.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while await r.readuntil(b"\r\n") != b"\r\n":  # trailers
                    pass
                return bytes(buf)
            if len(buf) + size > cap:
                raise _TooLarge(cap)
            buf += await r.readexactly(size)
            await r.readexactly(2)

"""A hostile vLLM look-alike on loopback, and a bounded way to run the CLI against it.

Test double, on purpose: no real vLLM echoes the API key into its model ids, dribbles one byte a
second, streams an endless /metrics page, claims a max_model_len of billions or answers
``{"data": ["oops"]}``. The hardening tests need exactly such a server, so this one starts from
the recorded answers of a real 0.32.0 server (tests/fixtures/real/0.32.0-tiny-qwen3-livelock) and
bends them per test through ``Behaviour``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real" / "0.32.0-tiny-qwen3-livelock"
METRICS = (REAL / "metrics-idle.txt").read_text()
KEY = "tk-hostile-7f3a9c1e55b2"  # no sk- prefix: only the exact secret can catch it
URL_PASSWORD = "pw-hostile-91c2e0d7"


@dataclass
class Behaviour:
    echo_key: bool = False  # put the caller's key into model ids, error bodies, /tokenize, /metrics labels
    escape: bool = False  # a model id carrying terminal escape sequences
    slow: tuple[str, ...] = ()  # paths whose answer trickles out one byte a second
    endless_metrics: bool = False  # /metrics as a chunked stream that never ends
    metrics_bytes: int = 0  # /metrics as one page of this many bytes (Content-Length), generated as it is sent
    max_model_len: Any = 256
    bodies: dict[str, Any] = field(default_factory=dict)  # path -> JSON value, or bytes sent as they are
    metrics_text: str | None = None
    status: dict[str, int] = field(default_factory=dict)
    huge: dict[str, int] = field(default_factory=dict)  # path -> an answer of this many bytes, generated as sent
    huge_for_libraries: bool = False  # `huge` only for the client libraries (User-Agent not vllm-triage's)
    seen: list[str] = field(default_factory=list)  # every path asked for, in order (a beacon's fetch shows here)


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 (keep-alive, as real servers), no request log on stderr."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *a: Any) -> None:
        pass

    def trickle(self, body: bytes, stop: threading.Event, pause_s: float) -> None:
        """Send ``body`` one byte per ``pause_s`` until it is all sent or ``stop`` is set."""
        for i in range(len(body)):
            if stop.is_set():
                return
            self.wfile.write(body[i:i + 1])
            self.wfile.flush()
            time.sleep(pause_s)


class LocalServer:
    """A threaded HTTP server on a free loopback port (``url``), served while used as a context manager;
    ``stop`` is set on exit so a handler that trickles can end. Subclasses give the handler class."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._t = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError


class HostileServer(LocalServer):
    def __init__(self, behaviour: Behaviour | None = None) -> None:
        self.b = behaviour or Behaviour()
        super().__init__()

    def model_id(self, key: str) -> str:
        mid = "tiny-qwen3"
        if self.b.echo_key and key:
            mid = f"model-{key}"
        if self.b.escape:
            mid += "\x1b[2J\x1b]0;pwned\x07\x1b[31m"
        return mid

    def answer(self, path: str, key: str) -> Any:
        if path in self.b.bodies:
            return self.b.bodies[path]
        mid = self.model_id(key)
        echo = f" (your key was {key}; Authorization: Bearer {key})" if self.b.echo_key and key else ""
        if path == "/health":
            return b""
        if path == "/version":
            return {"version": "0.32.0"}
        if path == "/v1/models":
            return {"object": "list", "data": [{"id": mid, "object": "model", "root": mid + echo,
                                                "max_model_len": self.b.max_model_len}]}
        if path == "/tokenize":
            return {"count": 3, "max_model_len": self.b.max_model_len, "tokens": [1, 2, 3], "note": echo}
        if path == "/v1/embeddings":
            if echo:
                return {"error": {"message": f"bad request{echo}", "type": "BadRequestError", "code": 400}}
            return {"object": "list", "model": mid, "data": [{"object": "embedding", "index": 0,
                                                              "embedding": [0.1] * 32}],
                    "usage": {"prompt_tokens": 3, "total_tokens": 3}}
        return {"detail": "Not Found" + echo}

    def metrics(self, key: str) -> str:
        text = self.b.metrics_text if self.b.metrics_text is not None else METRICS
        if self.b.echo_key and key:
            text = text.replace('model_name="', f'model_name="{key}-')
        return text

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class H(QuietHandler):
            def _key(self) -> str:
                auth = self.headers.get("Authorization") or ""
                return auth.split(" ", 1)[1] if " " in auth else ""

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                self.do_GET()

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                server.b.seen.append(path)
                key = self._key()
                try:
                    if path == "/metrics" and server.b.endless_metrics:
                        return self._endless()
                    ua = self.headers.get("User-Agent") or ""
                    if path in server.b.huge and not (server.b.huge_for_libraries and ua.startswith("vllm-triage")):
                        return self._huge(server.b.huge[path], b'{"data": [{"index": 0, "embedding": "',
                                          b"AAAA" * (1 << 18), "application/json")
                    if path == "/metrics" and server.b.metrics_bytes:
                        return self._huge(server.b.metrics_bytes)
                    if path == "/metrics":
                        body = server.metrics(key).encode()
                        ctype = "text/plain; version=0.0.4"
                    else:
                        ans = server.answer(path, key)
                        body = ans if isinstance(ans, bytes) else json.dumps(ans).encode()
                        ctype = "application/json"
                    status = server.b.status.get(path, 404 if path not in (
                        "/health", "/version", "/v1/models", "/tokenize", "/v1/embeddings", "/metrics",
                        *server.b.bodies) else 200)
                    if server.b.echo_key and path == "/v1/embeddings" and key:
                        status = 400
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if path in server.b.slow:
                        self.trickle(body, server.stop, 1.0)
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _huge(self, n: int, head: bytes = b"", block: bytes = b"",
                      ctype: str = "text/plain; version=0.0.4") -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                block = block or (b'vllm:num_requests_running{engine="0",model_name="m"} 0\n' * 20000)
                if head:
                    self.wfile.write(head)
                sent = len(head)
                try:
                    while sent < n and not server.stop.is_set():
                        part = block[: n - sent]
                        self.wfile.write(part)
                        sent += len(part)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def _endless(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                line = b'vllm:num_requests_running{engine="0",model_name="m"} 0\n' * 2000
                chunk = f"{len(line):x}\r\n".encode() + line + b"\r\n"
                try:
                    while not server.stop.is_set():
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

        return H


@dataclass
class Result:
    """``elapsed_s`` is the operation's own time (the command, measured inside the child once its modules are
    imported), never the interpreter's start-up: a deadline test bounds what the product does, and passes on a
    loaded box where importing the libraries alone takes seconds. ``wall_s`` is the whole child's wall time."""

    rc: int
    out: str
    err: str
    elapsed_s: float
    wall_s: float = 0.0


# Runs ``triage.cli.main`` in the child with its modules imported first, and writes the operation's seconds to
# the file named by argv[1]: the clock starts after the imports (what a deadline test bounds is the command).
_TIMED = (
    "import importlib, pkgutil, sys, time\n"
    "import triage.cli as c\n"
    "for m in pkgutil.walk_packages(c.__path__, 'triage.cli.'):\n"
    "    importlib.import_module(m.name)\n"
    "for name in ('sqlmodel', 'httpx', 'prometheus_client.parser', 'triage.store', 'triage.recorder'):\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "    except ImportError:\n"
    "        pass\n"
    "t = time.monotonic()\n"
    "try:\n"
    "    rc = c.main(sys.argv[2:])\n"
    "finally:\n"
    "    with open(sys.argv[1], 'w') as f:\n"
    "        f.write(repr(time.monotonic() - t))\n"
    "sys.exit(rc)\n"
)


def _op_seconds(path: Path, wall: float) -> float:
    """The child's own measure of its operation; its wall time when it died before writing one."""
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return wall


def triage(*args: str, timeout: float = 60, env: dict[str, str] | None = None, stdin: bytes | None = None) -> Result:
    """``python -m triage ARGS`` in a subprocess, killed at ``timeout`` (a hang fails the test, it does not
    hold CI). The key is in $HOSTILE_KEY for --api-key-env."""
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))  # keeps tests/pgmode in PG mode
    e = {**os.environ, "HOSTILE_KEY": KEY, "PYTHONPATH": path, **(env or {})}
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        op = Path(d) / "op"
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-c", _TIMED, str(op), *args], capture_output=True, timeout=timeout,
                           env=e, cwd=str(ROOT), input=stdin)
        wall = time.monotonic() - t0
        return Result(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"),
                      _op_seconds(op, wall), wall)


def cli(capsys: Any, *args: str, within_s: float = 60) -> Result:
    """The CLI in-process (main() is what `python -m triage` runs), with its wall time asserted."""
    from triage.cli import main  # noqa: PLC0415 - the hostile servers are imported before the tests set up paths

    t0 = time.monotonic()
    rc = main(list(args))
    cap = capsys.readouterr()
    r = Result(rc, cap.out, cap.err, time.monotonic() - t0)
    assert r.elapsed_s < within_s, f"{args[0]} took {r.elapsed_s:.1f} s (bound {within_s} s)"
    assert "could not run:" not in r.err, r.err  # the catch-all fired: an input nobody handled
    return r


def assert_clean(r: Result, *secrets: str) -> None:
    """Exit ≤ 2, no traceback, no secret and no raw escape character in stdout or stderr."""
    assert r.rc in (0, 1, 2), (r.rc, r.err[-2000:])
    assert "Traceback" not in r.err, r.err[-3000:]
    for s in secrets:
        assert s not in r.out and s not in r.err, f"{s!r} printed"
    assert "\x1b" not in r.out and "\x1b" not in r.err, "raw escape sequence printed"


def db_bytes(db: Path) -> bytes:
    """The database and its WAL/SHM files, as bytes (a secret in any of them counts); in PG mode its rows."""
    from tests.stored import stored_bytes

    return stored_bytes(db)


@dataclass
class Measured(Result):
    peak_mb: float = 0.0


_WRAP = (
    "import resource, subprocess, sys\n"
    "out, err = open(sys.argv[1], 'wb'), open(sys.argv[2], 'wb')\n"
    "try:\n"
    "    rc = subprocess.run(sys.argv[4:], stdout=out, stderr=err, timeout=float(sys.argv[3])).returncode\n"
    "except subprocess.TimeoutExpired:\n"
    "    rc = 124\n"
    "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
)


def measured(*args: str, timeout: float = 60, env: dict[str, str] | None = None, python: bool = False) -> Measured:
    """``python -m triage ARGS`` (or ``python ARGS`` with ``python``) under a one-child wrapper: its exit code,
    output, the operation's time (the wall time for a ``python`` script) and peak RSS (RUSAGE_CHILDREN of the
    wrapper is the command's). Killed at ``timeout``
    (rc 124)."""
    import tempfile

    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    e = {**os.environ, "HOSTILE_KEY": KEY, "PYTHONPATH": path, **(env or {})}
    with tempfile.TemporaryDirectory() as d:
        o, r, op = Path(d) / "out", Path(d) / "err", Path(d) / "op"
        cmd = [sys.executable, *(args if python else ["-c", _TIMED, str(op), *args])]
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-c", _WRAP, str(o), str(r), str(timeout), *cmd], capture_output=True,
                           text=True, env=e, cwd=str(ROOT), timeout=timeout + 30)
        wall = time.monotonic() - t0
        rc, peak = p.stdout.split()
        return Measured(int(rc), o.read_bytes().decode("utf-8", "replace"), r.read_bytes().decode("utf-8", "replace"),
                        wall if python else _op_seconds(op, wall), wall, float(peak))

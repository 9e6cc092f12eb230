"""A hostile Prometheus on loopback: ``/api/v1/query_range`` answers that trickle, run to hundreds of MB, hold
300,000 series, are JSON of another shape in one chunk, or carry a newline in a label; ``/version`` (a replica)
that trickles or is huge.

Test double, on purpose: no real Prometheus answers like this (tests/fleet runs the real one); the hardening
tests need exactly such answers. A good answer is shaped like Prometheus 2.42's (tests/fleet, real).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from hostile import LocalServer, QuietHandler  # tests/hardening is on sys.path (the tests import it so)


def good(query: str, start: float, end: float, step: float, label: str = "10.0.0.7:8000") -> bytes:
    """A Prometheus-shaped answer: one idle replica over the window."""
    n = int((end - start) / step) + 1
    values = [[start + i * step, "0"] for i in range(n)]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"job": "vllm", "instance": label, "engine": "0"}, "values": values}]}}).encode()


MANY = ('{"status":"success","data":{"result":[' + ",".join(
    f'{{"metric":{{"i":"{i}"}},"values":[]}}' for i in range(300_000)) + "]}}").encode()  # 300,000 series, ~11 MB


class HostileProm(LocalServer):
    """``mode``: trickle | huge | many-series | one-bad-chunk | label-newline | version-trickle | version-huge |
    discovery-trickle (/api/v1/targets and /api/v1/query trickle; the range queries answer well)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.calls = 0
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class H(QuietHandler):
            def _send(self, body: bytes, length: int | None = None, trickle: bool = False) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length if length is not None else len(body)))
                self.end_headers()
                try:
                    if trickle:
                        self.trickle(body, srv.stop, 0.5)
                    elif length is not None:  # stream `length` bytes made of `body` repeated
                        sent = 0
                        while sent < length and not srv.stop.is_set():
                            part = body[: length - sent]
                            self.wfile.write(part)
                            sent += len(part)
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def do_GET(self) -> None:
                u = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query).items()}
                srv.calls += 1
                if u.path == "/version":
                    if srv.mode == "version-huge":
                        return self._send(b'{"version": "' + b"9" * (1 << 20), length=700 << 20)
                    return self._send(b'{"version": "0.31.0"}', trickle=srv.mode == "version-trickle")
                if srv.mode == "discovery-trickle" and u.path in ("/api/v1/targets", "/api/v1/query"):
                    return self._send(b'{"status": "success", "data": {"activeTargets": []}}' + b" " * 4096,
                                      trickle=True)  # interval discovery's every answer, one byte every 0.5 s
                if u.path != "/api/v1/query_range":
                    return self._send(b'{"status": "error", "errorType": "not_found", "error": "no"}')
                query, start, end, step = q.get("query", ""), float(q["start"]), float(q["end"]), float(q["step"])
                if srv.mode == "trickle":
                    return self._send(good(query, start, end, step), trickle=True)
                if srv.mode == "huge":
                    return self._send(b'{"status":"success","data":{"result":[' + b" " * (1 << 20), length=400 << 20)
                if srv.mode == "many-series":
                    return self._send(MANY)
                if srv.mode == "one-bad-chunk" and "num_requests_waiting" in query:
                    return self._send(b'{"status":"success","data":{"result":[{"metric":{},"values":[[1,"1"],"x"]},'
                                      b' 5, {"metric": [1], "values": {"a": 1}}]}}')
                if srv.mode == "one-bad-chunk" and "prompt_tokens" in query:
                    return self._send(b"[1, 2, 3]")
                if srv.mode == "label-newline":
                    return self._send(good(query, start, end, step, label="10.0.0.7:8000\n[PASS] forged: all clean"))
                return self._send(good(query, start, end, step))

        return H

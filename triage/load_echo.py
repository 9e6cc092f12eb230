"""A trivial local HTTP/1.1 server for measuring the load generator alone: every request is answered with one
prepared answer (a real server's own answer bytes), so what limits the rate is the client, not a server.

Run as ``python -m triage.load_echo [PROCESSES]`` (standard library only: it starts in a few tens of milliseconds):
it reads the answer's body from stdin, listens on 127.0.0.1 on a free port, prints the port and serves until
terminated; with PROCESSES > 1 that many processes accept on the one socket (the others are forked children that
end when this process does), so several client processes do not measure one server process.
``/__cpu`` answers the CPU seconds the server process has used so far (so the caller can tell whether this server,
rather than the client, was near a core). It parses only what it must: the end of the header block and
Content-Length.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time


def _response(body: bytes, content_type: bytes = b"application/json") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nserver: triage-load-echo\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n"
            % (content_type, len(body)) + body)


class _Echo(asyncio.Protocol):
    answer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.t: asyncio.Transport = transport  # type: ignore[assignment]
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        out = []
        while (i := buf.find(b"\r\n\r\n")) >= 0:
            head = buf[:i].lower()
            j = head.find(b"\r\ncontent-length:")
            n = int(head[j + 17:head.find(b"\r\n", j + 17) if head.find(b"\r\n", j + 17) > 0 else None]) \
                if j >= 0 else 0
            if len(buf) < i + 4 + n:
                break
            buf = buf[i + 4 + n:]
            out.append(_response(b"%.6f" % time.process_time(), b"text/plain") if b" /__cpu " in head[:80]
                       else self.answer)
        self.buf = buf
        if out:
            self.t.write(b"".join(out))


async def _serve(sock: socket.socket, parent: int | None) -> None:
    srv = await asyncio.get_running_loop().create_server(_Echo, sock=sock, backlog=1024)
    async with srv:
        if parent is None:
            await srv.serve_forever()
        while os.getppid() == parent:  # a forked child ends with the process that started it
            await asyncio.sleep(0.5)


def main() -> None:
    _Echo.answer = _response(sys.stdin.buffer.read())
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    parent = None
    for _ in range(n - 1):
        if os.fork() == 0:
            parent = os.getppid()
            break
    if parent is None:
        print(sock.getsockname()[1], flush=True)
    try:
        asyncio.run(_serve(sock, parent))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

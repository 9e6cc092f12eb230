"""Files, devices and stdin as CLI inputs, bounded: a byte cap on every stream, lines cut at the parser's line cap,
and a head-and-tail view of a log that is read streaming (never whole into memory).

``/dev/zero`` given as a log, a FIFO that never ends, a 200 MB log for ``check`` (which needs only its start-up
part): each is read line by line within MAX_STREAM_BYTES and refused with one line naming the cap past it.
"""
from __future__ import annotations

import os
import stat
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from typing import IO

from triage.cli import CommandError
from triage.display import left_out

MAX_STREAM_BYTES = 1 << 30  # a stream (stdin, a device, a FIFO) read at most this far: 1 GiB
LOGS_STREAM_BYTES = 256 << 20  # `logs` parses every line (~10 MB/s on junk): a stream past this is refused (~25 s)
MAX_SMALL_BYTES = 8 << 20  # a command line or a recorded NVML JSON: a few KB in practice
CHECK_LOG_KEEP_CHARS = 16 << 20  # what `check` keeps of a log: its head (start-up) and tail, 8 MiB each
MAX_LINE = 1 << 20  # = triage.logs.lines.MAX_LINE (a copy: importing triage.logs costs ~100 ms; a test compares)
CAPTURE_MAX_CHARS = 2_000_000  # triage.logs.persist.CAPTURE_MAX_CHARS: what a stored log capture keeps


class HeadTail:
    """Pass lines through while keeping the first and last ~limit/2 characters (for the stored capture)."""

    def __init__(self, lines: Iterable[str], limit: int = CAPTURE_MAX_CHARS) -> None:
        self._lines, self._half = lines, limit // 2
        self.head: list[str] = []
        self.tail: deque[str] = deque()
        self._head_n = self._tail_n = 0
        self.skipped = 0

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            if self._head_n < self._half:
                self.head.append(line)
                self._head_n += len(line)
            else:
                self.tail.append(line)
                self._tail_n += len(line)
                while self._tail_n > self._half and self.tail:
                    gone = self.tail.popleft()
                    self._tail_n -= len(gone)
                    self.skipped += len(gone)
            yield line

    def text(self) -> str:
        mid = left_out(self.skipped) if self.skipped else ""
        return "".join(self.head) + mid + "".join(self.tail)


def is_regular(path: str) -> bool:
    try:
        return path != "-" and stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def capped_lines(f: IO[str], what: str, limit: int = MAX_STREAM_BYTES) -> Iterator[str]:
    """Lines of ``f`` (at most MAX_LINE characters each); a CommandError naming the cap once ``limit`` characters
    have been read."""
    n = 0
    while True:
        line = f.readline(MAX_LINE)
        if not line:
            return
        n += len(line)
        if n > limit:
            raise CommandError(f"{what}: more than {_size(limit)} read (byte cap): not read further")
        yield line


def _size(n: int) -> str:
    for unit, b in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= b:
            return f"{n / b:g} {unit}"
    return f"{n} bytes"


def read_small(path: str, what: str, stdin_used: list[bool], limit: int = MAX_SMALL_BYTES) -> str:
    """A small text input (a command line, a JSON) whole, at most ``limit`` characters; '-' is stdin (once)."""
    with _open(path, stdin_used) as f:
        text = f.read(limit + 1)
    if len(text) > limit:
        raise CommandError(f"{what} {path}: larger than {_size(limit)} (size cap): not read further")
    return text


def read_log_head_tail(path: str, stdin_used: list[bool], keep: int = CHECK_LOG_KEEP_CHARS,
                       limit: int = MAX_STREAM_BYTES, flag: str = "--log-file") -> str:
    """A log streamed line by line, kept as its first and last ``keep``/2 characters (the start-up lines are at
    its head); a regular file is read whatever its size, a stream within ``limit``."""
    cap = limit if not is_regular(path) else 1 << 62
    with _open(path, stdin_used) as f:
        tee = HeadTail(capped_lines(f, f"{flag} {path}", cap), keep)
        for _ in tee:
            pass
        return tee.text()


class _Stdin:
    def __enter__(self) -> IO[str]:
        return sys.stdin

    def __exit__(self, *exc: object) -> None:
        pass


def _open(path: str, stdin_used: list[bool]) -> IO[str] | _Stdin:
    if path == "-":
        if stdin_used:
            raise ValueError("only one of --cmdline-file/--log-file/--kube-file can be '-'")
        stdin_used.append(True)
        return _Stdin()
    return open(path, encoding="utf-8", errors="replace", newline="")

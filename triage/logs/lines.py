"""Read a vLLM server log as a stream of framed records: timestamp, process, level, message.

Robust to ANSI colour, `(APIServer pid=…)` prefixes, docker/kubectl ISO timestamps, records of
two processes interleaved on one physical line, and over-long lines (cut at MAX_LINE chars so a
multi-megabyte line cannot blow memory). A collector's prefix (`docker logs -t`, `kubectl logs
--timestamps`: RFC 3339 with nanoseconds and a zone) is the record's time when present: it has a zone and
sub-second resolution, and the uvicorn access lines and request-lifecycle lines between vLLM's records get one
on the same clock. vLLM's own timestamps carry no year and no zone: they
are read as UTC in ``year`` (default: the current year, or the previous one when that would put
them in the future), with a roll-over when the month goes backwards (31 Dec → 1 Jan).
"""

from __future__ import annotations

import io
import os
import re
from functools import partial
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import IO, Optional, Union
from collections.abc import Iterable, Iterator

from triage.vllm import logformats as lf

MAX_LINE = 1 << 20  # 1 MiB: longer physical lines are read in pieces

LogSource = Union[str, bytes, os.PathLike, IO[str], IO[bytes], Iterable[str]]


@dataclass(frozen=True)
class LogLine:
    """One log record (or a stray physical line): where it is and what it says."""

    lineno: int  # 1-based physical line number
    raw: str  # the line without ANSI codes and trailing newline
    msg: str  # the message part (everything after the record header)
    ts: Optional[float] = None  # unix seconds, when the line carried a timestamp
    level: Optional[str] = None
    process: Optional[str] = None  # APIServer | EngineCore | Worker | …
    pid: Optional[int] = None


def physical_lines(source: LogSource) -> Iterator[str]:
    """Yield physical lines from a path, '-' is not handled here, text, bytes, a file or an iterable."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    if isinstance(source, str) and ("\n" in source or not _is_file(source)):
        yield from io.StringIO(source)
        return
    if isinstance(source, (str, os.PathLike)):
        with open(Path(source), encoding="utf-8", errors="replace", newline="") as f:
            yield from iter(partial(f.readline, MAX_LINE), "")  # C-level loop: no generator frame per line
        return
    if hasattr(source, "readline"):
        f = source  # type: ignore[assignment]
        if isinstance(getattr(f, "mode", ""), str) and "b" in getattr(f, "mode", ""):
            f = io.TextIOWrapper(f, encoding="utf-8", errors="replace")  # type: ignore[arg-type]
        yield from _read_bounded(f)  # type: ignore[arg-type]
        return
    for line in source:  # an iterable of lines (list, generator)
        yield line.decode("utf-8", "replace") if isinstance(line, bytes) else line


def _is_file(s: str) -> bool:
    try:
        return len(s) < 4096 and os.path.isfile(s)
    except (OSError, ValueError):
        return False


def _read_bounded(f: IO[str]) -> Iterator[str]:
    while True:
        chunk = f.readline(MAX_LINE)
        if not chunk:
            return
        if isinstance(chunk, bytes):
            chunk = chunk.decode("utf-8", "replace")
        yield chunk


_TS_MIN = datetime(1, 1, 2, tzinfo=UTC).timestamp()
_TS_MAX = datetime(9999, 12, 30, tzinfo=UTC).timestamp()

class Clock:
    """Turns vLLM's year-less `MM-DD HH:MM:SS` into unix seconds, rolling the year forward."""

    def __init__(self, year: int | None = None) -> None:
        self.year = year
        self._last_month: int | None = None
        self._cache: dict[str, float] = {}
        self.calls = 0  # vllm() calls: a reading that made none left the clock as it was

    def vllm(self, md: str, hms: str) -> Optional[float]:
        self.calls += 1
        month, day = int(md[:2]), int(md[3:5])
        if self.year is None:
            now = datetime.now(UTC)
            self.year = now.year if (month, day) <= (now.month, now.day + 1) else now.year - 1
        if self._last_month is not None and month < self._last_month:
            self.year += 1
            self._cache.clear()
        self._last_month = month
        key = md + " " + hms
        ts = self._cache.get(key)
        if ts is None:
            try:
                dt = datetime(self.year, month, day, int(hms[:2]), int(hms[3:5]), int(hms[6:8]), tzinfo=UTC)
            except ValueError:
                return None
            ts = dt.timestamp()
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = ts
        return ts

    @staticmethod
    def iso(date: str, time: str, frac: str | None, tz: str | None) -> Optional[float]:
        # a zone like +99:99 or a year at the edge (9999-12-31T23:59:59-14:00 is year 10000 in UTC): the line has
        # no usable time, the post-mortem goes on (issue 33)
        try:
            dt = datetime.fromisoformat(f"{date}T{time}")
            if tz and tz != "Z":
                tz = tz if ":" in tz else tz[:3] + ":" + tz[3:]
                dt = datetime.fromisoformat(f"{date}T{time}{tz}")
            else:
                dt = dt.replace(tzinfo=UTC)
            ts = dt.timestamp()
        except (ValueError, OverflowError, OSError):
            return None
        if not _TS_MIN <= ts <= _TS_MAX:  # renders as no date (year 10000 in UTC): no usable time either
            return None
        if frac:
            ts += float("0." + frac[:6])
        return ts


def frame(raw: str, lineno: int, clock: Clock) -> list[LogLine]:
    """Split one physical line into records and read each record's header."""
    if "\x1b" in raw:
        raw = lf.ANSI_RE.sub("", raw)
    raw = raw.rstrip("\r\n")
    iso_ts: Optional[float] = None
    body = raw
    c = body[:1]
    # ISO_PREFIX_RE can only match a line that starts with a digit, '[' or white space: skip the regex otherwise
    m = lf.ISO_PREFIX_RE.match(body) if c and (c.isdigit() or c == "[" or c.isspace()) else None
    if m:
        iso_ts = clock.iso(m["date"], m["time"], m["frac"], m["tz"])
        body = body[m.end() :]
    parts = lf.EMBEDDED_RECORD_RE.split(body) if body.count(" pid=") > 1 else [body]
    out = []
    for part in parts:
        out.append(_record(part, raw, lineno, clock, iso_ts))
    return out


# The common record, `(Proc pid=N) LEVEL MM-DD HH:MM:SS [src:line] msg`, read in one match: the same groups as
# PROC_PREFIX_RE followed by VLLM_RECORD_RE (anything else takes the step-by-step path below).
FAST_RECORD_RE = re.compile(
    r"(?:" + lf.PROC_PREFIX_RE.pattern + r")?" + lf.VLLM_RECORD_RE.pattern.removeprefix("^")
)


def _record(body: str, raw: str, lineno: int, clock: Clock, iso_ts: Optional[float]) -> LogLine:
    f = FAST_RECORD_RE.match(body)
    if f is not None:
        ts = clock.vllm(f["md"], f["hms"])
        pid_s = f["pid"]
        return LogLine(
            lineno,
            raw,
            f["msg"],
            iso_ts if iso_ts is not None else ts,
            f["level"],
            f["proc"],
            int(pid_s) if pid_s is not None else None,
        )
    process = pid = None
    m = lf.PROC_PREFIX_RE.match(body)
    if m:
        process, pid = m["proc"], int(m["pid"])
        body = body[m.end() :]
    r = lf.VLLM_RECORD_RE.match(body)
    if r:
        ts = clock.vllm(r["md"], r["hms"])
        return LogLine(lineno, raw, r["msg"], iso_ts if iso_ts is not None else ts, r["level"], process, pid)
    if len(body) > 24 and ("INFO " in body or "WARNING " in body or "ERROR " in body or "DEBUG " in body):
        r = lf.VLLM_RECORD_ANYWHERE_RE.search(body)
        if r:
            ts = clock.vllm(r["md"], r["hms"])
            return LogLine(lineno, raw, r["msg"], iso_ts if iso_ts is not None else ts, r["level"], process, pid)
    r2 = lf.LEVEL_ONLY_RE.match(body)
    if r2:
        return LogLine(lineno, raw, r2["msg"], iso_ts, r2["level"], process, pid)
    return LogLine(lineno, raw, body, iso_ts, None, process, pid)


def iter_records(source: LogSource, year: int | None = None) -> Iterator[LogLine]:
    """Stream the log's records in order; memory stays bounded by the longest line."""
    clock = Clock(year)
    for n, raw in enumerate(physical_lines(source), start=1):
        yield from frame(raw, n, clock)


def times_zoned(text: str, sample: int = 200) -> bool:
    """Whether the log's record times carry a zone (a `--timestamps` RFC 3339 prefix with one on every record
    line of the first ``sample``): else they are the server's wall clock, zone unknown, and a chart or table
    must not call them UTC (they are read as UTC numbers only to be placed on one axis)."""
    seen = 0
    for raw in text.splitlines():
        if not raw.strip():
            continue
        m = lf.ISO_PREFIX_RE.match(raw)
        if m is None or not m["tz"]:
            return False
        seen += 1
        if seen >= sample:
            break
    return seen > 0

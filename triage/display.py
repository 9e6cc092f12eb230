"""How the faces show an instant, a KV cache usage and a long text: one way each, for the CLI, the findings'
evidence, the dashboard and the reports.

Instants are UTC (a log's, a scrape's or Prometheus' time; the server's zone is not known). vLLM's KV cache gauge
is a fraction (0.002 is 0.2 %): every face shows it in percent. A long text (a log) is kept as its head and its
tail, with one marker line saying how much was left out between them.
"""
from __future__ import annotations

from datetime import datetime, UTC
from typing import Optional, overload

NONE_TEXT = "-"


@overload
def utc_text(ts: float) -> str: ...
@overload
def utc_text(ts: None) -> None: ...
@overload
def utc_text(ts: Optional[float]) -> Optional[str]: ...
def utc_text(ts: Optional[float]) -> Optional[str]:
    """'2026-12-01 21:00:25' (UTC); None for None."""
    return None if ts is None else datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")


def utc_clock(ts: Optional[float], missing: str = NONE_TEXT) -> str:
    """'21:00:25' (UTC); ``missing`` for None."""
    return missing if ts is None else datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S")


def utc_iso(ts: float) -> str:
    """'2026-12-01T21:00:25Z': ISO 8601, UTC, to the second."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def kv_percent(fraction: Optional[float], digits: Optional[int] = None) -> Optional[float]:
    """vLLM's KV cache usage fraction in percent (rounded to ``digits`` when given); None for None."""
    if fraction is None:
        return None
    pct = 100 * fraction
    return round(pct, digits) if digits is not None else pct


def kv_percent_text(fraction: Optional[float]) -> str:
    """'12.5%'; '-' for None."""
    pct = kv_percent(fraction)
    return NONE_TEXT if pct is None else f"{pct:.1f}%"


def left_out(chars: int, by: str = "") -> str:
    """The one marker line for what a head-and-tail view left out (``by``: who cut it)."""
    return f"… [{chars} characters left out{' by ' + by if by else ''}] …\n"


def head_and_tail(text: str, limit: int, *, whole_lines: bool = False, by: str = "") -> str:
    """``text`` when it fits ``limit`` characters, else its first and last ``limit // 2`` characters around the
    ``left_out`` marker; ``whole_lines``: the head and the tail are cut back to whole lines."""
    if len(text) <= limit:
        return text
    half = limit // 2
    head, tail = text[:half], text[len(text) - half:]
    if whole_lines:
        head, tail = head[: head.rfind("\n") + 1], tail[tail.find("\n") + 1:]
        return head + left_out(len(text) - len(head) - len(tail), by) + tail
    return head + "\n" + left_out(len(text) - len(head) - len(tail), by) + tail

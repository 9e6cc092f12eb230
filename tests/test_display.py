"""triage.display: one way to show an instant, a KV cache usage and a long text's head and tail."""
from __future__ import annotations

import pytest

from triage.display import head_and_tail, kv_percent, kv_percent_text, left_out, utc_clock, utc_iso, utc_text

TS = 1764622825.0  # 2025-12-01 21:00:25 UTC


def test_instants_are_utc() -> None:
    assert utc_text(TS) == "2025-12-01 21:00:25"
    assert utc_clock(TS) == "21:00:25"
    assert utc_iso(TS) == "2025-12-01T21:00:25Z"
    assert utc_text(None) is None and utc_clock(None) == "-" and utc_clock(None, "—") == "—"


@pytest.mark.parametrize(("fraction", "digits", "pct", "text"), [
    pytest.param(0.002, None, 0.2, "0.2%", id="a-fraction-in-percent"),
    pytest.param(0.123456, 3, 12.346, "12.3%", id="rounded-when-asked"),
    pytest.param(None, 3, None, "-", id="missing-stays-missing"),
])
def test_kv_usage_in_percent(fraction: float | None, digits: int | None, pct: float | None, text: str) -> None:
    got = kv_percent(fraction, digits)
    assert got == pytest.approx(pct) if pct is not None else got is None
    assert kv_percent_text(fraction) == text


def test_a_text_that_fits_is_kept_whole() -> None:
    assert head_and_tail("abc\n", 10) == "abc\n"


def test_head_and_tail_say_how_much_was_left_out() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    out = head_and_tail(text, 100)
    assert out.startswith(text[:50]) and out.endswith(text[-50:])
    assert left_out(len(text) - 100) in out
    lines = head_and_tail(text, 100, whole_lines=True, by="lab matrix")
    head, mid, tail = lines.partition("… [")
    assert head.endswith("\n") and tail.split("\n", 1)[1].startswith("line ")
    assert "characters left out by lab matrix] …\n" in lines
    kept = len(head) + len(tail.split("\n", 1)[1])
    assert f"[{len(text) - kept} characters" in lines

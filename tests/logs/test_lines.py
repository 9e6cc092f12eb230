"""Framing of recorded real log lines: prefixes, ANSI colour, other timestamp forms, interleaving.

The variants (colour codes, a docker ISO prefix, two records on one physical line) are made by
wrapping lines recorded from the real 0.31.0 server, the way terminals and log shippers do.
"""

from __future__ import annotations

from datetime import datetime, UTC

import pytest

from tests.logs.real_logs import LIVELOCK_031, first_line
from triage.logs.lines import Clock, frame, iter_records

STATS = first_line(LIVELOCK_031, "21:09:07 [loggers.py:320] Engine 000").rstrip("\n")
ACCESS = first_line(LIVELOCK_031, '"POST /v1/embeddings HTTP/1.1" 200').rstrip("\n")
TS_2126 = datetime(2026, 11, 29, 21, 9, 7, tzinfo=UTC).timestamp()


def test_vllm_record_header() -> None:
    assert "21:09:07" in STATS  # the recorded stall line
    [rec] = frame(STATS, 7, Clock(2026))
    assert rec.process == "APIServer" and rec.pid == 5804 and rec.level == "INFO"
    assert rec.ts == TS_2126
    assert rec.msg.startswith("Engine 000: Avg prompt throughput: 0.0 tokens/s")


@pytest.mark.parametrize(
    ("wrapped", "frac"),
    [
        pytest.param("\x1b[32m" + STATS.replace("INFO", "INFO\x1b[0m", 1), 0.0, id="ansi-colour"),
        # the collector's time wins: it has a zone and sub-second resolution (issue 21: 5 s hangs in a docker log)
        pytest.param("2026-11-29T21:09:07.123456789Z " + STATS, 0.123456, id="docker-timestamps"),
        pytest.param(STATS + "\r\n", 0.0, id="crlf"),
        pytest.param("Nov 29 21:09:07 gpu-node-1 vllm[5804]: " + STATS.split(") ", 1)[1], 0.0, id="syslog-journald"),
    ],
)
def test_wrapped_lines_keep_message_and_time(wrapped: str, frac: float) -> None:
    [rec] = frame(wrapped, 1, Clock(2026))
    assert rec.msg.startswith("Engine 000: Avg prompt throughput: 0.0 tokens/s")
    assert rec.ts == pytest.approx(TS_2126 + frac, abs=1e-6)


def test_iso_prefix_is_the_time_when_the_record_has_none() -> None:
    body = STATS.split("] ", 1)[1]  # the bare message, as `--log-format` overrides leave it
    [rec] = frame("2026-11-29 21:09:07,500 " + body, 1, Clock(2026))
    assert rec.ts == pytest.approx(TS_2126 + 0.5)


def test_two_records_on_one_physical_line() -> None:
    recs = frame(STATS + STATS, 1, Clock(2026))
    assert len(recs) == 2 and all(r.msg.startswith("Engine 000:") for r in recs)


def test_access_line_without_vllm_header() -> None:
    [rec] = frame(ACCESS, 3, Clock(2026))
    assert rec.level == "INFO" and '"POST /v1/embeddings HTTP/1.1" 200' in rec.msg and rec.ts is None


def test_year_rolls_over_when_month_goes_back() -> None:
    c = Clock(2025)
    a = c.vllm("12-31", "23:59:59")
    b = c.vllm("01-01", "00:00:09")
    assert b is not None and a is not None and b - a == 10


def test_sources_text_path_file_and_iterable_agree(tmp_path) -> None:  # noqa: ANN001
    text = LIVELOCK_031.read_text()
    by_path = [r.msg for r in iter_records(LIVELOCK_031, year=2026)]
    by_text = [r.msg for r in iter_records(text, year=2026)]
    with open(LIVELOCK_031, "rb") as f:
        by_file = [r.msg for r in iter_records(f, year=2026)]
    by_lines = [r.msg for r in iter_records(text.splitlines(keepends=True), year=2026)]
    assert by_path == by_text == by_file == by_lines and len(by_path) > 100

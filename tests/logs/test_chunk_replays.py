"""The chunked scan's replays change nothing: a log of recorded logs mixing every shape, read line by line and chunked.

The chunked scan (triage.logs.chunks) reads what repeats once and replays it: a stats record's plan (its values
unpacked once per distinct message), a repeat of a block of access lines whose keys are all counted (added inline),
a run of other lines between two records (their readings planned once). A log that repeats recorded logs of every
shape (stats lines of a livelock and of a queue, start-up lines, tracebacks, progress bars, uvicorn's own lines,
access lines) reads the same by the chunked scan as by LogPass.line one line at a time, with chunk ends everywhere
and with the memos emptied on the way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.logs import golden
from tests.logs.real_logs import LOGS
from triage.logs import chunks, driver

# recorded logs, each of a different shape (never invented lines)
MIXED = (
    "0.31.0-tiny-qwen3-livelock-livelock-031.log",  # start-up, stats (livelock), access blocks
    "0.32.0-minilm-bert-waiting-waiting-bert.log",  # stats (stuck waiting), chunked prefill disabled
    "0.32.0-tiny-qwen3-kv-too-small.log",  # tracebacks, a start-up refusal
    "0.31.0-tiny-qwen3-livelock-seed-matrices.log",  # several hangs, stats with waiting, abort lines
    "0.32.0-tiny-qwen3-head-dim-16.log",  # an engine failure after start-up
)


def _write_mixed(path: Path, rounds: int = 3) -> None:
    parts = [(LOGS / name).read_bytes() for name in MIXED]
    # the start-up lines of the first log, from its first banner record (a run of records the tail alone reads) on:
    # the log begins and ends with them (its first and last times read from such a run)
    startup = b"".join((LOGS / MIXED[0]).read_bytes().splitlines(keepends=True)[2:59])
    with open(path, "wb") as f:
        f.write(startup)
        for _ in range(rounds):  # repeats: the memos and plans are replayed, not only built
            for data in parts:
                f.write(data if data.endswith(b"\n") else data + b"\n")
        f.write(startup)


def _by_line(path: Path) -> dict[str, Any]:
    saved = driver.BATCH_LINES
    driver.BATCH_LINES = False  # every line through LogPass.line
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return golden.analyze(f)
    finally:
        driver.BATCH_LINES = saved


@pytest.mark.parametrize("block", [1 << 19, 4096, 997])
def test_a_log_mixing_recorded_shapes_reads_the_same_chunked_and_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    path = tmp_path / "mixed.log"
    _write_mixed(path)
    want = _by_line(path)
    assert want["summary"]["stats"]["lines"] > 100 and want["summary"]["access"]["total"] > 500
    assert want["summary"]["episodes"] and want["findings"]
    monkeypatch.setattr(chunks, "BLOCK", block)
    assert golden.analyze(path) == want
    monkeypatch.setattr(chunks, "MEMO_ENTRIES", 16)  # the block memo and its repeats emptied on the way
    assert golden.analyze(path) == want

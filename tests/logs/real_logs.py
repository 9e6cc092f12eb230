"""Paths and lines of the recorded real logs the log tests read (see tests/fixtures/real/logs/README.md)."""

from __future__ import annotations

from pathlib import Path

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
LOGS = REAL / "logs"
LIVELOCK_031 = LOGS / "0.31.0-tiny-qwen3-livelock-livelock-031.log"
HANG_FROM_IDLE_031 = LOGS / "0.31.0-tiny-qwen3-livelock-hang-from-idle.log"
WAITING_BERT = LOGS / "0.32.0-minilm-bert-waiting-waiting-bert.log"
KV_TOO_SMALL_032 = LOGS / "0.32.0-tiny-qwen3-kv-too-small.log"
STARTUP_031 = REAL / "0.31.0-tiny-qwen3-livelock" / "server.log"
STARTUP_032 = REAL / "0.32.0-tiny-qwen3-livelock" / "server.log"
STARTUP_BERT = REAL / "0.32.0-minilm-bert-waiting" / "server.log"

# Quoted from the issue (and vllm #55427): the two seed lines, as pasted, no timestamps.
SEED_LINES = [
    "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
    "Running: 1 reqs, Waiting: 0 reqs",
    "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
    "Running: 4 reqs, Waiting: 0 reqs",
]


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def first_line(path: Path, needle: str) -> str:
    return next(line for line in lines_of(path) if needle in line)

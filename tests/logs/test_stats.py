"""The periodic stats line, read from recorded 0.31.0/0.32.0 lines (and their documented variants)."""

from __future__ import annotations

import pytest

from tests.logs.real_logs import LIVELOCK_031, SEED_LINES, WAITING_BERT, first_line
from triage.logs.stats import BoundedSeries, parse_stats

CPU_LINE = first_line(LIVELOCK_031, "Running: 4 reqs").split("] ", 1)[1].rstrip("\n")
BERT_LINE = first_line(WAITING_BERT, "Waiting: 1 reqs").split("] ", 1)[1].rstrip("\n")


def test_recorded_cpu_line_with_prefix_cache() -> None:
    [p] = parse_stats(CPU_LINE)
    assert (p.engine, p.num_requests_running, p.num_requests_waiting, p.prompt_throughput) == ("000", 4, 0, 16.4)
    assert p.extra["kv_device"] == "CPU" and p.kv_cache_usage_perc == pytest.approx(0.008)
    assert p.prefix_cache_hit_rate == 0.0 and p.throughput_progress
    assert p.source == "log" and p.prompt_tokens_total is None  # a log line has no counters: None, not 0


def test_recorded_bert_line_has_no_prefix_cache_field() -> None:
    [p] = parse_stats(BERT_LINE)
    assert (p.num_requests_running, p.num_requests_waiting, p.prefix_cache_hit_rate) == (0, 1, None)


@pytest.mark.parametrize(
    "line,engine,device",
    [
        # vllm/v1/metrics/loggers.py: "GPU" when device_type == "cuda"; "{N} Engines Aggregated: " with DP
        pytest.param(CPU_LINE.replace("CPU KV", "GPU KV"), "000", "GPU", id="gpu-kv-label"),
        pytest.param(
            CPU_LINE.replace("Engine 000: ", "2 Engines Aggregated: "), "aggregated:2", "CPU", id="aggregated"
        ),
        pytest.param(CPU_LINE.replace(", Prefix cache hit rate: 0.0%", ""), "000", "CPU", id="no-optional"),
        pytest.param(
            CPU_LINE.replace("Waiting: 0 reqs,", "Waiting: 0 reqs, Preemptions: 3,"), "000", "CPU", id="preemptions"
        ),
    ],
)
def test_documented_variants(line: str, engine: str, device: str) -> None:
    [p] = parse_stats(line)
    assert p.engine == engine and p.extra["kv_device"] == device and p.num_requests_running == 4
    if "Preemptions" in line:
        assert p.extra["preemptions"] == 3


def test_seed_lines_without_optional_fields() -> None:
    pts = [p for line in SEED_LINES for p in parse_stats(line)]
    assert [(p.num_requests_running, p.num_requests_waiting, p.throughput_progress) for p in pts] == [
        (1, 0, False),
        (4, 0, False),
    ]
    assert pts[0].kv_cache_usage_perc is None


def test_partial_line_is_ignored() -> None:
    assert list(parse_stats(CPU_LINE[:60])) == []


def test_bounded_series_keeps_peaks() -> None:
    [busy] = parse_stats(CPU_LINE)
    [idle] = parse_stats(BERT_LINE.replace("Waiting: 1", "Waiting: 0"))
    s = BoundedSeries(cap=64)
    for i in range(10_000):
        s.add(busy if i == 5_000 else idle)
    pts = s.finish()
    assert len(pts) <= 64 and s.total == 10_000
    assert max(p.num_requests_running for p in pts) == 4 and sum(p.merged for p in pts) == 10_000

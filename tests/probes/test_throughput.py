"""Throughput figures from responses recorded on a real server."""
from __future__ import annotations

from triage.findings import Status
from triage.probes.throughput import percentile, summarize, throughput_finding

from .recorded import DIRS, exchange, page


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([0.3, 0.1, 0.2], 50) == 0.2
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


def test_summarize_recorded_batch() -> None:
    ex = exchange(DIRS[1], "embed-list")
    ex.elapsed_s = 0.05
    row = summarize(2, [ex, ex], 0.1)
    assert row["embeddings_per_s"] == 40.0 and row["ok"] == 2
    assert row["tokens_per_s"] == ex.body["usage"]["prompt_tokens"] * 2 / 0.1
    assert throughput_finding([row]).status == Status.PASS
    assert page(DIRS[1], "metrics-idle").has_vllm_metrics

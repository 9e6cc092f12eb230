"""Replica series -> engine samples -> episodes, on values read from the recorded real pages."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.fleet.replicas import episodes, queries, replica_name, scraped, selector, to_sample
from triage.stall import DEFAULT_STALL_S, LIVELOCK
from triage.vllm.metrics import parse_metrics

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"
FIELDS = ("num_requests_running", "num_requests_waiting", "prompt_tokens_total", "request_success_total",
          "kv_cache_usage_perc", "prefix_cache_queries_total", "prefill_seconds_total")


def _values(name: str) -> dict[str, float | None]:
    e = next(iter(parse_metrics((PAGES / name).read_text()).engines.values()))
    return {f: getattr(e, f) for f in FIELDS}


@pytest.mark.parametrize("steps,at,want", [
    pytest.param([0, 1, 2, 3], {0: 0.0, 1: 0.0, 2: 2.0, 3: 2.0}, [(0, 0.0), (2, 2.0)], id="step-shorter-than-scrape"),
    pytest.param([0, 15, 30, 45], {0: 0.0, 15: 15.0, 30: 15.0, 45: 15.0}, [(0, 0.0), (15, 15.0)],
                 id="server-gone-stale-repeats"),
    pytest.param([0, 15], {15: 14.0}, [(15, 14.0)], id="no-sample-yet"),
    pytest.param([0, 15], {}, [(0, 0), (15, 15)], id="scrape-times-unknown"),
])
def test_scraped_drops_repeats(steps: list[float], at: dict[float, float], want: list[tuple[float, float]]) -> None:
    assert scraped(steps, at) == want


def test_recorded_livelock_pages_make_one_episode() -> None:
    idle, busy, hung = _values("metrics-idle.txt"), _values("metrics-after-requests.txt"), _values(
        "metrics-livelock-9s.txt")
    series = [(0.0, idle), (2.0, busy)] + [(4.0 + 2 * k, hung) for k in range(6)] + [(16.0, busy)]
    samples = [to_sample(t, v, {"engine": "0"}) for t, v in series]
    (ep,) = episodes(samples, DEFAULT_STALL_S)
    assert ep.kind == LIVELOCK and ep.start == 4.0 and ep.end == 14.0 and not ep.open
    assert ep.detail["num_requests_running"] == [1.0, 1.0]


def test_a_gap_is_no_verdict() -> None:
    hung = _values("metrics-livelock-9s.txt")
    gap = dict(hung, prompt_tokens_total=None)
    samples = [to_sample(t, hung if t % 4 else gap, {}) for t in range(0, 20, 2)]
    assert episodes(samples, DEFAULT_STALL_S) == []


def test_names_and_queries() -> None:
    assert selector("vllm:x", '{job="vllm"}') == 'vllm:x{job="vllm"}'
    assert selector("vllm:x", "") == "vllm:x"
    assert all(" by (" in q and "job=\"v\"" in q for q in queries('{job="v"}').values())
    name = replica_name({"instance": "10.0.0.1:8000", "engine": "0", "job": "vllm"})
    assert name == "instance=10.0.0.1:8000 engine=0"
    assert replica_name({"pod": "p-1", "instance": "i", "engine": "0"}).startswith("pod=p-1")

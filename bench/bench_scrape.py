"""Scrape parse cost on /metrics pages recorded from real vLLM 0.31.0/0.32.0 servers.

triage.vllm.metrics.parse_metrics keeps only the families the stall rule and the charts read (a
name-prefix filter on the raw lines) before prometheus_client's parser; this compares it with
prometheus_client parsing the whole page, on the same recorded pages (tests/fixtures/real/).

    python bench/bench_scrape.py [--repeat 200]

Last line: ``scrape parse: X ms, prometheus_client full parse: Y ms, ratio R``: per page the best of
``--repeat`` rounds (the machine is shared: a median carries other processes' load), averaged over pages.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from triage.vllm.metrics import parse_metrics  # noqa: E402

PAGES = sorted((ROOT / "tests" / "fixtures" / "real").glob("0.3*/metrics-*.txt"))


def _best_ms(fn, texts: list[str], repeat: int) -> float:  # noqa: ANN001
    best = [float("inf")] * len(texts)
    for _ in range(repeat):
        for i, t in enumerate(texts):
            t0 = time.perf_counter()
            fn(t)
            best[i] = min(best[i], time.perf_counter() - t0)
    return statistics.mean(best) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=200)
    a = ap.parse_args()
    texts = [p.read_text() for p in PAGES]
    for t in texts:  # same answers: the filter drops nothing the parser's reader needs
        assert parse_metrics(t).engines == parse_metrics(t, full=True).engines
    ours = _best_ms(parse_metrics, texts, a.repeat)
    full = _best_ms(lambda t: list(text_string_to_metric_families(t)), texts, a.repeat)
    kb = statistics.median(len(t) for t in texts) / 1000
    print(f"{len(texts)} recorded pages (median {kb:.0f} KB), {a.repeat} rounds")
    print(f"scrape parse: {ours:.2f} ms, prometheus_client full parse: {full:.2f} ms, ratio {full / ours:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

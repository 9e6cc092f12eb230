"""Salted inputs and throughput figures (recorded responses for the figures)."""
from __future__ import annotations

import asyncio

from triage.findings import Status
from triage.probes.inputs import long_text, salted_words, short_text
from triage.probes.throughput import percentile, summarize, throughput_finding

from .recorded import DIRS, exchange, page


def test_short_texts_are_unique() -> None:
    assert len({short_text() for _ in range(50)}) == 50


def test_salt_covers_the_whole_text() -> None:
    a, b = salted_words("aaaa", 200).split(), salted_words("bbbb", 200).split()
    assert a[-20:] != b[-20:]  # truncation from either side still leaves unique tokens


def test_long_text_exceeds_max_model_len() -> None:
    calls = []

    async def count(text: str) -> int:  # BERT-like: one token per word plus [CLS]/[SEP]
        calls.append(text)
        return len(text.split()) + 2

    lt = asyncio.run(long_text(count, 256))
    assert lt.token_count > 256 and lt.token_count == len(lt.text.split()) + 2 and len(calls) <= 3


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

"""Salted inputs: unique SHORT texts, LONG texts sized past max_model_len by a token counter."""
from __future__ import annotations

import asyncio

from triage.probes.inputs import long_text, salted_words, short_text


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

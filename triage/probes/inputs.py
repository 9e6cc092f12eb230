"""Probe inputs built for the target model: salted SHORT texts and LONG texts past max_model_len.

Every text is salted throughout (random words drawn from a per-text seed), not only at the
start: vLLM may truncate from either side, and a repeated token window would hit the prefix
cache and hide the pooling livelock's hang. LONG is sized with the server's own /tokenize count.
"""
from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from random import Random

from triage.load_texts import WORDS as _WORDS
from triage.load_texts import unique_texts  # noqa: F401 - the load test's texts, named here too


def new_salt() -> str:
    return secrets.token_hex(4)


def salted_words(salt: str, n: int) -> str:
    rng = Random(salt)
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def short_text(salt: str | None = None) -> str:
    """A few tokens, unique per call."""
    salt = salt or new_salt()
    return f"probe {salt} {salted_words(salt, 3)}"


@dataclass(frozen=True)
class LongText:
    text: str
    token_count: int  # what the server's /tokenize says (special tokens included)


# The longest context a probe builds a text for: real models reach ~1M tokens; a server claiming more
# (a hostile or broken /v1/models) must not make the probe build a text of that size.
MAX_LONG_TOKENS = 1 << 21


async def long_text(count_tokens: Callable[[str], Awaitable[int]], max_model_len: int,
                    salt: str | None = None, margin: int | None = None) -> LongText:
    """A text whose token count exceeds max_model_len by a margin, checked with /tokenize.

    Bounded whatever the server says: max_model_len must be 1..MAX_LONG_TOKENS, and the text never
    grows past twice the target in words (a word is at least one token), even when /tokenize lies."""
    if not isinstance(max_model_len, int) or max_model_len < 1:
        raise ValueError(f"max_model_len {max_model_len!r} is not a positive number of tokens")
    if max_model_len > MAX_LONG_TOKENS:
        raise ValueError(f"max_model_len {max_model_len} is beyond the {MAX_LONG_TOKENS} tokens a probe builds a "
                         "text for")
    salt = salt or new_salt()
    target = max_model_len + (margin if margin is not None else max(8, max_model_len // 8))
    most = 2 * target + 64
    n_words = max(16, target)  # one word is at least one token: start near the target
    count = 0
    for _ in range(6):
        text = f"probe {salt} " + salted_words(salt, n_words)
        count = await count_tokens(text)
        if count > max_model_len and count >= target:
            return LongText(text, count)
        n_words = min(most, int(n_words * target / max(count, 1)) + 16)
    raise ValueError(f"could not build a text longer than {max_model_len} tokens (last count {count})")

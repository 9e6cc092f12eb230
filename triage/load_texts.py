"""Load-test input texts: plain English words and an endless generator of distinct texts drawn from them (standard
library only: the load generator's worker processes and the probes' inputs share it)."""
from __future__ import annotations

import secrets
from collections.abc import Iterator
from random import Random

# Plain English words: every tokenizer splits them into one or two tokens.
WORDS = ("river stone garden window paper silver orange market winter yellow doctor planet "
         "candle forest bridge letter pocket summer rabbit castle engine button mirror violin "
         "harbor pencil basket ladder meadow thunder anchor blanket compass feather lantern "
         "marble needle parrot saddle tunnel velvet walnut kettle glacier island jungle").split()


def unique_texts(n_words: int) -> Iterator[str]:
    """Endless distinct texts of a salt and ``n_words`` salted words, as ``f"{salt} {salted_words(salt, n)}"`` reads
    (triage.probes.inputs; a load test's inputs): one generator seeded once draws them, a few µs a text instead of a
    seed per text."""
    rng = Random(secrets.token_hex(8))
    words = WORDS
    while True:
        yield f"{rng.getrandbits(32):08x} " + " ".join(rng.choices(words, k=n_words))

"""triage.logs.episode_endings: request ids as kept from a log (more in test_request_ids.py and
test_client_timeouts.py, which run whole logs through it)."""
from __future__ import annotations

from triage.logs.episode_endings import MAX_ID_CHARS, request_id


def test_a_short_id_is_kept_and_a_long_one_is_bounded_and_stable():
    assert request_id("embd-abc123") == "embd-abc123"
    long = "x" * (MAX_ID_CHARS * 10)
    kept = request_id(long)
    assert kept == request_id(long) and len(kept) < len(long) and f"{len(long):,} chars" in kept

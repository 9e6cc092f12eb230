"""triage.probes.hold: the lab matrix's held hang, on tests/hardening/hostile.py (a loopback test double: a real
hang is tests/lab's, under the heavy lock). An answer within the hold is its status; a request held past it is
aborted (status None) with /metrics read during the hold, and a recovery request that gets no answer names why."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))
from hostile import Behaviour, HostileServer  # noqa: E402

from triage.probes import hold  # noqa: E402

TOKENIZE = {"/tokenize": {"count": 400}}  # every text "long": past the tiny model's max_model_len of 256


@pytest.mark.timeout(30)
def test_an_answer_within_the_hold_is_its_status() -> None:
    with HostileServer(Behaviour(bodies=TOKENIZE)) as s:
        got = hold.hold_hang(s.url, 5.0, 0.2)
    assert got["status_within_hold"] == 200 and got["after_status"] == 200 and got["hang_page"] is None


@pytest.mark.timeout(60)
def test_a_held_request_is_aborted_and_the_page_read_during_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hold, "AFTER_TIMEOUT_S", 1.0)
    with HostileServer(Behaviour(bodies=TOKENIZE, slow=("/v1/embeddings",))) as s:
        got = hold.hold_hang(s.url, 1.5, 0.3)
    assert got["status_within_hold"] is None and got["held_s"] < 10
    assert "vllm:num_requests_running" in got["hang_page"]
    assert got["after_status"] == "ReadTimeout"  # the recovery request trickles too: no answer, named

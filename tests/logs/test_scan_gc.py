"""The file scan's process-wide gc switch: overlapping scans (dashboard sessions are threads) share it."""
from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from triage.logs.driver import _no_cyclic_gc, analyze_log

LOG = Path(__file__).resolve().parents[1] / "fixtures/real/logs/0.31.0-tiny-qwen3-livelock-livelock-031.log"


def test_overlapping_scans_keep_gc_off_until_the_last_one_ends() -> None:
    assert gc.isenabled()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def scan_a() -> None:
        with _no_cyclic_gc():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def scan_b() -> None:
        a_in.wait(5)
        with _no_cyclic_gc():
            b_in.set()
            a_out.wait(5)
            seen["after_a"] = gc.isenabled()  # A has finished, B still scans

    ts = [threading.Thread(target=scan_a), threading.Thread(target=scan_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert seen == {"after_a": False}
    assert gc.isenabled()


def test_a_scan_that_fails_puts_gc_back() -> None:
    with pytest.raises(RuntimeError), _no_cyclic_gc():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_gc_left_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        analyze_log(LOG)
        assert not gc.isenabled()
    finally:
        gc.enable()
    analyze_log(LOG)
    assert gc.isenabled()

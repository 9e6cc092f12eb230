"""The one stall-episode value (triage.episode.Episode, issue 44): frozen, its end/duration rules, the rule's open
window as an episode (``of_window``), and every stored shape read back (``from_stored``) and written again unchanged:
a log's episodes, watch's alerts and the fleet's episodes, each from recorded real output."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.test_watch_episodes import V031, _fleet, _watch
from triage.catalogue import explain_stall
from triage.episode import FLEET, LOG, PROBE, SOURCES, WATCH, Episode, from_stored, of_window
from triage.fleet.replicas import episode_dict as fleet_dict
from triage.logs import analyze_log
from triage.logs.episodes import episode_dict as log_dict
from triage.recurrence import CLIENT_ABORT, ONGOING, Span
from triage.sample import EngineSample
from triage.stall import LIVELOCK, STUCK_WAITING, StallDetector
from triage.vllm.metrics import parse_metrics
from triage.watch import alert_dict

REAL = Path(__file__).parent / "fixtures" / "real"
D031 = REAL / "0.31.0-tiny-qwen3-livelock"


def _ep(**kw: object) -> Episode:
    return Episode(**{"kind": LIVELOCK, "source": WATCH, "start": 100.0, **kw})  # type: ignore[arg-type]


def test_the_value_is_frozen_and_its_detail_read_only() -> None:
    ep = _ep(detail={"window_s": 2.0})
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.end = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        ep.detail["window_s"] = 3.0  # type: ignore[index]
    assert ep.with_(end=110.0).end == 110.0 and ep.end is None  # a changed copy, the original as it was
    assert _ep().detail == {} and _ep(detail=None).detail == {}  # type: ignore[arg-type]


@pytest.mark.parametrize("kw,open_,until,duration", [
    pytest.param({}, True, None, None, id="just-opened"),
    pytest.param({"last_seen": 104.0}, True, 104.0, 4.0, id="open-lasts-to-its-last-observation"),
    pytest.param({"last_seen": 104.0, "end": 106.0}, False, 106.0, 6.0, id="ended"),
    pytest.param({"start": None, "end": None}, True, None, None, id="a-log-without-timestamps"),
    pytest.param({"end": 99.0}, False, 99.0, 0.0, id="clock-step-back-never-negative"),
])
def test_end_until_and_duration(kw: dict, open_: bool, until: float | None, duration: float | None) -> None:
    ep = _ep(**kw)
    assert (ep.open, ep.until, ep.duration_s) == (open_, until, duration)


def test_span_is_what_recurrence_reads() -> None:
    assert _ep(end=105.0, ended=CLIENT_ABORT).span() == Span(100.0, 105.0, CLIENT_ABORT, LIVELOCK)
    assert _ep(last_seen=103.0).span() == Span(100.0, 103.0, ONGOING, LIVELOCK)  # not read yet: ongoing


def test_seen_counts_first_last_and_max() -> None:
    ep = _ep().seen(1, 0, 101.0).seen(2, 3, 102.0).seen(1, 1, 103.0)
    assert ep.running == (1, 1) and ep.waiting == (0, 1) and (ep.max_running, ep.max_waiting) == (2.0, 3.0)
    assert ep.n_seen == 3 and ep.last_seen == 103.0 and ep.open


def test_sources_are_the_four_readers() -> None:
    assert set(SOURCES) == {LOG, WATCH, FLEET, PROBE}


def _pages() -> list[EngineSample]:
    seq = ["idle", "after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6
    return [parse_metrics((D031 / f"metrics-{p}.txt").read_text(), 1000.0 + i).engines["0"] for i, p in enumerate(seq)]


def test_of_window_is_the_rules_open_window_on_recorded_pages() -> None:
    det = StallDetector(5.0)
    got = []
    for s in _pages():
        got.append(of_window(det.update(s), PROBE, "0", keep=2))
    assert got[0] is None  # idle: no stall shape, no episode
    last = got[-1]
    assert last is not None and last.kind == LIVELOCK and last.source == PROBE and last.open
    assert last.confirmed_at is not None and last.start is not None and last.confirmed_at - last.start >= 5.0 - 0.01
    assert last.running[1] == 1 and last.n_seen == len(det.state.samples) and len(last.samples) <= 4
    assert last.detail == det.state.evidence()  # the rule's reading, as a probe stores it (extra["stall"])
    back = from_stored(dict(last.detail), PROBE)  # a stored probe's extra["stall"] read back
    assert (back.kind, back.start, back.confirmed_at, back.source) == (LIVELOCK, last.start, last.confirmed_at, PROBE)


def test_of_window_names_stuck_waiting() -> None:
    det = StallDetector(2.0)
    for t in range(4):
        det.update(EngineSample(float(t), num_requests_running=0, num_requests_waiting=1, prompt_tokens_total=0.0,
                                request_success_total=0.0))
    ep = of_window(det.state, WATCH)
    assert ep is not None and ep.kind == STUCK_WAITING and ep.waiting == (1, 1) and ep.max_waiting == 1


def test_a_log_episode_reads_back_from_its_stored_shape() -> None:
    a = analyze_log(REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log", year=2026)
    assert a.episodes and all(isinstance(e, Episode) and e.source == LOG for e in a.episodes)
    for ep in a.episodes:
        stored = log_dict(ep)
        back = from_stored(stored)
        assert log_dict(back) == stored and back.kind == ep.kind and back.start == ep.start and back.end == ep.end
    assert a.summary["episodes"] == [log_dict(e) for e in a.episodes]


def test_a_watch_alert_reads_back_from_its_stored_shape() -> None:
    w, _events, _rec = _watch(V031)
    assert w.alerts and all(isinstance(a, Episode) and a.source == WATCH for a in w.alerts)
    assert {a.mode for a in w.alerts} == {explain_stall(LIVELOCK, "0.31.0").id}  # the catalogue's id, by version
    for a in w.alerts:
        stored = alert_dict(a)
        assert alert_dict(from_stored(stored)) == stored
        assert ("ended" in stored) == (not a.open)  # an open alert has no ending yet
    assert w.summary()["alerts"] == [alert_dict(a) for a in w.alerts]


def test_a_fleet_episode_reads_back_from_its_stored_shape() -> None:
    eps = _fleet(V031).replicas[0].episodes
    assert eps and all(isinstance(e, Episode) and e.source == FLEET for e in eps)
    assert any(e.ended == CLIENT_ABORT for e in eps)
    for ep in eps:
        stored = fleet_dict(ep)
        back = from_stored(stored)
        assert fleet_dict(back) == stored and back.open == ep.open and back.span() == ep.span()


def test_from_stored_passes_the_value_through() -> None:
    ep = _ep()
    assert from_stored(ep) is ep  # type: ignore[arg-type]

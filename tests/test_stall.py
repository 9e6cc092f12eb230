"""The one stall rule, on series built from recorded real /metrics pages and log-style samples."""
from __future__ import annotations

from pathlib import Path

from triage.stall import LIVELOCK, STUCK_WAITING, StallDetector, StallSample, classify
from triage.vllm.metrics import parse_metrics

REAL = Path(__file__).parent / "fixtures" / "real"


def _sample(ts: float, page: str) -> StallSample:
    e = parse_metrics((REAL / page).read_text()).engines["0"]
    return StallSample(ts, e.num_requests_running, e.num_requests_waiting,
                       (e.prompt_tokens_total, e.request_success_total))


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
        st = det.update(StallSample(t, 1, 0, (tokens, 0)))
    assert not st.stalled and st.since == 3
    st = det.update(StallSample(7, 1, 0, (40, 0)))
    assert st.stalled
    assert det.update(StallSample(8, 0, 0, (40, 1))).kind is None


def test_log_samples_use_throughput() -> None:
    ss = [StallSample(0, 1, 0, made_progress=True), StallSample(10, 1, 0, made_progress=False),
          StallSample(20, 1, 0, made_progress=False)]
    st = classify(ss, 10)
    assert st.kind == LIVELOCK and st.since == 0 and st.confirmed_at == 10


def test_running_with_queue_behind_and_no_progress_is_livelock() -> None:
    """#55427 under load: the stuck request runs, later ones wait behind it."""
    st = classify([StallSample(float(t), 1, 3, (36, 7)) for t in range(7)], 5)
    assert st.kind == LIVELOCK and st.stalled

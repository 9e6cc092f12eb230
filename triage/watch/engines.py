"""What watch keeps per engine label between scrapes: its stall detector, the sample before, the latency
histograms' window, its open alert (``EngineState``); the rates and quantiles a scrape's sample gains from the one
before (``derive``); and the bounded tally of what a whole watch saw (``Tally``: maxima, means, the last reading)."""
from __future__ import annotations

from typing import Any, Optional

from triage.episode import Episode
from triage.sample import EngineSample, frozen_extra
from triage.series import WindowedHistogram, counter_rate
from triage.stall import StallDetector
from triage.vllm import metrics as vm

QUANTILES = {"e2e": vm.E2E_LATENCY, "queue": vm.QUEUE_TIME, "prefill": vm.PREFILL_TIME}
# watch's last reading of an engine, kept in its summary under the sample's own field names
LAST_FIELDS = ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_tokens_total",
               "request_success_total")


class EngineState:
    """One engine label's state across scrapes."""

    def __init__(self, stall_s: float, window_s: float) -> None:
        self.det = StallDetector(stall_s, learn_steps=True)
        self.prev: Optional[EngineSample] = None
        self.prev_ts: Optional[float] = None
        self.hists = {k: WindowedHistogram(window_s) for k in QUANTILES}
        self.alert: Optional[Episode] = None  # the open alert window
        self.noted_since: Optional[float] = None  # the no-progress window already reported as undecided
        self.noted_gap: Optional[float] = None  # the window after an observer's hole already reported as not judged
        self.recurring_said = False  # the episodes' pattern (the livelock with client time-outs) was announced


def derive(label: str, snap: EngineSample, es: EngineState, ts: float) -> EngineSample:
    """The sample watch stores for one engine's scrape: its prompt tokens/s (``prompt_throughput``) from the counter
    before; requests/s, preemptions/s, the server's CPU cores, a counter reset and the latency window quantiles in
    ``extra``. Counter drops (a restart) count from 0 (triage.series)."""
    prev = es.prev
    extra: dict[str, Any] = {}
    prompt_rate = None
    if prev is not None:
        prompt_rate = counter_rate(prev.prompt_tokens_total, es.prev_ts, snap.prompt_tokens_total, ts)
        extra["requests_per_s"] = counter_rate(prev.request_success_total, es.prev_ts, snap.request_success_total, ts)
        extra["preemptions_per_s"] = counter_rate(prev.num_preemptions_total, es.prev_ts, snap.num_preemptions_total,
                                                  ts)
        if (snap.prompt_tokens_total is not None and prev.prompt_tokens_total is not None
                and snap.prompt_tokens_total < prev.prompt_tokens_total):
            extra["counter_reset"] = True
        extra["server_cpu_cores"] = counter_rate(prev.process_cpu_seconds_total, es.prev_ts,
                                                 snap.process_cpu_seconds_total, ts)
    for key, name in QUANTILES.items():
        h = snap.histograms.get(name)
        if h:
            es.hists[key].add(ts, h)
            for q in (0.5, 0.95):
                v = es.hists[key].quantile(q)
                if v is not None:
                    extra[f"{key}_p{int(q * 100)}"] = round(v, 6)
    return snap.with_(engine=label, prompt_throughput=prompt_rate,
                      extra=frozen_extra({k: v for k, v in extra.items() if v is not None}))


class Tally:
    """Per engine: how many samples, first and last time, maxima, the mean prompt rate and the last reading; bounded
    whatever the watch's length."""

    def __init__(self) -> None:
        self._agg: dict[str, dict[str, Any]] = {}

    def add(self, label: str, s: EngineSample, ts: float) -> None:
        a = self._agg.setdefault(label, {"samples": 0, "first_ts": ts, "max_running": 0.0, "max_waiting": 0.0,
                                         "max_kv_cache_usage_perc": 0.0, "max_prompt_tokens_per_s": 0.0,
                                         "_rate_sum": 0.0, "_rate_n": 0})
        a["samples"] += 1
        a["last_ts"] = ts
        rate = s.prompt_throughput
        for key, v in (("max_running", s.num_requests_running), ("max_waiting", s.num_requests_waiting),
                       ("max_kv_cache_usage_perc", s.kv_cache_usage_perc), ("max_prompt_tokens_per_s", rate)):
            if v is not None and v > a[key]:
                a[key] = v
        if rate is not None:
            a["_rate_sum"] += rate
            a["_rate_n"] += 1
        a["last"] = {k: getattr(s, k) for k in LAST_FIELDS}

    def engines(self) -> dict[str, dict[str, Any]]:
        out = {}
        for label, a in self._agg.items():
            d = {k: v for k, v in a.items() if not k.startswith("_")}
            d["mean_prompt_tokens_per_s"] = a["_rate_sum"] / a["_rate_n"] if a["_rate_n"] else None
            out[label] = d
        return out

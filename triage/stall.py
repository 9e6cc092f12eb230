"""The one stall rule, shared by probes, ``watch`` and the log post-mortem (fed EngineSample values).

livelock:      running >= 1 and no progress for the window; waiting is 0 in the plain pooling livelock
               signature (a pooling request stuck at max_model_len - 1 tokens) and >= 1 when later
               requests queue behind the stuck one.
stuck-waiting: waiting >= 1, running == 0, and no progress for the window (a prompt the scheduler
               can never admit, e.g. BERT with chunked prefill forced off and a budget below the
               prompt length, or a prompt larger than the KV cache).

Progress is evidence *per engine step*, not per finished request (read on 0.31.0/0.32.0 lab
servers, see triage/vllm/metrics.py): ``kv_cache_usage_perc`` moves as each prefill chunk gets
its blocks; ``prefix_cache_queries_total`` when a request is first scheduled;
``prompt_tokens_total`` / ``request_success_total`` when a request finishes; a log line's
non-zero throughput; a local GPU that computes (the livelock leaves it idle). The server's process
CPU is kept as evidence, never as progress: on the CPU backend a livelocked worker busy-polls a
whole core, as a computing one does.

The window is ``threshold_s`` unless one engine step may legitimately last longer: a chunk's
tokens (the last KV jump x the cache size in tokens) over the prefill rate measured on this server
(prompt tokens / prefill seconds, from the scrape interval that finished the most prompt tokens, at
least ``MIN_RATE_TOKENS``: a few short prompts measure per-request overhead, not a rate; until then
the server's lifetime average from the same two counters) gives the
step time to expect. Live samplers (probes, watch: ``learn_steps``) also time the steps themselves: the
longest gap a busy engine took between two progress signals, counted from a probe's send when the caller
says so (``note_sent``; vLLM publishes its gauges only when a step ends, so a fresh server's first giant step
reads "idle" until it is done). The longer of the two is the step to expect; the window is then
``STEP_MARGIN`` times that. Without such a measurement the
window is the threshold (a fresh server's first giant step cannot be told from a stall: the verdict
text then names the version and what would decide it). While the no-progress time is past the threshold
but inside such a window, the state is ``waiting_for_step`` (what is known: no progress for N s,
the step to expect), not a stall.

A request held beside traffic is no progress either (issue 21, `held`): with normal requests finishing next to
a request held by the pooling livelock the counters keep moving, while running stays >= 1 and the KV usage stays
at the held request's blocks; those samples count as no progress (and a gap that held such others' progress is
never learned as a step).
Such a window is judged on the plain threshold, not on a longer expected step: others finishing beside the held
request show the engine completed steps meanwhile, so no step of the held request can still be in progress (issue
21: Prometheus' own 2 s scrapes of a 5 s hang hold two stalled samples, and an early lifetime-rate step estimate
made the window longer than that).

The observer's own gaps (issue 33): a sample that came late (``EngineSample.observer_gap_s``, set by the live
samplers from ``triage.sample.observer_gap``) says nothing about the server between it and the sample before: the
watcher, or the host it shares with the server, was held up, and a starved server makes no progress either. So a
late sample starts the no-progress window afresh (a stall is confirmed only on samples that came on time across a
whole window; until then the state says ``observer_gap_s``: cannot judge), and no step time is learned across such
a hole. A stall confirmed before the hole stays confirmed unless the counters moved across it.

The first step counts too (issue 21: a 0.32.0 server whose first step took ~100 s was called stalled two
seconds after it ended): live samplers that read the server's process CPU see the engine start computing
while its gauges still read idle (``BUSY_CPU_CORES``); that moment bounds the first step like a probe's
send. CPU going back to idle before any progress forgets it (a rejected request, a tokenizer burst).

One room: the one stall rule (detector, progress evidence, window) is one verdict; split, two places would decide a
stall.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from triage.sample import LOG as LOG_SOURCE
from triage.sample import EngineSample

LIVELOCK = "livelock"
STUCK_WAITING = "stuck-waiting"
DEFAULT_STALL_S = 2.0  # with 0.5 s scrapes the verdict lands ~2.5 s after the stuck request
STEP_MARGIN = 2.0
MIN_RATE_TOKENS = 128
GPU_BUSY_PERCENT = 10.0
MAX_KEPT = 64  # samples kept in a state (evidence), whatever the window's length
BUSY_CPU_CORES = 0.3  # the server's processes computing (an idle vLLM uses ~2 % of one core; a step 0.5-2 cores)
IDLE_CPU_CORES = 0.1  # below this again before any progress, for IDLE_FOR_S: what started was not a step
IDLE_FOR_S = 2.0
# sample clocks jitter by milliseconds (Prometheus stamps a 2 s scrape 1.999 s after the one before): a window is
# crossed within this much of its length (issue 21: a 5 s hang in a real TSDB was two samples 1.999 s apart)
CLOCK_SLACK_S = 0.01


@dataclass
class StallState:
    kind: Optional[str] = None  # None | livelock | stuck-waiting
    since: Optional[float] = None  # where the no-progress window started
    confirmed_at: Optional[float] = None  # when the window was crossed
    running: Optional[float] = None
    waiting: Optional[float] = None
    samples: list[EngineSample] = field(default_factory=list)
    last_progress: Optional[str] = None  # the signal that moved last (kv_cache_usage_perc, …)
    expected_step_s: Optional[float] = None  # from the measured prefill rate, when known
    window_s: Optional[float] = None  # no-progress time this verdict needs
    no_progress_s: float = 0.0
    threshold_s: Optional[float] = None
    held_beside_others: bool = False  # others' counters moved while the request was held (the engine stepped)
    observer_gap_s: Optional[float] = None  # the window starts after the observer's own hole this long: not judged

    @property
    def cannot_judge(self) -> bool:
        """The window in progress starts at a late sample and is not yet a whole window of on-time samples."""
        return self.observer_gap_s is not None and not self.stalled

    @property
    def stalled(self) -> bool:
        return self.kind is not None and self.confirmed_at is not None

    @property
    def waiting_for_step(self) -> bool:
        """Past the threshold, but a step of the expected length could still be running."""
        return (self.kind is not None and not self.stalled and self.threshold_s is not None
                and self.no_progress_s >= self.threshold_s)

    @property
    def window_end(self) -> Optional[float]:
        """When the open no-progress window closes (``since`` + window; the samples' clock), else None.
        A sampler that looks right then gives the verdict one scrape after the window, not up to a tick later."""
        if self.kind is None or self.since is None or self.window_s is None or self.stalled:
            return None
        return self.since + self.window_s

    def evidence(self) -> dict[str, object]:
        return {"kind": self.kind, "since": self.since, "confirmed_at": self.confirmed_at,
                "no_progress_s": round(self.no_progress_s, 3), "window_s": self.window_s,
                "expected_step_s": None if self.expected_step_s is None else round(self.expected_step_s, 3),
                "last_progress": self.last_progress, "observer_gap_s": self.observer_gap_s}


def _shape(s: EngineSample) -> Optional[str]:
    return shape_of(s.num_requests_running, s.num_requests_waiting)


def shape_of(r: Optional[float], w: Optional[float]) -> Optional[str]:
    """The stall kind the two gauges allow (livelock, stuck-waiting) or None (idle, unknown)."""
    if r is None and w is None:
        return None
    if r is not None and r >= 1:
        # waiting >= 1 beside it is the pooling livelock under load: later requests queued behind the stuck one
        return LIVELOCK
    if w is not None and w >= 1 and not r:
        return STUCK_WAITING
    return None


_STEP_SIGNALS = ("kv_cache_usage_perc", "prefix_cache_queries_total", "prompt_tokens_total", "request_success_total")


def held(prev: Optional[EngineSample], cur: EngineSample) -> bool:
    """A request sits in the engine without progress of its own while others may finish beside it: running >= 1
    at both samples, no request left, and the KV cache usage (> 0: the held request's blocks) unchanged.

    Recorded on 0.31.0 (tests/fixtures/real/client-timeouts): with light traffic next to a request held by the
    pooling livelock, the traffic's prompts finish every second (the counters move) while running stays >= 1 and
    KV usage stays at the stuck request's blocks to the last digit; a healthy prefill's KV moves with each chunk.
    Read from /metrics and Prometheus samples only: a log line's KV usage has one decimal of a percent.

    Not held when the queue is being served (``queue_served``): a healthy engine that runs one request at a time
    from a queue of same-size requests shows the same two gauges at every sample (running 1, one request's blocks)
    while a new request runs each time (issue 33: recorded on 0.32.0 under 12 clients, watch called it stalled)."""
    if prev is None or cur.source == LOG_SOURCE or queue_served(prev, cur):
        return False
    return held_gauges(prev.num_requests_running, prev.kv_cache_usage_perc, cur.num_requests_running,
                       cur.kv_cache_usage_perc)


def queue_served(prev: EngineSample, cur: EngineSample) -> bool:
    """Requests waited at both samples and requests finished between them: the queue is being served. (The held
    request of issue 21's recording had waiting 0 beside it: light traffic finishing next to it.)"""
    done = _delta(prev.request_success_total, cur.request_success_total)
    return queue_served_gauges(prev.num_requests_waiting, cur.num_requests_waiting, bool(done and done >= 1))


def queue_served_gauges(w0: Optional[float], w1: Optional[float], finished: bool) -> bool:
    """``queue_served`` on two readings of waiting and whether requests finished between them (a log's stats lines:
    a non-zero prompt throughput, prompt tokens being counted when a request finishes)."""
    return w0 is not None and w1 is not None and w0 >= 1 and w1 >= 1 and finished


def held_gauges(r0: Optional[float], k0: Optional[float], r1: Optional[float], k1: Optional[float]) -> bool:
    """``held`` on two readings of (running, KV usage): running >= 1 at both and not fewer now, the KV usage
    (> 0) unchanged. The log post-mortem applies it to stats lines close enough apart (triage.logs.episodes)."""
    if r0 is None or r1 is None or k0 is None or k1 is None:
        return False
    return r0 >= 1 and r1 >= r0 and k0 > 0 and k1 == k0


def progress(prev: Optional[EngineSample], cur: EngineSample) -> Optional[str]:
    """The signal that shows the engine computed between ``prev`` and ``cur``, or None."""
    if held(prev, cur):
        return None
    tp = cur.throughput_progress
    if tp:
        return "throughput"
    # a zero rate (a log line's, or watch's counter rate) does not outvote a per-step signal: prompt counters
    # move only when a prefill completes, KV usage moves with each chunk (issue 21: watch called a healthy
    # multi-step prefill stalled because its 0.0 tokens/s hid the KV jumps)
    if cur.gpu_utilization is not None and cur.gpu_utilization >= GPU_BUSY_PERCENT:
        return "gpu_utilization"
    if prev is None:
        return None
    for name in _STEP_SIGNALS:
        a, b = getattr(prev, name), getattr(cur, name)
        if a is not None and b is not None and a != b:
            return name
    return None


class StallDetector:
    """Feed samples in time order; ``state`` says whether the engine is stalled and since when."""

    def __init__(self, threshold_s: float = DEFAULT_STALL_S, learn_steps: bool = False) -> None:
        self.threshold_s = threshold_s
        self.learn_steps = learn_steps  # live samplers (probes, watch): also learn step times from progress gaps
        self.state = StallState()
        self._prev: Optional[EngineSample] = None
        self._anchor: Optional[float] = None  # the last progress seen while busy (a step boundary)
        self._sent_at: Optional[float] = None  # work the caller sent, before any progress showed it
        self._sent_by_cpu = False  # _sent_at came from the server's CPU (forgotten when it goes idle again)
        self._cpu_idle_since: Optional[float] = None
        self._others = False  # other requests finished beside a held one since the anchor (the engine stepped)
        self._hole = False  # a late sample since the anchor: the gap to the next progress is no step
        self.gap_step_s: Optional[float] = None  # the longest time a busy engine took between progress
        # update_gauges' window: its kind, start and whether it was crossed
        self._g_kind: Optional[str] = None
        self._g_since = 0.0
        self._g_confirmed = False
        self.rate_tokens_s: Optional[float] = None  # prefill rate measured on finished requests
        self._rate_tokens = 0.0  # prompt tokens of the interval the rate was measured on
        self._step_tokens: Optional[float] = None  # tokens scheduled at the last KV jump

    def _learn(self, prev: Optional[EngineSample], s: EngineSample) -> None:
        if prev is None:
            return
        dt = _delta(prev.prefill_seconds_total, s.prefill_seconds_total)
        dn = computed_tokens(_delta(prev.prompt_tokens_total, s.prompt_tokens_total),
                             _delta(prev.prefix_cache_hits_total, s.prefix_cache_hits_total))
        if dt and dn and dt > 0 and dn >= max(MIN_RATE_TOKENS, self._rate_tokens):
            self.rate_tokens_s, self._rate_tokens = dn / dt, dn
        dkv = _delta(prev.kv_cache_usage_perc, s.kv_cache_usage_perc)
        if dkv and dkv > 0 and s.kv_cache_size_tokens:
            self._step_tokens = dkv * s.kv_cache_size_tokens

    def _lifetime_rate(self, s: EngineSample) -> None:
        """Before any interval measured one: the server's lifetime average (overlapping requests add up
        their prefill seconds, so it errs slow: a longer window, never a false alarm)."""
        n, t = computed_tokens(s.prompt_tokens_total, s.prefix_cache_hits_total), s.prefill_seconds_total
        if self._rate_tokens == 0.0 and n and t and n >= MIN_RATE_TOKENS and t > 0:
            self.rate_tokens_s = n / t

    def update_gauges(self, ts: float, running: float, waiting: float, progressed: bool) -> tuple[Optional[str], bool]:
        """``(state.kind, state.stalled)`` as ``update`` gives them for a sample that carries only the two gauges and
        whether the engine made progress (a log stats line: its throughput), without building a sample or a state:
        such samples teach no rate and no step, so the window is ``window_s()``. The log post-mortem's hot path;
        use one of the two entry points per detector (tests/logs/test_fast_paths.py compares them)."""
        shape = shape_of(running, waiting)
        if shape is None or progressed or shape != self._g_kind:
            self._g_kind, self._g_since, self._g_confirmed = shape, ts, False
            return shape, False
        if not self._g_confirmed and ts - self._g_since >= self.window_s() - CLOCK_SLACK_S:
            self._g_confirmed = True
        return shape, self._g_confirmed

    def note_sent(self, ts: float) -> None:
        """The caller sent work at ``ts`` (a probe): the time until its first progress bounds one step, even while
        the gauges still read idle (vLLM publishes them only when a step ends: a fresh server's first giant step
        shows nothing at all until it is done)."""
        if self._sent_at is None and self._anchor is None:
            self._sent_at = ts

    def _learn_gap(self, s: EngineSample, moved: Optional[str], busy: bool) -> None:
        if moved is not None:
            anchor = self._anchor if self._anchor is not None else self._sent_at
            # a gap that ends a confirmed stall is the stall ending (an abort), not a step; nor is one that ends
            # with the KV cache not growing: a held request leaving (a client's time-out, issue 21) frees blocks,
            # a step that computed a chunk takes new ones
            prev = self._prev
            kv0, kv1 = (prev.kv_cache_usage_perc if prev else None), s.kv_cache_usage_perc
            chunk = kv0 is None or kv1 is None or kv1 > kv0
            # other requests finished beside a held one: the engine stepped inside the gap, so it is no step; nor is
            # a gap that holds the observer's own hole (a late sample: the time is the observer's, not a step's)
            if anchor is not None and s.ts > anchor and not self.state.stalled and chunk and not self._others \
                    and not self._hole:
                self.gap_step_s = max(self.gap_step_s or 0.0, s.ts - anchor)
            self._sent_at, self._sent_by_cpu = None, False
            self._anchor = s.ts if busy else None
            self._others = False
            self._hole = False
        elif not busy:
            self._anchor = None

    def expected_step_s(self) -> Optional[float]:
        """One engine step's duration to expect: the last KV jump's tokens at the measured prefill rate, or
        (live samplers) the longest gap a busy engine took between progress, whichever is longer."""
        by_rate = None
        tokens = self._step_tokens
        last = self._prev
        if tokens is None and last is not None and last.kv_cache_usage_perc and last.kv_cache_size_tokens:
            # no chunk seen yet (a watch started mid-step): the blocks the running requests hold stand for the
            # step in progress (recorded: a 1,163-token hold, a 4 s step; tests/test_prefix_cache_load.py)
            tokens = last.kv_cache_usage_perc * last.kv_cache_size_tokens
        if tokens is not None and self.rate_tokens_s:
            by_rate = tokens / self.rate_tokens_s
        if by_rate is None or self.gap_step_s is None:
            return by_rate if by_rate is not None else self.gap_step_s
        return max(by_rate, self.gap_step_s)

    def window_s(self) -> float:
        step = self.expected_step_s()
        if step is None:
            return self.threshold_s
        # no cap: a step the measured rate says is longer than any window is not a stall; the state says
        # what is known (waiting_for_step, expected_step_s) and a probe's deadline ends it as "slow"
        return max(self.threshold_s, STEP_MARGIN * step)

    def _note_cpu(self, prev: Optional[EngineSample], s: EngineSample, shape: Optional[str],
                  moved: Optional[str]) -> None:
        """Gauges idle, CPU busy: the engine started a step in (prev, s] that its gauges will show only when it
        ends. Gauges idle, CPU idle again and nothing moved: forget it."""
        if shape is not None or moved is not None or prev is None or self._anchor is not None \
                or s.observer_gap_s is not None:  # CPU over the observer's hole: spread over time it did not see
            return
        cores = cpu_cores(prev, s)
        if cores is None:
            return
        if cores >= BUSY_CPU_CORES:
            self._cpu_idle_since = None
            if self._sent_at is None:
                self._sent_at, self._sent_by_cpu = prev.ts, True
        elif cores < IDLE_CPU_CORES and self._sent_by_cpu:
            # idle for a while, not one slice a loaded host gave to other processes
            self._cpu_idle_since = prev.ts if self._cpu_idle_since is None else self._cpu_idle_since
            if s.ts - self._cpu_idle_since >= IDLE_FOR_S:
                self._sent_at, self._sent_by_cpu, self._cpu_idle_since = None, False, None

    def update(self, s: EngineSample) -> StallState:
        shape = _shape(s)
        prev = self._prev
        moved = progress(prev, s)
        late = s.observer_gap_s is not None
        if self.learn_steps:
            if late:
                self._hole = True
            if prev is not None and held(prev, s) and any(
                    _delta(getattr(prev, c), getattr(s, c)) for c in _STEP_SIGNALS[1:]):
                self._others = True
            self._note_cpu(prev, s, shape, moved)
            self._learn_gap(s, moved, shape is not None)
        self._learn(prev, s)
        self._lifetime_rate(s)
        self._prev = s
        st = self.state
        if shape is None or moved is not None or shape != st.kind or (late and not st.stalled):
            # (re)start a window; progress right now means the window starts at this sample; so does a late sample
            # (the observer's own hole: nothing is known of the time before it, triage.sample.observer_gap)
            self.state = st = StallState(last_progress=moved or st.last_progress)
            if shape is not None:
                st.kind, st.since = shape, s.ts
                st.samples.append(s)
                if late and moved is None:
                    st.observer_gap_s = s.observer_gap_s
            st.running, st.waiting = s.num_requests_running, s.num_requests_waiting
            st.expected_step_s, st.window_s, st.threshold_s = self.expected_step_s(), self.window_s(), self.threshold_s
            return st
        if prev is not None and held(prev, s) and any(
                _delta(getattr(prev, c), getattr(s, c)) for c in _STEP_SIGNALS[1:]):
            st.held_beside_others = True
        if len(st.samples) < MAX_KEPT:
            st.samples.append(s)
        else:
            st.samples[-1] = s
        st.running, st.waiting = s.num_requests_running, s.num_requests_waiting
        st.expected_step_s, st.window_s, st.threshold_s = self.expected_step_s(), self.window_s(), self.threshold_s
        if st.held_beside_others:
            st.window_s = self.threshold_s
        if st.since is not None:
            st.no_progress_s = s.ts - st.since
            if st.confirmed_at is None and st.no_progress_s >= st.window_s - CLOCK_SLACK_S:
                st.confirmed_at = s.ts
        return st


def computed_tokens(prompt: Optional[float], hits: Optional[float]) -> Optional[float]:
    """Prompt tokens the engine computed: vLLM counts a prefix-cache hit's tokens in ``vllm:prompt_tokens`` too
    (recorded on 0.32.0, tests/fixtures/real/prefix-cache-load: 2.4 M of 2.5 M prompt tokens were hits), so a rate
    on prompt tokens alone made a ~4 s step look like 0.2 s and raised a false stall. Hits are counted when a
    request is scheduled, prompt tokens when it finishes: a difference below zero is none."""
    if prompt is None or hits is None:
        return prompt
    return max(prompt - hits, 0.0)


def cpu_cores(prev: EngineSample, s: EngineSample) -> Optional[float]:
    """The server's processes' CPU use between two samples, in cores (None without both readings)."""
    d = _delta(prev.process_cpu_seconds_total, s.process_cpu_seconds_total)
    return d / (s.ts - prev.ts) if d is not None and s.ts > prev.ts else None


def _delta(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None:
        return None
    return b - a if b >= a else None  # a drop: the server restarted



"""Live engine stats: scrape /metrics on an interval, store samples in batches, raise stall alerts.

The stall verdict is triage.stall.StallDetector (the one rule), fed one EngineSample per engine
label and scrape (per-step progress: KV usage, prefix-cache queries, finished prompts). Rates come
from counter deltas (a drop = server restart, counted from 0); latency quantiles from the
histogram deltas over ``window_s``; both go to the sample's ``extra``. When the server listens on
this host, the CPU time of its processes (psutil) rides along as evidence. The server's version
(GET /version, read once at the first scrape) decides whether a stall can be the pooling livelock
(triage.catalogue.explain_stall); the catalogue words its finding (``word_stall``). One Watcher serves
the CLI (`python -m triage watch`) and the dashboard (call ``sample_once()`` on a timer).

The Watcher yields the run's events (triage.events) to an observer: its samples in batches, its alerts,
the findings they make, and — when ``run()`` drives it — the run's start, summary and end. It writes
nothing itself; the CLI hands it a Recorder (the only writer), the dashboard's live view none.

Modules by seam: ``loop`` (the Watcher: scraping, folding a page, batching, the run loop), ``engines`` (per-engine
state, derived rates and quantiles, the summary's tally), ``episodes`` (alert windows, their findings, recurrence),
``words`` (how a state and an alert are said).
"""

from __future__ import annotations

from triage.events import AlertEvent
from triage.watch.engines import QUANTILES
from triage.watch.episodes import RECURRING_CHECK, alert_dict
from triage.watch.loop import DEFAULT_INTERVAL_S, ScrapeError, Watcher, WatchTick
from triage.watch.words import STEP_IN_PROGRESS, alert_message, hhmmss, state_label, stall_name

__all__ = ["DEFAULT_INTERVAL_S", "QUANTILES", "RECURRING_CHECK", "STEP_IN_PROGRESS", "AlertEvent", "ScrapeError",
           "WatchTick", "Watcher", "alert_dict", "alert_message", "hhmmss", "state_label", "stall_name"]

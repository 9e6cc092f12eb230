"""Log post-mortem: stream a vLLM server log into stats series, stall episodes, findings and config."""

from __future__ import annotations

from triage.logs.analyze import LogAnalysis
from triage.logs.driver import analyze_log
from triage.logs.lines import LogLine, iter_records
from triage.logs.persist import log_events, timed_samples, to_metric_samples
from triage.logs.startup import extract_startup_config
from triage.logs.stats import parse_stats

__all__ = [
    "LogAnalysis",
    "LogLine",
    "analyze_log",
    "extract_startup_config",
    "iter_records",
    "log_events",
    "parse_stats",
    "timed_samples",
    "to_metric_samples",
]

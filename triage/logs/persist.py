"""A log post-mortem as a run's events (kind "logs"): findings, config, samples (source="log"), the log itself.

The analysis is made in one streaming pass (triage.logs.driver); ``log_events`` then says it as the run event
stream (triage.events) that every core yields. Nothing here writes: the faces pass the events through a
Recorder (``triage.recorder.record``), the only writer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from triage import events as ev_
from triage.display import head_and_tail
from triage.events import RawCapture, RunEvent
from triage.logs.analyze import LogAnalysis
from triage.sample import EngineSample

CAPTURE_MAX_CHARS = 2_000_000  # head and tail of bigger logs; the verdicts were made on the whole stream


def timed_samples(points: list[EngineSample]) -> list[EngineSample]:
    """The stats samples that carry a timestamp: what a time chart and the store can place."""
    return [p for p in points if p.ts is not None]


# The dashboard's log page charts the samples through this name (ui/services/logs.py).
to_metric_samples = timed_samples


def clip_log(text: str, limit: int = CAPTURE_MAX_CHARS) -> str:
    return head_and_tail(text, limit)


def log_events(
    analysis: LogAnalysis,
    *,
    log_text: Optional[str] = None,
    name: str = "",
    target_id: Optional[int] = None,
) -> Iterator[RunEvent]:
    """One run of kind "logs" holding everything the analysis found: started, config, each finding, the timed
    samples, the log's head and tail (when given), done."""
    yield RunEvent(ev_.STARTED, run_kind="logs", target_id=target_id,
                   meta={"log_name": name, "summary": {k: v for k, v in analysis.summary.items() if k != "episodes"}})
    yield RunEvent(ev_.CONFIG, stored=analysis.config_provenance, config=analysis.config_provenance)
    for f in analysis.findings:
        yield RunEvent(ev_.FINDING, finding=f)
    samples = timed_samples(analysis.samples)
    if samples:
        yield RunEvent(ev_.SAMPLES, samples=tuple(samples))
    if log_text is not None:
        yield RunEvent(ev_.CAPTURE, captures=(RawCapture("log", name, clip_log(log_text)),))
    worst = [f.title for f in analysis.findings if f.status in ("fail", "warn")]
    yield RunEvent(ev_.DONE, summary="; ".join(worst[:3]) or "log parsed: nothing wrong found")

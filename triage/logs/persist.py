"""Store a log post-mortem as a Run of kind "logs": findings, config, samples (source="log"), the log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from triage.logs.analyze import LogAnalysis
from triage.sample import EngineSample
from triage.recorder import Recorder

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import Store

CAPTURE_MAX_CHARS = 2_000_000  # head and tail of bigger logs; the verdicts were made on the whole stream


def timed_samples(points: list[EngineSample]) -> list[EngineSample]:
    """The stats samples that carry a timestamp: what a time chart and the store can place."""
    return [p for p in points if p.ts is not None]


# The dashboard's log page charts the samples through this name (ui/services.py).
to_metric_samples = timed_samples


def clip_log(text: str, limit: int = CAPTURE_MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n… [{len(text) - limit} characters left out] …\n" + text[-half:]


def save_analysis(
    store: Store,
    analysis: LogAnalysis,
    *,
    log_text: Optional[str] = None,
    name: str = "",
    target_id: Optional[int] = None,
    secrets: tuple[str, ...] = (),
) -> int:
    """One Run(kind="logs") holding everything the analysis found, written by the Recorder; returns the run id."""
    rec = Recorder(store, secrets)
    run_id = rec.start("logs", meta={"log_name": name, "summary": {k: v for k, v in analysis.summary.items()
                                                                   if k != "episodes"}}, target_id=target_id)
    rec.config(analysis.config_provenance)
    for f in analysis.findings:
        rec.finding(f)
    rec.samples(timed_samples(analysis.samples))
    if log_text is not None:
        rec.capture("log", clip_log(log_text), name)
    worst = [f.title for f in analysis.findings if f.status in ("fail", "warn")]
    rec.finish("; ".join(worst[:3]) or "log parsed: nothing wrong found")
    return run_id

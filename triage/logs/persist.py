"""Store a log post-mortem as a Run of kind "logs": findings, config, samples (source="log"), the log."""

from __future__ import annotations

import json
from typing import Any, Optional

from triage.logs.analyze import LogAnalysis
from triage.logs.stats import StatsPoint
from triage.store import MetricSample, Store

CAPTURE_MAX_CHARS = 2_000_000  # head and tail of bigger logs; the verdicts were made on the whole stream


def to_metric_samples(
    points: list[StatsPoint], run_id: Optional[int] = None, target_id: Optional[int] = None
) -> list[MetricSample]:
    """Stats points with a timestamp as MetricSample rows (kv usage 0–1, throughputs in tokens/s)."""
    rows = []
    for p in points:
        if p.ts is None:
            continue
        extra: dict[str, Any] = {"generation_throughput": p.generation_throughput, "line": p.lineno}
        if p.prefix_cache_hit_rate is not None:
            extra["prefix_cache_hit_rate"] = p.prefix_cache_hit_rate
        if p.merged > 1:
            extra["merged"] = p.merged
        if p.deferred is not None:
            extra["deferred"] = p.deferred
        rows.append(
            MetricSample(
                run_id=run_id,
                target_id=target_id,
                engine=p.engine or "0",
                ts=p.ts,
                source="log",
                num_requests_running=p.running,
                num_requests_waiting=p.waiting,
                kv_cache_usage_perc=p.kv_cache_usage_perc,
                prompt_throughput=p.prompt_throughput,
                num_preemptions_total=p.preemptions,
                extra_json=json.dumps(extra),
            )
        )
    return rows


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
    """One Run(kind="logs") holding everything the analysis found; returns the run id."""
    run = store.start_run(
        target_id, "logs", {"log_name": name, "summary": {k: v for k, v in analysis.summary.items() if k != "episodes"}}
    )
    assert run.id is not None
    store.set_config(run.id, analysis.config_provenance)
    for f in analysis.findings:
        store.add_finding(run.id, f)
    store.add_samples(to_metric_samples(analysis.samples, run.id, target_id))
    if log_text is not None:
        store.add_capture(run.id, "log", clip_log(log_text), name=name, secrets=secrets)
    worst = [f.title for f in analysis.findings if f.status in ("fail", "warn")]
    store.finish_run(run.id, summary="; ".join(worst[:3]) or "log parsed: nothing wrong found")
    return run.id

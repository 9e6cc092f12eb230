"""The database tables (SQLModel rows). They stay inside triage.store: every read returns a frozen value
(triage.store.values), every sample goes in and out as an EngineSample (triage.store.samples)."""
from __future__ import annotations

from datetime import datetime, UTC
from typing import Optional

from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class TargetRow(SQLModel, table=True):
    __tablename__ = "target"  # the table's name since the first release (databases open as they are)
    id: Optional[int] = Field(default=None, primary_key=True)
    url: str = Field(index=True)
    model: Optional[str] = None
    truncate_prompt_tokens: Optional[int] = None
    cmdline: Optional[str] = None
    label: Optional[str] = None
    created_at: datetime = Field(default_factory=utcnow)
    used_at: Optional[datetime] = None  # last chosen as the dashboard's target (a new tab opens on it)


class Run(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    target_id: Optional[int] = Field(default=None, foreign_key="target.id", index=True)
    kind: str = "check"  # check | probe | watch | logs | import
    status: str = Field(default="running", index=True)  # running, then the worst finding status, or events.INTERRUPTED
    started_at: datetime = Field(default_factory=utcnow, index=True)
    finished_at: Optional[datetime] = None
    summary: str = ""
    config_json: str = "{}"  # effective config with provenance
    meta_json: str = "{}"  # versions, arguments, anything run-level


class FindingRow(SQLModel, table=True):
    __tablename__ = "finding"
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    seq: int = 0
    check: str = Field(index=True)
    status: str
    title: str
    evidence_json: str = "{}"
    fix: str = ""
    refs_json: str = "[]"
    explanation: str = ""
    failure_mode: Optional[str] = None  # the catalogue record (added by ensure_schema to older files: NULL there)
    created_at: datetime = Field(default_factory=utcnow)


class ProbeRow(SQLModel, table=True):
    __tablename__ = "proberesult"  # the table's name since the first release (databases open as they are)
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    probe: str
    outcome: str  # ok | http-error | livelock | stuck-waiting | slow | unreachable | skipped
    started_at: datetime = Field(default_factory=utcnow)
    duration_s: Optional[float] = None
    time_to_verdict_s: Optional[float] = None
    http_status: Optional[int] = None
    detail_json: str = "{}"  # request, response, samples (EngineSample.to_dict each), recovery


class MetricSample(SQLModel, table=True):
    """One EngineSample's row: the fields charts and queries filter on have columns (vLLM's names, as the sample's);
    every other field that carries a value rides in ``extra_json`` under its own name, beside the sample's extras.
    Written and read only through triage.store.samples (``sample_columns`` / ``sample_of``)."""

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: Optional[int] = Field(default=None, foreign_key="run.id", index=True)
    target_id: Optional[int] = Field(default=None, index=True)
    engine: str = "0"
    ts: float = Field(index=True)  # unix seconds
    source: str = "scrape"  # scrape | log | prometheus
    num_requests_running: Optional[float] = None
    num_requests_waiting: Optional[float] = None
    kv_cache_usage_perc: Optional[float] = None
    prompt_tokens_total: Optional[float] = None
    request_success_total: Optional[float] = None
    num_preemptions_total: Optional[float] = None
    prompt_throughput: Optional[float] = None  # tokens/s, from log lines
    extra_json: str = "{}"


class Capture(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    kind: str  # metrics-page | log | cmdline | probe-request | probe-response | server-response
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    content: str = ""

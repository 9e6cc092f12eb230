"""What the store hands out: frozen values (TargetInfo, RunInfo, ProbeInfo, CaptureInfo, RunRecord) made from its
rows, so no caller holds a row detached from its session; and the small text helpers every write shares."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any, Optional

from triage.findings import Finding
from triage.redact import drop_secret_documents, redact_text
from triage.sample import EngineSample, ProbeSeries
from triage.store.tables import Capture, ProbeRow, Run, TargetRow
from triage.target import Truncation


@dataclass(frozen=True)
class TargetInfo:
    """A saved target as a plain value (the table row never leaves this package)."""

    id: int
    url: str
    model: Optional[str] = None
    truncate_prompt_tokens: Optional[int] = None  # the stored form: N, -1, or NULL (none/unknown)
    cmdline: Optional[str] = None
    label: Optional[str] = None
    created_at: Optional[datetime] = None

    @property
    def truncation(self) -> Truncation:
        return Truncation.parse(self.truncate_prompt_tokens)


@dataclass(frozen=True)
class RunInfo:
    """A run's own fields as a plain value; config and meta already parsed."""

    id: int
    target_id: Optional[int]
    kind: str
    status: str
    started_at: Optional[datetime]
    finished_at: Optional[datetime] = None
    summary: str = ""
    config: dict[str, Any] = field(default_factory=dict, hash=False)
    meta: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ProbeInfo:
    """One stored probe outcome; ``detail`` holds the request, response, samples and recovery."""

    id: int
    run_id: int
    probe: str
    outcome: str
    started_at: Optional[datetime] = None
    duration_s: Optional[float] = None
    time_to_verdict_s: Optional[float] = None
    http_status: Optional[int] = None
    detail: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def series(self) -> ProbeSeries:
        """The engine samples taken while the probe ran, typed (what a probe timeline draws)."""
        return ProbeSeries.from_detail(self.probe, self.outcome, self.time_to_verdict_s, self.detail)


@dataclass(frozen=True, kw_only=True)
class CaptureInfo:
    """One stored capture (a log, a /metrics page, a probe's request or response): made by keyword, so its fields
    read in their natural order: whose, when, then what."""

    id: int
    run_id: int
    created_at: Optional[datetime] = None
    kind: str
    name: str = ""
    content: str = ""


@dataclass(frozen=True)
class RunRecord:
    """A stored run with everything attached, as plain values (what exporters and pages read)."""

    run: RunInfo
    target: Optional[TargetInfo]
    findings: list[Finding]
    probes: list[ProbeInfo] = field(default_factory=list)
    samples: list[EngineSample] = field(default_factory=list)  # the run's series, typed, oldest first
    captures: list[CaptureInfo] = field(default_factory=list)

    @property
    def config(self) -> dict[str, Any]:
        return self.run.config

    @property
    def meta(self) -> dict[str, Any]:
        return self.run.meta


def loads(text: str | None, default: Any) -> Any:
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default


def dumps(v: Any) -> str:
    return json.dumps(v, default=str, sort_keys=True)


def text_of(v: Any) -> str:
    """A text column's value: a finding built with a list where text belongs is stored as text, not lost
    with the rest of the run (the driver refuses to bind a list)."""
    if v is None:
        return ""
    return v if isinstance(v, str) else "; ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def redacted(v: str | None) -> str | None:
    return redact_text(v) if v else v


FILE_CAPTURES = frozenset({"cmdline", "kube"})  # captures of a pasted or uploaded file (a Secret may sit in one)


def file_text(v: str | None, secrets: tuple[str, ...] = ()) -> str | None:
    """A pasted or uploaded text (a command line, a deployment file, a capture) as stored: its Kubernetes Secrets
    dropped (triage.secret_docs), then redacted."""
    return redact_text(drop_secret_documents(v)[0], secrets) if v else v


def parse_iso(s: str | None) -> datetime | None:
    """An ISO-8601 time (a naive one is UTC), or None."""
    if not s:
        return None
    dt = datetime.fromisoformat(s)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def target_info(t: TargetRow) -> TargetInfo:
    return TargetInfo(int(t.id or 0), t.url, t.model, t.truncate_prompt_tokens, t.cmdline, t.label, t.created_at)


def run_info(r: Run) -> RunInfo:
    return RunInfo(int(r.id or 0), r.target_id, r.kind, r.status, r.started_at, r.finished_at, r.summary,
                   loads(r.config_json, {}), loads(r.meta_json, {}))


def probe_info(p: ProbeRow) -> ProbeInfo:
    return ProbeInfo(int(p.id or 0), p.run_id, p.probe, p.outcome, p.started_at, p.duration_s,
                     p.time_to_verdict_s, p.http_status, loads(p.detail_json, {}))


def capture_info(c: Capture) -> CaptureInfo:
    return CaptureInfo(id=int(c.id or 0), run_id=c.run_id, created_at=c.created_at, kind=c.kind, name=c.name,
                       content=c.content)

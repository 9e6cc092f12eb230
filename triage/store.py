"""SQLite (or any SQLAlchemy URL) storage of targets, runs, findings, probe results, samples, captures.

Each finding is committed as it is produced, so a crash mid-run loses nothing already seen.
No API key is ever stored: Target has no field for it and captures pass through redact_text.
The table rows stay in this module: every read returns frozen values (RunInfo, TargetInfo, ProbeInfo,
CaptureInfo in a RunRecord), so no caller holds a row detached from its session. Writing a run as
it happens is triage.recorder's job (an observer of the engine's events).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any, Optional
from collections.abc import Iterable

from platformdirs import user_data_dir
from sqlalchemy import func, insert
from sqlmodel import Field, Session, SQLModel, select

from triage.catalogue.checks import written_before
from triage.db import ensure_schema, make_engine, normalize_url
from triage.findings import Finding, Status, worst
from triage.redact import add_url_secrets, redact_obj, redact_text
from triage.target import Truncation
from triage.sample import EngineSample, ProbeSeries

DB_ENV = "VLLM_TRIAGE_DB"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Target(SQLModel, table=True):
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


class ProbeResult(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    probe: str
    outcome: str  # ok | http-error | livelock | stuck-waiting | slow | unreachable | skipped
    started_at: datetime = Field(default_factory=utcnow)
    duration_s: Optional[float] = None
    time_to_verdict_s: Optional[float] = None
    http_status: Optional[int] = None
    detail_json: str = "{}"  # request, response, samples, recovery


class MetricSample(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: Optional[int] = Field(default=None, foreign_key="run.id", index=True)
    target_id: Optional[int] = Field(default=None, index=True)
    engine: str = "0"
    ts: float = Field(index=True)  # unix seconds
    source: str = "scrape"  # scrape | log
    num_requests_running: Optional[float] = None
    num_requests_waiting: Optional[float] = None
    kv_cache_usage_perc: Optional[float] = None
    prompt_tokens_total: Optional[float] = None
    request_success_total: Optional[float] = None
    num_preemptions_total: Optional[float] = None
    prompt_throughput: Optional[float] = None  # tokens/s, from log lines
    extra_json: str = "{}"


_ROW_COLUMNS = ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_tokens_total",
                "request_success_total", "num_preemptions_total", "prompt_throughput")
SAMPLE_FIELDS = ("engine", "ts", "source", *_ROW_COLUMNS)  # a sample's own fields (the run document's too)


def _sample_dict(m: MetricSample) -> dict[str, Any]:
    """A stored sample as the run document's plain mapping (EngineSample.from_row reads it back)."""
    d = {k: getattr(m, k) for k in SAMPLE_FIELDS}
    d["extra"] = json.loads(m.extra_json) if m.extra_json else {}
    return d


_INSERT_COLUMNS = ("run_id", "target_id", *SAMPLE_FIELDS, "extra_json")


def sample_values(s: EngineSample, run_id: int | None = None, target_id: int | None = None) -> dict[str, Any]:
    """The store boundary: one EngineSample as a table row's column values; what has no column goes to extra_json."""
    d = s.to_dict()
    extra = dict(d.pop("extra", {}) or {})
    for k in ("ts", "engine", "source", *_ROW_COLUMNS):
        d.pop(k, None)
    extra.update(d)
    return {"run_id": run_id, "target_id": target_id, "engine": s.engine or "0", "ts": s.ts, "source": s.source,
            **{k: getattr(s, k) for k in _ROW_COLUMNS},
            "extra_json": json.dumps(extra, default=str) if extra else "{}"}


def sample_row(s: EngineSample, run_id: int | None = None, target_id: int | None = None) -> MetricSample:
    """One EngineSample as a table row object (``sample_values`` in a MetricSample)."""
    return MetricSample(**sample_values(s, run_id, target_id))


class Capture(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    kind: str  # metrics-page | log | cmdline | probe-request | probe-response | server-response
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    content: str = ""


@dataclass(frozen=True)
class TargetInfo:
    """A saved target as a plain value (the table row never leaves this module)."""

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


@dataclass(frozen=True)
class CaptureInfo:
    id: int
    run_id: int
    kind: str
    name: str = ""
    created_at: Optional[datetime] = None
    content: str = ""


def _loads(text: str | None, default: Any) -> Any:
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default


def _target_info(t: Target) -> TargetInfo:
    return TargetInfo(int(t.id or 0), t.url, t.model, t.truncate_prompt_tokens, t.cmdline, t.label, t.created_at)


def _run_info(r: Run) -> RunInfo:
    return RunInfo(int(r.id or 0), r.target_id, r.kind, r.status, r.started_at, r.finished_at, r.summary,
                   _loads(r.config_json, {}), _loads(r.meta_json, {}))


def _probe_info(p: ProbeResult) -> ProbeInfo:
    return ProbeInfo(int(p.id or 0), p.run_id, p.probe, p.outcome, p.started_at, p.duration_s,
                     p.time_to_verdict_s, p.http_status, _loads(p.detail_json, {}))


def _capture_info(c: Capture) -> CaptureInfo:
    return CaptureInfo(int(c.id or 0), c.run_id, c.kind, c.name, c.created_at, c.content)


@dataclass(frozen=True)
class RunRecord:
    """A stored run with everything attached, as plain values (what exporters and pages read)."""

    run: RunInfo
    target: Optional[TargetInfo]
    findings: list[Finding]
    probes: list[ProbeInfo] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)  # SAMPLE_FIELDS + "extra", oldest first
    captures: list[CaptureInfo] = field(default_factory=list)

    @property
    def config(self) -> dict[str, Any]:
        return self.run.config

    @property
    def meta(self) -> dict[str, Any]:
        return self.run.meta


def _str(v: Any) -> str:
    """A text column's value: a finding built with a list where text belongs is stored as text, not lost
    with the rest of the run (the driver refuses to bind a list)."""
    if v is None:
        return ""
    return v if isinstance(v, str) else "; ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def default_db_url() -> str:
    env = os.environ.get(DB_ENV)
    if env:
        return to_url(env)
    d = Path(user_data_dir("vllm-triage"))
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        d.chmod(0o700)  # private by default: it holds server URLs, command lines and evidence
    except OSError:
        pass
    return to_url(str(d / "triage.db"))


def to_url(path_or_url: str) -> str:
    """A plain path becomes a SQLite URL; anything with '://' is taken as a SQLAlchemy URL."""
    if "://" in path_or_url:
        return normalize_url(path_or_url)
    p = Path(path_or_url).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    private_file(p)
    return f"sqlite:///{p}"


def private_file(p: Path) -> None:
    """Create ``p`` empty and 0600 if it does not exist (an empty file is an empty SQLite database; SQLite
    gives its journal the database's mode). An existing file keeps its mode: the owner chose it."""
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        pass


def parse_iso(s: str | None) -> datetime | None:
    """An ISO-8601 time (a naive one is UTC), or None."""
    if not s:
        return None
    dt = datetime.fromisoformat(s)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _target_id(s: Session, t: dict[str, Any]) -> int:
    """Reuse an identical target (same url, model, truncation, cmdline, label), else add one."""
    q = select(Target).where(Target.url == t["url"], Target.model == t.get("model"),
                             Target.truncate_prompt_tokens == t.get("truncate_prompt_tokens"),
                             Target.cmdline == t.get("cmdline"), Target.label == t.get("label"))
    found = s.exec(q).first()
    if found is not None and found.id is not None:
        return found.id
    row = Target(url=t["url"], model=t.get("model"), truncate_prompt_tokens=t.get("truncate_prompt_tokens"),
                 cmdline=t.get("cmdline"), label=t.get("label"))
    if t.get("created_at"):
        row.created_at = parse_iso(t["created_at"])  # type: ignore[assignment]
    s.add(row)
    s.flush()
    assert row.id is not None
    return row.id


def _dumps(v: Any) -> str:
    return json.dumps(v, default=str, sort_keys=True)


def _red(v: str | None) -> str | None:
    return redact_text(v) if v else v


class Store:
    """The one way the engine reads and writes the database."""

    def __init__(self, url: str | None = None) -> None:
        self.url = to_url(url) if url else default_db_url()
        add_url_secrets(self.url)  # a database password never reaches an error line, stdout or an export
        self.engine = make_engine(self.url)  # the dialect's settings live in triage.db
        ensure_schema(self.engine, SQLModel.metadata)

    # -- targets -----------------------------------------------------------------------------
    def add_target(self, url: str, model: str | None = None, truncate_prompt_tokens: int | None = None,
                   cmdline: str | None = None, label: str | None = None) -> TargetInfo:
        t = Target(url=redact_text(url), model=_red(model), truncate_prompt_tokens=truncate_prompt_tokens,
                   cmdline=redact_text(cmdline) if cmdline else None, label=_red(label))
        with Session(self.engine) as s:
            s.add(t)
            s.commit()
            s.refresh(t)
            return _target_info(t)

    def find_or_add_target(self, url: str, model: str | None = None, truncate_prompt_tokens: int | None = None,
                           cmdline: str | None = None, label: str | None = None) -> TargetInfo:
        with Session(self.engine) as s:
            q = select(Target).where(Target.url == url, Target.model == model,
                                     Target.truncate_prompt_tokens == truncate_prompt_tokens)
            found = s.exec(q).first()
            if found:
                return _target_info(found)
        return self.add_target(url, model, truncate_prompt_tokens, cmdline, label)

    def mark_target_used(self, target_id: int) -> None:
        """Remember ``target_id`` as the last target chosen (the dashboard opens a new tab on it)."""
        with Session(self.engine) as s:
            t = s.get(Target, target_id)
            if t is not None:
                t.used_at = utcnow()
                s.add(t)
                s.commit()

    def last_used_target(self) -> TargetInfo | None:
        """The target chosen last (``mark_target_used``), or None."""
        with Session(self.engine) as s:
            q = select(Target).where(Target.used_at.is_not(None)).order_by(Target.used_at.desc())  # type: ignore[union-attr]
            t = s.exec(q).first()
            return _target_info(t) if t is not None else None

    def list_targets(self) -> list[TargetInfo]:
        with Session(self.engine) as s:
            return [_target_info(t) for t in s.exec(select(Target).order_by(Target.id.desc()))]  # type: ignore[union-attr]

    # -- runs --------------------------------------------------------------------------------
    def start_run(self, target_id: int | None, kind: str, meta: dict[str, Any] | None = None) -> RunInfo:
        r = Run(target_id=target_id, kind=kind, meta_json=_dumps(redact_obj(meta or {})))
        with Session(self.engine) as s:
            s.add(r)
            s.commit()
            s.refresh(r)
            return _run_info(r)

    def add_finding(self, run_id: int, f: Finding) -> None:
        with Session(self.engine) as s:
            seq = s.exec(select(func.count()).select_from(FindingRow).where(FindingRow.run_id == run_id)).one()
            s.add(FindingRow(run_id=run_id, seq=int(seq), check=str(f.check), status=Status(f.status).value,
                             title=redact_text(_str(f.title)), evidence_json=_dumps(redact_obj(f.evidence)),
                             fix=redact_text(_str(f.fix)), refs_json=_dumps(redact_obj(f.refs)),
                             explanation=redact_text(_str(f.explanation)), failure_mode=f.failure_mode))
            s.commit()

    def set_config(self, run_id: int, config: dict[str, Any]) -> None:
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is not None:
                r.config_json = _dumps(redact_obj(config))
                s.add(r)
                s.commit()

    def update_meta(self, run_id: int, extra: dict[str, Any]) -> None:
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is not None:
                meta = json.loads(r.meta_json or "{}")
                meta.update(redact_obj(extra))
                r.meta_json = _dumps(meta)
                s.add(r)
                s.commit()

    def finish_run(self, run_id: int, summary: str = "", status: str | None = None) -> RunInfo:
        """Close a run: its status is the worst stored finding's, or ``status`` (``interrupted``: a run its
        core did not end has no verdict, whatever it found before it stopped)."""
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            assert r is not None, f"no run {run_id}"
            statuses = s.exec(select(FindingRow.status).where(FindingRow.run_id == run_id)).all()
            r.status = status or worst(statuses).value
            r.finished_at = utcnow()
            r.summary = redact_text(summary)
            s.add(r)
            s.commit()
            s.refresh(r)
            return _run_info(r)

    def add_probe_result(self, run_id: int, probe: str, outcome: str, *, duration_s: float | None = None,
                         time_to_verdict_s: float | None = None, http_status: int | None = None,
                         detail: dict[str, Any] | None = None, started_at: datetime | None = None) -> ProbeInfo:
        p = ProbeResult(run_id=run_id, probe=probe, outcome=outcome, duration_s=duration_s,
                        time_to_verdict_s=time_to_verdict_s, http_status=http_status,
                        detail_json=_dumps(redact_obj(detail or {})), started_at=started_at or utcnow())
        with Session(self.engine) as s:
            s.add(p)
            s.commit()
            s.refresh(p)
            return _probe_info(p)

    def add_samples(self, samples: Iterable[EngineSample | MetricSample], *, run_id: int | None = None,
                    target_id: int | None = None) -> int:
        """Batched insert: one transaction, one executemany for many samples (EngineSample values become column
        values here; no ORM object per row: a 100 MB log keeps ~16k samples)."""
        rows = [{k: getattr(s, k) for k in _INSERT_COLUMNS} if isinstance(s, MetricSample)
                else sample_values(s, run_id, target_id) for s in samples]
        labels: dict[str, str] = {}
        for r in rows:  # the engine label and the extras' labels (model_name …) come from the server's page
            if r["engine"] not in labels:
                labels[r["engine"]] = redact_text(r["engine"])
            r["engine"] = labels[r["engine"]]
            x = r["extra_json"]
            if x and x != "{}" and x not in labels:
                labels[x] = redact_text(x)
            r["extra_json"] = labels.get(x, x)
        if rows:
            with Session(self.engine) as s:
                s.execute(insert(MetricSample), rows)
                s.commit()
        return len(rows)

    def add_capture(self, run_id: int, kind: str, content: str, name: str = "",
                    secrets: tuple[str, ...] = ()) -> None:
        with Session(self.engine) as s:
            s.add(Capture(run_id=run_id, kind=kind, name=redact_text(name, secrets),
                          content=redact_text(content, secrets)))
            s.commit()

    def import_document(self, doc: dict[str, Any]) -> int:
        """Write a checked, redacted run document (triage.export.json_) as a new run; returns its id.

        Not through add_*: those stamp "now" and commit per row, while an import keeps the original
        times and lands all-or-nothing, in one transaction."""
        r = doc["run"]
        with Session(self.engine) as s:
            target_id = _target_id(s, doc["target"]) if doc.get("target") else None
            run = Run(target_id=target_id, kind=r.get("kind") or "import", status=r.get("status") or "unknown",
                      summary=r.get("summary") or "", config_json=_dumps(r.get("config") or {}),
                      meta_json=_dumps(r.get("meta") or {}), finished_at=parse_iso(r.get("finished_at")))
            if r.get("started_at"):
                run.started_at = parse_iso(r["started_at"])  # type: ignore[assignment]
            s.add(run)
            s.flush()
            run_id = run.id
            assert run_id is not None
            for seq, fd in enumerate(doc.get("findings") or []):
                f = Finding.from_dict(fd)
                s.add(FindingRow(run_id=run_id, seq=seq, check=f.check, status=Status(f.status).value, title=f.title,
                                 evidence_json=_dumps(f.evidence), fix=f.fix, refs_json=_dumps(f.refs),
                                 explanation=f.explanation, failure_mode=f.failure_mode,
                                 created_at=run.started_at))
            for p in doc.get("probes") or []:
                s.add(ProbeResult(run_id=run_id, probe=p["probe"], outcome=p["outcome"],
                                  started_at=parse_iso(p.get("started_at")) or run.started_at,
                                  duration_s=p.get("duration_s"), time_to_verdict_s=p.get("time_to_verdict_s"),
                                  http_status=p.get("http_status"), detail_json=_dumps(p.get("detail") or {})))
            # one executemany, not one ORM object per sample: a day of 1 s samples is 86,400 rows
            table = MetricSample.__table__  # type: ignore[attr-defined]
            batch: list[dict[str, Any]] = []
            for m in doc.get("samples") or []:
                row = {k: None for k in SAMPLE_FIELDS}
                row.update({k: (m[k] if k in ("engine", "source") else float(m[k]))  # numbers stay numbers
                            for k in SAMPLE_FIELDS if m.get(k) is not None})
                row.update(run_id=run_id, target_id=target_id, extra_json=_dumps(m.get("extra") or {}),
                           engine=row["engine"] or "0", source=row["source"] or "scrape")
                batch.append(row)
                if len(batch) >= 5000:
                    s.execute(insert(table), batch)  # type: ignore[call-overload]
                    batch = []
            if batch:
                s.execute(insert(table), batch)  # type: ignore[call-overload]
            for c in doc.get("captures") or []:
                s.add(Capture(run_id=run_id, kind=c["kind"], name=c.get("name") or "", content=c.get("content") or "",
                              created_at=parse_iso(c.get("created_at")) or run.started_at))
            s.commit()
        return int(run_id)

    # -- reading -----------------------------------------------------------------------------
    def latest_run_id(self) -> int | None:
        with Session(self.engine) as s:
            return s.exec(select(func.max(Run.id))).one()

    def get_run(self, run_id: int, with_samples: bool = True) -> RunRecord | None:
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is None:
                return None
            t = s.get(Target, r.target_id) if r.target_id else None
            rows = s.exec(select(FindingRow).where(FindingRow.run_id == run_id).order_by(FindingRow.seq)).all()
            findings = [Finding(check=x.check, status=Status(x.status), title=x.title,
                                evidence=json.loads(x.evidence_json), fix=x.fix,
                                refs=json.loads(x.refs_json), explanation=x.explanation,
                                failure_mode=x.failure_mode if x.failure_mode is not None
                                else written_before(x.check, json.loads(x.evidence_json))) for x in rows]
            probes = [_probe_info(p) for p in
                      s.exec(select(ProbeResult).where(ProbeResult.run_id == run_id).order_by(ProbeResult.id))]
            samples = [_sample_dict(m) for m in s.exec(select(MetricSample).where(MetricSample.run_id == run_id)
                                                       .order_by(MetricSample.ts))] if with_samples else []
            caps = [_capture_info(c) for c in
                    s.exec(select(Capture).where(Capture.run_id == run_id).order_by(Capture.id))]
            return RunRecord(run=_run_info(r), target=_target_info(t) if t else None, findings=findings,
                             probes=probes, samples=samples, captures=caps)

    def list_runs(self, *, target_id: int | None = None, status: str | None = None,
                  limit: int = 50, offset: int = 0) -> list[tuple[RunInfo, Optional[TargetInfo]]]:
        """One page of runs, newest first; paging happens in the database, not in Python."""
        with Session(self.engine) as s:
            q = select(Run, Target).join(Target, Run.target_id == Target.id, isouter=True)  # type: ignore[arg-type]
            if target_id is not None:
                q = q.where(Run.target_id == target_id)
            if status:
                q = q.where(Run.status == status)
            q = q.order_by(Run.id.desc()).offset(offset).limit(limit)  # type: ignore[union-attr]
            return [(_run_info(r), _target_info(t) if t else None) for r, t in s.exec(q).all()]

    def count_runs(self, *, target_id: int | None = None, status: str | None = None) -> int:
        with Session(self.engine) as s:
            q = select(func.count()).select_from(Run)
            if target_id is not None:
                q = q.where(Run.target_id == target_id)
            if status:
                q = q.where(Run.status == status)
            return int(s.exec(q).one())

    def engine_samples(self, run_id: int) -> list[EngineSample]:
        """A run's series (watch scrapes, a log's stats lines) as EngineSample values, oldest first."""
        with Session(self.engine) as s:
            rows = s.exec(select(MetricSample).where(MetricSample.run_id == run_id).order_by(MetricSample.ts))
            return [EngineSample.from_row(_sample_dict(m)) for m in rows]

    def probe_series(self, run_id: int) -> list[ProbeSeries]:
        """Each stored probe of a run with the engine samples taken while it ran, typed, in run order."""
        with Session(self.engine) as s:
            rows = s.exec(select(ProbeResult).where(ProbeResult.run_id == run_id).order_by(ProbeResult.id))
            return [_probe_info(p).series for p in rows]

    def samples_for(self, *, run_id: int | None = None, target_id: int | None = None,
                    since: float | None = None) -> list[MetricSample]:
        with Session(self.engine) as s:
            q = select(MetricSample)
            if run_id is not None:
                q = q.where(MetricSample.run_id == run_id)
            if target_id is not None:
                q = q.where(MetricSample.target_id == target_id)
            if since is not None:
                q = q.where(MetricSample.ts >= since)
            return list(s.exec(q.order_by(MetricSample.ts)))

    def delete_samples_before(self, ts: float, *, target_id: int | None = None, run_id: int | None = None) -> int:
        """Retention: drop samples older than ts (of one target or run when given); returns how many went."""
        from sqlmodel import delete
        q = delete(MetricSample).where(MetricSample.ts < ts)  # type: ignore[arg-type]
        if target_id is not None:
            q = q.where(MetricSample.target_id == target_id)  # type: ignore[arg-type]
        if run_id is not None:
            q = q.where(MetricSample.run_id == run_id)  # type: ignore[arg-type]
        with Session(self.engine) as s:
            res = s.exec(q)  # type: ignore[call-overload]
            s.commit()
            return int(res.rowcount or 0)

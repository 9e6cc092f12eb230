"""Store methods that read runs back: one run with everything attached (RunRecord), pages of runs, counts, a run's
probe series. Every answer is a frozen value; samples come back as EngineSample (triage.store.samples)."""
from __future__ import annotations

import json
from typing import Optional

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from triage.catalogue.check_ids import written_before
from triage.findings import Finding, Status
from triage.sample import ProbeSeries
from triage.store.samples import read_samples
from triage.store.tables import Capture, FindingRow, ProbeRow, Run, TargetRow
from triage.store.values import RunInfo, RunRecord, TargetInfo, capture_info, probe_info, run_info, target_info


MAX_ROW_ID = 2**63 - 1  # the largest id SQLite's INTEGER and PostgreSQL's BIGINT hold


def is_row_id(value: object) -> bool:
    """Whether ``value`` can be a stored row's id (1 .. 2**63 - 1): a larger int overflows the database driver."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ROW_ID


def _finding(x: FindingRow) -> Finding:
    evidence = json.loads(x.evidence_json)
    return Finding(check=x.check, status=Status(x.status), title=x.title, evidence=evidence, fix=x.fix,
                   refs=json.loads(x.refs_json), explanation=x.explanation,
                   failure_mode=x.failure_mode if x.failure_mode is not None else written_before(x.check, evidence))


class RunReader:
    """Store methods that read runs."""

    engine: Engine

    def latest_run_id(self) -> int | None:
        with Session(self.engine) as s:
            return s.exec(select(func.max(Run.id))).one()

    def get_run(self, run_id: int, with_samples: bool = True) -> RunRecord | None:
        """Run ``run_id`` with everything attached; None when there is no such run (also for a number no database
        column holds: issue 43, ``?run=`` with 30 digits was an OverflowError on the page)."""
        if not is_row_id(run_id):
            return None
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is None:
                return None
            t = s.get(TargetRow, r.target_id) if r.target_id else None
            rows = s.exec(select(FindingRow).where(FindingRow.run_id == run_id).order_by(FindingRow.seq)).all()
            probes = [probe_info(p) for p in
                      s.exec(select(ProbeRow).where(ProbeRow.run_id == run_id).order_by(ProbeRow.id))]
            samples = read_samples(s, run_id=run_id) if with_samples else []
            caps = [capture_info(c) for c in
                    s.exec(select(Capture).where(Capture.run_id == run_id).order_by(Capture.id))]
            return RunRecord(run=run_info(r), target=target_info(t) if t else None,
                             findings=[_finding(x) for x in rows], probes=probes, samples=samples, captures=caps)

    def list_runs(self, *, target_id: int | None = None, status: str | None = None,
                  limit: int = 50, offset: int = 0) -> list[tuple[RunInfo, Optional[TargetInfo]]]:
        """One page of runs, newest first; paging happens in the database, not in Python."""
        with Session(self.engine) as s:
            q = select(Run, TargetRow).join(TargetRow, Run.target_id == TargetRow.id, isouter=True)  # type: ignore[arg-type]
            if target_id is not None:
                q = q.where(Run.target_id == target_id)
            if status:
                q = q.where(Run.status == status)
            q = q.order_by(Run.id.desc()).offset(offset).limit(limit)  # type: ignore[union-attr]
            return [(run_info(r), target_info(t) if t else None) for r, t in s.exec(q).all()]

    def count_runs(self, *, target_id: int | None = None, status: str | None = None) -> int:
        with Session(self.engine) as s:
            q = select(func.count()).select_from(Run)
            if target_id is not None:
                q = q.where(Run.target_id == target_id)
            if status:
                q = q.where(Run.status == status)
            return int(s.exec(q).one())

    def probe_series(self, run_id: int) -> list[ProbeSeries]:
        """Each stored probe of a run with the engine samples taken while it ran, typed, in run order."""
        if not is_row_id(run_id):
            return []
        with Session(self.engine) as s:
            rows = s.exec(select(ProbeRow).where(ProbeRow.run_id == run_id).order_by(ProbeRow.id))
            return [probe_info(p).series for p in rows]

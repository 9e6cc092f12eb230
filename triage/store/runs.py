"""Store methods that write targets and runs as they happen: a run's start, each finding (committed as it comes,
so a crash mid-run loses nothing already seen), its config, meta, probes, captures and end. Everything written
passes through triage.redact; triage.recorder is the one caller that writes a run."""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from triage.findings import Finding, Status, worst
from triage.redact import redact_obj, redact_text
from triage.store.tables import Capture, FindingRow, ProbeRow, Run, TargetRow, utcnow
from triage.store.values import (FILE_CAPTURES, ProbeInfo, RunInfo, TargetInfo, dumps, file_text, probe_info,
                                 redacted, run_info, target_info, text_of)


class TargetStore:
    """Store methods for saved targets."""

    engine: Engine

    def add_target(self, url: str, model: str | None = None, truncate_prompt_tokens: int | None = None,
                   cmdline: str | None = None, label: str | None = None) -> TargetInfo:
        t = TargetRow(url=redact_text(url), model=redacted(model), truncate_prompt_tokens=truncate_prompt_tokens,
                   cmdline=file_text(cmdline) if cmdline else None, label=redacted(label))
        with Session(self.engine) as s:
            s.add(t)
            s.commit()
            s.refresh(t)
            return target_info(t)

    def find_or_add_target(self, url: str, model: str | None = None, truncate_prompt_tokens: int | None = None,
                           cmdline: str | None = None, label: str | None = None) -> TargetInfo:
        """The saved target with every field the same as stored (redacted): url, model, truncation, command line
        (or deployment file) and label, else a new one. Two runs with different files never share a row: a report's
        fix and patch are of its own run's file (issue 43: two offline checks with the same truncation shared the
        "offline" row, and run 2's patch edited run 1's file)."""
        with Session(self.engine) as s:
            q = select(TargetRow).where(TargetRow.url == redact_text(url), TargetRow.model == redacted(model),
                                     TargetRow.truncate_prompt_tokens == truncate_prompt_tokens,
                                     TargetRow.cmdline == (file_text(cmdline) if cmdline else None),
                                     TargetRow.label == redacted(label))
            found = s.exec(q.order_by(TargetRow.id)).first()  # type: ignore[arg-type]
            if found:
                return target_info(found)
        return self.add_target(url, model, truncate_prompt_tokens, cmdline, label)

    def mark_target_used(self, target_id: int) -> None:
        """Remember ``target_id`` as the last target chosen (the dashboard opens a new tab on it)."""
        with Session(self.engine) as s:
            t = s.get(TargetRow, target_id)
            if t is not None:
                t.used_at = utcnow()
                s.add(t)
                s.commit()

    def last_used_target(self) -> TargetInfo | None:
        """The target chosen last (``mark_target_used``), or None."""
        with Session(self.engine) as s:
            q = select(TargetRow).where(TargetRow.used_at.is_not(None)).order_by(TargetRow.used_at.desc())  # type: ignore[union-attr]
            t = s.exec(q).first()
            return target_info(t) if t is not None else None

    def list_targets(self) -> list[TargetInfo]:
        with Session(self.engine) as s:
            return [target_info(t) for t in s.exec(select(TargetRow).order_by(TargetRow.id.desc()))]  # type: ignore[union-attr]


class RunWriter:
    """Store methods that write one run as it happens."""

    engine: Engine

    def start_run(self, target_id: int | None, kind: str, meta: dict[str, Any] | None = None) -> RunInfo:
        r = Run(target_id=target_id, kind=kind, meta_json=dumps(redact_obj(meta or {})))
        with Session(self.engine) as s:
            s.add(r)
            s.commit()
            s.refresh(r)
            return run_info(r)

    def add_finding(self, run_id: int, f: Finding) -> None:
        with Session(self.engine) as s:
            seq = s.exec(select(func.count()).select_from(FindingRow).where(FindingRow.run_id == run_id)).one()
            s.add(FindingRow(run_id=run_id, seq=int(seq), check=str(f.check), status=Status(f.status).value,
                             title=redact_text(text_of(f.title)), evidence_json=dumps(redact_obj(f.evidence)),
                             fix=redact_text(text_of(f.fix)), refs_json=dumps(redact_obj(f.refs)),
                             explanation=redact_text(text_of(f.explanation)), failure_mode=f.failure_mode))
            s.commit()

    def set_config(self, run_id: int, config: dict[str, Any]) -> None:
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is not None:
                r.config_json = dumps(redact_obj(config))
                s.add(r)
                s.commit()

    def update_meta(self, run_id: int, extra: dict[str, Any]) -> None:
        with Session(self.engine) as s:
            r = s.get(Run, run_id)
            if r is not None:
                meta = json.loads(r.meta_json or "{}")
                meta.update(redact_obj(extra))
                r.meta_json = dumps(meta)
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
            return run_info(r)

    def add_probe_result(self, run_id: int, probe: str, outcome: str, *, duration_s: float | None = None,
                         time_to_verdict_s: float | None = None, http_status: int | None = None,
                         detail: dict[str, Any] | None = None, started_at: datetime | None = None) -> ProbeInfo:
        p = ProbeRow(run_id=run_id, probe=probe, outcome=outcome, duration_s=duration_s,
                        time_to_verdict_s=time_to_verdict_s, http_status=http_status,
                        detail_json=dumps(redact_obj(detail or {})), started_at=started_at or utcnow())
        with Session(self.engine) as s:
            s.add(p)
            s.commit()
            s.refresh(p)
            return probe_info(p)

    def add_capture(self, run_id: int, kind: str, content: str, name: str = "",
                    secrets: tuple[str, ...] = ()) -> None:
        with Session(self.engine) as s:
            s.add(Capture(run_id=run_id, kind=kind, name=redact_text(name, secrets),
                          content=(file_text(content, secrets) or "") if kind in FILE_CAPTURES else
                          redact_text(content, secrets)))
            s.commit()

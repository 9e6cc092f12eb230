"""Importing a run document (triage.export.json_) as a new run: its original times kept, all-or-nothing in one
transaction (not through the per-row writes of triage.store.runs, which stamp "now" and commit each row)."""
from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from triage.findings import Finding, Status
from triage.store.samples import write_document_samples
from triage.store.tables import Capture, FindingRow, ProbeRow, Run, TargetRow
from triage.store.values import FILE_CAPTURES, dumps, file_text, parse_iso


IMPORTED = "imported"  # meta of a run written from a file: its server URL is the file's, not the user's (issue 43)


def _target_id(s: Session, t: dict[str, Any]) -> int:
    """Reuse an identical target (same url, model, truncation, cmdline, label), else add one. A Kubernetes Secret
    in the document's command line is dropped (triage.secret_docs), as on every other way in."""
    t = {**t, "cmdline": file_text(t.get("cmdline"))}
    q = select(TargetRow).where(TargetRow.url == t["url"], TargetRow.model == t.get("model"),
                             TargetRow.truncate_prompt_tokens == t.get("truncate_prompt_tokens"),
                             TargetRow.cmdline == t.get("cmdline"), TargetRow.label == t.get("label"))
    found = s.exec(q).first()
    if found is not None and found.id is not None:
        return found.id
    row = TargetRow(url=t["url"], model=t.get("model"), truncate_prompt_tokens=t.get("truncate_prompt_tokens"),
                 cmdline=t.get("cmdline"), label=t.get("label"))
    if t.get("created_at"):
        row.created_at = parse_iso(t["created_at"])  # type: ignore[assignment]
    s.add(row)
    s.flush()
    assert row.id is not None
    return row.id


class DocumentImport:
    """The store method that imports a run document."""

    engine: Engine

    def import_document(self, doc: dict[str, Any]) -> int:
        """Write a checked, redacted run document (triage.export.json_) as a new run; returns its id."""
        r = doc["run"]
        with Session(self.engine) as s:
            target_id = _target_id(s, doc["target"]) if doc.get("target") else None
            run = Run(target_id=target_id, kind=r.get("kind") or "import", status=r.get("status") or "unknown",
                      summary=r.get("summary") or "", config_json=dumps(r.get("config") or {}),
                      meta_json=dumps(r.get("meta") or {}),
                      finished_at=parse_iso(r.get("finished_at")))
            if r.get("started_at"):
                run.started_at = parse_iso(r["started_at"])  # type: ignore[assignment]
            s.add(run)
            s.flush()
            run_id = run.id
            assert run_id is not None
            for seq, fd in enumerate(doc.get("findings") or []):
                f = Finding.from_dict(fd)
                s.add(FindingRow(run_id=run_id, seq=seq, check=f.check, status=Status(f.status).value, title=f.title,
                                 evidence_json=dumps(f.evidence), fix=f.fix, refs_json=dumps(f.refs),
                                 explanation=f.explanation, failure_mode=f.failure_mode,
                                 created_at=run.started_at))
            for p in doc.get("probes") or []:
                s.add(ProbeRow(run_id=run_id, probe=p["probe"], outcome=p["outcome"],
                                  started_at=parse_iso(p.get("started_at")) or run.started_at,
                                  duration_s=p.get("duration_s"), time_to_verdict_s=p.get("time_to_verdict_s"),
                                  http_status=p.get("http_status"), detail_json=dumps(p.get("detail") or {})))
            write_document_samples(s, doc.get("samples") or [], run_id, target_id)
            for c in doc.get("captures") or []:
                s.add(Capture(run_id=run_id, kind=c["kind"], name=c.get("name") or "",
                              content=(file_text(c.get("content")) if c["kind"] in FILE_CAPTURES
                                       else c.get("content")) or "",
                              created_at=parse_iso(c.get("created_at")) or run.started_at))
            s.commit()
        return int(run_id)

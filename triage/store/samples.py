"""The store's boundary for engine samples: an EngineSample in (``sample_columns``), an EngineSample out
(``sample_of``), never a row or a renamed mapping. Columns carry vLLM's field names; a field without a column rides
in ``extra_json`` under its own name and is lifted back to its field when read (``EngineSample.from_dict``), so a
run written before the one shape (issue 34) opens as it did."""
from __future__ import annotations

import json
from typing import Any
from collections.abc import Iterable, Mapping

from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, delete, select

from triage.redact import redact_text
from triage.sample import EngineSample
from triage.store.tables import MetricSample

COLUMNS = ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_tokens_total",
           "request_success_total", "num_preemptions_total", "prompt_throughput")
_OWN = ("engine", "ts", "source", *COLUMNS)  # a stored sample's columns
_READ = tuple(getattr(MetricSample, k) for k in (*_OWN, "extra_json"))
_IMPORT_BATCH = 5000  # rows per executemany: a day of 1 s samples is 86,400


def sample_columns(s: EngineSample, run_id: int | None = None, target_id: int | None = None) -> dict[str, Any]:
    """One EngineSample as a table row's column values; a field without a column goes to extra_json by its name."""
    d = s.to_dict()
    extra = dict(d.pop("extra", {}) or {})
    for k in _OWN:
        d.pop(k, None)
    extra.update(d)
    return {"run_id": run_id, "target_id": target_id, "engine": s.engine or "0", "ts": s.ts, "source": s.source,
            **{k: getattr(s, k) for k in COLUMNS}, "extra_json": json.dumps(extra, default=str) if extra else "{}"}


def sample_of(row: Mapping[str, Any]) -> EngineSample:
    """A stored row's columns (``extra_json`` as text) back to the EngineSample it was."""
    text = row.get("extra_json")
    try:
        extra = json.loads(text) if text else {}
    except ValueError:
        extra = {}
    return EngineSample.from_dict({**{k: row.get(k) for k in _OWN if row.get(k) is not None},
                                   "extra": extra if isinstance(extra, dict) else {}})


def read_samples(s: Session, *, run_id: int | None = None, target_id: int | None = None,
                 since: float | None = None) -> list[EngineSample]:
    """Samples by run and/or target, oldest first (plain column tuples, no ORM object per row)."""
    q = select(*_READ)
    if run_id is not None:
        q = q.where(MetricSample.run_id == run_id)
    if target_id is not None:
        q = q.where(MetricSample.target_id == target_id)
    if since is not None:
        q = q.where(MetricSample.ts >= since)
    return [sample_of(r._mapping) for r in s.execute(q.order_by(MetricSample.ts, MetricSample.id))]  # type: ignore[arg-type]


def write_document_samples(s: Session, rows: Iterable[Mapping[str, Any]], run_id: int,
                           target_id: int | None) -> None:
    """A checked run document's samples (``to_dict()`` rows, or the shape before) into the open transaction."""
    table = MetricSample.__table__  # type: ignore[attr-defined]
    batch: list[dict[str, Any]] = []
    for m in rows:
        batch.append(sample_columns(EngineSample.from_dict(m), run_id, target_id))
        if len(batch) >= _IMPORT_BATCH:
            s.execute(insert(table), batch)  # type: ignore[call-overload]
            batch = []
    if batch:
        s.execute(insert(table), batch)  # type: ignore[call-overload]


class SampleStore:
    """Store methods for a run's (or a target's) engine samples."""

    engine: Engine

    def add_samples(self, samples: Iterable[EngineSample], *, run_id: int | None = None,
                    target_id: int | None = None) -> int:
        """Batched insert: one transaction, one executemany for many samples (no ORM object per row: a 100 MB log
        keeps ~16k samples). The engine label and the extras' strings (model_name …) come from the server's page:
        redacted once per distinct value."""
        rows = [sample_columns(s, run_id, target_id) for s in samples]
        labels: dict[str, str] = {}
        for r in rows:
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

    def engine_samples(self, run_id: int) -> list[EngineSample]:
        """A run's series (watch scrapes, a log's stats lines) as EngineSample values, oldest first."""
        with Session(self.engine) as s:
            return read_samples(s, run_id=run_id)

    def samples_for(self, *, run_id: int | None = None, target_id: int | None = None,
                    since: float | None = None) -> list[EngineSample]:
        """Samples of a run and/or a target (since ``since``, unix seconds), oldest first."""
        with Session(self.engine) as s:
            return read_samples(s, run_id=run_id, target_id=target_id, since=since)

    def delete_samples_before(self, ts: float, *, target_id: int | None = None, run_id: int | None = None) -> int:
        """Retention: drop samples older than ts (of one target or run when given); returns how many went."""
        q = delete(MetricSample).where(MetricSample.ts < ts)  # type: ignore[arg-type]
        if target_id is not None:
            q = q.where(MetricSample.target_id == target_id)  # type: ignore[arg-type]
        if run_id is not None:
            q = q.where(MetricSample.run_id == run_id)  # type: ignore[arg-type]
        with Session(self.engine) as s:
            res = s.exec(q)  # type: ignore[call-overload]
            s.commit()
            return int(res.rowcount or 0)

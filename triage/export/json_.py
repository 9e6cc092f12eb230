"""The versioned JSON run document: build it from a stored run, render it, and import it back.

The document is the one redacted view of a run that every exporter renders from (Markdown and
HTML read it, the bundle packs it), so redaction happens once, here, before any formatting can
hide a secret from the patterns (HTML escaping turns ``"Authorization": "Bearer x"`` into
something the patterns no longer see).

Round trip: ``to_document(get_run(import_run(store, doc)))`` equals ``doc`` except the
database ids (``comparable()`` drops them) and ``exported_at``.

Document (``run_format`` 1; readers refuse another ``run_format``; new optional keys do not bump it):
  schema "vllm-triage/1", document "run", run_format 1, exported_at ISO-8601 UTC, tool {name, version}
  run       {id, kind, status, started_at, finished_at, summary, config, meta}  (config as the engine
            stored it: {"values": {key: {value, source, detail}}, "conflicts", "sources", "stated_args"})
  target    {id, url, model, truncate_prompt_tokens, cmdline, label, created_at} | null
  findings  [Finding.to_dict(): check, status, title, evidence, fix, refs, explanation,
            failure_mode]  (run order)
  groups    [{mode, title, what, status, count, findings: [indices into findings], fix, refs, affected}]
            (findings by failure mode, worst first: one headline and the fix once per root cause;
            derived from findings and the catalogue, so an import ignores it)
  verdict   {status, headline, counts, cause, check, fix, experiments, mode, blocks: [{kind, title, code,
            language, note}]}  (the run's one verdict, triage.headline.document_verdict: what the CLI, the
            dashboard and the reports show; derived, so an import ignores it)
  probes    [{id, probe, outcome, started_at, duration_s, time_to_verdict_s, http_status, detail}]
  samples   [{engine, ts, source, num_requests_running, num_requests_waiting, kv_cache_usage_perc,
              prompt_tokens_total, request_success_total, num_preemptions_total, prompt_throughput, extra}]
  captures  [{id, kind, name, created_at, content}]
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError


from triage import SCHEMA, __version__
from triage.export.groups import document_groups
from triage.headline import document_verdict
from triage.findings import Status
from triage.redact import REDACTED, jsonable, known_secrets, redact_obj, redact_text
from triage.sample import NUMBER_FIELDS, TEXT_FIELDS
from triage.store import RunRecord, Store, parse_iso

DOCUMENT = "run"
RUN_FORMAT = 1  # bump on any incompatible change of the document below



# items a run document may hold per list: far above any real run (a checklist has ~30 findings, a probe run ~100
# probes, a day of 1 s watch samples 86,400 rows), far below what exhausts memory when each becomes a model and a row
ITEM_CAPS = {"findings": 5_000, "probes": 5_000, "captures": 1_000, "samples": 400_000}


class ImportError_(ValueError):
    """The file is not a run document this version can read."""


def iso(dt: datetime | None) -> str | None:
    """ISO-8601 in UTC; SQLite hands back naive datetimes that were written as UTC."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()


def _loads(s: str | None, default: Any) -> Any:
    try:
        return json.loads(s) if s else default
    except ValueError:
        return default


def to_document(record: RunRecord, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """Everything in the run as plain JSON values, redacted (patterns and the exact secrets)."""
    r, t = record.run, record.target
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "document": DOCUMENT,
        "run_format": RUN_FORMAT,
        "exported_at": iso(datetime.now(UTC)),
        "tool": {"name": "vllm-triage", "version": __version__},
        "run": {"id": r.id, "kind": r.kind, "status": r.status, "started_at": iso(r.started_at),
                "finished_at": iso(r.finished_at), "summary": r.summary,
                "config": r.config, "meta": r.meta},
        "target": None if t is None else {
            "id": t.id, "url": t.url, "model": t.model, "truncate_prompt_tokens": t.truncate_prompt_tokens,
            "cmdline": t.cmdline, "label": t.label, "created_at": iso(t.created_at)},
        "findings": [f.to_dict() for f in record.findings],
        "probes": [{"id": p.id, "probe": p.probe, "outcome": p.outcome, "started_at": iso(p.started_at),
                    "duration_s": p.duration_s, "time_to_verdict_s": p.time_to_verdict_s,
                    "http_status": p.http_status, "detail": p.detail} for p in record.probes],
        "captures": [{"id": c.id, "kind": c.kind, "name": c.name, "created_at": iso(c.created_at),
                      "content": c.content} for c in record.captures],
    }
    doc["groups"] = [g.to_dict() for g in document_groups(doc)[0]]
    doc["verdict"] = document_verdict(doc).to_dict()  # the one verdict (triage.headline), redacted with the rest
    return redact_document(doc, secrets, [m.to_dict() for m in record.samples])


def redact_document(doc: dict[str, Any], secrets: Iterable[str] = (),
                    samples: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """redact_obj over the document; the samples (``samples``, else the document's: ``EngineSample.to_dict()``
    each) are numbers plus a few labels and an extra dict, so only their strings are redacted, once per distinct label
    (a day of 1 s samples is 86,400 rows: redact_obj on each costs tens of seconds)."""
    secrets = tuple(s for s in secrets if s)
    rows = (doc.get("samples") or []) if samples is None else samples
    out = redact_obj({k: v for k, v in doc.items() if k != "samples"}, secrets)
    labels: dict[str, str] = {}

    def label(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        if v not in labels:
            labels[v] = redact_text(v, secrets)
        return labels[v]

    out["samples"] = [{**row, **{k: label(row[k]) for k in TEXT_FIELDS if k in row},
                       "extra": redact_obj(row["extra"], secrets) if row.get("extra") else {}}
                      for row in rows if isinstance(row, dict)]
    return out


def dumps(doc: dict[str, Any], secrets: Iterable[str] = ()) -> bytes:
    """Stable, pretty JSON, one line per metric sample (a long watch run stays a readable size);
    a last pass of the exact secrets over the text catches any escape form."""
    samples = doc.get("samples") or []
    text = json.dumps(jsonable({**doc, "samples": []}), indent=2, sort_keys=True, ensure_ascii=False, default=str)
    if samples:
        enc = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str, separators=(", ", ": "))
        rows = ",\n    ".join(enc.encode(jsonable(m)) for m in samples)
        for end in (",", ""):  # "samples" is followed by "schema", unless a caller's document ends there
            key = f'\n  "samples": []{end}\n'
            if key in text:
                text = text.replace(key, f'\n  "samples": [\n    {rows}\n  ]{end}\n', 1)
                break
    # the exact secrets only, in their plain and JSON-escaped forms: the shapes were redacted string by string
    # (redact_document); a shape pass over JSON text broke the document (`api_key=\"EMPTY\"` in a fix block's
    # code became `api_key=[REDACTED]"EMPTY\"`: CI 2026-12-06)
    forms = {x for s in (*known_secrets(), *secrets) if s for x in (s, json.dumps(s, ensure_ascii=False)[1:-1])}
    for secret in sorted(forms, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text.encode("utf-8") + b"\n"


def render(record: RunRecord, secrets: Iterable[str] = ()) -> bytes:
    return dumps(to_document(record, secrets), secrets)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without what an import legitimately changes: database ids and exported_at."""
    d = json.loads(json.dumps(doc, default=str))
    d.pop("exported_at", None)
    d["run"].pop("id", None)
    if d.get("target"):
        d["target"].pop("id", None)
    for key in ("probes", "captures"):
        for item in d.get(key, []):
            item.pop("id", None)
    return d


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False, strict=False)


def _iso_ok(v: str | None) -> str | None:
    if v is not None:
        try:
            dt = parse_iso(v)
        except (ValueError, TypeError):
            raise ValueError(f"not an ISO-8601 time: {v[:40]!r}") from None
        try:  # the store keeps UTC: 9999-12-31T23:59:59-14:00 is past year 9999 there (was an OverflowError and
            # a 540-character SQL dump from the database layer, issue 33)
            if dt is not None:
                dt.astimezone(UTC)
        except OverflowError:
            raise ValueError(f"{v[:40]!r} is outside the years 1 to 9999 in UTC: a time the database cannot "
                             "store") from None
    return v


IsoTime = Annotated[Optional[str], AfterValidator(_iso_ok)]


class _RunDoc(_Doc):
    id: Optional[int] = None
    kind: Optional[str] = None
    status: Optional[str] = None
    started_at: IsoTime = None
    finished_at: IsoTime = None
    summary: Optional[str] = None
    config: Optional[dict[str, Any]] = None
    meta: Optional[dict[str, Any]] = None


class _TargetDoc(_Doc):
    id: Optional[int] = None
    url: str
    model: Optional[str] = None
    truncate_prompt_tokens: Optional[int] = None
    cmdline: Optional[str] = None
    label: Optional[str] = None
    created_at: IsoTime = None


class _FindingDoc(_Doc):
    check: str
    status: Status
    title: str = ""
    evidence: Optional[dict[str, Any]] = None
    fix: Optional[str] = None
    refs: Optional[list[str]] = None
    explanation: Optional[str] = None
    failure_mode: Optional[str] = None


class _ProbeDetail(_Doc):
    """What the exports read of a probe's detail (timeline samples, recovery): shaped as the probe runner stores it."""

    request: Optional[dict[str, Any]] = None
    samples: Optional[list[dict[str, Any]]] = None
    recovery: Optional[dict[str, Any]] = None


class _ProbeDoc(_Doc):
    id: Optional[int] = None
    probe: str
    outcome: str
    started_at: IsoTime = None
    duration_s: Optional[float] = None
    time_to_verdict_s: Optional[float] = None
    http_status: Optional[int] = None
    detail: Optional[_ProbeDetail] = None


class _CaptureDoc(_Doc):
    id: Optional[int] = None
    kind: str
    name: Optional[str] = None
    created_at: IsoTime = None
    content: Optional[str] = None


class _Document(_Doc):
    tool: Optional[dict[str, Any]] = None
    run: _RunDoc
    target: Optional[_TargetDoc] = None
    findings: Optional[list[_FindingDoc]] = None
    probes: Optional[list[_ProbeDoc]] = None
    captures: Optional[list[_CaptureDoc]] = None


def _check_samples(samples: Any) -> None:
    """Samples are many (a day of 1 s scrapes is 86,400): checked by hand, not by model instances."""
    if samples is None:
        return
    if not isinstance(samples, list):
        raise ImportError_("samples: not a list")
    for i, m in enumerate(samples):
        if not isinstance(m, dict):
            raise ImportError_(f"samples[{i}]: not an object")
        for k in TEXT_FIELDS:
            if m.get(k) is not None and not isinstance(m[k], str):
                raise ImportError_(f"samples[{i}].{k}: not a string")
        v = m.get("ts")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise ImportError_(f"samples[{i}].ts: a sample needs a finite number of unix seconds")
        for k in NUMBER_FIELDS:
            v = m.get(k)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                raise ImportError_(f"samples[{i}].{k}: not a number")
        if m.get("extra") is not None and not isinstance(m["extra"], dict):
            raise ImportError_(f"samples[{i}].extra: not an object")


def validate(data: Any) -> dict[str, Any]:
    """Check the whole document (envelope, run, target, findings, probes, samples, captures), so that
    nothing imported can crash a report later; raises ImportError_ with a message a user can act on."""
    if not isinstance(data, dict) or data.get("document") != DOCUMENT:
        raise ImportError_("not a vllm-triage run document (no \"document\": \"run\")")
    if data.get("schema") != SCHEMA:
        raise ImportError_(f"schema {str(data.get('schema'))[:80]!r} is not {SCHEMA!r}")
    if data.get("run_format") != RUN_FORMAT:
        raise ImportError_(f"run_format {str(data.get('run_format'))[:40]!r}: this version reads {RUN_FORMAT}")
    if not isinstance(data.get("run"), dict):
        raise ImportError_("the document has no run")
    for key, cap in ITEM_CAPS.items():  # counted before any model is built: 600,000 tiny findings took 2.7 GB
        items = data.get(key)
        if isinstance(items, list) and len(items) > cap:
            raise ImportError_(f"{key}: {len(items):,} items, more than the {cap:,} a run document may hold (item cap)")
    try:
        _Document.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "document"
        raise ImportError_(f"{where}: {first.get('msg', 'invalid')} ({e.error_count()} problem(s) in all)") from None
    _check_samples(data.get("samples"))
    return data


def import_run(store: Store, data: dict[str, Any]) -> int:
    """Write a run document into the store as a new run, in one transaction; returns its id.

    The document is checked and redacted again here (as every other write is); the store writes
    it all-or-nothing with its original times (``Store.import_document``).
    """
    return store.import_document(redact_document(validate(data)))

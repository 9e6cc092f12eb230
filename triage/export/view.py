"""What a report shows, computed once from the run document (Markdown and HTML only lay it out)."""
from __future__ import annotations

import json
from typing import Any, Optional

from triage.export.rows import document_samples
from triage.findings import ORDER, Status
from triage.headline import Verdict, document_verdict

STATUS_ORDER = list(reversed(ORDER))  # most severe first

# Versions worth a line in a ticket, in this order, from the effective config.
VERSION_KEYS = ("vllm_version", "device", "gpu_name", "gpu_memory_total_bytes", "driver_version", "cuda_version")


def verdict(doc: dict[str, Any]) -> Verdict:
    """The run's one verdict (``triage.headline.document_verdict``): the reports lay it out, they compute none."""
    return document_verdict(doc)


def value_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, default=str)


def config_values(doc: dict[str, Any]) -> dict[str, Any]:
    """The effective values: the engine stores {"values", "conflicts", "sources", "stated_args"};
    a bare {key: {"value", "source", "detail"}} (older runs, tests) is read as the values."""
    config = doc["run"].get("config") or {}
    values = config.get("values")
    return values if isinstance(values, dict) else config


def config_rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(key, value, source, detail) for each effective config entry, sorted by key."""
    rows = []
    for key, entry in sorted(config_values(doc).items()):
        if isinstance(entry, dict) and "value" in entry:
            rows.append((key, value_text(entry.get("value")), str(entry.get("source") or ""),
                         str(entry.get("detail") or "")))
        else:  # a bare value (or one redacted whole): show it, provenance unknown
            rows.append((key, value_text(entry), "", ""))
    return rows


def source_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(evidence source, "ok" or why it gave nothing), when the engine recorded them."""
    sources = (doc["run"].get("config") or {}).get("sources")
    return [(str(k), value_text(v)) for k, v in sorted(sources.items())] if isinstance(sources, dict) else []


def scope_rows(doc: dict[str, Any], v: Optional[Verdict] = None) -> list[tuple[str, str, str]]:
    """A passing run's scope, as the dashboard shows it (triage.scope): (checked | not checked, part, how or what is
    unknown). Empty for a run with a problem (its findings say what to do) or nothing read. ``v``: the run's verdict
    when the caller has it."""
    from triage.scope import scope

    if (v or verdict(doc)).status != Status.PASS.value:
        return []
    sources = (doc["run"].get("config") or {}).get("sources")
    sets = (doc["run"].get("meta") or {}).get("sets") or []
    parts = scope(sources if isinstance(sources, dict) else None, [str(x) for x in sets if isinstance(x, str)])
    return [("checked" if c.checked else "not checked", c.part.title, c.how if c.checked else c.part.unchecked)
            for c in parts]


def conflict_rows(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(key, chosen "value (source)", the others) where sources disagreed."""
    def fact(f: Any) -> str:
        return f"{value_text(f.get('value'))} ({f.get('source')})" if isinstance(f, dict) else value_text(f)
    conflicts = (doc["run"].get("config") or {}).get("conflicts")
    if not isinstance(conflicts, list):
        return []
    return [(str(c.get("key")), fact(c.get("chosen")), "; ".join(fact(o) for o in c.get("others") or []))
            for c in conflicts if isinstance(c, dict)]


def versions(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """vLLM, hardware and tool versions from the config and run meta."""
    config = config_values(doc)
    meta = doc["run"].get("meta") or {}
    out = []
    for key in VERSION_KEYS:  # the effective config first; a probe run keeps what it saw in meta
        entry = config.get(key, meta.get(key))
        if entry is not None:
            out.append((key, value_text(entry.get("value") if isinstance(entry, dict) else entry)))
    meta_versions = meta.get("versions")
    if isinstance(meta_versions, dict):
        out += [(str(k), value_text(v)) for k, v in sorted(meta_versions.items())]
    tool = doc.get("tool") or {}
    out.append(("vllm-triage", str(tool.get("version", ""))))
    return out


def probe_rows(doc: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for p in doc.get("probes") or []:
        rec = (p.get("detail") or {}).get("recovery") or {}
        recovery = ""
        if rec:
            recovery = ", ".join(f"{k}={value_text(v)}" for k, v in sorted(rec.items())
                                 if v is not None and not isinstance(v, (list, dict)))  # polls: in the JSON
        rows.append({"probe": p["probe"], "outcome": p["outcome"],
                     "http_status": "" if p.get("http_status") is None else str(p["http_status"]),
                     "duration_s": _num(p.get("duration_s")),
                     "time_to_verdict_s": _num(p.get("time_to_verdict_s")), "recovery": recovery})
    return rows


def sample_summary(doc: dict[str, Any]) -> dict[str, str]:
    samples = document_samples(doc)  # typed: the one reader of stored samples
    if not samples:
        return {}
    ts = [s.ts for s in samples]
    out = {"samples": str(len(samples)), "span_s": _num(max(ts) - min(ts)),
           "sources": ", ".join(sorted({str(s.source) for s in samples}))}
    for key in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc"):
        vals = [v for s in samples if (v := getattr(s, key)) is not None]
        if vals:
            out[f"max {key}"] = _num(max(vals))
    return out


def meta_rows(doc: dict[str, Any], limit: int = 300) -> list[tuple[str, str]]:
    """The run's arguments and facts (meta), one line each, long values cut (the JSON has them whole)."""
    rows = []
    for k, v in sorted((doc["run"].get("meta") or {}).items()):
        if k != "versions":
            t = value_text(v)
            rows.append((str(k), t if len(t) <= limit else t[:limit] + " …"))
    return rows


def target_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    t = doc.get("target") or {}
    r = doc["run"]
    rows = [("run", f"{r.get('id')} ({r.get('kind')})"), ("started", str(r.get("started_at") or "")),
            ("finished", str(r.get("finished_at") or "not finished"))]
    for key in ("url", "model", "truncate_prompt_tokens", "label", "cmdline"):
        if t.get(key) not in (None, ""):
            rows.append((key, str(t[key])))
    return rows


def verification(doc: dict[str, Any]) -> tuple[str, list[tuple[str, str, str, str]]]:
    """A ``verify`` run's pair (``triage.twin.verify``): (the line that says what it verifies and how it ended, the
    before/after rows); for the run it verified, the line that names the run that did; ("", []) otherwise."""
    meta = doc["run"].get("meta") or {}
    ver = meta.get("verification")
    if isinstance(ver, dict):
        word = {True: "fix VERIFIED", False: "fix NOT verified"}.get(ver.get("verified"), "nothing to compare")
        skipped = [str(s) for s in ver.get("skipped") or []]
        line = f"This run verifies run {ver.get('before')}: {word}" + (
            f"; not rerun: {'; '.join(skipped)}" if skipped else "")
        rows = [(str(r.get("item")), value_text(r.get("before")), value_text(r.get("after")), str(r.get("result")))
                for r in ver.get("pairs") or [] if isinstance(r, dict)]
        return line, rows
    if meta.get("verified_by") is not None:
        return f"A fix was verified against this run by run {meta['verified_by']} (its report has the pair).", []
    return "", []


def _num(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)

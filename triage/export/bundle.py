"""Support bundle: a zip of the Markdown, HTML and JSON reports, the raw captures, and a manifest.

Every member is built from the redacted run document, so a secret removed there is removed
everywhere; the exact secrets are replaced once more on each member's text.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from triage.export import html, json_, markdown
from triage.redact import redact_text

_EXT = {"metrics-page": "txt", "log": "log", "cmdline": "txt"}


def _slug(s: str, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._")[:limit] or "x"


def _is_json(text: str) -> bool:
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def members(doc: dict[str, Any], secrets: Iterable[str] = ()) -> list[tuple[str, bytes, dict[str, Any]]]:
    """(path, bytes, manifest entry) for each file, in a stable order."""
    out: list[tuple[str, bytes, dict[str, Any]]] = [
        ("report.md", markdown.render_document(doc, secrets), {"kind": "report", "format": "md"}),
        ("report.html", html.render_document(doc, secrets), {"kind": "report", "format": "html"}),
        ("run.json", json_.dumps(doc, secrets), {"kind": "report", "format": "json"}),
    ]
    target = doc.get("target") or {}
    if target.get("cmdline"):
        out.append(("raw/target-cmdline.txt", target["cmdline"].encode(),
                    {"kind": "cmdline", "name": "target", "captured_at": target.get("created_at")}))
    for i, c in enumerate(doc.get("captures") or [], 1):
        name = f"raw/{i:03d}-{_slug(c['kind'], 30)}" + (f"-{_slug(c['name'])}" if c.get("name") else "")
        if not re.search(r"\.(txt|log|json)$", name):
            name += "." + ("json" if _is_json(c.get("content") or "") else _EXT.get(c["kind"], "txt"))
        out.append((name, (c.get("content") or "").encode(),
                    {"kind": c["kind"], "name": c.get("name") or "", "captured_at": c.get("created_at")}))
    for i, p in enumerate(doc.get("probes") or [], 1):
        detail = p.get("detail") or {}
        sample = {"probe": p["probe"], "outcome": p["outcome"], "http_status": p.get("http_status"),
                  "started_at": p.get("started_at"), "request": detail.get("request"),
                  "response": detail.get("response")}
        out.append((f"probes/{i:03d}-{_slug(p['probe'])}.json",
                    json.dumps(sample, indent=2, sort_keys=True, default=str).encode(),
                    {"kind": "probe-sample", "name": p["probe"], "captured_at": p.get("started_at")}))
    secrets = tuple(s for s in secrets if s)
    if secrets:
        out = [(path, redact_text(data.decode("utf-8", "replace"), secrets).encode(), entry)
               for path, data, entry in out]
    return out


def _zip_time(doc: dict[str, Any]) -> tuple[int, int, int, int, int, int]:
    """The run's start as the members' time, so one run always zips to the same bytes."""
    started = json_.parse_iso(doc["run"].get("started_at")) or datetime(1980, 1, 1, tzinfo=UTC)
    t = started.astimezone(UTC)
    return (max(t.year, 1980), t.month, t.day, t.hour, t.minute, t.second)


def render_document(doc: dict[str, Any], secrets: Iterable[str] = ()) -> bytes:
    files = members(doc, secrets)
    manifest = {
        "schema": json_.SCHEMA, "document": "bundle-manifest", "run_id": doc["run"].get("id"),
        "run_started_at": doc["run"].get("started_at"), "run_finished_at": doc["run"].get("finished_at"),
        "created_at": doc.get("exported_at"), "tool": doc.get("tool"),
        "redaction": "API keys, Authorization headers and *_KEY/*_TOKEN/*_SECRET/*_PASSWORD values "
                     "replaced by [REDACTED] in every file",
        "files": [{"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), **entry}
                  for path, data, entry in files],
    }
    files.append(("manifest.json", json.dumps(manifest, indent=2, sort_keys=True).encode(), {}))
    buf = io.BytesIO()
    when = _zip_time(doc)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data, _ in files:
            info = zipfile.ZipInfo(f"triage-run-{doc['run'].get('id')}/{path}", date_time=when)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()

"""Run exporters: one module per format, one ``render(record, fmt) -> bytes`` seam.

Every format renders from the same redacted run document (``json_.to_document``), so what a
report says and what it hides are decided in one place.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import RunRecord



@dataclass(frozen=True)
class ExportFormat:
    """One export format as the faces offer it (``report --format``, the dashboard's download buttons)."""

    id: str
    label: str
    mime: str
    ext: str


EXPORT_FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("md", "Markdown", "text/markdown", "md"),
    ExportFormat("html", "HTML", "text/html", "html"),
    ExportFormat("json", "JSON", "application/json", "json"),
    ExportFormat("bundle", "Support bundle (zip)", "application/zip", "zip"),
)
FORMATS = tuple(f.id for f in EXPORT_FORMATS)
EXTENSIONS = {f.id: f.ext for f in EXPORT_FORMATS}
MEDIA_TYPES = {f.id: f.mime for f in EXPORT_FORMATS}


def _renderers() -> dict[str, Callable[[dict[str, Any], Iterable[str]], bytes]]:
    from triage.export import bundle, html, json_, markdown
    return {"md": markdown.render_document, "html": html.render_document, "json": json_.dumps,
            "bundle": bundle.render_document}


def render_document(doc: dict[str, Any], fmt: str, secrets: Iterable[str] = ()) -> bytes:
    """Render an already built (or imported) run document."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    return _renderers()[fmt](doc, tuple(secrets))


def render(record: RunRecord, fmt: str, secrets: Iterable[str] = ()) -> bytes:
    """A stored run as bytes in one format; ``secrets`` are exact strings to redact besides the patterns."""
    from triage.export.json_ import to_document
    secrets = tuple(secrets)
    return render_document(to_document(record, secrets), fmt, secrets)


def default_filename(run_id: int | None, fmt: str) -> str:
    return f"triage-run-{run_id}.{EXTENSIONS[fmt]}"

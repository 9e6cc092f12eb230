"""Run exporters: one module per format, one ``render(record, fmt) -> bytes`` seam.

Every format renders from the same redacted run document (``json_.to_document``), so what a
report says and what it hides are decided in one place.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from triage.store import RunRecord

FORMATS = ("md", "html", "json", "bundle")
EXTENSIONS = {"md": "md", "html": "html", "json": "json", "bundle": "zip"}
MEDIA_TYPES = {"md": "text/markdown", "html": "text/html", "json": "application/json", "bundle": "application/zip"}


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

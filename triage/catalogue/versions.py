"""vLLM versions for the catalogue: the one parser lives in triage/versions.py (below the catalogue, so the
per-release knowledge in triage/vllm can use it without an import circle)."""

from __future__ import annotations

from triage.versions import Version, VersionRange, fmt, parse_version

__all__ = ["Version", "VersionRange", "parse_version", "fmt"]

"""vLLM Embedding Triage engine: evidence, checks, probes, storage and exporters (no Streamlit)."""
from __future__ import annotations

__version__ = "0.1.0"

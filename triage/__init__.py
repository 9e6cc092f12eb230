"""vLLM Embedding Triage engine: evidence, checks, probes, storage and exporters (no Streamlit)."""
from __future__ import annotations

__version__ = "0.1.0"
SCHEMA = "vllm-triage/1"  # the JSON contract of the CLI and of exports; bump on a breaking change

"""Live probes against a vLLM embedding server: the pooling livelock's seed matrix, conformance, throughput.

The names below load on first use: the registries (triage.probes.registry) without the runner, the runner and
its sets (httpx, the client libraries' shims) only when a probe run is asked for (bench/bench_cli.py).
"""
from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    **dict.fromkeys(("DEFAULT_SETS", "HANG_REASON", "SETS", "HangNotAllowed", "OUTCOME_STATUS", "PROBE_SETS",
                     "ProbeSet", "outcome_status", "resolve_sets"), "registry"),
    **dict.fromkeys(("ProbeRunResult", "run_probes", "run_probes_async"), "api"),
    **dict.fromkeys(("OUTCOMES", "MonitorConfig", "ProbeEvent", "ProbeOutcome"), "runner"),
}
__all__ = ["DEFAULT_SETS", "HANG_REASON", "SETS", "HangNotAllowed", "ProbeRunResult", "PROBE_SETS", "ProbeSet",
           "OUTCOME_STATUS", "outcome_status", "resolve_sets",
           "run_probes", "run_probes_async", "OUTCOMES", "MonitorConfig", "ProbeEvent", "ProbeOutcome"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)

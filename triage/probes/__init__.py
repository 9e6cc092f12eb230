"""Live probes against a vLLM embedding server: the #55427 seed matrix, conformance, throughput."""
from __future__ import annotations

from triage.probes.api import (
                               DEFAULT_SETS,
                               HANG_REASON,
                               SETS,
                               HangNotAllowed,
                               ProbeRunResult,
                               OUTCOME_STATUS,
                               PROBE_SETS,
                               ProbeSet,
                               outcome_status,
                               resolve_sets,
                               run_probes,
                               run_probes_async,
)
from triage.probes.runner import OUTCOMES, MonitorConfig, ProbeEvent, ProbeOutcome

__all__ = ["DEFAULT_SETS", "HANG_REASON", "SETS", "HangNotAllowed", "ProbeRunResult", "PROBE_SETS", "ProbeSet",
           "OUTCOME_STATUS", "outcome_status", "resolve_sets",
           "run_probes", "run_probes_async", "OUTCOMES", "MonitorConfig", "ProbeEvent", "ProbeOutcome"]

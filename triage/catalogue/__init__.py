"""The catalogue of known failure modes of vLLM embedding deployments: one record per mode.

Every verdict path (checklist, probes, watch, log post-mortem, fleet, reports, dashboard) reads a
mode's wording, affected versions, refs and fix from its record here; none keeps a copy. The records are data:
``triage/catalogue/data/<module>.toml``, one table per record, read by ``triage.catalogue.load`` into `FailureMode`
and served as attributes of their module (``triage.catalogue.vectors.MISSING_EOS``). A new failure mode is one table
there (its fix and clue functions in the module beside it) plus the readers of its evidence.
"""

from __future__ import annotations

from triage.catalogue.model import ConfigLike, FailureMode
from triage.catalogue.records import (
    ENGINE_DEAD,
    ENGINE_STALL,
    KV_CACHE_TOO_SMALL,
    MODES,
    OOM,
    POOLING_LIVELOCK,
    POOLING_LIVELOCK_CLIENT_TIMEOUTS,
    RELATED_REPORTS,
    STUCK_WAITING,
    UNSUPPORTED_HEAD_DIM,
    explain_episodes,
    explain_stall,
    get,
    mode_for_check,
    mode_of,
)
from triage.catalogue.stalls import STALL_CHECKS, StallWords, word_stall
from triage.catalogue.versions import Version, VersionRange, fmt, parse_version

__all__ = [
    "ConfigLike",
    "ENGINE_DEAD",
    "ENGINE_STALL",
    "FailureMode",
    "KV_CACHE_TOO_SMALL",
    "MODES",
    "OOM",
    "POOLING_LIVELOCK",
    "POOLING_LIVELOCK_CLIENT_TIMEOUTS",
    "RELATED_REPORTS",
    "STALL_CHECKS",
    "STUCK_WAITING",
    "StallWords",
    "UNSUPPORTED_HEAD_DIM",
    "Version",
    "VersionRange",
    "explain_episodes",
    "explain_stall",
    "fmt",
    "get",
    "mode_for_check",
    "mode_of",
    "parse_version",
    "word_stall",
]

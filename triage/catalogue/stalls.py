"""A stall episode worded once, for every source that measures one: probe, watch, log post-mortem, fleet.

``word_stall`` picks the check id (``STALL_CHECKS``: one row per source), the catalogue record by version
(``explain_stall`` / ``explain_episodes``: the pooling livelock only where the version can have it) and the
words: ``<subject>: <what the record calls it>: <gauge shape><what this source saw>``, the record's fix
(computed from the config where the source knows it), refs and mechanism. Each source keeps only its
subject (a probe case, an engine, a replica) and its own observation (verdict time, window, stats lines).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from triage.catalogue.model import ConfigLike, FailureMode
from triage.catalogue.records import (
    ENGINE_STALL,
    POOLING_LIVELOCK,
    POOLING_LIVELOCK_CLIENT_TIMEOUTS,
    STUCK_WAITING,
    explain_episodes,
)
from triage.catalogue.versions import fmt, parse_version
from triage.stall import LIVELOCK, STUCK_WAITING as STUCK_WAITING_KIND

# source -> (a stall with requests running, a request stuck waiting, episodes that recur); declared in checks.py
STALL_CHECKS: dict[str, tuple[str, str, str]] = {
    "probe": ("probe-livelock", "probe-stuck-waiting", ""),
    "watch": ("watch-engine-stalled", "watch-engine-stalled", "watch-episodes-recurring"),
    "log": ("log-livelock-suspect", "log-stuck-waiting", "log-episodes-recurring"),
    "fleet": ("fleet-replica-stalled", "fleet-replica-stalled", "fleet-episodes-recurring"),
}
SHAPES = {LIVELOCK: "running >= 1, no progress", STUCK_WAITING_KIND: "running 0, waiting >= 1, no progress"}


@dataclass(frozen=True)
class StallWords:
    """What a stall finding says; ``finding_args()`` are the ``Finding`` keywords besides status and evidence."""

    check: str
    mode: FailureMode
    title: str
    fix: str
    refs: tuple[str, ...]
    explanation: str

    def finding_args(self) -> dict[str, Any]:
        return {"check": self.check, "title": self.title, "fix": self.fix, "refs": list(self.refs),
                "explanation": self.explanation, "failure_mode": self.mode.id}


def stall_name(mode: FailureMode, version: Any = None) -> str:
    """What the record calls a measured stall: the livelock with its ref, a stall that is not it, a request
    that waits forever."""
    ref = POOLING_LIVELOCK.refs[0]
    if mode is POOLING_LIVELOCK:
        return f"livelock ({ref})"
    if mode is ENGINE_STALL:
        return f"engine stall on vLLM {fmt(parse_version(version)) if version else version} (it carries the fix " \
               f"of {ref}: not that bug)"
    if mode is STUCK_WAITING:
        return f"stuck waiting (not the pooling livelock, {ref})"
    return mode.title


def word_stall(source: str, kind: Optional[str], version: Any, *, subject: str, seen: str = "",
               recurring: bool = False, suspect: bool = False, cfg: Optional[ConfigLike] = None,
               note: str = "") -> StallWords:
    """The one wording of a stall episode (or of a recurring series of them) measured by ``source``.

    ``subject`` names what stalled, ``seen`` what this source saw (appended to the title), ``suspect`` marks a
    stall the source could not confirm (a log that goes silent), ``cfg`` lets the fix name this deployment's
    numbers, ``note`` goes before the record's mechanism in the explanation.
    """
    stalled, stuck, again = STALL_CHECKS[source]
    mode = explain_episodes(kind, version, recurring and bool(again))
    check = again if mode is POOLING_LIVELOCK_CLIENT_TIMEOUTS else stuck if kind == STUCK_WAITING_KIND else stalled
    shape = "" if mode is POOLING_LIVELOCK_CLIENT_TIMEOUTS else f": {SHAPES.get(kind or '', SHAPES[LIVELOCK])}"
    unknown = " (the vLLM version is unknown)" if mode is POOLING_LIVELOCK and parse_version(version) is None else ""
    title = f"{subject}: {'suspected ' if suspect else ''}{stall_name(mode, version)}{unknown}{shape}{seen}"
    explanation = " ".join(p for p in (note, mode.mechanism) if p)
    return StallWords(check, mode, title, mode.fix(cfg, now=True), tuple(mode.refs), explanation)

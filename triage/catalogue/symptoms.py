"""Symptoms and clues: what a user sees, and the evidence that tells one record producing it from another.

A record (``FailureMode``) declares the symptoms it can produce (``symptoms``), the clues that weigh for or
against it (``clues``: pure readers of a ``Case``) and the experiment that singles it out (``experiment``).
The differential (``triage.differential``) gathers, for a symptom a run shows, every record that declares
it, reads each record's clues on the run's case, and names one only when the evidence singles it out;
otherwise it says "one of A or B" with the experiments that tell them apart. Plain data and pure functions:
this module imports nothing of the project but ``typing``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

# The symptom vocabulary (one word per thing a user reports). A record lists those it can produce.
HANG_RUNNING = "hang-running"              # a request held running, the engine makes no progress
WAITING_FOREVER = "waiting-forever"        # a request waits and is never scheduled (running 0)
SLOW_PROGRESSING = "slow-progressing"      # slow, but tokens keep flowing
REJECTED = "rejected"                      # requests answered 4xx/5xx (status and message in the facts)
WRONG_DIMENSION = "vectors-dimension"      # vectors of another length than the model's own
WRONG_NORM = "vectors-norm"                # vectors not of the norm the model's pooling config says
WRONG_DIRECTION = "vectors-direction"      # vectors pointing elsewhere than the model's own (cosine < 0.99)
UNSTABLE = "vectors-unstable"              # one text, different vectors
SCORES_NOT_RANKING = "scores-not-ranking"  # a reranker/classifier whose scores do not rank relevant first
SCORES_FLAT = "scores-flat"                # scores all about equal (≈ 0.5, or one value)
SCORES_NOT_PROBABILITIES = "scores-not-probabilities"  # scores outside [0, 1], class probs not summing to 1
CLIENT_ERROR = "client-error"              # a client library fails where a plain request works
STARTUP_REFUSAL = "startup-refusal"        # the server does not start

SYMPTOMS: dict[str, str] = {
    HANG_RUNNING: "a request is held running and the engine makes no progress",
    WAITING_FOREVER: "a request waits and is never scheduled",
    SLOW_PROGRESSING: "requests are slow but tokens keep flowing",
    REJECTED: "requests are rejected (an HTTP error with a message)",
    WRONG_DIMENSION: "vectors of another dimension than the model's own",
    WRONG_NORM: "vectors of another norm than the model's pooling config says",
    WRONG_DIRECTION: "vectors that differ from the model's own (cosine < 0.99)",
    UNSTABLE: "the same text gets different vectors",
    SCORES_NOT_RANKING: "scores that do not rank the relevant document first",
    SCORES_FLAT: "scores that are all about equal",
    SCORES_NOT_PROBABILITIES: "scores or class probabilities outside [0, 1], or not summing to 1",
    CLIENT_ERROR: "a client library fails where a plain request works",
    STARTUP_REFUSAL: "the server refuses to start",
}

Direction = Literal["for", "against"]


@dataclass(frozen=True)
class Weight:
    """What one clue read: for or against its record, the sentence that says what was seen, and where."""

    direction: Direction
    seen: str
    source: str = ""
    decisive: bool = False  # the clue alone singles the record out (for) or rules it out (against)


def by_flag(flag: Optional[bool], yes: Weight, no: Weight) -> Optional[Weight]:
    """A clue's weight from a yes/no reading of the case: ``yes`` or ``no``; None (it says nothing) when unknown."""
    return None if flag is None else yes if flag else no


@dataclass(frozen=True)
class Case:
    """What a run knows when the differential weighs candidates: its findings, config and measured facts.

    ``findings`` are the run's findings (``triage.findings.Finding`` or their dicts); ``config`` the effective
    config's values (``get``-able); ``facts`` measurements the probes and sources recorded (a vector's
    dimension, the model files' pooling, a rejection's status and message, a client's route, …), keyed by
    the names in each reader's docstring. Missing is ``None``: a clue that needs it says nothing.
    """

    findings: tuple[Any, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)

    def fact(self, key: str, default: Any = None) -> Any:
        v = self.facts.get(key)
        return default if v is None else v

    def get(self, key: str, default: Any = None) -> Any:
        """A fact, else a config value (the clues read both alike)."""
        v = self.facts.get(key)
        if v is None:
            v = self.config.get(key) if hasattr(self.config, "get") else None
        return default if v is None else v

    def finding(self, check: str) -> Optional[Any]:
        for f in self.findings:
            c = f.get("check") if isinstance(f, dict) else getattr(f, "check", None)
            if c == check:
                return f
        return None


@dataclass(frozen=True)
class Clue:
    """One evidence reader a record weighs: ``read(case)`` is a Weight, or None when the case says nothing."""

    name: str
    read: Callable[[Case], Optional[Weight]]

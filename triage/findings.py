"""The shared vocabulary of verdicts: Finding, Status and the severity order."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any
from collections.abc import Iterable


class Status(str, Enum):  # noqa: UP042 - str mixin keeps json.dumps and == "fail" working
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"
    ERROR = "error"


# Severity for --fail-on and the summary verdict. "error" (could not run the check) ranks
# beside "fail" for exit codes only when asked; unknown ranks below warn.
_SEVERITY = {Status.PASS: 0, Status.UNKNOWN: 1, Status.WARN: 2, Status.FAIL: 3, Status.ERROR: 3}


def severity(status: Status | str) -> int:
    return _SEVERITY[Status(status)]


@dataclass(frozen=True)
class Finding:
    """One verdict: a stable kebab-case check id, a status, and the evidence behind it."""

    check: str
    status: Status
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: str = ""
    refs: list[str] = field(default_factory=list)
    explanation: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = Status(self.status).value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        return cls(
            check=d["check"],
            status=Status(d["status"]),
            title=d.get("title", ""),
            evidence=dict(d.get("evidence") or {}),
            fix=d.get("fix") or "",
            refs=list(d.get("refs") or []),
            explanation=d.get("explanation") or "",
        )


def worst(statuses: Iterable[Status | str]) -> Status:
    """The most severe status (pass when empty); fail beats error beats warn beats unknown."""
    order = [Status.PASS, Status.UNKNOWN, Status.WARN, Status.ERROR, Status.FAIL]
    best = Status.PASS
    for s in statuses:
        s = Status(s)
        if order.index(s) > order.index(best):
            best = s
    return best


def reaches(status: Status | str, fail_on: str) -> bool:
    """True when a finding's status reaches the --fail-on level (warn|fail)."""
    threshold = {"warn": 2, "fail": 3}[fail_on]
    return severity(status) >= threshold

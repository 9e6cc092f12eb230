"""The shared vocabulary of verdicts: Finding, Status and the severity order."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterable

from triage.catalogue.check_ids import default_mode, written_before

if TYPE_CHECKING:
    from triage.catalogue.model import ConfigLike, FailureMode


class Status(str, Enum):  # noqa: UP042 - str mixin keeps json.dumps and == "fail" working
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"
    ERROR = "error"


# The one severity order, least to most severe. "error" (the check could not run) ranks just
# below "fail"; "unknown" (evidence missing) below "warn". Exit codes, the summary verdict and
# report sorting all read it.
ORDER: tuple[Status, ...] = (Status.PASS, Status.UNKNOWN, Status.WARN, Status.ERROR, Status.FAIL)
_RANK = {s: i for i, s in enumerate(ORDER)}
FAIL_ON = {"warn": Status.WARN, "fail": Status.ERROR}  # --fail-on level -> the least status that reaches it


def severity(status: Status | str) -> int:
    return _RANK[Status(status)]


@dataclass(frozen=True)
class Finding:
    """One verdict: a stable kebab-case check id, a status, and the evidence behind it.

    ``failure_mode`` is the catalogue record it reports: the id's own when the registry
    (``triage.catalogue.check_ids``) gives it exactly one, else what its builder names (a stall's
    version-gated mode); '' for none.
    """

    check: str
    status: Status
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: str = ""
    refs: list[str] = field(default_factory=list)
    explanation: str = ""
    failure_mode: str = ""

    def __post_init__(self) -> None:
        if not self.failure_mode:
            object.__setattr__(self, "failure_mode", default_mode(self.check))

    @classmethod
    def of(
        cls,
        mode: FailureMode,
        check: str,
        status: Status,
        title: str,
        evidence: Optional[dict[str, Any]] = None,
        *,
        cfg: Optional[ConfigLike] = None,
        fix: Optional[str] = None,
        explanation: Optional[str] = None,
        failure_mode: Optional[str] = None,
    ) -> Finding:
        """The one way a catalogue record becomes a finding: the record's refs always; its fix (for ``cfg``) and
        its mechanism (the explanation) when the status is FAIL or WARN, nothing for a pass or an unknown.

        ``fix`` and ``explanation`` replace the record's where a verdict says more ('' for none);
        ``failure_mode`` is the record's id unless given; '' leaves it to the check id's declaration (a finding that
        cites the record without reporting it, or whose id is declared with several).
        """
        bad = Status(status) in (Status.FAIL, Status.WARN)
        return cls(
            check=check,
            status=status,
            title=title,
            evidence=evidence if evidence is not None else {},
            fix=fix if fix is not None else (mode.fix(cfg) if bad else ""),
            refs=list(mode.refs),
            explanation=explanation if explanation is not None else (mode.mechanism if bad else ""),
            failure_mode=failure_mode if failure_mode is not None else mode.id,
        )

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
            failure_mode=d["failure_mode"] if "failure_mode" in d else written_before(d["check"], d.get("evidence")),
        )


def worst(statuses: Iterable[Status | str]) -> Status:
    """The most severe status (pass when empty)."""
    return max((Status(s) for s in statuses), key=severity, default=Status.PASS)


def reaches(status: Status | str, fail_on: str) -> bool:
    """True when a finding's status reaches the --fail-on level (warn|fail; error counts as fail)."""
    return severity(status) >= severity(FAIL_ON[fail_on])

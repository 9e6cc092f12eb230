"""A run's headline, computed once for every face: its worst status, the tally per status, and the finding it leads
with (the differential's answer first, else the most severe finding that needs attention).

The dashboard's banner (``ui``) and the reports (``triage.export.view``) both read it, so a page and an export of the
same run name the same status and the same lead. Findings are ``Finding`` values or their dicts (a run document).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional, Union

from triage.differential import is_diagnosis
from triage.findings import ORDER, Finding, Status, severity, worst

FindingLike = Union[Finding, Mapping[str, Any]]


def status_of(f: FindingLike) -> Status:
    return Status(f.status if isinstance(f, Finding) else f["status"])


@dataclass(frozen=True)
class RunHeadline:
    """``status``: the worst finding's ('' when there are none: the caller says what no findings means);
    ``counts``: findings per status, most severe first, none at zero; ``ordered``: every finding, most severe
    first (stable); ``needs_attention``: those at warn or worse; ``diagnosis``: the differential's finding at warn
    or worse (the most severe), else None."""

    status: str
    counts: dict[str, int]
    ordered: tuple[FindingLike, ...]
    needs_attention: tuple[FindingLike, ...]
    diagnosis: Optional[FindingLike]

    @property
    def worst_needing_attention(self) -> Optional[FindingLike]:
        """The most severe finding at warn or worse (the first of them in the run's order), else None."""
        return self.needs_attention[0] if self.needs_attention else None

    @property
    def tally(self) -> str:
        """'1 fail · 2 pass': the counts, most severe first."""
        return " · ".join(f"{n} {s}" for s, n in self.counts.items())


def run_headline(findings: Iterable[FindingLike]) -> RunHeadline:
    """The headline of a run's findings (module docstring)."""
    fs = list(findings)
    ordered = tuple(sorted(fs, key=lambda f: -severity(status_of(f))))
    counts = {s.value: 0 for s in reversed(ORDER)}
    for f in fs:
        counts[status_of(f).value] += 1
    needs = tuple(f for f in ordered if severity(status_of(f)) >= severity(Status.WARN))
    return RunHeadline(
        status=worst(status_of(f) for f in fs).value if fs else "",
        counts={s: n for s, n in counts.items() if n},
        ordered=ordered,
        needs_attention=needs,
        diagnosis=next((f for f in needs if is_diagnosis(f)), None),
    )

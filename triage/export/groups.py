"""Findings grouped by failure mode: one headline per root cause, the individual findings beneath.

A finding belongs to the catalogue record it names (``Finding.failure_mode``: its builder's, else the
one its check id is declared with in ``triage.catalogue.check_ids``; a document written before the field
existed gets the declared one on reading).
Only findings that need attention (warn and worse) are grouped; a pass or an "unknown" shows no
root cause. The headline says what the mode is (the record's title and mechanism), how many
findings show it, and the fix once: the worst finding's fix (computed from the run's config
where it was found), else the record's fix for the run's config. Markdown, HTML, the JSON
document and the dashboard's run view all read ``groups``; none repeats a fix per row.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from triage import catalogue
from triage.catalogue import FailureMode
from triage.findings import Finding, Status, severity
from triage.headline import mode_fix


@dataclass(frozen=True)
class FindingGroup:
    """One root cause in a run: the record, the findings that show it (indices into the run's findings)."""

    mode: FailureMode
    status: str
    indices: tuple[int, ...]
    fix: str

    @property
    def count(self) -> int:
        return len(self.indices)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode.id, "title": self.mode.title, "what": self.mode.mechanism, "status": self.status,
                "count": self.count, "findings": list(self.indices), "fix": self.fix, "refs": list(self.mode.refs),
                "affected": self.mode.affected_text if self.mode.affected else None}


def _as_dict(f: Finding | dict[str, Any]) -> dict[str, Any]:
    return f.to_dict() if isinstance(f, Finding) else f


mode_of = catalogue.mode_of  # the record a finding (or its dict) reports


def groups(findings: list[Finding] | list[dict[str, Any]], config: dict[str, Any] | None = None
           ) -> tuple[list[FindingGroup], list[int]]:
    """(groups worst first, indices of the findings in no group, worst first)."""
    items = [_as_dict(f) for f in findings]
    order = sorted(range(len(items)), key=lambda i: (-severity(items[i]["status"]), i))
    by_mode: dict[str, list[int]] = {}
    rest: list[int] = []
    for i in order:
        mode = mode_of(items[i]) if severity(items[i]["status"]) >= severity(Status.WARN) else None
        if mode is None:
            rest.append(i)
        else:
            by_mode.setdefault(mode.id, []).append(i)
    out = []
    for mode_id, idx in by_mode.items():
        mode = catalogue.get(mode_id)
        fix = mode_fix([items[i] for i in idx], mode, config)  # the verdict's rule (triage.headline)
        out.append(FindingGroup(mode, items[idx[0]]["status"], tuple(idx), fix))
    return out, rest


def document_groups(doc: dict[str, Any]) -> tuple[list[FindingGroup], list[int]]:
    """``groups`` of a run document (the effective config, else the probe run's facts in meta)."""
    from triage.fixblocks import run_config

    return groups(doc.get("findings") or [], run_config(doc.get("run") or {}))

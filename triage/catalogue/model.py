"""The shape of one catalogue record: a known failure mode and what every verdict path needs of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from triage.catalogue.check_ids import findings_of
from triage.catalogue.symptoms import Clue
from triage.catalogue.versions import Version, VersionRange, fmt, parse_version


class ConfigLike(Protocol):
    """What a fix reads: the effective config, or a log's start-up dict (both have ``get``)."""

    def get(self, key: str, default: Any = None) -> Any: ...


@dataclass(frozen=True)
class Edit:
    """A record's fix as data: serve options to set (dest -> value; None drops it; "!--opt" drops an option
    by its name), request fields, an upgrade. ``triage.fixblocks`` turns them into copyable blocks."""

    serve: Mapping[str, Any] = field(default_factory=dict)
    request: Mapping[str, Any] = field(default_factory=dict)
    upgrade: Optional[str] = None
    why: str = ""


@dataclass(frozen=True)
class FailureMode:
    """One known failure mode: what it is, which releases it hits, how each source shows it, the fix.

    ``evidence`` maps a source (checklist, probe, watch, log, fleet, …) to what proves the mode
    there. ``findings`` are the check ids of the findings that report it (declared in
    ``triage.catalogue.check_ids``), so reports can group findings by root cause. ``fix_for`` computes the
    fix from the config when it depends on it;
    ``now`` is what to do while it is happening (a hung engine), before the lasting fix. ``edits`` is the
    same fix as data (options and request fields to change, for this config), for copyable fix blocks.

    The differential (``triage.differential``) reads ``symptoms`` (what the mode produces, the names in
    ``triage.catalogue.symptoms``), ``clues`` (readers of a run's case that weigh for or against it) and
    ``experiment`` (the safe probe or lab twin that singles it out from the others of a symptom;
    ``experiment_probe`` names the probe set the tool can run for it, '' when none).
    """

    id: str
    title: str
    mechanism: str
    refs: tuple[str, ...] = ()
    affected: tuple[VersionRange, ...] = ()
    fixed_in: Optional[Version] = None
    fix_ref: Optional[str] = None
    evidence: Mapping[str, str] = field(default_factory=dict)
    now: str = ""
    fix_text: str = ""
    fix_for: Optional[Callable[[ConfigLike], str]] = None
    edits: Optional[Callable[[Mapping[str, Any]], list[Edit]]] = None
    symptoms: tuple[str, ...] = ()
    clues: tuple[Clue, ...] = ()
    experiment: str = ""
    experiment_probe: str = ""

    @property
    def findings(self) -> tuple[str, ...]:
        return findings_of(self.id)

    @property
    def version_bound(self) -> bool:
        return bool(self.affected)

    @property
    def affected_text(self) -> str:
        """'>= LOW, < HIGH' (ranges joined with ' or '); 'any version' when not version-bound."""
        return " or ".join(str(r) for r in self.affected) or "any version"

    def affects(self, version: object) -> Optional[bool]:
        """True/False for a known release; None when the version is unknown or a boundary pre-release."""
        if not self.affected:
            return True
        v = parse_version(version)
        if v is None:
            return None
        answers = [r.contains(v) for r in self.affected]
        if any(a is True for a in answers):
            return True
        return None if any(a is None for a in answers) else False

    def version_status(self, version: object) -> str:
        """'affected' | 'fixed' | 'older' | 'unknown' (unknown version or boundary pre-release)."""
        v = parse_version(version)
        a = self.affects(v)
        if a is None:
            return "unknown"
        if a:
            return "affected"
        if self.fixed_in is not None and v is not None and v >= self.fixed_in:
            return "fixed"
        return "older"

    def version_note(self, version: object) -> str:
        """'X.Y.Z (affected: >= LOW, < HIGH)' — the version beside the range it was judged on."""
        v = parse_version(version)
        status = self.version_status(v)
        shown = fmt(v) if v is not None else "unknown version"
        if status == "unknown" and v is not None:
            return f"{shown} (a pre-release of a boundary of {self.affected_text}: check the commit)"
        return f"{shown} ({status}: {self.affected_text})"

    @property
    def fixed_text(self) -> str:
        """'vLLM >= FIXED (fix vllm#PR)'; '' when no release fixes it."""
        if self.fixed_in is None:
            return ""
        return f"vLLM >= {fmt(self.fixed_in)}" + (f" (fix {self.fix_ref})" if self.fix_ref else "")

    def release_fix(self, risk_check: str = "") -> str:
        """The release-level fix the version check gives (upgrade past the bug), and which check judges whether this
        deployment can hit it (``risk_check``, when one does)."""
        return f"Upgrade to {self.fixed_text}." + (
            f" Whether this deployment can hit the bug is the {risk_check} verdict." if risk_check else "")

    def fix(self, cfg: Optional[ConfigLike] = None, *, now: bool = False) -> str:
        """The lasting fix for this config; with ``now``, what to do first while it is happening."""
        text = self.fix_for(cfg if cfg is not None else {}) if self.fix_for else self.fix_text
        return f"Now: {self.now} Then: {text}" if now and self.now else text

    def summary(self) -> dict[str, Any]:
        """The record as plain data (JSON, reports, the dashboard)."""
        return {
            "id": self.id,
            "title": self.title,
            "mechanism": self.mechanism,
            "affected": self.affected_text if self.affected else None,
            "fixed_in": fmt(self.fixed_in) if self.fixed_in else None,
            "refs": list(self.refs),
            "evidence": dict(self.evidence),
        }

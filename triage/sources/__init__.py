"""Evidence sources: each returns facts with provenance, or says why it could not (never raises).

Sources: ``server`` (live API), ``cmdline`` (pasted `vllm serve` / `docker run` text),
``startup_log`` (pasted start-up log), ``nvml`` (local GPUs), ``kube`` (kubectl describe / get -o yaml / logs of
the pod). Each yields a SourceResult.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from triage.events import RawCapture  # raw material kept with a run: the event stream's type
from triage.findings import Finding

__all__ = ["Fact", "RawCapture", "SourceResult"]


@dataclass(frozen=True)
class Fact:
    """One value a source saw, with where it came from (source) and how (detail)."""

    key: str
    value: Any
    source: str  # server | cmdline | log | kube | nvml | default-rule | user
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source, "detail": self.detail}


@dataclass
class SourceResult:
    source: str
    facts: dict[str, Fact] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    captures: list[RawCapture] = field(default_factory=list)
    unavailable: str | None = None  # why the source gave nothing, when it gave nothing
    stated_args: set[str] | None = None  # config keys the user set explicitly, when the source knows them

    def add(self, key: str, value: Any, detail: str = "") -> None:
        if value is not None:
            self.facts[key] = Fact(key, value, self.source, detail)

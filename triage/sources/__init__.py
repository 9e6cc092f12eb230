"""Evidence sources: each returns a SourceResult (facts with provenance, findings, raw captures), or one whose
``unavailable`` says why it gave nothing.

The checklist iterates the ``Source`` protocol (``triage.sources.checklist_sources.SOURCES``, in order): ``server``
(live API), ``process`` (the local server's process), ``log`` (pasted start-up log), ``cmdline`` (pasted `vllm serve`
/ `docker run` text or a deployment file), ``kube`` (kubectl describe / get -o yaml / logs of the pod), ``nvml``
(local GPUs). Each module keeps its own ``collect`` with the inputs it reads; ``model_files`` (read by the vectors
probe set) and the deployment readers (``deploy*``) are helpers, not checklist sources. A source catches what it
expects (a refused connection, an unreadable file); a bug in one still raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from triage.events import RawCapture  # raw material kept with a run: the event stream's type
from triage.findings import Finding
from triage.target import Target

if TYPE_CHECKING:
    from triage.http import Transport

__all__ = ["Fact", "RawCapture", "Source", "SourceInput", "SourceResult"]


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


@dataclass(frozen=True)
class SourceInput:
    """What a checklist source is given: the target, how this run gathers, and the release read so far."""

    target: Target
    local_process: bool = False  # read the server's process on this host
    local_gpu: bool = False  # read this host's GPUs
    embed_probe: bool = True  # the server source sends one 2-token /v1/embeddings request
    nvml_recorded: dict[str, Any] | None = None  # a recorded NVML dict (tests, or another host's)
    transport: Transport | None = None  # replaces the network (tests replay recorded responses)
    release: object = None  # the deployment's vLLM release from the evidence before (server, then log), else the user's


class Source(Protocol):
    """One evidence source of the checklist: ``wanted`` says whether the target gives it anything to read,
    ``collect`` reads it (a result whose ``source`` is ``name``)."""

    name: str

    def wanted(self, given: SourceInput) -> bool: ...

    def collect(self, given: SourceInput) -> SourceResult: ...

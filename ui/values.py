"""Plain values the dashboard pages render (what ui.services returns); no Streamlit, no I/O.

The engine's registries (checklist steps, probe sets, outcome grading, export formats) and the one
Target type are the engine's own (triage.steps, triage.probes, triage.export, triage.target);
this module holds only the shapes the pages draw.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from triage.findings import Finding
from triage.headline import Verdict
from triage.probes.api import outcome_status
from triage.steps import STEPS
from triage.store import TargetInfo

# -- plain values the pages render ---------------------------------------------------------


@dataclass(frozen=True)
class ModelInfo:
    id: str
    root: Optional[str] = None
    max_model_len: Optional[int] = None


class SavedTarget(TargetInfo):
    """A saved target as the Target page lists it: the store's value (its fields, its ``truncation``) and a title."""

    @property
    def title(self) -> str:
        return f"{self.label or self.url} · {self.model or '?'} · truncate_prompt_tokens={self.truncation}"


@dataclass(frozen=True)
class ChecklistEvent:
    """Progress from the checklist runner, as the page shows it."""

    kind: str  # "progress" | "step" (a step starts) | "finding" | "done" | "error"
    step: Optional[str] = None
    finding: Optional[Finding] = None
    run_id: Optional[int] = None
    message: str = ""
    index: int = 0
    total: int = len(STEPS)
    config: Optional[dict[str, Any]] = None  # "done": the stored effective config the verdicts read
    live: Optional[LiveState] = None  # "live": the engine while the run went (triage.live)


@dataclass(frozen=True)
class ProbeProgress:
    """One line of a probe run's progress for the page (not the event stream's RunEvent: ui.adapters.probe_relay)."""

    probe: str
    state: str  # "start" | "sample" | ok | livelock | stuck-waiting | http-error | …
    message: str = ""
    elapsed_s: Optional[float] = None


@dataclass(frozen=True)
class ProbeView:
    probe: str
    outcome: str
    duration_s: Optional[float]
    time_to_verdict_s: Optional[float]
    http_status: Optional[int]
    detail: dict[str, Any]

    @property
    def status(self) -> str:
        return outcome_status(self.outcome)


@dataclass(frozen=True)
class Grouped:
    """Findings by root cause (triage.export.groups.FindingGroup, worst first) and the indices of the rest."""

    groups: tuple[Any, ...] = field(default=(), kw_only=True)
    ungrouped: tuple[int, ...] | None = field(default=None, kw_only=True)  # None: not grouped


@dataclass(frozen=True)
class ProbeRunView(Grouped):
    run_id: Optional[int]
    probes: list[ProbeView]
    findings: list[Finding]
    figure: Any = None  # engine gauges while each probe ran (the charts module), when any probe has samples
    sets: tuple[str, ...] = ()  # the probe sets that ran (what a healthy verdict covered)


@dataclass(frozen=True)
class RunRow:
    id: int
    kind: str
    status: str
    started_at: str
    finished_at: Optional[str]
    target: str
    model: Optional[str]
    summary: str


@dataclass(frozen=True)
class RunPage:
    rows: list[RunRow]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class RunDetail(Grouped):
    id: int
    kind: str
    status: str
    started_at: str
    target: str
    model: Optional[str]
    summary: str
    config: dict[str, Any]
    meta: dict[str, Any]
    findings: list[Finding]
    probes: list[ProbeView]
    n_samples: int
    verdict: Optional[Verdict] = field(default=None, kw_only=True)  # the run's one verdict (triage.headline)

    @property
    def blocks(self) -> tuple[Any, ...]:
        """The verdict's fix as copyable blocks (``triage.fixblocks.FixBlock``)."""
        return self.verdict.blocks if self.verdict is not None else ()


@dataclass(frozen=True)
class DiffRow:
    key: str
    left: Any
    right: Any
    changed: bool


@dataclass(frozen=True)
class RunDiff:
    left: RunDetail
    right: RunDetail
    config: list[DiffRow]
    verdicts: list[DiffRow]


@dataclass(frozen=True)
class LogView(Grouped):
    findings: list[Finding]
    config: dict[str, Any]
    samples: list[dict[str, Any]]
    summary: dict[str, Any]
    run_id: Optional[int] = None
    figure: Any = None  # the engine's stats figure for the series, when the charts module is in
    filed_under: str = ""  # which target the run was filed under, and why
    server: Any = None  # the Target the log names (its host and port): what the fix snippets address
    times_zoned: bool = True  # False: the record times carry no zone (vLLM's own): never labelled UTC


@dataclass(frozen=True)
class Headline:
    """What a page's banner says: the run's ONE verdict (``triage.headline.Verdict``: status, root cause, tally, fix
    in words and as blocks) and where its cause sits (a checklist step, else the page's own place)."""

    verdict: Verdict
    step_index: int  # its checklist step (0: not a checklist step)
    step_title: str
    implicated: dict[str, str] = field(default_factory=dict)  # step id -> the cause a passing step is part of

    @property
    def status(self) -> str:
        return self.verdict.status

    @property
    def cause(self) -> str:
        """The root cause's title (the catalogue record), else the worst finding's title."""
        return self.verdict.cause if self.verdict.counts else "No findings"

    @property
    def check(self) -> str:
        return self.verdict.check

    @property
    def tally(self) -> str:
        return self.verdict.tally

    @property
    def fix(self) -> str:
        """The prose fix, shown beneath the blocks (a "one of" diagnosis's experiments)."""
        return self.verdict.fix or self.verdict.experiments

    @property
    def blocks(self) -> tuple[Any, ...]:
        return self.verdict.blocks

    @property
    def where(self) -> str:
        return f"step {self.step_index}. {self.step_title}" if self.step_index else self.step_title


@dataclass(frozen=True)
class StatsView:
    """What the Engine stats page draws: a figure (or None), the latest values, the stall alert."""

    figure: Any
    latest: dict[str, Any]
    alert: Optional[dict[str, Any]]  # the open stall alert (kind, since, confirmed_at, message), if any
    n_samples: int
    error: Optional[str] = None  # this scrape failed; the series so far is still shown
    n_alerts: int = 0  # alerts seen since the page started watching (open and cleared)
    # every stall episode seen: {engine, kind, start, confirmed, end, ended, evidence: [sample rows]}
    episodes: tuple[dict[str, Any], ...] = field(default=(), kw_only=True)
    last_ts: Optional[float] = field(default=None, kw_only=True)  # when the last sample was taken (epoch s)
    # spans with no sample (start, end), the last one open (ending now) when the scrapes stopped coming
    gaps: tuple[tuple[float, float], ...] = field(default=(), kw_only=True)
    stale_s: Optional[float] = field(default=None, kw_only=True)  # seconds since the last sample, when overdue


@dataclass(frozen=True)
class LiveState:
    """The engine right now, by the stall rule over a few /metrics samples taken while the checklist ran."""

    verdict: str  # "stalled" | "not stalled" | "cannot judge"
    message: str  # the stall alert's words, or what was seen, or why nothing can be judged
    samples: int = 0
    watched_s: float = 0.0

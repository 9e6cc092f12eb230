"""The run event stream: the one typed vocabulary every core yields and every observer reads.

Each core — the checklist (triage.checklist), the probes (triage.probes), watch (triage.watch), the log
post-mortem (triage.logs) and the fleet scan (triage.fleet) — produces ``RunEvent`` values and knows
nothing of terminals or databases. The faces compose ``core → observers`` as pip-audit's CLI does:
progress printing is one observer, saving another (``triage.recorder.Recorder.observe``, the only
writer of a run). Events come in run order: ``started`` first, ``done`` last.

One frozen event type with a declared ``kind`` (the constants below) rather than a class per kind: every
observer switches on ``kind``, and the payload fields say their type. The shapes absorbed here were the
checklist's ``CheckEvent`` (its fields are this type's), the probe runner's ``ProbeEvent(kind, probe, data)``
(progress kinds below; its ``sample`` now carries the ``EngineSample`` itself) and watch's ``AlertEvent``
(the payload of an ``alert`` event). A module of the vocabulary layer (pyproject.toml's import-linter
contract): it imports only other vocabulary, never a core.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Protocol
from collections.abc import Callable

from triage.findings import Finding
from triage.sample import EngineSample
from triage.target import Target

if TYPE_CHECKING:
    from triage.http import Reply

# the kinds of a run: what every core says, in run order
STARTED = "started"  # a run begins: run_kind, target or target_id, meta (never an API key)
SOURCE = "source"  # an evidence source was read: source, message, captures
FINDING = "finding"  # a verdict: finding
CONFIG = "config"  # the effective config: config (values), stored (values, conflicts, sources, stated_args)
PROBE = "probe"  # one probe finished: outcome (with its samples and what it sent and got)
SAMPLES = "samples"  # engine samples of the run's series (watch scrapes, a log's stats lines): samples
ALERT = "alert"  # a stall alert raised / cleared / undecided / recurring: alert
CAPTURE = "capture"  # raw material kept with the run (a log's head and tail): captures
META = "meta"  # more of the run's description (a summary at the end): meta
DONE = "done"  # the run ended: summary

# a run's status besides the finding statuses: one its core did not end (a stopped page, Ctrl-C, a crash)
INTERRUPTED = "interrupted"
RECORDED = (STARTED, SOURCE, FINDING, CONFIG, PROBE, SAMPLES, CAPTURE, META, DONE)  # what a Recorder writes
# progress only (the probe runner's; shown, never written): a probe sent, one scrape while it runs, its abort,
# its verdict
PROBE_STARTED = "probe-started"
PROBE_SAMPLE = "sample"
PROBE_ABORTED = "aborted"
PROBE_VERDICT = "verdict"


@dataclass(frozen=True)
class RawCapture:
    """Raw material worth keeping with the run (a response body, a /metrics page, a log's head and tail)."""

    kind: str  # server-response | metrics-page | cmdline | log
    name: str
    content: str


@dataclass(frozen=True)
class AlertEvent:
    """A stall alert raised (``event == "stalled"``) or cleared (``"cleared"``) on one engine."""

    event: str  # stalled | cleared | undecided | recurring (the episodes recur: the livelock with client time-outs)
    engine: str
    kind: str  # livelock | stuck-waiting
    since: float
    at: float
    running: Optional[float]
    waiting: Optional[float]
    no_progress_s: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class FinishedProbe(Protocol):
    """What a Recorder reads of a finished probe (triage.probes.runner.ProbeOutcome)."""

    probe: str
    outcome: str
    duration_s: Optional[float]
    time_to_verdict_s: Optional[float]
    http_status: Optional[int]
    request: dict[str, Any]
    response: Optional[dict[str, Any]]
    samples: list[EngineSample]
    exchanges: list[Reply]

    def detail(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RunEvent:
    """One step of a run. ``run_id`` is None from a core; a Recorder stamps the id of the run it writes."""

    kind: str
    run_id: int | None = None
    finding: Finding | None = None
    source: str | None = None
    message: str = ""
    config: dict[str, Any] | None = None  # CONFIG: the effective values {key: {value, source, detail}}
    target: Target | None = None  # STARTED
    meta: dict[str, Any] | None = None  # STARTED: the run's arguments (no API key); META: what to add
    captures: tuple[RawCapture, ...] = ()  # SOURCE / CAPTURE: raw material
    stored: dict[str, Any] | None = None  # CONFIG: values, conflicts, sources, stated_args
    summary: str = ""  # DONE
    run_kind: str = "check"  # STARTED: check | probe | watch | logs | fleet
    target_id: int | None = None  # STARTED: a saved target chosen by id (a log filed under its server)
    outcome: FinishedProbe | None = None  # PROBE
    samples: tuple[EngineSample, ...] = ()  # SAMPLES; PROBE_SAMPLE: the one scrape (ts = s since sent)
    alert: AlertEvent | None = None  # ALERT
    probe: str | None = None  # progress: the probe's name
    data: dict[str, Any] = field(default_factory=dict)  # progress: what the line shows (outcome, times, …)


Observer = Callable[[RunEvent], object]  # progress printing, a Recorder's observe, a page's relay


def observers(*chain: Observer | None) -> Observer:
    """Several observers as one, called in order; each gets the event as the one before returned it (a Recorder
    stamps the run id, so progress printed after it can name the run). None entries are skipped."""
    live = [o for o in chain if o is not None]

    def observe(ev: RunEvent) -> RunEvent:
        for o in live:
            out = o(ev)
            if isinstance(out, RunEvent):
                ev = out
        return ev

    return observe

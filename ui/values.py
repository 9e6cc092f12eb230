"""Plain values the dashboard pages render (what ui.services returns); no Streamlit, no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from triage.findings import Finding

# -- plain values the pages render ---------------------------------------------------------


@dataclass(frozen=True)
class TargetForm:
    """What the Target page collected. The API key lives only here, in the browser session."""

    url: str
    model: Optional[str] = None
    truncate_prompt_tokens: int | str | None = None  # int, -1, "none" (client sends none), None (not stated)
    cmdline: Optional[str] = None
    log_text: Optional[str] = None
    api_key: Optional[str] = field(default=None, repr=False)
    target_id: Optional[int] = None
    label: Optional[str] = None


@dataclass(frozen=True)
class ModelInfo:
    id: str
    root: Optional[str] = None
    max_model_len: Optional[int] = None


@dataclass(frozen=True)
class SavedTarget:
    id: int
    url: str
    model: Optional[str]
    truncate_prompt_tokens: Optional[int]
    cmdline: Optional[str]
    label: Optional[str]

    @property
    def title(self) -> str:
        tpt = "unset" if self.truncate_prompt_tokens is None else self.truncate_prompt_tokens
        return f"{self.label or self.url} · {self.model or '?'} · truncate_prompt_tokens={tpt}"


@dataclass(frozen=True)
class Step:
    """One step of the guided checklist, in the design card's order."""

    id: str
    title: str
    question: str  # what to answer (or paste) when the evidence for this step is missing


# The design card's order. Each step names the check-id prefixes it gathers; the engine may
# publish its own list (triage.engine.CHECKLIST_STEPS), which then wins.
# A leading "server" step holds what the live source found (reachable, auth, is it vLLM): a 401 or
# a wrong URL must be the first thing a user sees, before any verdict that depends on it.
STEPS: tuple[Step, ...] = (
    Step("server", "Server reachable", "Is the URL the server's root (http://host:port), is it up, and does it "
         "need an API key (`vllm serve --api-key`)?"),
    Step("version", "vLLM version", "Which vLLM version does the server run? (`GET /version`, or `pip show vllm`)"),
    Step("backend", "Backend and runner",
         "Is the server on GPU, ROCm or CPU, and is it started with `--runner pooling`?"),
    Step("gpu-memory", "GPU memory and KV cache",
         "Which GPU and how much memory? Paste `nvidia-smi` or the start-up log's KV cache lines."),
    Step("flags", "Serve flags", "Paste the exact `vllm serve …` command line on the Target page."),
    Step("chunked-prefill", "Chunked prefill and batch budget",
         "Is chunked prefill on, and what is max_num_batched_tokens? Paste the start-up log on the Target page."),
    Step("truncation", "max_model_len vs truncate_prompt_tokens",
         "What truncate_prompt_tokens does your client send? Enter it on the Target page."),
)
# Check ids (checks/*.py CHECK_ID) to steps; ids not listed fall back to STEP_KEYWORDS.
CHECK_STEPS: dict[str, str] = {
    "server-reachable": "server",
    "server-auth": "server",
    "server-health": "server",
    "server-is-vllm": "server",
    "server-model": "server",
    "server-api-prefix": "server",
    "server-embeddings": "server",
    "invalid-url": "server",
    "metrics-parse": "server",
    "vllm-version": "version",
    "backend": "backend",
    "gpu-memory": "gpu-memory",
    "flags": "flags",
    "config-conflict": "flags",
    "evidence": "flags",
    "chunked-prefill": "chunked-prefill",
    "truncate-vs-max-model-len": "truncation",
    "truncation": "truncation",
    "budget-below-max-model-len": "chunked-prefill",
    "pooling-livelock-risk": "truncation",
}
# Families of check ids by prefix (flags-runner is a flag check, not a backend one).
CHECK_PREFIXES: dict[str, str] = {"server-": "server", "flags-": "flags", "metrics-": "server"}
STEP_KEYWORDS: dict[str, tuple[str, ...]] = {
    "server": ("server", "metrics", "url"),
    "version": ("version",),
    "backend": ("backend", "device", "runner", "convert"),
    "gpu-memory": ("gpu", "memory", "kv-cache", "nvml", "driver"),
    "flags": ("flag", "cmdline", "arg", "normalize", "dimensions", "matryoshka", "trust-remote", "api-key", "dtype"),
    "chunked-prefill": ("chunked", "prefill", "batched", "budget", "prefix"),
    "truncation": ("truncat", "max-model-len", "livelock", "context"),
}


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


@dataclass(frozen=True)
class ProbeSet:
    id: str
    title: str
    default: bool
    can_hang: bool
    description: str


PROBE_SETS: tuple[ProbeSet, ...] = (
    ProbeSet("conformance", "Conformance", True, False,
             "Does /v1/embeddings accept what clients send: lists, token ids, dimensions, truncation, errors."),
    ProbeSet("throughput", "Throughput", True, False, "Short and mid-length batches: tokens/s and latency."),
    ProbeSet("seed", "Seed matrix (livelock reproduction)", False, True,
             "[SHORT] · [LONG] · [LONG, SHORT] · [SHORT, LONG] with a prompt of exactly max_model_len tokens "
             "(vllm #55427). On an affected server this hangs the engine until the probe aborts it."),
)


@dataclass(frozen=True)
class ProbeEvent:
    probe: str
    state: str  # "start" | "sample" | ok | livelock | stuck-waiting | http-error | …
    message: str = ""
    elapsed_s: Optional[float] = None


# A probe outcome as a verdict colour (outcomes are issue 4's vocabulary).
OUTCOME_STATUS = {"ok": "pass", "slow": "warn", "skipped": "unknown", "livelock": "fail", "stuck-waiting": "fail",
                  "http-error": "warn", "unreachable": "error", "error": "error"}


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
        return OUTCOME_STATUS.get(self.outcome, "unknown")


@dataclass(frozen=True)
class ProbeRunView:
    run_id: Optional[int]
    probes: list[ProbeView]
    findings: list[Finding]
    figure: Any = None  # engine gauges while each probe ran (the charts module), when any probe has samples


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
class RunDetail:
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
class LogView:
    findings: list[Finding]
    config: dict[str, Any]
    samples: list[dict[str, Any]]
    summary: dict[str, Any]
    run_id: Optional[int] = None
    figure: Any = None  # the engine's stats figure for the series, when the charts module is in


@dataclass(frozen=True)
class StatsView:
    """What the Engine stats page draws: a figure (or None), the latest values, the stall alert."""

    figure: Any
    latest: dict[str, Any]
    alert: Optional[dict[str, Any]]  # the open stall alert (kind, since, confirmed_at, message), if any
    n_samples: int
    error: Optional[str] = None  # this scrape failed; the series so far is still shown
    n_alerts: int = 0  # alerts seen since the page started watching (open and cleared)


@dataclass(frozen=True)
class ExportFormat:
    id: str
    label: str
    mime: str
    ext: str


EXPORT_FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("md", "Markdown", "text/markdown", "md"),
    ExportFormat("html", "HTML", "text/html", "html"),
    ExportFormat("json", "JSON", "application/json", "json"),
    ExportFormat("bundle", "Support bundle (zip)", "application/zip", "zip"),
)


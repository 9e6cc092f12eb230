"""The one seam between dashboard pages and the engine: plain values in, plain values out.

Pages call ``services.get()`` and nothing else of the engine. This module never imports
Streamlit; it imports each engine part lazily, so a page can say "not yet available" while
that part is missing (``NotAvailable``), and it turns every engine exception into a
``ServiceError`` whose text is a plain message for the page (never a traceback).

Tests replace the whole object at this seam with ``override(fake)``; nothing deeper is faked.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from triage.findings import Finding, Status, worst
from triage.store import DB_ENV, RunRecord, Store, default_db_url, to_url


class ServiceError(Exception):
    """Something the user must read: unreachable server, 401, a log that is not a vLLM log."""


class NotAvailable(ServiceError):
    """The engine part behind this feature is not in the tree yet."""


# -- plain values the pages render ---------------------------------------------------------


@dataclass(frozen=True)
class TargetForm:
    """What the Target page collected. The API key lives only here, in the browser session."""

    url: str
    model: Optional[str] = None
    truncate_prompt_tokens: Optional[int] = None
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
STEPS: tuple[Step, ...] = (
    Step("version", "vLLM version", "Which vLLM version does the server run? (`GET /version`, or `pip show vllm`)"),
    Step("backend", "Backend and runner", "Is the server on GPU, ROCm or CPU, and is it started with `--runner pooling`?"),
    Step("gpu-memory", "GPU memory and KV cache",
         "Which GPU and how much memory? Paste `nvidia-smi` or the start-up log's KV cache lines."),
    Step("flags", "Serve flags", "Paste the exact `vllm serve …` command line on the Target page."),
    Step("chunked-prefill", "Chunked prefill and batch budget",
         "Is chunked prefill on, and what is max_num_batched_tokens? Paste the start-up log on the Target page."),
    Step("truncation", "max_model_len vs truncate_prompt_tokens",
         "What truncate_prompt_tokens does your client send? Enter it on the Target page."),
)
_STEP_KEYWORDS: dict[str, tuple[str, ...]] = {
    "version": ("version",),
    "backend": ("backend", "device", "runner", "pooling-runner", "convert"),
    "gpu-memory": ("gpu", "memory", "kv-cache", "kv", "nvml", "driver"),
    "flags": ("flag", "cmdline", "arg", "normalize", "dimensions", "matryoshka", "trust-remote", "api-key", "dtype"),
    "chunked-prefill": ("chunked", "prefill", "batched", "budget", "prefix"),
    "truncation": ("truncat", "max-model-len", "livelock", "context"),
}


@dataclass(frozen=True)
class ChecklistEvent:
    """Progress from the checklist runner, as the page shows it."""

    kind: str  # "step" (a step starts) | "finding" | "done" | "error"
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
    ProbeSet("seed-matrix", "Seed matrix (livelock reproduction)", False, True,
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


@dataclass(frozen=True)
class StatsView:
    """What the Engine stats page draws: a figure (or None), the latest values, the stall alert."""

    figure: Any
    latest: dict[str, Any]
    alert: Optional[dict[str, Any]]
    n_samples: int


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

# -- helpers ---------------------------------------------------------------------------------


def _engine_part(module: str, feature: str) -> Any:
    """Import an engine module lazily; a missing one means the feature is not built yet."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise NotAvailable(f"{feature} is not yet available in this build (module {module} is missing).") from e
        raise ServiceError(f"{feature} could not load: {e}") from e
    except Exception as e:  # a half-written module must not crash the page
        raise ServiceError(f"{feature} could not load: {type(e).__name__}: {e}") from e


def _has(module: str, attr: str) -> bool:
    try:
        return hasattr(importlib.import_module(module), attr)
    except Exception:
        return False


def plain_error(e: BaseException) -> str:
    """An engine exception as one line a user can act on."""
    if isinstance(e, ServiceError):
        return str(e)
    try:
        import httpx
    except ImportError:  # pragma: no cover
        httpx = None  # type: ignore[assignment]
    if httpx is not None:
        if isinstance(e, httpx.ConnectError):
            return f"Cannot connect to the server: {e}. Is the URL right and the server up?"
        if isinstance(e, httpx.TimeoutException):
            return f"The server did not answer in time ({type(e).__name__})."
        if isinstance(e, httpx.HTTPStatusError):
            return _http_status_message(e.response.status_code, e.response.text)
    msg = str(e) or type(e).__name__
    name = type(e).__name__
    return msg if name in msg or name in ("ValueError", "RuntimeError") else f"{name}: {msg}"


def _http_status_message(code: int, body: str = "") -> str:
    if code == 401:
        return "401 Unauthorized: the server wants an API key (vllm serve --api-key). Enter it on the Target page."
    if code == 403:
        return "403 Forbidden: the API key was refused."
    if code == 404:
        return "404 Not Found: is this a vLLM OpenAI-compatible server (vllm serve), and is the URL its root?"
    return f"HTTP {code}: {body[:300]}"


def _guard(feature: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a service method so any engine exception leaves as a ServiceError with a plain message."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **kw: Any) -> Any:
            try:
                return fn(*a, **kw)
            except ServiceError:
                raise
            except Exception as e:
                raise ServiceError(f"{feature}: {plain_error(e)}") from e

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper

    return deco


def _iso(dt: Any) -> str:
    if dt is None:
        return ""
    try:
        return dt.strftime("%Y-%m-%d %H:%M:%S")
    except AttributeError:
        return str(dt)


def step_of(check_id: str) -> str:
    """Which checklist step a finding belongs to (engine's mapping when it publishes one)."""
    eng_map = _engine_step_map()
    if check_id in eng_map:
        return eng_map[check_id]
    cid = check_id.lower()
    for step in ("truncation", "chunked-prefill", "version", "backend", "gpu-memory", "flags"):
        if any(k in cid for k in _STEP_KEYWORDS[step]):
            return step
    return "flags"


def _engine_step_map() -> dict[str, str]:
    try:
        eng = importlib.import_module("triage.engine")
    except Exception:
        return {}
    m = getattr(eng, "CHECK_STEPS", None)
    return dict(m) if isinstance(m, dict) else {}


def _finding(obj: Any) -> Optional[Finding]:
    if obj is None:
        return None
    if isinstance(obj, Finding):
        return obj
    if isinstance(obj, dict) and "check" in obj:
        return Finding.from_dict(obj)
    return None


def _probe_view(p: Any) -> ProbeView:
    import json

    if isinstance(p, dict):
        return ProbeView(p.get("probe", "?"), str(p.get("outcome", "?")), p.get("duration_s"),
                         p.get("time_to_verdict_s"), p.get("http_status"), dict(p.get("detail") or {}))
    detail = getattr(p, "detail", None)
    if detail is None:
        raw = getattr(p, "detail_json", None)
        detail = json.loads(raw) if raw else {}
    return ProbeView(str(getattr(p, "probe", getattr(p, "name", "?"))), str(getattr(p, "outcome", "?")),
                     getattr(p, "duration_s", None), getattr(p, "time_to_verdict_s", None),
                     getattr(p, "http_status", None), dict(detail or {}))


def _config_value(v: Any) -> Any:
    """An effective config value without its provenance wrapper."""
    if isinstance(v, dict) and "value" in v:
        return v["value"]
    return v


# -- the service ---------------------------------------------------------------------------


class Services:
    """The real implementation: the engine and the Store behind one small surface."""

    def __init__(self, db: str | None = None) -> None:
        self._db = db
        self._store: Store | None = None
        self._lock = threading.Lock()

    # -- storage -----------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                try:
                    self._store = Store(self._db)
                except Exception as e:
                    raise ServiceError(f"Cannot open the database {self._db or default_db_url()}: {e}") from e
            return self._store

    def db_url(self) -> str:
        return self.store.url

    def features(self) -> dict[str, bool]:
        """Which engine parts are in this build (pages show "not yet available" for the rest)."""
        return {
            "checklist": _has("triage.engine", "iter_checklist") or _has("triage.engine", "run_checklist"),
            "probes": _has("triage.probes", "run_probes"),
            "logs": _has("triage.logs", "analyze_log"),
            "watch": _has("triage.watch", "Watcher"),
            "charts": _has("triage.charts", "engine_stats_figure"),
            "export": _has("triage.export", "render"),
        }

    # -- target ------------------------------------------------------------------------------
    @_guard("Listing models")
    def list_models(self, url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[ModelInfo]:
        """GET /v1/models: the model ids the server serves, with their max_model_len."""
        import httpx

        url = url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ServiceError("The server URL must start with http:// or https:// (for example http://127.0.0.1:8000).")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        try:
            r = httpx.get(f"{url}/v1/models", headers=headers, timeout=timeout_s)
        except httpx.HTTPError as e:
            raise ServiceError(plain_error(e)) from e
        if r.status_code != 200:
            raise ServiceError(_http_status_message(r.status_code, r.text))
        try:
            data = r.json().get("data") or []
        except ValueError as e:
            raise ServiceError("The server answered /v1/models with something that is not JSON: is it vLLM?") from e
        return [ModelInfo(str(m.get("id")), m.get("root"), m.get("max_model_len")) for m in data]

    @_guard("Saved targets")
    def saved_targets(self) -> list[SavedTarget]:
        return [SavedTarget(int(t.id or 0), t.url, t.model, t.truncate_prompt_tokens, t.cmdline, t.label)
                for t in self.store.list_targets()]

    @_guard("Saving the target")
    def save_target(self, form: TargetForm) -> TargetForm:
        """Remember the target (never its API key) and return the form with its target id."""
        t = self.store.find_or_add_target(form.url.strip().rstrip("/"), form.model, form.truncate_prompt_tokens,
                                          form.cmdline or None, form.label or None)
        return TargetForm(url=t.url, model=form.model, truncate_prompt_tokens=form.truncate_prompt_tokens,
                          cmdline=form.cmdline, log_text=form.log_text, api_key=form.api_key,
                          target_id=t.id, label=form.label)

    def _spec(self, form: TargetForm) -> Any:
        eng = _engine_part("triage.engine", "The checklist engine")
        return eng.TargetSpec(url=form.url, model=form.model, truncate_prompt_tokens=form.truncate_prompt_tokens,
                              cmdline=form.cmdline or None, log_text=form.log_text or None, api_key=form.api_key or None)

    # -- checklist ---------------------------------------------------------------------------
    def steps(self) -> tuple[Step, ...]:
        return STEPS

    def iter_checklist(self, form: TargetForm) -> Iterator[ChecklistEvent]:
        """Run the checklist, yielding progress; an engine failure arrives as an "error" event."""
        try:
            eng = _engine_part("triage.engine", "The checklist")
            spec = self._spec(form)
            seen_steps: list[str] = []
            run_id: Optional[int] = None
            findings: list[Finding] = []
            if hasattr(eng, "iter_checklist"):
                source: Iterator[Any] = eng.iter_checklist(spec, self.store)
            else:
                res = eng.run_checklist(spec, self.store)
                source = iter([{"kind": "finding", "finding": f} for f in res.findings] + [res])
            for ev in source:
                run_id = getattr(ev, "run_id", None) or (ev.get("run_id") if isinstance(ev, dict) else None) or run_id
                f = _finding(getattr(ev, "finding", None) if not isinstance(ev, dict) else ev.get("finding"))
                if f is None and hasattr(ev, "findings") and not isinstance(ev, dict):
                    # a final result object
                    for g in getattr(ev, "findings") or []:
                        g = _finding(g)
                        if g and g not in findings:
                            findings.append(g)
                            yield from self._step_events(g, seen_steps)
                            yield ChecklistEvent("finding", step_of(g.check), g, run_id)
                    continue
                if f is None:
                    msg = getattr(ev, "message", None) or (ev.get("message") if isinstance(ev, dict) else None)
                    step = getattr(ev, "step", None) or (ev.get("step") if isinstance(ev, dict) else None)
                    if step and step in {s.id for s in STEPS} and step not in seen_steps:
                        seen_steps.append(step)
                        yield ChecklistEvent("step", step, None, run_id, str(msg or ""), len(seen_steps))
                    continue
                findings.append(f)
                yield from self._step_events(f, seen_steps)
                yield ChecklistEvent("finding", step_of(f.check), f, run_id)
            yield ChecklistEvent("done", None, None, run_id, worst(f.status for f in findings).value, len(STEPS))
        except Exception as e:
            yield ChecklistEvent("error", None, None, None, plain_error(e))

    @staticmethod
    def _step_events(f: Finding, seen: list[str]) -> Iterator[ChecklistEvent]:
        step = step_of(f.check)
        if step not in seen:
            seen.append(step)
            yield ChecklistEvent("step", step, None, None, "", len(seen))

    # -- probes ------------------------------------------------------------------------------
    def probe_sets(self) -> tuple[ProbeSet, ...]:
        return PROBE_SETS

    def run_probes(self, form: TargetForm, sets: list[str], *, allow_hang: bool, stall_s: float = 10.0,
                   deadline_s: float = 60.0, on_event: Callable[[ProbeEvent], None] | None = None) -> ProbeRunView:
        """Run the chosen probe sets (the seed matrix only with allow_hang=True)."""
        if any(s.can_hang and s.id in sets for s in PROBE_SETS) and not allow_hang:
            raise ServiceError("The seed matrix can hang the server: confirm it before running.")
        mod = _engine_part("triage.probes", "Probes")
        spec = self._spec(form)

        def relay(ev: Any) -> None:
            if on_event is None:
                return
            try:
                if isinstance(ev, dict):
                    pe = ProbeEvent(str(ev.get("probe", "?")), str(ev.get("state", ev.get("kind", "?"))),
                                    str(ev.get("message", "")), ev.get("elapsed_s"))
                else:
                    pe = ProbeEvent(str(getattr(ev, "probe", "?")),
                                    str(getattr(ev, "state", None) or getattr(ev, "outcome", None)
                                        or getattr(ev, "kind", "?")),
                                    str(getattr(ev, "message", "") or ""), getattr(ev, "elapsed_s", None))
                on_event(pe)
            except Exception:  # progress display must never break the run
                pass

        try:
            res = mod.run_probes(spec, sets=list(sets), allow_hang=allow_hang, stall_s=stall_s,
                                 deadline_s=deadline_s, store=self.store, on_event=relay)
        except ServiceError:
            raise
        except Exception as e:
            raise ServiceError(f"Probes: {plain_error(e)}") from e
        run_id = getattr(res, "run_id", None)
        probes: list[ProbeView] = []
        if run_id is not None:
            rec = self.store.get_run(run_id, with_samples=False)
            probes = [_probe_view(p) for p in rec.probes] if rec else []
        if not probes:
            probes = [_probe_view(o) for o in getattr(res, "outcomes", []) or []]
        findings = [f for f in (_finding(x) for x in getattr(res, "findings", []) or []) if f]
        return ProbeRunView(run_id, probes, findings)

    # -- engine stats ------------------------------------------------------------------------
    def stats_available(self) -> bool:
        return _has("triage.watch", "Watcher")

    @_guard("Engine stats")
    def stats_tick(self, form: TargetForm, session: dict[str, Any], stall_s: float = 10.0) -> StatsView:
        """Scrape /metrics once into a watcher kept in ``session`` (the caller's dict), return the chart."""
        watch = _engine_part("triage.watch", "Engine stats")
        w = session.get("watcher")
        key = (form.url, form.model)
        if w is None or session.get("watcher_key") != key:
            w = self._make_watcher(watch, form, stall_s)
            session["watcher"], session["watcher_key"] = w, key
        w_tick = getattr(w, "tick", None) or getattr(w, "poll", None) or getattr(w, "scrape_once", None) \
            or getattr(w, "step", None)
        if w_tick is None:
            raise NotAvailable("Engine stats: the watcher has no single-step method yet.")
        w_tick()
        samples = list(getattr(w, "samples", []) or [])
        alerts = list(getattr(w, "alerts", []) or [])
        state = getattr(w, "state", None)
        latest = dict(getattr(w, "latest", None) or {}) if not callable(getattr(w, "latest", None)) else dict(w.latest() or {})
        fig = None
        try:
            charts = _engine_part("triage.charts", "Charts")
            fig = charts.engine_stats_figure(samples, alerts=tuple(alerts))
        except NotAvailable:
            fig = None
        alert = None
        if alerts:
            a = alerts[-1]
            alert = a if isinstance(a, dict) else {k: getattr(a, k) for k in ("kind", "since", "confirmed_at")
                                                   if hasattr(a, k)}
        elif state is not None and getattr(state, "stalled", False):
            alert = {"kind": state.kind, "since": state.since, "confirmed_at": state.confirmed_at}
        return StatsView(fig, latest, alert, len(samples))

    def _make_watcher(self, watch: Any, form: TargetForm, stall_s: float) -> Any:
        W = watch.Watcher
        attempts: list[dict[str, Any]] = [
            dict(url=form.url, api_key=form.api_key, stall_s=stall_s, store=self.store, target_id=form.target_id),
            dict(url=form.url, api_key=form.api_key, stall_s=stall_s),
            dict(url=form.url, api_key=form.api_key),
            dict(url=form.url),
        ]
        last: Exception | None = None
        for kw in attempts:
            try:
                return W(**kw)
            except TypeError as e:
                last = e
        raise ServiceError(f"Engine stats: cannot start a watcher ({last}).")

    # -- logs --------------------------------------------------------------------------------
    @_guard("Log analysis")
    def analyze_log(self, text: str, target_id: int | None = None, save: bool = True) -> LogView:
        """Parse a pasted or uploaded vLLM log: series, start-up config, findings; store it as a run."""
        if not text or not text.strip():
            raise ServiceError("The log is empty: paste it or upload a file.")
        logs = _engine_part("triage.logs", "Log analysis")
        try:
            res = logs.analyze_log(text.splitlines())
        except ServiceError:
            raise
        except Exception as e:
            raise ServiceError(f"This does not look like a vLLM log ({plain_error(e)}).") from e
        findings = [f for f in (_finding(x) for x in getattr(res, "findings", []) or []) if f]
        config = dict(getattr(res, "config", {}) or {})
        samples = [_sample_dict(s) for s in getattr(res, "samples", []) or []]
        summary = getattr(res, "summary", {}) or {}
        if not isinstance(summary, dict):
            summary = {"summary": str(summary)}
        run_id = getattr(res, "run_id", None)
        if save and run_id is None:
            run_id = self._save_log_run(text, target_id, findings, config)
        return LogView(findings, config, samples, dict(summary), run_id)

    def _save_log_run(self, text: str, target_id: int | None, findings: list[Finding], config: dict[str, Any]) -> int:
        st = self.store
        run = st.start_run(target_id, "logs", {"source": "dashboard"})
        assert run.id is not None
        st.add_capture(run.id, "log", text, name="pasted.log")
        if config:
            st.set_config(run.id, config)
        for f in findings:
            st.add_finding(run.id, f)
        st.finish_run(run.id, worst(f.status for f in findings).value)
        return run.id

    # -- history -----------------------------------------------------------------------------
    @_guard("History")
    def list_runs(self, *, target_id: int | None = None, status: str | None = None,
                  limit: int = 25, offset: int = 0) -> RunPage:
        """One page of runs, newest first (LIMIT/OFFSET in SQL; the count is one SQL COUNT)."""
        st = self.store
        rows = [RunRow(int(r.id or 0), r.kind, r.status, _iso(r.started_at), _iso(r.finished_at) or None,
                       (t.label or t.url) if t else "—", t.model if t else None, r.summary)
                for r, t in st.list_runs(target_id=target_id, status=status or None, limit=limit, offset=offset)]
        total = st.count_runs(target_id=target_id, status=status or None)
        return RunPage(rows, total, limit, offset)

    @_guard("History")
    def count_runs(self, *, target_id: int | None = None, status: str | None = None) -> int:
        return self.store.count_runs(target_id=target_id, status=status or None)

    @_guard("Opening the run")
    def get_run(self, run_id: int) -> RunDetail | None:
        rec = self.store.get_run(run_id, with_samples=True)
        return _detail(rec) if rec else None

    @_guard("Comparing runs")
    def compare_runs(self, left_id: int, right_id: int) -> RunDiff:
        a, b = self.get_run(left_id), self.get_run(right_id)
        if a is None or b is None:
            raise ServiceError(f"Run {left_id if a is None else right_id} does not exist.")
        return diff_runs(a, b)

    def latest_run_id(self) -> int | None:
        return self.store.latest_run_id()

    # -- report ------------------------------------------------------------------------------
    def export_formats(self) -> tuple[ExportFormat, ...]:
        return EXPORT_FORMATS

    @_guard("Export")
    def export(self, run_id: int, fmt: str) -> tuple[bytes, str, str]:
        """The open run rendered by the report engine: (bytes, file name, MIME type)."""
        exp = _engine_part("triage.export", "Report export")
        rec = self.store.get_run(run_id)
        if rec is None:
            raise ServiceError(f"Run {run_id} does not exist.")
        data = exp.render(rec, fmt)
        if isinstance(data, str):
            data = data.encode()
        f = next((x for x in EXPORT_FORMATS if x.id == fmt), ExportFormat(fmt, fmt, "application/octet-stream", fmt))
        return bytes(data), f"vllm-triage-run-{run_id}.{f.ext}", f.mime


def _sample_dict(s: Any) -> dict[str, Any]:
    if isinstance(s, dict):
        return dict(s)
    if hasattr(s, "model_dump"):
        return s.model_dump()
    if hasattr(s, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(s)
    return {"value": s}


def _detail(rec: RunRecord) -> RunDetail:
    r, t = rec.run, rec.target
    return RunDetail(int(r.id or 0), r.kind, r.status, _iso(r.started_at), (t.label or t.url) if t else "—",
                     t.model if t else None, r.summary, rec.config, rec.meta, list(rec.findings),
                     [_probe_view(p) for p in rec.probes], len(rec.samples))


def diff_runs(a: RunDetail, b: RunDetail) -> RunDiff:
    """What changed between two runs: effective config values and verdicts per check."""
    cfg = [DiffRow(k, _config_value(a.config.get(k)), _config_value(b.config.get(k)),
                   _config_value(a.config.get(k)) != _config_value(b.config.get(k)))
           for k in sorted(set(a.config) | set(b.config))]
    va = {f.check: Status(f.status).value for f in a.findings}
    vb = {f.check: Status(f.status).value for f in b.findings}
    verdicts = [DiffRow(k, va.get(k), vb.get(k), va.get(k) != vb.get(k)) for k in list(dict.fromkeys([*va, *vb]))]
    return RunDiff(a, b, cfg, verdicts)


# -- which implementation pages get --------------------------------------------------------

_override: Any = None
_default: Services | None = None
_default_key: str | None = None
_default_lock = threading.Lock()


def get() -> Services:
    """The services object pages use: the test override when set, else one per database."""
    global _default, _default_key
    if _override is not None:
        return _override  # type: ignore[no-any-return]
    key = to_url(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else "default"
    with _default_lock:
        if _default is None or _default_key != key:
            _default, _default_key = Services(os.environ.get(DB_ENV) or None), key
        return _default


def set_override(svc: Any) -> None:
    global _override
    _override = svc


@contextlib.contextmanager
def override(svc: Any) -> Iterator[Any]:
    """Replace the services for the duration (tests: a fake at this seam and nowhere deeper)."""
    prev = _override
    set_override(svc)
    try:
        yield svc
    finally:
        set_override(prev)

"""Engine values in, page values out: the pure conversions behind ui.services (no I/O, no Streamlit).

Each function here accepts the engine's shapes (dataclasses, stored rows, dicts) and returns the
plain values of ui.values, so a change in an engine type is absorbed in one place.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Optional
from collections.abc import Callable

from triage import events as ev_
from triage.events import RunEvent
from triage.display import kv_percent
from triage.findings import Status
from triage.sample import EngineSample
from triage.store import ProbeInfo, RunRecord
from ui.errors import ServiceError
from triage.steps import step_of  # noqa: F401 - re-exported for ui.services
from ui.values import DiffRow, ProbeProgress, ProbeView, RunDetail, RunDiff


def plain_error(e: BaseException) -> str:
    """An engine exception as one line a user can act on."""
    if isinstance(e, ServiceError):
        return str(e)
    from triage.http import ConnectError, HTTPStatusError, TimeoutException

    if isinstance(e, ConnectError):
        return f"Cannot connect to the server: {e}. Is the URL right and the server up?"
    if isinstance(e, TimeoutException):
        return f"The server did not answer in time ({type(e).__name__})."
    if isinstance(e, HTTPStatusError):
        return http_status_message(e.response.status_code, e.response.text)
    msg = str(e) or type(e).__name__
    name = type(e).__name__
    return msg if name in msg or name in ("ValueError", "RuntimeError") else f"{name}: {msg}"


def http_status_message(code: int, body: str = "", key_given: bool = False) -> str:
    """A plain message for an HTTP error; a 401 says whether the key was missing or refused (``key_given``)."""
    if code == 401 and key_given:
        return ("401 Unauthorized: the server refused the API key given. Enter the key the server was started "
                "with (its --api-key or VLLM_API_KEY) on the Target page.")
    if code == 401:
        return "401 Unauthorized: the server wants an API key (vllm serve --api-key). Enter it on the Target page."
    if code == 403:
        return "403 Forbidden: the API key was refused."
    if code == 404:
        return "404 Not Found: is this a vLLM OpenAI-compatible server (vllm serve), and is the URL its root?"
    return f"HTTP {code}: {body[:300]}"


def iso(dt: Any) -> str:
    if dt is None:
        return ""
    try:
        return dt.strftime("%Y-%m-%d %H:%M:%S")
    except AttributeError:
        return str(dt)


def probe_view(p: ProbeInfo | dict[str, Any]) -> ProbeView:
    """A stored probe (``triage.store.ProbeInfo``) or an outcome's ``to_dict()`` as the page's row."""
    if isinstance(p, dict):
        return ProbeView(p.get("probe", "?"), str(p.get("outcome", "?")), p.get("duration_s"),
                         p.get("time_to_verdict_s"), p.get("http_status"), dict(p.get("detail") or {}))
    return ProbeView(p.probe, str(p.outcome), p.duration_s, p.time_to_verdict_s, p.http_status, dict(p.detail))


def _n(v: Optional[float]) -> str:
    return "None" if v is None else f"{v:g}"


def config_value(v: Any) -> Any:
    """An effective config value without its provenance wrapper."""
    if isinstance(v, dict) and "value" in v:
        return v["value"]
    return v


def probe_relay(on_event: Callable[[ProbeProgress], None] | None) -> Callable[[Any], None]:
    """Turn the probe run's events (triage.events.RunEvent) into a line the page can show."""

    def relay(ev: RunEvent) -> None:
        if on_event is None or ev.kind == ev_.PROBE:  # a finished probe's verdict line came before it
            return
        kind = ev.kind
        probe = ev.probe or "run"
        d = dict(ev.data or {})
        if kind == ev_.PROBE_SAMPLE and ev.samples:
            s = ev.samples[0]
            pe = ProbeProgress(probe, "running", f"running {_n(s.num_requests_running)}, waiting "
                            f"{_n(s.num_requests_waiting)}, prompt tokens {_n(s.prompt_tokens_total)}", s.ts)
        elif kind == ev_.PROBE_STARTED:
            pe = ProbeProgress(probe, "running", str(d.get("description") or d.get("set") or ""), 0.0)
        elif kind == ev_.PROBE_VERDICT:
            pe = ProbeProgress(probe, str(d.get("outcome")), f"http {d.get('http_status')}" if d.get("http_status")
                            else "", d.get("time_to_verdict_s"))
        elif kind == ev_.PROBE_ABORTED:
            pe = ProbeProgress(probe, "aborted", f"verdict {d.get('verdict')}; aborted, checking recovery…",
                            d.get("aborted_at_s"))
        elif kind == ev_.FINDING and ev.finding is not None:
            pe = ProbeProgress(f"finding {ev.finding.check}", ev.finding.status.value, ev.finding.title)
        elif kind == ev_.STARTED:
            pe = ProbeProgress("run", "run-started", str(d.get("model") or ""))
        elif kind == ev_.DONE:
            pe = ProbeProgress("run", "run-finished", ev.summary)
        else:
            pe = ProbeProgress(probe, kind, "")
        try:
            on_event(pe)
        except Exception:  # noqa: BLE001 - a progress display must never break the run
            pass

    return relay


def sample_row(s: EngineSample) -> dict[str, Any]:
    """One engine sample (a log's stats line or a scrape) as a table row: time, gauges, throughputs.

    KV cache usage is in percent, as the charts draw it (vLLM's gauge is a fraction: 0.002 is 0.2 %)."""
    ts = s.ts
    # the samples' clock as the charts draw it (never shifted into the dashboard host's zone)
    return {"time": datetime.fromtimestamp(ts, UTC).replace(tzinfo=None) if ts is not None else None,
            "engine": s.engine, "line": s.line,
            "running": s.num_requests_running,
            "waiting": s.num_requests_waiting,
            "prompt_throughput": s.prompt_throughput,
            "generation_throughput": s.generation_throughput,
            "KV cache %": kv_percent(s.kv_cache_usage_perc, 3)}


def effective_config(stored: dict[str, Any]) -> dict[str, Any]:
    """The {key: {value, source, detail}} part of a stored config (checklist runs nest it under "values")."""
    vals = stored.get("values")
    return dict(vals) if isinstance(vals, dict) else dict(stored)


def run_detail(rec: RunRecord) -> RunDetail:
    r, t = rec.run, rec.target
    return RunDetail(int(r.id or 0), r.kind, r.status, iso(r.started_at), (t.label or t.url) if t else "—",
                     t.model if t else None, r.summary, effective_config(rec.config), rec.meta, list(rec.findings),
                     [probe_view(p) for p in rec.probes], len(rec.samples))


def diff_runs(a: RunDetail, b: RunDetail) -> RunDiff:
    """What changed between two runs: effective config values and verdicts per check."""
    cfg = [DiffRow(k, config_value(a.config.get(k)), config_value(b.config.get(k)),
                   config_value(a.config.get(k)) != config_value(b.config.get(k)))
           for k in sorted(set(a.config) | set(b.config))]
    va = {f.check: Status(f.status).value for f in a.findings}
    vb = {f.check: Status(f.status).value for f in b.findings}
    verdicts = [DiffRow(k, va.get(k), vb.get(k), va.get(k) != vb.get(k)) for k in list(dict.fromkeys([*va, *vb]))]
    return RunDiff(a, b, cfg, verdicts)

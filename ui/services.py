"""The one seam between dashboard pages and the engine: plain values in, plain values out.

Pages call ``services.get()`` and nothing else of the engine. This module never imports
Streamlit; it calls the engine directly (the one Target type, the engine's registries of steps,
probe sets, outcome grading and export formats) and turns every engine exception into a
``ServiceError`` whose text is a plain message for the page (never a traceback).

Tests replace the whole object at this seam with ``override(fake)``; nothing deeper is faked.
"""
from __future__ import annotations

import contextlib
from dataclasses import replace
import io
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Optional

from triage import charts, engine, export, fixblocks, logs, watch
from triage.charts import gap_text
from triage.logs.lines import times_zoned
from triage.logs.persist import to_metric_samples
from triage.export import EXPORT_FORMATS, ExportFormat
from triage.events import observers
from triage.differential import is_diagnosis
from triage.probes.experiments import asked
from triage.export.groups import groups
from triage.findings import Finding, worst
from triage.probes import OUTCOME_STATUS, PROBE_SETS, ProbeSet, run_probes
from triage import recorder as recorder_
from triage.recorder import Recorder
from triage.stall import DEFAULT_STALL_S
from triage.steps import STEPS, Step, step_index
from triage.store import DB_ENV, Store, default_db_url, to_url
from triage.target import Target, Truncation
from ui.adapters import (
    diff_runs,
    effective_config,
    http_status_message,
    iso,
    plain_error,
    probe_relay,
    probe_view,
    run_detail,
    sample_row,
    step_of,
)
from ui.errors import ServiceError
from ui.values import (  # re-exported: pages import one module
    ChecklistEvent,
    DiffRow,
    Headline,
    LiveState,
    LogView,
    ModelInfo,
    ProbeEvent,
    ProbeRunView,
    ProbeView,
    RunDetail,
    RunDiff,
    RunPage,
    RunRow,
    SavedTarget,
    StatsView,
)

__all__ = ["EXPORT_FORMATS", "OUTCOME_STATUS", "PROBE_SETS", "STEPS", "ChecklistEvent", "DiffRow", "ExportFormat",
           "Headline",
           "LiveState", "LogView", "ModelInfo", "ProbeEvent", "ProbeRunView", "ProbeSet", "ProbeView", "RunDetail",
           "RunDiff", "RunPage", "RunRow", "SavedTarget", "ServiceError", "Services", "StatsView", "Step",
           "Target", "Truncation", "diff_runs", "gap_text", "effective_config", "get", "override", "plain_error",
           "set_override", "step_of"]


# -- helpers ---------------------------------------------------------------------------------


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












HISTORY_KEY = "episodes"  # in the Engine stats page's dict: every stall episode seen, kept across watcher resets
EVIDENCE_BEFORE_S, EVIDENCE_AFTER_S = 10.0, 3.0


def _episode_history(session: dict[str, Any], alerts: list[dict[str, Any]], events: list[Any],
                     samples: list[Any], now: float) -> list[dict[str, Any]]:
    """Every stall episode the page has seen (open and ended): start, end, how it ended, its evidence.

    The watcher's alerts are the episodes; a "cleared" event says how one ended (the gauges at that
    scrape); the samples around it are kept with it, so it stays readable after the live series scrolls on.
    """
    hist: dict[tuple[str, float], dict[str, Any]] = session.setdefault(HISTORY_KEY, {})
    for a in alerts:
        key = (str(a.get("engine")), float(a["since"]))
        ep = hist.setdefault(key, {"engine": key[0], "kind": a.get("kind"), "start": key[1],
                                   "confirmed": a.get("confirmed_at"), "end": None, "ended": "still stalled",
                                   "evidence": []})
        ep["end"] = a.get("cleared_at")
    for ev in events:
        ep = hist.get((str(ev.engine), float(ev.since)))
        if ev.event == "cleared" and ep is not None:
            idle = not ev.running and not ev.waiting
            ep["ended"] = ("the requests left the engine (finished, or aborted by their client)" if idle else
                           f"progress resumed (running {_n(ev.running)}, waiting {_n(ev.waiting)})")
    one_engine = len({str(x.engine) for x in samples}) <= 1
    for ep in hist.values():
        if ep["end"] is None or not ep["evidence"] or ep.get("evidence_until", 0) < ep["end"] + EVIDENCE_AFTER_S:
            lo, hi = ep["start"] - EVIDENCE_BEFORE_S, (ep["end"] or now) + EVIDENCE_AFTER_S
            rows = [sample_row(x) for x in samples if x.ts is not None and lo <= x.ts <= hi and
                    (one_engine or str(x.engine) == ep["engine"])]
            if rows:
                ep["evidence"], ep["evidence_until"] = rows[-400:], min(hi, now)
    return sorted(hist.values(), key=lambda e: e["start"])


def _n(v: Any) -> str:
    return "?" if v is None else f"{v:g}"


LOG_TIME_UTC = "time (UTC)"
LOG_TIME_AS_WRITTEN = "time as the log wrote it (no zone stated)"  # vLLM's own record times carry none
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_ANY_HOST = {"0.0.0.0", "::", ""}


def _log_server(config: dict[str, Any]) -> tuple[str, int] | None:
    """(host, port) of the server a log names (its start-up arguments; vLLM's defaults where it states none)."""
    args = config.get("non_default_args") if isinstance(config.get("non_default_args"), dict) else {}
    if not args and "port" not in config:
        return None
    try:
        port = int(args.get("port", config.get("port", 8000)))  # vLLM's default port when the log states none
    except (TypeError, ValueError):
        return None
    return str(args.get("host") or config.get("host") or "0.0.0.0"), port


def _names(url: str | None, host: str, port: int) -> bool:
    """Whether ``url`` is the server listening on ``host``:``port``."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(url or "")
        uport = u.port or (443 if u.scheme == "https" else 80)
    except ValueError:
        return False
    same_host = host in _ANY_HOST or u.hostname == host or (u.hostname in _LOOPBACK and host in _LOOPBACK)
    return uport == port and same_host


def log_server_target(config: dict[str, Any], session_target: Target | None) -> Target | None:
    """The server a log names, as the target its fix snippets address: the session's target when it is that
    server (its command line and key), else the log's own host and port (issue 32: snippets pointed at
    127.0.0.1:8000 while the log named port 8003); None when the log names none."""
    named = _log_server(config)
    if named is None:
        return None
    host, port = named
    if session_target is not None and _names(session_target.url, host, port):
        return session_target
    shown = "127.0.0.1" if host in _ANY_HOST else (f"[{host}]" if ":" in host else host)
    model = config.get("served_model_name") or config.get("model")
    return Target(url=f"http://{shown}:{port}", model=model if isinstance(model, str) else None)


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

    # -- target ------------------------------------------------------------------------------
    @_guard("Listing models")
    def list_models(self, url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[ModelInfo]:
        """GET /v1/models through the engine's client: the model ids served, with their max_model_len."""
        from triage.http import VllmClient

        url, _note = self.check_url(url)
        with VllmClient(url, api_key=api_key or None, timeout_s=timeout_s) as client:
            r = client.get("/v1/models")
        if r.transport_failed:
            kinds = {"refused": "Cannot connect to the server (connection refused): is the URL right, the server up?",
                     "timeout": "The server did not answer /v1/models in time.",
                     "tls": "TLS error talking to the server: check https vs http and the certificate."}
            raise ServiceError(kinds.get(r.error_kind or "", f"Cannot reach the server: {r.error}"))
        if r.status_code != 200:
            raise ServiceError(http_status_message(r.status_code or 0, r.text, key_given=bool(api_key)))
        body = r.json()
        if not isinstance(body, dict):
            raise ServiceError("The server answered /v1/models with something that is not JSON: is it vLLM?")
        return [ModelInfo(str(m.get("id")), m.get("root"), m.get("max_model_len")) for m in body.get("data") or []]

    def check_url(self, text: str) -> tuple[str, str]:
        """(the URL to use, a note on what was changed); a ServiceError says why a URL cannot be used."""
        from urllib.parse import urlsplit

        from triage.http import base_url_problem

        raw = (text or "").strip().rstrip("/")
        if not raw:
            raise ServiceError("Give the server URL, for example http://127.0.0.1:8000.")
        if any(c.isspace() for c in raw):
            raise ServiceError(f"'{raw}' has spaces in it: give one URL, for example http://127.0.0.1:8000.")
        note = ""
        if "://" not in raw:
            raw, note = f"http://{raw}", f"No scheme given: using http://{raw}."
        parts = urlsplit(raw)
        if parts.scheme not in ("http", "https"):
            raise ServiceError(f"'{parts.scheme}://' is not a web address: a vLLM server answers on http:// or "
                               "https://.")
        try:
            port = parts.port
        except ValueError:
            raise ServiceError(f"The port in '{raw}' is not a number between 1 and 65535.") from None
        if not parts.hostname:
            raise ServiceError(f"'{raw}' names no host: give one like http://127.0.0.1:8000.")
        if port == 0:
            raise ServiceError(f"Port 0 in '{raw}' is not a port a server listens on.")
        why = base_url_problem(raw)
        if why is not None:
            raise ServiceError(f"'{raw}' cannot be used: {why}.")
        if parts.path.rstrip("/").endswith("/v1"):
            raw, note = raw[: raw.rstrip("/").rfind("/v1")], (note + " The server's root is used, without /v1.").strip()
        return raw, note

    def last_target(self) -> Target | None:
        """The target chosen last in any tab (the store remembers it; never its API key)."""
        try:
            t = self.store.last_used_target()
        except Exception:  # noqa: BLE001 - an old or unreachable database: start without one
            return None
        if t is None:
            return None
        return Target(url=t.url, model=t.model, truncation=t.truncation, cmdline=t.cmdline, label=t.label,
                      target_id=t.id)

    @_guard("Saved targets")
    def saved_targets(self) -> list[SavedTarget]:
        return [SavedTarget(t.id, t.url, t.model, t.truncation, t.cmdline, t.label) for t in self.store.list_targets()]

    @_guard("Saving the target")
    def save_target(self, form: Target) -> Target:
        """Remember the target (never its API key) and return it with its saved id."""
        t = self.store.find_or_add_target(form.url or "", form.model, form.truncation.request_value(),
                                          form.cmdline or None, form.label or None)
        self.store.mark_target_used(t.id)
        return form.with_(url=t.url, target_id=t.id)

    # -- checklist ---------------------------------------------------------------------------
    def steps(self) -> tuple[Step, ...]:
        return STEPS

    def answer_form(self) -> tuple[dict[str, Any], tuple[Any, ...], tuple[int, ...]]:
        """For the Checklist page's answer inputs: the answerable keys (kind, accepted forms), common GPUs, sizes."""
        from triage import answers

        return dict(answers.KEYS), answers.COMMON_GPUS, answers.MEMORY_SIZES_GIB

    @_guard("Your answer")
    def with_answers(self, form: Target, answers: dict[str, Any]) -> Target:
        """The target carrying the user's answers, parsed by the engine (triage.answers); re-run it to apply."""
        from triage.answers import parse_answers

        parsed = parse_answers(answers) or None
        if parsed and "truncate_prompt_tokens" in parsed:
            # one value: the answered truncation is the target's own (the header, the banner and the verdict agree)
            return form.with_(answers=parsed, truncation=Truncation.parse(parsed["truncate_prompt_tokens"]))
        return form.with_(answers=parsed)

    def iter_checklist(self, form: Target) -> Iterator[ChecklistEvent]:
        """Run the checklist, yielding progress; an engine failure arrives as an "error" event, not a raise."""
        n = len(STEPS)
        try:
            seen: list[str] = []
            run_id: Optional[int] = None
            findings: list[Finding] = []
            stored: dict[str, Any] | None = None
            # core → observer: the Recorder writes each event before the page sees it (a closed tab loses nothing)
            for ev in recorder_.record(engine.checklist_events(form), Recorder(self.store)):
                run_id = ev.run_id or run_id
                if ev.kind == "config":
                    stored = ev.stored or ({"values": ev.config} if ev.config else None)
                if ev.finding is not None:
                    f = ev.finding
                    findings.append(f)
                    step = step_of(f.check)
                    if step not in seen:
                        seen.append(step)
                        yield ChecklistEvent("step", step, None, run_id, "", step_index(step) or len(seen), n)
                    yield ChecklistEvent("finding", step, f, run_id)
                elif ev.kind == "started":
                    yield ChecklistEvent("progress", None, None, run_id, f"Run #{run_id} started", 0, n)
                elif ev.kind == "source":
                    yield ChecklistEvent("progress", None, None, run_id,
                                         f"Evidence from {ev.source or 'source'}: {ev.message}", 0, n)
                elif ev.kind == "config":
                    yield ChecklistEvent("progress", None, None, run_id, "Effective config merged", 0, n)
            yield ChecklistEvent("done", None, None, run_id, worst(f.status for f in findings).value, n, n,
                                 config=stored)
        except Exception as e:  # noqa: BLE001 - the page shows a message, never a traceback
            yield ChecklistEvent("error", None, None, None, plain_error(e))

    def headline(self, findings: list[Finding], config: dict[str, Any] | None = None, form: Target | None = None,
                 where: str = "") -> Headline:
        """The banner of a page: the worst root cause among ``findings`` and where it is (its checklist step,
        or ``where``), the tally, the fix as copyable blocks; passing steps the fix changes are named."""
        from triage.findings import severity

        top = worst(f.status for f in findings).value if findings else "unknown"
        order = sorted(findings, key=lambda f: -severity(f.status))
        grouped, _rest = groups(findings, config)
        g = next((x for x in grouped if x.status == top), None)
        first = findings[g.indices[0]] if g is not None else (order[0] if order else None)
        counts: dict[str, int] = {}
        for f in order:
            counts[f.status.value] = counts.get(f.status.value, 0) + 1
        tally = " · ".join(f"{n} {s}" for s, n in counts.items())
        if first is None:
            return Headline("unknown", "No findings", "", 0, where, tally, "")
        diag = next((f for f in order if is_diagnosis(f) and severity(f.status) >= severity("warn")), None)
        if diag is not None:  # the differential's answer is the banner (issue 29)
            named = diag.failure_mode
            # "one of": the experiments are the fix, never one candidate's blocks (fixblocks.headline_mode)
            blocks = tuple(self.fix_blocks(findings, config, form)) if named else ()
            return Headline(top, diag.title, diag.check, 0, where or "Diagnosis", tally, diag.fix, blocks)
        step = step_of(first.check)
        idx = step_index(step) if not where else 0
        title = next((s.title for s in STEPS if s.id == step), step) if idx else (where or first.check)
        cause = g.mode.title if g is not None else first.title
        fix = (g.fix if g is not None else "") or first.fix
        implicated: dict[str, str] = {}
        if g is not None and severity(top) >= severity("warn"):
            keys = fixblocks.changed_keys(g.mode, config)
            for f in findings:
                s = step_of(f.check)
                if f.evidence and next(iter(f.evidence)) in keys and s != step:
                    implicated[s] = g.mode.title
        return Headline(top, cause, first.check, idx, title, tally, fix,
                        tuple(self.fix_blocks(findings, config, form, g.mode if g is not None
                                              and severity(top) >= severity("warn") else None)), implicated)

    def fix_blocks(self, findings: list[Finding], config: dict[str, Any] | None, form: Target | None,
                   mode: Any = None) -> list[fixblocks.FixBlock]:
        """The headline cause's fix as copyable blocks (``mode``, else the one fixblocks.headline_mode names):
        what to do now, the client change, the real command line edited, never another record's."""
        try:
            return fixblocks.blocks_for_findings(findings, config, cmdline=form.cmdline if form else None,
                                                 model=form.model if form else None, url=form.url if form else None,
                                                 mode=mode)
        except Exception:  # noqa: BLE001 - the prose fix below the banner still says it
            return []

    def scope(self, config: dict[str, Any] | None, probe_sets_run: list[str] | tuple[str, ...] = ()) -> list[Any]:
        """What a verdict covered, part by part (triage.scope): from the stored config's sources and the probe
        sets run for the same target."""
        from triage.scope import scope

        return scope((config or {}).get("sources"), probe_sets_run)

    # -- diagnose ----------------------------------------------------------------------------
    def diagnose(self, form: Target, on_event: Callable[[str], None] | None = None) -> RunDetail | None:
        """One click: the checklist, the safe probes and the log post-mortem as one stored run
        (triage.diagnose); progress lines go to ``on_event``; returns the run as History shows it."""
        from triage.diagnose import diagnose_events

        run_id: Optional[int] = None
        try:
            for ev in recorder_.record(diagnose_events(form), Recorder(self.store)):
                run_id = ev.run_id or run_id
                if on_event is not None and ev.kind in ("source", "finding", "done"):
                    line = (f"{ev.finding.status.value.upper()}: {ev.finding.title}" if ev.finding is not None
                            else ev.message or ev.summary or ev.kind)
                    with contextlib.suppress(Exception):
                        on_event(line)
        except Exception as e:
            raise ServiceError(f"Diagnose: {plain_error(e)}") from e
        return self.get_run(run_id) if run_id is not None else None

    # -- probes ------------------------------------------------------------------------------
    def probe_sets(self) -> tuple[ProbeSet, ...]:
        return PROBE_SETS

    def experiments_asked(self, findings: list[Finding]) -> list[str]:
        """The probe sets the run's "one of" diagnoses ask for (the page's "Run the experiments" button)."""
        return asked([f for f in findings if is_diagnosis(f) and not f.failure_mode])

    def run_probes(self, form: Target, sets: list[str], *, allow_hang: bool, stall_s: float = DEFAULT_STALL_S,
                   deadline_s: float = 30.0, on_event: Callable[[ProbeEvent], None] | None = None,
                   run_experiments: bool = False) -> ProbeRunView:
        """Run the chosen probe sets (the seed matrix only with allow_hang=True); progress goes to on_event.
        ``run_experiments``: then the sets an ambiguous diagnosis asks for (a hang-capable one only with
        allow_hang), and the diagnosis again."""
        if any(s.can_hang and s.id in sets for s in PROBE_SETS) and not allow_hang:
            raise ServiceError("The seed matrix can hang the server: confirm it before running.")
        relay = probe_relay(on_event)
        recorder = Recorder(self.store)  # core → observers: the Recorder writes the run, the page shows progress
        try:
            with recorder.guard():
                res = run_probes(form, sets=list(sets), allow_hang=allow_hang, stall_s=stall_s,
                                 deadline_s=deadline_s, on_event=observers(recorder, relay),
                                 run_experiments=run_experiments)
        except Exception as e:
            raise ServiceError(f"Probes: {plain_error(e)}") from e
        run_id = res.run_id
        probes: list[ProbeView] = []
        if run_id is not None:
            rec = self.store.get_run(run_id, with_samples=False)
            probes = [probe_view(p) for p in rec.probes] if rec else []
        if not probes:
            probes = [probe_view(o.to_dict()) for o in res.outcomes]
        findings = list(res.findings)
        figure = None
        series = [o.series() for o in res.outcomes]  # the stream's EngineSamples, typed
        if any(x.samples for x in series):
            try:
                figure = charts.probe_timeline_figure(series)
            except Exception:  # noqa: BLE001 - the per-probe tables below still carry the samples
                figure = None
        grouped, rest = groups(findings, {"values": res.target})
        return ProbeRunView(run_id, probes, findings, figure, groups=tuple(grouped), ungrouped=tuple(rest),
                            sets=tuple(sets))

    def throughput_figure(self, findings: list[Finding]) -> Any:
        """Requests/s and p50/p95 per concurrency from the ``throughput`` finding's rows, or None."""
        rows = next((f.evidence.get("rows") for f in findings if f.check == "throughput"
                     and isinstance(f.evidence.get("rows"), list)), None)
        if not rows:
            return None
        try:
            return charts.throughput_figure(rows)
        except Exception:  # noqa: BLE001 - the finding's table still carries the numbers
            return None

    def live_state(self, form: Target, watch_s: float = DEFAULT_STALL_S + 1.5, every_s: float = 0.5,
                   stall_s: float = DEFAULT_STALL_S, client: Any = None,
                   clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> LiveState:
        """Is the engine stalled now? The live stall rule (a Watcher) over /metrics scraped every ``every_s`` for
        ``watch_s`` (just past the stall window): what the checklist adds about the moment it ran, since its
        own evidence is the set-up, which reads the same on an idle and on a hung server. ``client``/``clock``/
        ``sleep``: a recorded transport and a clock for tests."""
        if not form.url:
            return LiveState("cannot judge", "no server URL: only the set-up was read")
        w = watch.Watcher(form.url, stall_s=float(stall_s), api_key=form.api_key or None, interval=every_s,
                          timeout_s=max(every_s * 4, 2.0), client=client, clock=clock)
        samples, errors, alert, last = 0, [], None, None
        t0 = clock()
        try:
            while True:
                tick = w.sample_once()
                if tick.error:
                    errors.append(tick.error)
                else:
                    samples += 1
                    last = tick.sample
                if tick.state.kind and tick.state.confirmed_at is not None:
                    alert = watch.alert_message(tick.state.kind, tick.state.since or tick.ts, tick.ts,
                                                tick.state.running, tick.state.waiting, w.vllm_version,
                                                tick.state.expected_step_s)
                    break
                if clock() - t0 >= watch_s:
                    break
                sleep(every_s)
        except Exception as e:  # noqa: BLE001 - the live state is extra: it says it could not judge
            return LiveState("cannot judge", f"/metrics could not be read: {plain_error(e)}", samples)
        finally:
            with contextlib.suppress(Exception):
                w.close()
        watched = clock() - t0
        if alert is not None:
            return LiveState("stalled", alert, samples, watched)
        if samples < 2:
            why = errors[-1] if errors else "too few samples"
            return LiveState("cannot judge", f"no /metrics samples to judge by ({why})", samples, watched)
        seen = (f"running {_n(last.num_requests_running)}, waiting {_n(last.num_requests_waiting)}"
                if last is not None else "")
        return LiveState("not stalled", f"{samples} /metrics samples over {watched:.1f} s: {seen}", samples, watched)

    # -- engine stats ------------------------------------------------------------------------
    def stats_tick(self, form: Target, session: dict[str, Any], stall_s: float = DEFAULT_STALL_S,
                   keep: int = 900) -> StatsView:
        """Scrape /metrics once with a Watcher kept in ``session`` (the page's dict) and chart the series.

        The series kept here is bounded (``keep`` samples, 15 minutes at 1 s); nothing is stored:
        the CLI's ``watch`` is the recorder, this page is a live view.
        """
        try:
            key = (form.url, form.api_key, float(stall_s))
            w = session.get("watcher")
            if w is None or session.get("watcher_key") != key:
                if w is not None:
                    w.close()
                w = watch.Watcher(form.url, stall_s=float(stall_s), api_key=form.api_key or None)
                session.update(watcher=w, watcher_key=key, samples=[])
            tick = w.sample_once()
        except ServiceError:
            raise
        except Exception as e:
            raise ServiceError(f"Engine stats: {plain_error(e)}") from e
        samples: list[Any] = session["samples"]
        samples.extend(tick.samples)
        del samples[:-keep]
        alerts = list(w.alerts or [])
        history = _episode_history(session, alerts, list(tick.events or []), samples, tick.ts)
        now = time.time()  # the samples' clock (the Watcher's): a gap up to now is drawn and stated
        figure = charts.engine_stats_figure(samples, alerts=alerts, now=now)
        stamps = [s.ts for s in samples if s.ts is not None]
        gaps = charts.scrape_gaps(stamps, now)
        last_ts = max(stamps, default=None)
        stale_s = now - last_ts if last_ts is not None and gaps and gaps[-1][1] == now else None
        row = tick.sample
        latest: dict[str, Any] = {}
        if row is not None:
            latest = {"running": row.num_requests_running, "waiting": row.num_requests_waiting,
                      "prompt tokens/s": row.prompt_throughput,
                      "KV cache %": None if row.kv_cache_usage_perc is None else 100 * row.kv_cache_usage_perc}
        open_alert = next((a for a in reversed(alerts) if not a.get("cleared_at")), None)
        msg = None
        if tick.alert_event is not None and open_alert is not None:
            msg = tick.alert_event.message
        elif open_alert is not None:
            msg = watch.alert_message(open_alert["kind"], open_alert["since"], tick.ts, open_alert.get("running"),
                                      open_alert.get("waiting"), open_alert.get("vllm_version") or w.vllm_version)
        alert = {**open_alert, "message": msg} if open_alert is not None else None
        error = f"Scrape failed: {tick.error}" if tick.error else None
        return StatsView(figure, latest, alert, len(samples), error, len(history), episodes=tuple(history),
                         last_ts=last_ts, gaps=tuple(gaps), stale_s=stale_s)

    # -- logs --------------------------------------------------------------------------------
    @_guard("Log analysis")
    def analyze_log(self, text: str, target_id: int | None = None, save: bool = True,
                    secrets: tuple[str, ...] = (), session_target: Target | None = None) -> LogView:
        """Parse a pasted or uploaded vLLM log: series, start-up config, findings; store it as a run.

        The run is filed under the server the log names (its start-up arguments' host and port) when that
        server is the session's target or a saved one, else under no target: never under whatever target
        happens to be selected. ``target_id`` is kept for callers that know better (an import)."""
        if not text or not text.strip():
            raise ServiceError("The log is empty: paste it or upload a file.")
        try:
            # a file object, never a str: a pasted one-liner must not be taken for a path on this host
            res = logs.analyze_log(io.StringIO(text))
        except Exception as e:
            raise ServiceError(f"This does not look like a vLLM log ({plain_error(e)}).") from e
        findings = list(res.findings)
        config = dict(res.config_provenance or {})
        points = list(res.samples or [])
        samples = [sample_row(p) for p in points]
        summary = {k: v for k, v in (res.summary or {}).items() if k != "episodes"}
        stats = summary.get("stats") if isinstance(summary.get("stats"), dict) else {}
        # a server that died at argparse (`vllm: error: unrecognized arguments …`) prints no vLLM record, yet the
        # engine judged it: its start-up findings make it a log (issue 14)
        judged = any(f.check != "log-engine-stats" for f in findings)
        if not config and not summary.get("levels") and not stats.get("lines") and not judged:
            raise ServiceError(f"This does not look like a vLLM log: none of its {summary.get('lines', '?')} lines "
                               "is a vLLM log record (no log levels, start-up config or engine stats lines).")
        run_id = None
        filed = ""
        if session_target is not None or target_id is None:
            target_id, filed = self._log_target(dict(res.config or {}), session_target)
        if save:
            events = logs.log_events(res, log_text=text, name="dashboard-paste.log", target_id=target_id)
            run_id = recorder_.save(events, Recorder(self.store, tuple(x for x in secrets if x)))
        figure = None
        zoned = times_zoned(text)
        if points:
            try:
                # the log's stall episodes are shaded on the time axis
                figure = charts.engine_stats_figure(to_metric_samples(points), alerts=list(res.episodes or []),
                                                    time_title=LOG_TIME_UTC if zoned else LOG_TIME_AS_WRITTEN)
            except Exception:  # noqa: BLE001 - the table below still shows the series
                figure = None
        grouped, rest = groups(findings, config)
        return LogView(findings, config, samples, dict(summary), run_id, figure, groups=tuple(grouped),
                       ungrouped=tuple(rest), filed_under=filed,
                       server=log_server_target(dict(res.config or {}), session_target), times_zoned=zoned)

    def _log_target(self, config: dict[str, Any], session_target: Target | None) -> tuple[int | None, str]:
        """(target id, what was said) for the server a log names: host and port of its start-up arguments."""
        named = _log_server(config)
        if named is None:
            return None, "The log names no server (no start-up arguments): filed under no target."
        host, port = named
        if session_target is not None and session_target.target_id is not None and _names(session_target.url,
                                                                                           host, port):
            return session_target.target_id, (f"Filed under {session_target.url}, the server the log names "
                                              f"({host}:{port}).")
        t = next((t for t in self.store.list_targets() if _names(t.url, host, port)), None)
        if t is not None:
            return t.id, f"Filed under {t.url}, the server the log names ({host}:{port})."
        return None, f"The log names {host}:{port}, which is not a saved target: filed under no target."

    # -- history -----------------------------------------------------------------------------
    @_guard("History")
    def list_runs(self, *, target_id: int | None = None, status: str | None = None,
                  limit: int = 25, offset: int = 0) -> RunPage:
        """One page of runs, newest first (LIMIT/OFFSET in SQL; the count is one SQL COUNT)."""
        st = self.store
        rows = [RunRow(r.id, r.kind, r.status, iso(r.started_at), iso(r.finished_at) or None,
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
        if rec is None:
            return None
        config = rec.config if rec.config.get("values") else {"values": rec.meta}
        grouped, rest = groups(rec.findings, config)
        t = rec.target
        try:
            blocks = fixblocks.blocks_for_findings(rec.findings, config, cmdline=t.cmdline if t else None,
                                                   model=t.model if t else None, url=t.url if t else None)
        except Exception:  # noqa: BLE001 - the prose fix still stands
            blocks = []
        return replace(run_detail(rec), groups=tuple(grouped), ungrouped=tuple(rest), blocks=tuple(blocks))

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

    def export_name(self, run_id: int, fmt: str) -> tuple[str, str]:
        """(file name, MIME type) of a run's export, without rendering it."""
        return export.default_filename(run_id, fmt), export.MEDIA_TYPES.get(fmt, "application/octet-stream")

    @_guard("Export")
    def export(self, run_id: int, fmt: str, secrets: tuple[str, ...] = ()) -> tuple[bytes, str, str]:
        """The run rendered by the report engine: (bytes, file name, MIME type)."""
        rec = self.store.get_run(run_id)
        if rec is None:
            raise ServiceError(f"Run {run_id} does not exist.")
        data = export.render(rec, fmt, secrets=tuple(x for x in secrets if x))
        name, mime = self.export_name(run_id, fmt)
        return data, name, mime

    # -- prove it: the lab twin of a stored run (triage.twin) ------------------------------------------------

    def twin_plan(self, run_id: int) -> tuple[Any, str]:
        """(the twin's plan, "") or (None, why no twin can be planned) for a stored run; never raises."""
        from triage.lab.install import installed_releases
        from triage.twin.plan import PlanError, facts_of_run, plan_twin

        try:
            rec = self.store.get_run(run_id, with_samples=False)
            if rec is None:
                return None, f"Run {run_id} does not exist."
            vals, trunc, modes = facts_of_run(rec)
            return plan_twin(vals, trunc, installed_releases(), modes), ""
        except PlanError as e:
            return None, str(e)
        except Exception as e:  # a broken lab or store: said, never a traceback
            return None, f"No twin: {plain_error(e)}"

    @_guard("Reproduce on a lab twin")
    def reproduce_run(self, run_id: int, progress: Callable[[str], None]) -> dict[str, Any]:
        """Reproduce run ``run_id``'s deployment on a lab twin and verify each fix there (stored as its own run)."""
        from triage.lab.install import installed_releases
        from triage.twin.reproduce import reproduce

        plan, why = self.twin_plan(run_id)
        if plan is None:
            raise ServiceError(why)
        rec = Recorder(self.store)
        res = reproduce(plan, installed_releases(), observers(rec), progress=progress)
        return {"run_id": rec.run_id, **res.to_dict()}


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

"""Saving is an observer: ``Recorder`` writes one run's events (triage.events) to the Store as they come.

Every core — the checklist, the probes, watch, the log post-mortem, the fleet scan — yields
``RunEvent`` values and knows nothing of the database; the faces that want a run kept pass them
through ``Recorder.observe`` (as pip-audit's AuditState observes its auditor). This is the only writer
of a run. Each event is committed before the next one is produced, so a crash mid-run keeps what came
before; ``record`` also closes such a run with what interrupted it. The one start / add / finish
sequence of a run lives here. The target's API key is used only as a secret to redact, never written.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Optional

from triage import events as ev_
from triage.events import FinishedProbe, RunEvent
from triage.findings import Finding
from triage.target import Target

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import RunInfo, Store

OFFLINE_URL = "offline"  # the saved target of a run with no server URL (command line / log only)


class Recorder:
    """One run in the store: ``start``, then findings, probes, samples, captures, config; ``finish``."""

    def __init__(self, store: Store, secrets: Iterable[str] = (), *, retention_s: float | None = None) -> None:
        self.store = store
        self.secrets = tuple(s for s in secrets if s)
        self.run_id: Optional[int] = None
        self.target_id: Optional[int] = None
        self.retention_s = retention_s  # keep samples this long (a long watch): older ones go as new ones come
        self._last_retention: float | None = None

    def start(self, kind: str, target: Target | None = None, meta: dict[str, Any] | None = None,
              *, target_id: int | None = None) -> int:
        """A new run (of ``kind``: check | probe | logs | watch | …) against ``target``; returns its id."""
        if target is not None:
            self.secrets = tuple(dict.fromkeys((*self.secrets, *target.secrets)))
            target_id = self.store.find_or_add_target(
                target.url or OFFLINE_URL, target.model, target.truncation.request_value(), target.cmdline,
                target.label).id
        self.target_id = target_id
        self.run_id = self.store.start_run(target_id, kind, meta or {}).id
        return self.run_id

    @classmethod
    def attach(cls, store: Store, run_id: int, target_id: int | None = None,
               secrets: Iterable[str] = (), *, retention_s: float | None = None) -> Recorder:
        """A recorder for a run already started (a test, or a face that started it elsewhere)."""
        r = cls(store, secrets, retention_s=retention_s)
        r.run_id, r.target_id = run_id, target_id
        return r

    def _id(self) -> int:
        if self.run_id is None:
            raise RuntimeError("Recorder.start() was not called")
        return self.run_id

    def finding(self, f: Finding) -> None:
        self.store.add_finding(self._id(), f)

    def capture(self, kind: str, content: str, name: str = "") -> None:
        self.store.add_capture(self._id(), kind, content, name, self.secrets)

    def config(self, config: dict[str, Any]) -> None:
        self.store.set_config(self._id(), config)

    def meta(self, extra: dict[str, Any]) -> None:
        self.store.update_meta(self._id(), extra)

    def samples(self, samples: Iterable[Any]) -> int:
        rows = list(samples)
        n = self.store.add_samples(rows, run_id=self._id(), target_id=self.target_id)
        if self.retention_s and rows:
            now = max((s.ts for s in rows if s.ts is not None), default=None)
            if now is not None and (self._last_retention is None or now - self._last_retention > 60):
                self._last_retention = now
                self.prune_samples(now - self.retention_s)  # this run's target's series only
        return n

    def prune_samples(self, before_ts: float) -> None:
        """Retention: drop this target's samples older than ``before_ts`` (this run's when no target)."""
        if self.target_id is not None:
            self.store.delete_samples_before(before_ts, target_id=self.target_id)
        else:
            self.store.delete_samples_before(before_ts, run_id=self._id())

    def probe(self, o: FinishedProbe) -> None:
        """One probe outcome, with what it sent and got as captures."""
        run_id = self._id()
        self.store.add_probe_result(run_id, o.probe, o.outcome, duration_s=o.duration_s,
                                    time_to_verdict_s=o.time_to_verdict_s, http_status=o.http_status,
                                    detail={**o.detail(), "set": o.set})
        self.capture("probe-request", json.dumps(o.request, default=str), o.probe)
        if o.response is not None:
            self.capture("probe-response", json.dumps(o.response, default=str), o.probe)

    def finish(self, summary: str = "", status: str | None = None) -> RunInfo:
        """Close the run: its status becomes the worst stored finding's (or ``status``)."""
        return self.store.finish_run(self._id(), summary, status)

    @contextmanager
    def guard(self, what: str = "interrupted") -> Iterator[Recorder]:
        """Around a core that calls ``observe``: an exception out of it closes the run with what stopped it."""
        try:
            yield self
        except BaseException as e:
            self.interrupted(e, what)
            raise

    def interrupted(self, e: BaseException, what: str = "interrupted") -> None:
        """Close a run its core could not end (an exception, Ctrl-C, a stopped page) as ``interrupted``, never
        with a verdict (what it found before stays, but an unfinished run is no PASS); says what stopped it."""
        if self.run_id is not None:
            self.finish(f"{what}: {type(e).__name__}: {str(e)[:300]}".rstrip(": "), ev_.INTERRUPTED)

    def observe(self, ev: RunEvent) -> RunEvent:
        """Write one event of any core (progress-only kinds pass unwritten); returns it stamped with the run id."""
        if ev.kind == ev_.STARTED:
            self.start(ev.run_kind, ev.target, ev.meta, target_id=ev.target_id)
        elif ev.kind in (ev_.SOURCE, ev_.CAPTURE):
            for cap in ev.captures:
                self.capture(cap.kind, cap.content, cap.name)
        elif ev.kind == ev_.FINDING and ev.finding is not None:
            self.finding(ev.finding)
        elif ev.kind == ev_.CONFIG and ev.stored is not None:
            self.config(ev.stored)
        elif ev.kind == ev_.PROBE and ev.outcome is not None:
            self.probe(ev.outcome)
        elif ev.kind == ev_.SAMPLES and ev.samples:
            self.samples(ev.samples)
        elif ev.kind == ev_.META and ev.meta:
            self.meta(ev.meta)
        elif ev.kind == ev_.DONE:
            self.finish(ev.summary)
        return replace(ev, run_id=self.run_id) if ev.run_id != self.run_id else ev

    def __call__(self, ev: RunEvent) -> RunEvent:  # an Observer
        return self.observe(ev)


def record(events: Iterable[RunEvent], recorder: Recorder) -> Iterator[RunEvent]:
    """Pass the events through, each written before the consumer sees it.

    An exception from the engine closes the run as interrupted with what stopped it (what came before
    stays) and goes on to the caller; so does a consumer that closes the stream before its ``done`` (a
    dashboard page stopped mid-checklist), rather than leaving the run "running" for ever."""
    it = iter(events)
    done = False
    while True:
        try:
            ev = next(it)
        except StopIteration:
            return
        except BaseException as e:
            recorder.interrupted(e)
            raise
        done = done or ev.kind == ev_.DONE
        try:
            yield recorder.observe(ev)
        except GeneratorExit as e:
            if not done:
                recorder.interrupted(e, "stopped before the end")
            raise


def save(events: Iterable[RunEvent], recorder: Recorder) -> int | None:
    """Write a whole run's events (``record`` to the end); returns the run id."""
    for _ in record(events, recorder):
        pass
    return recorder.run_id

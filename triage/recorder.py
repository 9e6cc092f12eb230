"""Saving is an observer: ``Recorder`` writes one run's events to the Store as they come.

The engine (checklist), the probe runner and the log post-mortem yield values and know nothing of
the database; the faces that want a run kept hand those values to a Recorder (as pip-audit's
AuditState observes its auditor). Each event is committed before the next one is produced, so a
crash mid-run keeps what came before; ``record`` also closes such a run with what interrupted it.
The one start / add / finish sequence of a run lives here. The target's API key is used only as a
secret to redact, never written.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Optional

from triage.findings import Finding
from triage.target import Target

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import RunInfo, Store
    from triage.engine import CheckEvent
    from triage.probes.runner import ProbeOutcome

OFFLINE_URL = "offline"  # the saved target of a run with no server URL (command line / log only)


class Recorder:
    """One run in the store: ``start``, then findings, probes, samples, captures, config; ``finish``."""

    def __init__(self, store: Store, secrets: Iterable[str] = ()) -> None:
        self.store = store
        self.secrets = tuple(s for s in secrets if s)
        self.run_id: Optional[int] = None
        self.target_id: Optional[int] = None

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
               secrets: Iterable[str] = ()) -> Recorder:
        """A recorder for a run already started (a test, or a face that started it elsewhere)."""
        r = cls(store, secrets)
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
        return self.store.add_samples(samples, run_id=self._id(), target_id=self.target_id)

    def prune_samples(self, before_ts: float) -> None:
        """Retention: drop this target's samples older than ``before_ts`` (this run's when no target)."""
        if self.target_id is not None:
            self.store.delete_samples_before(before_ts, target_id=self.target_id)
        else:
            self.store.delete_samples_before(before_ts, run_id=self._id())

    def probe(self, o: ProbeOutcome) -> None:
        """One probe outcome, with what it sent and got as captures."""
        run_id = self._id()
        self.store.add_probe_result(run_id, o.probe, o.outcome, duration_s=o.duration_s,
                                    time_to_verdict_s=o.time_to_verdict_s, http_status=o.http_status,
                                    detail=o.detail())
        self.capture("probe-request", json.dumps(o.request, default=str), o.probe)
        if o.response is not None:
            self.capture("probe-response", json.dumps(o.response, default=str), o.probe)

    def finish(self, summary: str = "") -> RunInfo:
        """Close the run: its status becomes the worst stored finding's."""
        return self.store.finish_run(self._id(), summary)

    def observe(self, ev: CheckEvent) -> CheckEvent:
        """Write one checklist event; returns it stamped with the run id."""
        if ev.kind == "started":
            self.start("check", ev.target, ev.meta)
        elif ev.kind == "source":
            for cap in ev.captures:
                self.capture(cap.kind, cap.content, cap.name)
        elif ev.kind == "finding" and ev.finding is not None:
            self.finding(ev.finding)
        elif ev.kind == "config" and ev.stored is not None:
            self.config(ev.stored)
        elif ev.kind == "done":
            self.finish(ev.summary)
        return replace(ev, run_id=self.run_id)


def record(events: Iterable[CheckEvent], recorder: Recorder) -> Iterator[CheckEvent]:
    """Pass the events through, each written before the consumer sees it.

    An exception from the engine closes the run with what interrupted it (what came before stays)
    and goes on to the caller; a consumer that stops early leaves the run "running"."""
    it = iter(events)
    while True:
        try:
            ev = next(it)
        except StopIteration:
            return
        except Exception as e:
            if recorder.run_id is not None:
                recorder.finish(f"interrupted: {type(e).__name__}: {e}")
            raise
        yield recorder.observe(ev)

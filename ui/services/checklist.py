"""The Checklist page's service: the steps, the user's answers, the checklist run, the live stall state."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Optional

from triage import checklist
from triage import recorder as recorder_
from triage.findings import Finding, worst
from triage.recorder import Recorder
from triage.stall import DEFAULT_STALL_S
from triage.steps import STEPS, Step, step_index
from triage.target import Target, Truncation
from ui.adapters import plain_error, step_of
from ui.services.base import ServiceBase, guard
from ui.values import ChecklistEvent, LiveState


class ChecklistService(ServiceBase):
    """Checklist page."""

    def steps(self) -> tuple[Step, ...]:
        return STEPS

    def answer_form(self) -> tuple[dict[str, Any], tuple[Any, ...], tuple[int, ...]]:
        """For the Checklist page's answer inputs: the answerable keys (kind, accepted forms), common GPUs, sizes."""
        from triage import answers

        return dict(answers.KEYS), answers.COMMON_GPUS, answers.MEMORY_SIZES_GIB

    @guard("Your answer")
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
            from triage.live import META_KEY, live_of, with_live_state

            # the engine now, before the run ends: a stall seen is a finding of the run (issue 32)
            events = with_live_state(checklist.checklist_events(form), form)
            for ev in recorder_.record(events, Recorder(self.store)):
                run_id = ev.run_id or run_id
                live = live_of(ev.meta) if ev.kind == "meta" and META_KEY in (ev.meta or {}) else None
                if live is not None:
                    yield ChecklistEvent("live", None, None, run_id, live.message, n, n,
                                         live=LiveState(live.verdict, live.message, live.samples, live.watched_s))
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

    def live_state(self, form: Target, watch_s: float = DEFAULT_STALL_S + 1.5, every_s: float = 0.5,
                   stall_s: float = DEFAULT_STALL_S, client: Any = None,
                   clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> LiveState:
        """Is the engine stalled now? The live stall rule (a Watcher) over /metrics scraped every ``every_s`` for
        ``watch_s`` (just past the stall window): what the checklist adds about the moment it ran, since its
        own evidence is the set-up, which reads the same on an idle and on a hung server. ``client``/``clock``/
        ``sleep``: a recorded transport and a clock for tests."""
        from triage.live import watch_now

        got = watch_now(form, watch_s=watch_s, every_s=every_s, stall_s=stall_s, client=client, clock=clock,
                        sleep=sleep)
        return LiveState(got.verdict, got.message, got.samples, got.watched_s)

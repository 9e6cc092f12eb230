"""The banner every verdict page shows (Checklist, Probes, Logs, Vectors, Rerank): the run's one verdict
(``triage.headline.Verdict``: the headline cause, its fix as copyable blocks) placed in its step, what it covered."""
from __future__ import annotations

from typing import Any

from triage import fixblocks
from triage.differential import is_diagnosis
from triage.findings import Finding
from triage.headline import run_verdict
from triage.steps import STEPS, step_index
from triage.target import Target
from ui.adapters import step_of
from ui.services.base import ServiceBase
from ui.values import Headline


class HeadlineService(ServiceBase):
    """The pages' shared banner (pure: no store, no network)."""

    def headline(self, findings: list[Finding], config: dict[str, Any] | None = None, form: Target | None = None,
                 where: str = "") -> Headline:
        """The banner of a page: the run's one verdict (``triage.headline.run_verdict``: the worst root cause, the
        tally, the fix as copyable blocks for ``form``'s command line) and where its cause is (its checklist step, or
        ``where``); passing steps the fix changes are named."""
        v = run_verdict(findings, config, cmdline=form.cmdline if form else None, model=form.model if form else None,
                        url=form.url if form else None)
        if not findings:
            return Headline(v, 0, where)
        if is_diagnosis({"check": v.check}):  # the differential's answer is the banner (issue 29)
            return Headline(v, 0, where or "Diagnosis")
        step = step_of(v.check)
        idx = step_index(step) if not where else 0
        title = next((s.title for s in STEPS if s.id == step), step) if idx else (where or v.check)
        implicated: dict[str, str] = {}
        if v.mode is not None and v.needs_fix:
            keys = fixblocks.changed_keys(v.mode, config)
            for f in findings:
                s = step_of(f.check)
                if f.evidence and next(iter(f.evidence)) in keys and s != step:
                    implicated[s] = v.mode.title
        return Headline(v, idx, title, implicated)

    def scope(self, config: dict[str, Any] | None, probe_sets_run: list[str] | tuple[str, ...] = ()) -> list[Any]:
        """What a verdict covered, part by part (triage.scope): from the stored config's sources and the probe
        sets run for the same target."""
        from triage.scope import scope

        return scope((config or {}).get("sources"), probe_sets_run)

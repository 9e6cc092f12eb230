"""The banner every verdict page shows (Checklist, Probes, Logs, Vectors, Rerank): the headline cause, its fix as
copyable blocks, what the verdict covered."""
from __future__ import annotations

from typing import Any

from triage import fixblocks
from triage.export.groups import groups
from triage.findings import Finding
from triage.steps import STEPS, step_index
from triage.target import Target
from ui.adapters import step_of
from ui.services.base import ServiceBase
from ui.values import Headline


class HeadlineService(ServiceBase):
    """The pages' shared banner (pure: no store, no network)."""

    def headline(self, findings: list[Finding], config: dict[str, Any] | None = None, form: Target | None = None,
                 where: str = "") -> Headline:
        """The banner of a page: the worst root cause among ``findings`` and where it is (its checklist step,
        or ``where``), the tally, the fix as copyable blocks; passing steps the fix changes are named."""
        from triage.findings import severity
        from triage.headline import run_headline

        head = run_headline(findings)  # the exports' verdict reads the same
        top = head.status or "unknown"
        grouped, _rest = groups(findings, config)
        g = next((x for x in grouped if x.status == top), None)
        first = findings[g.indices[0]] if g is not None else (head.ordered[0] if head.ordered else None)
        tally = head.tally
        if first is None:
            return Headline("unknown", "No findings", "", 0, where, tally, "")
        diag = head.diagnosis
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

"""A run's headline and its ONE verdict, computed here for every face: the worst status, the tally per status, the
finding it leads with (the differential's answer first, else the most severe finding that needs attention), the lead
sentence, the root cause, its fix in words and as copyable blocks (``Verdict``, ``run_verdict``, ``document_verdict``).

The CLI's ``diagnose``, the dashboard's banners and run view, and the Markdown and HTML reports all lay out this
``Verdict``; none of them combines the lead sentence with a fix itself, so a page and an export of the same run name
the same status, lead, fix and blocks. Findings are ``Finding`` values or their dicts (a run document).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional, Union

from triage import catalogue
from triage.catalogue import FailureMode, mode_of
from triage.differential import is_diagnosis
from triage.events import INTERRUPTED
from triage.findings import ORDER, Finding, Status, severity, worst

FindingLike = Union[Finding, Mapping[str, Any]]


def status_of(f: FindingLike) -> Status:
    return Status(f.status if isinstance(f, Finding) else f["status"])


@dataclass(frozen=True)
class RunHeadline:
    """``status``: the worst finding's ('' when there are none: the caller says what no findings means);
    ``counts``: findings per status, most severe first, none at zero; ``ordered``: every finding, most severe
    first (stable); ``needs_attention``: those at warn or worse; ``diagnosis``: the differential's finding at warn
    or worse (the most severe), else None."""

    status: str
    counts: dict[str, int]
    ordered: tuple[FindingLike, ...]
    needs_attention: tuple[FindingLike, ...]
    diagnosis: Optional[FindingLike]

    @property
    def worst_needing_attention(self) -> Optional[FindingLike]:
        """The most severe finding at warn or worse (the first of them in the run's order), else None."""
        return self.needs_attention[0] if self.needs_attention else None

    @property
    def tally(self) -> str:
        """'1 fail · 2 pass': the counts, most severe first."""
        return " · ".join(f"{n} {s}" for s, n in self.counts.items())


def run_headline(findings: Iterable[FindingLike]) -> RunHeadline:
    """The headline of a run's findings (module docstring)."""
    fs = list(findings)
    ordered = tuple(sorted(fs, key=lambda f: -severity(status_of(f))))
    counts = {s.value: 0 for s in reversed(ORDER)}
    for f in fs:
        counts[status_of(f).value] += 1
    needs = tuple(f for f in ordered if severity(status_of(f)) >= severity(Status.WARN))
    return RunHeadline(
        status=worst(status_of(f) for f in fs).value if fs else "",
        counts={s: n for s, n in counts.items() if n},
        ordered=ordered,
        needs_attention=needs,
        diagnosis=next((f for f in needs if is_diagnosis(f)), None),
    )


def _get(f: FindingLike, key: str) -> Any:
    if isinstance(f, Finding):
        value = getattr(f, key)
        return value.value if isinstance(value, Status) else value
    return f.get(key)


def _config_values(config: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    values = (config or {}).get("values", config or {})
    return {k: (v.get("value") if isinstance(v, dict) and "value" in v else v) for k, v in values.items()}


def record_fix(mode: FailureMode, config: Optional[Mapping[str, Any]]) -> str:
    """The record's fix for a run's config (``{"values": …}`` or bare), its text when the config lacks a value."""
    try:
        return mode.fix(_config_values(config))
    except (KeyError, TypeError, ValueError):  # a fix that needs a value this run did not record
        return mode.fix_text


def mode_fix(shown_by: Iterable[FindingLike], mode: FailureMode, config: Optional[Mapping[str, Any]]) -> str:
    """A root cause's fix, said once: the worst finding's own (computed from the run's config where it was found),
    else the record's for the run's config. ``shown_by``: the findings that show it, worst first."""
    return next((str(_get(f, "fix")) for f in shown_by if _get(f, "fix")), "") or record_fix(mode, config)


@dataclass(frozen=True)
class Verdict:
    """A run's ONE verdict, computed here and only here; every face lays it out (the CLI's ``diagnose``, the
    dashboard's banners, the Diagnose and History pages, the Markdown and HTML reports).

    ``status``: the worst finding's (a stored run's own when it has none; ``interrupted``/``incomplete`` for a run
    that did not end); ``headline``: the lead sentence (the differential's answer, else the run's summary, else the
    worst finding); ``counts``: findings per status, most severe first; ``cause``: the root cause's title (the
    diagnosis, else the lead record's, else the lead finding's; '' with no findings); ``check``: the lead finding's
    check id; ``fix``: the named cause's fix in words ('' for a pass, or a "one of" diagnosis); ``experiments``: what
    tells a "one of" diagnosis's candidates apart (its fix is no fix); ``blocks``: the fix as copyable blocks
    (``triage.fixblocks.FixBlock``: the lead record's, never a neighbour's); ``mode``: the record the verdict
    names, if one."""

    status: str
    headline: str
    counts: dict[str, int]
    cause: str = ""
    check: str = ""
    fix: str = ""
    experiments: str = ""
    blocks: tuple[Any, ...] = ()
    mode: Optional[FailureMode] = None

    def to_dict(self) -> dict[str, Any]:
        """The verdict as plain JSON values (the run document's ``verdict``: what every face shows)."""
        return {"status": self.status, "headline": self.headline, "counts": dict(self.counts), "cause": self.cause,
                "check": self.check, "fix": self.fix, "experiments": self.experiments,
                "mode": self.mode.id if self.mode is not None else "",
                "blocks": [b.to_dict() for b in self.blocks]}

    @property
    def tally(self) -> str:
        """'1 fail · 2 pass': the counts, most severe first."""
        return " · ".join(f"{n} {s}" for s, n in self.counts.items())

    @property
    def needs_fix(self) -> bool:
        """Whether the verdict is warn or worse (a fix is shown)."""
        return self.status in (s.value for s in ORDER) and severity(self.status) >= severity(Status.WARN)


def _lead(head: RunHeadline) -> tuple[Optional[FailureMode], tuple[FindingLike, ...]]:
    """(the record of the worst root cause at the run's worst status, the findings that show it, worst first);
    (None, ()) when the worst finding at warn or worse reports no record (a lesser record is no root cause)."""
    top = next(iter(head.needs_attention), None)
    if top is None:
        return None, ()
    for f in head.needs_attention:
        mode = mode_of(f)
        if mode is not None:
            if status_of(f) != status_of(top):
                return None, ()
            return mode, tuple(g for g in head.needs_attention if mode_of(g) is mode)
    return None, ()


def _sentence(head: RunHeadline, n: int, run: Optional[Mapping[str, Any]]) -> str:
    """The lead sentence: the differential's answer, else the run's summary, else the worst finding."""
    diag = head.diagnosis
    if diag is not None:  # the differential's answer (issue 29); a "one of" one names its experiments
        experiments = not _get(diag, "failure_mode") and _get(diag, "fix")
        return str(_get(diag, "title")) + (f". To tell them apart: {_get(diag, 'fix')}" if experiments else "")
    if run and run.get("summary"):
        return str(run["summary"])
    bad = head.needs_attention
    if bad:
        return f"{len(bad)} finding(s) need attention; worst: {_get(bad[0], 'title')}"
    return "no finding needs attention" if n else "no findings recorded"


def run_verdict(findings: Iterable[FindingLike], config: Optional[Mapping[str, Any]] = None, *,
                run: Optional[Mapping[str, Any]] = None, cmdline: Optional[str] = None,
                model: Optional[str] = None, url: Optional[str] = None) -> Verdict:
    """The verdict of a run's findings (``Finding`` values or a document's dicts). ``config``: the run's effective
    config (``{"values": …}``, as ``fixblocks.run_config`` reads a stored run); ``run``: a stored run's row (its
    status, summary, finished_at) when there is one; ``cmdline``/``model``/``url``: where the blocks point."""
    from triage import fixblocks

    fs = list(findings)
    head = run_headline(fs)
    run = run or {}
    status = head.status or str(run.get("status") or "") or "unknown"
    headline = _sentence(head, len(fs), run)
    if run.get("status") == INTERRUPTED:  # stopped before its end: no verdict, least of all PASS
        status = INTERRUPTED
        headline = (f"the run was interrupted ({run.get('summary') or 'no reason recorded'}); "
                    f"{len(fs)} finding(s) recorded before it stopped")
    elif run and not run.get("finished_at") and run.get("status") in (None, "running", "incomplete"):
        # killed (or still going): what it found so far is no verdict, least of all PASS
        status = "incomplete"
        headline = f"the run did not finish ({len(fs)} finding(s) recorded before it stopped)"
    diag = head.diagnosis
    mode, shown_by = _lead(head)
    lead = shown_by[0] if shown_by else (head.ordered[0] if head.ordered else None)
    if diag is not None:
        named = str(_get(diag, "failure_mode") or "")
        mode = catalogue.MODES.get(named) if named else None
        cause, check = str(_get(diag, "title")), str(_get(diag, "check"))
        fix, experiments = (str(_get(diag, "fix") or ""), "") if named else ("", str(_get(diag, "fix") or ""))
    else:
        cause = mode.title if mode is not None else (str(_get(lead, "title")) if lead is not None else "")
        check = str(_get(lead, "check")) if lead is not None else ""
        fix = (mode_fix(shown_by, mode, config) if mode is not None else "") or (
            str(_get(lead, "fix") or "") if lead is not None and head.status not in ("", Status.PASS.value) else "")
        experiments = ""
    try:  # the lead record's blocks; none for a "one of" diagnosis (its experiments are the fix)
        blocks = tuple(fixblocks.blocks_for_findings(fs, config, cmdline=cmdline, model=model, url=url, mode=mode))
    except Exception:  # noqa: BLE001 - a verdict never fails on its blocks: the fix in words still says it
        blocks = ()
    return Verdict(status, headline, head.counts, cause, check, fix, experiments, blocks, mode)


def document_verdict(doc: Mapping[str, Any]) -> Verdict:
    """The verdict of a run document (``triage.export.json_.to_document``): its findings, its run's status and
    summary, its effective config (else a probe run's facts in meta), the blocks for its target's command line."""
    from triage.fixblocks import run_config
    from triage.recorder import OFFLINE_URL

    run = doc.get("run") or {}
    t = doc.get("target") or {}
    return run_verdict(doc.get("findings") or [], run_config(run), run=run, cmdline=t.get("cmdline"),
                       model=t.get("model"), url=t.get("url") if t.get("url") != OFFLINE_URL else None)


def record_verdict(rec: Any) -> Verdict:
    """The verdict of a stored run (a ``RunRecord``), as its reports give it (``document_verdict`` of its document):
    the CLI's ``diagnose`` and the History, Diagnose and Report pages' run view read it."""
    from triage.fixblocks import run_config
    from triage.recorder import OFFLINE_URL

    r, t = rec.run, rec.target
    run = {"status": r.status, "summary": r.summary, "finished_at": r.finished_at}
    return run_verdict(rec.findings, run_config({"config": rec.config, "meta": rec.meta}), run=run,
                       cmdline=t.cmdline if t else None, model=t.model if t else None,
                       url=t.url if t and t.url != OFFLINE_URL else None)

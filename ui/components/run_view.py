"""One stored run rendered read-only (History's "open", Report's preview), and two side by side."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ui.components import finding_card, fix_view, md, verdict

KINDS = {"check": "checklist", "probe": "probes", "logs": "log analysis", "watch": "engine watch",
         "fleet": "fleet scan", "import": "imported run", "diagnose": "diagnose"}


def title(run: Any) -> str:
    """'#4 · checklist · FAIL · 2026-12-01 10:02:11 · http://…': a run as people pick it, not a bare number."""
    return (f"#{run.id} · {KINDS.get(run.kind, run.kind)} · {verdict.plain(run.status)} · {run.started_at}"
            + (f" · {run.target}" if getattr(run, "target", None) else ""))


def show(run: Any, compact: bool = False) -> None:
    """Render a services.RunDetail; a stored run that cannot be drawn (an imported document the engine never
    wrote: any JSON value in any field) is a message naming the run, never a traceback (issue 33)."""
    try:
        _show(run, compact)
    except Exception as e:  # noqa: BLE001 - a page shows a message; Streamlit's own stop/rerun are BaseException
        st.error(f"Run #{md.text(getattr(run, 'id', '?'))} could not be shown in full: "
                 f"{md.text(type(e).__name__)}: {md.text(str(e)[:300])}. Export it on Report (JSON) to read it.")


def _show(run: Any, compact: bool) -> None:
    """Header, the verdict's lead sentence and its fix as copyable blocks, findings, probes, config."""
    verdict.banner(run.status, f"Run #{run.id} · {md.text(KINDS.get(run.kind, run.kind))} · {md.text(run.target)} · "
                   f"{md.code(run.model or '?')} · {md.text(run.started_at)}"
                   + (f" · {md.text(run.summary)}" if run.summary else ""))
    v = getattr(run, "verdict", None)  # the run's one verdict (triage.headline): its lead and fix, as the reports say
    if v is not None and v.needs_fix:
        st.markdown(f"**Verdict:** {md.prose(v.headline)}")
        fix_view.show(v.blocks, key=f"fix-blocks-{run.id}")
    _verification(run)
    if run.findings:
        finding_card.show_grouped(run.findings, run.groups, run.ungrouped)
    else:
        st.caption("No findings in this run.")
    if run.probes:
        st.dataframe([{"probe": p.probe, "outcome": p.outcome, "http": p.http_status, "duration_s": p.duration_s}
                      for p in run.probes], hide_index=True, width="stretch")
    if run.config and not compact:
        with st.expander("Effective config"):
            st.dataframe(finding_card.evidence_rows(run.config), hide_index=True, width="stretch")


def _verification(run: Any) -> None:
    """A ``verify`` run's before/after pair (or, on the run it verified, which run did): the report's own words."""
    from triage.export.view import verification

    line, pairs = verification({"run": {"meta": getattr(run, "meta", None) or {}}})
    if not line:
        return
    st.markdown(f"**Before and after** — {md.text(line)}")
    if pairs:
        st.dataframe([{"probe or check": i, "before": b, "after": a, "result": r} for i, b, a, r in pairs],
                     hide_index=True, width="stretch")


def _cell(v: Any) -> str:
    return "—" if v is None else str(v)


def show_diff(diff: Any, only_changed: bool = True) -> None:
    """Two runs side by side: what changed in config values and in verdicts."""
    a, b = diff.left, diff.right
    c1, c2 = st.columns(2)
    c1.markdown(f"**Run #{a.id}** · {verdict.label(a.status)} · {md.text(a.kind)} · {md.text(a.started_at)}")
    c2.markdown(f"**Run #{b.id}** · {verdict.label(b.status)} · {md.text(b.kind)} · {md.text(b.started_at)}")
    verdicts = [r for r in diff.verdicts if r.changed or not only_changed]
    st.subheader("Verdicts")
    if verdicts:
        st.dataframe([{"check": r.key,
                       f"#{a.id}": verdict.plain(r.left) if r.left else "—",
                       f"#{b.id}": verdict.plain(r.right) if r.right else "—",
                       "changed": "●" if r.changed else ""} for r in verdicts], hide_index=True, width="stretch")
    else:
        st.caption("No verdict changed.")
    cfg = [r for r in diff.config if r.changed or not only_changed]
    st.subheader("Config values")
    if cfg:
        st.dataframe([{"key": r.key, f"#{a.id}": _cell(r.left), f"#{b.id}": _cell(r.right),
                       "changed": "●" if r.changed else ""} for r in cfg], hide_index=True, width="stretch")
    else:
        st.caption("No config value changed.")

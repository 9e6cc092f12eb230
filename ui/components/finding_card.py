"""One finding: verdict, evidence with where each value came from, the fix, and the open question."""
from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from triage.findings import Finding
from ui.components import md
from ui.components.verdict import label, status_str

COPY_KEY = "yaml_to_copy"  # evidence {title: YAML text} a finding gives to paste (checks/liveness.py)


def evidence_rows(evidence: dict[str, Any], prefix: str = "", depth: int = 0) -> list[dict[str, str]]:
    """Flatten evidence into (what, value, source) rows; provenance dicts keep their source.

    A dict of provenance dicts (e.g. a check's ``preconditions``) becomes one row per key, so every
    value shows where it came from instead of one unreadable cell.
    """
    rows: list[dict[str, str]] = []
    for k, v in evidence.items():
        if k in ("question", "questions", COPY_KEY):  # asked / shown as code below the evidence, not rows of it
            continue
        what = f"{prefix}{k}"
        if isinstance(v, dict) and "value" in v and ("source" in v or "detail" in v):
            src = str(v.get("source") or "")
            if v.get("detail"):
                src = f"{src}: {v['detail']}" if src else str(v["detail"])
            rows.append({"what": what, "value": _short(v.get("value")), "source": src})
        elif isinstance(v, dict) and v and depth < 2 and any(isinstance(x, dict) for x in v.values()):
            rows.extend(evidence_rows(v, f"{what}.", depth + 1))
        else:
            rows.append({"what": what, "value": _short(v), "source": ""})
    return rows


def _short(v: Any, n: int = 300) -> str:
    """A cell: text as is, numbers as numbers, dicts and lists as compact JSON (never a Python repr)."""
    if isinstance(v, (dict, list, tuple)):
        import json

        s = json.dumps(v, default=str, ensure_ascii=False)
    else:
        s = v if isinstance(v, str) else "—" if v is None else str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def show_grouped(findings: list[Finding], groups: tuple[Any, ...] = (), ungrouped: tuple[int, ...] | None = None,
                 *, expand_first: bool = False, collapse_passing: bool = False) -> None:
    """Findings by root cause (one headline and the fix once per failure mode), then the others."""
    for g in groups:
        group(g, findings)
    rest = [findings[i] for i in (ungrouped if ungrouped is not None else range(len(findings)))]
    passing = [f for f in rest if status_str(f.status) == "pass"] if collapse_passing else []
    rest = [f for f in rest if f not in passing]
    if groups and rest:
        st.markdown("#### Other findings")
    first_bad = next((f for f in rest if status_str(f.status) != "pass"), None) if expand_first and not groups else None
    for f in rest:
        show(f, expanded=f is first_bad)
    if passing:
        with st.expander(f"{label('pass')} {len(passing)} passing findings"):
            st.dataframe([{"check": f.check, "title": f.title} for f in passing], hide_index=True, width="stretch")


def group(g: Any, findings: list[Finding]) -> None:
    """One root cause (a triage.export.groups.FindingGroup): what it is, how many findings show it,
    the fix once; its findings beneath, each without repeating that fix."""
    s = status_str(g.status)
    st.markdown(f"#### {label(s)} · {md.prose(g.mode.title)}")
    st.caption(f"shown by {g.count} finding(s)"
               + (f" · affected: {md.text(g.mode.affected_text)}" if g.mode.affected else "")
               + (f" · {md.refs(g.mode.refs)}" if g.mode.refs else ""))
    st.markdown(md.prose(g.mode.mechanism))
    if g.fix:
        st.markdown(f"**Fix:** {md.prose(g.fix)}")
    for i in g.indices:
        show(findings[i], fix_shown=g.fix)


def show(f: Finding, question: Optional[str] = None, expanded: bool = False, fix_shown: str = "") -> None:
    """Render one finding; ``question`` is asked when the evidence was missing (status unknown);
    ``fix_shown`` is its root cause's fix, already shown above (not repeated)."""
    s = status_str(f.status)
    with st.expander(f"{label(s)} · {md.title(f.title)}  {md.code(f.check)}", expanded=expanded):
        if f.explanation:
            st.markdown(md.prose(f.explanation))
        rows = evidence_rows(f.evidence)
        if rows:
            st.caption("Evidence (and where it came from)")
            st.dataframe(rows, hide_index=True, width="stretch")
        else:
            st.caption("No evidence was available for this check.")
        if f.fix and f.fix != fix_shown:
            st.markdown(f"**Fix:** {md.prose(f.fix)}")
        for title, code in (f.evidence.get(COPY_KEY) or {}).items():
            st.caption(md.text(title))
            st.code(code, language="yaml")
        if f.refs:
            st.caption(md.refs(f.refs))
        qs = f.evidence.get("questions")
        # an imported document's question may hold any JSON value (a number as "text" was a TypeError, issue 33)
        asked = (" ".join(str(q.get("text") or "") if isinstance(q, dict) else str(q) for q in qs)
                 if isinstance(qs, list)
                 else None) or f.evidence.get("question") or question
        if s in ("unknown", "error") and asked:
            st.info(f"**To decide this:** {md.prose(asked)}")


def show_results(findings: list[Finding]) -> None:
    """A probe set's findings: each one not passing as a card (the first open), the passing ones in one table,
    and the client settings to copy that any of them carries."""
    for i, f in enumerate(x for x in findings if status_str(x.status) != "pass"):
        show(f, expanded=i == 0)
    passing = [f for f in findings if status_str(f.status) == "pass"]
    if passing:
        with st.expander(f"{label('pass')} {len(passing)} passing"):
            st.dataframe([{"check": f.check, "title": f.title} for f in passing], hide_index=True, width="stretch")
    snippets = {f.evidence.get("settings_to_copy") for f in findings if f.evidence.get("settings_to_copy")}
    if snippets:
        st.subheader("Client settings to copy")
        st.code("\n".join(sorted(snippets)), language="python")

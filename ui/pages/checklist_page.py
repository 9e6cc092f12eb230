"""Checklist: the guided walk (version → backend → GPU memory → flags → chunked prefill → truncation)."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import finding_card, session, verdict

svc = services.get()
st.title("Checklist")
st.caption("A guided walk in the design card's order. Each step shows its verdict, the evidence and where "
           "it came from, the fix, and what to answer when the evidence is missing.")

target = session.require_target()
if target is None:
    st.stop()
st.markdown(f"Target **{target.url}** · model `{target.model or '?'}` · truncate_prompt_tokens "
            f"`{'not stated' if target.truncate_prompt_tokens is None else target.truncate_prompt_tokens}`")

if not svc.features().get("checklist"):
    st.info("The checklist engine is not yet available in this build.")
    st.stop()

steps = svc.steps()
summary_slot = st.empty()  # the summary verdict sits at the top, filled when the walk ends
run_clicked = st.button("Run checklist", type="primary", key="checklist.run")

if run_clicked:
    findings: list = []
    error = None
    run_id = None
    progress = st.progress(0.0, text="Starting…")
    with st.status("Walking the checklist…", expanded=True) as status_box:
        for ev in svc.iter_checklist(target):
            run_id = ev.run_id or run_id
            if ev.kind == "progress":
                progress.progress(0.05, text=ev.message)
                st.write(ev.message)
            elif ev.kind == "step":
                title = next((s.title for s in steps if s.id == ev.step), ev.step)
                progress.progress(min(ev.index / max(ev.total, 1), 1.0), text=f"Step {ev.index}/{ev.total}: {title}")
                st.write(f"→ {title}")
            elif ev.kind == "finding" and ev.finding is not None:
                findings.append(ev.finding)
                st.markdown(f"{verdict.label(ev.finding.status)} {ev.finding.title}")
            elif ev.kind == "error":
                error = ev.message
        progress.progress(1.0, text="Done" if error is None else "Stopped")
        status_box.update(label="Checklist finished" if error is None else "Checklist stopped",
                          state="complete" if error is None else "error", expanded=False)
    st.session_state["checklist.result"] = {"findings": findings, "error": error, "run_id": run_id,
                                            "target": target.url}
    if run_id is not None:
        session.set_open_run(run_id)

result = st.session_state.get("checklist.result")
if result and result["target"] != target.url:  # the last walk was against another server
    result = None
if not result:
    summary_slot.info("Press **Run checklist** to walk the steps against this target.")
    st.stop()

if result["error"]:
    st.error(result["error"])
findings = result["findings"]
if findings:
    top = verdict.worst_status(f.status for f in findings)
    worst = next(f for f in findings if verdict.status_str(f.status) == top)
    counts = {s: sum(1 for f in findings if verdict.status_str(f.status) == s) for s in verdict.LABELS}
    tally = " · ".join(f"{n} {verdict.LABELS[s].lower()}" for s, n in counts.items() if n)
    headline = f"All {len(findings)} findings pass" if top == "pass" else worst.title
    with summary_slot.container():
        verdict.banner(top, f"{headline}  ({tally})")
        if result["run_id"] is not None:
            st.caption(f"Saved as run #{result['run_id']} — open it in History or export it on Report.")
elif not result["error"]:
    summary_slot.warning("The checklist produced no findings.")

by_step: dict[str, list] = {s.id: [] for s in steps}
for f in findings:
    by_step.setdefault(services.step_of(f.check), []).append(f)
for i, step in enumerate(steps, 1):
    fs = by_step.get(step.id, [])
    step_status = verdict.worst_status(f.status for f in fs)
    st.subheader(f"{i}. {step.title} — {verdict.label(step_status)}")
    if not fs:
        st.info(f"No evidence for this step. **To decide it:** {step.question}")
    for f in fs:
        finding_card.show(f, question=step.question, expanded=f is worst and top != "pass")
for extra in [k for k in by_step if k not in {s.id for s in steps}]:
    for f in by_step[extra]:
        finding_card.show(f)

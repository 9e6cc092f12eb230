"""Checklist: the set-up of an embedding server, step by step (version → backend → GPU memory → flags →
chunked prefill → truncation).

The banner names the worst root cause and the step it sits in; its fix follows at once as copyable blocks
(the user's own command line with the fix applied, the request change, the client setting), the prose
beneath. A step's badge is the worst of its findings; a passing step whose value the fix changes says so.
A step whose evidence is missing asks its questions (ui/components/question_inputs.py, the GPU picker);
answering re-runs the checklist with the answers kept on the session's target (``Target.answers``).
"""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import (scope_view, finding_card, fix_view, md, page, question_inputs, session, twin_button,
                           verdict)

svc = page.header(
    "Checklist",
    "Each step of the server's set-up: its verdict, the evidence and where it came from, and the fix. "
    "Where the evidence is missing, the step asks.",
)

target = page.target_or_stop(named=True)

steps = svc.steps()
summary_slot = st.empty()  # the summary verdict sits at the top, filled when the walk ends
run_clicked = st.button("Run checklist", type="primary", key="checklist.run")
answered = dict(target.answers or {})
if answered:
    st.caption("Your answers (stated by user): " + session.answers_line(target))
    if st.button("Forget my answers", key="checklist.forget"):
        target = target.with_(answers=None)
        session.set_target(target)
        st.session_state["checklist.rerun"] = True
        st.rerun()
rerun = bool(st.session_state.pop("checklist.rerun", False))

if run_clicked or rerun:
    findings: list = []
    error = None
    run_id = None
    config = None
    live = None
    progress = st.progress(0.0, text="Starting…")
    with st.status("Walking the checklist…", expanded=True) as status_box:
        for ev in svc.iter_checklist(target):
            run_id = ev.run_id or run_id
            if ev.kind == "progress":
                progress.progress(0.05, text=md.text(ev.message))
                st.write(md.text(ev.message))
            elif ev.kind == "step":
                title = next((s.title for s in steps if s.id == ev.step), ev.step)
                progress.progress(min(ev.index / max(ev.total, 1), 1.0),
                                  text=f"Step {ev.index}/{ev.total}: {md.text(title)}")
                st.write(f"→ {md.text(title)}")
            elif ev.kind == "finding" and ev.finding is not None:
                findings.append(ev.finding)
                st.markdown(f"{verdict.label(ev.finding.status)} {md.title(ev.finding.title)}")
            elif ev.kind == "live" and ev.live is not None:  # the engine while the run went (a stall: a finding)
                live = ev.live
                st.write(f"Live: {md.text(live.verdict)}")
            elif ev.kind == "done":
                config = ev.config
            elif ev.kind == "error":
                error = ev.message
        progress.progress(1.0, text="Done" if error is None else "Stopped")
        status_box.update(label="Checklist finished" if error is None else "Checklist stopped",
                          state="complete" if error is None else "error", expanded=False)
    st.session_state["checklist.result"] = {"findings": findings, "error": error, "run_id": run_id,
                                            "target": target.url, "answers": answered, "config": config,
                                            "live": live}
    if run_id is not None:
        session.set_open_run(run_id)

result = st.session_state.get("checklist.result")
if result and result["target"] != target.url:  # the last walk was against another server
    result = None
if not result:
    summary_slot.info("Press **Run checklist** to walk the steps against this target.")
    st.stop()

if result["error"]:
    st.error(md.text(result["error"]))
findings = result["findings"]
head = svc.headline(findings, result.get("config"), target) if findings else None
live = result.get("live")


def live_line() -> None:
    """The engine at the moment the checklist ran (issue 32: a live hang read the same as an idle server)."""
    if live is None:
        return
    if live.verdict == "stalled":
        verdict.banner("fail", f"**Stalled now** (while the checklist ran): {md.prose(live.message)}")
        try:
            st.page_link("ui/pages/stats_page.py", label="Watch it on Engine stats", icon=":material/monitoring:")
        except Exception:  # a page run alone (tests) has no navigation
            pass
    elif live.verdict == "cannot judge":
        st.caption(f"Live state: cannot judge — {md.text(live.message)}")
    else:
        st.caption(f"Live state: not stalled now ({md.text(live.message)})")


if head is not None:
    with summary_slot.container():
        live_line()
        if head.status == "pass":
            verdict.banner("pass", f"All {len(findings)} findings pass  ({head.tally})")
            # a healthy verdict is as wide as what was looked at: say what was not (issue 32)
            scope_view.show(svc.scope(result.get("config"), session.sets_run(target)), "checklist.scope")
        else:
            verdict.banner(head.status, f"{md.prose(head.cause)} — in {md.text(head.where)}  ({head.tally})")
            fix_view.show(head.blocks)
            if head.fix:
                with st.expander("Why, and the fix in words", expanded=not head.blocks):
                    st.markdown(md.prose(head.fix))
            twin_button.show(result["run_id"])
        if result["run_id"] is not None:
            st.caption(f"Saved as run #{result['run_id']} — open it in History or export it on Report.")
            page.run_link(result["run_id"])
elif not result["error"]:
    summary_slot.warning("The checklist produced no findings.")

by_step: dict[str, list] = {s.id: [] for s in steps}
for f in findings:
    by_step.setdefault(services.step_of(f.check), []).append(f)
answer_keys, gpus, sizes = svc.answer_form()
drawn: set[str] = set()  # a key asked by two steps gets one input, under the first


def ask(step_id: str, fs: list) -> None:
    """The step's open questions with inputs, and the button that answers them and re-runs.

    The button is never disabled by what is typed (a field commits on blur, and a disabled button would
    swallow that first click); it says so when nothing was answered."""
    qs = [q for f in fs if verdict.status_str(f.status) == "unknown" for q in f.evidence.get("questions") or []
          if isinstance(q, dict) and any(k in answer_keys and k not in drawn for k in q.get("keys") or [])]
    if not qs:
        return
    with st.container(border=True):
        st.caption("Answer what the evidence could not tell; the checklist runs again with your answers.")
        got = question_inputs.show(qs, answer_keys, gpus, sizes, f"checklist.answer.{step_id}", answered, drawn)
        if st.button("Answer and re-run", key=f"checklist.answer.{step_id}.go"):
            if not got:
                st.warning("Nothing answered yet: fill in at least one of the fields above.")
                return
            try:
                new = svc.with_answers(target, {**answered, **got})
            except services.ServiceError as e:
                st.error(md.text(e))
                return
            session.set_target(new)
            st.session_state["checklist.rerun"] = True
            st.rerun()


worst_check = head.check if head is not None else None
for i, step in enumerate(steps, 1):
    fs = by_step.get(step.id, [])
    step_status = verdict.worst_status(f.status for f in fs)
    cause = head.implicated.get(step.id) if head is not None else None
    st.subheader(f"{i}. {step.title} — {verdict.label(step_status)}")
    if cause and head is not None:
        st.markdown(f"{verdict.label(head.status)} This step's value is part of the root cause in "
                    f"{md.text(head.where)}: {md.prose(cause)}. The fix above changes it.")
    if not fs:
        st.info(f"No evidence for this step. **To decide it:** {md.prose(step.question)}")
    for f in fs:
        finding_card.show(f, question=step.question, expanded=f.check == worst_check and head is not None
                          and head.status != "pass")
    ask(step.id, fs)
for extra in [k for k in by_step if k not in {s.id for s in steps}]:
    for f in by_step[extra]:
        finding_card.show(f)

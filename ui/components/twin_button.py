"""Under a verdict: "Prove it" — reproduce the deployment on a lab twin and verify each fix there (issue 30).

Owns ``st.session_state["twin.<run id>"]`` (the last result for that run). The engine (``triage.twin``) plans the
twin from the stored run, starts and stops the lab servers, and stores its own run; this only shows progress and the
outcome: reproduced or not, and each fix verified or not.
"""
from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from ui import services
from ui.components import md
from ui.errors import ServiceError


def _key(run_id: int) -> str:
    return f"twin.{run_id}"


def show(run_id: Optional[int]) -> None:
    if run_id is None:
        return
    svc = services.get()
    plan, why = svc.twin_plan(run_id)
    with st.container(border=True, key=f"twin-box-{run_id}"):
        st.markdown("**Prove it on a lab twin**")
        if plan is None:
            st.caption(md.prose(why))
            return
        st.caption(md.text(f"vLLM {plan.server.version} · {plan.server.model} · {' '.join(plan.server.extra_args)}"
                           f" — {plan.release.why}"))
        if st.button("Reproduce on a lab twin and verify the fixes", key=f"twin-run-{run_id}"):
            with st.status("Reproducing on a lab twin… (a first start takes a minute)", expanded=True) as box:
                try:
                    st.session_state[_key(run_id)] = svc.reproduce_run(run_id, progress=lambda m: box.write(md.text(m)))
                    box.update(label="Twin finished", state="complete", expanded=False)
                except ServiceError as e:
                    box.update(label="Twin stopped", state="error")
                    st.session_state[_key(run_id)] = {"error": str(e)}
        _result(st.session_state.get(_key(run_id)))


def _result(doc: Optional[dict[str, Any]]) -> None:
    if not doc:
        return
    if doc.get("error"):
        st.error(md.text(doc["error"]))
        return
    if doc.get("reproduced"):
        st.markdown(":red[**Reproduced on the twin**]" + (f" · saved as run #{doc['run_id']}" if doc.get("run_id")
                                                          else ""))
    else:
        st.markdown("**Not reproduced on the twin**: the cause is not what the record says, or not in this "
                    "configuration" + (f" · saved as run #{doc['run_id']}" if doc.get("run_id") else ""))
    for f in doc.get("fixes") or []:
        mark = ":green[**verified**]" if f.get("verified") else ":red[**not verified**]"
        st.markdown(f"- {mark} on the twin: {md.prose(f.get('fix', ''))}")

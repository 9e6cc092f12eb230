"""Diagnose: one entry from a URL (plus, optionally, the command line and a log) to one verdict.

The checklist, the safe probes (conformance, vectors: no hang, no load) and the log post-mortem run as one
stored run (triage.diagnose), shown as History shows a run, with its link.
"""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import md, page, run_view, session

svc = page.header(
    "Diagnose",
    "One click from a server URL to a verdict: the checklist, the safe probes (conformance and vectors: they "
    "never hang the server and put no load on it) and, when you give one, the log's post-mortem — one run.",
)

current = session.target()
if "diagnose.url" not in st.session_state and current is not None:
    st.session_state["diagnose.url"] = current.url or ""
    st.session_state["diagnose.cmdline"] = current.cmdline or ""
with st.form("diagnose.form", border=False):  # Enter in the URL field diagnoses
    url_text = st.text_input("Server URL", key="diagnose.url", placeholder="http://127.0.0.1:8000")
    tpt_text = st.text_input("What does your client send as truncate_prompt_tokens? (optional)", key="diagnose.tpt",
                             help="A number, -1, `none`, or blank if you do not know (the verdict then says so).")
    with st.expander("Optional: the `vllm serve` command line and the server's log"):
        cmd_text = st.text_area("vllm serve command line", key="diagnose.cmdline", height=80)
        log_text = st.text_area("The server's log", key="diagnose.log", height=160)
    go = st.form_submit_button("Diagnose", type="primary", key="diagnose.go")

if go:
    try:
        url, note = svc.check_url(url_text)
        tpt = services.Truncation.parse(tpt_text)
    except services.ServiceError as e:
        st.error(md.text(e))
        st.stop()
    except ValueError:
        st.error("truncate_prompt_tokens must be a whole number, -1, `none`, or blank.")
        st.stop()
    same = current is not None and current.url == url  # the session's target: its model and key (never stored)
    form = services.Target(url=url, model=current.model if same else None, truncation=tpt,
                           cmdline=cmd_text or None, log_text=log_text or None,
                           api_key=current.api_key if same else None)
    if note:
        st.info(md.text(note))
    with st.status(f"Diagnosing {md.text(url)}…", expanded=True) as box:
        try:
            detail = svc.diagnose(form, on_event=lambda line: st.write(md.text(line)))
        except services.ServiceError as e:
            box.update(label="Diagnose stopped", state="error")
            st.error(md.text(e))
            st.stop()
        box.update(label="Diagnosed", state="complete", expanded=False)
    st.session_state["diagnose.run"] = detail.id if detail is not None else None
    if detail is not None:
        session.set_open_run(detail.id)

run_id = st.session_state.get("diagnose.run")
if run_id is None:
    st.info("Give the server URL and press **Diagnose**.")
    st.stop()
shown = page.stored_run_or_stop(svc, int(run_id))
page.run_link(shown.id)
run_view.show(shown)

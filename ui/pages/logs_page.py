"""Logs: paste or upload a vLLM log, then see the extracted series, start-up config and findings."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import finding_card, fix_view, log_input, md, page, session, twin_button, verdict

svc = page.header(
    "Logs",
    "A vLLM server log (start-up and the periodic `Engine 000: Avg prompt throughput …` lines): "
    "the effective config it reveals, the stats series, and a post-mortem.",
)

text = log_input.show("logs.input")
# never disabled by the text area (it commits on blur: a disabled button would swallow that first click)
clicked = st.button("Analyze log", type="primary", key="logs.analyze")
if clicked and not text:
    st.error("Nothing to analyze yet: paste the log or upload a file first.")
elif clicked:
    target = session.target()
    try:
        with st.spinner("Parsing…"):
            st.session_state["logs.result"] = svc.analyze_log(
                text or "", None, secrets=(target.api_key,) if target and target.api_key else (),
                session_target=target)
        res = st.session_state["logs.result"]
        if res.run_id is not None:
            session.set_open_run(res.run_id)
    except services.ServiceError as e:
        st.session_state["logs.result"] = None
        st.error(md.text(e))

res = st.session_state.get("logs.result")
if res is None:
    st.info("Paste a log or upload a file, then press **Analyze log**.")
    st.stop()

counted = f"{len(res.samples)} stats lines" + (f" · saved as run #{res.run_id}" if res.run_id else "")
if res.findings:
    # the fix snippets address the server the log names (its port), else the session's target
    head = svc.headline(res.findings, {"values": res.config}, res.server or session.target(), where="the log")
    # the log's own line leads (issue 32: "8192 > 4096 max_position_embeddings" hid under the record's title)
    line = next((f for f in res.findings if verdict.status_str(f.status) == head.status and f.check != head.check
                 and f.title != head.cause), None) if head.status != "pass" else None
    cause = "nothing wrong found" if head.status == "pass" else (
        (f"**{md.prose(line.title)}** — " if line is not None else "") + f"{md.prose(head.cause)} — in the log")
    verdict.banner(head.status, f"{cause}  ({head.tally}) · {counted}")
    if head.status != "pass":
        fix_view.show(head.blocks)
        twin_button.show(res.run_id)
else:
    verdict.banner("pass", f"No findings · {counted}")
if res.filed_under:
    st.caption(md.text(res.filed_under))
st.subheader("Findings")
if not res.findings:
    st.caption("No findings.")
finding_card.show_grouped(res.findings, res.groups, res.ungrouped, expand_first=True)
st.subheader("Start-up config")
if res.config:
    st.dataframe(finding_card.evidence_rows(res.config), hide_index=True, width="stretch")
else:
    st.caption("No start-up config lines found.")
st.subheader("Stats series")
if res.samples and not res.times_zoned:
    st.caption("Times are as the log wrote them: its lines state no zone (the server's clock), so none is "
               "assumed.")
if res.samples:
    if res.figure is not None:
        st.plotly_chart(res.figure, key="logs.chart", width="stretch")
    elif any(r["time"] is not None for r in res.samples):
        st.line_chart([r for r in res.samples if r["time"] is not None], x="time",
                      y=["running", "waiting", "prompt_throughput"])
    st.dataframe(res.samples, hide_index=True, width="stretch")
else:
    st.caption("No periodic stats lines found.")
if res.summary:
    with st.expander("Summary"):
        st.json(res.summary)

"""Report: export the open run as Markdown, HTML, JSON or a support bundle."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import md, page, report_file, run_view, session

svc = page.header(
    "Report",
    "Exports of the open run (the last checklist, probe run or log analysis, or the run opened in History). "
    "API keys are never in them.",
)

bad_link = session.open_run_from_url()  # /report?run=7 exports run 7
if bad_link:
    st.warning(md.text(bad_link))  # the address is outside text
run_id = session.open_run()
if run_id is None:
    try:
        run_id = svc.latest_run_id()
    except services.ServiceError as e:
        st.error(md.text(e))
if run_id is None:
    st.info("No run yet: run the **Checklist** (or open one in **History**) first.")
    st.stop()

detail = page.stored_run_or_stop(svc, run_id)

session.link_open_run(run_id)
st.subheader(f"Download run #{run_id}")
st.caption("Each file is rendered when you press its button (the HTML report embeds its charts).")
target = session.target()
key = target.api_key if target else None  # redacted from exports even where it leaked into evidence
cols = st.columns(len(svc.export_formats()))
for col, fmt in zip(cols, svc.export_formats(), strict=True):
    name, mime = svc.export_name(run_id, fmt.id)
    col.download_button(f"Download {fmt.label}", data=report_file.maker(svc, run_id, fmt.id, key), file_name=name,
                        mime=mime, key=f"report.dl.{fmt.id}", on_click="ignore")
    col.caption(name)

st.subheader("Preview")
run_view.show(detail, compact=False)

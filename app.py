"""vLLM Embedding Triage dashboard: page config and navigation only (``streamlit run app.py``)."""
from __future__ import annotations

import streamlit as st

from ui.components import session

st.set_page_config(page_title="vLLM Embedding Triage", page_icon=":material/troubleshoot:", layout="wide")

# short URL paths, so a link names a page as people do: /history?run=7 opens run 7 (issue 32)
PAGES = [
    st.Page("ui/pages/target_page.py", title="Target", icon=":material/my_location:", default=True),
    st.Page("ui/pages/diagnose_page.py", url_path="diagnose", title="Diagnose", icon=":material/stethoscope:"),
    st.Page("ui/pages/checklist_page.py", url_path="checklist", title="Checklist", icon=":material/checklist:"),
    st.Page("ui/pages/probes_page.py", url_path="probes", title="Probes", icon=":material/science:"),
    st.Page("ui/pages/vectors_page.py", url_path="vectors", title="Vectors & clients", icon=":material/scatter_plot:"),
    st.Page("ui/pages/rerank_page.py", url_path="rerankers", title="Rerankers", icon=":material/sort:"),  # issue 25
    st.Page("ui/pages/stats_page.py", url_path="stats", title="Engine stats", icon=":material/monitoring:"),
    st.Page("ui/pages/logs_page.py", url_path="logs", title="Logs", icon=":material/article:"),
    st.Page("ui/pages/fleet_page.py", url_path="fleet", title="Fleet", icon=":material/lan:"),
    st.Page("ui/pages/history_page.py", url_path="history", title="History", icon=":material/history:"),
    st.Page("ui/pages/report_page.py", url_path="report", title="Report", icon=":material/description:"),
]

session.keep_form_values()
nav = st.navigation(PAGES)
with st.sidebar:
    state_slot = st.empty()


def sidebar_state() -> None:
    """The target, its answers and the open run, as the page left them (drawn after the page ran)."""
    with state_slot.container():
        t = session.target()
        st.caption("Target: " + (session.describe(t) if t is not None else "none yet"))
        if t is not None and t.answers:
            st.caption("Your answers: " + session.answers_line(t))
        run_id = session.open_run()
        if run_id is not None:
            st.caption(f"Open run: #{run_id}")


try:
    nav.run()
finally:  # also after st.stop(): the sidebar shows what the page just set (a new run, a new target)
    sidebar_state()

"""History: runs per target (paged in the database), filter by status, open one, compare two."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import md, pager, run_view, session, verdict

PAGE_SIZE = 25
STATUSES = ["any", "fail", "error", "warn", "unknown", "pass", "interrupted", "running"]

svc = services.get()
st.title("History")
bad_link = session.open_run_from_url()  # /history?run=7 opens run 7
if bad_link:
    st.warning(md.text(bad_link))  # the address is outside text

try:
    targets = svc.saved_targets()
except services.ServiceError as e:
    targets = []
    st.error(md.text(e))
c1, c2 = st.columns([3, 1])
titles = ["all targets"] + [t.title for t in targets]
picked = c1.selectbox("Target", titles, key="history.target", on_change=pager.reset, args=("history.pager",))
status = c2.selectbox("Status", STATUSES, key="history.status", on_change=pager.reset, args=("history.pager",))
target_id = next((t.id for t in targets if t.title == picked), None)

try:
    wanted = None if status == "any" else status
    limit, offset = pager.show("history.pager", svc.count_runs(target_id=target_id, status=wanted), PAGE_SIZE)
    page = svc.list_runs(target_id=target_id, status=wanted, limit=limit, offset=offset)
except services.ServiceError as e:
    st.error(md.text(e))
    st.stop()

if page.total == 0 and session.open_run() is None:
    st.info("No runs yet. Run the **Checklist** or **Probes**, or analyze a log, and they appear here.")
    st.stop()

st.dataframe([{"run": r.id, "status": verdict.plain(r.status), "kind": run_view.KINDS.get(r.kind, r.kind),
               "target": r.target,
               "model": r.model, "started": r.started_at, "summary": r.summary} for r in page.rows],
             hide_index=True, width="stretch")

st.subheader("Open a run")
ids = [r.id for r in page.rows]
opened = session.open_run()
default = ids.index(opened) if opened in ids else 0
names = {r.id: run_view.title(r) for r in page.rows}
choice = st.selectbox("Run", ids, index=default, key="history.open", format_func=lambda i: names.get(i, f"#{i}"))
if st.button("Open run", key="history.open_btn"):
    session.set_open_run(choice)
    opened = choice
if opened is not None:
    try:
        detail = svc.get_run(opened)
    except services.ServiceError as e:
        detail = None
        st.error(md.text(e))
    if detail is None:
        st.warning(f"Run #{opened} is not in this database.")
    else:
        session.link_open_run(opened)
        st.caption(f"Link to this run: `/history?run={opened}`")
        run_view.show(detail)
if page.total == 0:
    st.stop()

st.subheader("Compare two runs")
c1, c2, c3 = st.columns([2, 2, 1])
left = c1.selectbox("Left run", ids, index=1 if len(ids) > 1 else 0, key="history.left",
                    format_func=lambda i: names.get(i, f"#{i}"))
right = c2.selectbox("Right run", ids, index=0, key="history.right", format_func=lambda i: names.get(i, f"#{i}"))
only_changed = c3.toggle("Only what changed", value=True, key="history.only_changed")
if st.button("Compare", key="history.compare"):
    st.session_state["history.comparing"] = True  # keep showing it across reruns (toggle, paging)
if st.session_state.get("history.comparing"):
    try:
        run_view.show_diff(svc.compare_runs(int(left), int(right)), only_changed=only_changed)
    except services.ServiceError as e:
        st.error(md.text(e))

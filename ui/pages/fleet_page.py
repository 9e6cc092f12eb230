"""Fleet: every replica a Prometheus scrapes, on one time axis, with the stall rule's episodes marked."""
from __future__ import annotations

import time

import streamlit as st

from triage.fleet.replicas import DEFAULT_STALL_S
from triage.fleet.scan import CHECK_STALL
from triage.recurrence import ended_words
from ui import services
from ui.components import md, session

RESULT_KEY = "fleet.result"
SINCE = {"15 min": 900, "1 h": 3600, "6 h": 6 * 3600, "24 h": 86400, "7 d": 7 * 86400}

st.title("Fleet")
st.caption("Triage many replicas through the Prometheus that already scrapes them: the same stall rule and "
           "catalogue verdicts as the single-server pages, per replica.")

c1, c2 = st.columns([3, 2])
prom_url = c1.text_input("Prometheus URL", key="fleet.prometheus", placeholder="http://prometheus:9090")
match = c2.text_input("Label matchers (optional)", key="fleet.match", placeholder='{job="vllm"}')
c3, c4, c5 = st.columns(3)
since = c3.selectbox("Look back", list(SINCE), index=1, key="fleet.since")
step = c4.number_input("Step (s)", min_value=0.0, max_value=3600.0, value=0.0, step=1.0, key="fleet.step",
                       help="0: follow the replicas' scrape interval (every scrape is read)")
stall_s = c5.number_input("Stall threshold (s)", min_value=1.0, max_value=600.0, value=float(DEFAULT_STALL_S),
                          step=1.0, key="fleet.stall_s")

GET_ONE = ("Give the URL of the Prometheus that scrapes your vLLM servers (its root, e.g. http://prometheus:9090), "
           "or start one on this machine: `python -m triage lab prometheus up --scrape http://127.0.0.1:8000`.")

# never disabled by the URL field (it commits on blur: a disabled button would swallow that first click)
if st.button("Scan the fleet", type="primary", key="fleet.scan"):
    svc = services.get()
    end = time.time()
    try:
        with st.spinner("Querying Prometheus…"):
            view = svc.scan_fleet(prom_url, end - SINCE[since], end, step=float(step) or None, match=match,
                                  stall_s=float(stall_s))
    except services.ServiceError as e:
        st.error(f"{md.text(e)} {GET_ONE}")
        st.stop()
    if view.problem:
        # a failed set-up is a message, not a stored ERROR run
        st.session_state[RESULT_KEY] = None
        st.error(f"{md.text(view.prometheus)} did not answer as a Prometheus: {md.text(view.problem)}. {GET_ONE} "
                 "Nothing was saved.")
        st.stop()
    if view.store_error:
        st.warning(f"Scanned, but the run could not be stored: {md.text(view.store_error)}")
    else:
        session.set_open_run(view.run_id)
    st.session_state[RESULT_KEY] = (view.doc, view.findings)

result = st.session_state.get(RESULT_KEY)
if not result:
    st.info(f"No scan yet. {GET_ONE}")
    st.stop()

doc, found_dicts = result
for f in found_dicts:
    if f["status"] == "error":
        st.error(md.title(f["title"]))
    elif f["status"] == "unknown":
        st.warning(md.title(f["title"]))
stalled = [f for f in found_dicts if f["check"] == CHECK_STALL]
reps = doc.get("replicas") or []
st.metric("Replicas with a stall", f"{len({f['evidence']['replica'] for f in stalled})} of {len(reps)}")
if reps:
    st.plotly_chart(services.get().figure(doc), width="stretch", key="fleet.chart")

for i, f in enumerate(stalled):
    ev = f["evidence"]
    with st.expander(md.title(f["title"]), expanded=i < 3):
        st.markdown(f"**Version:** {md.text(ev.get('version_note') or 'unknown')}")
        eps = ev.get("episodes", [])
        st.dataframe([{"#": n, "kind": e["kind"], "start (UTC)": e["start_utc"],
                       "end (UTC)": "ongoing" if e["ongoing"] else e["end_utc"], "duration (s)": e["duration_s"],
                       "how it ended": "still stalled at the end of the range" if e["ongoing"] else
                       ended_words(e.get("ended"))} for n, e in enumerate(eps, 1)],
                     hide_index=True)
        st.caption("Evidence per episode (the gauges and frozen counters Prometheus recorded):")
        st.json({f"#{n}": e.get("evidence") for n, e in enumerate(eps, 1)}, expanded=False)
        st.markdown(f"**Fix:** {md.prose(f['fix'])}")
        st.caption(md.refs(f["refs"]))
        instance = (ev.get("labels") or {}).get("instance")
        if instance and st.button("Open this replica's triage", key=f"fleet.open.{i}"):
            url = services.get().replica_target(instance).url or ""
            session.open_on_target_page(url)  # the Target page opens with this URL in its form
            try:
                st.switch_page("ui/pages/target_page.py")
            except Exception:  # a page run alone (tests) has no navigation
                st.success(f"Target URL set to {md.text(url)}: open **Target**.")
if not stalled and not any(f["status"] in ("error", "unknown") for f in found_dicts):
    st.success("No replica stalled in this range.")

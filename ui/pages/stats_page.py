"""Engine stats: live charts from /metrics with the stall alert marked on the time axis."""
from __future__ import annotations

from datetime import datetime

import streamlit as st

from triage.stall import DEFAULT_STALL_S
from ui import services
from ui.components import page, verdict

svc = page.header(
    "Engine stats",
    "running / waiting, prompt tokens/s, KV cache usage and latency quantiles, scraped from /metrics. "
    "A livelock (running ≥ 1, waiting 0, no progress) is marked on the time axis.",
)

target = page.target_or_stop()

c1, c2, c3 = st.columns(3)
live = c1.toggle("Live", value=True, key="stats.live")
every = c2.number_input("Refresh every (s)", min_value=0.5, max_value=60.0, value=1.0, step=0.5, key="stats.every")
stall_s = c3.number_input("Stall threshold (s)", min_value=1.0, max_value=120.0,
                          value=float(DEFAULT_STALL_S), step=0.5, key="stats.stall_s",
                          help="No engine progress (KV blocks, prefix-cache queries, finished prompts) this long "
                               "with a request running = a stall; it grows by itself where the measured prefill "
                               "rate says one step may last longer.")
if st.button("Reset the series", key="stats.reset"):
    st.session_state.pop("stats.state", None)


@st.fragment(run_every=float(every) if live else None)
def live_chart() -> None:
    """Only this fragment reruns on each tick, so the rest of the page stays usable."""
    state = st.session_state.setdefault("stats.state", {})
    try:
        view = svc.stats_tick(target, state, stall_s=float(stall_s))
    except services.ServiceError as e:
        st.error(str(e))
        return
    if view.error:
        st.error(view.error)
    if view.alert:
        since = view.alert.get("since")
        when = datetime.fromtimestamp(since).strftime("%H:%M:%S") if isinstance(since, (int, float)) else "?"
        verdict.banner("fail", view.alert.get("message") or f"Stall: **{view.alert.get('kind')}** since {when}")
    else:
        st.caption(f"No stall now · {view.n_alerts} alerts since watching · {view.n_samples} samples · "
                   f"last scrape {datetime.now().strftime('%H:%M:%S')}")
    if view.latest:
        cols = st.columns(len(view.latest))
        for col, (k, v) in zip(cols, view.latest.items(), strict=True):
            col.metric(k, "—" if v is None else (f"{v:.1f}" if isinstance(v, float) else v))
    if view.figure is not None:
        st.plotly_chart(view.figure, key="stats.chart", width="stretch")
    else:
        st.info("Charts are not yet available in this build; the latest values are above.")


live_chart()

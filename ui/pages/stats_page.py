"""Engine stats: live charts from /metrics with the stall alert marked on the time axis, and the alert history.

Every stall episode seen while the page watches stays listed (start, end, how it ended, the samples around
it as evidence), after it ends and after the live series scrolls past it.
"""
from __future__ import annotations

from datetime import datetime

import streamlit as st

from triage.display import utc_clock
from triage.stall import DEFAULT_STALL_S
from ui import services
from ui.components import md, page, verdict

svc = page.header(
    "Engine stats",
    "Requests running and waiting, prompt tokens/s, KV cache usage and latency, scraped from /metrics. "
    "A livelock (running ≥ 1, waiting 0, no progress) is marked on the time axis and kept in the alert history.",
)

target = page.target_or_stop(named=True)

c1, c2, c3 = st.columns(3)
live = c1.toggle("Live", value=True, key="stats.live")
every = c2.number_input("Refresh every (s)", min_value=0.5, max_value=60.0, value=1.0, step=0.5, key="stats.every")
stall_s = c3.number_input("Stall threshold (s)", min_value=1.0, max_value=120.0,
                          value=float(DEFAULT_STALL_S), step=0.5, key="stats.stall_s",
                          help="No engine progress (KV blocks, prefix-cache queries, finished prompts) this long "
                               "with a request running = a stall; it grows by itself where the measured prefill "
                               "rate says one step may last longer.")
if st.button("Reset the series", key="stats.reset"):
    kept = st.session_state.get("stats.state", {}).get(services.HISTORY_KEY)
    st.session_state["stats.state"] = {services.HISTORY_KEY: kept} if kept else {}  # the history stays


def _hms(ts: object) -> str:
    """A sample's time in UTC, as the charts' time axis shows it (never the dashboard host's zone)."""
    return utc_clock(ts) if isinstance(ts, (int, float)) else "—"


def history(episodes: tuple[dict, ...]) -> None:
    """Every stall episode seen: when, how long, how it ended; its samples as evidence."""
    st.subheader(f"Alert history ({len(episodes)})")
    if not episodes:
        st.caption("No stall seen since this page started watching.")
        return
    st.dataframe([{"#": i, "kind": e["kind"], "engine": e["engine"], "start (UTC)": _hms(e["start"]),
                   "end (UTC)": _hms(e["end"]) if e["end"] else "ongoing",
                   "lasted (s)": round((e["end"] or datetime.now().timestamp()) - e["start"], 1),
                   "how it ended": e["ended"]} for i, e in enumerate(episodes, 1)],
                 hide_index=True, width="stretch", key="stats.history")
    for i, e in enumerate(episodes, 1):
        with st.expander(f"Evidence of #{i}: {md.text(e['kind'])} from {_hms(e['start'])} "
                         f"({len(e['evidence'])} samples, {services.EVIDENCE_BEFORE_S:.0f} s before to "
                         f"{services.EVIDENCE_AFTER_S:.0f} s after)"):
            st.dataframe(e["evidence"], hide_index=True, width="stretch")


@st.fragment(run_every=float(every) if live else None)
def live_chart() -> None:
    """Only this fragment reruns on each tick, so the rest of the page stays usable."""
    state = st.session_state.setdefault("stats.state", {})
    try:
        view = svc.stats_tick(target, state, stall_s=float(stall_s), interval_s=float(every))
    except services.ServiceError as e:
        st.error(md.text(e))
        return
    if view.error:
        st.error(md.text(view.error))
    last = f"last scrape {_hms(view.last_ts)} UTC" if view.last_ts is not None else "no scrape answered yet"
    if view.alert:
        verdict.banner("fail", md.prose(view.alert.get("message")) if view.alert.get("message") else
                       f"Stall: **{md.text(view.alert.get('kind'))}** since {_hms(view.alert.get('since'))} UTC")
    if view.stale_s is not None and view.last_ts is not None:  # no sample lately: neither "stalled" nor "fine"
        gap = services.gap_text(view.last_ts, view.last_ts + view.stale_s)
        st.warning(f"**Stale**: {md.text(gap)} ({md.text(last)}). Whatever the engine did since is unseen.",
                   icon=":material/timer_off:")
    elif not view.alert:
        ended = f"{view.n_alerts} stall episode(s) since watching: see the alert history below" if view.n_alerts \
            else "no stall since watching"
        st.caption(f"No stall now · {ended} · {view.n_samples} samples · {md.text(last)}")
    past = [g for g in view.gaps if view.stale_s is None or g[0] != view.last_ts]
    if past:
        st.caption("Scrape gaps (drawn grey, the lines broken): " + "; ".join(
            f"{_hms(g0)}–{_hms(g1)} UTC: {md.text(services.gap_text(g0, g1))}" for g0, g1 in past))
    if view.latest:
        cols = st.columns(len(view.latest))
        for col, (k, v) in zip(cols, view.latest.items(), strict=True):
            col.metric(k, "—" if v is None else (f"{v:.1f}" if isinstance(v, float) else v))
    if view.figure is not None:
        st.plotly_chart(view.figure, key="stats.chart", width="stretch")
    history(view.episodes)


live_chart()

"""Probes: conformance and throughput by default; the seed matrix only after an explicit confirmation."""
from __future__ import annotations

import streamlit as st

from triage.stall import DEFAULT_STALL_S
from ui import services
from ui.components import finding_card, fix_view, hang_confirm, md, page, twin_button, verdict

svc = page.header(
    "Probes",
    "Real requests against the server, watched through /metrics with the shared stall rule.",
)

target = page.target_or_stop()

sets = svc.probe_sets()
chosen: list[str] = []
for ps in sets:
    if st.checkbox(ps.title, value=ps.default, key=f"probes.set.{ps.id}", help=ps.description):
        chosen.append(ps.id)
c1, c2 = st.columns(2)
stall_s = c1.number_input("Stall threshold (s)", min_value=1.0, max_value=120.0,
                          value=float(DEFAULT_STALL_S), step=0.5, key="probes.stall_s",
                          help="No engine progress (KV blocks, prefix-cache queries, finished prompts) this long "
                               "with a request running = a stall; it grows by itself where the measured prefill "
                               "rate says one step may last longer.")
deadline_s = c2.number_input("Abort a hung probe after (s)", min_value=5.0, max_value=600.0, value=30.0, step=5.0,
                             key="probes.deadline_s")
can_hang = [ps for ps in sets if ps.can_hang and ps.id in chosen]
confirmed = hang_confirm.show("probes.hang", deadline_s) if can_hang else False
blocked = not chosen or (bool(can_hang) and not confirmed)

if st.button("Run probes", type="primary", key="probes.run", disabled=blocked):
    rows: dict[str, dict] = {}
    table = st.empty()

    def on_event(ev: services.ProbeProgress) -> None:
        row = rows.setdefault(ev.probe, {"probe": ev.probe, "state": "", "seconds": "", "message": ""})
        row["state"] = ev.state
        if ev.elapsed_s is not None:
            row["seconds"] = f"{ev.elapsed_s:.1f}"
        if ev.message:
            row["message"] = ev.message
        table.dataframe(list(rows.values()), hide_index=True, width="stretch")

    with st.spinner(f"Running {', '.join(chosen)}… (a stalled probe is aborted after {stall_s:.0f} s without "
                    f"progress, any probe after {deadline_s:.0f} s)"):
        page.run_for_target("probes.result", target, lambda: svc.run_probes(
            target, chosen, allow_hang=bool(can_hang) and confirmed, stall_s=float(stall_s),
            deadline_s=float(deadline_s), on_event=on_event))
    table.empty()  # the live progress gives way to the results below

res = page.kept_for_target("probes.result", target)  # results of another server are not shown
if res is None:
    st.info("Pick the probe sets and press **Run probes**.")
    st.stop()

statuses = [p.status for p in res.probes] + \
           [verdict.status_str(f.status) for f in res.findings]
bad_probes = sum(1 for p in res.probes if p.status in ("fail", "error"))
bad_findings = sum(1 for f in res.findings if verdict.status_str(f.status) in ("fail", "error"))
top = verdict.worst_status(statuses)
head = svc.headline(res.findings, None, target, where="probes") if res.findings else None
cause = f"{md.prose(head.cause)} · " if head is not None and top != "pass" and head.status == top else ""
verdict.banner(top, f"{cause}{len(res.probes)} probes, {bad_probes} failed · {bad_findings} failing findings"
               + (f" · run #{res.run_id}" if res.run_id else ""))
page.run_link(res.run_id)
if head is not None and head.status not in ("pass", "unknown"):
    fix_view.show(head.blocks)
    twin_button.show(res.run_id)
asked = svc.experiments_asked(res.findings)
if asked:  # a "one of" diagnosis: the probe sets that tell its candidates apart, run on request
    st.info("The evidence does not single out one cause. The experiments "
            f"({', '.join(md.text(a) for a in asked)}) tell them apart"
            + ("; a hang-capable one runs only when the hang is confirmed above." if not confirmed else "."))
    if st.button("Run the experiments", key="probes.experiments"):
        with st.spinner(f"Running {', '.join(chosen)} and the experiments…"):
            page.run_for_target("probes.result", target, lambda: svc.run_probes(
                target, chosen, allow_hang=bool(can_hang) and confirmed, stall_s=float(stall_s),
                deadline_s=float(deadline_s), run_experiments=True))
        st.rerun()
tput = svc.throughput_figure(res.findings)
if tput is not None:
    st.plotly_chart(tput, key="probes.throughput", width="stretch")
st.dataframe([{"probe": p.probe, "verdict": verdict.plain(p.status), "outcome": p.outcome,
               "http": p.http_status, "duration_s": p.duration_s, "time_to_verdict_s": p.time_to_verdict_s}
              for p in res.probes], hide_index=True, width="stretch")
finding_card.show_grouped(res.findings, res.groups, res.ungrouped, expand_first=True, collapse_passing=True)
if res.figure is not None:
    st.subheader("Engine gauges while each probe ran")
    st.plotly_chart(res.figure, key="probes.timeline", width="stretch")
st.subheader("Evidence per probe")
for p in res.probes:
    with st.expander(f"{md.text(p.probe)} — {md.text(p.outcome)}"):
        d = p.detail
        if d.get("request") is not None:
            st.caption("Request")
            st.json(d["request"], expanded=False)
        if d.get("response") is not None:
            st.caption("Response")
            st.json(d["response"], expanded=False)
        if d.get("samples"):
            st.caption("/metrics while it ran (t = seconds since send; KV cache in %)")
            st.dataframe([{**{k: v for k, v in r.items() if k != "kv_cache_usage_perc"},
                           "KV cache %": None if r.get("kv_cache_usage_perc") is None
                           else round(100 * r["kv_cache_usage_perc"], 3)} for r in d["samples"]],
                         hide_index=True, width="stretch")
        if d.get("recovery"):
            st.caption("Recovery after the abort")
            st.json(d["recovery"])

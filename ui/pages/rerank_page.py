"""Rerankers: /score and /rerank conformance, the served task, the ranking check drawn, and the rerank clients.

Runs the engine's `rerank` set (and, behind the same confirmation as the seed matrix, `rerank-seed`)
through the Probes page's service, so results are stored as a run. No rules here: wording and fixes
come from the findings (triage/catalogue/rerank.py).
"""
from __future__ import annotations

import streamlit as st

from triage.catalogue import POOLING_LIVELOCK
from ui.components import finding_card, fix_view, hang_confirm, md, page, rerank_chart, verdict

svc = page.header(
    "Rerankers",
    "The other half of the RAG stack on the same pooling runner: do /score and /rerank answer, does the model "
    "rank, and do the rerank clients get the same answer?",
)

target = page.target_or_stop()
want_hang = st.checkbox(f"Also run the {POOLING_LIVELOCK.refs[0]} rerank livelock probe (may hang an affected server "
                        "until it is aborted)",
                        value=False, key="rerank.seed")
hang = hang_confirm.show("rerank.hang", 30.0) if want_hang else False  # the probe set's default deadline
if st.button("Run", type="primary", key="rerank.run", disabled=want_hang and not hang):
    sets = ["rerank", "rerank-seed"] if hang else ["rerank"]
    page.run_probe_sets("rerank.result", target, svc, sets, allow_hang=hang)

res = page.kept_for_target("rerank.result", target)
if res is None:
    st.info("Press **Run** to check the reranker.")
else:
    findings = [f for f in res.findings if f.check.startswith(("rerank", "score-", "probe-"))]
    top = verdict.worst_status([verdict.status_str(f.status) for f in findings])
    # the banner names the cause and how many findings say what (issue 32: it said only "FAIL — 12 findings")
    head = svc.headline(findings, None, target, where="the reranker") if findings else None
    bad = sum(1 for f in findings if verdict.status_str(f.status) in ("fail", "error"))
    cause = f"{md.prose(head.cause)} · " if head is not None and top not in ("pass", "unknown") else ""
    verdict.banner(top, f"{cause}{len(findings)} findings, {int(bad)} failing"
                   + (f" ({head.tally})" if head is not None else "") + (f" · run #{res.run_id}" if res.run_id else ""))
    page.run_link(res.run_id)
    if head is not None and top not in ("pass", "unknown"):
        fix_view.show(head.blocks)
    ranking = next((f for f in findings if f.check == "rerank-ranking"), None)
    if ranking is not None:
        st.subheader("Ranking check")
        st.caption(f"{verdict.label(verdict.status_str(ranking.status))} {md.title(ranking.title)}")
        rerank_chart.show(ranking.evidence, status=verdict.status_str(ranking.status))
    finding_card.show_results(findings)

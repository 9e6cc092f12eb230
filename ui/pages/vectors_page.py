"""Vectors & clients: are the vectors the model's, and do the client libraries get the same ones?

Runs the engine's `vectors` and `clients` probe sets (through the same service as the Probes page,
so results are stored as a run), plots the cosine each check judged, and shows the client settings
to copy. Open WebUI's settings are checked by the engine (triage.probes.openwebui, through the same service) as
Open WebUI would call. No rules here: wording and fixes come from the findings.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from ui.components import finding_card, fix_view, md, page, twin_button, verdict

svc = page.header(
    "Vectors & clients",
    "200 OK is not enough: the vectors must be the model's, and the client libraries must get the same ones.",
)

target = page.target_or_stop()

c1, c2 = st.columns(2)
run_vectors = c1.checkbox("Vector sanity (safe)", value=True, key="vectors.set.vectors")
run_clients = c2.checkbox("Client libraries (OpenAI, LangChain, LiteLLM, Open WebUI)", value=True,
                          key="vectors.set.clients")
model_path = st.text_input("Model directory readable from here (optional: /v1/models root is tried first)",
                           key="vectors.model_path")
chosen = [s for s, on in (("vectors", run_vectors), ("clients", run_clients)) if on]

if st.button("Run", type="primary", key="vectors.run", disabled=not chosen):
    page.run_probe_sets("vectors.result", target, svc, chosen, model_path=model_path or None)

res = page.kept_for_target("vectors.result", target)
if res is None:
    st.info("Press **Run** to check the vectors and the clients.")
else:
    findings = [f for f in res.findings if f.check.startswith(("vectors-", "clients-"))]
    top = verdict.worst_status([verdict.status_str(f.status) for f in findings])
    head = svc.headline(findings, None, target, where="vectors") if findings else None
    run_note = f" · run #{res.run_id}" if res.run_id else ""
    if head is None or top == "pass":
        verdict.banner(top, f"All {len(findings)} vector and client checks pass{run_note}")
    else:
        worst_f = next(f for f in findings if f.check == head.check)
        part = "the client libraries" if head.check.startswith("clients-") else "the vectors themselves"
        verdict.banner(top, f"{md.prose(head.cause)} — in {part}: {md.title(worst_f.title)}  ({head.tally}){run_note}")
        fix_view.show(head.blocks)
        twin_button.show(res.run_id)
    rows = svc.cosine_rows(findings)
    if rows:
        fig = go.Figure(go.Bar(x=[r["check"] for r in rows], y=[r["cosine"] for r in rows],
                               marker_color=[r["colour"] for r in rows], text=[r["status"] for r in rows]))
        for y, name in ((0.999, "repeat 0.999"), (0.99, "batch / reference / client 0.99")):
            fig.add_hline(y=y, line_dash="dot", annotation_text=name)
        low = min(-0.2, *(r["cosine"] for r in rows))
        fig.update_layout(height=320, yaxis_title="cosine similarity", xaxis_title="check",
                          yaxis_range=[low, 1.02], margin={"t": 20, "b": 20})
        st.caption("Cosine of each vector check (the banner above names what failed, which may be a client setting "
                   "rather than a vector).")
        st.plotly_chart(fig, key="vectors.cosines", width="stretch")
    finding_card.show_results(findings)

st.subheader("Open WebUI")
st.caption("Admin Settings → Documents → Embedding (engine OpenAI), or RAG_OPENAI_API_BASE_URL / RAG_OPENAI_API_KEY "
           "/ RAG_EMBEDDING_MODEL. The check sends exactly what Open WebUI sends: POST {base}/embeddings.")
o1, o2 = st.columns(2)
base = o1.text_input("Base URL", value=f"{target.url.rstrip('/')}/v1", key="vectors.owui.base")
model = o2.text_input("Embedding model", value=target.model or "", key="vectors.owui.model")
o3, o4 = st.columns(2)
key = o3.text_input("API key", value=target.api_key or "", type="password", key="vectors.owui.key")
batch = o4.number_input("Embedding batch size", min_value=1, max_value=512, value=1, key="vectors.owui.batch")
if st.button("Check Open WebUI settings", key="vectors.owui.run"):
    f, env_lines = svc.openwebui_check(base, key or None, model, int(batch), target.url)
    finding_card.show(f, expanded=True)
    st.code(env_lines, language="bash")

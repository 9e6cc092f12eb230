"""Target: which server, which model, what the client sends; the API key stays in this session."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import page, session

svc = page.header(
    "Target",
    "Which vLLM embedding server to diagnose. The API key is held in this browser session only; "
    "it is never written to the database or to reports.",
)

# -- saved targets: picking one fills the form below ------------------------------------------
try:
    saved = svc.saved_targets()
except services.ServiceError as e:
    saved = []
    st.error(str(e))


def _fill_from_saved() -> None:
    choice = st.session_state.get("target.saved")
    t = next((x for x in saved if x.title == choice), None)
    if t is None:
        return
    st.session_state["target.url"] = t.url
    st.session_state["target.model_manual"] = t.model or ""
    st.session_state["target.tpt"] = str(t.truncation.config_value() or "")
    st.session_state["target.cmdline"] = t.cmdline or ""
    st.session_state["target.models"] = None


if saved:
    st.selectbox("Saved targets", ["—"] + [t.title for t in saved], key="target.saved", on_change=_fill_from_saved)

# -- server and key ---------------------------------------------------------------------------
url = st.text_input("Server URL", key="target.url", placeholder="http://127.0.0.1:8000")
api_key = st.text_input("API key (optional, kept in this session only)", key="target.api_key", type="password")

if st.button("Fetch models", key="target.fetch", disabled=not url):
    try:
        st.session_state["target.models"] = svc.list_models(url, api_key or None)
    except services.ServiceError as e:
        st.session_state["target.models"] = None
        st.error(str(e))

models = st.session_state.get("target.models") or []
if models:
    labels = [f"{m.id}  (max_model_len {m.max_model_len})" if m.max_model_len else m.id for m in models]
    if st.session_state.get("target.model_pick") not in labels:  # a kept pick from another server's list
        st.session_state.pop("target.model_pick", None)
    picked = st.selectbox("Model (from /v1/models)", labels, key="target.model_pick")
    model = models[labels.index(picked)].id if picked in labels else models[0].id
else:
    model = st.text_input("Model (press Fetch models to list them, or type the id)", key="target.model_manual") or None

tpt_text = st.text_input(
    "What does your client send as truncate_prompt_tokens?",
    key="target.tpt",
    help="A number = that many tokens; -1 = truncate to max_model_len; `none` = the client sends no "
         "truncate_prompt_tokens; blank = I don't know (the checklist then asks).",
)
tpt = services.Truncation()  # not stated
tpt_ok = True
try:
    tpt = services.Truncation.parse(tpt_text)
except ValueError:
    tpt_ok = False
    st.error("truncate_prompt_tokens must be a whole number, -1, `none`, or blank.")

with st.expander("Optional: the `vllm serve` command line and the start-up log (better evidence)"):
    cmdline = st.text_area("vllm serve command line", key="target.cmdline", height=80,
                           placeholder="vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed …")
    log_text = st.text_area("Start-up log", key="target.log", height=160,
                            placeholder="Paste the server's log from start-up to 'Application startup complete.'")
label = st.text_input("Label (optional, for the saved list)", key="target.label")

if st.button("Use this target", type="primary", key="target.use", disabled=not url or not tpt_ok):
    form = services.Target(url=url, model=model, truncation=tpt, cmdline=cmdline or None,
                           log_text=log_text or None, api_key=api_key or None, label=label or None)
    try:
        form = svc.save_target(form)
    except services.ServiceError as e:
        st.warning(f"Using the target for this session, but it could not be saved: {e}")
    session.set_target(form)

current = session.target()
if current is None:
    st.info("No target chosen yet: fill in the URL, fetch the models, and press **Use this target**.")
else:
    st.success(f"Target: **{current.url}** · model `{current.model or '?'}` · truncate_prompt_tokens "
               f"{current.truncation}"
               + (" · API key set (session only)" if current.api_key else ""))
    try:
        st.page_link("ui/pages/checklist_page.py", label="Next: run the checklist", icon=":material/checklist:")
    except Exception:  # a page run alone (tests) has no navigation
        pass

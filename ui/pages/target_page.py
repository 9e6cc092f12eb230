"""Target: which server, which model, what the client sends; the API key stays in this session.

The buttons act on the first click: they are never disabled by a field that is still being typed
(a text field commits on blur, and a disabled button swallows that click); each one checks what it
needs in its callback and says what is missing. A URL is checked before it is used: a missing
scheme is added and said so, anything else unusable is refused with the reason, and a server that
does not answer is said to be unreachable instead of being saved as fine.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from ui import services
from ui.components import deploy_upload, md, page, session

MSG_KEY = "target.msg"  # (kind, text) said by the last button, drawn under the form

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
    st.error(md.text(e))


def _fill(url: str, model: str | None, tpt: Any, cmdline: str | None) -> None:
    st.session_state["target.url"] = url
    st.session_state["target.model_manual"] = model or ""
    st.session_state["target.tpt"] = "" if tpt is None else str(tpt)
    st.session_state["target.cmdline"] = cmdline or ""
    st.session_state["target.models"] = None


def _fill_from_saved() -> None:
    choice = st.session_state.get("target.saved")
    t = next((x for x in saved if x.title == choice), None)
    if t is not None:
        _fill(t.url, t.model, t.truncation.config_value(), t.cmdline)


current = session.target()
if current is not None and not st.session_state.get("target.url"):
    # the form shows the target the sidebar shows (one chosen in another tab, or before a page switch)
    _fill(current.url or "", current.model, current.truncation.config_value(), current.cmdline)
    if current.model:
        st.session_state["target.models"] = None

def _confirm_carried() -> None:
    t = session.confirm_carried()
    if t is not None:
        st.session_state["target.tpt"] = "" if t.truncation.config_value() is None else str(t.truncation.config_value())
        _say("success", f"Confirmed: your client sends truncate_prompt_tokens {t.truncation}.")


stored = session.carried()
if stored is not None:  # the last target's stored answer is offered, never used unconfirmed (issue 32)
    with st.container(border=True):
        st.markdown(f"This session opened on the last target used. It was saved with truncate_prompt_tokens "
                    f"**{md.text(stored)}** as what its client sent; that is not used until you confirm it "
                    "(the checklist asks otherwise).")
        st.button(f"My client still sends {stored}", key="target.confirm_carried", on_click=_confirm_carried)

if saved:
    st.selectbox("Saved targets", ["—"] + [t.title for t in saved], key="target.saved", on_change=_fill_from_saved)


# -- the buttons' work: callbacks run before the page, with every field's latest text ------------
def _say(kind: str, text: str) -> None:
    st.session_state[MSG_KEY] = (kind, text)


def _fetch() -> None:
    st.session_state.pop(MSG_KEY, None)
    try:
        url, note = svc.check_url(st.session_state.get("target.url", ""))
        st.session_state["target.url"] = url
        st.session_state["target.models"] = svc.list_models(url, st.session_state.get("target.api_key") or None)
        if note:
            _say("info", note)
    except services.ServiceError as e:
        st.session_state["target.models"] = None
        _say("error", str(e))


def _model_from_form() -> str | None:
    models = st.session_state.get("target.models") or []
    pick = st.session_state.get("target.model_pick")
    if models:
        labels = [_model_label(m) for m in models]
        return models[labels.index(pick)].id if pick in labels else models[0].id
    return (st.session_state.get("target.model_manual") or "").strip() or None


def _use() -> None:
    st.session_state.pop(MSG_KEY, None)
    get = st.session_state.get
    try:
        tpt = services.Truncation.parse(get("target.tpt", ""))
    except ValueError:
        _say("error", "truncate_prompt_tokens must be a whole number, -1, `none`, or blank: not used.")
        return
    cmdline, log_text = get("target.cmdline") or None, get("target.log") or None
    try:
        url, note = svc.check_url(get("target.url", ""))
    except services.ServiceError as e:
        _say("error", f"{e} The target was not used.")
        return
    st.session_state["target.url"] = url
    api_key = get("target.api_key") or None
    warn = ""
    try:
        models = svc.list_models(url, api_key)
        st.session_state["target.models"] = models
    except services.ServiceError as e:
        if not (cmdline or log_text):
            _say("error", f"{url} cannot be used: {e} Nothing was saved.")
            return
        warn = f"{url} does not answer ({e}): the checklist will read only the command line and the log."
    form = services.Target(url=url, model=_model_from_form(), truncation=tpt, cmdline=cmdline, log_text=log_text,
                           api_key=api_key, label=get("target.label") or None,
                           cmdline_file=deploy_upload.file_name() if cmdline else None)
    try:
        form = svc.save_target(form)
    except services.ServiceError as e:
        warn = (warn + " " if warn else "") + f"Using the target for this session, but it could not be saved: {e}"
    session.set_target(form)
    # the form keeps what was accepted (a field only typed into is dropped by the next page switch)
    fetched = st.session_state.get("target.models")
    _fill(url, form.model, form.truncation.config_value(), cmdline)
    st.session_state["target.models"] = fetched
    st.session_state["target.log"] = log_text or ""
    if warn:
        _say("warning", warn)
    else:
        _say("success", (note + " " if note else "") + f"{url} answered /v1/models.")


def _model_label(m: Any) -> str:
    return f"{m.id}  (max_model_len {m.max_model_len})" if m.max_model_len else m.id


# -- the form: Enter in any field is "Use this target" (its first submit button); what is typed rides on
# either button's click (a form sends its fields with the submit, no blur needed) ---------------------------
given = [w for w, k in (("command line", "target.cmdline"), ("start-up log", "target.log")) if st.session_state.get(k)]
# a deployment file drop fills the command-line field at once (a form's widgets take no callback: it sits outside)
with st.expander("Optional: drop a deployment file (Kubernetes manifest, production-stack Helm values, compose file)",
                 expanded=deploy_upload.file_name() is not None):
    deploy_upload.show("target.cmdline")

with st.form("target.form", border=False, enter_to_submit=True):
    st.text_input("Server URL", key="target.url", placeholder="http://127.0.0.1:8000 (the server's root, no /v1)")
    st.text_input("API key (optional, kept in this session only)", key="target.api_key", type="password")
    models = st.session_state.get("target.models") or []
    if models:
        labels = [_model_label(m) for m in models]
        if st.session_state.get("target.model_pick") not in labels:  # a kept pick from another server's list
            st.session_state.pop("target.model_pick", None)
        st.selectbox("Model (from /v1/models)", labels, key="target.model_pick")
    else:
        st.text_input("Model (press Fetch models to list them, or type the id)", key="target.model_manual")
    st.text_input(
        "What does your client send as truncate_prompt_tokens?",
        key="target.tpt",
        help="A number = that many tokens; -1 = truncate to max_model_len; `none` = the client sends no "
             "truncate_prompt_tokens; blank = I don't know (the checklist then asks).",
    )
    try:
        services.Truncation.parse(st.session_state.get("target.tpt", ""))
    except ValueError:
        st.error("truncate_prompt_tokens must be a whole number, -1, `none`, or blank.")
    with st.expander("Optional: the `vllm serve` command line and the start-up log (better evidence)"
                     + (f" — {' and '.join(given)} given" if given else ""),
                     expanded=deploy_upload.file_name() is not None):  # a drop renames it: kept open to show it
        st.caption("A fix is shown applied to this command line, ready to copy. A Kubernetes manifest, "
                   "production-stack Helm values or a compose file pasted here is read as its vLLM container's "
                   "command line.")
        st.text_area("vllm serve command line", key="target.cmdline", height=80,
                     placeholder="vllm serve Qwen/Qwen3-Embedding-4B --runner pooling --convert embed …")
        st.text_area("Start-up log", key="target.log", height=160,
                     placeholder="Paste the server's log from start-up to 'Application startup complete.'")
    st.text_input("Label (optional, for the saved list)", key="target.label")
    use_col, fetch_col, _ = st.columns([2, 2, 5])
    with use_col:  # first: Enter in a field presses it
        st.form_submit_button("Use this target", type="primary", key="target.use", on_click=_use)
    with fetch_col:
        st.form_submit_button("Fetch models", key="target.fetch", on_click=_fetch)

msg = st.session_state.get(MSG_KEY)
if msg:
    getattr(st, msg[0])(md.prose(msg[1]))  # a URL, a server's error text: text

current = session.target()
if current is None:
    st.info("No target chosen yet: fill in the URL, fetch the models, and press **Use this target**.")
else:
    shown = st.success if not msg or msg[0] in ("success", "info") else st.info
    shown("Target: " + session.describe(current))
    if current.answers:
        st.caption("Your answers (stated by user): " + session.answers_line(current))
    try:
        st.page_link("ui/pages/checklist_page.py", label="Next: run the checklist", icon=":material/checklist:")
    except Exception:  # a page run alone (tests) has no navigation
        pass

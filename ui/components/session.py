"""The session's current target (API key included, held only in this browser session) and open run."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from ui import services
from ui.components import md
from ui.services import Target

TARGET_KEY = "triage.target"
OPEN_RUN_KEY = "triage.open_run"
LOADED_KEY = "triage.target_loaded"


def target() -> Optional[Target]:
    """The target chosen on the Target page (in this tab, else the last one chosen in any tab), or None."""
    t = st.session_state.get(TARGET_KEY)
    if t is None and not st.session_state.get(LOADED_KEY):
        st.session_state[LOADED_KEY] = True  # once per session: a new tab opens on the last target
        try:
            t = services.get().last_target()
        except Exception:  # noqa: BLE001 - a fake or a broken database: no target yet
            t = None
        if isinstance(t, Target):
            st.session_state[TARGET_KEY] = t
    return t if isinstance(t, Target) else None


def set_target(form: Optional[Target]) -> None:
    st.session_state[TARGET_KEY] = form
    st.session_state[LOADED_KEY] = True


def describe(t: Target) -> str:
    """The target in one Markdown line: the same words in the sidebar, a page's header and its banner."""
    return (f"**{md.text(t.url or 'no server')}** · model {md.code(t.model or '?')} · truncate_prompt_tokens "
            f"{md.code(t.truncation)}" + (" · API key set (this session only)" if t.api_key else ""))


def answers_line(t: Target) -> str:
    """The user's answers (stated by user), or ''."""
    a = dict(t.answers or {})
    shown = {k: f"{v / 2**30:g} GiB" if k.endswith("_bytes") and isinstance(v, int) else v for k, v in a.items()}
    return " · ".join(f"{md.code(k)} = {md.code(v)}" for k, v in shown.items())


def open_run() -> Optional[int]:
    """The run opened last (by a checklist, a probe run, a log import or History), or None."""
    v = st.session_state.get(OPEN_RUN_KEY)
    return int(v) if v is not None else None


def set_open_run(run_id: Optional[int]) -> None:
    st.session_state[OPEN_RUN_KEY] = run_id


# Form fields that must survive a visit to another page. Streamlit drops the state of widgets a run
# did not draw; writing the value back as plain session state on every run keeps it.
KEEP = ("target.url", "target.api_key", "target.model_manual", "target.model_pick", "target.tpt", "target.cmdline",
        "target.log", "target.label", "history.target", "history.status")


def keep_form_values(keys: tuple[str, ...] = KEEP) -> None:
    """Call once per run (app.py) before the page: the listed widget values outlive page switches."""
    for k in keys:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def require_target() -> Target | None:
    """The target, or an explicit empty state pointing at the Target page."""
    t = target()
    if t is None:
        st.info("No target yet. Open **Target** and enter the server URL first.")
        try:
            st.page_link("ui/pages/target_page.py", label="Go to Target", icon=":material/my_location:")
        except Exception:  # a page run alone (tests) has no navigation to link into
            pass
    return t

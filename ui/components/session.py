"""The session's current target (API key included, held only in this browser session) and open run."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from ui.services import Target

TARGET_KEY = "triage.target"
OPEN_RUN_KEY = "triage.open_run"


def target() -> Optional[Target]:
    """The target chosen on the Target page, or None."""
    t = st.session_state.get(TARGET_KEY)
    return t if isinstance(t, Target) else None


def set_target(form: Optional[Target]) -> None:
    st.session_state[TARGET_KEY] = form


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

"""The top of a dashboard page: its services, title and caption, and (for pages that need one) the target."""
from __future__ import annotations

import streamlit as st

from ui import services
from ui.components import session
from ui.services import Target


def header(title: str, caption: str) -> services.Services:
    """Draw the page's title and caption; return the dashboard's services."""
    svc = services.get()
    st.title(title)
    st.caption(caption)
    return svc


def target_or_stop() -> Target:
    """The session's target; without one, the empty state pointing at the Target page, and the page stops."""
    target = session.require_target()
    if target is None:
        st.stop()
    return target

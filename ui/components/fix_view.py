"""The fix as copyable blocks (triage.fixblocks.FixBlock): each a code block with Streamlit's copy button."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from ui.components import md


def show(blocks: Sequence[Any], *, heading: str = "Fix — copy and paste", key: str = "fix-blocks") -> None:
    """Right under a verdict banner: the command line first, then the request, the client, the upgrade."""
    if not blocks:
        return
    with st.container(border=True, key=key):
        st.markdown(f"**{heading}**")
        for b in blocks:
            st.caption(md.prose(b.title) + (f" · {md.prose(b.note)}" if b.note else ""))
            st.code(b.code, language=b.language or "bash", wrap_lines=True)

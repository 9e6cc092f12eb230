"""What a verdict covered: each part checked (and how) or not, with the page that checks an unchecked one."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ui.components import md

# where the dashboard checks each part of triage.scope.PARTS (the parts and their words are the engine's)
PAGES = {"setup": ("ui/pages/checklist_page.py", "Run the checklist"),
         "log": ("ui/pages/logs_page.py", "Analyze the server's log"),
         "probes": ("ui/pages/probes_page.py", "Send real requests: Probes"),
         "vectors": ("ui/pages/vectors_page.py", "Check the vectors: Vectors & clients"),
         "load": ("ui/pages/probes_page.py", "Try it under load: Probes → Throughput")}


def show(parts: list[Any], key: str) -> None:
    """A healthy verdict's scope: what was checked, what was not, and a button to check each unchecked part."""
    checked = [c for c in parts if c.checked]
    unchecked = [c for c in parts if not c.checked]
    with st.container(border=True, key=key):
        st.markdown("**What this verdict covers**")
        for c in checked:
            st.markdown(f":green[:material/check:] Checked: {md.text(c.part.title)}"
                        + (f" ({md.text(c.how)})" if c.how else ""))
        for c in unchecked:
            cols = st.columns([3, 2], vertical_alignment="center")
            cols[0].markdown(f":orange[:material/remove:] Not checked: {md.text(c.part.title)}: "
                             f"{md.text(c.part.unchecked)}")
            target, label = PAGES.get(c.part.id, (None, ""))
            if target is None:
                continue
            try:
                cols[1].page_link(target, label=label, icon=":material/arrow_forward:")
            except Exception:  # a page run alone (tests) has no navigation: the words still say where
                cols[1].caption(label)

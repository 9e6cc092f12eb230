"""Page through a long list: owns its page-number key, returns (limit, offset) for a SQL query."""
from __future__ import annotations

import streamlit as st


def show(key: str, total: int, page_size: int = 25) -> tuple[int, int]:
    """Previous/next buttons and a page number; returns (limit, offset) to pass to the database."""
    pages = max(1, (total + page_size - 1) // page_size)
    k = f"{key}.page"
    page = int(st.session_state.get(k, 1))
    page = min(max(page, 1), pages)
    c1, c2, c3 = st.columns([1, 2, 1])
    if c1.button("◀ Newer", key=f"{key}.prev", disabled=page <= 1):
        page -= 1
    if c3.button("Older ▶", key=f"{key}.next", disabled=page >= pages):
        page += 1
    st.session_state[k] = page
    c2.caption(f"Page {page} of {pages} · {total} runs")
    return page_size, (page - 1) * page_size


def reset(key: str) -> None:
    st.session_state[f"{key}.page"] = 1

"""Page through a long list: owns its page-number key, returns (limit, offset) for a SQL query."""
from __future__ import annotations

import streamlit as st


def _move(k: str, delta: int, pages: int) -> None:
    # a callback runs before the rerun, so the buttons below are drawn for the new page
    st.session_state[k] = min(max(int(st.session_state.get(k, 1)) + delta, 1), pages)


def show(key: str, total: int, page_size: int = 25) -> tuple[int, int]:
    """Newer/older buttons and the page number; returns (limit, offset) to pass to the database."""
    pages = max(1, (total + page_size - 1) // page_size)
    k = f"{key}.page"
    page = min(max(int(st.session_state.get(k, 1)), 1), pages)
    st.session_state[k] = page
    c1, c2, c3 = st.columns([1, 2, 1])
    c1.button("Newer", key=f"{key}.prev", icon=":material/chevron_left:", disabled=page <= 1,
              on_click=_move, args=(k, -1, pages))
    c3.button("Older", key=f"{key}.next", icon=":material/chevron_right:", disabled=page >= pages,
              on_click=_move, args=(k, 1, pages))
    c2.caption(f"Page {page} of {pages} · {total} runs")
    return page_size, (page - 1) * page_size


def reset(key: str) -> None:
    st.session_state[f"{key}.page"] = 1

"""The explicit confirmation before a probe that can hang the server; returns True when given."""
from __future__ import annotations

import streamlit as st

from triage.catalogue import POOLING_LIVELOCK


def show(key: str, deadline_s: float) -> bool:
    st.warning(
        f"The seed matrix sends a prompt of exactly max_model_len tokens after a short one "
        f"({POOLING_LIVELOCK.refs[0]}). "
        f"On an affected server (vLLM {POOLING_LIVELOCK.affected_text} with chunked prefill) this "
        f"**hangs the engine for up to "
        f"{deadline_s:.0f} seconds**: other requests queue behind it. The probe then **aborts** the request "
        f"(closes the connection), which frees the engine, and checks that it recovered. "
        f"Do not run it against a production server under load."
    )
    return bool(st.checkbox(f"I understand: it can hang the server for up to {deadline_s:.0f} s and will abort",
                            key=f"{key}.confirm"))

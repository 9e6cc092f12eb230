"""Paste or upload a vLLM log; owns its widgets' keys and returns the text (or None)."""
from __future__ import annotations

from typing import Optional

import streamlit as st

MAX_BYTES = 50 * 1024 * 1024


def show(key: str, label: str = "vLLM log") -> Optional[str]:
    """A text area and a file uploader; the upload wins when both are given."""
    up = st.file_uploader(f"Upload {label}", type=None, key=f"{key}.upload")
    pasted = st.text_area(f"…or paste {label}", key=f"{key}.paste", height=200)
    if up is not None:
        data = up.getvalue()
        if len(data) > MAX_BYTES:
            mib = 1024 * 1024
            st.error(f"The file is {len(data) // mib} MiB; the limit here is {MAX_BYTES // mib} MiB. "
                     "Use `python -m triage logs FILE` for bigger logs.")
            return None
        return data.decode("utf-8", errors="replace")
    return pasted or None

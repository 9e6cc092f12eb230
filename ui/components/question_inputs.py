"""The inputs that answer a finding's questions: one widget per answerable key, by the key's input kind.

Each question carries the config keys that answer it (``{"key", "keys", "text"}``, see checks/_util.py);
the kinds and accepted forms come from the engine (triage.answers.KEYS via the service), the GPUs for the
picker too. Returns the raw values the user gave ({key: value}; blanks left out); the engine parses them.
Session keys: ``{prefix}.{key}`` (and the GPU picker's ``{prefix}.gpu.*``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from ui.components import gpu_picker, md

BLANK = "—"
GPU_KEYS = ("gpu_name", "gpu_memory_total_bytes")


def show(questions: Sequence[Mapping[str, Any]], keys: Mapping[str, Any], gpus: Sequence[Any],
         sizes_gib: Sequence[int], prefix: str, current: Mapping[str, Any], drawn: set[str]) -> dict[str, Any]:
    """Ask each question and draw an input for each of its keys not yet ``drawn`` on this page run."""
    got: dict[str, Any] = {}
    for q in questions:
        st.markdown(f"**{md.prose(q.get('text', ''))}**")
        wanted = [k for k in q.get("keys") or [] if k in keys and k not in drawn]
        if any(k in GPU_KEYS for k in wanted):
            name, mem = gpu_picker.show(f"{prefix}.gpu", gpus, sizes_gib,
                                        (current.get("gpu_name"), current.get("gpu_memory_total_bytes")))
            got.update({k: v for k, v in (("gpu_name", name), ("gpu_memory_total_bytes", mem)) if v is not None})
            drawn.update(GPU_KEYS)
        for k in wanted:
            if k in drawn:
                continue
            drawn.add(k)
            v = _input(k, keys[k], f"{prefix}.{k}", current.get(k))
            if v is not None and v != "":
                got[k] = v
    return got


def _input(key: str, spec: Any, wkey: str, current: Any) -> Any:
    kind, help_ = getattr(spec, "kind", "text"), f"Accepted: {getattr(spec, 'forms', '')}"
    if kind == "bool":
        opts = [BLANK, "on", "off"]
        if wkey not in st.session_state and isinstance(current, bool):
            st.session_state[wkey] = "on" if current else "off"
        v = st.selectbox(key, opts, key=wkey, help=help_)
        return None if v == BLANK else v == "on"
    if kind == "choice":
        opts = [BLANK, *getattr(spec, "choices", ())]
        if wkey not in st.session_state and current in opts:
            st.session_state[wkey] = current
        v = st.selectbox(key, opts, key=wkey, help=help_)
        return None if v == BLANK else v
    if kind == "int" and key != "truncate_prompt_tokens":
        if wkey not in st.session_state and isinstance(current, int):
            st.session_state[wkey] = current
        return st.number_input(key, min_value=1, step=1, value=None, key=wkey, help=help_,
                               placeholder="e.g. 2048")
    if wkey not in st.session_state and current is not None:
        st.session_state[wkey] = str(current)
    placeholder = {"version": "e.g. 0.28.0", "bytes": "e.g. 12GiB"}.get(kind, "")
    return (st.text_input(key, key=wkey, help=help_, placeholder=placeholder) or "").strip() or None

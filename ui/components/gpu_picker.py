"""GPU picker: a common card (or another name) and its memory, as the user states them.

The cards and sizes come from the engine (triage.answers.COMMON_GPUS via the service); this component
owns only its widgets' session keys (``{key}.card``, ``{key}.name``, ``{key}.mem``) and returns plain
values: ``(gpu_name, gpu_memory_total_bytes)``, either None while not chosen. A card sold with one size
preselects it; the memory can always be changed.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import streamlit as st

GiB = 1 << 30
OTHER = "Other…"
NONE = "—"


def show(key: str, cards: Sequence[Any], sizes_gib: Sequence[int],
         value: tuple[Optional[str], Optional[int]] = (None, None)) -> tuple[Optional[str], Optional[int]]:
    """Render the picker; ``cards`` have ``name`` and ``memory_gib``; ``value`` is an earlier answer."""
    names = [c.name for c in cards]
    given_name, given_bytes = value
    choices = [NONE, *names, OTHER]
    if f"{key}.card" not in st.session_state and given_name:
        st.session_state[f"{key}.card"] = given_name if given_name in names else OTHER
        if given_name not in names:
            st.session_state[f"{key}.name"] = given_name
    col_card, col_mem = st.columns([3, 2])
    with col_card:
        pick = st.selectbox("GPU", choices, key=f"{key}.card",
                            help="The card the server runs on, as nvidia-smi names it.")
        name: Optional[str] = None
        if pick == OTHER:
            name = st.text_input("GPU name", key=f"{key}.name", placeholder="e.g. NVIDIA L40S").strip() or None
        elif pick != NONE:
            name = pick
    card = next((c for c in cards if c.name == name), None)
    mem_choices = [NONE, *[f"{g} GiB" for g in sizes_gib]]
    if given_bytes and f"{key}.mem" not in st.session_state:
        g = f"{round(given_bytes / GiB)} GiB"
        if g in mem_choices:
            st.session_state[f"{key}.mem"] = g
    if card is not None and len(card.memory_gib) == 1:
        # a card sold with one size: that size, unless the user picked another for this card
        if st.session_state.get(f"{key}.mem_for") != card.name:
            st.session_state[f"{key}.mem"] = f"{card.memory_gib[0]} GiB"
            st.session_state[f"{key}.mem_for"] = card.name
    with col_mem:
        mem = st.selectbox("GPU memory", mem_choices, key=f"{key}.mem",
                           help="Total memory of one GPU (nvidia-smi's Memory-Usage total).")
    mem_bytes = int(mem.split()[0]) * GiB if mem and mem != NONE else None
    return name, mem_bytes

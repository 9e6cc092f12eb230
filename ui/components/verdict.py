"""How a status looks: icon, colour, and the summary banner at the top of a page."""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import streamlit as st

from triage.findings import worst

ICONS = {"pass": "✅", "warn": "⚠️", "fail": "❌", "unknown": "❔", "error": "🛑", "running": "⏳"}
LABELS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "unknown": "UNKNOWN", "error": "ERROR", "running": "RUNNING"}


def status_str(status: Any) -> str:
    return str(getattr(status, "value", status) or "unknown")


def label(status: Any) -> str:
    s = status_str(status)
    return f"{ICONS.get(s, '•')} {LABELS.get(s, s.upper())}"


def banner(status: Any, text: str) -> None:
    """The page's summary verdict: green pass, orange warn/unknown, red fail/error."""
    s = status_str(status)
    msg = f"**{label(s)}** — {text}"
    if s == "pass":
        st.success(msg)
    elif s in ("fail", "error"):
        st.error(msg)
    elif s in ("warn", "unknown"):
        st.warning(msg)
    else:
        st.info(msg)


def worst_status(statuses: Iterable[Any]) -> str:
    """The most severe status (fail > error > warn > unknown > pass); "unknown" when there is none."""
    ss = [status_str(s) for s in statuses]
    return worst(ss).value if ss else "unknown"

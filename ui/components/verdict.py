"""How a status looks: icon, colour, and the summary banner at the top of a page."""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import streamlit as st

from triage.findings import worst
from ui.components import md

# Material icons (bundled with Streamlit) rather than emoji: they render without an emoji font,
# which headless Chromium on a server box (and many locked-down desktops) lacks.
ICONS = {"pass": ":material/check_circle:", "warn": ":material/warning:", "fail": ":material/cancel:",
         "unknown": ":material/help:", "error": ":material/error:", "running": ":material/hourglass_top:",
         "interrupted": ":material/stop_circle:"}
COLORS = {"pass": "green", "warn": "orange", "fail": "red", "unknown": "gray", "error": "red", "running": "blue",
          "interrupted": "orange"}
LABELS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "unknown": "UNKNOWN", "error": "ERROR", "running": "RUNNING",
          "interrupted": "INTERRUPTED"}


def status_str(status: Any) -> str:
    return str(getattr(status, "value", status) or "unknown")


def label(status: Any) -> str:
    """Markdown: a coloured icon and the status word (for headings, expanders, banners)."""
    s = status_str(status)
    return f":{COLORS.get(s, 'gray')}[{ICONS.get(s, '•')} {LABELS.get(s) or md.text(s.upper())}]"


def plain(status: Any) -> str:
    """The status word alone (for table cells, which do not render Markdown)."""
    s = status_str(status)
    return LABELS.get(s, s.upper())


def banner(status: Any, text: str) -> None:
    """The page's summary verdict: green pass, orange warn/unknown/interrupted (no verdict), red fail/error."""
    s = status_str(status)
    msg = f"**{LABELS.get(s) or md.text(s.upper())}** — {text}"
    if s == "pass":
        st.success(msg, icon=ICONS["pass"])
    elif s in ("fail", "error"):
        st.error(msg, icon=ICONS[s])
    elif s in ("warn", "unknown", "interrupted"):
        st.warning(msg, icon=ICONS[s])
    else:
        st.info(msg)


def worst_status(statuses: Iterable[Any]) -> str:
    """The most severe status (fail > error > warn > unknown > pass); "unknown" when there is none."""
    ss = [status_str(s) for s in statuses]
    return worst(ss).value if ss else "unknown"

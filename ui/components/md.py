"""Markdown for outside strings on a page: a server's, a log's or a user's text shown as text, refs as links.

Streamlit renders ``st.markdown`` (and the labels of expanders, alerts and headers) as Markdown: a title
that carries a backtick, an asterisk, a ``[`` or a newline from a server would change the page. ``text``
escapes them; ``prose`` (text plus every vLLM issue/PR reference as a link, triage.fixblocks.link_refs)
is for the engine's own wording that names refs.
"""
from __future__ import annotations

import re
from typing import Any

from triage.fixblocks import link_refs

__all__ = ["code", "link_refs", "prose", "refs", "text"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#$:])")


def text(s: Any) -> str:
    """One line, Markdown specials escaped: it renders as the characters it holds."""
    one = str("" if s is None else s).replace("\r", " ").replace("\n", " ")
    return _SPECIAL.sub(r"\\\1", one)


def prose(s: Any) -> str:
    """Escaped text with vLLM refs (vllm#NNNNN, #NNNNN) as links."""
    return link_refs(text(s).replace("\\#", "#"))


def code(s: Any) -> str:
    """An inline code span that survives backticks inside (one line)."""
    one = str("" if s is None else s).replace("\r", " ").replace("\n", " ")
    if not one:
        return ""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}"


def refs(items: Any) -> str:
    """'Refs: a, b' with each vLLM ref a link."""
    return "Refs: " + ", ".join(prose(r) for r in items or [])

"""Outside strings made safe for one line of text output and for Markdown: the engine-side helpers.

A model id, a Prometheus label or a server's error text is the outside world's: a newline in it could forge
a ``[PASS]`` line in a text report, a backtick could break out of inline code in Markdown and render a link or
an image beacon. ``one_line`` is for text output (the CLI, text exports); ``md_text`` and ``md_code`` are for
Markdown (the Markdown export and the dashboard's banners). Terminal escapes are triage.redact's
(``neutralise``); these helpers call it too, so one call is enough.
"""
from __future__ import annotations

import re
from typing import Any

from triage.redact import neutralise

# every character a terminal, a Markdown renderer or str.splitlines() takes as a line end
_LINE_ENDS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=:&])")


def one_line(value: Any, limit: int | None = None) -> str:
    """``value`` as text on one line: line ends shown as ``\\n``, control characters as ``\\xNN``; cut at
    ``limit`` characters (with an ellipsis) when given."""
    text = value if isinstance(value, str) else str(value)
    text = neutralise(_LINE_ENDS.sub(lambda m: "\\r\\n" if m.group() == "\r\n" else repr(m.group())[1:-1], text))
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def md_text(value: Any, limit: int | None = None) -> str:
    """An outside string as literal Markdown text on one line: every character Markdown could read as syntax
    (links, images, emphasis, code, HTML, tables) backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(value, limit))


def md_code(value: Any, limit: int | None = None) -> str:
    """An outside string as Markdown inline code: a backtick fence longer than any run of backticks inside, so the
    string cannot close the span (CommonMark), padded with spaces when it starts or ends with a backtick."""
    text = one_line(value, limit)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"

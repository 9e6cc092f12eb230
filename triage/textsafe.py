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


LIST_LIMIT = 10  # items a title names before "and N more"
EVIDENCE_LIMIT = 100  # items an evidence list or mapping keeps


def listed(items: Any, limit: int = LIST_LIMIT, sep: str = ", ") -> str:
    """A list from outside (indices, ids, scores) as text: the first ``limit`` items, then "and N more" — 100,000
    rerank results never become a 600 KB title."""
    seq = list(items)
    head = sep.join(str(x) for x in seq[:limit])
    return head + (f" and {len(seq) - limit:,} more" if len(seq) > limit else "")


def clipped(value: Any, limit: int = EVIDENCE_LIMIT) -> Any:
    """A list or mapping for evidence, cut to its first ``limit`` items with a last item (list) or key (mapping)
    saying "and N more" (a cut mapping's keys become text); anything else as it is."""
    if isinstance(value, dict) and len(value) > limit:
        out = {str(k): v for k, v in list(value.items())[:limit]}  # str keys: sort_keys never meets int beside str
        out["…"] = f"and {len(value) - limit:,} more"
        return out
    if isinstance(value, (list, tuple)) and len(value) > limit:
        return [*value[:limit], f"… and {len(value) - limit:,} more"]
    return value

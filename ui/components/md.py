"""Markdown for outside strings on a page: a server's, a log's, a file's or an import's text shown as text.

Streamlit renders ``st.markdown``, ``st.write`` of a string, alerts, captions, headers and the labels of
expanders as Markdown: a model id, a finding's title or fix, an error message or an imported document's field
holding ``![t](http://host/live.png)`` would make the browser fetch that image (with the dashboard's address as
Referer), and ``[click](http://…)`` would show the sender's link (issue 33). Every such string goes through
this module before it reaches a Markdown-rendering call:

- ``text``: one line, every ASCII punctuation character backslash-escaped (CommonMark renders an escaped
  punctuation character as itself), so nothing in it is syntax: no image, link, autolink (``http\\://``),
  emphasis, HTML, table, heading, maths (``$``) or Streamlit directive (``:red[…]``).
- ``prose``: for text the engine composed from a catalogue record and outside values (a finding's
  explanation and fix): the same escaping, except that backtick code spans stay code spans (the catalogue
  writes option names that way; a span's content is literal in Markdown, so a server's string inside one
  cannot become a link or an image); line breaks kept; vLLM issue/PR references become links built here.
- ``code``: one inline code span. ``refs``: "Refs: a, b" with each ref a link.

A guard test (tests/ui/test_md_guard.py) reads the UI's source and fails on a Markdown-rendering call whose
interpolated values do not go through one of these.
"""
from __future__ import annotations

import re
from collections import defaultdict, deque
from typing import Any

from triage.fixblocks import link_refs as _link_refs

__all__ = ["code", "prose", "refs", "text", "title"]

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character (CommonMark's escapable set)
_TICKS = re.compile(r"`+")
_WORDS = re.compile(r"(\s+)")
_REF_HASH = re.compile(r"\\#(?=\d)")  # '#' before a number, unescaped so triage.fixblocks can link the ref


def _str(s: Any) -> str:
    return "" if s is None else s if isinstance(s, str) else str(s)


def _linkable(word: str) -> bool:
    """A word GFM would turn into a link after parsing (its autolink literals are found in the text nodes, so
    backslash escapes do not stop them: ``http\\://x`` still became a link in Chromium)."""
    low = word.lower()
    return "://" in low or "www." in low or "@" in low


def _escape(one: str, link: Any = None) -> str:
    """Every punctuation character escaped; a word that would be autolinked as a code span instead (its text,
    copyable, never a link); vLLM refs linked by ``link`` in the other words. Linear: one split, one pass."""
    out = []
    for word in _WORDS.split(one):
        if word and not word.isspace() and _linkable(word):
            out.append(code(word))
        else:
            esc = _PUNCT.sub(r"\\\1", word)
            out.append(link(_REF_HASH.sub("#", esc)) if link is not None else esc)
    return "".join(out)


def text(s: Any) -> str:
    """One line, every Markdown special escaped: it renders as the characters it holds."""
    return _escape(_str(s).replace("\r", " ").replace("\n", " "))


def _spans(src: str) -> list[tuple[bool, str]]:
    """``src`` cut into (is_code, piece): a code span is a backtick run and the next run of the same length
    (CommonMark); a run with no partner is plain text. Linear: each run is looked at once per length queue."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(src)]
    by_len: dict[int, deque[int]] = defaultdict(deque)
    for i, (a, b) in enumerate(runs):
        by_len[b - a].append(i)
    out: list[tuple[bool, str]] = []
    pos, i = 0, 0
    while i < len(runs):
        a, b = runs[i]
        q = by_len[b - a]
        while q and q[0] <= i:
            q.popleft()
        if not q:
            i += 1
            continue
        j = q.popleft()
        if a > pos:
            out.append((False, src[pos:a]))
        out.append((True, src[a:runs[j][1]]))
        pos, i = runs[j][1], j + 1
    if pos < len(src):
        out.append((False, src[pos:]))
    return out


def prose(s: Any, *, links: bool = True) -> str:
    """Escaped text whose balanced backtick code spans stay code (on one line each), line breaks kept as
    Markdown hard breaks, and vLLM refs (vllm#NNNNN, #NNNNN) as links (unless ``links`` is false)."""
    link = _link_refs if links else None
    out: list[str] = []
    for is_code, piece in _spans(_str(s).replace("\r\n", "\n").replace("\r", "\n")):
        if is_code:
            # a span across lines could be cut by a block construct on its second line (a heading, a list
            # item), leaving its content to be read as Markdown: one line, always
            out.append(piece.replace("\n", " "))
        else:
            lines = [_escape(line.lstrip(" \t") if n else line, link) for n, line in enumerate(piece.split("\n"))]
            out.append("  \n".join(lines))
    return "".join(out)


def title(s: Any) -> str:
    """A finding's title in a label (an expander, an alert, a progress line): ``prose`` on one line, refs left
    as text (a link inside an expander's label would fight its toggle)."""
    return prose(_str(s).replace("\r", " ").replace("\n", " "), links=False)


def code(s: Any) -> str:
    """An inline code span that survives backticks inside (one line)."""
    one = _str(s).replace("\r", " ").replace("\n", " ")
    if not one:
        return ""
    ticks = "`" * (max((len(m) for m in _TICKS.findall(one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}"


def refs(items: Any) -> str:
    """'Refs: a, b' with each vLLM ref a link."""
    return "Refs: " + ", ".join(prose(r) for r in items or [])

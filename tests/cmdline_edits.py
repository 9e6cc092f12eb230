"""What a fix changed in a command line, token by token: the helper the fix-block tests (unit and e2e) share."""
from __future__ import annotations

import difflib
import shlex


def edited(cmd: str, fixed: str, from_word: str | None = None) -> tuple[list[str], list[str]]:
    """(tokens of ``cmd`` the fix removed or changed, tokens it added): everything else is the line's own.
    ``from_word``: compare from that token on in both lines (``"serve"``: the launcher's path aside,
    python …/bin/vllm or vllm)."""
    a, b = shlex.split(cmd), shlex.split(fixed)
    if from_word is not None:
        a, b = a[a.index(from_word):], b[b.index(from_word):]
    gone: list[str] = []
    new: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            gone += a[i1:i2]
            new += b[j1:j2]
    return gone, new

"""A bounded memo of what a text says (the log pass reads a repeated line, message or block once).

Keys up to MEMO_KEY_MAX characters (or bytes), at most MEMO_ENTRIES of them, then the memo starts afresh; longer
keys up to LONG_KEY_MAX (an engine config line is 3-4 KB, and a log of many starts repeats it) at most LONG_ENTRIES.
So a memo stays under ~10 MB whatever the log.
"""

from __future__ import annotations

from typing import Any

MEMO_KEY_MAX = 2048
MEMO_ENTRIES = 4096
LONG_KEY_MAX = 65536
LONG_ENTRIES = 32


class Memo(dict):  # type: ignore[type-arg]
    """A dict (``get`` is dict's) with a bounded ``put``."""

    __slots__ = ("long",)

    def __init__(self) -> None:
        super().__init__()
        self.long = 0

    def put(self, key: Any, value: Any) -> None:
        n = len(key)
        if n >= MEMO_KEY_MAX:
            if n >= LONG_KEY_MAX or self.long >= LONG_ENTRIES:
                return
            self.long += 1
        if len(self) > MEMO_ENTRIES:
            self.clear()
            self.long = 0
        self[key] = value

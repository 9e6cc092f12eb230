"""What the log pass keeps of one kind of error line: a count, the first lines, the regex groups."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ErrorHits:
    check: str
    count: int = 0
    lines: list[tuple[int, str]] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)  # named regex groups of the first hit
    first_ts: Optional[float] = None

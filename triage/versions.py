"""vLLM versions: one type (``packaging.version.Version``), one parser, and release ranges.

A pre-release or dev build of a range's boundary release (``0.32.0rc1``, ``0.32.0.dev3``) may or
may not carry the change that boundary stands for: `VersionRange.contains` answers ``None``
("unknown, check the commit") for it instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from packaging.version import InvalidVersion, Version

__all__ = ["Version", "VersionRange", "parse_version", "fmt"]

# A version inside free text: '0.31.0', 'v0.32.0', '0.31.0+cpu', '0.32.0rc1', '0.11.2.dev3',
# 'vllm/vllm-openai:v0.28.0'. The first match wins.
_VERSION_IN_TEXT = re.compile(
    r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:\.?(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?)"
)


def parse_version(text: object) -> Optional[Version]:
    """The first version in ``text`` as a `Version`; None when there is none."""
    if text is None:
        return None
    if isinstance(text, Version):
        return text
    m = _VERSION_IN_TEXT.search(str(text).strip())
    if not m:
        return None
    try:
        return Version(m.group(1))
    except InvalidVersion:
        return None


def fmt(v: Optional[Version]) -> str:
    """A version as people write it (no local part: '0.31.0+cpu' -> '0.31.0')."""
    return "unknown" if v is None else v.public


def _release(v: Version) -> Version:
    return Version(v.base_version)


@dataclass(frozen=True)
class VersionRange:
    """Releases ``low <= v < high`` (either end open when None)."""

    low: Optional[Version] = None
    high: Optional[Version] = None

    @classmethod
    def of(cls, low: Optional[str], high: Optional[str]) -> VersionRange:
        return cls(Version(low) if low else None, Version(high) if high else None)

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """The range as ``str`` writes it: '>= 0.10.2, < 0.32.0', '>= 0.10.2', '< 0.32.0' or 'any version'."""
        bounds: dict[str, Version] = {}
        for part in [] if text.strip() == "any version" else text.split(","):
            op, _, v = part.strip().partition(" ")
            try:
                if op not in (">=", "<") or op in bounds:
                    raise InvalidVersion(op)
                bounds[op] = Version(v.strip())
            except InvalidVersion:
                raise ValueError(f"not a version range: {text!r} (write '>= LOW, < HIGH', one end or both)") from None
        return cls(bounds.get(">="), bounds.get("<"))

    def contains(self, v: Version) -> Optional[bool]:
        """True/False; None for a pre-release/dev build of a boundary release (check the commit)."""
        if v.is_prerelease or v.is_devrelease:
            rel = _release(v)
            if (self.low is not None and rel == self.low) or (self.high is not None and rel == self.high):
                return None
            v = rel
        v = _release(v) if v.local else v
        if self.low is not None and v < self.low:
            return False
        return not (self.high is not None and v >= self.high)

    def __str__(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f">= {fmt(self.low)}")
        if self.high is not None:
            parts.append(f"< {fmt(self.high)}")
        return ", ".join(parts) or "any version"
